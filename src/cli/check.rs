//! `guard check [RANGE]`: audit the commits of a range, then score the tip.

use crate::cli::args::{CheckArgs, FormatArg};
use crate::cli::print_report;
use crate::cli::score::artifacts;
use crate::engine::audit::{CheckOptions, Describe, check};
use crate::engine::score::Artifacts;
use crate::git;
use crate::policy::freeze::today_utc;

pub fn run(args: &CheckArgs) -> anyhow::Result<i32> {
    let repo = git::open()?;
    let opts = CheckOptions {
        range: args.range.clone(),
        ledger: Some(args.ledger.clone()),
        pusher: None,
        artifacts: Artifacts {
            retest_junit: args.retest_junit.clone(),
            retest_required: !args.retest_junit.is_empty(),
            ..artifacts(&args.artifacts, false)
        },
        allowed_signers: None,
        // The JSON report and --verbose list every commit; the text report only counts them.
        describe: if args.verbose || args.format == FormatArg::Json {
            Describe::All
        } else {
            Describe::Changed
        },
        two_threads: true,
        // An audit reads the policy, and verifies signatures, as of the range's base.
        policy_revision: None,
        signatures_valid_at: None,
        // An audited range's base need not have passed the gate (guard installed later, a
        // push past a disabled hook): its fixture digests are not trusted.
        trust_base_fixtures: false,
    };
    let report = check(&repo, &opts, today_utc())?;
    // Freeing the repository walks libgit2's caches (an entry per object looked up in a pack,
    // the delta base cache) just before the process exits, which releases all of it anyway.
    std::mem::forget(repo);
    if args.verbose && args.format == FormatArg::Text {
        out!("{}", crate::render::text::commits(&report));
    }
    print_report(&report, args.format.into());
    Ok(report.exit_code())
}
