//! Comparing a range's trees while the range is still being listed (`guard check` without a
//! commit-graph).
//!
//! Without a graph, listing a range reads every commit object (`DateWalk`): about a third of
//! a narrow ledger's check on one thread, with the other core idle. What a commit brings
//! along protected paths depends only on its tree and its parents' trees, which the walk
//! knows as it takes the commit; so a second thread, reading through pack readers of its own
//! (`git::reopen_apart`), compares each commit the walk takes, in batches, while the walk
//! goes on. When the listing ends the thread stops, and the usual pass (`walk_commits`) takes
//! what it compared and compares the rest.
//!
//! What the thread found is used only for a commit the range holds, and only if the trees it
//! compared are the ones the range gives that commit: a commit the walk took and later found
//! hidden, or a walk that gave up for libgit2's, leaves nothing stale behind. A comparison
//! that failed is dropped, so the usual pass meets the same error and reports it as before.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use crate::engine::commit_trees::{CommitWalked, walk_trees};
use crate::git::protected::ProtectedSet;
use crate::git::range::{self, Commits, Taken};
use crate::git::trees::Trees;
use crate::git::{self, ObjectId, Repository};

/// Commits handed to the comparing thread at once. The thread starts with the first batch,
/// so a short range (most of what `check` sees) never starts it.
const BATCH: usize = 64;

/// What was compared ahead: for each commit, the trees compared and what they brought.
#[derive(Default)]
pub(super) struct Ahead {
    walked: HashMap<ObjectId, Compared>,
}

struct Compared {
    tree: ObjectId,
    parent_trees: Vec<ObjectId>,
    walked: CommitWalked,
}

impl Ahead {
    /// Commit `k`'s comparison, if it was compared ahead with the trees `commits` gives it.
    pub(super) fn get(&self, commits: &Commits, k: usize) -> Option<CommitWalked> {
        let found = self.walked.get(&commits.ids()[k])?;
        let (tree, parent_trees) = commits.trees(k);
        (found.tree == tree && found.parent_trees == parent_trees).then(|| found.walked.clone())
    }

    /// How many commits were compared ahead.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.walked.len()
    }
}

/// A commit the walk took, sent to the comparing thread.
struct Owned {
    id: ObjectId,
    tree: ObjectId,
    parent_trees: Vec<ObjectId>,
}

/// The commits of `tip` not reachable from `hide` (`range::commits`), with what a second
/// thread compared of them (with fsck, as `audit::commit_judge::commit_outcomes` does) while they were listed.
pub(super) fn commits(
    repo: &Repository,
    tip: ObjectId,
    hide: &[ObjectId],
    protected: &ProtectedSet,
) -> anyhow::Result<(Commits, Ahead)> {
    commits_in_batches(repo, tip, hide, protected, BATCH, false)
}

/// `commits`, `batch_len` commits at a time; with `drain`, the thread compares every commit
/// the walk took before it stops (the tests' way to know what it compared).
pub(super) fn commits_in_batches(
    repo: &Repository,
    tip: ObjectId,
    hide: &[ObjectId],
    protected: &ProtectedSet,
    batch_len: usize,
    drain: bool,
) -> anyhow::Result<(Commits, Ahead)> {
    let git_dir = git::git_dir(repo);
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let (send, receive) = mpsc::channel::<Vec<Owned>>();
        let mut receive = Some(receive);
        let mut worker = None;
        let mut batch = Vec::with_capacity(batch_len);
        let stop = &stop;
        // Starts the thread with the first batch; a thread that is gone (it could not open
        // the repository) leaves it all to the usual pass.
        let mut hand_over = |batch: Vec<Owned>| {
            if let Some(receive) = receive.take() {
                worker = Some(scope.spawn(move || compare(git_dir, protected, receive, stop)));
            }
            let _ = send.send(batch);
        };
        let listed = range::commits_watched(repo, tip, hide, &mut |taken: Taken| {
            batch.push(Owned {
                id: taken.id,
                tree: taken.tree,
                parent_trees: taken.parent_trees.to_vec(),
            });
            if batch.len() == batch_len {
                hand_over(std::mem::replace(&mut batch, Vec::with_capacity(batch_len)));
            }
        });
        if drain {
            hand_over(batch);
        } else {
            // What the thread has not reached by now, the usual pass compares on two threads.
            stop.store(true, Ordering::Relaxed);
        }
        // The thread's queue ends here, and so does its loop once it has emptied it.
        drop(send);
        // A thread that panicked found nothing that counts.
        let walked = worker.and_then(|w| w.join().ok()).unwrap_or_default();
        Ok((listed?, Ahead { walked }))
    })
}

