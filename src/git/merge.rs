//! git's own merge of a merge commit's parents: what the parents bring, decided by a real
//! three-way merge (libgit2's, recursive across criss-cross bases, with rename detection as
//! git's), not by which parent's whole file a merge's tree matches. What an agent's merge
//! holds that this merge does not give, or holds where this merge conflicts, is the merge's
//! own edit.
//!
//! The merged trees and blobs are written to an in-memory object store added to a handle of
//! this module's own: nothing reaches the repository (a pre-receive hook reads a quarantine).
//! As git does, libgit2 freshens (touches the time of) the file of an object it would have
//! written that the repository already holds.

use std::collections::BTreeSet;

use git2::{MergeOptions, Oid, Repository};

use super::ObjectId;
use super::id::{from_git2, to_git2};

/// A handle on the repository whose writes stay in memory, and which reads what it wrote.
pub struct GitMerge {
    handle: Repository,
}

/// git's merge of a commit's parents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    /// The merged tree, readable through [`GitMerge::repo`]. At a conflicted path it holds
    /// the first parent's entry (the accumulated merge's, for an octopus): conflicted paths
    /// are the merge's own whatever it holds there.
    pub tree: ObjectId,
    /// The paths at which a step of the merge conflicted.
    pub conflicted: BTreeSet<String>,
    /// The tree of the parents' merge base (of all of them, for an octopus; the first git
    /// finds, for several), against which a conflicted path's sides are read; `None` when
    /// the histories share no commit.
    pub base: Option<ObjectId>,
}

impl GitMerge {
    /// A handle on `repo` (opened as `repo` was: from git's environment, so a push's
    /// quarantined objects are visible) that writes to memory only.
    ///
    /// The handle is bare, with an empty index of its own: libgit2 reads a merge's attributes
    /// (`merge=binary`, `merge=union`) from the work tree and the index when there are any,
    /// and in a clone those are the agent's checkout. A server's bare repository has neither,
    /// and the hook, the pre-push hook and `guard check` must merge alike.
    pub fn open(repo: &Repository) -> anyhow::Result<GitMerge> {
        let handle = Repository::open_ext(
            repo.path(),
            git2::RepositoryOpenFlags::FROM_ENV
                | git2::RepositoryOpenFlags::NO_SEARCH
                | git2::RepositoryOpenFlags::BARE,
            std::iter::empty::<&std::ffi::OsStr>(),
        )
        .map_err(|e| {
            anyhow::anyhow!(
                "cannot open a second handle on the repository at {} to merge a merge's parents: {}",
                repo.path().display(),
                e.message()
            )
        })?;
        handle.set_index(&mut git2::Index::new_ext(repo.object_format())?)?;
        {
            let odb = handle.odb()?;
            // The highest priority: every write lands here. The backend is the object
            // store's to free; dropping the wrapper keeps it in place.
            odb.add_new_mempack_backend(1_000)?;
        }
        Ok(GitMerge { handle })
    }

    /// The handle the merged trees are read through.
    pub fn repo(&self) -> &Repository {
        &self.handle
    }

    /// git's merge of the commits `parents`, in order: the first two merged as `git merge`
    /// does (a virtual base made of several merge bases), each further one into the result
    /// as git's octopus strategy does (against the merge base of that parent and those
    /// merged before it). A conflicted path takes the running result's entry and is listed.
    pub fn merge(&self, parents: &[ObjectId]) -> Result<Merged, git2::Error> {
        let parents = parents
            .iter()
            .map(|&p| to_git2(p))
            .collect::<Result<Vec<_>, _>>()?;
        let (tree, conflicted, base) = self.merge_ids(&parents)?;
        Ok(Merged {
            tree: from_git2(tree)?,
            conflicted,
            base: base.map(from_git2).transpose()?,
        })
    }

