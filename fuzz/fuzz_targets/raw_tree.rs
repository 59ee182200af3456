//! Tree objects, differential: guard's own reader (`git::raw_tree`, which the history walks
//! use instead of libgit2's) against libgit2's on the same bytes. guard's is the stricter:
//! a tree it reads, libgit2 must read to the same entries (names, modes, ids, in order);
//! one it refuses, libgit2 may read; a mode above 16 bits git and guard read and libgit2
//! refuses (found by this target). Objects go to an in-memory object store, which is
//! made afresh every few thousand inputs.
#![no_main]
use std::cell::RefCell;

use libfuzzer_sys::fuzz_target;
use git2::Repository;
use merge_guard::git::raw_tree::RawTree;

/// Inputs written to one in-memory store before it is made afresh.
const PER_STORE: usize = 5_000;

struct Store {
    _dir: tempfile::TempDir,
    repo: Repository,
    written: usize,
}

fn store() -> Store {
    let dir = tempfile::tempdir().unwrap();
    let repo = Repository::init_bare(dir.path()).unwrap();
    // The highest priority: every write goes to memory, none to the temporary directory.
    repo.odb().unwrap().add_new_mempack_backend(1000).unwrap();
    Store {
        _dir: dir,
        repo,
        written: 0,
    }
}

thread_local! {
    static STORE: RefCell<Store> = RefCell::new(store());
}

fuzz_target!(|data: &[u8]| {
    STORE.with(|cell| {
        let mut s = cell.borrow_mut();
        if s.written >= PER_STORE {
            *s = store();
        }
        s.written += 1;
        let id = s
            .repo
            .odb()
            .unwrap()
            .write(git2::ObjectType::Tree, data)
            .unwrap();
        let Ok(ours) = RawTree::from_bytes(id, data.into()) else {
            return;
        };
        let theirs = match s.repo.find_tree(id) {
            Ok(tree) => tree,
            // libgit2 keeps a mode in 16 bits and refuses a larger one; git reads it (its
            // type bits decide what a checkout writes), and so does guard.
            Err(_) if ours.iter().any(|e| e.filemode_raw() > 0o177777) => return,
            Err(e) => panic!("guard reads a tree libgit2 refuses ({e}): {data:?}"),
        };
        assert_eq!(ours.len(), theirs.len(), "{data:?}");
        for (a, b) in ours.iter().zip(theirs.iter()) {
            assert_eq!(a.name_bytes(), b.name_bytes(), "{data:?}");
            assert_eq!(a.id(), b.id(), "{data:?}");
            assert_eq!(a.filemode_raw(), b.filemode_raw(), "{data:?}");
        }
    });
});
