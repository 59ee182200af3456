//! The walk over a range's trees, newest first, on one thread or two: each commit's
//! protected changes against its parents and its malformed trees, with the weakened-test
//! judge reading the test files in the same pass. Separate from judging (`audit`): the walk
//! knows blocks, threads and pack readers; the judge knows what a change means.

use crate::changes::{Change, MalformedTree};
use crate::engine::ahead::Ahead;
use crate::engine::commit_trees::{CommitWalked, walk_commit};
use crate::engine::weakened;
use crate::git::protected::ProtectedSet;
use crate::git::range::Commits;
use crate::git::trees::{PackReader, Trees};
use crate::git::{self, Repository};

/// What one newest-first pass over a range's trees found.
#[derive(Debug, PartialEq)]
pub struct Walked {
    /// Each commit's protected changes against each of its parents, in order (one list,
    /// against the empty tree, for a root), or no list at all when it changes nothing: what
    /// `Lineage::resolve` takes.
    pub against_parents: Vec<Vec<Vec<Change>>>,
    /// Each commit's malformed trees along protected paths (empty unless `fsck` was asked).
    pub malformed: Vec<Vec<MalformedTree>>,
}

/// Ranges at least this long are walked on two threads (`walk_commits`): below it, opening
/// repository handles and starting threads cost more than they save.
const TWO_THREADS_FROM: usize = 256;

/// How many commits a thread of `walk_commits` takes at once. When each thread reads the
/// packs through a reader of its own (`git::packs_fit_apart`), it walks a run of
/// neighbouring blocks (`parallel::each_in_runs`): a tree is stored as a delta on the same
/// directory's tree a commit earlier, so a thread that walked blocks in turn with the other
/// rebuilt every chain of deltas the other did. Otherwise, with libgit2's windows of a large
/// pack shared, the threads take blocks newest first, so they read the same stretch of
/// history, and so of the pack, at the same time: halves of the range read at once from two
/// ends of a large pack kept remapping libgit2's bounded pack windows (BENCHMARKS.md,
/// "Measured choices", M2).
const BLOCK: usize = 64;

/// Compares each commit's trees with its parents', newest first (see `audit::commit_judge::commit_outcomes`), and,
/// with `fsck`, checks the trees it brings along protected paths in the same pass, while the
/// trees just compared are still in `trees`; so does `weakened` with the test files.
///
/// With more than one thread, a long range is walked on two threads, each with a repository
/// handle, `Trees` and weakened-test judge of its own, in blocks of `BLOCK` commits. The
/// results (and the first error, if any) are the ones one thread would give; a block no
/// thread could take (no handle, or its thread panicked) is walked here. A commit compared
/// `ahead` is not compared again.
pub fn walk_commits(
    trees: &Trees,
    commits: &Commits,
    protected: &ProtectedSet,
    weakened: Option<&mut weakened::Judge>,
    how: Walk,
) -> anyhow::Result<Walked> {
    let threads = if how.threads > 1 && commits.len() >= TWO_THREADS_FROM {
        crate::parallel::cores().min(how.threads)
    } else {
        1
    };
    let how = Walk { threads, ..how };
    walk_commits_on(trees, commits, protected, weakened, how, BLOCK)
}

/// How `walk_commits` goes over a range.
#[derive(Clone, Copy)]
pub struct Walk<'a> {
    /// Check the trees brought along protected paths for malformed entries.
    pub fsck: bool,
    /// At most this many threads.
    pub threads: usize,
    /// What was compared while the range was listed (with `fsck`).
    pub ahead: Option<&'a Ahead>,
}

