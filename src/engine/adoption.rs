//! Where the gate starts on history from before guard was adopted. A range whose base holds
//! no ledger (a push into a new or not yet guarded repository, an audit of old history) but
//! whose tip does is judged from the commit that added the ledger on the tip's first-parent
//! line: the commits before it had no ledger, no trailers and no policy to follow, and judged
//! one by one they gave one finding per few commits (1,472 errors for one project's history)
//! and ran past the hooks' timeout. They are counted in one warning instead.
//!
//! Safe because the commit that adds the ledger is judged (by the policy in force before it,
//! so it must be a human's with the ledger's trailers), and only commits that are its
//! ancestors are left out: anything merged in after it is judged, and a merge cannot be the
//! adoption point (the ledger would come from a side branch no single commit judged here
//! added). It must be the first ledger on its line (not one deleted and added again), and
//! where guard is adopted already it must be the default line's own adoption commit: the
//! hooks look for it only while no ledger is in force, and an audit only accepts the default
//! branch's. A range whose base holds the ledger is unchanged.

use crate::git::{self, ObjectId, Repository};
use crate::report::finding::{Code, Finding};
use crate::wording::count;

/// The commit that added the ledger on the tip's first-parent line, and its parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Adoption {
    pub commit: ObjectId,
    pub parent: ObjectId,
}

/// The adoption point of the range `base..tip`, when its base holds no ledger at `ledger`
/// and the tip's first-parent line adds one in a commit of its own, for the first time.
/// `default_line`: the tip of the repository's default branch, when it may hold a ledger
/// already; then only the commit that adopted guard there is an adoption point (a copy of
/// it on a branch from older history would pass the commits under it as "before adoption").
pub fn start(
    repo: &Repository,
    base: Option<ObjectId>,
    tip: ObjectId,
    ledger: &str,
    default_line: Option<ObjectId>,
) -> anyhow::Result<Option<Adoption>> {
    if let Some(base) = base
        && git::commit::holds_blob(repo, base, ledger)?
    {
        return Ok(None);
    }
    let Some((commit, parent)) = git::commit::first_parent_adding(repo, tip, ledger)? else {
        return Ok(None);
    };
    if let Some(line) = default_line
        && git::commit::holds_blob(repo, line, ledger)?
    {
        let adopted = git::commit::first_parent_adding(repo, line, ledger)?;
        if adopted.map(|(c, _)| c) != Some(commit) {
            return Ok(None);
        }
    }
    // The base may already be past the adoption point's parent (it holds no ledger only
    // because a later commit removed it): then nothing of the range is before adoption.
    if base.is_some_and(|b| b == parent) {
        return Ok(None);
    }
    Ok(Some(Adoption { commit, parent }))
}

/// For an audit (`guard check`) of old history: the adoption point of the repository's
/// default line (`origin/HEAD` in a clone, else `HEAD`) when the whole range `base..tip`
/// comes before it: neither end holds the ledger, and `tip` is the adoption commit's parent
/// or one of its ancestors. Never for a push: pushed commits are new, and are judged.
pub fn range_predates(
    repo: &Repository,
    base: Option<ObjectId>,
    tip: ObjectId,
    ledger: &str,
) -> anyhow::Result<Option<Adoption>> {
    if git::commit::holds_blob(repo, tip, ledger)? {
        return Ok(None);
    }
    if let Some(base) = base
        && git::commit::holds_blob(repo, base, ledger)?
    {
        return Ok(None);
    }
    let Some(default) = default_line(repo) else {
        return Ok(None);
    };
    let Some((commit, parent)) = git::commit::first_parent_adding(repo, default, ledger)? else {
        return Ok(None);
    };
    let before = parent == tip || git::commit::descends_from(repo, parent, tip)?;
    Ok(before.then_some(Adoption { commit, parent }))
}

/// The tip of the default line an audit trusts: `origin/HEAD` in a clone, else `HEAD`.
pub fn default_line(repo: &Repository) -> Option<ObjectId> {
    ["refs/remotes/origin/HEAD", "HEAD"]
        .iter()
        .find_map(|r| git::refs::tip(repo, r).ok().flatten())
}

/// The warning that counts the `skipped` commits before `adoption`.
pub fn warning(repo: &Repository, adoption: Adoption, ledger: &str, skipped: usize) -> Finding {
    let short = git::short_id(repo, adoption.commit);
    Finding::new(
        Code::BeforeAdoption,
        format!(
            "{} before {short}, the commit that adds {ledger} (where the gate starts), {} not judged",
            count(skipped, "commit"),
            if skipped == 1 { "was" } else { "were" }
        ),
    )
    .help(format!(
        "nothing to fix: history from before guard was adopted has no trailers to judge; {short} and every commit after it were judged"
    ))
}
