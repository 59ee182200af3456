//! The engine behind `guard check` (and the hooks): judges the commits a range brings for
//! provenance under the policy of the range's base, and what its agent commits did to the
//! tests (`weakened`), then scores the range's tip (fixtures from git, and artifacts when
//! given) under the same policy.

use jiff::civil::Date;

use crate::engine::adoption;
use crate::engine::ahead::{self, Ahead};
use crate::engine::context::{WhoContext, base_of, load_policy, load_signers};
use crate::engine::score::Artifacts;
use crate::engine::walk::{Walk, walk_commits};
use crate::engine::weakened;
use crate::git::commit::{self, Commit};
use crate::git::lineage::Lineage;
use crate::git::protected::ProtectedSet;
use crate::git::range::{self, Commits};
use crate::git::tree_source::GitTree;
use crate::git::trees::Trees;
use crate::git::{self, ObjectId, Repository};
use crate::policy::ledger::{DEFAULT_LEDGER_PATH, Policy};
use crate::policy::load::load_freeze;
use crate::policy::signers::AllowedSigners;
use crate::report::finding::Finding;
use crate::report::{History, Report};
use crate::rules::history;
use crate::rules::provenance::ProvenanceInput;

mod commit_judge;
mod tip;

use commit_judge::{CommitContext, commit_outcomes, widened_by_range_ledgers};
use tip::{TipSide, judge_tip};

/// What to check.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// `A..B`, `A...B` or one commit; `None` for `@{upstream}..HEAD`.
    pub range: Option<String>,
    /// The ledger's path inside the base revision (default `qa/merge_ledger.toml`).
    pub ledger: Option<String>,
    /// The authenticated pusher (hooks).
    pub pusher: Option<String>,
    pub artifacts: Artifacts,
    /// An allowed-signers file from the server's config (`guard.allowedSigners`), which
    /// overrides the ledger's `[humans] allowed_signers`.
    pub allowed_signers: Option<std::path::PathBuf>,
    /// Which judged commits the report describes (who made it, whether an agent, its
    /// signature).
    pub describe: Describe,
    /// The revision the policy was read from, when it is not the range's base (hooks: the
    /// default branch's tip). The freeze file's lease rule and the allowed signers come from
    /// it too, so a branch made at an old commit brings none of them back.
    pub policy_revision: Option<ObjectId>,
    /// A time at which every signing key must be valid as well as at the committer date,
    /// which the committer writes (hooks: the time of the push).
    pub signatures_valid_at: Option<jiff::Timestamp>,
    /// Whether the base passed the gate (hooks: the ref's old tip, or the default branch), so
    /// that fixtures whose blob is unchanged since the base are not hashed again. An audited
    /// range's base need not have (guard installed later, a push past a disabled hook), nor
    /// does a base that came in by break-glass.
    pub trust_base_fixtures: bool,
    /// Compare a long range's trees on two threads (`walk_commits`: from 256 commits on),
    /// and, in `check`, where the pack files are small enough for each thread to read them
    /// apart (`git::packs_fit_apart`), start comparing without a commit-graph while the range
    /// is listed (`ahead`). `guard check` and both hooks do: a long push takes less time on
    /// two threads for a little more CPU (BENCHMARKS.md, "Measured choices", M1).
    pub two_threads: bool,
}

/// Which judged commits a report describes. Commits that change no protected path cannot
/// break a rule, and describing them means reading every commit object of the range, which
/// costs more than judging it (a third of a 1,000-commit push's hook).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Describe {
    /// Those that change protected paths.
    #[default]
    Changed,
    /// Every one.
    All,
    /// Every one when signatures are checked (the hooks name each commit's signer), else
    /// as `Changed`.
    AllWhenSigned,
}

/// The commits a judgement covers: `commits` (oldest first) lead from `base` to `tip`; `spec`
/// names them in reports (`A..B`, or the ref a hook judges).
pub struct Judged<'a> {
    pub base: Option<ObjectId>,
    pub tip: ObjectId,
    pub commits: &'a Commits,
    pub spec: &'a str,
}

