//! The JSON object of a report: the command-line contract (README, "Reports";
//! `docs/report.schema.json` is its JSON Schema and a test validates the suite's outputs
//! against it). Version 1: every key is always present, `null` where the value is unknown or
//! does not apply; nothing is omitted and no 0 stands for "not computed".
//!
//! The objects are built here; the leaf types serialise as they derive it (`Finding`,
//! `CommitSummary`, `Change`, `PolicyChange`, `SignatureStatus`, `Stats`, `RunnerExit`,
//! `ErrorReport`): a change to one of them is a change of the contract.

use serde::Serialize;

use crate::error::ErrorReport;
use crate::policy::ledger::PolicySource;
use crate::report::finding::reasons;
use crate::report::{
    Advice, Code, CommitSummary, Decision, FileChanges, Finding, Kind, Report, RunnerExit, Stats,
};

/// The version of the JSON contract. Raised when a key changes meaning or goes away; new keys
/// do not raise it.
pub const SCHEMA_VERSION: u32 = 1;

/// `report` as one pretty-printed JSON object and a newline.
pub fn report(report: &Report) -> String {
    match report.kind {
        Kind::Gate => pretty(&gate(report)),
        Kind::Lint => pretty(&lint(report)),
    }
}

/// Where the policy in force came from.
#[derive(Serialize)]
struct PolicyJson<'a> {
    /// `file` (a ledger in the working tree), `commit` (a ledger read from a revision) or
    /// `embedded` (no ledger file: the built-in default).
    source: &'static str,
    /// The ledger's path; `null` for the embedded ledger.
    path: Option<String>,
    /// The revision it was read from; `null` unless `source` is `commit`.
    commit: Option<&'a str>,
}

fn policy(source: Option<&PolicySource>) -> Option<PolicyJson<'_>> {
    Some(match source? {
        PolicySource::Embedded => PolicyJson {
            source: "embedded",
            path: None,
            commit: None,
        },
        PolicySource::File(path) => PolicyJson {
            source: "file",
            path: Some(path.display().to_string()),
            commit: None,
        },
        PolicySource::Revision { path, commit } => PolicyJson {
            source: "commit",
            path: Some(path.clone()),
            commit: Some(commit),
        },
    })
}

/// `score`, `check` and `run`.
#[derive(Serialize)]
struct GateJson<'a> {
    schema_version: u32,
    /// `null` when nothing rejects and something could not be judged (exit 2).
    decision: Option<Decision>,
    score: Option<u8>,
    /// False in evaluate mode: `decision` is what it would be, and nothing was rejected.
    enforced: bool,
    reasons: Vec<Code>,
    findings: &'a [Finding],
    /// Findings shown without rejecting (a `[baseline]` rule set to "warn").
    warnings: &'a [Finding],
    policy: Option<PolicyJson<'a>>,
    /// Whether test outcomes were judged (a JUnit report was scored); `null` when the run
    /// stopped before.
    tests_scored: Option<bool>,
    error: Option<&'a ErrorReport>,
    /// The test command `run` ran and how it ended; `null` for other commands.
    runner: Option<&'a RunnerExit>,
    #[serde(flatten)]
    stats: &'a Stats,
    /// The judged range (`check`); `null` for `score` and `run`.
    range: Option<&'a str>,
    base: Option<&'a str>,
    tip: Option<&'a str>,
    commits: Option<&'a [CommitSummary]>,
    policy_changes: Option<&'a [FileChanges]>,
}

fn gate(report: &Report) -> GateJson<'_> {
    let decision = report.decision();
    let history = report.history.as_ref();
    GateJson {
        schema_version: SCHEMA_VERSION,
        decision,
        score: decision.map(|d| u8::from(d == Decision::Merge)),
        enforced: report.enforced,
        reasons: reasons(&report.findings),
        findings: &report.findings,
        warnings: &report.warnings,
        policy: policy(report.policy.as_ref()),
        tests_scored: decision.map(|_| report.stats.tests_scored()),
        error: report.unjudged.as_ref(),
        runner: report.runner.as_ref(),
        stats: &report.stats,
        range: history.map(|h| h.range.as_str()),
        base: history.and_then(|h| h.base.as_deref()),
        tip: history.map(|h| h.tip.as_str()),
        commits: history.map(|h| h.commits.as_slice()),
        policy_changes: history.map(|h| h.policy_changes.as_slice()),
    }
}

/// `lint`. A run that could not be judged has `decision`, the counts (and, when the ledger
/// was not read, `policy`) `null`, and `error`.
#[derive(Serialize)]
struct LintJson<'a> {
    schema_version: u32,
    decision: Option<Decision>,
    score: Option<u8>,
    reasons: Vec<Code>,
    findings: &'a [Finding],
    /// A valid policy that may not mean what was meant: shown, never rejects.
    warnings: &'a [Advice],
    policy: Option<PolicyJson<'a>>,
    active_leases: Option<usize>,
    expired_leases: Option<usize>,
    /// Entries of the lockfile.
    fixtures: Option<usize>,
    error: Option<&'a ErrorReport>,
}

fn lint(report: &Report) -> LintJson<'_> {
    let decision = report.decision();
    LintJson {
        schema_version: SCHEMA_VERSION,
        decision,
        score: decision.map(|d| u8::from(d == Decision::Merge)),
        reasons: reasons(&report.findings),
        findings: &report.findings,
        warnings: &report.advice,
        policy: policy(report.policy.as_ref()),
        active_leases: report.stats.active_leases,
        expired_leases: report.stats.expired_leases,
        fixtures: report.fixtures,
        error: report.unjudged.as_ref(),
    }
}

fn pretty(json: &impl Serialize) -> String {
    let mut out = crate::render::pretty_json(json);
    out.push('\n');
    out
}
