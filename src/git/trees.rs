//! A range's trees as guard's walks read them: each tree read once (out of a pack by guard's
//! own reader where it can, else through libgit2) and held while the commits that share it
//! are compared, with the entries two versions of a tree can differ in remembered for the
//! pairs compared again.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;

use git2::{ObjectType, Odb, Oid, Repository};

use crate::git::ObjectId;
use crate::git::id::{from_git2, to_git2};
use crate::git::pack::PackObjects;
use crate::git::raw_tree::{RawEntry, RawTree};

/// Trees read lately, by id. Judging a range newest first reads each tree twice in a row:
/// as a commit's, then as its parent's when the parent is judged; and the fsck walk reads
/// again the trees the comparison just read. The second time they are here. (libgit2's own
/// object cache is turned off while a range is judged: keeping every object it reads costs
/// more than it saves.) Trees are read raw and parsed by `RawTree`.
pub struct Trees<'r> {
    repo: &'r Repository,
    odb: Odb<'r>,
    /// Trees read out of the pack files here, the rest through `odb`.
    packs: Readers<'r>,
    held: RefCell<Held>,
    /// `RawTree::differing_indices` of the last pairs of trees (new, old) compared: the rules
    /// that share a directory (four under a busy `tests/`) and the malformed-tree walk
    /// compare the same few pairs for each commit.
    differing: RefCell<Remembered>,
    /// Trees read from the object database (what the walks' shortcuts exist to keep small).
    reads: Cell<usize>,
}

/// The trees held, and the order they came in (the oldest is dropped first).
#[derive(Default)]
struct Held {
    by_id: HashMap<Oid, Rc<RawTree>, super::oid_hash::SeededOidHash>,
    order: VecDeque<Oid>,
}

/// A [`PackObjects`] for the object directories git's environment names, opened when first
/// read (`None` inside: the environment names none).
#[derive(Default)]
pub struct PackReader(RefCell<Option<Option<PackObjects>>>);

impl PackReader {
    fn read(&self, repo: &Repository, id: Oid, kind: ObjectType) -> Option<Rc<[u8]>> {
        let mut packs = self.0.borrow_mut();
        let packs = packs.get_or_insert_with(|| {
            crate::git::env_object_dirs(repo)
                .map(|dirs| PackObjects::open(&dirs, crate::git::hash_len(repo)))
        });
        packs.as_mut()?.read(id, kind)
    }
}

/// The pack reader a [`Trees`] reads through.
enum Readers<'r> {
    Own(Box<PackReader>),
    Lent(&'r PackReader),
}

/// The indices of the entries of two trees that can differ, for each tree.
pub(crate) type Differing = (Vec<usize>, Vec<usize>);

/// The `Differing` of the last pairs of trees (new, old) compared, the oldest dropped first.
#[derive(Default)]
struct Remembered {
    by_pair: HashMap<(Oid, Oid), Rc<Differing>, super::oid_hash::SeededOidHash>,
    order: VecDeque<(Oid, Oid)>,
}

/// Enough for the directories one commit changes (the harness globs walk every one of them),
/// which the protected-path walk, the malformed-tree walk and the changed-files walk each
/// compare (BENCHMARKS.md, "Measured choices", M15).
const REMEMBERED_PAIRS: usize = 32;

/// Enough for every directory a few commits change, both sides, and a merge's parents
/// (a few MiB for the busiest directories of the benchmarks' histories).
const HELD_TREES: usize = 512;

