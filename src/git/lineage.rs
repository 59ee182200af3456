//! Which protected changes of a merge are the merge's own: decided from what the range's own
//! commits made, without a merge base.
//!
//! Every protected path of every commit has *origins*: the commits that made its content. An
//! origin is a judged commit of the range (one that changed the path, or a merge whose own edit
//! it was) or a commit outside the range (the base or its history, which the gate already
//! let in). A merge whose content at a path equals side i's brings it from side i when some
//! origin of the content is news to every side with other content: not among its ancestors.
//! A side that has all of them moved past the content, and taking it back undoes that side's
//! change. Everything else a merge's tree shows is the merge's own edit, and the merge is that
//! content's origin.
//!
//! A merge base answers this for a two-parent merge with one base, but misleads for octopus
//! merges (libgit2 pairs the first parent with any other, so an old commit's side seems to
//! bring its old content) and criss-cross merges (one of several bases, picked by commit
//! dates, which the pusher sets); and computing it for every merge of a long range cost most
//! of the time judging it.

use std::collections::HashMap;
use std::rc::Rc;

use git2::Repository;

use super::ObjectId;
use super::id::to_git2;
use super::range::{Commits, Parent};
use crate::changes::Change;

/// Who made a path's content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Origin {
    /// The judged commit at this index of the range.
    Judged(u32),
    /// The commit outside the range at this index of `Lineage::outside`.
    Outside(u32),
}

/// What a commit knows of one path that a judged commit among it and its ancestors changed.
#[derive(Debug, PartialEq, Eq)]
struct PathState {
    /// Who made the content (several when sides made the same content), sorted.
    origins: Vec<Origin>,
    /// The judged commits among the commit and its ancestors that made content at this path,
    /// sorted.
    seen: Vec<u32>,
}

/// What a commit knows of its paths' origins.
#[derive(Clone)]
struct State {
    /// The commits outside the range whose content reaches this one unchanged at every path
    /// not in `paths`: the outside parents of this commit and of its ancestors in the range.
    /// Sorted indices into `Lineage::outside`. When the range has one hidden commit and this
    /// is reached, it alone stands for them all: every commit outside the range that the range
    /// reaches is its ancestor.
    frontier: Rc<Vec<u32>>,
    /// The paths that a judged commit among this commit and its ancestors changed, sorted by
    /// path id.
    paths: Rc<Vec<(u32, Rc<PathState>)>>,
}

/// The origins of the protected paths of a range's commits.
pub struct Lineage<'r> {
    repo: &'r Repository,
    commits: &'r Commits,
    /// Per commit of the range, what it knows.
    states: Vec<State>,
    path_ids: HashMap<String, u32>,
    /// Commits outside the range met as parents (and the hidden one).
    outside: Vec<ObjectId>,
    outside_ids: HashMap<ObjectId, u32>,
    /// The range's hidden commit, when there is exactly one (an index into `outside`).
    hidden: Option<u32>,
    /// Whether the outside commit `.0` is an ancestor of (or is) the outside commit `.1`.
    ancestry: HashMap<(u32, u32), bool>,
    no_paths: Rc<Vec<(u32, Rc<PathState>)>>,
}

impl<'r> Lineage<'r> {
    /// Follows `commits` oldest first. `against_parents[k]` holds commit k's protected changes
    /// against each of its parents in order (one list, against the empty tree, for a root), or
    /// no list at all when it changes nothing. Returns the lineage and each commit's own
    /// changes: all of a non-merge commit's, the own edits of a merge.
    pub fn resolve(
        repo: &'r Repository,
        commits: &'r Commits,
        against_parents: Vec<Vec<Vec<Change>>>,
    ) -> Result<(Lineage<'r>, Vec<Vec<Change>>), git2::Error> {
        let mut lineage = Lineage {
            repo,
            commits,
            states: Vec::with_capacity(commits.len()),
            path_ids: HashMap::new(),
            outside: Vec::new(),
            outside_ids: HashMap::new(),
            hidden: None,
            ancestry: HashMap::new(),
            no_paths: Rc::new(Vec::new()),
        };
        if let [hidden] = commits.hidden() {
            lineage.hidden = Some(lineage.outside_id(*hidden));
        }
        let mut own = Vec::with_capacity(commits.len());
        for (k, lists) in against_parents.into_iter().enumerate() {
            let parents = commits.parents(k);
            let (state, changes) = if parents.len() < 2 {
                let base = match parents.first() {
                    Some(&p) => lineage.parent_state(p),
                    None => State {
                        frontier: Rc::new(Vec::new()),
                        paths: lineage.no_paths.clone(),
                    },
                };
                let changes = lists.into_iter().next().unwrap_or_default();
                let state = if changes.is_empty() {
                    base
                } else {
                    lineage.produce(&base, k as u32, &changes)
                };
                (state, changes)
            } else {
                lineage.merge(k as u32, parents, &lists)?
            };
            lineage.states.push(state);
            own.push(changes);
        }
        Ok((lineage, own))
    }

