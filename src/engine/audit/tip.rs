//! The tip of a range as it would be merged: scored from its tree (fixtures, policy files,
//! the artifacts when given), the humans' tests run against it, the ledger it leaves for the
//! next push, and the tip's findings tied to the commits that made them.

use std::path::Path;

use jiff::civil::Date;

use crate::engine::context::WhoContext;
use crate::engine::retest;
use crate::engine::score::{Artifacts, Scored, floor, score_tree};
use crate::engine::tip_tests::{attribute_baseline_findings, mark_rewritten_frozen_tests};
use crate::error::ErrorReport;
use crate::git::commit::Commit;
use crate::git::range::Commits;
use crate::git::tree_source::GitTree;
use crate::git::{self, ObjectId, Repository};
use crate::policy::ledger::{Policy, PolicySource};
use crate::policy::load::load_lockfile;
use crate::policy::signers::AllowedSigners;
use crate::report::Stats;
use crate::report::finding::Finding;
use crate::rules::history::{self, malformed};
use crate::source::Source;

/// What the tip's side of a range is judged from: the range, its base and names for it, and
/// what the check was asked to read.
pub(super) struct TipSide<'a> {
    pub(super) base: Option<ObjectId>,
    pub(super) tip: ObjectId,
    pub(super) commits: &'a Commits,
    pub(super) base_short: Option<&'a str>,
    pub(super) base_tree: Option<&'a GitTree<'a>>,
    pub(super) restore_from: &'a str,
    pub(super) ledger_path: &'a str,
    /// The artifacts to score the tip with (`CheckOptions::artifacts`).
    pub(super) artifacts: &'a Artifacts,
    /// Whether the base passed the gate (`CheckOptions::trust_base_fixtures`).
    pub(super) trust_base_fixtures: bool,
    /// Whether the ledger names the allowed signers (no server file overrides it).
    pub(super) signers_from_ledger: bool,
}

/// The tip, as it would be merged: its fixtures and policy files from its tree, the
/// artifacts when given, the humans' tests run against it (`guard retest`'s reports), and
/// the tip's findings tied to the commits that made them. Appends to `findings` (what the
/// commits found is already there: the tip's malformed trees are not reported twice) and
/// returns the warnings, the figures, and why the tip could not be scored, if so.
pub(super) fn judge_tip(
    repo: &Repository,
    today: Date,
    judge_who: &WhoContext,
    side: &TipSide,
    findings: &mut Vec<Finding>,
) -> anyhow::Result<(Vec<Finding>, Stats, Option<ErrorReport>)> {
    let policy = judge_who.policy;
    let TipSide {
        base,
        tip,
        commits,
        base_short,
        base_tree,
        restore_from,
        ledger_path,
        artifacts,
        trust_base_fixtures,
        signers_from_ledger,
    } = *side;
    // The tip, as it would be merged: fixtures from its tree, artifacts when given.
    let tip_short = git::short_id(repo, tip);
    let mut tip_tree = GitTree::new(repo, tip, format!("commit {tip_short}"))?;
    if let Some(base_tree) = base_tree.filter(|_| trust_base_fixtures) {
        // The base passed the gate when it landed, so its fixtures matched its lockfile:
        // only blobs changed since then are hashed again.
        if let Ok(lock) = load_lockfile(base_tree, policy) {
            tip_tree.trust(base_tree, &lock.entries);
        }
    }
    let mut artifacts = artifacts.clone();
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
        signers_from_ledger,
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

/// What is wrong with the ledger the range leaves at its tip, and with the allowed-signers
/// file it names (when `signers_from_ledger`: the server may name its own), if the range
/// changed them. The next push reads them as its policy: one that does not parse or compile
/// would leave every later push unjudgeable, its repair included, so it never lands.
fn tip_ledger_findings(
    repo: &Repository,
    in_force: &Policy,
    base: Option<&GitTree>,
    (tip, tip_id): (&GitTree, ObjectId),
    ledger_path: &str,
    signers_from_ledger: bool,
) -> anyhow::Result<Vec<Finding>> {
    let changed = |path: &str| !tip.same_entry(base, path);
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
