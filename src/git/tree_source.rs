//! A commit's tree as a `Source`, so the scorer judges what a push would merge without a
//! checkout (this works in a bare repository).
//!
//! Every tree read is checked against git's fsck rules once. A malformed tree is read as a
//! checkout writes it (of two same-named entries, the last), and is kept for the caller to
//! report (`malformed`).

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};

use git2::{ObjectType, Oid, Repository, Tree, TreeEntry};

use crate::error::InputError;
use crate::fixtures::hash::sha256_bytes;
use crate::git::fsck::{self, MalformedTree};
use crate::rules::fixtures::FixtureState;
use crate::source::{Listing, Source};
use crate::workspace::check_relative;

const SYMLINK_MODE: i32 = 0o120000;

/// The tree of one commit.
pub struct GitTree<'r> {
    repo: &'r Repository,
    tree: Tree<'r>,
    label: String,
    /// Fixture digests known from the trusted base: path to (blob id, sha256). A fixture whose
    /// blob is unchanged since the base is not hashed again.
    trusted: HashMap<String, (Oid, String)>,
    /// Trees checked against git's fsck rules, and whether each is malformed.
    checked: RefCell<HashMap<Oid, bool>>,
    malformed: RefCell<Vec<MalformedTree>>,
}

/// What is at a path in a tree.
enum Found<'t> {
    Missing,
    File(TreeEntry<'t>),
    Dir(Tree<'t>),
    /// A symlink on the way, or a submodule: why, as the error a reader of it gets.
    NotRegular(InputError),
}

impl<'r> GitTree<'r> {
    pub fn new(
        repo: &'r Repository,
        commit: Oid,
        label: String,
    ) -> Result<GitTree<'r>, git2::Error> {
        let tree = repo.find_commit(commit)?.tree()?;
        Ok(GitTree {
            repo,
            tree,
            label,
            trusted: HashMap::new(),
            checked: RefCell::new(HashMap::new()),
            malformed: RefCell::new(Vec::new()),
        })
    }

    /// The malformed trees read so far (git's fsck rules), at their paths in this commit.
    pub fn malformed(&self) -> Vec<MalformedTree> {
        self.malformed.borrow().clone()
    }

    /// Checks `tree` (at the path `dir()`) once; true when it is malformed.
    fn inspect(&self, tree: &Tree, dir: impl FnOnce() -> String) -> bool {
        if let Some(&bad) = self.checked.borrow().get(&tree.id()) {
            return bad;
        }
        let found = fsck::malformed(tree, &dir());
        let bad = !found.is_empty();
        self.malformed.borrow_mut().extend(found);
        self.checked.borrow_mut().insert(tree.id(), bad);
        bad
    }

    /// The entry `name` of `tree`: for a malformed tree, the last one a checkout writes (a
    /// lookup by name may find another, or none when the entries are out of order).
    fn entry(
        &self,
        tree: &Tree,
        dir: impl FnOnce() -> String,
        name: &str,
    ) -> Option<TreeEntry<'static>> {
        if self.inspect(tree, dir) {
            tree.iter()
                .rev()
                .find(|e| e.name_bytes() == name.as_bytes())
                .map(|e| e.to_owned())
        } else {
            tree.get_name(name).map(|e| e.to_owned())
        }
    }

    /// Trusts `digests` (path to sha256, from the base's lockfile) for the blobs the base
    /// tree `base` holds at those paths.
    pub fn trust(&mut self, base: &GitTree, digests: &BTreeMap<String, String>) {
        for (path, digest) in digests {
            if let Ok(Found::File(entry)) = base.find(path) {
                self.trusted
                    .insert(path.clone(), (entry.id(), digest.clone()));
            }
        }
    }

    pub fn tree(&self) -> &Tree<'r> {
        &self.tree
    }

    fn find(&self, rel: &str) -> Result<Found<'_>, InputError> {
        check_relative(rel).map_err(|e| InputError::new(rel, e.to_string()))?;
        let components: Vec<&str> = rel
            .split('/')
            .filter(|c| !c.is_empty() && *c != ".")
            .collect();
        let mut tree = self.tree.clone();
        for (i, name) in components.iter().enumerate() {
            let dir = || components[..i].join("/");
            let Some(entry) = self.entry(&tree, dir, name) else {
                return Ok(Found::Missing);
            };
            let last = i + 1 == components.len();
            if entry.filemode() == SYMLINK_MODE {
                let shown = components[..=i].join("/");
                return Ok(Found::NotRegular(InputError::new(
                    rel,
                    format!(
                        "goes through the symlink `{shown}` in {}; fixtures and policy files must be regular files",
                        self.label
                    ),
                )));
            }
            match entry.kind() {
                Some(ObjectType::Tree) => {
                    let sub = self
                        .repo
                        .find_tree(entry.id())
                        .map_err(|e| git_error(rel, &e))?;
                    if last {
                        return Ok(Found::Dir(sub));
                    }
                    tree = sub;
                }
                Some(ObjectType::Blob) if last => return Ok(Found::File(entry)),
                Some(ObjectType::Blob) => return Ok(Found::Missing),
                _ if last => {
                    return Ok(Found::NotRegular(InputError::new(
                        rel,
                        format!("is a submodule in {}, not a file", self.label),
                    )));
                }
                _ => {
                    let shown = components[..=i].join("/");
                    return Ok(Found::NotRegular(InputError::new(
                        rel,
                        format!("goes through the submodule `{shown}` in {}", self.label),
                    )));
                }
            }
        }
        Ok(Found::Dir(tree))
    }

    fn blob(&self, rel: &str, entry: &TreeEntry) -> Result<Vec<u8>, InputError> {
        let blob = self
            .repo
            .find_blob(entry.id())
            .map_err(|e| git_error(rel, &e))?;
        Ok(blob.content().to_vec())
    }

    /// Pushes the regular files under `tree` to `out`. A symlink or submodule goes to
    /// `not_regular` when given, else refuses the walk.
    fn walk(
        &self,
        tree: &Tree,
        prefix: &str,
        out: &mut Vec<String>,
        mut not_regular: Option<&mut BTreeMap<String, String>>,
    ) -> Result<(), InputError> {
        // (A malformed tree may list a path twice; `list_files` keeps one, and reading it
        // goes through `find`, which takes the entry a checkout writes.)
        self.inspect(tree, || prefix.to_string());
        for entry in tree.iter() {
            let name = std::str::from_utf8(entry.name_bytes()).map_err(|_| {
                InputError::new(
                    prefix,
                    format!("holds a file name that is not UTF-8 in {}", self.label),
                )
            })?;
            let path = if prefix.is_empty() {
                name.to_string()
            } else {
                format!("{prefix}/{name}")
            };
            let refused = if entry.filemode() == SYMLINK_MODE {
                InputError::new(
                    &path,
                    format!(
                        "is a symlink in {}; fixtures must be regular files (git stores only the link's target text)",
                        self.label
                    ),
                )
            } else {
                match entry.kind() {
                    Some(ObjectType::Tree) => {
                        let sub = self
                            .repo
                            .find_tree(entry.id())
                            .map_err(|e| git_error(&path, &e))?;
                        self.walk(&sub, &path, out, not_regular.as_deref_mut())?;
                        continue;
                    }
                    Some(ObjectType::Blob) => {
                        out.push(path);
                        continue;
                    }
                    _ => InputError::new(
                        &path,
                        format!("is a submodule in {}, not a file", self.label),
                    ),
                }
            };
            match not_regular.as_deref_mut() {
                Some(listed) => {
                    listed.insert(path, refused.message);
                }
                None => return Err(refused),
            }
        }
        Ok(())
    }

    /// The regular files under `dirs`, sorted; see `walk` for `not_regular`.
    fn list(
        &self,
        dirs: &[String],
        mut not_regular: Option<&mut BTreeMap<String, String>>,
    ) -> Result<Vec<String>, InputError> {
        let mut out = Vec::new();
        for dir in dirs {
            let rel = crate::workspace::normalize_rel(dir);
            match self.find(&rel)? {
                Found::Missing => {}
                Found::File(_) => out.push(rel),
                Found::Dir(tree) => self.walk(&tree, &rel, &mut out, not_regular.as_deref_mut())?,
                Found::NotRegular(e) => match not_regular.as_deref_mut() {
                    Some(listed) => {
                        listed.insert(rel, e.message);
                    }
                    None => return Err(e),
                },
            }
        }
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }
}