    /// Of merge `k`'s parents, those whose content at `path` (`versions`: each parent's entry
    /// id) is current: some maker of it is news to every parent with other content, so none
    /// of those moved past it. What a merge's own edit holds that none of these has, it adds
    /// itself (an older parent's content taken back is an addition too). All parents when
    /// none is current.
    pub fn current_parents(
        &mut self,
        k: usize,
        path: &str,
        versions: &[Option<ObjectId>],
    ) -> Result<Vec<usize>, git2::Error> {
        let sides: Vec<State> = self
            .commits
            .parents(k)
            .iter()
            .map(|&p| self.parent_state(p))
            .collect();
        let id = self.path_ids.get(path).copied();
        let mut current = Vec::new();
        for (i, side) in sides.iter().enumerate() {
            let others: Vec<&State> = sides
                .iter()
                .enumerate()
                .filter(|(j, _)| versions.get(*j) != versions.get(i))
                .map(|(_, s)| s)
                .collect();
            if !self.unseen(origins(side, id), &others, id)?.is_empty() {
                current.push(i);
            }
        }
        if current.is_empty() {
            current = (0..sides.len()).collect();
        }
        Ok(current)
    }

    /// Whether a judged commit of the range made what commit `k` holds at `path` (content, or
    /// its absence); false when it comes unchanged from history outside the range.
    pub fn made_in_range(&self, k: usize, path: &str) -> bool {
        let Some(&id) = self.path_ids.get(path) else {
            return false;
        };
        explicit(&self.states[k], id)
            .is_some_and(|s| s.origins.iter().any(|o| matches!(o, Origin::Judged(_))))
    }

    /// What a parent knows: a commit of the range's state, or an outside commit's own content.
    fn parent_state(&mut self, parent: Parent) -> State {
        match parent {
            Parent::Range(i) => self.states[i].clone(),
            Parent::Outside(id) => State {
                frontier: Rc::new(vec![self.outside_id(id)]),
                paths: self.no_paths.clone(),
            },
        }
    }

    fn outside_id(&mut self, id: ObjectId) -> u32 {
        if let Some(&i) = self.outside_ids.get(&id) {
            return i;
        }
        let i = self.outside.len() as u32;
        self.outside.push(id);
        self.outside_ids.insert(id, i);
        i
    }

    fn path_id(&mut self, path: &str) -> u32 {
        if let Some(&i) = self.path_ids.get(path) {
            return i;
        }
        let i = self.path_ids.len() as u32;
        self.path_ids.insert(path.to_string(), i);
        i
    }

    /// The state of non-merge commit `k`, which made the content of `changes`' paths.
    fn produce(&mut self, base: &State, k: u32, changes: &[Change]) -> State {
        let mut ids: Vec<u32> = changes.iter().map(|c| self.path_id(&c.path)).collect();
        ids.sort_unstable();
        ids.dedup();
        let mut paths = Vec::with_capacity(base.paths.len() + ids.len());
        let mut before = base.paths.iter().peekable();
        for id in ids {
            while let Some((p, s)) = before.next_if(|(p, _)| *p < id) {
                paths.push((*p, s.clone()));
            }
            let mut seen = match before.next_if(|(p, _)| *p == id) {
                Some((_, s)) => s.seen.clone(),
                None => Vec::new(),
            };
            // `k` is the newest commit so far: the list stays sorted.
            seen.push(k);
            let state = PathState {
                origins: vec![Origin::Judged(k)],
                seen,
            };
            paths.push((id, Rc::new(state)));
        }
        paths.extend(before.cloned());
        State {
            frontier: base.frontier.clone(),
            paths: Rc::new(paths),
        }
    }

