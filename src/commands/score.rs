//! `guard score`: score artifacts against the ledger in the working tree.

use crate::cli::ScoreArgs;
use crate::exit;
use crate::findings::Decision;
use crate::freeze::today_utc;
use crate::ledger::Policy;
use crate::report::Report;
use crate::score::{Artifacts, score};
use crate::source::WorkTree;
use crate::workspace::Workspace;

pub fn run(ws: &Workspace, args: &ScoreArgs) -> anyhow::Result<i32> {
    let policy = Policy::load(ws, args.policy.ledger.as_deref())?;
    let artifacts = Artifacts {
        junit: args.junit.clone(),
        coverage: args.coverage.clone(),
        collected: args.collected.clone(),
        min_proven: args.min_proven,
    };
    let evaluation = score(&WorkTree { ws }, &policy, &artifacts, today_utc())?;
    let report = Report {
        policy: policy.source.describe(),
        findings: evaluation.findings,
        stats: evaluation.stats,
    };
    print!("{}", report.render(args.format));
    Ok(match report.decision() {
        Decision::Merge => exit::MERGE,
        Decision::Reject => exit::REJECT,
    })
}