impl<'r> Trees<'r> {
    /// The repository the trees are read from.
    pub fn repo(&self) -> &'r Repository {
        self.repo
    }

    pub fn new(repo: &'r Repository) -> Result<Trees<'r>, git2::Error> {
        Ok(Trees {
            repo,
            odb: repo.odb()?,
            packs: Readers::Own(Box::default()),
            held: RefCell::new(Held::default()),
            differing: RefCell::default(),
            reads: Cell::new(0),
        })
    }

    /// Like [`Trees::new`], reading packs through `packs`, which a thread keeps across the
    /// blocks of commits it walks (its mapped packs and the objects it rebuilt stay).
    pub fn with_packs(
        repo: &'r Repository,
        packs: &'r PackReader,
    ) -> Result<Trees<'r>, git2::Error> {
        let mut trees = Trees::new(repo)?;
        trees.packs = Readers::Lent(packs);
        Ok(trees)
    }

    /// How many trees were read from the object database so far (the unit tests hold the
    /// walks' shortcuts with it).
    #[cfg(test)]
    pub fn reads(&self) -> usize {
        self.reads.get()
    }

    /// The tree `id`.
    pub fn get(&self, id: Oid) -> Result<Rc<RawTree>, git2::Error> {
        let mut held = self.held.borrow_mut();
        if let Some(tree) = held.by_id.get(&id) {
            return Ok(Rc::clone(tree));
        }
        let tree = Rc::new(self.read(id)?);
        self.reads.set(self.reads.get() + 1);
        if held.order.len() == HELD_TREES
            && let Some(oldest) = held.order.pop_front()
        {
            held.by_id.remove(&oldest);
        }
        held.order.push_back(id);
        held.by_id.insert(id, Rc::clone(&tree));
        Ok(tree)
    }

    /// Reads tree `id` out of a pack here when it can, else through libgit2 (which also words
    /// every error).
    fn read(&self, id: Oid) -> Result<RawTree, git2::Error> {
        if let Some(data) = self.packed(id, ObjectType::Tree)
            && let Ok(tree) = RawTree::from_bytes(id, data)
        {
            return Ok(tree);
        }
        RawTree::read(&self.odb, id)
    }

    /// The bytes of the blob `id`, which is the text file `path`: an error, before anything
    /// is read, when its header says it is larger than [`super::MAX_TEXT_BLOB`] (a blob of
    /// zeros compresses to almost nothing in a push and would be inflated whole).
    pub fn text_blob(&self, id: ObjectId, path: &str) -> Result<Vec<u8>, git2::Error> {
        let id = to_git2(id)?;
        // The pack reader reads no object larger than its own bound (16 MiB, under the text
        // limit) and checks the size an entry declares before inflating it; asking libgit2
        // for the header first inflated the start of every delta a second time
        // (BENCHMARKS.md, "Measured choices", M12).
        if let Some(data) = self.packed(id, ObjectType::Blob) {
            if data.len() > super::MAX_TEXT_BLOB {
                return Err(super::too_large(path, data.len(), id));
            }
            return Ok(data.to_vec());
        }
        let (size, _) = self.odb.read_header(id)?;
        if size > super::MAX_TEXT_BLOB {
            return Err(super::too_large(path, size, id));
        }
        crate::git::blob(self.repo, id)
    }

    /// Object `id`, if it is a `kind` the pack reader reads (`PackObjects::read`).
    fn packed(&self, id: Oid, kind: ObjectType) -> Option<Rc<[u8]>> {
        let packs: &PackReader = match &self.packs {
            Readers::Own(packs) => packs,
            Readers::Lent(packs) => packs,
        };
        packs.read(self.repo, id, kind)
    }

    /// The indices of the entries of `new` and of `old` that can differ
    /// (`RawTree::differing_indices`): all of a tree the other side lacks.
    pub(crate) fn differing(&self, new: Option<&RawTree>, old: Option<&RawTree>) -> Rc<Differing> {
        let all = |tree: Option<&RawTree>| (0..tree.map_or(0, RawTree::len)).collect();
        let (Some(new), Some(old)) = (new, old) else {
            return Rc::new((all(new), all(old)));
        };
        let key = (new.id(), old.id());
        let mut memo = self.differing.borrow_mut();
        if let Some(found) = memo.by_pair.get(&key) {
            return Rc::clone(found);
        }
        let found = Rc::new(new.differing_indices(old));
        if memo.order.len() == REMEMBERED_PAIRS
            && let Some(oldest) = memo.order.pop_front()
        {
            memo.by_pair.remove(&oldest);
        }
        memo.order.push_back(key);
        memo.by_pair.insert(key, Rc::clone(&found));
        found
    }

    /// The id of the entry at `path` in the tree `tree`, found as libgit2's lookup by path
    /// finds it; `None` when there is none. A tree along the path that cannot be read is an
    /// error.
    pub fn entry_id(&self, tree: ObjectId, path: &str) -> Result<Option<ObjectId>, git2::Error> {
        let mut tree = self.get(to_git2(tree)?)?;
        let mut names = path.split('/').peekable();
        while let Some(name) = names.next() {
            let Some(entry) = tree.get_name_bytes(name.as_bytes()) else {
                return Ok(None);
            };
            if names.peek().is_none() {
                return Ok(Some(from_git2(entry.id())?));
            }
            if !entry.is_dir() {
                return Ok(None);
            }
            let id = entry.id();
            tree = self.get(id)?;
        }
        Ok(None)
    }

    /// The text (lossily decoded) of the blob at `path` in the tree `tree`; `None` when
    /// nothing is there or it is not a blob.
    pub fn blob_text(&self, tree: ObjectId, path: &str) -> Result<Option<String>, git2::Error> {
        let tree = self.repo.find_tree(to_git2(tree)?)?;
        super::commit::tree_blob_text(self.repo, &tree, path)
    }
}

/// Calls `each` with the entries in which `new` and `old` can differ (`Trees::differing`).
pub(crate) fn for_differing<'t>(
    trees: &Trees,
    new: Option<&'t RawTree>,
    old: Option<&'t RawTree>,
    mut each: impl FnMut(RawEntry<'t>),
) {
    let differing = trees.differing(new, old);
    for (tree, at) in [(new, &differing.0), (old, &differing.1)] {
        for &i in at {
            if let Some(entry) = tree.and_then(|t| t.get(i)) {
                each(entry);
            }
        }
    }
}
