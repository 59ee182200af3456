//! git's commit-graph files, read directly. A commit-graph holds each commit's tree, parents
//! and generation number (its topological level), so a walk needs to inflate no commit object.
//! libgit2 1.9 has its own reader but refuses the files git 2.31 and later write (it does not
//! know their generation-data chunks) and then inflates every commit it walks.
//!
//! Format: git's `Documentation/gitformat-commit-graph.txt`. Both forms are read: one file
//! (`objects/info/commit-graph`, what `git gc` writes) and a chain of layers
//! (`objects/info/commit-graphs/`, what `git maintenance` and `fetch.writeCommitGraph`
//! write), for SHA-1 and SHA-256 repositories (a graph whose hash version is not the
//! repository's is not used). What a commit-graph says about a commit is determined
//! by the commit's id (its tree and parents are hashed into the id), so a stale graph is never
//! wrong, only incomplete: commits it lacks are read from the object database by the caller.
//! A malformed file is not used at all.

use std::fs::File;
use std::path::{Path, PathBuf};

use git2::Oid;
use memmap2::Mmap;

/// What a commit's data holds after its tree id: two parent words, generation and time.
const DATA_AFTER_TREE: usize = 16;
const NO_PARENT: u32 = 0x7000_0000;
const EXTRA_EDGES: u32 = 0x8000_0000;

/// One commit as the graph records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphCommit {
    pub tree: Oid,
    /// Positions of the parents in the graph, in the commit's order.
    pub parents: Vec<u32>,
    /// The topological level: 1 for a root commit, else one more than its highest parent's.
    /// 0 in graphs written by git before 2.18 (then the graph is of no use for ordering).
    pub generation: u32,
}

/// The commit-graph of a repository: one file, or the layers of a chain (base first).
pub struct CommitGraph {
    layers: Vec<Layer>,
    /// The length of the ids it holds: 20 (SHA-1) or 32 (SHA-256).
    hash_len: usize,
}

struct Layer {
    map: Mmap,
    hash_len: usize,
    /// Commits in the layers below this one: its positions start here.
    base: u32,
    count: u32,
    fanout: usize,
    lookup: usize,
    data: usize,
    /// Offset and length of the extra-edge list (parents of octopus merges).
    edges: (usize, usize),
}

impl CommitGraph {
    /// The commit-graph of the first of `objects_dirs` that has a usable one, as git looks for
    /// it: the single file first, else the chain. `hash_len` is the length of the
    /// repository's ids (20 or 32): a graph of the other format is not usable. `None` when
    /// there is none, or it is malformed.
    pub fn open(objects_dirs: &[PathBuf], hash_len: usize) -> Option<CommitGraph> {
        objects_dirs.iter().find_map(|dir| {
            let info = dir.join("info");
            Self::open_file(&info.join("commit-graph"), hash_len)
                .or_else(|| Self::open_chain(&info, hash_len))
        })
    }

    fn open_file(path: &Path, hash_len: usize) -> Option<CommitGraph> {
        let layer = Layer::open(path, hash_len, 0, 0)?;
        Some(CommitGraph {
            layers: vec![layer],
            hash_len,
        })
    }

    fn open_chain(info: &Path, hash_len: usize) -> Option<CommitGraph> {
        let dir = info.join("commit-graphs");
        let chain = std::fs::read_to_string(dir.join("commit-graph-chain")).ok()?;
        let mut layers: Vec<Layer> = Vec::new();
        let mut base = 0u32;
        for hash in chain.lines().map(str::trim).filter(|l| !l.is_empty()) {
            if hash.len() != 2 * hash_len || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            let path = dir.join(format!("graph-{hash}.graph"));
            let layer = Layer::open(&path, hash_len, layers.len(), base)?;
            base = base.checked_add(layer.count)?;
            layers.push(layer);
        }
        (!layers.is_empty()).then_some(CommitGraph { layers, hash_len })
    }

