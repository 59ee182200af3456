//! `[[bots]]` applied to a commit: which of its protected changes are the one kind of change
//! the ledger allows its author (`policy::bots`), read from the commit's and its parent's
//! trees. What is allowed is not judged as an edit; any other byte is.

use crate::changes::Change;
use crate::git::ObjectId;
use crate::git::protected::ProtectedSet;
use crate::git::trees::Trees;
use crate::policy::ledger::Policy;

/// The paths of `changes` (a non-merge commit's, from `parent` to `tree`) that a `[[bots]]`
/// allowance of `author` covers and whose change is of the allowed kind alone.
pub(super) fn allowed_changes(
    trees: &Trees,
    policy: &Policy,
    protected: &ProtectedSet,
    author: &str,
    parent: ObjectId,
    tree: ObjectId,
    changes: &[Change],
) -> anyhow::Result<Vec<String>> {
    let allowances = policy.bots.of(author);
    if allowances.is_empty() {
        return Ok(Vec::new());
    }
    let mut allowed = Vec::new();
    for change in changes {
        // A name that only folds to a protected path, and anything beyond `[protect]`'s
        // globs (the ledger, the freeze file, fixtures, harness...), no bot may change.
        // Nor an attribute file on the way: it changes the bytes a checkout writes, and
        // what a kind reads of it is not what git reads.
        let name = change.path.rsplit('/').next().unwrap_or(&change.path);
        if change.case_variant_of.is_some()
            || !protected.protect_only(&change.path)
            || matches!(name, ".gitattributes" | ".lfsconfig")
        {
            continue;
        }
        let kinds: Vec<_> = allowances
            .iter()
            .filter(|a| a.set.is_match(&change.path))
            .map(|a| a.change)
            .collect();
        if kinds.is_empty() {
            continue;
        }
        let (Some(old), Some(new)) = (
            trees.blob_text(parent, &change.path)?,
            trees.blob_text(tree, &change.path)?,
        ) else {
            continue;
        };
        if kinds.iter().any(|k| k.allows(&change.path, &old, &new)) {
            allowed.push(change.path.clone());
        }
    }
    Ok(allowed)
}
