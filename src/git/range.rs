//! Which commits a range brings: `A..B`, `A...B` (B's commits since the merge base), a single
//! commit, or the default `@{upstream}..HEAD`; and the base revision whose policy applies.
//!
//! The walk reads the repository's commit-graph when it has one, so that no commit object is
//! inflated just to be walked: commits are taken in generation order, which makes the set
//! exact (every commit reachable from the tip and from none of the hidden commits) without
//! relying on commit dates. Commits the graph lacks (new pushes, in quarantine) are read from
//! the object database. Without a usable graph, `DateWalk` walks as libgit2's revision walk
//! does (by commit dates), reading each commit's header once; libgit2's walk itself takes
//! over at a commit whose header is not as git writes it.

use std::collections::{BinaryHeap, HashMap, HashSet};
use std::path::PathBuf;

use anyhow::{Context as _, anyhow};
use git2::{Oid, Repository, RevparseMode, Sort};

use super::date_walk::{self, DateWalk};
use super::graph::CommitGraph;
use super::id::{NotAnId, from_git2, to_git2};
use super::oid_hash::OidHash;
use super::walk_order::topological;
use super::{ObjectId, hash_len};

/// A resolved range: judge the commits reachable from `tip` and not from `base`.
#[derive(Debug, Clone)]
pub struct Range {
    /// The revision the policy is read from; `None` when the range starts at a root commit.
    pub base: Option<ObjectId>,
    pub tip: ObjectId,
    /// The range as the user wrote it (or the default).
    pub spec: String,
}

/// Resolves `spec` (`None`: the current branch's upstream to HEAD).
pub fn resolve(repo: &Repository, spec: Option<&str>) -> anyhow::Result<Range> {
    let spec_text = spec.unwrap_or("@{upstream}..HEAD");
    let revspec = repo.revparse(spec_text).map_err(|e| {
        if spec.is_none() {
            anyhow!(
                "the current branch has no upstream ({}); pass a range such as origin/main..HEAD",
                e.message()
            )
        } else {
            anyhow!("cannot resolve range {spec_text:?}: {}", e.message())
        }
    })?;
    let peel = |o: Option<&git2::Object>, what: &str| -> anyhow::Result<Oid> {
        let o = o.ok_or_else(|| anyhow!("range {spec_text:?} has no {what} revision"))?;
        Ok(o.peel_to_commit()
            .with_context(|| format!("{what} of {spec_text:?} is not a commit"))?
            .id())
    };
    let mode = revspec.mode();
    let (base, tip) = if mode.contains(RevparseMode::MERGE_BASE) {
        let a = peel(revspec.from(), "start")?;
        let b = peel(revspec.to(), "end")?;
        let base = repo
            .merge_base(a, b)
            .with_context(|| format!("{spec_text:?}: the two sides have no merge base"))?;
        (Some(base), b)
    } else if mode.contains(RevparseMode::RANGE) {
        (
            Some(peel(revspec.from(), "start")?),
            peel(revspec.to(), "end")?,
        )
    } else {
        // A single commit: that commit alone, judged by its first parent's policy.
        let tip = peel(revspec.from(), "single")?;
        let commit = repo.find_commit(tip)?;
        (commit.parent_id(0).ok(), tip)
    };
    Ok(Range {
        base: base.map(from_git2).transpose()?,
        tip: from_git2(tip)?,
        spec: spec_text.to_string(),
    })
}

/// A commit's tree and parents, read from its object (without a commit-graph).
#[derive(Debug, Clone, PartialEq, Eq)]
struct CommitInfo {
    tree: Oid,
    parents: Vec<Oid>,
}

/// A parent of a commit of a range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parent {
    /// The commit at this index of the range (always before its child).
    Range(usize),
    /// A commit outside the range: reachable from a hidden commit.
    Outside(ObjectId),
}

/// A commit the walk took while listing: its id, its tree and its parents' trees, in order.
pub struct Taken<'a> {
    pub id: ObjectId,
    pub tree: ObjectId,
    pub parent_trees: &'a [ObjectId],
}

/// The commits of a range, oldest first, each with its tree and its parents' trees.
pub struct Commits {
    ids: Vec<ObjectId>,
    /// Per commit: its tree, then its parents' trees, in order (`spans` delimits them).
    trees: Vec<ObjectId>,
    spans: Vec<u32>,
    /// Per commit, its parents in order: commit `k`'s start at `spans[k] - k` (every commit
    /// has one tree slot of its own before its parents').
    parents: Vec<Parent>,
    /// The commits the range was hidden by (its base).
    hidden: Vec<ObjectId>,
}