    /// The state of merge `k` and its own edits.
    fn merge(
        &mut self,
        k: u32,
        parents: &[Parent],
        lists: &[Vec<Change>],
    ) -> Result<(State, Vec<Change>), git2::Error> {
        let sides: Vec<State> = parents.iter().map(|&p| self.parent_state(p)).collect();
        let frontier = self.join_frontiers(&sides);
        // The paths at which the merge's tree differs from some parent's.
        let mut changed: Vec<(u32, &Change)> = lists
            .iter()
            .flatten()
            .map(|c| (self.path_id(&c.path), c))
            .collect();
        // Stable: of a path's changes, the one against the earliest parent is kept.
        changed.sort_by_key(|(id, _)| *id);
        changed.dedup_by_key(|(id, _)| *id);
        let same_paths = sides.iter().all(|s| Rc::ptr_eq(&s.paths, &sides[0].paths));
        if changed.is_empty() && same_paths {
            let state = State {
                frontier,
                paths: sides[0].paths.clone(),
            };
            return Ok((state, Vec::new()));
        }

        let mut keys: Vec<u32> = sides
            .iter()
            .flat_map(|s| s.paths.iter().map(|(p, _)| *p))
            .chain(changed.iter().map(|(p, _)| *p))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        let mut paths = Vec::with_capacity(keys.len());
        let mut own = Vec::new();
        for id in keys {
            let states: Vec<Option<&Rc<PathState>>> =
                sides.iter().map(|s| explicit(s, id)).collect();
            let state = match changed.binary_search_by_key(&id, |(c, _)| *c) {
                Err(_) => self.join(&sides, &states, id),
                Ok(at) => {
                    let change = changed[at].1;
                    let differs: Vec<bool> = lists
                        .iter()
                        .map(|l| {
                            l.binary_search_by(|c| c.path.as_str().cmp(&change.path))
                                .is_ok()
                        })
                        .collect();
                    match self.brought(&sides, &states, &differs, id)? {
                        Some(state) => state,
                        None => {
                            own.push(change.clone());
                            let mut seen = union_seen(&states);
                            seen.push(k);
                            Rc::new(PathState {
                                origins: vec![Origin::Judged(k)],
                                seen,
                            })
                        }
                    }
                }
            };
            paths.push((id, state));
        }
        own.sort_by(|a, b| a.path.cmp(&b.path));
        let state = State {
            frontier,
            paths: Rc::new(paths),
        };
        Ok((state, own))
    }

    /// The state of a path at which a merge equals every parent.
    fn join(&self, sides: &[State], states: &[Option<&Rc<PathState>>], id: u32) -> Rc<PathState> {
        if let Some(first) = states[0]
            && states
                .iter()
                .all(|s| s.is_some_and(|s| Rc::ptr_eq(s, first)))
        {
            return first.clone();
        }
        let mut origins: Vec<Origin> = sides.iter().flat_map(|s| origins(s, Some(id))).collect();
        origins.sort_unstable();
        origins.dedup();
        Rc::new(PathState {
            origins,
            seen: union_seen(states),
        })
    }

    /// The state of a path at which a merge equals the parents whose `differs` is false, when
    /// they bring that content; `None` when it is the merge's own edit.
    fn brought(
        &mut self,
        sides: &[State],
        states: &[Option<&Rc<PathState>>],
        differs: &[bool],
        id: u32,
    ) -> Result<Option<Rc<PathState>>, git2::Error> {
        let mut origins: Vec<Origin> = sides
            .iter()
            .zip(differs)
            .filter(|(_, d)| !**d)
            .flat_map(|(s, _)| origins(s, Some(id)))
            .collect();
        origins.sort_unstable();
        origins.dedup();
        let others: Vec<&State> = sides
            .iter()
            .zip(differs)
            .filter(|(_, d)| **d)
            .map(|(s, _)| s)
            .collect();
        let origins = self.unseen(origins, &others, Some(id))?;
        if origins.is_empty() {
            // No maker of this content is news to the other sides (or it has none: a path a
            // root lacks).
            return Ok(None);
        }
        let seen = union_seen(states);
        // Usually one side brings it and already knows everything the others do.
        for (state, _) in states.iter().zip(differs).filter(|(_, d)| !**d) {
            if let Some(s) = state
                && s.origins == origins
                && s.seen == seen
            {
                return Ok(Some((*s).clone()));
            }
        }
        Ok(Some(Rc::new(PathState { origins, seen })))
    }

