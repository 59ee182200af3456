//! The engine behind `guard check` (and the hooks): judges the commits a range brings for
//! provenance under the policy of the range's base, and what its agent commits did to the
//! tests (`weakened`), then scores the range's tip (fixtures from git, and artifacts when
//! given) under the same policy.

use std::path::Path;

use jiff::civil::Date;

use crate::changes::{Change, ChangeKind, MalformedTree};
use crate::engine::adoption;
use crate::engine::ahead::{self, Ahead};
use crate::engine::bots;
use crate::engine::context::{WhoContext, base_of, commit_signature, load_policy, load_signers};
use crate::engine::merges::{self, AgentMerge, GitMerges};
use crate::engine::retest;
use crate::engine::score::{Artifacts, Scored, floor, score_tree};
use crate::engine::tip_tests::{attribute_baseline_findings, mark_rewritten_frozen_tests};
use crate::engine::walk::{Walk, walk_commits};
use crate::engine::weakened;
use crate::error::ErrorReport;
use crate::git::commit::{self, Commit};
use crate::git::lineage::Lineage;
use crate::git::protected::ProtectedSet;
use crate::git::range::{self, Commits};
use crate::git::tree_source::GitTree;
use crate::git::trees::Trees;
use crate::git::{self, Oid, Repository};
use crate::policy::agents::Identity;
use crate::policy::diff::{self, PolicyChange};
use crate::policy::freeze::FreezeFile;
use crate::policy::ledger::{DEFAULT_LEDGER_PATH, Policy, PolicySource};
use crate::policy::load::{load_freeze, load_lockfile};
use crate::policy::lockfile::Lockfile;
use crate::policy::signers::{AllowedSigners, SignatureStatus};
use crate::report::finding::Finding;
use crate::report::{CommitSummary, FileChanges, History, Report, Stats};
use crate::rules::history::{self, malformed};
use crate::rules::provenance::{self, CommitFacts, ProvenanceInput};
use crate::source::Source;

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
    pub policy_revision: Option<Oid>,
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
    pub base: Option<Oid>,
    pub tip: Oid,
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
    let mut hide_list: Vec<Oid> = range.base.into_iter().collect();
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
    base: Option<Oid>,
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
        base_short: base_short.as_deref(),
        base_tree: base_tree.as_ref(),
        restore_from: &restore_from,
        ledger_path: &ledger_path,
    };
    let (mut warnings, mut stats, unjudged) = judge_tip(
        repo,
        judged,
        opts,
        today,
        &judge_who,
        &tip_side,
        &mut findings,
    )?;
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
    base: Option<Oid>,
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

/// What the tip's side of a range is judged from: the base, and names for it.
struct TipSide<'a> {
    base_short: Option<&'a str>,
    base_tree: Option<&'a GitTree<'a>>,
    restore_from: &'a str,
    ledger_path: &'a str,
}