    /// How many commits the graph holds.
    pub fn len(&self) -> u32 {
        self.layers.last().map_or(0, |l| l.base + l.count)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The position of commit `id`, if the graph has it.
    pub fn find(&self, id: Oid) -> Option<u32> {
        if id.as_bytes().len() != self.hash_len {
            return None;
        }
        self.layers.iter().rev().find_map(|l| l.find(id.as_bytes()))
    }

    /// The id of the commit at `pos`.
    pub fn id(&self, pos: u32) -> Option<Oid> {
        let (layer, i) = self.locate(pos)?;
        let n = self.hash_len;
        let at = layer.lookup + i * n;
        Oid::from_bytes(&layer.map[at..at + n]).ok()
    }

    /// The commit at `pos`; `None` if the file contradicts itself (a parent out of range).
    pub fn commit(&self, pos: u32) -> Option<GraphCommit> {
        let (_, tree, generation) = self.identity(pos)?;
        let mut parents = Vec::new();
        self.parents(pos, &mut parents)?;
        Some(GraphCommit {
            tree,
            parents,
            generation,
        })
    }

    /// The id, tree and generation of the commit at `pos`.
    pub fn identity(&self, pos: u32) -> Option<(Oid, Oid, u32)> {
        let (layer, i) = self.locate(pos)?;
        let (m, n) = (&layer.map[..], self.hash_len);
        let at = layer.lookup + i * n;
        let id = Oid::from_bytes(&m[at..at + n]).ok()?;
        let at = layer.data + i * (n + DATA_AFTER_TREE);
        let tree = Oid::from_bytes(&m[at..at + n]).ok()?;
        let generation = be32(m, at + n + 8) >> 2;
        Some((id, tree, generation))
    }

    /// The parents' positions of the commit at `pos`, into `parents` (cleared first); `None`
    /// if the file contradicts itself (a parent out of range).
    pub fn parents(&self, pos: u32, parents: &mut Vec<u32>) -> Option<()> {
        parents.clear();
        let (layer, i) = self.locate(pos)?;
        let (m, n) = (&layer.map[..], self.hash_len);
        let at = layer.data + i * (n + DATA_AFTER_TREE) + n;
        let first = be32(m, at);
        let second = be32(m, at + 4);
        if first != NO_PARENT {
            parents.push(first);
            if second & EXTRA_EDGES != 0 {
                // An octopus merge: its second and later parents are in the extra-edge list,
                // the last one marked with the high bit.
                let (start, len) = layer.edges;
                let mut e = (second & !EXTRA_EDGES) as usize;
                loop {
                    if (e + 1) * 4 > len {
                        return None;
                    }
                    let word = be32(m, start + e * 4);
                    parents.push(word & !EXTRA_EDGES);
                    if word & EXTRA_EDGES != 0 {
                        break;
                    }
                    e += 1;
                }
            } else if second != NO_PARENT {
                parents.push(second);
            }
        } else if second != NO_PARENT {
            return None;
        }
        if parents.iter().any(|&p| p >= self.len()) {
            return None;
        }
        Some(())
    }

    /// Where the commit data of a one-file graph starts (for tests that damage it).
    #[cfg(test)]
    pub(crate) fn data_offset(&self) -> usize {
        self.layers[0].data
    }

    fn locate(&self, pos: u32) -> Option<(&Layer, usize)> {
        let layer = self
            .layers
            .iter()
            .find(|l| pos >= l.base && pos - l.base < l.count)?;
        Some((layer, (pos - layer.base) as usize))
    }
}

fn be32(m: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([m[at], m[at + 1], m[at + 2], m[at + 3]])
}

impl Layer {
    /// Maps and checks one graph file of `hash_len`-byte ids; `bases` is how many layers lie
    /// below it.
    fn open(path: &Path, hash_len: usize, bases: usize, base: u32) -> Option<Layer> {
        let file = File::open(path).ok()?;
        // SAFETY: the map is read-only and private. git never rewrites a commit-graph file in
        // place: it writes a new file and renames it over the old one, so the mapped file stays
        // as it was (git itself reads these files through mmap).
        let map = unsafe { Mmap::map(&file) }.ok()?;
        Self::from_map(map, hash_len, bases, base)
    }

