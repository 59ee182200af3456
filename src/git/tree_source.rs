//! A commit's tree as a `Source`, so the scorer judges what a push would merge without a
//! checkout (this works in a bare repository). Fixture blobs are hashed on every core, each
//! thread through its own repository handle.
//!
//! Every tree read is checked against git's fsck rules once. A malformed tree is read as a
//! checkout writes it (of two same-named entries, the last), and is kept for the caller to
//! report (`malformed`).

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};

use git2::{ObjectType, Oid, Repository, Tree, TreeEntry};

use crate::error::InputError;
use crate::evidence::fixtures::FixtureState;
use crate::evidence::fixtures::sha256_bytes;
use crate::git::ObjectId;
use crate::git::fsck::{self, MalformedTree};
use crate::git::id::to_git2;
use crate::git::pack::PackBlobs;
use crate::git::raw_tree::RawTree;
use crate::parallel;
use crate::source::{Listing, Source};
use crate::workspace::check_relative;
use sha2::{Digest, Sha256};

const SYMLINK_MODE: i32 = 0o120000;

/// Below this many bytes of blobs to hash, the calling thread reads them through `repo`
/// sooner than threads open pack indexes and handles of their own (about a millisecond of
/// SHA-256).
const PARALLEL_MIN_BYTES: u64 = 1 << 20;