    /// [`GitMerge::merge`] in libgit2's ids: the merged tree, the conflicted paths, the base's
    /// tree.
    fn merge_ids(
        &self,
        parents: &[Oid],
    ) -> Result<(Oid, BTreeSet<String>, Option<Oid>), git2::Error> {
        let repo = &self.handle;
        let options = MergeOptions::new();
        let commits = parents
            .iter()
            .map(|&id| repo.find_commit(id))
            .collect::<Result<Vec<_>, _>>()?;
        let mut conflicted = BTreeSet::new();
        let [first, second, rest @ ..] = commits.as_slice() else {
            let tree = match commits.first() {
                Some(only) => only.tree_id(),
                None => repo.treebuilder(None)?.write()?,
            };
            return Ok((tree, conflicted, None));
        };
        let base = match repo.merge_base_octopus(parents) {
            Ok(base) => Some(repo.find_commit(base)?.tree_id()),
            Err(e) if e.code() == git2::ErrorCode::NotFound => None,
            Err(e) => return Err(e),
        };
        let mut index = repo.merge_commits(first, second, Some(&options))?;
        let mut tree = settle(repo, &mut index, &mut conflicted)?;
        for (i, next) in rest.iter().enumerate() {
            let mut ids = vec![next.id()];
            ids.extend_from_slice(&parents[..i + 2]);
            let base = match repo.merge_base_many(&ids) {
                Ok(base) => repo.find_commit(base)?.tree()?,
                Err(e) if e.code() == git2::ErrorCode::NotFound => {
                    repo.find_tree(repo.treebuilder(None)?.write()?)?
                }
                Err(e) => return Err(e),
            };
            let ours = repo.find_tree(tree)?;
            let mut index = repo.merge_trees(&base, &ours, &next.tree()?, Some(&options))?;
            tree = settle(repo, &mut index, &mut conflicted)?;
        }
        Ok((tree, conflicted, base))
    }
}

/// The stage of an index entry: 0 when merged, 1-3 (base, ours, theirs) when conflicted.
fn stage(entry: &git2::IndexEntry) -> u16 {
    (entry.flags >> 12) & 0x3
}