/// Checks a range of `repo`.
pub fn check(repo: &Repository, opts: &CheckOptions, today: Date) -> anyhow::Result<Report> {
    let range = range::resolve(repo, opts.range.as_deref())?;
    // History from before the ledger's first commit is counted, not judged (`adoption`).
    let adoption = adoption::start(
        repo,
        range.base,
        range.tip,
        &ledger_path(opts),
        adoption::default_line(repo),
    )?;
    let mut hide_list: Vec<ObjectId> = range.base.into_iter().collect();
    let before_adoption = match adoption {
        Some(a) => {
            let skipped = range::commits(repo, a.parent, &hide_list)?.len();
            hide_list.push(a.parent);
            (skipped > 0).then(|| adoption::warning(repo, a, &ledger_path(opts), skipped))
        }
        // A range of old history, all of it from before the default line adopted guard: no
        // commit of it is judged (they have no trailers to judge), one warning counts them.
        None => match adoption::range_predates(repo, range.base, range.tip, &ledger_path(opts))? {
            Some(a) => {
                let skipped = range::commits(repo, range.tip, &hide_list)?.len();
                hide_list.push(range.tip);
                (skipped > 0).then(|| adoption::warning(repo, a, &ledger_path(opts), skipped))
            }
            None => None,
        },
    };
    let hide = hide_list.as_slice();
    // With two threads, the policy is read first, so that the second thread can compare
    // trees while the range is listed (`ahead`), through pack readers of its own: where the
    // packs are too large for those (`packs_fit_apart`), the thread's reads and the walk's
    // unmap each other's windows, and the range is only listed. A policy that cannot be read
    // is read again below, and fails there as it always did.
    let policy = match opts.two_threads && git::packs_fit_apart(repo) {
        true => policy_of_base(repo, range.base, opts).ok(),
        false => None,
    };
    let (commits, ahead) = match &policy {
        Some(policy) => {
            let protected = ProtectedSet::new(policy, &ledger_path(opts));
            let (commits, ahead) = ahead::commits(repo, range.tip, hide, &protected)?;
            (commits, Some(ahead))
        }
        None => (range::commits(repo, range.tip, hide)?, None),
    };
    let judged = Judged {
        base: range.base,
        tip: range.tip,
        commits: &commits,
        spec: &range.spec,
    };
    let mut report = judge_listed_range(repo, &judged, opts, today, policy, ahead.as_ref())?;
    report.warnings.extend(before_adoption);
    Ok(report)
}

/// The ledger's path in the base revision.
fn ledger_path(opts: &CheckOptions) -> String {
    opts.ledger
        .clone()
        .unwrap_or_else(|| DEFAULT_LEDGER_PATH.to_string())
}

/// The policy in force for a range whose base is `base`, read as `judge` reads it.
fn policy_of_base(
    repo: &Repository,
    base: Option<ObjectId>,
    opts: &CheckOptions,
) -> anyhow::Result<Policy> {
    let (base_short, base_tree) = base_of(repo, base)?;
    load_policy(
        base_tree.as_ref(),
        &ledger_path(opts),
        base_short.as_deref(),
    )
}

/// Judges the commits of `judged` for provenance under the policy of its base, then scores
/// its tip. `known_policy` is that policy when the caller has read it already (the hooks read
/// it first, from the default branch, to learn whether the ref is protected; see `policy_at`).
pub fn judge(
    repo: &Repository,
    judged: &Judged,
    opts: &CheckOptions,
    today: Date,
    known_policy: Option<Policy>,
) -> anyhow::Result<Report> {
    judge_listed_range(repo, judged, opts, today, known_policy, None)
}