/// The tip, as it would be merged: its fixtures and policy files from its tree, the
/// artifacts when given, the humans' tests run against it (`guard retest`'s reports), and
/// the tip's findings tied to the commits that made them. Appends to `findings` (what the
/// commits found is already there: the tip's malformed trees are not reported twice) and
/// returns the warnings, the figures, and why the tip could not be scored, if so.
fn judge_tip(
    repo: &Repository,
    judged: &Judged,
    opts: &CheckOptions,
    today: Date,
    judge_who: &WhoContext,
    side: &TipSide,
    findings: &mut Vec<Finding>,
) -> anyhow::Result<(Vec<Finding>, Stats, Option<ErrorReport>)> {
    let Judged {
        base, tip, commits, ..
    } = *judged;
    let policy = judge_who.policy;
    let TipSide {
        base_short,
        base_tree,
        restore_from,
        ledger_path,
    } = *side;
    // The tip, as it would be merged: fixtures from its tree, artifacts when given.
    let tip_short = git::short_id(repo, tip);
    let mut tip_tree = GitTree::new(repo, tip, format!("commit {tip_short}"))?;
    if let Some(base_tree) = base_tree.filter(|_| opts.trust_base_fixtures) {
        // The base passed the gate when it landed, so its fixtures matched its lockfile:
        // only blobs changed since then are hashed again.
        if let Ok(lock) = load_lockfile(base_tree, policy) {
            tip_tree.trust(base_tree, &lock.entries);
        }
    }
    let mut artifacts = opts.artifacts.clone();
    artifacts.expect_evidence = artifacts.any();
    // What the range broke in the tip (a policy file the base holds intact, a fixture that
    // is not a regular file) is a finding. Artifacts that cannot be read, or policy files
    // already broken in the base, leave the tip unjudged; what the commits did still stands
    // (and rejects): that is what the pusher has to fix first.
    let scored = Scored::RangeTip {
        base: base_tree.map(|t| t as &dyn Source),
    };
    let mut warnings = Vec::new();
    let (stats, unjudged) = match score_tree(&tip_tree, scored, policy, &artifacts, today) {
        Ok(mut evaluation) => {
            for list in [&mut evaluation.findings, &mut evaluation.warnings] {
                attribute_baseline_findings(
                    repo,
                    commits,
                    judge_who,
                    base_tree,
                    &tip_tree,
                    restore_from,
                    list,
                )?;
            }
            warnings = evaluation.warnings;
            if let Some(base_tree) = base_tree {
                mark_rewritten_frozen_tests(
                    &mut evaluation.findings,
                    &evaluation.passing_frozen,
                    &policy.freeze.file,
                    base_tree,
                    &tip_tree,
                    restore_from,
                );
            }
            findings.extend(evaluation.findings);
            // The humans' tests, run against the range's code (`guard retest`'s reports).
            let scope = retest::Scope {
                base,
                tip,
                base_short: base_short.map(str::to_string),
                base_tree,
                commits: commits.ids(),
            };
            findings.extend(retest::judge_reports(repo, scope, judge_who, &artifacts)?);
            (evaluation.stats, None)
        }
        Err(e) => (
            Stats::unknown(today, Some(floor(policy, &artifacts))),
            Some(ErrorReport::from(&e)),
        ),
    };
    findings.extend(ledger_removed(base_tree, &tip_tree, ledger_path));
    findings.extend(tip_ledger_findings(
        repo,
        policy,
        base_tree,
        (&tip_tree, tip),
        ledger_path,
        opts.allowed_signers.is_none(),
    )?);
    // The trees the tip was scored from: a malformed one (say, from before the range) is
    // read as a checkout writes it, and still refused.
    let tip_malformed = tip_tree.malformed();
    if !tip_malformed.is_empty() {
        let subject = Commit::find(repo, tip)?.summary();
        let more = malformed::findings(&tip_short, &subject, &tip_malformed, findings);
        findings.extend(more);
    }

    Ok((warnings, stats, unjudged))
}

/// A ledger changed inside the range may protect more (a new freeze file path, new
/// [protect] globs): what any ledger version in the range protects is protected for the
/// whole range, so a later commit cannot edit what an earlier one newly named. The set
/// widened by every version the range's commits wrote; `None` when none protects more.
fn widened_by_range_ledgers(
    repo: &Repository,
    commits: &Commits,
    outcomes: &[CommitOutcome],
    protected: &ProtectedSet,
    ledger_path: &str,
) -> anyhow::Result<Option<ProtectedSet>> {
    let mut widened = protected.clone();
    let mut grew = false;
    for (outcome, &id) in outcomes.iter().zip(commits.ids()) {
        let changed_ledger = outcome.summary.as_ref().is_some_and(|summary| {
            summary
                .protected_changes
                .iter()
                .any(|c| c.path == ledger_path && c.kind != ChangeKind::Deleted)
        });
        if !changed_ledger {
            continue;
        }
        let Some(text) = commit::blob_text(repo, id, ledger_path)? else {
            continue;
        };
        // A ledger that does not parse protects nothing more; the tip's own check of it
        // (and the next push, judged by it) fail closed.
        if let Ok(newer) = Policy::parse(Path::new(ledger_path), &text, PolicySource::Embedded) {
            grew |= widened.extend(ProtectedSet::new(&newer, ledger_path));
        }
    }
    Ok(grew.then_some(widened))
}

