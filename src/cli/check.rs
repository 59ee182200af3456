//! `guard check [RANGE]`: audit the commits of a range, then score the tip.

use crate::cli::args::CheckArgs;
use crate::cli::score::{artifacts, exit_code};
use crate::engine::audit::{CheckOptions, check};
use crate::git;
use crate::policy::freeze::today_utc;

pub fn run(args: &CheckArgs) -> anyhow::Result<i32> {
    let repo = git::open()?;
    let opts = CheckOptions {
        range: args.range.clone(),
        ledger: Some(args.ledger.clone()),
        pusher: None,
        artifacts: artifacts(&args.artifacts, false),
        allowed_signers: None,
        // The JSON report and --verbose list every commit; the text report only counts them.
        describe_all: args.verbose || args.format == crate::report::Format::Json,
        // An audit reads the policy, and verifies signatures, as of the range's base.
        policy_revision: None,
        signatures_valid_at: None,
    };
    let report = check(&repo, &opts, today_utc())?;
    // Freeing the repository walks libgit2's caches (an entry per object looked up in a pack,
    // the delta base cache) just before the process exits, which releases all of it anyway.
    std::mem::forget(repo);
    if args.verbose && args.format == crate::report::Format::Text {
        out!("{}", report.render_commits());
    }
    out!("{}", report.render(args.format));
    Ok(exit_code(&report))
}
