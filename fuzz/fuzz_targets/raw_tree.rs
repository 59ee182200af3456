//! Tree objects, differential: guard's own reader (`git::raw_tree`, which the history walks
//! use instead of libgit2's) against libgit2's on the same bytes. guard's is the stricter:
//! a tree it reads, libgit2 must read to the same entries (names, modes, ids, in order);
//! one it refuses, libgit2 may read; a mode above 16 bits git and guard read and libgit2
//! refuses (found by this target). Every input is read as a tree of a SHA-1 repository and
//! of a SHA-256 one. Objects go to in-memory object stores, made afresh every few thousand
//! inputs.
#![no_main]
use std::cell::RefCell;

use git2::Repository;
use libfuzzer_sys::fuzz_target;
use merge_guard::git::raw_tree::RawTree;

#[path = "common/memory_store.rs"]
mod memory_store;

/// Inputs written to one in-memory store before it is made afresh.
const PER_STORE: usize = 5_000;

thread_local! {
    /// A SHA-1 and a SHA-256 store: every input is read as a tree of each format (its ids
    /// 20 or 32 bytes long).
    static STORES: RefCell<[memory_store::Store; 2]> = RefCell::new(memory_store::both(PER_STORE));
}

fuzz_target!(|data: &[u8]| {
    STORES.with(|cell| {
        for store in cell.borrow_mut().iter_mut() {
            same_as_libgit2(store.next(), data);
        }
    });
});

/// Writes `data` as a tree to `repo` and reads it both ways.
fn same_as_libgit2(repo: &Repository, data: &[u8]) {
    let id = repo
        .odb()
        .unwrap()
        .write(git2::ObjectType::Tree, data)
        .unwrap();
    let Ok(ours) = RawTree::from_bytes(id, data.into()) else {
        return;
    };
    let theirs = match repo.find_tree(id) {
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
}