/// What judging needs beside the commit itself.
struct CommitContext<'a> {
    policy: &'a Policy,
    protected: &'a ProtectedSet,
    input: ProvenanceInput<'a>,
    needs_proof: bool,
    signers: Option<&'a AllowedSigners>,
    pusher: Option<&'a str>,
    restore_from: &'a str,
    describe_all: bool,
    signatures_valid_at: Option<jiff::Timestamp>,
    two_threads: bool,
}

/// What judging one commit found.
struct CommitOutcome {
    findings: Vec<Finding>,
    leases_added: usize,
    /// `None` for a commit that changes no protected path, unless every commit is described.
    summary: Option<CommitSummary>,
    policy_changes: Vec<FileChanges>,
}

impl CommitOutcome {
    /// A commit that changes nothing protected: no rule applies.
    fn nothing() -> CommitOutcome {
        CommitOutcome {
            findings: Vec::new(),
            leases_added: 0,
            summary: None,
            policy_changes: Vec::new(),
        }
    }
}

/// Judges `commits` and returns the outcomes oldest first. A long range's trees are compared
/// on two threads (`walk_commits`); more did not pay on two cores, where each thread's own
/// repository handle shares no caches with the others.
///
/// The trees are compared newest first. In a pack written by `git fast-import`, each version
/// of a tree is a delta against the one before, and reading newest first finds each delta's
/// base in the pack's base cache (reading oldest first inflated twice as many objects); in
/// packs written by `git repack`, which store the newest versions whole, the order makes no
/// difference. libgit2's object cache is off meanwhile: keeping every tree and commit of a
/// long range cost more time (and memory) than it saved; `Trees` keeps the few read again.
/// Which of a merge's changes are its own is then settled oldest first, from the changes
/// alone (`Lineage`), and the commits that changed protected paths are judged.
fn commit_outcomes(
    repo: &Repository,
    commits: &Commits,
    ctx: &CommitContext,
    weakened: Option<&mut weakened::Judge>,
    ahead: Option<&Ahead>,
) -> anyhow::Result<Vec<CommitOutcome>> {
    git::without_object_cache(|| outcomes_without_object_cache(repo, commits, ctx, weakened, ahead))
}

fn outcomes_without_object_cache(
    repo: &Repository,
    commits: &Commits,
    ctx: &CommitContext,
    weakened: Option<&mut weakened::Judge>,
    ahead: Option<&Ahead>,
) -> anyhow::Result<Vec<CommitOutcome>> {
    let trees = Trees::new(repo)?;
    let how = Walk {
        fsck: true,
        threads: if ctx.two_threads { 2 } else { 1 },
        ahead,
    };
    let walked = walk_commits(&trees, commits, ctx.protected, weakened, how)?;
    // A merge's changes against any parent, for an agent's merge to be judged against git's
    // own merge of its parents (`merges`).
    let against_parents: Vec<Vec<Change>> = walked
        .against_parents
        .iter()
        .enumerate()
        .map(|(k, lists)| match commits.parents(k).len() {
            0 | 1 => Vec::new(),
            _ => merges::union_of(lists),
        })
        .collect();
    let (lineage, own) = Lineage::resolve(repo, commits, walked.against_parents)?;
    let mut origins = Origins {
        lineage,
        merges: GitMerges::new(repo),
    };
    let mut judged = own
        .into_iter()
        .zip(walked.malformed)
        .zip(against_parents)
        .enumerate()
        .rev()
        .map(|(k, ((changes, malformed), against_parents))| {
            let brought = Brought {
                changes,
                malformed,
                against_parents,
            };
            judge_commit(repo, &trees, &mut origins, commits, k, brought, ctx)
        })
        .collect::<anyhow::Result<Vec<CommitOutcome>>>()?;
    judged.reverse();
    Ok(judged)
}

