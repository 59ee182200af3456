//! What one commit brings along protected paths against its parents: the comparison both
//! the range's walk (`walk`) and the look-ahead while the range is listed (`ahead`) make, so
//! that neither depends on the other for it.

use anyhow::Context as _;

use crate::changes::{Change, MalformedTree};
use crate::git::ObjectId;
use crate::git::protected::ProtectedSet;
use crate::git::range::Commits;
use crate::git::trees::Trees;

/// One commit's protected changes against each parent (or none) and its malformed trees.
pub type CommitWalked = (Vec<Vec<Change>>, Vec<MalformedTree>);

/// Commit `k`'s part of `walk_commits`.
pub fn walk_commit(
    trees: &Trees,
    commits: &Commits,
    protected: &ProtectedSet,
    fsck: bool,
    k: usize,
) -> anyhow::Result<CommitWalked> {
    let (tree, parent_trees) = commits.trees(k);
    walk_trees(trees, protected, fsck, tree, parent_trees).with_context(|| {
        format!(
            "reading the trees of commit {} and its parents",
            commits.ids()[k]
        )
    })
}

/// What a commit whose tree is `tree` brings against its parents' `parent_trees`.
pub fn walk_trees(
    trees: &Trees,
    protected: &ProtectedSet,
    fsck: bool,
    tree: ObjectId,
    parent_trees: &[ObjectId],
) -> anyhow::Result<CommitWalked> {
    // A root commit is compared with the empty tree.
    let lists = if parent_trees.is_empty() {
        vec![protected.changes(trees, tree, None)?]
    } else {
        parent_trees
            .iter()
            .map(|&p| protected.changes(trees, tree, Some(p)))
            .collect::<Result<_, _>>()?
    };
    let against_parents = if lists.iter().all(Vec::is_empty) {
        Vec::new()
    } else {
        lists
    };
    let malformed = if fsck {
        protected.malformed_trees(trees, tree, parent_trees)?
    } else {
        Vec::new()
    };
    Ok((against_parents, malformed))
}