/// `walk_commits` on `how.threads` threads, `block` commits at a time.
fn walk_commits_on(
    trees: &Trees,
    commits: &Commits,
    protected: &ProtectedSet,
    mut weakened: Option<&mut weakened::Judge>,
    how: Walk,
    block: usize,
) -> anyhow::Result<Walked> {
    let Walk {
        fsck,
        threads,
        ahead,
    } = how;
    // What was compared ahead was compared with fsck: a walk without it does its own.
    let ahead = ahead.filter(|_| fsck);
    let compare = |trees: &Trees, k: usize| match ahead.and_then(|a| a.get(commits, k)) {
        Some(walked) => Ok(walked),
        None => walk_commit(trees, commits, protected, fsck, k),
    };
    let n = commits.len();
    // Block `b` holds the commits `n - (b + 1) * block .. n - b * block`, newest first.
    let blocks = if threads > 1 { n.div_ceil(block) } else { 0 };
    let span = |b: usize| n.saturating_sub((b + 1) * block)..n - b * block;
    let judging = weakened.as_deref().map(weakened::Judge::parts);
    let git_dir = trees.repo().path();
    // Each thread reads through pack readers of its own (`reopen_apart`): a block in which
    // one failed is walked again here, through the usual handle.
    let handles = std::sync::atomic::AtomicUsize::new(0);
    let state = || {
        let n = handles.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let repo = git::reopen_apart(git_dir, n + 1).or_else(|| git::reopen(git_dir))?;
        Some((repo, PackReader::default()))
    };
    let work = |(repo, packs): &mut (Repository, PackReader), b: usize| {
        let trees = Trees::with_packs(repo, packs).map_err(anyhow::Error::new);
        let mut judge = judging.map(|parts| weakened::Judge::from_parts(repo, parts));
        let mut walked = Vec::with_capacity(block);
        for k in span(b).rev() {
            let one = match &trees {
                Ok(trees) => compare(trees, k).and_then(|one| match judge.as_mut() {
                    Some(judge) => judge.commit(k, trees).map(|()| one),
                    None => Ok(one),
                }),
                Err(e) => Err(anyhow::anyhow!("{e:#}")),
            };
            let failed = one.is_err();
            walked.push(one);
            if failed {
                break;
            }
        }
        Block {
            walked,
            weakened: judge.map(weakened::Judge::into_found),
        }
    };
    let done = if blocks > 0 && git::packs_fit_apart(trees.repo()) {
        crate::parallel::each_in_runs(blocks, threads, state, work)
    } else {
        crate::parallel::each(blocks, threads, state, work)
    };
    let mut walked: Vec<CommitWalked> = Vec::with_capacity(n);
    let mut here = |k: usize, walked: &mut Vec<CommitWalked>| -> anyhow::Result<()> {
        walked.push(compare(trees, k)?);
        if let Some(judge) = weakened.as_deref_mut() {
            judge.commit(k, trees)?;
        }
        Ok(())
    };
    let mut found = Vec::new();
    for (b, block) in done.into_iter().enumerate() {
        match block.filter(|block| block.walked.iter().all(Result::is_ok)) {
            Some(block) => {
                for one in block.walked {
                    walked.push(one?);
                }
                found.extend(block.weakened);
            }
            None => {
                for k in span(b).rev() {
                    here(k, &mut walked)?;
                }
            }
        }
    }
    // On one thread, here.
    for k in (0..n - walked.len()).rev() {
        here(k, &mut walked)?;
    }
    if let Some(judge) = weakened {
        for found in found {
            judge.absorb(found);
        }
    }
    walked.reverse();
    let (against_parents, malformed) = walked.into_iter().unzip();
    Ok(Walked {
        against_parents,
        malformed,
    })
}

/// What a thread of `walk_commits_on` did with one block: each commit's results, newest
/// first, up to and including the first error; and what its weakened-test judge found.
struct Block {
    walked: Vec<anyhow::Result<CommitWalked>>,
    weakened: Option<weakened::Found>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ahead;
    use crate::git::ObjectId;
    use crate::git::range;
    use crate::policy::ledger::{DEFAULT_LEDGER_PATH, Policy};

    /// A tree of `entries` (name, mode, id) as the raw bytes say, in the order given.
    fn raw_tree(repo: &Repository, entries: &[(&str, &str, ObjectId)]) -> ObjectId {
        let mut bytes = Vec::new();
        for (name, mode, id) in entries {
            bytes.extend_from_slice(format!("{mode} {name}\0").as_bytes());
            bytes.extend_from_slice(id.as_bytes());
        }
        git::write_raw_object(repo, "tree", &bytes)
    }

    /// A history of `n` commits, each a child of the one before, with protected changes and
    /// malformed trees in both halves; commits in `broken` name a tree that does not exist.
    fn history(repo: &Repository, n: usize, broken: &[usize]) -> Commits {
        let blob = |text: String| git::write_raw_object(repo, "blob", text.as_bytes());
        let (freeze, fixture) = (blob("version = 1\n".into()), blob("{}\n".into()));
        let mut parent: Option<ObjectId> = None;
        for k in 1..=n {
            let fixture = if (20..280).contains(&k) {
                blob(format!("{{}} {}\n", k / 100))
            } else {
                fixture
            };
            // At 40 and 250, `tests/fixtures/` lists one name twice.
            let mut fixtures = vec![("a.json", "100644", fixture)];
            if k == 40 || k == 250 {
                fixtures.push(("a.json", "100644", fixture));
            }
            let freeze = if k == 200 {
                blob("version = 1\n# 200\n".into())
            } else {
                freeze
            };
            let tree = raw_tree(
                repo,
                &[
                    (
                        "qa",
                        "40000",
                        raw_tree(repo, &[("freeze.toml", "100644", freeze)]),
                    ),
                    (
                        "src",
                        "40000",
                        raw_tree(repo, &[("f.py", "100644", blob(format!("{k}\n")))]),
                    ),
                    (
                        "tests",
                        "40000",
                        raw_tree(repo, &[("fixtures", "40000", raw_tree(repo, &fixtures))]),
                    ),
                ],
            );
            let tree = if broken.contains(&k) {
                ObjectId::from_bytes(&[k as u8; 20]).unwrap()
            } else {
                tree
            };
            let mut text = format!("tree {tree}\n");
            if let Some(p) = parent {
                text.push_str(&format!("parent {p}\n"));
            }
            text.push_str(&format!(
                "author A <a@example.com> {k} +0000\ncommitter A <a@example.com> {k} +0000\n\nc{k}\n"
            ));
            parent = Some(git::write_raw_object(repo, "commit", text.as_bytes()));
        }
        range::commits(repo, parent.unwrap(), &[]).unwrap()
    }