    /// Checks the graph file mapped at `map` (what `open` does once the file is mapped).
    fn from_map(map: Mmap, hash_len: usize, bases: usize, base: u32) -> Option<Layer> {
        let m = &map[..];
        // Header: signature, version 1, hash version (1 SHA-1, 2 SHA-256), chunk count,
        // base-graph count.
        let hash_version = match hash_len {
            20 => 1,
            32 => 2,
            _ => return None,
        };
        if m.len() < 8 + 12 + hash_len || &m[0..4] != b"CGPH" || m[4] != 1 || m[5] != hash_version {
            return None;
        }
        if m[7] as usize != bases {
            return None;
        }
        let chunks = m[6] as usize;
        let table_end = 8 + (chunks + 1) * 12;
        let end = m.len() - hash_len;
        if table_end > end {
            return None;
        }
        let (mut fanout, mut lookup, mut data, mut edges) = (None, None, None, (0, 0));
        for c in 0..chunks {
            let at = 8 + c * 12;
            let start =
                usize::try_from(u64::from_be_bytes(m[at + 4..at + 12].try_into().ok()?)).ok()?;
            let next =
                usize::try_from(u64::from_be_bytes(m[at + 16..at + 24].try_into().ok()?)).ok()?;
            if start < table_end || next < start || next > end {
                return None;
            }
            let span = (start, next - start);
            match &m[at..at + 4] {
                b"OIDF" => fanout = Some(span),
                b"OIDL" => lookup = Some(span),
                b"CDAT" => data = Some(span),
                b"EDGE" => edges = span,
                _ => {} // generation data, Bloom filters, base graphs: not needed here
            }
        }
        let (fanout, fanout_len) = fanout?;
        let (lookup, lookup_len) = lookup?;
        let (data, data_len) = data?;
        if fanout_len != 256 * 4 {
            return None;
        }
        let count = be32(m, fanout + 255 * 4);
        let n = count as usize;
        let data_len_each = hash_len + DATA_AFTER_TREE;
        if lookup_len != n * hash_len || data_len != n * data_len_each || edges.1 % 4 != 0 {
            return None;
        }
        if (1..256).any(|b| be32(m, fanout + (b - 1) * 4) > be32(m, fanout + b * 4)) {
            return None;
        }
        base.checked_add(count)?;
        Some(Layer {
            map,
            hash_len,
            base,
            count,
            fanout,
            lookup,
            data,
            edges,
        })
    }

    /// The global position of `id` in this layer.
    fn find(&self, id: &[u8]) -> Option<u32> {
        let m = &self.map[..];
        let first = id[0] as usize;
        let mut lo = if first == 0 {
            0
        } else {
            be32(m, self.fanout + (first - 1) * 4) as usize
        };
        let mut hi = be32(m, self.fanout + first * 4) as usize;
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let at = self.lookup + mid * self.hash_len;
            match m[at..at + self.hash_len].cmp(id) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(self.base + mid as u32),
            }
        }
        None
    }
}

/// The commit-graph reader from bytes, for the fuzz targets (`fuzz/`), not for other code.
#[doc(hidden)]
pub mod fuzzing {
    use memmap2::MmapMut;

    use super::{CommitGraph, Layer};