impl Commits {
    pub fn ids(&self) -> &[ObjectId] {
        &self.ids
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The tree of the `k`-th commit and the trees of its parents.
    pub fn trees(&self, k: usize) -> (ObjectId, &[ObjectId]) {
        let (start, end) = (self.spans[k] as usize, self.spans[k + 1] as usize);
        (self.trees[start], &self.trees[start + 1..end])
    }

    /// The parents of the `k`-th commit, in order.
    pub fn parents(&self, k: usize) -> &[Parent] {
        let (start, end) = (
            self.spans[k] as usize - k,
            self.spans[k + 1] as usize - k - 1,
        );
        &self.parents[start..end]
    }

    /// The ids of the `k`-th commit's parents, in order.
    pub fn parent_ids(&self, k: usize) -> Vec<ObjectId> {
        self.parents(k)
            .iter()
            .map(|&p| match p {
                Parent::Range(i) => self.ids[i],
                Parent::Outside(id) => id,
            })
            .collect()
    }

    /// Whether a commit of the range has `id`, a commit outside it, as a parent (so that `id`
    /// is an ancestor of the range's tips).
    pub fn has_parent_outside(&self, id: ObjectId) -> bool {
        self.parents.contains(&Parent::Outside(id))
    }

    /// The commits the range was hidden by: every commit outside the range that a commit of
    /// the range reaches is reachable from one of them.
    pub fn hidden(&self) -> &[ObjectId] {
        &self.hidden
    }

    fn new(
        ids: Vec<Oid>,
        hidden: &[Oid],
        mut info: impl FnMut(Oid) -> Result<CommitInfo, git2::Error>,
    ) -> Result<Commits, git2::Error> {
        let at: HashMap<Oid, usize, OidHash> =
            ids.iter().enumerate().map(|(k, &id)| (id, k)).collect();
        let mut trees = Vec::with_capacity(ids.len() * 2);
        let mut spans = Vec::with_capacity(ids.len() + 1);
        let mut parents = Vec::with_capacity(ids.len());
        spans.push(0);
        for &id in &ids {
            let commit = info(id)?;
            trees.push(from_git2(commit.tree)?);
            for p in commit.parents {
                trees.push(from_git2(info(p)?.tree)?);
                parents.push(match at.get(&p) {
                    Some(&k) => Parent::Range(k),
                    None => Parent::Outside(from_git2(p)?),
                });
            }
            let end =
                u32::try_from(trees.len()).map_err(|_| git2::Error::from_str("range too long"))?;
            spans.push(end);
        }
        Ok(Commits {
            ids: ours(&ids)?,
            trees,
            spans,
            parents,
            hidden: ours(hidden)?,
        })
    }
}

fn read_info(repo: &Repository, id: Oid) -> Result<CommitInfo, git2::Error> {
    let commit = repo.find_commit(id)?;
    Ok(CommitInfo {
        tree: commit.tree_id(),
        parents: commit.parent_ids().collect(),
    })
}

/// libgit2's ids as guard's.
fn ours(ids: &[Oid]) -> Result<Vec<ObjectId>, NotAnId> {
    ids.iter().map(|&id| from_git2(id)).collect()
}

/// The commits reachable from `tip` but not from any of `hide`, oldest first, in the
/// topological order libgit2's revision walk gives (`TOPOLOGICAL | REVERSE`).
pub fn commits(repo: &Repository, tip: ObjectId, hide: &[ObjectId]) -> anyhow::Result<Commits> {
    commits_watched(repo, tip, hide, &mut |_| {})
}

/// `commits`, telling `watch` of commits while they are listed, where that is slow enough to
/// be worth overlapping: when `DateWalk` lists the range (no commit-graph, or one that
/// cannot order the walk), each commit it takes (see `DateWalk::range_watched`). Some may not
/// be in the range in the end, and when the walk gives up at an odd commit, libgit2 lists the
/// range after `watch` heard of the commits taken before it; a commit's trees are as its
/// object names them. When the graph is walked, `watch` hears nothing.
pub fn commits_watched(
    repo: &Repository,
    tip: ObjectId,
    hide: &[ObjectId],
    watch: &mut dyn FnMut(Taken),
) -> anyhow::Result<Commits> {
    let tip = to_git2(tip)?;
    let hide = hide
        .iter()
        .map(|&h| to_git2(h))
        .collect::<Result<Vec<Oid>, _>>()?;
    let hide = hide.as_slice();
    if let Some(graph) = CommitGraph::open(&objects_dirs(repo), hash_len(repo)) {
        let mut walk = GraphWalk::new(repo, &graph);
        match walk.run(tip, hide) {
            Ok(found) => return Ok(walk.commits(&found, hide)?),
            // A graph whose generation numbers cannot order the walk (written by git before
            // 2.18, or inconsistent): walk without it.
            Err(WalkError::Unordered) => {}
            Err(WalkError::Git(e)) => {
                return Err(anyhow::Error::new(e).context("walking the commit graph"));
            }
        }
    }
    // Without a graph, libgit2's walk over headers read once; libgit2's own walk when that
    // one gives up at an object it does not read.
    if let Some(commits) = super::without_object_cache(|| date_walk(repo, tip, hide, watch)) {
        return Ok(commits);
    }
    // libgit2's walk parses every commit it meets through its object cache, and each
    // commit's tree and parents are read once more below: from that cache, as far as it holds
    // them (`bound_libgit2_memory` caps it; at the cap a long range reads some again).
    let mut walk = repo.revwalk()?;
    walk.set_sorting(Sort::TOPOLOGICAL | Sort::REVERSE)?;
    walk.push(tip)?;
    for &h in hide {
        walk.hide(h)?;
    }
    let mut ids = Vec::new();
    for id in walk {
        ids.push(id.context("walking the commit graph")?);
    }
    // Each commit is read once here (a parent is usually the commit before it).
    let mut read: HashMap<Oid, CommitInfo, OidHash> = HashMap::default();
    Commits::new(ids, hide, |id| {
        if let Some(info) = read.get(&id) {
            return Ok(info.clone());
        }
        let info = read_info(repo, id)?;
        read.insert(id, info.clone());
        Ok(info)
    })
    .map_err(Into::into)
}

/// The range by `DateWalk`, or `None` when it gave up.
fn date_walk(
    repo: &Repository,
    tip: Oid,
    hide: &[Oid],
    watch: &mut dyn FnMut(Taken),
) -> Option<Commits> {
    let mut walk = DateWalk::new(repo).ok()?;
    // `watch` hears of a commit in guard's ids; one that does not convert is not heard of
    // (it could not be judged either: `Commits::new` refuses it).
    let mut parent_trees = Vec::new();
    let mut heard = |taken: date_walk::Taken| {
        let Ok(id) = from_git2(taken.id) else { return };
        let Ok(tree) = from_git2(taken.tree) else {
            return;
        };
        parent_trees.clear();
        for &t in taken.parent_trees {
            let Ok(t) = from_git2(t) else { return };
            parent_trees.push(t);
        }
        watch(Taken {
            id,
            tree,
            parent_trees: &parent_trees,
        });
    };
    let ids = walk.range_watched(tip, hide, &mut heard).ok()?;
    Commits::new(ids, hide, |id| {
        let (tree, parents) = walk
            .header(id)
            .ok_or_else(|| git2::Error::from_str("a commit the walk did not read"))?;
        Ok(CommitInfo {
            tree,
            parents: parents.collect(),
        })
    })
    .ok()
}

/// Which of `candidates` are reachable from `from` (are `from` or one of its ancestors). One
/// walk answers for all of them: a push of thousands of refs at commits the default branch
/// already holds costs one walk, not one per ref. With a commit-graph the answer is exact.
/// Without one, the walk (libgit2's, or `DateWalk` doing as it does) stops by commit dates,
/// and when those lie it may miss a
/// reachable candidate; it never names one that is not reachable (a commit is hidden only by
/// a walk down from `from`), so a caller that takes the slow road for the others stays right.
pub(crate) fn reachable_from(
    repo: &Repository,
    from: Oid,
    candidates: &[Oid],
) -> anyhow::Result<HashSet<Oid, OidHash>> {
    if candidates.is_empty() {
        return Ok(HashSet::default());
    }
    // The commits reachable from a candidate and not from `from`: every candidate outside
    // that set is reachable from `from`.
    let mut outside: HashSet<Oid, OidHash> = HashSet::default();
    let mut walked = false;
    if let Some(graph) = CommitGraph::open(&objects_dirs(repo), hash_len(repo)) {
        let mut walk = GraphWalk::new(repo, &graph);
        match walk.run_many(candidates, &[from]) {
            Ok(found) => {
                outside.extend(found.iter().map(|&i| walk.nodes[i].id));
                walked = true;
            }
            Err(WalkError::Unordered) => {}
            Err(WalkError::Git(e)) => {
                return Err(anyhow::Error::new(e).context("walking the commit graph"));
            }
        }
    }
    if !walked {
        let by_dates = super::without_object_cache(|| {
            DateWalk::new(repo)
                .ok()?
                .reachable(candidates, &[from])
                .ok()
        });
        if let Some(found) = by_dates {
            outside.extend(found);
            walked = true;
        }
    }
    if !walked {
        let mut walk = repo.revwalk()?;
        for &c in candidates {
            walk.push(c)?;
        }
        walk.hide(from)?;
        for id in walk {
            outside.insert(id.context("walking the commit graph")?);
        }
    }
    Ok(candidates
        .iter()
        .copied()
        .filter(|c| !outside.contains(c))
        .collect())
}

/// Where git would look for a commit-graph: the object directory the environment names (a
/// hook's quarantine has none), then the repository's own.
fn objects_dirs(repo: &Repository) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(dir) = std::env::var_os("GIT_OBJECT_DIRECTORY") {
        dirs.push(PathBuf::from(dir));
    }
    dirs.push(repo.commondir().join("objects"));
    dirs
}

