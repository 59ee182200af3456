//! Commit headers, differential: guard's own reader (the date walk's `Header::parse`, which
//! reads each commit's tree, parents and committer date instead of libgit2's parse) against
//! libgit2's on the same bytes, in a SHA-1 or a SHA-256 repository (the first byte: even
//! SHA-1, odd SHA-256). guard's is the stricter: a commit it reads, libgit2 must read to the
//! same tree, the same parents in the same order and the same committer date in seconds;
//! one it refuses, libgit2 may read (the walk then leaves the range to libgit2). Objects go
//! to an in-memory object store, one per format, made afresh every few thousand inputs.
#![no_main]
use std::cell::RefCell;

use git2::ObjectType;
use libfuzzer_sys::fuzz_target;
use merge_guard::git::date_walk_fuzzing::commit_header;

#[path = "common/memory_store.rs"]
mod memory_store;

/// Inputs written to one in-memory store before it is made afresh.
const PER_STORE: usize = 5_000;

thread_local! {
    static STORES: RefCell<[memory_store::Store; 2]> = RefCell::new(memory_store::both(PER_STORE));
}

fuzz_target!(|data: &[u8]| {
    let Some((&format, commit)) = data.split_first() else {
        return;
    };
    let (k, hash_len) = match format % 2 {
        0 => (0, 20),
        _ => (1, 32),
    };
    let Some((tree, parents, time)) = commit_header(commit, hash_len) else {
        return;
    };
    assert_eq!(tree.as_bytes().len(), hash_len);
    STORES.with(|cell| {
        let mut stores = cell.borrow_mut();
        let repo = stores[k].next();
        let id = repo
            .odb()
            .unwrap()
            .write(ObjectType::Commit, commit)
            .unwrap();
        assert_eq!(id.as_bytes().len(), hash_len);
        let theirs = repo
            .find_commit(id)
            .unwrap_or_else(|e| panic!("guard reads a commit libgit2 refuses ({e}): {commit:?}"));
        assert_eq!(tree, theirs.tree_id(), "{commit:?}");
        assert_eq!(
            parents,
            theirs.parent_ids().collect::<Vec<_>>(),
            "{commit:?}"
        );
        assert_eq!(time, theirs.committer().when().seconds(), "{commit:?}");
    });
});