    /// A walk with fsck on `threads` threads.
    fn how(threads: usize) -> Walk<'static> {
        Walk {
            fsck: true,
            threads,
            ahead: None,
        }
    }

    #[test]
    fn two_threads_find_what_one_finds_and_fail_where_it_fails() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(dir.path()).unwrap();
        let policy = Policy::embedded();
        let protected = ProtectedSet::new(&policy, DEFAULT_LEDGER_PATH);
        let n = 300;
        let commits = history(&repo, n, &[]);
        assert_eq!(commits.len(), n);
        let walk = |threads, block| {
            let trees = Trees::new(&repo).unwrap();
            walk_commits_on(&trees, &commits, &protected, None, how(threads), block)
        };
        let one = walk(1, n).unwrap();
        // What the history holds, in both halves (index k - 1 for commit k): everything added
        // at 1, the fixture changed at 20, 100, 200 and 280, the freeze file at 200 and 201;
        // a name listed twice (40, 250) changes no content.
        let changed: Vec<usize> = (0..n)
            .filter(|&k| !one.against_parents[k].is_empty())
            .collect();
        assert_eq!(changed, [0, 19, 99, 199, 200, 279]);
        let malformed: Vec<usize> = (0..n).filter(|&k| !one.malformed[k].is_empty()).collect();
        assert_eq!(malformed, [39, 249]);
        // Blocks of one commit, of a few (the last one short), two halves, one block.
        for block in [1, 7, n / 2, n] {
            assert_eq!(walk(2, block).unwrap(), one, "blocks of {block}");
        }

        // The first error one thread meets is the one two threads report: the newest broken
        // commit's, in whichever block.
        for broken in [&[10][..], &[10, 100], &[100, 250], &[250]] {
            let commits = history(&repo, n, broken);
            let error = |threads, block| {
                let trees = Trees::new(&repo).unwrap();
                let e = walk_commits_on(&trees, &commits, &protected, None, how(threads), block);
                format!("{:#}", e.unwrap_err())
            };
            let newest = *broken.last().unwrap() as u8;
            let one = error(1, n);
            assert!(one.contains(&hex::encode([newest; 20])), "{one}");
            for block in [7, 64, n / 2] {
                assert_eq!(error(2, block), one, "{broken:?} blocks of {block}");
            }
        }
    }

    /// What the second thread compares while the range is listed is what the usual pass
    /// finds, commit by commit. A commit it could not compare (its tree or its parent's does
    /// not exist) it leaves to the usual pass, which reports the error as it always did.
    #[test]
    fn trees_compared_while_listing_are_the_walks() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(dir.path()).unwrap();
        let protected = ProtectedSet::new(&Policy::embedded(), DEFAULT_LEDGER_PATH);
        let n = 300;
        // Commits 10 and 250 name missing trees, so 11 and 251 have a missing parent tree.
        for (broken, compared) in [(&[][..], n), (&[10, 250], n - 4)] {
            let commits = history(&repo, n, broken);
            let tip = commits.ids()[n - 1];
            let (listed, ahead) =
                ahead::commits_in_batches(&repo, tip, &[], &protected, 4, true).unwrap();
            assert_eq!(listed.ids(), commits.ids());
            assert_eq!(ahead.len(), compared, "{broken:?}");
            let trees = Trees::new(&repo).unwrap();
            for k in 0..n {
                match walk_commit(&trees, &listed, &protected, true, k) {
                    Ok(walked) => assert_eq!(ahead.get(&listed, k), Some(walked), "commit {k}"),
                    Err(_) => assert_eq!(ahead.get(&listed, k), None, "commit {k}"),
                }
            }
            let usual = walk_commits_on(&trees, &listed, &protected, None, how(1), n);
            let with_ahead = Walk {
                ahead: Some(&ahead),
                ..how(2)
            };
            let taken = walk_commits_on(&trees, &listed, &protected, None, with_ahead, 64);
            match (taken, usual) {
                (Ok(taken), Ok(usual)) => assert_eq!(taken, usual),
                (Err(taken), Err(usual)) => assert_eq!(format!("{taken:#}"), format!("{usual:#}")),
                (taken, usual) => panic!("{taken:?} against {usual:?}"),
            }
        }
    }
}
