//! `guard lint`: validate the policy without artifacts: the ledger parses, leases are
//! well-formed, unexpired and in budget, lockfile paths are safe, property files are not
//! thin, and the seed corpus is there.

use serde::Serialize;

use crate::cli::LintArgs;
use crate::commands::Progress;
use crate::error::{ErrorReport, InputError};
use crate::exit;
use crate::findings::{Code, Finding, reasons};
use crate::freeze::today_utc;
use crate::ledger::Policy;
use crate::report::{Format, render_finding};
use crate::rules;
use crate::score::{judge_property_files, load_freeze, load_lockfile, property_files};
use crate::source::WorkTree;
use crate::workspace::Workspace;

/// The JSON object of `lint`. A run that could not be judged has `ok`, the counts (and,
/// when the ledger was not read, `policy`) `null`, and `error`.
#[derive(Serialize)]
struct LintReport<'a> {
    ok: Option<bool>,
    reasons: Vec<Code>,
    findings: &'a [Finding],
    policy: Option<String>,
    active_leases: Option<usize>,
    expired_leases: Option<usize>,
    fixtures: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a ErrorReport>,
}

/// The JSON object of a `lint` run that stopped at `error`.
pub fn render_failure_json(progress: &Progress, error: &ErrorReport) -> String {
    let report = LintReport {
        ok: None,
        reasons: Vec::new(),
        findings: &[],
        policy: progress.policy.clone(),
        active_leases: None,
        expired_leases: None,
        fixtures: None,
        error: Some(error),
    };
    let mut out = serde_json::to_string_pretty(&report).expect("report serializes");
    out.push('\n');
    out
}

pub fn run(ws: &Workspace, args: &LintArgs, progress: &mut Progress) -> anyhow::Result<i32> {
    let policy = Policy::load(ws, args.policy.ledger.as_deref())?;
    progress.policy = Some(policy.source.describe());
    let tree = WorkTree { ws };
    let freeze = load_freeze(&tree, &policy)?;
    let today = today_utc();
    let (mut findings, stats) = rules::freeze::judge(&rules::freeze::FreezeInput {
        freeze_path: &policy.freeze.file,
        file: &freeze,
        ledger_budget: policy.freeze.max_active_leases,
        today,
        passing_frozen_is_error: policy.freeze.passing_frozen_is_error,
        outcomes: None,
        collected: None,
    });
    let lockfile = load_lockfile(&tree, &policy)?;
    for rel in lockfile.entries.keys() {
        ws.resolve(rel).map_err(|e| {
            InputError::new(&policy.fixtures.lockfile, format!("entry {rel:?}: {e}"))
        })?;
    }
    findings.extend(judge_property_files(
        &tree,
        &policy,
        &property_files(&tree, &policy)?,
    )?);

    match args.format {
        Format::Json => {
            let report = LintReport {
                ok: Some(findings.is_empty()),
                reasons: reasons(&findings),
                findings: &findings,
                policy: Some(policy.source.describe()),
                active_leases: Some(stats.active),
                expired_leases: Some(stats.expired),
                fixtures: Some(lockfile.entries.len()),
                error: None,
            };
            outln!("{}", serde_json::to_string_pretty(&report)?);
        }
        Format::Text => {
            let mut out = String::new();
            for f in &findings {
                render_finding(&mut out, f);
            }
            out!("{out}");
            outln!(
                "lint: {} ({}; {} active leases, {} expired, {} fixtures in the lockfile)",
                if findings.is_empty() {
                    "ok".to_string()
                } else {
                    format!("{} problem(s)", findings.len())
                },
                policy.source.describe(),
                stats.active,
                stats.expired,
                lockfile.entries.len()
            );
        }
    }
    Ok(if findings.is_empty() {
        exit::MERGE
    } else {
        exit::REJECT
    })
}