/// `judge`, with what was compared while the range was listed (`ahead`, from the policy
/// `known_policy`).
fn judge_listed_range(
    repo: &Repository,
    judged: &Judged,
    opts: &CheckOptions,
    today: Date,
    known_policy: Option<Policy>,
    ahead: Option<&Ahead>,
) -> anyhow::Result<Report> {
    let Judged {
        base,
        tip,
        commits,
        spec,
    } = *judged;
    let ledger_path = ledger_path(opts);
    let (base_short, base_tree) = base_of(repo, base)?;
    let policy = match known_policy {
        Some(p) => p,
        None => load_policy(base_tree.as_ref(), &ledger_path, base_short.as_deref())?,
    };
    let protected = ProtectedSet::new(&policy, &ledger_path);
    let restore_from = base_short.clone().unwrap_or_else(|| "--root".to_string());
    let mut findings = Vec::new();
    let mut summaries = Vec::new();
    let mut policy_changes = Vec::new();
    let mut agent_added_leases = 0;
    let (reject_if_agent_adds_lease, signers) =
        what_the_policy_brings(repo, opts, base, base_tree.as_ref(), &policy)?;
    let input = ProvenanceInput {
        trailers: &policy.trailers,
        reject_if_agent_adds_lease,
        seeds: policy.properties.seeds.as_deref(),
        property_files: &policy.properties.files,
    };
    let needs_proof = needs_proof(&policy);

    let ctx = CommitContext {
        policy: &policy,
        protected: &protected,
        input,
        needs_proof,
        signers: signers.as_ref(),
        pusher: opts.pusher.as_deref(),
        restore_from: &restore_from,
        describe_all: match opts.describe {
            Describe::Changed => false,
            Describe::All => true,
            Describe::AllWhenSigned => signers.is_some(),
        },
        signatures_valid_at: opts.signatures_valid_at,
        two_threads: opts.two_threads,
    };
    let judge_who = WhoContext {
        policy: &policy,
        needs_proof,
        signers: signers.as_ref(),
        pusher: opts.pusher.as_deref(),
        signatures_valid_at: opts.signatures_valid_at,
    };
    // What agent commits did to the tests themselves, whatever the reports say: judged in
    // the same pass over the range's trees.
    let mut weakened = weakened::Judge::new(repo, commits, &judge_who, &restore_from);
    let mut outcomes = commit_outcomes(repo, commits, &ctx, Some(&mut weakened), ahead)?;
    let weakened = weakened.finish();
    if let Some(widened) =
        widened_by_range_ledgers(repo, commits, &outcomes, &protected, &ledger_path)?
    {
        let ctx = CommitContext {
            protected: &widened,
            ..ctx
        };
        outcomes = commit_outcomes(repo, commits, &ctx, None, None)?;
    }
    for outcome in outcomes {
        findings.extend(outcome.findings);
        agent_added_leases += outcome.leases_added;
        summaries.extend(outcome.summary);
        policy_changes.extend(outcome.policy_changes);
    }

    findings.extend(weakened.rejects);
    let tip_side = TipSide {
        base,
        tip,
        commits,
        base_short: base_short.as_deref(),
        base_tree: base_tree.as_ref(),
        restore_from: &restore_from,
        ledger_path: &ledger_path,
        artifacts: &opts.artifacts,
        trust_base_fixtures: opts.trust_base_fixtures,
        signers_from_ledger: opts.allowed_signers.is_none(),
    };
    let (mut warnings, mut stats, unjudged) =
        judge_tip(repo, today, &judge_who, &tip_side, &mut findings)?;
    stats.agent_added_leases = Some(agent_added_leases);
    warnings.extend(weakened.warnings);
    let mut report = Report::judged(&policy, findings, warnings, stats);
    report.unjudged = unjudged;
    report.history = Some(History {
        range: spec.to_string(),
        base: base.map(|b| b.to_string()),
        tip: tip.to_string(),
        judged: commits.len(),
        commits: summaries,
        policy_changes,
    });
    Ok(report)
}

/// Signatures are checked when the policy needs proof of a human, or names signers.
fn needs_proof(policy: &Policy) -> bool {
    policy.humans.require_signature || policy.agents.default_agent
}

