//! `guard lint`: validate the policy without artifacts (see `engine::lint`).

use crate::cli::Progress;
use crate::cli::args::LintArgs;
use crate::cli::print_report;
use crate::engine::lint::lint;
use crate::policy::freeze::today_utc;
use crate::policy::ledger::Policy;
use crate::workspace::Workspace;

pub fn run(ws: &Workspace, args: &LintArgs, progress: &mut Progress) -> anyhow::Result<i32> {
    let policy = Policy::load(ws, args.policy.ledger.as_deref())?;
    progress.policy = Some(policy.source.clone());
    let report = lint(ws, &policy, today_utc())?;
    print_report(&report, args.format.into());
    Ok(report.exit_code())
}
