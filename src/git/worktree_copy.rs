//! A commit's files written out to a directory of guard's own (`guard retest` runs the tests
//! there), and what each commit of a range changed, with renames: the repository's own work
//! tree, index and HEAD are never touched.

use std::path::Path;

use anyhow::Context as _;
use git2::Repository;

use super::ObjectId;
use super::id::{from_git2, to_git2};

/// Writes the files of `commit`'s tree into `dir` (which must exist), as a checkout would
/// (modes, symlinks, submodules left empty), without touching the repository's index, HEAD
/// or work tree.
pub fn write_commit_to(repo: &Repository, commit: ObjectId, dir: &Path) -> anyhow::Result<()> {
    let id = to_git2(commit)?;
    // A handle of its own with an empty index in memory: libgit2's checkout loads the
    // repository's index otherwise, and refuses one with extensions it does not know (split
    // or sparse indexes), which has nothing to do with writing a tree out.
    let repo = Repository::open(repo.path())
        .with_context(|| format!("cannot open {} again", repo.path().display()))?;
    // libgit2 reads the index a checkout updates even when told not to update it: a file
    // of its own, in a directory of its own, that does not exist yet (an empty index).
    let scratch = tempfile::tempdir().context("cannot make a directory for a scratch index")?;
    let mut index =
        git2::Index::open(&scratch.path().join("index")).context("cannot make an empty index")?;
    repo.set_index(&mut index)
        .context("cannot give the copy's checkout an index of its own")?;
    let tree = repo
        .find_commit(id)
        .and_then(|c| c.tree())
        .with_context(|| format!("cannot read the tree of commit {commit}"))?;
    let mut checkout = git2::build::CheckoutBuilder::new();
    checkout
        .target_dir(dir)
        .force()
        .recreate_missing(true)
        .update_index(false)
        .disable_filters(false);
    repo.checkout_tree(tree.as_object(), Some(&mut checkout))
        .with_context(|| {
            format!(
                "cannot write commit {commit}'s files into {}",
                dir.display()
            )
        })
}

/// One file a commit changed against its parent: the path before (`None`: added) and after
/// (`None`: deleted); a rename has both, and they differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub old: Option<String>,
    pub new: Option<String>,
}

/// The files `commit` changed against `parent` (`None`: the empty tree), renames found as git
/// finds them by default (50% similar). With `only`, just those paths (taken literally) are
/// compared: a walk that asks about a few files does not diff whole trees.
pub fn file_changes(
    repo: &Repository,
    commit: ObjectId,
    parent: Option<ObjectId>,
    only: Option<&[String]>,
) -> Result<Vec<FileChange>, git2::Error> {
    let new = repo.find_commit(to_git2(commit)?)?.tree()?;
    let old = parent
        .map(|p| repo.find_commit(to_git2(p)?)?.tree())
        .transpose()?;
    let mut options = git2::DiffOptions::new();
    if let Some(paths) = only {
        options.disable_pathspec_match(true);
        for path in paths {
            options.pathspec(path);
        }
    }
    let mut diff = repo.diff_tree_to_tree(old.as_ref(), Some(&new), Some(&mut options))?;
    diff.find_similar(Some(git2::DiffFindOptions::new().renames(true)))?;
    let path = |f: git2::DiffFile| f.path().and_then(|p| p.to_str()).map(str::to_string);
    Ok(diff
        .deltas()
        .map(|d| {
            let (old, new) = match d.status() {
                git2::Delta::Added | git2::Delta::Copied => (None, path(d.new_file())),
                git2::Delta::Deleted => (path(d.old_file()), None),
                _ => (path(d.old_file()), path(d.new_file())),
            };
            FileChange { old, new }
        })
        .collect())
}

/// The parents of `commit`, in order.
pub fn parents(repo: &Repository, commit: ObjectId) -> Result<Vec<ObjectId>, git2::Error> {
    let commit = repo.find_commit(to_git2(commit)?)?;
    Ok(commit
        .parent_ids()
        .map(from_git2)
        .collect::<Result<_, _>>()?)
}

/// A regular file of a tree: its bytes, and whether it is executable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileAt {
    pub bytes: Vec<u8>,
    pub executable: bool,
}

/// The object at `path` in `commit`'s tree (a blob, a symlink, a submodule, a tree); `None`
/// when nothing is there: which version of the path the commit holds.
pub fn entry_id(
    repo: &Repository,
    commit: ObjectId,
    path: &str,
) -> Result<Option<ObjectId>, git2::Error> {
    let tree = repo.find_commit(to_git2(commit)?)?.tree()?;
    Ok(tree
        .get_path(Path::new(path))
        .ok()
        .map(|e| from_git2(e.id()))
        .transpose()?)
}