/// What one commit brought along protected paths.
struct Brought {
    /// Its own protected changes (a merge's: its own edits, as `Lineage` tells them).
    changes: Vec<Change>,
    /// The malformed trees it brought.
    malformed: Vec<MalformedTree>,
    /// A merge's changes against any of its parents, one per path (empty for others).
    against_parents: Vec<Change>,
}

/// Where a merge's content comes from: the range's own commits (`Lineage`), and for an
/// agent's merge, git's own merge of its parents.
struct Origins<'r> {
    lineage: Lineage<'r>,
    merges: GitMerges<'r>,
}

/// Who made a commit, as far as the gate can tell.
struct Provenance {
    /// Its signature, when signatures are checked.
    signature: Option<SignatureStatus>,
    verified: bool,
    /// Why the ledger's `[agents]` patterns name it an agent's.
    pattern_agent: Option<String>,
    /// Why it counts as an agent's: a pattern, or no proof of a human where the ledger asks.
    agent: Option<String>,
}

fn provenance_of(commit: &Commit, who: &Identity, ctx: &CommitContext) -> Provenance {
    let signature = ctx
        .signers
        .map(|s| commit_signature(commit, s, ctx.signatures_valid_at));
    let verified = signature.as_ref().is_some_and(SignatureStatus::is_verified);
    let pattern_agent = ctx.policy.agents.matched_agent(who);
    let agent = pattern_agent.clone().or_else(|| {
        (ctx.needs_proof && !verified).then(|| {
            let why = signature
                .as_ref()
                .map_or("not signed".to_string(), SignatureStatus::describe);
            format!(
                "not proven human ({why}); the ledger asks for a signature by an allowed signer"
            )
        })
    });
    Provenance {
        signature,
        verified,
        pattern_agent,
        agent,
    }
}

/// Judges commit `k` of `commits`, given what it `brought`: who made it, its signature, and
/// what it did to the freeze file and lockfile.
fn judge_commit(
    repo: &Repository,
    trees: &Trees,
    origins: &mut Origins,
    commits: &Commits,
    k: usize,
    brought: Brought,
    ctx: &CommitContext,
) -> anyhow::Result<CommitOutcome> {
    let (tree, parent_trees) = commits.trees(k);
    let Brought {
        mut changes,
        malformed,
        against_parents,
    } = brought;
    if changes.is_empty() && malformed.is_empty() && against_parents.is_empty() && !ctx.describe_all
    {
        // Nothing protected changed: no rule applies, and the commit object is not read.
        return Ok(CommitOutcome::nothing());
    }
    let id = commits.ids()[k];
    let commit = Commit::find(repo, id)?;
    let short = commit.short_id();
    let subject = commit.summary();
    let who = commit.identity(ctx.pusher);
    let Provenance {
        signature,
        verified,
        pattern_agent,
        agent,
    } = provenance_of(&commit, &who, ctx);

    // An agent's merge: what it holds that git's own merge of its parents does not give is
    // its own edit, and nothing else is (`Lineage`'s answer stands for the others).
    let agent_merge = match agent.is_some() && !against_parents.is_empty() {
        true => Some(merges::own_protected_edits(
            &mut origins.merges,
            commits,
            k,
            ctx.protected,
            &against_parents,
        )?),
        false => None,
    };
    if let Some(merge) = &agent_merge {
        changes = merge.own.clone();
    }
    if changes.is_empty() && malformed.is_empty() && !ctx.describe_all {
        return Ok(CommitOutcome::nothing());
    }

    // A bot's commit: the one kind of change the ledger allows it on its paths is not an
    // edit to judge (`[[bots]]`); in strict mode only when its signature proves who made it.
    let allowed = match parent_trees {
        [parent] if !ctx.needs_proof || verified => {
            let (policy, protected) = (ctx.policy, ctx.protected);
            bots::allowed_changes(
                trees,
                policy,
                protected,
                &who.author_email,
                *parent,
                tree,
                &changes,
            )?
        }
        _ => Vec::new(),
    };
    let judged_changes: Vec<Change> = changes
        .iter()
        .filter(|c| !allowed.contains(&c.path))
        .cloned()
        .collect();

    let (leases_added, policy_changes) = policy_file_changes(
        trees,
        &mut origins.lineage,
        agent_merge.as_ref(),
        commits,
        k,
        &changes,
        &short,
        ctx,
    )?;

    let facts = CommitFacts {
        short: short.clone(),
        subject: subject.clone(),
        agent: agent.clone(),
        trailers: who.trailers.clone(),
        changes: judged_changes,
        leases_added,
        base: ctx.restore_from.to_string(),
        signature: (ctx.needs_proof && pattern_agent.is_none())
            .then(|| signature.clone())
            .flatten(),
    };
    let (mut findings, leases_added) = provenance::judge(&facts, &ctx.input);
    findings.extend(malformed::findings(&short, &subject, &malformed, &[]));
    let summary = Some(CommitSummary {
        id: id.to_string(),
        short,
        subject,
        author: format!("{} <{}>", who.author_name, who.author_email),
        agent,
        signature,
        protected_changes: changes,
    });
    Ok(CommitOutcome {
        findings,
        leases_added,
        summary,
        policy_changes,
    })
}

