//! Where policy files, property files and fixtures are read from: the working tree (`score`,
//! `lint`) or, for `check` and the hooks, a commit's tree in git. The scoring engine reads
//! through this trait only, so the same rules judge both.

use std::collections::BTreeMap;

use crate::error::InputError;
use crate::evidence::fixtures::FixtureState;
use crate::evidence::fixtures::{HashError, hash_files, list_files};
use crate::workspace::Workspace;

pub trait Source {
    /// Names the source in messages: "working tree", "commit 1a2b3c4".
    fn describe(&self) -> String;

    /// The bytes of the regular file at `rel`, `None` when nothing is there. A symlink or a
    /// path leaving the root is an error.
    fn read(&self, rel: &str) -> Result<Option<Vec<u8>>, InputError>;

    /// Whether `rel` is a directory.
    fn is_dir(&self, rel: &str) -> Result<bool, InputError>;

    /// Every regular file under each of `dirs`, sorted, as repository-relative slash paths.
    /// Symlinks and other non-files are errors.
    fn list_files(&self, dirs: &[String]) -> Result<Vec<String>, InputError>;

    /// The fixture corpus under `dirs`: like `list_files`, but a git tree lists a symlink or
    /// submodule in `not_regular` (a commit put it there: a finding) instead of refusing the
    /// listing. The working tree keeps refusing it: for `guard score` it is input that cannot
    /// be judged.
    fn list_fixtures(&self, dirs: &[String]) -> Result<Listing, InputError> {
        Ok(Listing {
            files: self.list_files(dirs)?,
            not_regular: BTreeMap::new(),
        })
    }

    /// The SHA-256 of each of `rels`, or `Missing` (or, from a git tree, `NotRegular`).
    /// `lockfile` names the file that listed them, for messages.
    fn hash_files(
        &self,
        lockfile: &str,
        rels: &[String],
    ) -> Result<BTreeMap<String, FixtureState>, InputError>;
}

/// What `Source::list_fixtures` found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    /// The regular files, sorted.
    pub files: Vec<String>,
    /// What is there but is not a regular file: path to why.
    pub not_regular: BTreeMap<String, String>,
}

/// The working tree (or a plain directory) under a workspace root.
pub struct WorkTree<'a> {
    pub ws: &'a Workspace,
}

impl Source for WorkTree<'_> {
    fn describe(&self) -> String {
        "working tree".to_string()
    }

    fn read(&self, rel: &str) -> Result<Option<Vec<u8>>, InputError> {
        let path = self
            .ws
            .resolve(rel)
            .map_err(|e| InputError::new(rel, e.to_string()))?;
        match std::fs::read(&path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(InputError::io(rel, &e)),
        }
    }

    fn is_dir(&self, rel: &str) -> Result<bool, InputError> {
        let path = self
            .ws
            .resolve(rel)
            .map_err(|e| InputError::new(rel, e.to_string()))?;
        Ok(path.is_dir())
    }

    fn list_files(&self, dirs: &[String]) -> Result<Vec<String>, InputError> {
        list_files(self.ws, dirs)
    }

    fn hash_files(
        &self,
        lockfile: &str,
        rels: &[String],
    ) -> Result<BTreeMap<String, FixtureState>, InputError> {
        let mut states = BTreeMap::new();
        for (rel, result) in hash_files(self.ws, rels) {
            let state = match result {
                Ok(digest) => FixtureState::Digest(digest),
                Err(HashError::NotFound) => FixtureState::Missing,
                Err(HashError::UnsafePath(e)) => {
                    return Err(InputError::new(lockfile, format!("entry {rel:?}: {e}")));
                }
                Err(HashError::NotAFile) => {
                    return Err(InputError::new(
                        lockfile,
                        format!("entry {rel:?} is not a regular file"),
                    ));
                }
                Err(HashError::Io(e)) => {
                    return Err(InputError::new(&rel, format!("cannot read fixture: {e}")));
                }
            };
            states.insert(rel, state);
        }
        Ok(states)
    }
}
