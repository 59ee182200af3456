//! Commit walks, differential: the commits guard lists for a range (`git::range::commits`,
//! through its own walk over commit headers, `date_walk`) against libgit2's walk of the same
//! range (`TOPOLOGICAL | REVERSE`, the tip pushed, each base hidden), which guard's must give
//! commit for commit, in the same order. The input shapes a history of up to 41 commits
//! (each with up to three parents among the commits before it, and a committer date that
//! may lie: older than its parents'), the range's tip and up to two bases, and the object
//! format (SHA-1 or SHA-256). Commits go to an in-memory object store.
#![no_main]
use std::cell::RefCell;

use git2::{Oid, Repository, Signature, Sort, Time};
use libfuzzer_sys::fuzz_target;
use merge_guard::git::ObjectId;
use merge_guard::git::range;

/// The bytes of the input, then zeros.
struct Bytes<'a>(std::slice::Iter<'a, u8>);

impl Bytes<'_> {
    fn next(&mut self) -> usize {
        self.0.next().copied().map_or(0, usize::from)
    }
}

#[path = "common/memory_store.rs"]
mod memory_store;

/// Inputs whose commits go to one in-memory store before it is made afresh.
const PER_STORE: usize = 2_000;

thread_local! {
    static STORES: RefCell<[memory_store::Store; 2]> = RefCell::new(memory_store::both(PER_STORE));
}

fuzz_target!(|data: &[u8]| {
    let mut input = Bytes(data.iter());
    let first = input.next();
    STORES.with(|cell| {
        let mut stores = cell.borrow_mut();
        let repo = stores[first & 1].next();
        same_range_as_libgit2(repo, 2 + (first >> 1) % 40, &mut input, data);
    });
});

/// Makes a history of `n` commits in `repo` as `input` shapes it, and walks a range of it
/// both ways.
fn same_range_as_libgit2(repo: &Repository, n: usize, input: &mut Bytes, data: &[u8]) {
    let tree = repo.treebuilder(None).unwrap().write().unwrap();
    let tree = repo.find_tree(tree).unwrap();
    let mut ids: Vec<Oid> = Vec::with_capacity(n);
    for i in 0..n {
        let mut parents = Vec::new();
        if i > 0 {
            for _ in 0..input.next() % 4 {
                let p = ids[input.next() % i];
                if !parents.contains(&p) {
                    parents.push(p);
                }
            }
        }
        // An hour a commit, give or take up to five days either way.
        let time = 1_700_000_000 + 3600 * i as i64 + 3600 * (input.next() as i64 - 128);
        let who = Signature::new("a", "a@example.com", &Time::new(time, 0)).unwrap();
        let parents: Vec<git2::Commit> = parents
            .iter()
            .map(|&p| repo.find_commit(p).unwrap())
            .collect();
        let parents: Vec<&git2::Commit> = parents.iter().collect();
        let message = format!("commit {i}");
        ids.push(
            repo.commit(None, &who, &who, &message, &tree, &parents)
                .unwrap(),
        );
    }
    let tip = ids[input.next() % n];
    let hide: Vec<Oid> = (0..input.next() % 3)
        .map(|_| ids[input.next() % n])
        .collect();

    let mut walk = repo.revwalk().unwrap();
    walk.set_sorting(Sort::TOPOLOGICAL | Sort::REVERSE).unwrap();
    walk.push(tip).unwrap();
    for &h in &hide {
        walk.hide(h).unwrap();
    }
    let theirs: Vec<Oid> = walk.map(Result::unwrap).collect();

    let ours_id = |id: Oid| ObjectId::from_bytes(id.as_bytes()).unwrap();
    let hidden: Vec<ObjectId> = hide.iter().map(|&h| ours_id(h)).collect();
    let ours = range::commits(repo, ours_id(tip), &hidden).unwrap();
    let theirs: Vec<ObjectId> = theirs.into_iter().map(ours_id).collect();
    assert_eq!(ours.ids(), &theirs[..], "{data:?}");
}