/// The comparing thread: each batch it receives, until `stop` or the walk's end.
fn compare(
    git_dir: &std::path::Path,
    protected: &ProtectedSet,
    receive: mpsc::Receiver<Vec<Owned>>,
    stop: &AtomicBool,
) -> HashMap<ObjectId, Compared> {
    let mut walked = HashMap::new();
    let Some(repo) = git::reopen_apart(git_dir, 1).or_else(|| git::reopen(git_dir)) else {
        return walked;
    };
    git::without_object_cache(|| {
        let Ok(trees) = Trees::new(&repo) else {
            return;
        };
        for batch in receive {
            for one in batch {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                if let Ok(found) = walk_trees(&trees, protected, true, one.tree, &one.parent_trees)
                {
                    walked.insert(
                        one.id,
                        Compared {
                            tree: one.tree,
                            parent_trees: one.parent_trees,
                            walked: found,
                        },
                    );
                }
            }
        }
    });
    walked
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::ledger::{DEFAULT_LEDGER_PATH, Policy};

    /// A comparison is taken only for the trees it was made with: a commit the walk took
    /// with other trees than the range gives it gets none.
    #[test]
    fn a_comparison_of_other_trees_is_not_taken() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(dir.path()).unwrap();
        let tree = |text: &str| {
            let blob = git::write_raw_object(&repo, "blob", text.as_bytes());
            let mut bytes = b"100644 f\0".to_vec();
            bytes.extend_from_slice(blob.as_bytes());
            git::write_raw_object(&repo, "tree", &bytes)
        };
        let (first, second, other) = (tree("1"), tree("2"), tree("3"));
        let root = git::write_raw_object(
            &repo,
            "commit",
            format!("tree {first}\nauthor A <a@x> 1 +0000\ncommitter A <a@x> 1 +0000\n\nc1\n")
                .as_bytes(),
        );
        let tip = git::write_raw_object(
            &repo,
            "commit",
            format!(
                "tree {second}\nparent {root}\nauthor A <a@x> 2 +0000\ncommitter A <a@x> 2 +0000\n\nc2\n"
            )
            .as_bytes(),
        );
        let protected = ProtectedSet::new(&Policy::embedded(), DEFAULT_LEDGER_PATH);
        let (commits, _) = commits_in_batches(&repo, tip, &[], &protected, 1, true).unwrap();
        assert_eq!(commits.ids(), [root, tip]);
        let found = (vec![], vec![]);
        let ahead = |tree: ObjectId, parent_trees: Vec<ObjectId>| Ahead {
            walked: HashMap::from([(
                tip,
                Compared {
                    tree,
                    parent_trees,
                    walked: found.clone(),
                },
            )]),
        };
        assert_eq!(
            ahead(second, vec![first]).get(&commits, 1),
            Some(found.clone())
        );
        assert_eq!(ahead(other, vec![first]).get(&commits, 1), None);
        assert_eq!(ahead(second, vec![other]).get(&commits, 1), None);
        assert_eq!(ahead(second, vec![first, first]).get(&commits, 1), None);
        assert_eq!(ahead(second, vec![]).get(&commits, 1), None);
        // Commit 0 was not compared here.
        assert_eq!(ahead(second, vec![first]).get(&commits, 0), None);
    }
}
