//! An agent's merge judged against git's own merge of its parents (`git::merge`): what a
//! clean three-way merge gives at a path, the parents brought; any other content there, and
//! any content where git's merge conflicts, is the merge's own edit, judged as any agent
//! edit is (`agent_edit_protected`, `agent_added_lease` against the merged text,
//! `weakened_test` against the merged test).
//!
//! `Lineage` decides the same question from the range's own commits for every merge, cheaply,
//! but per whole file: a side branch's whole freeze file taken back over main's, or a test
//! gutted in a merge with a branch that predates it, looked brought. A real merge is computed
//! only for an agent's merges that differ from a parent at a protected path or a test file.

use std::collections::BTreeSet;

use crate::changes::Change;
use crate::git::Repository;
use crate::git::merge::{GitMerge, Merged};
use crate::git::protected::ProtectedSet;
use crate::git::range::Commits;
use crate::git::trees::Trees;

/// git's merges of the parents of a range's merge commits, through one in-memory handle
/// opened when first needed.
pub(super) struct GitMerges<'r> {
    repo: &'r Repository,
    handle: Option<GitMerge>,
}

impl<'r> GitMerges<'r> {
    pub(super) fn new(repo: &'r Repository) -> GitMerges<'r> {
        GitMerges { repo, handle: None }
    }

    /// git's merge of the parents of commit `k` of `commits`, and the handle that reads it.
    pub(super) fn of_commit(
        &mut self,
        commits: &Commits,
        k: usize,
    ) -> anyhow::Result<(&GitMerge, Merged)> {
        if self.handle.is_none() {
            self.handle = Some(GitMerge::open(self.repo)?);
        }
        let handle = self.handle.as_ref().expect("opened above");
        let merged = handle.merge(&commits.parent_ids(k)).map_err(|e| {
            anyhow::anyhow!(
                "merging the parents of merge {} as git would, to tell its own edits: {}",
                commits.ids()[k],
                e.message()
            )
        })?;
        Ok((handle, merged))
    }
}

/// An agent's merge against git's merge of its parents.
pub(super) struct AgentMerge<'m> {
    handle: &'m GitMerge,
    merged: Merged,
    /// The merge's own protected edits: its changes against the merged tree, and its
    /// changes against a parent at each path where the merge conflicted.
    pub(super) own: Vec<Change>,
}

impl AgentMerge<'_> {
    /// The merged text at `path`, unless git's merge conflicted there (`None`); inner `None`
    /// when the merge has nothing there.
    pub(super) fn merged_text(&self, path: &str) -> anyhow::Result<Option<Option<String>>> {
        if self.merged.conflicted.contains(path) {
            return Ok(None);
        }
        let trees = Trees::new(self.handle.repo())?;
        Ok(Some(trees.blob_text(self.merged.tree, path)?))
    }
}

/// Merge `k`'s own protected edits: against git's merge of its parents, and wherever that
/// merge conflicted, each path at which the merge differs from a parent (`against_parents`,
/// one change per path).
pub(super) fn own_protected_edits<'m>(
    merges: &'m mut GitMerges,
    commits: &Commits,
    k: usize,
    protected: &ProtectedSet,
    against_parents: &[Change],
) -> anyhow::Result<AgentMerge<'m>> {
    let (tree, _) = commits.trees(k);
    let (handle, merged) = merges.of_commit(commits, k)?;
    let trees = Trees::new(handle.repo())?;
    let mut own = protected.changes(&trees, tree, Some(merged.tree))?;
    for change in against_parents {
        if conflicted_at(&merged.conflicted, change) && !own.iter().any(|c| c.path == change.path) {
            own.push(change.clone());
        }
    }
    own.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(AgentMerge {
        handle,
        merged,
        own,
    })
}

/// Whether git's merge conflicted at `change`'s path (or at the protected path it is a
/// variant of).
fn conflicted_at(conflicted: &BTreeSet<String>, change: &Change) -> bool {
    conflicted.contains(&change.path)
        || change
            .case_variant_of
            .as_ref()
            .is_some_and(|p| conflicted.contains(p))
}

/// Of each path, the first change (`lists`: a commit's changes against each parent).
pub(super) fn union_of(lists: &[Vec<Change>]) -> Vec<Change> {
    let mut all: Vec<Change> = Vec::new();
    for change in lists.iter().flatten() {
        if !all.iter().any(|c| c.path == change.path) {
            all.push(change.clone());
        }
    }
    all.sort_by(|a, b| a.path.cmp(&b.path));
    all
}