    /// The `origins` of a content that none of `others` has among its ancestors: made by a
    /// change those sides have not seen. (A content made twice, once long ago and once again
    /// by a newer commit, is news to a side that saw only the old making.)
    fn unseen(
        &mut self,
        origins: Vec<Origin>,
        others: &[&State],
        id: Option<u32>,
    ) -> Result<Vec<Origin>, git2::Error> {
        let mut unseen = Vec::with_capacity(origins.len());
        'origins: for o in origins {
            for other in others {
                if self.seen(o, other, id)? {
                    continue 'origins;
                }
            }
            unseen.push(o);
        }
        Ok(unseen)
    }

    /// Whether `side` has the origin `o` of a path among its ancestors (or is it).
    fn seen(&mut self, o: Origin, side: &State, id: Option<u32>) -> Result<bool, git2::Error> {
        match o {
            Origin::Judged(c) => Ok(id
                .and_then(|id| explicit(side, id))
                .is_some_and(|s| s.seen.binary_search(&c).is_ok())),
            Origin::Outside(x) => {
                let frontier = &side.frontier;
                if frontier.binary_search(&x).is_ok() {
                    return Ok(true);
                }
                if let Some(h) = self.hidden {
                    // Every outside commit the range reaches is the hidden one's ancestor: a
                    // side that reaches it has them all, and none other has it.
                    if frontier.binary_search(&h).is_ok() {
                        return Ok(true);
                    }
                    if x == h {
                        return Ok(false);
                    }
                }
                for &f in frontier.iter() {
                    if self.is_ancestor(x, f)? {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
        }
    }

    /// Whether outside commit `a` is an ancestor of outside commit `b`. Asked only when a
    /// merge's side reaches none of the hidden commit's history but through an older commit
    /// (a branch from an old commit that merged another old commit): rare, and cached.
    fn is_ancestor(&mut self, a: u32, b: u32) -> Result<bool, git2::Error> {
        if a == b {
            return Ok(true);
        }
        if let Some(&known) = self.ancestry.get(&(a, b)) {
            return Ok(known);
        }
        let known = self.repo.graph_descendant_of(
            to_git2(self.outside[b as usize])?,
            to_git2(self.outside[a as usize])?,
        )?;
        self.ancestry.insert((a, b), known);
        Ok(known)
    }

    /// The outside commits whose content reaches a merge: its parents' together.
    fn join_frontiers(&self, sides: &[State]) -> Rc<Vec<u32>> {
        let first = &sides[0].frontier;
        if sides.iter().all(|s| Rc::ptr_eq(&s.frontier, first)) {
            return first.clone();
        }
        let mut all: Vec<u32> = sides
            .iter()
            .flat_map(|s| s.frontier.iter().copied())
            .collect();
        all.sort_unstable();
        all.dedup();
        if let Some(h) = self.hidden.filter(|h| all.contains(h)) {
            all = vec![h];
        }
        match sides.iter().find(|s| *s.frontier == all) {
            Some(s) => s.frontier.clone(),
            None => Rc::new(all),
        }
    }
}

/// The state of path `id` at `side`, if a judged commit changed it there.
fn explicit(side: &State, id: u32) -> Option<&Rc<PathState>> {
    side.paths
        .binary_search_by_key(&id, |(p, _)| *p)
        .ok()
        .map(|at| &side.paths[at].1)
}

/// Who made the content of path `id` (`None`: a path no judged commit changed) at `side`.
fn origins(side: &State, id: Option<u32>) -> Vec<Origin> {
    match id.and_then(|id| explicit(side, id)) {
        Some(s) => s.origins.clone(),
        None => side.frontier.iter().map(|&o| Origin::Outside(o)).collect(),
    }
}

fn union_seen(states: &[Option<&Rc<PathState>>]) -> Vec<u32> {
    let mut seen: Vec<u32> = states
        .iter()
        .flatten()
        .flat_map(|s| s.seen.iter().copied())
        .collect();
    seen.sort_unstable();
    seen.dedup();
    seen
}