fn git_error(rel: &str, e: &git2::Error) -> InputError {
    InputError::new(rel, format!("cannot read from git: {}", e.message()))
}

impl Source for GitTree<'_> {
    fn describe(&self) -> String {
        self.label.clone()
    }

    fn read(&self, rel: &str) -> Result<Option<Vec<u8>>, InputError> {
        match self.find(rel)? {
            Found::Missing => Ok(None),
            Found::File(entry) => Ok(Some(self.blob(rel, &entry)?)),
            Found::Dir(_) => Err(InputError::new(
                rel,
                format!("is a directory in {}, not a file", self.label),
            )),
            Found::NotRegular(e) => Err(e),
        }
    }

    fn is_dir(&self, rel: &str) -> Result<bool, InputError> {
        match self.find(rel)? {
            Found::NotRegular(e) => Err(e),
            found => Ok(matches!(found, Found::Dir(_))),
        }
    }

    fn list_files(&self, dirs: &[String]) -> Result<Vec<String>, InputError> {
        self.list(dirs, None)
    }

    fn list_fixtures(&self, dirs: &[String]) -> Result<Listing, InputError> {
        let mut not_regular = BTreeMap::new();
        let files = self.list(dirs, Some(&mut not_regular))?;
        Ok(Listing { files, not_regular })
    }

    fn hash_files(
        &self,
        lockfile: &str,
        rels: &[String],
    ) -> Result<BTreeMap<String, FixtureState>, InputError> {
        let mut states = BTreeMap::new();
        for rel in rels {
            let state = match self
                .find(rel)
                .map_err(|e| InputError::new(lockfile, format!("entry {rel:?}: {}", e.message)))?
            {
                Found::Missing => FixtureState::Missing,
                Found::Dir(_) => {
                    FixtureState::NotRegular(format!("is a directory in {}", self.label))
                }
                Found::NotRegular(e) => FixtureState::NotRegular(e.message),
                Found::File(entry) => match self.trusted.get(rel) {
                    Some((id, digest)) if *id == entry.id() => FixtureState::Digest(digest.clone()),
                    _ => FixtureState::Digest(sha256_bytes(&self.blob(rel, &entry)?)),
                },
            };
            states.insert(rel.clone(), state);
        }
        Ok(states)
    }
}