/// What commit `k` did to the freeze file and the lockfile, each described against the
/// version it replaced (for an agent's merge, git's merge of its parents): the leases it adds
/// that no other current parent has, and each file's changes.
#[allow(clippy::too_many_arguments)]
fn policy_file_changes(
    trees: &Trees,
    lineage: &mut Lineage,
    agent_merge: Option<&AgentMerge>,
    commits: &Commits,
    k: usize,
    changes: &[Change],
    short: &str,
    ctx: &CommitContext,
) -> anyhow::Result<(Vec<String>, Vec<FileChanges>)> {
    let (tree, parent_trees) = commits.trees(k);
    let mut leases_added = Vec::new();
    let mut policy_changes = Vec::new();
    for path in [&ctx.policy.freeze.file, &ctx.policy.fixtures.lockfile] {
        if !changes.iter().any(|c| &c.path == path) {
            continue;
        }
        // An agent's merge is described against git's merge of its parents where that is
        // clean: every lease it has that the merged file lacks, it adds.
        let merged = match agent_merge {
            Some(merge) => merge.merged_text(path)?,
            None => None,
        };
        // A merge's edit is described against the parents whose content no other parent had
        // moved past (the first of them): what it adds that none of them has, it adds itself.
        // Any other parent's content is older, and taking it back is an addition too.
        let current = if merged.is_some() {
            Vec::new()
        } else if parent_trees.len() > 1 {
            let versions: Vec<Option<Oid>> = parent_trees
                .iter()
                .map(|&t| trees.entry_id(t, path))
                .collect::<Result<_, _>>()?;
            lineage.current_parents(k, path, &versions)?
        } else {
            (0..parent_trees.len()).collect()
        };
        let old = match (merged, current.first()) {
            (Some(merged), _) => merged,
            (None, Some(&i)) => trees.blob_text(parent_trees[i], path)?,
            (None, None) => None,
        };
        let new = trees.blob_text(tree, path)?;
        let described = if path == &ctx.policy.freeze.file {
            let parse = |t: &Option<String>| {
                t.as_ref()
                    .and_then(|t| FreezeFile::parse(Path::new(path), t.as_bytes()).ok())
            };
            let list = diff::diff_freeze(parse(&old).as_ref(), parse(&new).as_ref());
            let others: Vec<FreezeFile> = current
                .iter()
                .skip(1)
                .map(|&i| trees.blob_text(parent_trees[i], path))
                .collect::<Result<Vec<_>, _>>()?
                .iter()
                .filter_map(parse)
                .collect();
            let in_others = |id: &str| {
                others
                    .iter()
                    .any(|f| f.leases.iter().any(|l| l.nodeid == id))
            };
            leases_added.extend(list.iter().filter_map(|c| match c {
                PolicyChange::LeaseAdded { nodeid, .. } if !in_others(nodeid) => {
                    Some(nodeid.clone())
                }
                _ => None,
            }));
            list
        } else {
            let parse = |t: &Option<String>| {
                t.as_ref()
                    .and_then(|t| Lockfile::parse(Path::new(path), t.as_bytes()).ok())
            };
            diff::diff_lockfile(parse(&old).as_ref(), parse(&new).as_ref())
        };
        policy_changes.push(FileChanges {
            commit: short.to_string(),
            path: path.clone(),
            changes: described,
            excerpt: diff::excerpt(
                old.as_deref().unwrap_or(""),
                new.as_deref().unwrap_or(""),
                12,
            ),
        });
    }

    Ok((leases_added, policy_changes))
}

