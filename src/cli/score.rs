//! `guard score`: score artifacts against the ledger in the working tree.

use crate::cli::Progress;
use crate::cli::args::{ArtifactArgs, ScoreArgs};
use crate::engine::score::{Artifacts, floor, score};
use crate::exit;
use crate::policy::freeze::today_utc;
use crate::policy::ledger::Policy;
use crate::report::Report;
use crate::report::finding::Decision;
use crate::source::WorkTree;
use crate::workspace::Workspace;

pub fn run(ws: &Workspace, args: &ScoreArgs, progress: &mut Progress) -> anyhow::Result<i32> {
    let policy = Policy::load(ws, args.policy.ledger.as_deref())?;
    let artifacts = artifacts(&args.artifacts, true);
    progress.policy = Some(policy.source.describe());
    progress.floor = Some(floor(&policy, &artifacts));
    let evaluation = score(&WorkTree { ws }, &policy, &artifacts, today_utc())?;
    let report = Report {
        policy: policy.source.describe(),
        findings: evaluation.findings,
        stats: evaluation.stats,
        unjudged: None,
        history: None,
        runner: None,
        warnings: evaluation.warnings,
    };
    out!("{}", report.render(args.format));
    Ok(exit_code(&report))
}

/// The artifacts named on the command line.
pub fn artifacts(args: &ArtifactArgs, expect_evidence: bool) -> Artifacts {
    Artifacts {
        junit: args.junit.clone(),
        baseline_junit: args.baseline_junit.clone(),
        coverage: args.coverage.clone(),
        collected: args.collected.clone(),
        min_proven: args.min_proven,
        expect_evidence,
        runner: None,
    }
}

/// The exit code agrees with the decision: any finding rejects (1), even beside input that
/// could not be judged; with no finding, such input leaves no decision (2).
pub fn exit_code(report: &Report) -> i32 {
    match report.decision() {
        Some(Decision::Merge) => exit::MERGE,
        Some(Decision::Reject) => exit::REJECT,
        None => exit::CANNOT_JUDGE,
    }
}
