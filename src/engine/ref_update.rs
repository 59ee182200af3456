//! The one judge of a ref update, which both hooks call: the server's `pre-receive` and the
//! developer's `pre-push`. What differs between them (where the old tip, the default branch,
//! the artifacts and the pusher come from) is the hook's to gather into an `Update`; what a
//! ref update means for the gate is decided here once.

use jiff::civil::Date;

use crate::engine::adoption;
use crate::engine::audit::{self, CheckOptions, Judged, rewind_findings};
use crate::git::{Oid, Repository, range};
use crate::policy::ledger::Policy;
use crate::report::{Finding, Report};

/// One ref update to judge, as a hook learned it.
pub struct Update<'a> {
    /// The ref's full name, as reports show it.
    pub name: &'a str,
    /// The tip the receiving side holds now: a non-fast-forward update is checked against it
    /// for protected changes it undoes.
    pub old: Option<Oid>,
    /// Where the judged range starts: its policy files and fixtures are the base (the old
    /// tip, else the default branch, or what the pushing clone last saw of the remote).
    pub base: Option<Oid>,
    /// What the receiving side already has: commits reachable from these are not judged.
    pub known: Vec<Oid>,
    /// The new tip (a commit).
    pub new: Oid,
    /// The policy in force (the default branch's, or `guard.policyRef`'s).
    pub policy: &'a Policy,
    /// Findings the hook made about the update before its commits are judged (a re-created
    /// ref, missing CI artifacts); reported after a rewind's and before the commits'.
    pub prior: Vec<Finding>,
    /// How the commits and the tip are judged (`CheckOptions::range` is unused here).
    pub options: CheckOptions,
    pub today: Date,
}

/// Judges `update`: the protected changes a rewind undoes, then the commits it brings and
/// its tip. The report's history says how many commits were judged.
pub fn judge(repo: &Repository, update: Update) -> anyhow::Result<Report> {
    let ledger = update.options.ledger.as_deref();
    // A push of history the receiving side never had, from before its ledger's first
    // commit (a project adopting guard, pushed into a new guarded repository), is judged
    // from that commit on (`adoption`).
    let ledger_path = ledger.unwrap_or(crate::policy::ledger::DEFAULT_LEDGER_PATH);
    let mut known = update.known.clone();
    // Only where no ledger is in force yet (the policy ref holds none): once the receiving
    // side has adopted guard, every commit a push brings is judged, also on a branch made
    // from history older than the adoption (an agent's commits there, topped by a copy of
    // the ledger's commit, would otherwise be history "before adoption").
    let adopting = update.policy.files_optional();
    let start = match adopting {
        true => adoption::start(repo, update.base, update.new, ledger_path, None)?,
        false => None,
    };
    let before_adoption = match start {
        Some(a) => {
            let skipped = range::commits(repo, a.parent, &known)?.len();
            known.push(a.parent);
            (skipped > 0).then(|| adoption::warning(repo, a, ledger_path, skipped))
        }
        None => None,
    };
    let commits = range::commits(repo, update.new, &known)?;
    let mut findings = match update.old {
        Some(old) => rewind_findings(
            repo,
            update.policy,
            (old, update.new),
            ledger,
            Some(&commits),
        )?,
        None => Vec::new(),
    };
    findings.extend(update.prior);
    let judged = Judged {
        base: update.base,
        tip: update.new,
        commits: &commits,
        spec: update.name,
    };
    let mut report = audit::judge(
        repo,
        &judged,
        &update.options,
        update.today,
        Some(update.policy.clone()),
    )?;
    findings.append(&mut report.findings);
    report.findings = findings;
    report.warnings.extend(before_adoption);
    Ok(report)
}