enum WalkError {
    /// Generation numbers that do not grow from parent to child.
    Unordered,
    Git(git2::Error),
}

impl From<git2::Error> for WalkError {
    fn from(e: git2::Error) -> Self {
        WalkError::Git(e)
    }
}

/// Reached from the tip.
const INTERESTING: u8 = 1;
/// Reached from a hidden commit.
const HIDDEN: u8 = 2;
const QUEUED: u8 = 4;
/// Not known yet: a commit outside the graph whose parents were not all read.
const UNKNOWN_GENERATION: u32 = u32::MAX;

/// Where a node's parents come from.
enum Source {
    /// The graph, at this position.
    Graph(u32),
    /// The commit object, read: its parents' ids.
    Read(Vec<Oid>),
}

struct Node {
    id: Oid,
    tree: Oid,
    source: Source,
    /// The parents as node indices, once resolved: `edges[start..start + len]`.
    edges: Option<(u32, u32)>,
    generation: u32,
    flags: u8,
}

/// A walk in generation order (children before parents, since a child's generation is
/// always higher), over the commit-graph where it has a commit and the object database where
/// it has not.
struct GraphWalk<'a> {
    repo: &'a Repository,
    graph: &'a CommitGraph,
    nodes: Vec<Node>,
    /// Parent node indices of every resolved node, back to back.
    edges: Vec<u32>,
    /// Nodes of commits outside the graph, by id.
    read: HashMap<Oid, usize, OidHash>,
    /// Nodes of commits in the graph, by position.
    by_position: HashMap<u32, usize, OidHash>,
    /// Scratch space for a commit's parent positions.
    positions: Vec<u32>,
}

impl<'a> GraphWalk<'a> {
    fn new(repo: &'a Repository, graph: &'a CommitGraph) -> Self {
        GraphWalk {
            repo,
            graph,
            nodes: Vec::new(),
            edges: Vec::new(),
            read: HashMap::default(),
            by_position: HashMap::default(),
            positions: Vec::new(),
        }
    }

    /// The node for `id`, from the graph or the object database.
    fn node(&mut self, id: Oid) -> Result<usize, WalkError> {
        if let Some(&i) = self.read.get(&id) {
            return Ok(i);
        }
        if let Some(pos) = self.graph.find(id) {
            return self.graph_node(pos);
        }
        let commit = self.repo.find_commit(id)?;
        let i = self.add(Node {
            id,
            tree: commit.tree_id(),
            source: Source::Read(commit.parent_ids().collect()),
            edges: None,
            generation: UNKNOWN_GENERATION,
            flags: 0,
        });
        self.read.insert(id, i);
        Ok(i)
    }

    /// The node for the commit at graph position `pos`.
    fn graph_node(&mut self, pos: u32) -> Result<usize, WalkError> {
        if let Some(&i) = self.by_position.get(&pos) {
            return Ok(i);
        }
        let (id, tree, generation) = self.graph.identity(pos).ok_or(WalkError::Unordered)?;
        let i = self.add(Node {
            id,
            tree,
            source: Source::Graph(pos),
            edges: None,
            generation,
            flags: 0,
        });
        self.by_position.insert(pos, i);
        Ok(i)
    }

