//! The JSON object of a report: the command-line contract's keys (README, "Reports"). Every
//! type that reaches the JSON output is serialised from here or from `report`.

use serde::Serialize;

use crate::error::ErrorReport;
use crate::report::finding::reasons;
use crate::report::{Advice, Code, Decision, Finding, History, Kind, Report, RunnerExit, Stats};

/// `report` as one pretty-printed JSON object and a newline.
pub fn report(report: &Report) -> String {
    match report.kind {
        Kind::Gate => gate(report),
        Kind::Lint => lint(report),
    }
}

#[derive(Serialize)]
struct JsonReport<'a> {
    /// `null` when nothing rejects and something could not be judged (exit 2).
    decision: Option<Decision>,
    score: Option<u8>,
    reasons: Vec<Code>,
    findings: &'a [Finding],
    /// Findings shown without rejecting (a `[baseline]` rule set to "warn"); only when any.
    #[serde(skip_serializing_if = "<[Finding]>::is_empty")]
    warnings: &'a [Finding],
    /// Where the policy came from: `check` and the hooks only (`score`'s keys are exactly
    /// the contract's plus `junit`).
    #[serde(skip_serializing_if = "Option::is_none")]
    policy: Option<&'a str>,
    /// Whether test outcomes were judged (a JUnit report was scored): `check` only, where
    /// reports are optional.
    #[serde(skip_serializing_if = "Option::is_none")]
    tests_scored: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a ErrorReport>,
    /// The test command `run` ran and how it ended: `run` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    runner: Option<&'a RunnerExit>,
    #[serde(flatten)]
    stats: &'a Stats,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    history: Option<&'a History>,
}

fn gate(report: &Report) -> String {
    let decision = report.decision();
    pretty(&JsonReport {
        decision,
        score: decision.map(|d| u8::from(d == Decision::Merge)),
        reasons: reasons(&report.findings),
        findings: &report.findings,
        warnings: &report.warnings,
        policy: report.history.as_ref().and(report.policy.as_deref()),
        tests_scored: report.history.as_ref().map(|_| report.stats.tests_scored()),
        error: report.unjudged.as_ref(),
        runner: report.runner.as_ref(),
        stats: &report.stats,
        history: report.history.as_ref(),
    })
}

/// The JSON object of `lint`. A run that could not be judged has `ok`, the counts (and,
/// when the ledger was not read, `policy`) `null`, and `error`.
#[derive(Serialize)]
struct LintReport<'a> {
    ok: Option<bool>,
    reasons: Vec<Code>,
    findings: &'a [Finding],
    warnings: &'a [Advice],
    policy: Option<&'a str>,
    active_leases: Option<usize>,
    expired_leases: Option<usize>,
    fixtures: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a ErrorReport>,
}

fn lint(report: &Report) -> String {
    pretty(&LintReport {
        ok: report.decision().map(|d| d == Decision::Merge),
        reasons: reasons(&report.findings),
        findings: &report.findings,
        warnings: &report.advice,
        policy: report.policy.as_deref(),
        active_leases: report.stats.active_leases,
        expired_leases: report.stats.expired_leases,
        fixtures: report.fixtures,
        error: report.unjudged.as_ref(),
    })
}

fn pretty(json: &impl Serialize) -> String {
    let mut out = serde_json::to_string_pretty(json).expect("report serializes");
    out.push('\n');
    out
}