/// The regular file at `path` in `commit`'s tree; `None` when there is none (or a symlink,
/// a submodule or a directory is there).
pub fn file_at(
    repo: &Repository,
    commit: ObjectId,
    path: &str,
) -> Result<Option<FileAt>, git2::Error> {
    let tree = repo.find_commit(to_git2(commit)?)?.tree()?;
    let Ok(entry) = tree.get_path(Path::new(path)) else {
        return Ok(None);
    };
    if entry.kind() != Some(git2::ObjectType::Blob) || entry.filemode() == 0o120000 {
        return Ok(None);
    }
    Ok(Some(FileAt {
        bytes: repo.find_blob(entry.id())?.content().to_vec(),
        executable: entry.filemode() == 0o100755,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "A")
            .env("GIT_AUTHOR_EMAIL", "a@example.com")
            .env("GIT_COMMITTER_NAME", "A")
            .env("GIT_COMMITTER_EMAIL", "a@example.com")
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn a_commit_is_written_out_and_the_repository_is_untouched() {
        let repo_dir = tempfile::tempdir().unwrap();
        let root = repo_dir.path();
        git(root, &["init", "-q", "-b", "main"]);
        std::fs::create_dir_all(root.join("tests")).unwrap();
        std::fs::write(
            root.join("tests/test_a.py"),
            "def test_a():\n    assert 1\n",
        )
        .unwrap();
        std::fs::write(root.join("run.sh"), "echo hi\n").unwrap();
        git(root, &["add", "-A"]);
        git(root, &["update-index", "--chmod=+x", "run.sh"]);
        git(root, &["commit", "-qm", "one"]);
        git(root, &["mv", "tests/test_a.py", "tests/test_b.py"]);
        std::fs::write(root.join("new.txt"), "n\n").unwrap();
        git(root, &["add", "-A"]);
        git(root, &["commit", "-qm", "two"]);
        // An uncommitted edit stays where it is.
        std::fs::write(root.join("new.txt"), "edited\n").unwrap();

        let repo = Repository::open(root).unwrap();
        let git2_head = repo.head().unwrap().target().unwrap();
        let first = repo.find_commit(git2_head).unwrap().parent_id(0).unwrap();
        let (head, first) = (from_git2(git2_head).unwrap(), from_git2(first).unwrap());
        let out = tempfile::tempdir().unwrap();
        write_commit_to(&repo, first, out.path()).unwrap();
        assert!(out.path().join("tests/test_a.py").is_file());
        assert!(!out.path().join("new.txt").exists());
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(out.path().join("run.sh"))
                .unwrap()
                .permissions()
                .mode();
            assert!(mode & 0o100 != 0, "{mode:o}");
        }
        assert_eq!(repo.head().unwrap().target(), Some(git2_head));
        assert_eq!(
            std::fs::read_to_string(root.join("new.txt")).unwrap(),
            "edited\n"
        );
        assert!(root.join("tests/test_b.py").is_file());
        let statuses = repo.statuses(None).unwrap();
        assert_eq!(statuses.len(), 1, "only the uncommitted edit");

        let changes = file_changes(&repo, head, Some(first), None).unwrap();
        assert!(changes.contains(&FileChange {
            old: Some("tests/test_a.py".into()),
            new: Some("tests/test_b.py".into())
        }));
        assert!(changes.contains(&FileChange {
            old: None,
            new: Some("new.txt".into())
        }));
        // Asked about some paths only: the others are not compared (a rename between two
        // asked paths is still one).
        let only = ["tests/test_a.py".to_string(), "tests/test_b.py".to_string()];
        let asked = file_changes(&repo, head, Some(first), Some(&only)).unwrap();
        assert_eq!(
            asked,
            [FileChange {
                old: Some("tests/test_a.py".into()),
                new: Some("tests/test_b.py".into())
            }]
        );
        assert_eq!(
            file_at(&repo, first, "tests/test_a.py")
                .unwrap()
                .map(|f| f.bytes),
            Some(b"def test_a():\n    assert 1\n".to_vec())
        );
        assert!(file_at(&repo, first, "run.sh").unwrap().unwrap().executable);
        assert_eq!(file_at(&repo, head, "tests/test_a.py").unwrap(), None);
    }
}