/// What comes with the policy from where it was read (the policy revision, else the base):
/// its freeze file's `reject_if_agent_adds_lease` (true when it cannot be read) and the
/// allowed signers.
fn what_the_policy_brings(
    repo: &Repository,
    opts: &CheckOptions,
    base: Option<ObjectId>,
    base_tree: Option<&GitTree>,
    policy: &Policy,
) -> anyhow::Result<(bool, Option<AllowedSigners>)> {
    let policy_tree = match opts.policy_revision.filter(|&r| Some(r) != base) {
        Some(r) => Some(GitTree::new(
            repo,
            r,
            format!("commit {}", git::short_id(repo, r)),
        )?),
        None => None,
    };
    let policy_tree = policy_tree.as_ref().or(base_tree);
    let reject_if_agent_adds_lease = match policy_tree {
        Some(t) => load_freeze(t, policy)
            .map(|f| f.reject_if_agent_adds_lease)
            .unwrap_or(true),
        None => true,
    };
    let signers = load_signers(
        policy_tree,
        policy,
        opts.allowed_signers.as_deref(),
        needs_proof(policy),
    )?;
    Ok((reject_if_agent_adds_lease, signers))
}

/// A non-fast-forward update drops commits. A protected path that differs between the old
/// and the new tip, where the new tip's content (or absence) was made by no commit the update
/// brings but comes from history the old tip already had, is undone by the rewind itself: no
/// commit carries that change, so no trailer or signature can approve it. (A rebase that
/// re-applies a protected change is judged through its new commits.) Who made the new tip's
/// content is `Lineage`'s answer, not a merge base's: a merge of two old commits has two
/// bases, and against the wrong one an old content taken back looks brought.
///
/// `listed`: the commits `new` brings over `old`, when the caller has listed them already.
/// One of them with `old` as a parent shows a fast-forward without asking libgit2, which
/// walks the commits again for it (a tenth of a 1,000-commit push's hook).
pub fn rewind_findings(
    repo: &Repository,
    policy: &Policy,
    (old, new): (ObjectId, ObjectId),
    ledger: Option<&str>,
    listed: Option<&Commits>,
) -> anyhow::Result<Vec<Finding>> {
    if old == new
        || listed.is_some_and(|commits| commits.has_parent_outside(old))
        || commit::descends_from(repo, new, old)?
    {
        return Ok(Vec::new());
    }
    let protected = ProtectedSet::new(policy, ledger.unwrap_or(DEFAULT_LEDGER_PATH));
    let trees = Trees::new(repo)?;
    let old_tree = Commit::find(repo, old)?.tree_id()?;
    let new_tree = Commit::find(repo, new)?.tree_id()?;
    let differing = protected.changes(&trees, new_tree, Some(old_tree))?;
    if differing.is_empty() {
        return Ok(Vec::new());
    }
    // The commits the update brings, and who made the new tip's protected contents.
    let commits = range::commits(repo, new, &[old])?;
    let made_by_update: Vec<String> = match commits.ids().iter().position(|&id| id == new) {
        None => Vec::new(),
        Some(tip) => {
            let how = Walk {
                fsck: false,
                threads: 1,
                ahead: None,
            };
            let walked = walk_commits(&trees, &commits, &protected, None, how)?;
            let (lineage, _) = Lineage::resolve(repo, &commits, walked.against_parents)?;
            differing
                .iter()
                .filter(|c| lineage.made_in_range(tip, &c.path))
                .map(|c| c.path.clone())
                .collect()
        }
    };
    let old_short = git::short_id(repo, old);
    Ok(differing
        .into_iter()
        .filter(|c| !made_by_update.contains(&c.path))
        .map(|c| history::protected_rewind(&old_short, &c))
        .collect())
}

/// The policy in force at `base` (the ledger at `ledger`, default `qa/merge_ledger.toml`, in
/// that revision), else the embedded default.
pub fn policy_at(
    repo: &Repository,
    base: Option<ObjectId>,
    ledger: Option<&str>,
) -> anyhow::Result<Policy> {
    let ledger_path = ledger.unwrap_or(DEFAULT_LEDGER_PATH);
    let Some(base) = base else {
        return Ok(Policy::embedded());
    };
    let short = git::short_id(repo, base);
    let tree = GitTree::new(repo, base, format!("commit {short}"))?;
    load_policy(Some(&tree), ledger_path, Some(&short))
}