/// Writes merge result `index` as a tree, each conflicted path (listed in `conflicted`)
/// holding the ours side's entry, or nothing when that side has none.
fn settle(
    repo: &Repository,
    index: &mut git2::Index,
    conflicted: &mut BTreeSet<String>,
) -> Result<Oid, git2::Error> {
    if !index.has_conflicts() {
        return index.write_tree_to(repo);
    }
    let mut settled = git2::Index::new_ext(repo.object_format())?;
    for mut entry in index.iter() {
        match stage(&entry) {
            0 => settled.add(&entry)?,
            s => {
                conflicted.insert(String::from_utf8_lossy(&entry.path).into_owned());
                if s == 2 {
                    entry.flags &= !0x3000;
                    settled.add(&entry)?;
                }
            }
        }
    }
    settled.write_tree_to(repo)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::test_git;

    fn repo_with(dir: &std::path::Path) -> Repository {
        test_git(dir, &["init", "-q", "-b", "main"]);
        Repository::open(dir).unwrap()
    }

    fn commit(dir: &std::path::Path, files: &[(&str, &str)], message: &str) -> ObjectId {
        for (path, text) in files {
            let file = dir.join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, text).unwrap();
        }
        test_git(dir, &["add", "-A"]);
        test_git(dir, &["commit", "-q", "--allow-empty", "-m", message]);
        let id = crate::git::test_oid(&test_git(dir, &["rev-parse", "HEAD"])).unwrap();
        from_git2(id).unwrap()
    }

    /// The id at `path` of `tree` as `git rev-parse` reads it from the merge's handle.
    fn at(merge: &GitMerge, tree: ObjectId, path: &str) -> Option<Oid> {
        let tree = merge.repo().find_tree(to_git2(tree).unwrap()).unwrap();
        tree.get_path(std::path::Path::new(path))
            .ok()
            .map(|e| e.id())
    }

    const LINES: &str = "a\nb\nc\nd\ne\nf\ng\n";

    #[test]
    fn a_clean_merge_takes_each_side_change_and_writes_nothing_to_the_repository() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let repo = repo_with(d);
        let base = commit(d, &[("f.txt", LINES)], "base");
        test_git(d, &["checkout", "-q", "-b", "side"]);
        let side = commit(d, &[("f.txt", &LINES.replace("g\n", "G\n"))], "side");
        test_git(d, &["checkout", "-q", "main"]);
        let main = commit(d, &[("f.txt", &LINES.replace("a\n", "A\n"))], "main");
        let objects_before = test_git(d, &["count-objects", "-v"]);
        let merge = GitMerge::open(&repo).unwrap();
        let merged = merge.merge(&[main, side]).unwrap();
        assert!(merged.conflicted.is_empty());
        let id = at(&merge, merged.tree, "f.txt").unwrap();
        let blob = merge.repo().find_blob(id).unwrap();
        assert_eq!(
            blob.content(),
            LINES.replace("a\n", "A\n").replace("g\n", "G\n").as_bytes()
        );
        // The merged blob and tree live in memory only.
        assert!(repo.find_blob(id).is_err());
        assert_eq!(test_git(d, &["count-objects", "-v"]), objects_before);
        let _ = base;
    }

    #[test]
    fn a_conflicted_path_is_listed_and_holds_the_first_parent_entry() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let repo = repo_with(d);
        commit(d, &[("f.txt", LINES), ("other.txt", "x\n")], "base");
        test_git(d, &["checkout", "-q", "-b", "side"]);
        let side = commit(d, &[("f.txt", &LINES.replace("d\n", "side\n"))], "side");
        test_git(d, &["checkout", "-q", "main"]);
        let main = commit(
            d,
            &[
                ("f.txt", &LINES.replace("d\n", "main\n")),
                ("other.txt", "y\n"),
            ],
            "main",
        );
        let merge = GitMerge::open(&repo).unwrap();
        let merged = merge.merge(&[main, side]).unwrap();
        assert_eq!(merged.conflicted.iter().collect::<Vec<_>>(), vec!["f.txt"]);
        let main_tree = repo.find_commit(to_git2(main).unwrap()).unwrap().tree_id();
        let main_tree = from_git2(main_tree).unwrap();
        assert_eq!(
            at(&merge, merged.tree, "f.txt"),
            at(&merge, main_tree, "f.txt")
        );
        assert_eq!(
            at(&merge, merged.tree, "other.txt"),
            at(&merge, main_tree, "other.txt")
        );
    }

    /// The merged tree of a criss-cross merge and of an octopus merge, against what `git
    /// merge-tree --write-tree` (git's own ort merge) and `git merge` (octopus) write.
    #[test]
    fn criss_cross_and_octopus_merges_give_what_git_gives() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let repo = repo_with(d);
        let base = commit(d, &[("f.txt", LINES), ("g.txt", LINES)], "base");
        test_git(d, &["checkout", "-q", "-b", "side"]);
        let s1 = commit(d, &[("f.txt", &LINES.replace("b\n", "B\n"))], "s1");
        test_git(d, &["checkout", "-q", "main"]);
        let m1 = commit(d, &[("g.txt", &LINES.replace("f\n", "F\n"))], "m1");
        // Criss-cross: each side merges the other's first commit.
        test_git(d, &["merge", "-q", "--no-edit", &s1.to_string()]);
        let m2 = commit(
            d,
            &[("f.txt", &LINES.replace("b\n", "B\n").replace("e\n", "E\n"))],
            "m2",
        );
        test_git(d, &["checkout", "-q", "side"]);
        test_git(d, &["merge", "-q", "--no-edit", &m1.to_string()]);
        let s2 = commit(
            d,
            &[("g.txt", &LINES.replace("f\n", "F\n").replace("a\n", "A\n"))],
            "s2",
        );
        let bases = test_git(
            d,
            &["merge-base", "--all", &m2.to_string(), &s2.to_string()],
        );
        assert_eq!(
            bases.lines().count(),
            2,
            "a criss-cross has two merge bases"
        );
        let merge = GitMerge::open(&repo).unwrap();
        let merged = merge.merge(&[m2, s2]).unwrap();
        let git_tree = test_git(
            d,
            &[
                "merge-tree",
                "--write-tree",
                &m2.to_string(),
                &s2.to_string(),
            ],
        );
        assert!(merged.conflicted.is_empty());
        assert_eq!(merged.tree.to_string(), git_tree.lines().next().unwrap());

        // Octopus: three branches off the base, each changing its own file.
        test_git(d, &["checkout", "-q", "-b", "o1", &base.to_string()]);
        let o1 = commit(d, &[("a.txt", "1\n")], "o1");
        test_git(d, &["checkout", "-q", "-b", "o2", &base.to_string()]);
        let o2 = commit(d, &[("f.txt", &LINES.replace("c\n", "C\n"))], "o2");
        test_git(d, &["checkout", "-q", "-b", "o3", &base.to_string()]);
        let o3 = commit(d, &[("g.txt", &LINES.replace("g\n", "G\n"))], "o3");
        test_git(d, &["checkout", "-q", "o1"]);
        test_git(d, &["merge", "-q", "--no-edit", "o2", "o3"]);
        let git_octopus = test_git(d, &["rev-parse", "HEAD^{tree}"]);
        let merged = merge.merge(&[o1, o2, o3]).unwrap();
        assert!(merged.conflicted.is_empty());
        assert_eq!(merged.tree.to_string(), git_octopus);
    }
}
