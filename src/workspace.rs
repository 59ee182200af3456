//! Where guard runs: the root that ledger paths are relative to (the repository's top level
//! when inside a git work tree, like git, else the current directory), and resolving
//! repository-relative paths without leaving that root.

use std::path::{Component, Path, PathBuf};

/// The directory ledger paths are relative to.
#[derive(Debug, Clone)]
pub struct Workspace {
    pub root: PathBuf,
    /// True when `root` is the top level of a git work tree.
    pub in_git: bool,
}

/// Why a repository-relative path was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("path is empty")]
    Empty,
    #[error("path is absolute; write it relative to the repository root")]
    Absolute,
    #[error("path contains `..`; write it without leaving the repository")]
    ParentDir,
    #[error(
        "path goes through the symlink `{0}`; fixtures and policy files must be regular files inside the repository"
    )]
    Symlink(String),
}

impl Workspace {
    /// Finds the workspace for `start`: the nearest ancestor holding `.git` (a directory, or a
    /// file as in linked work trees and submodules), else `start` itself.
    pub fn discover(start: &Path) -> std::io::Result<Workspace> {
        let start = std::path::absolute(start)?;
        for dir in start.ancestors() {
            if dir.join(".git").exists() {
                return Ok(Workspace {
                    root: dir.to_path_buf(),
                    in_git: true,
                });
            }
        }
        Ok(Workspace {
            root: start,
            in_git: false,
        })
    }

    /// A plain directory as the workspace, without looking for a repository.
    pub fn at(root: impl Into<PathBuf>) -> Workspace {
        Workspace {
            root: root.into(),
            in_git: false,
        }
    }

    /// Joins a repository-relative path to the root, refusing absolute paths, `..`, and any
    /// symlink on the way (a symlink could point out of the repository, and its content in
    /// git is the link text, not the target's bytes).
    pub fn resolve(&self, rel: &str) -> Result<PathBuf, PathError> {
        let rel_path = check_relative(rel)?;
        let mut path = self.root.clone();
        for component in rel_path.components() {
            path.push(component);
            if let Ok(meta) = std::fs::symlink_metadata(&path)
                && meta.file_type().is_symlink()
            {
                let shown = path.strip_prefix(&self.root).unwrap_or(&path);
                return Err(PathError::Symlink(slash_path(shown)));
            }
        }
        Ok(path)
    }
}

/// Checks that `rel` is a relative path without `..` and returns it as a `Path`.
pub fn check_relative(rel: &str) -> Result<&Path, PathError> {
    if rel.trim().is_empty() {
        return Err(PathError::Empty);
    }
    let path = Path::new(rel);
    if path.is_absolute() || rel.starts_with('/') || rel.starts_with('\\') {
        return Err(PathError::Absolute);
    }
    for component in path.components() {
        match component {
            Component::ParentDir => return Err(PathError::ParentDir),
            Component::Prefix(_) | Component::RootDir => return Err(PathError::Absolute),
            Component::CurDir | Component::Normal(_) => {}
        }
    }
    if rel.split(['/', '\\']).any(|part| part == "..") {
        return Err(PathError::ParentDir);
    }
    Ok(path)
}

/// A path with forward slashes, as ledgers and lockfiles write them.
pub fn slash_path(path: &Path) -> String {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// `rel` without a leading `./` and trailing slashes, with forward slashes.
pub fn normalize_rel(rel: &str) -> String {
    slash_path(Path::new(rel))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_absolute_and_parent_paths() {
        assert_eq!(check_relative("/etc/passwd"), Err(PathError::Absolute));
        assert_eq!(check_relative("a/../../b"), Err(PathError::ParentDir));
        assert_eq!(check_relative(".."), Err(PathError::ParentDir));
        assert_eq!(check_relative("a\\..\\b"), Err(PathError::ParentDir));
        assert_eq!(check_relative(""), Err(PathError::Empty));
        assert!(check_relative("tests/fixtures/a.json").is_ok());
    }

    #[test]
    fn refuses_symlinks_on_the_way() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("real")).unwrap();
        std::fs::write(dir.path().join("real/f"), b"x").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink("/etc", dir.path().join("link")).unwrap();
        let ws = Workspace::at(dir.path());
        assert_eq!(ws.resolve("real/f").unwrap(), dir.path().join("real/f"));
        #[cfg(unix)]
        assert_eq!(
            ws.resolve("link/passwd"),
            Err(PathError::Symlink("link".into()))
        );
    }

    #[test]
    fn normalizes_slashes() {
        assert_eq!(normalize_rel("./tests/properties/"), "tests/properties");
    }
}