/// A ledger the base holds at `ledger_path` that the tip does not (or not as a regular file):
/// merged, the next push would be judged by the embedded default, whatever trailer the
/// removal carries.
fn ledger_removed(base: Option<&GitTree>, tip: &GitTree, ledger_path: &str) -> Option<Finding> {
    let base = base?;
    if !matches!(base.read(ledger_path), Ok(Some(_))) {
        return None;
    }
    let why = match tip.read(ledger_path) {
        Ok(Some(_)) => return None,
        Ok(None) => format!("the ledger is missing in the {}", tip.describe()),
        Err(e) => format!("the ledger is not a regular file: {}", e.message),
    };
    Some(history::ledger_removed(ledger_path, &why, &base.describe()))
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
    (old, new): (Oid, Oid),
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
    let old_tree = Commit::find(repo, old)?.tree_id();
    let new_tree = Commit::find(repo, new)?.tree_id();
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

/// What is wrong with the ledger the range leaves at its tip, and with the allowed-signers
/// file it names (when `signers_from_ledger`: the server may name its own), if the range
/// changed them. The next push reads them as its policy: one that does not parse or compile
/// would leave every later push unjudgeable, its repair included, so it never lands.
fn tip_ledger_findings(
    repo: &Repository,
    in_force: &Policy,
    base: Option<&GitTree>,
    (tip, tip_id): (&GitTree, Oid),
    ledger_path: &str,
    signers_from_ledger: bool,
) -> anyhow::Result<Vec<Finding>> {
    let changed = |path: &str| tip.entry_at(path) != base.and_then(|b| b.entry_at(path));
    let commit = Commit::find(repo, tip_id)?;
    let invalid = |path: &str, problem: String| {
        let at = (commit.short_id(), commit.summary());
        history::ledger_invalid(path, problem, at)
    };
    let ledger_changed = changed(ledger_path);
    let signers_path = if ledger_changed {
        let text = match tip.read(ledger_path) {
            // Deleted: the embedded ledger is next, and the deletion a protected change.
            Ok(None) => return Ok(Vec::new()),
            Ok(Some(bytes)) => String::from_utf8(bytes).map_err(|e| {
                format!(
                    "{ledger_path}: not UTF-8 (byte {})",
                    e.utf8_error().valid_up_to()
                )
            }),
            Err(e) => Err(e.to_string()),
        };
        let parsed = text.and_then(|text| {
            Policy::parse(Path::new(ledger_path), &text, PolicySource::Embedded)
                .map_err(|e| e.brief())
        });
        match parsed {
            Ok(policy) => policy.humans.allowed_signers,
            Err(problem) => return Ok(vec![invalid(ledger_path, problem)]),
        }
    } else {
        in_force.humans.allowed_signers.clone()
    };
    let Some(path) = signers_path.filter(|p| signers_from_ledger && (ledger_changed || changed(p)))
    else {
        return Ok(Vec::new());
    };
    let problem = match tip.read(&path) {
        Ok(None) => format!("{path}: the allowed-signers file the ledger names does not exist"),
        Err(e) => e.to_string(),
        Ok(Some(bytes)) => match AllowedSigners::parse(&String::from_utf8_lossy(&bytes)) {
            Ok(_) => return Ok(Vec::new()),
            Err((line, message)) => format!("{path}:{line}: {message}"),
        },
    };
    Ok(vec![invalid(&path, problem)])
}

/// The policy in force at `base` (the ledger at `ledger`, default `qa/merge_ledger.toml`, in
/// that revision), else the embedded default.
pub fn policy_at(
    repo: &Repository,
    base: Option<Oid>,
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