    fn add(&mut self, node: Node) -> usize {
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    /// The parents of node `i` as node indices: `edges[start..start + len]`.
    fn parents(&mut self, i: usize) -> Result<(usize, usize), WalkError> {
        if let Some((start, len)) = self.nodes[i].edges {
            return Ok((start as usize, len as usize));
        }
        let mut parents: Vec<u32> = Vec::new();
        match &self.nodes[i].source {
            Source::Graph(pos) => {
                let mut positions = std::mem::take(&mut self.positions);
                self.graph
                    .parents(*pos, &mut positions)
                    .ok_or(WalkError::Unordered)?;
                for &p in &positions {
                    parents.push(self.graph_node(p)? as u32);
                }
                self.positions = positions;
            }
            Source::Read(ids) => {
                for id in ids.clone() {
                    parents.push(self.node(id)? as u32);
                }
            }
        }
        let start = self.edges.len();
        self.edges.extend_from_slice(&parents);
        let span = (start as u32, parents.len() as u32);
        self.nodes[i].edges = Some(span);
        Ok((start, parents.len()))
    }

    /// Sets the generation of `start` and of the commits outside the graph below it: one more
    /// than the highest parent's.
    fn generation(&mut self, start: usize) -> Result<u32, WalkError> {
        let mut stack = vec![start];
        while let Some(&i) = stack.last() {
            if self.nodes[i].generation != UNKNOWN_GENERATION {
                stack.pop();
                continue;
            }
            let (from, len) = self.parents(i)?;
            let mut pending = false;
            let mut top = 0;
            for k in from..from + len {
                let p = self.edges[k] as usize;
                match self.nodes[p].generation {
                    UNKNOWN_GENERATION => {
                        stack.push(p);
                        pending = true;
                    }
                    g => top = top.max(g),
                }
            }
            if !pending {
                self.nodes[i].generation = top.checked_add(1).ok_or(WalkError::Unordered)?;
                stack.pop();
            }
        }
        Ok(self.nodes[start].generation)
    }

    /// The range, as node indices in the order the walk left them (highest generation
    /// first); `topological` orders them.
    fn run(&mut self, tip: Oid, hide: &[Oid]) -> Result<Vec<usize>, WalkError> {
        self.run_many(&[tip], hide)
    }

    /// `run` from several tips: the commits reachable from any of `tips` and from none of
    /// `hide`.
    fn run_many(&mut self, tips: &[Oid], hide: &[Oid]) -> Result<Vec<usize>, WalkError> {
        let mut queue: BinaryHeap<(u32, usize)> = BinaryHeap::new();
        // Queued commits reached from a tip and from no hidden commit: the walk ends when
        // none is left, since everything below the queue is then reachable from a hidden one.
        let mut interesting = 0usize;
        let mut starts: Vec<(Oid, u8)> = tips.iter().map(|&t| (t, INTERESTING)).collect();
        starts.extend(hide.iter().map(|&h| (h, HIDDEN)));
        for (id, flag) in starts {
            let i = self.node(id)?;
            let generation = self.generation(i)?;
            self.mark(i, flag, generation, &mut queue, &mut interesting);
        }
        let mut found = Vec::new();
        while interesting > 0 {
            let Some((generation, i)) = queue.pop() else {
                break;
            };
            let flags = self.nodes[i].flags;
            if flags & HIDDEN == 0 {
                interesting -= 1;
                found.push(i);
            }
            let pass = flags & (INTERESTING | HIDDEN);
            let (from, len) = self.parents(i)?;
            for k in from..from + len {
                let p = self.edges[k] as usize;
                let pg = self.generation(p)?;
                // Every parent queued below the commit being left: the queue then gives
                // commits in falling generation, so none is reached again once left. A graph
                // that says otherwise (or has no numbers, 0) cannot order the walk.
                if pg >= generation || pg == 0 {
                    return Err(WalkError::Unordered);
                }
                self.mark(p, pass, pg, &mut queue, &mut interesting);
            }
        }
        Ok(found)
    }

    /// Adds `flag` to node `i`, queueing it if it is new, and keeps `interesting` current.
    fn mark(
        &mut self,
        i: usize,
        flag: u8,
        generation: u32,
        queue: &mut BinaryHeap<(u32, usize)>,
        interesting: &mut usize,
    ) {
        let node = &mut self.nodes[i];
        let was = node.flags;
        node.flags |= flag;
        let counted = |f: u8| f & QUEUED != 0 && f & HIDDEN == 0;
        if was & QUEUED == 0 {
            node.flags |= QUEUED;
            queue.push((generation, i));
        }
        match (counted(was), counted(node.flags)) {
            (false, true) => *interesting += 1,
            (true, false) => *interesting -= 1,
            _ => {}
        }
    }

    /// The commits of `found` (node indices) oldest first, with their trees and parents.
    fn commits(&self, found: &[usize], hide: &[Oid]) -> Result<Commits, NotAnId> {
        let order = self.topological(found);
        // The range index of each node of the range.
        let mut at = vec![usize::MAX; self.nodes.len()];
        for (k, &i) in order.iter().enumerate() {
            at[i] = k;
        }
        let mut ids = Vec::with_capacity(order.len());
        let mut trees = Vec::with_capacity(order.len() * 2);
        let mut spans = Vec::with_capacity(order.len() + 1);
        let mut parents = Vec::with_capacity(order.len());
        spans.push(0);
        for i in order {
            let node = &self.nodes[i];
            ids.push(from_git2(node.id)?);
            trees.push(from_git2(node.tree)?);
            // Every commit of the range had its parents resolved when the walk left it.
            let (start, len) = node.edges.unwrap_or((0, 0));
            for &p in &self.edges[start as usize..(start + len) as usize] {
                let p = p as usize;
                trees.push(from_git2(self.nodes[p].tree)?);
                parents.push(match at[p] {
                    usize::MAX => Parent::Outside(from_git2(self.nodes[p].id)?),
                    k => Parent::Range(k),
                });
            }
            spans.push(trees.len() as u32);
        }
        Ok(Commits {
            ids,
            trees,
            spans,
            parents,
            hidden: ours(hide)?,
        })
    }

    fn parents_of(&self, i: usize) -> &[u32] {
        match self.nodes[i].edges {
            Some((start, len)) => &self.edges[start as usize..(start + len) as usize],
            None => &[],
        }
    }

    /// `found` (the range, newest first by generation) in the order libgit2's
    /// `TOPOLOGICAL | REVERSE` walk gives (`topological`).
    fn topological(&self, found: &[usize]) -> Vec<usize> {
        topological(found, self.nodes.len(), |i| self.parents_of(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;
    use std::path::Path;
    use std::process::{Command, Stdio};

    /// guard's id of a commit the tests name by libgit2's.
    fn guard_id(id: Oid) -> ObjectId {
        from_git2(id).unwrap()
    }

    fn guard_ids(ids: &[Oid]) -> Vec<ObjectId> {
        ours(ids).unwrap()
    }

    /// `super::commits`, from commits the tests name by libgit2's ids.
    fn commits(repo: &Repository, tip: Oid, hide: &[Oid]) -> anyhow::Result<Commits> {
        super::commits(repo, guard_id(tip), &guard_ids(hide))
    }

    fn git(dir: &Path) -> Command {
        let mut cmd = Command::new("git");
        cmd.current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null");
        cmd
    }

    /// A pseudo-random number generator, so the histories are the same on every run.
    struct Lcg(u64);

    impl Lcg {
        fn below(&mut self, n: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((self.0 >> 33) % n as u64) as usize
        }
    }

    /// A repository of `n` commits, each with one to three parents among the commits before
    /// it (`mark :k` is commit k, tagged `c<k>`), written with `git fast-import`. With
    /// `skew`, commit dates jump back and forth; else they grow by a minute per commit.
    fn dag(n: usize, seed: u64, skew: bool) -> tempfile::TempDir {
        dag_dated(n, seed, |rng, k| {
            if skew {
                1_700_000_000 + rng.below(100_000) as i64
            } else {
                1_700_000_000 + 60 * k as i64
            }
        })
    }

    /// Commit k's date, from the generator.
    type DateOf = fn(&mut Lcg, usize) -> i64;

    /// `dag`, commit k dated `date(rng, k)`.
    fn dag_dated(n: usize, seed: u64, date: impl Fn(&mut Lcg, usize) -> i64) -> tempfile::TempDir {
        let mut rng = Lcg(seed);
        let mut commits = Vec::new();
        for k in 1..=n {
            let date = date(&mut rng, k);
            let mut chosen: Vec<usize> = Vec::new();
            if k > 1 {
                let parents = 1 + rng.below(if k > 3 { 3 } else { 1 });
                // Mostly the commit just before, so the history has long lines.
                let first = if rng.below(4) == 0 {
                    1 + rng.below(k - 1)
                } else {
                    k - 1
                };
                chosen.push(first);
                for _ in 1..parents {
                    let p = 1 + rng.below(k - 1);
                    if !chosen.contains(&p) {
                        chosen.push(p);
                    }
                }
            }
            commits.push((chosen, date));
        }
        fast_import(&commits)
    }

    /// A repository whose commit k (1-based, tagged `c<k>`) has the parents and commit date
    /// of `commits[k - 1]`; parents are earlier commits.
    fn fast_import(commits: &[(Vec<usize>, i64)]) -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        assert!(
            git(t.path())
                .args(["init", "-q", "-b", "main"])
                .status()
                .unwrap()
                .success()
        );
        let mut stream = String::new();
        for (k, (parents, date)) in (1..).zip(commits) {
            let message = format!("c{k}");
            stream.push_str(&format!(
                "commit refs/tags/c{k}\nmark :{k}\ncommitter C <c@example.com> {date} +0000\ndata {}\n{message}\n",
                message.len()
            ));
            if let Some((first, rest)) = parents.split_first() {
                stream.push_str(&format!("from :{first}\n"));
                for p in rest {
                    stream.push_str(&format!("merge :{p}\n"));
                }
            }
            stream.push_str(&format!("M 644 inline f{}\ndata 1\nx\n\n", k % 7));
        }
        let mut child = git(t.path())
            .args(["fast-import", "--quiet"])
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stream.as_bytes())
            .unwrap();
        assert!(child.wait().unwrap().success());
        t
    }

    /// A repository of commits with these parents (commit k is `parents[k - 1]`'s), dated a
    /// minute apart, with a commit-graph of all of them.
    fn shaped(parents: &[&[usize]]) -> tempfile::TempDir {
        let commits: Vec<(Vec<usize>, i64)> = (1..)
            .zip(parents)
            .map(|(k, p)| (p.to_vec(), 1_700_000_000 + 60 * k))
            .collect();
        let t = fast_import(&commits);
        write_graph(t.path(), &["--reachable"]);
        t
    }

    /// Rewrites the generation numbers of the commit-graph's commits `(k, generation)`, as a
    /// damaged or hand-made file could have them (the file's checksum is left as it was:
    /// guard does not read it).
    fn set_generations(dir: &Path, repo: &Repository, generations: &[(usize, u32)]) {
        let path = dir.join(".git/objects/info/commit-graph");
        let mut bytes = std::fs::read(&path).unwrap();
        let graph = CommitGraph::open(&objects_dirs(repo), hash_len(repo)).unwrap();
        let data = graph.data_offset();
        for &(k, generation) in generations {
            let pos = graph.find(id(repo, k)).unwrap() as usize;
            // Each commit's data: its tree id, two parent words, then the generation word.
            let n = hash_len(repo);
            let at = data + pos * (n + 16) + n + 8;
            let word = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
            let word = generation << 2 | (word & 3);
            bytes[at..at + 4].copy_from_slice(&word.to_be_bytes());
        }
        drop(graph);
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, &bytes).unwrap();
    }

    fn id(repo: &Repository, k: usize) -> Oid {
        repo.revparse_single(&format!("c{k}"))
            .unwrap()
            .peel_to_commit()
            .unwrap()
            .id()
    }

    fn revwalk(repo: &Repository, tip: Oid, hide: &[Oid]) -> Vec<Oid> {
        let mut walk = repo.revwalk().unwrap();
        walk.set_sorting(Sort::TOPOLOGICAL | Sort::REVERSE).unwrap();
        walk.push(tip).unwrap();
        for &h in hide {
            walk.hide(h).unwrap();
        }
        walk.map(Result::unwrap).collect()
    }

    fn ancestors(repo: &Repository, from: &[Oid]) -> HashSet<Oid, OidHash> {
        let mut seen = HashSet::default();
        let mut todo = from.to_vec();
        while let Some(c) = todo.pop() {
            if seen.insert(c) {
                todo.extend(repo.find_commit(c).unwrap().parent_ids());
            }
        }
        seen
    }

    fn write_graph(dir: &Path, args: &[&str]) {
        let ok = git(dir)
            .args(["commit-graph", "write"])
            .args(args)
            .status()
            .unwrap()
            .success();
        assert!(ok);
    }

    /// Ranges between pseudo-random commits, up to `most - 1` hidden.
    fn ranges(n: usize, seed: u64, most: usize) -> Vec<(usize, Vec<usize>)> {
        let mut rng = Lcg(seed);
        (0..60)
            .map(|i| {
                let tip = 1 + rng.below(n);
                let hides = (0..i % most).map(|_| 1 + rng.below(n)).collect();
                (tip, hides)
            })
            .collect()
    }

    #[test]
    fn graph_walk_gives_libgit2s_commits_in_libgit2s_order() {
        let n = 300;
        let t = dag(n, 7, false);
        // The graph holds commit 200 and its ancestors only: the rest are read from the
        // object database.
        let repo = Repository::open(t.path()).unwrap();
        let mut child = git(t.path())
            .args(["commit-graph", "write", "--stdin-commits"])
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        let c200 = id(&repo, 200).to_string();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(c200.as_bytes())
            .unwrap();
        assert!(child.wait().unwrap().success());
        let graph = CommitGraph::open(&objects_dirs(&repo), hash_len(&repo)).unwrap();
        assert_eq!(
            graph.len() as usize,
            ancestors(&repo, &[id(&repo, 200)]).len()
        );
        for (tip, hides) in ranges(n, 11, 3) {
            let (tip, hides): (Oid, Vec<Oid>) = (
                id(&repo, tip),
                hides.iter().map(|&h| id(&repo, h)).collect(),
            );
            let expected = revwalk(&repo, tip, &hides);
            let mut walk = GraphWalk::new(&repo, &graph);
            let found = walk
                .run(tip, &hides)
                .unwrap_or_else(|_| panic!("unordered"));
            let got = walk.commits(&found, &hides).unwrap();
            assert_eq!(
                got.ids(),
                guard_ids(&expected),
                "tip {tip} hiding {hides:?}"
            );
            assert_trees_and_parents(&repo, &got);
            let got = commits(&repo, tip, &hides).unwrap();
            assert_eq!(got.ids(), guard_ids(&expected));
            assert_eq!(
                (got.len(), got.is_empty()),
                (expected.len(), expected.is_empty())
            );
            assert!(commits(&repo, tip, &[tip]).unwrap().is_empty());
            assert_trees_and_parents(&repo, &got);
            assert_eq!(got.hidden(), guard_ids(&hides));
        }
    }

    /// Each commit's tree, its parents' trees, and its parents as range positions or ids,
    /// as the commit objects have them.
    #[track_caller]
    fn assert_trees_and_parents(repo: &Repository, got: &Commits) {
        for (k, &c) in got.ids().iter().enumerate() {
            let commit = repo.find_commit(to_git2(c).unwrap()).unwrap();
            let parents: Vec<ObjectId> = commit.parents().map(|p| guard_id(p.tree_id())).collect();
            assert_eq!(got.trees(k), (guard_id(commit.tree_id()), &parents[..]));
            let parents: Vec<Parent> = commit
                .parent_ids()
                .map(guard_id)
                .map(|p| match got.ids().iter().position(|&e| e == p) {
                    Some(at) => Parent::Range(at),
                    None => Parent::Outside(p),
                })
                .collect();
            assert_eq!(got.parents(k), &parents[..]);
        }
    }

    #[test]
    fn graph_walk_is_exact_when_commit_dates_lie() {
        let n = 200;
        let t = dag(n, 3, true);
        write_graph(t.path(), &["--reachable"]);
        let repo = Repository::open(t.path()).unwrap();
        for (tip, hides) in ranges(n, 5, 3) {
            let (tip, hides): (Oid, Vec<Oid>) = (
                id(&repo, tip),
                hides.iter().map(|&h| id(&repo, h)).collect(),
            );
            let hidden = ancestors(&repo, &hides);
            let expected: HashSet<Oid, OidHash> = ancestors(&repo, &[tip])
                .into_iter()
                .filter(|c| !hidden.contains(c))
                .collect();
            let got = commits(&repo, tip, &hides).unwrap();
            assert_eq!(got.len(), expected.len());
            assert_eq!(
                got.ids().iter().copied().collect::<HashSet<_>>(),
                expected.iter().map(|&c| guard_id(c)).collect()
            );
            // Oldest first: every commit after its parents in the range.
            let at: HashMap<ObjectId, usize> =
                got.ids().iter().enumerate().map(|(k, &c)| (c, k)).collect();
            for (k, &c) in got.ids().iter().enumerate() {
                for p in repo.find_commit(to_git2(c).unwrap()).unwrap().parent_ids() {
                    assert!(at.get(&guard_id(p)).is_none_or(|&pk| pk < k));
                }
            }
        }
    }

    /// Checks `reachable_from` on every commit of a `dag`, all at once and one at a time,
    /// from several commits: the answer is always a subset of the reachable commits, and
    /// the whole set when `exact`.
    fn check_reachable(repo: &Repository, n: usize, exact: bool) {
        let all: Vec<Oid> = (1..=n).map(|k| id(repo, k)).collect();
        for from in [1, n / 5, n / 2, n - 1, n] {
            let from = id(repo, from);
            let ancestors = ancestors(repo, &[from]);
            let want: HashSet<Oid, OidHash> = all
                .iter()
                .copied()
                .filter(|c| ancestors.contains(c))
                .collect();
            let at_once = reachable_from(repo, from, &all).unwrap();
            let one_by_one: HashSet<Oid, OidHash> = all
                .iter()
                .copied()
                .filter(|&c| reachable_from(repo, from, &[c]).unwrap().contains(&c))
                .collect();
            for got in [at_once, one_by_one] {
                assert!(
                    got.is_subset(&want),
                    "from {from}: not reachable: {:?}",
                    got.difference(&want)
                );
                if exact {
                    assert_eq!(got, want, "from {from}");
                }
            }
        }
        assert!(reachable_from(repo, all[0], &[]).unwrap().is_empty());
    }

    #[test]
    fn reachable_from_answers_for_many_commits_at_once() {
        // Commit dates in order: libgit2's walk is exact.
        let t = dag(150, 13, false);
        let repo = Repository::open(t.path()).unwrap();
        check_reachable(&repo, 150, true);
        // Dates that lie: libgit2's walk, which stops by them, may miss some; the
        // commit-graph's walk goes by generation numbers and is exact.
        let t = dag(150, 13, true);
        let repo = Repository::open(t.path()).unwrap();
        check_reachable(&repo, 150, false);
        write_graph(t.path(), &["--reachable"]);
        check_reachable(&repo, 150, true);
    }

    /// Without a graph the range comes from `DateWalk`, which must list what libgit2's walk
    /// lists, in its order: also when commit dates lie or tie, where libgit2's set is not
    /// exact and depends on the order of each of its steps.
    #[test]
    fn date_walk_gives_libgit2s_commits_in_libgit2s_order() {
        let n = 200;
        let dates: [(u64, DateOf); 4] = [
            (3, |_, k| 1_700_000_000 + 60 * k as i64),
            (5, |rng, _| 1_700_000_000 + rng.below(100_000) as i64),
            // A few dates, shared by many commits.
            (8, |rng, _| 1_700_000_000 + rng.below(4) as i64),
            // Mostly growing, with some commits dated well before their parents.
            (13, |rng, k| {
                let back = if rng.below(6) == 0 { 5_000 } else { 0 };
                1_700_000_000 + 60 * k as i64 - back
            }),
        ];
        for (seed, date) in dates {
            let t = dag_dated(n, seed, date);
            let repo = Repository::open(t.path()).unwrap();
            let mut inexact = 0;
            for (tip, hides) in ranges(n, seed + 1, 6) {
                let (tip, hides): (Oid, Vec<Oid>) = (
                    id(&repo, tip),
                    hides.iter().map(|&h| id(&repo, h)).collect(),
                );
                let expected = revwalk(&repo, tip, &hides);
                let mut walk = DateWalk::new(&repo).unwrap();
                let got = walk.range(tip, &hides).expect("the walk read every commit");
                assert_eq!(got, expected, "seed {seed}: tip {tip} hiding {hides:?}");
                let got = commits(&repo, tip, &hides).unwrap();
                assert_eq!(got.ids(), guard_ids(&expected));
                assert_trees_and_parents(&repo, &got);
                let hidden = ancestors(&repo, &hides);
                inexact += usize::from(expected.iter().any(|c| hidden.contains(c)));

                // Several tips at once, unsorted, as `reachable_from` walks.
                let tips = [tip, id(&repo, 1 + (seed as usize * 7) % n), id(&repo, n)];
                assert_reachable_as_libgit2_walks(&repo, &tips, &hides);
            }
            // Lying dates did lead libgit2 (and so the walk) past the edge of some ranges.
            if seed == 5 {
                assert!(inexact > 0);
            }
        }
    }

    /// `DateWalk::reachable` lists what libgit2's unsorted walk lists, each commit once.
    #[track_caller]
    fn assert_reachable_as_libgit2_walks(repo: &Repository, tips: &[Oid], hides: &[Oid]) {
        let mut walk = repo.revwalk().unwrap();
        for &c in tips {
            walk.push(c).unwrap();
        }
        for &h in hides {
            walk.hide(h).unwrap();
        }
        let expected: HashSet<Oid, OidHash> = walk.map(Result::unwrap).collect();
        let got = DateWalk::new(repo).unwrap().reachable(tips, hides).unwrap();
        assert_eq!(got.len(), expected.len(), "{tips:?} hiding {hides:?}");
        assert_eq!(got.into_iter().collect::<HashSet<_, OidHash>>(), expected);
    }

    /// The same from up to four tips at once and up to four hidden commits, in small
    /// histories whose commits share a few dates: the lists libgit2's walk starts from are
    /// then out of date order, which only these cases reach.
    #[test]
    fn date_walk_matches_libgit2_from_several_tips() {
        for seed in 1..=40u64 {
            let n = 40;
            let t = dag_dated(n, seed, |rng, _| 1_700_000_000 + rng.below(30) as i64);
            let repo = Repository::open(t.path()).unwrap();
            let mut rng = Lcg(seed * 31);
            for _ in 0..40 {
                let mut pick = |most: usize| -> Vec<Oid> {
                    (0..1 + rng.below(most))
                        .map(|_| id(&repo, 1 + rng.below(n)))
                        .collect()
                };
                let (tips, hides) = (pick(4), pick(4));
                assert_reachable_as_libgit2_walks(&repo, &tips, &hides);
                let expected = revwalk(&repo, tips[0], &hides);
                let got = DateWalk::new(&repo)
                    .unwrap()
                    .range(tips[0], &hides)
                    .unwrap();
                assert_eq!(got, expected, "seed {seed}: {} hiding {hides:?}", tips[0]);
            }
        }
    }

    /// In a shallow clone the parents cut off are missing: the walk gives up at them, and
    /// libgit2's walk (which takes the cut commits as roots) lists the range.
    #[test]
    fn a_shallow_clone_is_walked_by_libgit2() {
        let line: Vec<(Vec<usize>, i64)> = (1..=40)
            .map(|k| {
                (
                    (1..k).rev().take(1).collect(),
                    1_700_000_000 + 60 * k as i64,
                )
            })
            .collect();
        let t = fast_import(&line);
        let ok = git(t.path())
            .args(["update-ref", "refs/heads/main", "c40"])
            .status()
            .unwrap()
            .success();
        assert!(ok);
        let shallow = tempfile::tempdir().unwrap();
        let from = format!("file://{}", t.path().display());
        let ok = git(shallow.path())
            .args([
                "clone",
                "-q",
                "--bare",
                "--depth",
                "5",
                "--single-branch",
                "--no-tags",
                "--branch",
                "main",
                &from,
                "s.git",
            ])
            .status()
            .unwrap()
            .success();
        assert!(ok);
        let repo = Repository::open(shallow.path().join("s.git")).unwrap();
        assert!(repo.is_shallow());
        let tip = repo.revparse_single("main").unwrap().id();
        assert!(DateWalk::new(&repo).unwrap().range(tip, &[]).is_err());
        let expected = revwalk(&repo, tip, &[]);
        assert!(
            !expected.is_empty() && expected.len() < 40,
            "{}",
            expected.len()
        );
        let got = commits(&repo, tip, &[]).unwrap();
        assert_eq!(got.ids(), guard_ids(&expected));
        assert_trees_and_parents(&repo, &got);
    }

    /// At a commit whose header is not as git writes it, the walk gives up and libgit2's
    /// walk lists the range.
    #[test]
    fn at_an_odd_commit_libgit2_walks() {
        let t = dag(30, 4, false);
        let repo = Repository::open(t.path()).unwrap();
        let base = repo.find_commit(id(&repo, 30)).unwrap();
        // Two author lines: libgit2 reads the commit, `Header` does not.
        let text = format!(
            "tree {}\nparent {}\nauthor A <a@example.com> 1 +0000\nauthor B <b@example.com> 1 +0000\ncommitter C <c@example.com> 1800000000 +0000\n\nodd\n",
            base.tree_id(),
            base.id()
        );
        let odd = repo
            .odb()
            .unwrap()
            .write(git2::ObjectType::Commit, text.as_bytes())
            .unwrap();
        let hide = id(&repo, 10);
        assert!(DateWalk::new(&repo).unwrap().range(odd, &[hide]).is_err());
        let expected = revwalk(&repo, odd, &[hide]);
        assert_eq!(expected.last(), Some(&odd));
        assert!(expected.len() > 10, "{expected:?}");
        let got = commits(&repo, odd, &[hide]).unwrap();
        assert_eq!(got.ids(), guard_ids(&expected));
        assert_trees_and_parents(&repo, &got);
        let reachable = reachable_from(&repo, hide, &[odd, id(&repo, 5)]).unwrap();
        assert_eq!(reachable, HashSet::from_iter([id(&repo, 5)]));
    }

    #[test]
    fn without_a_usable_graph_libgit2_walks() {
        let n = 50;
        let t = dag(n, 9, false);
        let repo = Repository::open(t.path()).unwrap();
        let (tip, hide) = (id(&repo, 50), id(&repo, 20));
        let expected = revwalk(&repo, tip, &[hide]);
        let got = commits(&repo, tip, &[hide]).unwrap();
        assert_eq!(got.ids(), guard_ids(&expected));
        assert_trees_and_parents(&repo, &got);
        // A graph written by git before 2.18 has no generation numbers (all zero).
        write_graph(t.path(), &["--reachable"]);
        let zeros: Vec<(usize, u32)> = (1..=n).map(|k| (k, 0)).collect();
        set_generations(t.path(), &repo, &zeros);
        let graph = CommitGraph::open(&objects_dirs(&repo), hash_len(&repo)).unwrap();
        let mut walk = GraphWalk::new(&repo, &graph);
        assert!(matches!(walk.run(tip, &[hide]), Err(WalkError::Unordered)));
        assert_eq!(
            commits(&repo, tip, &[hide]).unwrap().ids(),
            guard_ids(&expected)
        );
    }

    /// The walk ends as soon as every commit still queued is reachable from a hidden one: it
    /// reads the range and the commits at its edge, not the history below them.
    #[test]
    fn graph_walk_stops_at_the_edge_of_the_range() {
        // Commits 1-40 in a line; 41 on 40; 42 and 43 a side line on 41; 44 on 41 too; 45
        // merges 43 and 44. Range 45 ^44 is 45, 43, 42: commit 41 is reached from 42 first
        // (queued as in the range), then from 44 (hidden), which ends the walk.
        let mut parents: Vec<Vec<usize>> = vec![vec![]];
        parents.extend((1..40).map(|k| vec![k]));
        parents.extend([vec![40], vec![41], vec![42], vec![41], vec![43, 44]]);
        let parents: Vec<&[usize]> = parents.iter().map(Vec::as_slice).collect();
        let t = shaped(&parents);
        let repo = Repository::open(t.path()).unwrap();
        let graph = CommitGraph::open(&objects_dirs(&repo), hash_len(&repo)).unwrap();
        let c = |k| id(&repo, k);
        for (tip, hide, range, visited) in [
            // 45, 44 (the starts), 43, 42, 41.
            (45, 44, vec![42, 43, 45], 5),
            // 40 down to 35: the range and its base.
            (40, 35, vec![36, 37, 38, 39, 40], 6),
        ] {
            let mut walk = GraphWalk::new(&repo, &graph);
            let found = walk.run(c(tip), &[c(hide)]).ok().unwrap();
            let want: Vec<Oid> = range.iter().map(|&k| c(k)).collect();
            let got = walk.commits(&found, &[c(hide)]).unwrap();
            assert_eq!(got.ids(), guard_ids(&want));
            assert_eq!(walk.nodes.len(), visited, "range {tip} ^{hide}");
        }
    }

    /// A graph whose generation numbers go up along a parent edge the walk takes (a damaged
    /// or hand-made file: git never writes one) cannot order the walk. Trusted, it would
    /// take a commit reachable from the hidden one into the range; guard walks without it.
    #[test]
    fn generation_numbers_out_of_order_are_not_trusted() {
        // 1; 2 on 1; 3 (the tip) on 2; 4 on 1; 5 on 2; 6 merges 4 and 5 (hidden). Range
        // 3 ^6 is 3 alone: 2 is reachable from 6 through 5.
        let t = shaped(&[&[], &[1], &[2], &[1], &[2], &[4, 5]]);
        let repo = Repository::open(t.path()).unwrap();
        let c = |k| id(&repo, k);
        let expected = revwalk(&repo, c(3), &[c(6)]);
        assert_eq!(expected, [c(3)]);
        // 2 above its child 3: the walk would leave 2 (as in the range) before 4 hides 1,
        // which ends it before 5 ever reaches 2.
        set_generations(
            t.path(),
            &repo,
            &[(1, 1), (2, 9), (3, 5), (4, 3), (5, 2), (6, 4)],
        );
        assert_walked_without_the_graph(&repo, (c(3), c(6)), &[c(3)], c(2));
    }

    /// Generation 0 in a graph that has numbers elsewhere (git before 2.18 wrote 0 for
    /// "not computed"): a commit there says nothing about where it stands, so the walk
    /// cannot be ordered by it.
    #[test]
    fn a_zero_generation_among_numbered_commits_is_not_trusted() {
        // 1; 2 on 1; 3 on 2; 4 on 1; 5 merges 3 and 4 (hidden); 6 (the tip) on 2. Range
        // 6 ^5 is 6 alone: 2 is reachable from 5 through 3.
        let t = shaped(&[&[], &[1], &[2], &[1], &[3, 4], &[2]]);
        let repo = Repository::open(t.path()).unwrap();
        let c = |k| id(&repo, k);
        let expected = revwalk(&repo, c(6), &[c(5)]);
        assert_eq!(expected, [c(6)]);
        // 3 at 0 would be left last, after 2 is taken into the range and 4 hides 1.
        set_generations(t.path(), &repo, &[(3, 0)]);
        assert_walked_without_the_graph(&repo, (c(6), c(5)), &[c(6)], c(2));
    }

    /// A parent numbered as high as its child is as wrong as one numbered higher: the walk
    /// would leave the parent in the same round as commits above it.
    #[test]
    fn a_generation_equal_to_a_childs_is_not_trusted() {
        // 1; 2 on 1; 3 on 2; 4 (hidden) on 3; 5; 6 (the tip) merges 2 and 5. Range 6 ^4 is 6
        // and 5: 2 and 1 are reachable from 4 through 3.
        let t = shaped(&[&[], &[1], &[2], &[3], &[], &[2, 5]]);
        let repo = Repository::open(t.path()).unwrap();
        let c = |k| id(&repo, k);
        let expected = revwalk(&repo, c(6), &[c(4)]);
        assert_eq!(expected, [c(5), c(6)]);
        // 2 as high as its child 3: trusted, the walk leaves 2 (taken into the range) before
        // 3, which would hide it.
        set_generations(
            t.path(),
            &repo,
            &[(1, 1), (2, 5), (3, 5), (4, 7), (5, 1), (6, 6)],
        );
        assert_walked_without_the_graph(&repo, (c(6), c(4)), &expected, c(2));
    }

    /// The graph walk refuses range `tip ^hide` as unordered, and `commits` (which gives
    /// `range`) and `reachable_from` (asked about `below`, an ancestor of `hide`, and `tip`)
    /// answer as libgit2's walk does.
    #[track_caller]
    fn assert_walked_without_the_graph(
        repo: &Repository,
        (tip, hide): (Oid, Oid),
        range: &[Oid],
        below: Oid,
    ) {
        let graph = CommitGraph::open(&objects_dirs(repo), hash_len(repo)).unwrap();
        let mut walk = GraphWalk::new(repo, &graph);
        assert!(matches!(walk.run(tip, &[hide]), Err(WalkError::Unordered)));
        assert_eq!(commits(repo, tip, &[hide]).unwrap().ids(), guard_ids(range));
        assert_eq!(
            reachable_from(repo, hide, &[below, tip]).unwrap(),
            HashSet::from_iter([below])
        );
    }
}
