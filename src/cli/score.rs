//! `guard score`: score artifacts against the ledger in the working tree.

use crate::cli::Progress;
use crate::cli::args::{ArtifactArgs, ScoreArgs};
use crate::cli::print_report;
use crate::engine::score::{Artifacts, floor, score};
use crate::policy::freeze::today_utc;
use crate::policy::ledger::Policy;
use crate::report::Report;
use crate::source::WorkTree;
use crate::workspace::Workspace;

pub fn run(ws: &Workspace, args: &ScoreArgs, progress: &mut Progress) -> anyhow::Result<i32> {
    let policy = Policy::load(ws, args.policy.ledger.as_deref())?;
    let artifacts = artifacts(&args.artifacts, true);
    progress.policy = Some(policy.source.clone());
    progress.evaluate = policy.evaluate;
    progress.floor = Some(floor(&policy, &artifacts));
    let evaluation = score(&WorkTree { ws }, &policy, &artifacts, today_utc())?;
    let report = Report::judged(
        &policy,
        evaluation.findings,
        evaluation.warnings,
        evaluation.stats,
    );
    print_report(&report, args.format.into());
    Ok(report.exit_code())
}

/// The artifacts named on the command line.
pub fn artifacts(args: &ArtifactArgs, expect_evidence: bool) -> Artifacts {
    Artifacts {
        junit: args.junit.clone(),
        baseline_junit: args.baseline_junit.clone(),
        retest_junit: Vec::new(),
        retest_required: false,
        coverage: args.coverage.clone(),
        collected: args.collected.clone(),
        min_proven: args.min_proven,
        expect_evidence,
        runner: None,
    }
}
