//! The malformed trees (git's fsck rules) a commit brings on the way to protected paths: the
//! second walk over the same trees as the comparison in `protected`, with its own memory of
//! the trees it checked.

use std::collections::HashSet;
use std::rc::Rc;

use git2::{ObjectType, Oid};

use super::{ProtectedSet, TREE_MODE, lookup};
use crate::git::ObjectId;
use crate::git::fsck::{self, MalformedTree};
use crate::git::id::to_git2;
use crate::git::path_in;
use crate::git::path_variants::{Component, Match, match_name};
use crate::git::raw_tree::{RawEntry, RawTree};
use crate::git::trees::{Differing, Trees};

impl ProtectedSet {
    /// The malformed trees (git's fsck rules) that the tree `tree` brings on the way to
    /// protected paths, against the trees `parents` of its commit's parents (none for a root
    /// commit): the root, the directories along each protected path or a variant of it, and
    /// every directory below a protected directory. A subtree identical to the same-named
    /// entry of a parent is skipped: this commit did not bring it.
    pub fn malformed_trees(
        &self,
        trees: &Trees,
        tree: ObjectId,
        parents: &[ObjectId],
    ) -> Result<Vec<MalformedTree>, git2::Error> {
        if parents.contains(&tree) {
            return Ok(Vec::new());
        }
        let root = trees.get(to_git2(tree)?)?;
        let olds: Vec<Option<Rc<RawTree>>> = parents
            .iter()
            .map(|&p| trees.get(to_git2(p)?).map(Some))
            .collect::<Result<_, _>>()?;
        let mut out = fsck::malformed(&root, "");
        // Most commits bring no new directory under the top-level names protected paths
        // start with: then the root was all there was to check.
        let new_top = root.iter().any(|e| {
            e.kind() == Some(ObjectType::Tree) && {
                let name = e.entry_name();
                self.tops
                    .iter()
                    .any(|top| match_name(name, std::slice::from_ref(top)) != Match::No)
                    && !olds.iter().flatten().any(|old| {
                        lookup(old, e.name_bytes())
                            .is_some_and(|(id, _)| id.as_bytes() == e.id().as_bytes())
                    })
            }
        });
        if !new_top && self.rules.iter().all(|r| !r.components.is_empty()) {
            return Ok(out);
        }
        let mut walk = FsckWalk {
            trees,
            checked: OidSet::from_iter([root.id()]),
            below: OidSet::default(),
            out: std::mem::take(&mut out),
        };
        let paths: Vec<&[Component]> = self.rules.iter().map(|r| &r.components[..]).collect();
        walk.along(&root, &olds, &paths, "")?;
        Ok(walk.out)
    }
}

/// The walk behind `ProtectedSet::malformed_trees`.
struct FsckWalk<'a, 'r> {
    trees: &'a Trees<'r>,
    /// Trees already checked, and trees whose subdirectories were already walked (rules
    /// share directories).
    checked: OidSet,
    below: OidSet,
    out: Vec<MalformedTree>,
}

/// A set of object ids, hashed by foldhash over each id's own bytes (`git::oid_hash`; SipHash
/// on every tree of a commit's walk cost more than the lookups saved), randomly seeded (a
/// pusher can grind ids).
type OidSet = HashSet<Oid, crate::git::oid_hash::SeededOidHash>;

impl<'r> FsckWalk<'_, 'r> {
    fn check(&mut self, tree: &RawTree, path: &str) {
        if self.checked.insert(tree.id()) {
            self.out.extend(fsck::malformed(tree, path));
        }
    }

    /// Checks `new` (at `path`) and the directories along each of `paths` (what is left of
    /// each protected path) below it that differ from the same-named directory of every tree
    /// in `olds`. All paths are followed in one pass over each directory.
    fn along(
        &mut self,
        new: &RawTree,
        olds: &[Option<Rc<RawTree>>],
        paths: &[&[Component]],
        path: &str,
    ) -> Result<(), git2::Error> {
        self.check(new, path);
        if paths.iter().any(|p| p.is_empty()) {
            // A protected directory: everything below it counts.
            return self.below(new, olds, path);
        }
        let mut rests: Vec<&[Component]> = Vec::new();
        let brought = self.brought(new, olds);
        for entry in brought.0.iter().filter_map(|&i| new.get(i)) {
            if entry.kind() != Some(ObjectType::Tree) {
                continue;
            }
            let name = entry.name_bytes();
            let classified = entry.entry_name();
            rests.clear();
            for &p in paths {
                let taken = match match_name(classified, p) {
                    Match::No => continue,
                    Match::Exact => 1,
                    Match::Variant(n) => n,
                };
                rests.push(&p[taken..]);
            }
            if rests.is_empty() {
                continue;
            }
            let Some(subs) = self.counterparts(&entry, olds)? else {
                continue;
            };
            let sub = self.trees.get(entry.id())?;
            self.along(&sub, &subs, &rests, &path_in(path, name))?;
        }
        Ok(())
    }

    /// Checks every directory below `new` that differs from its counterpart in `olds`.
    fn below(
        &mut self,
        new: &RawTree,
        olds: &[Option<Rc<RawTree>>],
        path: &str,
    ) -> Result<(), git2::Error> {
        if !self.below.insert(new.id()) {
            return Ok(());
        }
        let brought = self.brought(new, olds);
        for entry in brought.0.iter().filter_map(|&i| new.get(i)) {
            if entry.kind() != Some(ObjectType::Tree) {
                continue;
            }
            let Some(subs) = self.counterparts(&entry, olds)? else {
                continue;
            };
            let sub = self.trees.get(entry.id())?;
            let sub_path = path_in(path, entry.name_bytes());
            self.check(&sub, &sub_path);
            self.below(&sub, &subs, &sub_path)?;
        }
        Ok(())
    }

    /// The entries of `new` (in `.0`) that are not the same entry, at the same place, in the
    /// first of `olds` (all of them when it has no such directory): the only ones that can
    /// be new to the commit.
    fn brought(&self, new: &RawTree, olds: &[Option<Rc<RawTree>>]) -> Rc<Differing> {
        let first = olds.first().cloned().flatten();
        self.trees.differing(Some(new), first.as_deref())
    }

    /// The directories named like `entry` in `olds`; `None` when one of them is `entry`'s
    /// own tree (nothing new below).
    fn counterparts(
        &self,
        entry: &RawEntry,
        olds: &[Option<Rc<RawTree>>],
    ) -> Result<Option<Vec<Option<Rc<RawTree>>>>, git2::Error> {
        let mut subs = Vec::with_capacity(olds.len());
        for old in olds {
            let sub = match old.as_ref().and_then(|o| lookup(o, entry.name_bytes())) {
                Some((id, _)) if id.as_bytes() == entry.id().as_bytes() => return Ok(None),
                Some((id, mode)) if mode == TREE_MODE => Some(self.trees.get(id)?),
                _ => None,
            };
            subs.push(sub);
        }
        Ok(Some(subs))
    }
}