/// The tree of one commit.
pub struct GitTree<'r> {
    repo: &'r Repository,
    tree: Tree<'r>,
    label: String,
    /// Fixture digests known from the trusted base: path to (blob id, sha256). A fixture whose
    /// blob is unchanged since the base is not hashed again.
    trusted: HashMap<String, (Oid, String)>,
    /// Trees checked against git's fsck rules, and whether each is malformed.
    checked: RefCell<HashMap<Oid, bool, crate::git::oid_hash::SeededOidHash>>,
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
        commit: ObjectId,
        label: String,
    ) -> Result<GitTree<'r>, git2::Error> {
        let tree = repo.find_commit(to_git2(commit)?)?.tree()?;
        Ok(GitTree {
            repo,
            tree,
            label,
            trusted: HashMap::new(),
            checked: RefCell::new(HashMap::default()),
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
        let found = fsck::malformed(&RawTree::of(tree), &dir());
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

    /// Whether the entry at `path` (its id and file mode, or its absence) is the same here as
    /// in `other` (`None`: no tree, where nothing is at any path).
    pub fn same_entry(&self, other: Option<&GitTree>, path: &str) -> bool {
        self.entry_at(path) == other.and_then(|o| o.entry_at(path))
    }

    /// The id and file mode of the entry at `path`, as libgit2's lookup by path finds it;
    /// `None` when there is none. (What a checkout reads there is `Source::read`'s answer.)
    fn entry_at(&self, path: &str) -> Option<(Oid, i32)> {
        self.tree
            .get_path(std::path::Path::new(path))
            .ok()
            .map(|e| (e.id(), e.filemode()))
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
        let blob = super::text_blob(self.repo, entry.id(), rel).map_err(|e| git_error(rel, &e))?;
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

/// The SHA-256 of each blob of `ids`, in order. Above [`PARALLEL_MIN_BYTES`], on every core,
/// largest first, each thread streaming blobs out of the packs itself (`PackBlobs`) and
/// reading the others through a handle of its own on the repository. A blob no thread could
/// read is read again through `repo`: only its own error counts.
fn hash_blobs(repo: &Repository, ids: &[Oid]) -> Vec<Result<String, git2::Error>> {
    let mut hashed: Vec<Option<String>> = vec![None; ids.len()];
    // The object headers give the sizes without reading the blobs.
    let sizes: Vec<u64> = match repo.odb() {
        Ok(odb) => ids
            .iter()
            .map(|&id| odb.read_header(id).map_or(0, |(size, _)| size as u64))
            .collect(),
        Err(_) => vec![0; ids.len()],
    };
    if sizes.iter().sum::<u64>() >= PARALLEL_MIN_BYTES
        && let Some(dirs) = crate::git::env_object_dirs(repo)
    {
        let mut order: Vec<usize> = (0..ids.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(sizes[i]));
        let git_dir = repo.path().to_path_buf();
        let hash_len = crate::git::hash_len(repo);
        let done = parallel::each(
            order.len(),
            parallel::cores(),
            || {
                Some((
                    PackBlobs::open(&dirs, hash_len),
                    None::<Option<crate::git::Repository>>,
                ))
            },
            |(packs, handle), k| {
                let i = order[k];
                let mut hasher = Sha256::new();
                if packs.stream(ids[i], sizes[i], |piece| hasher.update(piece)) {
                    return Some(hex::encode(hasher.finalize()));
                }
                let handle = handle.get_or_insert_with(|| crate::git::reopen(&git_dir));
                hash_blob(handle.as_ref()?, ids[i]).ok()
            },
        );
        for (k, digest) in done.into_iter().enumerate() {
            hashed[order[k]] = digest.flatten();
        }
    }
    hashed
        .into_iter()
        .zip(ids)
        .map(|(digest, &id)| match digest {
            Some(d) => Ok(d),
            None => hash_blob(repo, id),
        })
        .collect()
}

fn hash_blob(repo: &Repository, id: Oid) -> Result<String, git2::Error> {
    Ok(sha256_bytes(repo.find_blob(id)?.content()))
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
        // The blobs to hash, each once, whatever number of paths hold it.
        let mut blobs: Vec<Oid> = Vec::new();
        let mut blob_paths: Vec<(String, usize)> = Vec::new();
        let mut blob_index: HashMap<Oid, usize, crate::git::oid_hash::SeededOidHash> =
            HashMap::default();
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
                    _ => {
                        let k = *blob_index.entry(entry.id()).or_insert_with(|| {
                            blobs.push(entry.id());
                            blobs.len() - 1
                        });
                        blob_paths.push((rel.clone(), k));
                        continue;
                    }
                },
            };
            states.insert(rel.clone(), state);
        }
        let digests = hash_blobs(self.repo, &blobs);
        for (rel, k) in blob_paths {
            let digest = digests[k].as_ref().map_err(|e| git_error(&rel, e))?;
            states.insert(rel, FixtureState::Digest(digest.clone()));
        }
        Ok(states)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};
    use std::process::Command;

    fn git(dir: &std::path::Path) -> Command {
        let mut cmd = Command::new("git");
        cmd.current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null");
        cmd
    }

    #[test]
    fn blobs_hashed_on_every_core_come_back_in_order() {
        let t = tempfile::tempdir().unwrap();
        assert!(
            git(t.path())
                .args(["init", "-q"])
                .status()
                .unwrap()
                .success()
        );
        // 40 blobs of 16 to 56 KiB (1.4 MiB: past the size hashed in parallel), written by
        // git; the first again at the end, and an id the repository does not hold.
        let mut contents: Vec<Vec<u8>> = (0..40u32)
            .map(|i| (0..(16 + i) * 1024).map(|j| (j * 7 + i) as u8).collect())
            .collect();
        contents.push(contents[0].clone());
        let mut ids = Vec::new();
        for bytes in &contents {
            let file = t.path().join("blob");
            std::fs::write(&file, bytes).unwrap();
            let out = git(t.path())
                .args(["hash-object", "-w", "blob"])
                .output()
                .unwrap();
            ids.push(crate::git::test_oid(String::from_utf8_lossy(&out.stdout).trim()).unwrap());
        }
        let missing = Oid::from_bytes(&[0x5a; 32][..crate::git::test_hash_len()]).unwrap();
        ids.insert(7, missing);
        contents.insert(7, Vec::new());
        let repo = Repository::open(t.path()).unwrap();
        let got = hash_blobs(&repo, &ids);
        assert_eq!(got.len(), ids.len());
        for (k, (digest, bytes)) in got.iter().zip(&contents).enumerate() {
            if k == 7 {
                assert!(digest.is_err(), "a blob the repository lacks has no digest");
            } else {
                assert_eq!(
                    digest.as_deref().unwrap(),
                    hex::encode(Sha256::digest(bytes))
                );
            }
        }
        assert!(hash_blobs(&repo, &[]).is_empty());
    }
}