    /// The commit-graph of one file holding `bytes` (`objects/info/commit-graph`), read as
    /// [`CommitGraph::open`] reads that file, from an anonymous map instead of the file's.
    pub fn commit_graph(bytes: &[u8], hash_len: usize) -> Option<CommitGraph> {
        let mut map = MmapMut::map_anon(bytes.len()).ok()?;
        map.copy_from_slice(bytes);
        let layer = Layer::from_map(map.make_read_only().ok()?, hash_len, 0, 0)?;
        Some(CommitGraph {
            layers: vec![layer],
            hash_len,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::git::test_git as git;

    /// A history with a merge and an octopus merge (three parents).
    fn repo() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        git(d, &["init", "-q", "-b", "main"]);
        let commit = |name: &str| {
            std::fs::write(d.join(name), name).unwrap();
            git(d, &["add", name]);
            git(d, &["commit", "-q", "-m", name]);
        };
        commit("a");
        for b in ["x", "y", "z"] {
            git(d, &["checkout", "-q", "-b", b, "main"]);
            commit(b);
        }
        git(d, &["checkout", "-q", "main"]);
        commit("b");
        git(d, &["merge", "-q", "--no-edit", "x"]);
        git(d, &["merge", "-q", "--no-edit", "y", "z"]);
        commit("c");
        t
    }

    /// Every commit's tree, parents and generation as the graph gives them, beside libgit2's.
    fn check_against_libgit2(dir: &Path, graph: &CommitGraph) {
        let repo = git2::Repository::open(dir).unwrap();
        let mut walk = repo.revwalk().unwrap();
        walk.push_glob("heads").unwrap();
        let mut levels = std::collections::HashMap::new();
        walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::REVERSE)
            .unwrap();
        let mut seen = 0;
        for id in walk {
            let id = id.unwrap();
            let c = repo.find_commit(id).unwrap();
            let pos = graph.find(id).expect("every commit is in the graph");
            assert_eq!(graph.id(pos), Some(id));
            let g = graph.commit(pos).unwrap();
            assert_eq!(g.tree, c.tree_id());
            let parents: Vec<Oid> = g.parents.iter().map(|&p| graph.id(p).unwrap()).collect();
            assert_eq!(parents, c.parent_ids().collect::<Vec<_>>());
            let level = 1 + parents.iter().map(|p| levels[p]).max().unwrap_or(0);
            assert_eq!(g.generation, level);
            levels.insert(id, level);
            seen += 1;
        }
        assert_eq!(seen, graph.len());
        assert!(
            graph
                .find(Oid::from_str(&"1".repeat(40)).unwrap())
                .is_none()
        );
    }

    #[test]
    fn one_file_as_git_gc_writes_it() {
        let t = repo();
        git(t.path(), &["commit-graph", "write", "--reachable"]);
        let graph = CommitGraph::open(
            &[t.path().join(".git/objects")],
            crate::git::test_hash_len(),
        )
        .unwrap();
        assert_eq!(graph.layers.len(), 1);
        assert_eq!(graph.len(), 8);
        check_against_libgit2(t.path(), &graph);
        // The fuzz target's graph, from the file's bytes, reads as the file.
        let bytes = std::fs::read(t.path().join(".git/objects/info/commit-graph")).unwrap();
        let graph = fuzzing::commit_graph(&bytes, crate::git::test_hash_len()).unwrap();
        check_against_libgit2(t.path(), &graph);
    }

    #[test]
    fn split_chain_as_git_maintenance_writes_it() {
        let t = repo();
        let d = t.path();
        git(
            d,
            &["commit-graph", "write", "--reachable", "--split=no-merge"],
        );
        std::fs::write(d.join("d"), "d").unwrap();
        git(d, &["add", "d"]);
        git(d, &["commit", "-q", "-m", "d"]);
        git(d, &["merge", "-q", "--no-edit", "x"]);
        git(
            d,
            &["commit-graph", "write", "--reachable", "--split=no-merge"],
        );
        let graph =
            CommitGraph::open(&[d.join(".git/objects")], crate::git::test_hash_len()).unwrap();
        assert_eq!(graph.layers.len(), 2);
        assert_eq!(graph.len(), 9);
        check_against_libgit2(d, &graph);
    }

    #[test]
    fn missing_or_malformed_graphs_are_not_used() {
        let t = repo();
        let objects = t.path().join(".git/objects");
        assert!(
            CommitGraph::open(std::slice::from_ref(&objects), crate::git::test_hash_len())
                .is_none()
        );
        git(t.path(), &["commit-graph", "write", "--reachable"]);
        let path = objects.join("info/commit-graph");
        let good = std::fs::read(&path).unwrap();
        // The hash version byte (5) of the other object format is no graph of this repository.
        let other_format = if crate::git::test_hash_len() == 20 {
            2
        } else {
            1
        };
        for (at, byte) in [(0, b'X'), (4, 2), (5, other_format), (7, 1), (6, 40)] {
            let mut bad = good.clone();
            bad[at] = byte;
            std::fs::remove_file(&path).unwrap();
            std::fs::write(&path, &bad).unwrap();
            assert!(
                CommitGraph::open(std::slice::from_ref(&objects), crate::git::test_hash_len())
                    .is_none(),
                "byte {at}"
            );
        }
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, &good[..good.len() / 2]).unwrap();
        assert!(CommitGraph::open(&[objects], crate::git::test_hash_len()).is_none());
    }
}
