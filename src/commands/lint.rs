//! `guard lint`: validate the policy without artifacts: the ledger parses, leases are
//! well-formed, unexpired and in budget, lockfile paths are safe, property files are not
//! thin, and the seed corpus is there. Warnings name a valid policy that may not mean what
//! its author meant; they do not fail the lint.

use serde::Serialize;

use crate::cli::LintArgs;
use crate::commands::Progress;
use crate::error::{ErrorReport, InputError};
use crate::exit;
use crate::findings::{Code, Finding, reasons};
use crate::freeze::{FreezeFile, FreezeFormat, today_utc};
use crate::ledger::Policy;
use crate::report::{Format, count, render_finding};
use crate::rules;
use crate::score::{judge_property_files, load_freeze, load_lockfile, property_files};
use crate::source::WorkTree;
use crate::workspace::Workspace;

/// A valid policy that may not mean what was meant: reported, exit code unchanged.
#[derive(Serialize)]
struct Warning {
    path: String,
    message: String,
    help: String,
}

/// The JSON object of `lint`. A run that could not be judged has `ok`, the counts (and,
/// when the ledger was not read, `policy`) `null`, and `error`.
#[derive(Serialize)]
struct LintReport<'a> {
    ok: Option<bool>,
    reasons: Vec<Code>,
    findings: &'a [Finding],
    warnings: &'a [Warning],
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
        warnings: &[],
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
    let prop_files = property_files(&tree, &policy)?;
    findings.extend(judge_property_files(&tree, &policy, &prop_files)?);
    let warnings = warnings(&policy, &freeze, &prop_files);

    match args.format {
        Format::Json => {
            let report = LintReport {
                ok: Some(findings.is_empty()),
                reasons: reasons(&findings),
                findings: &findings,
                warnings: &warnings,
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
            for w in &warnings {
                out.push_str(&format!(
                    "warning: {}: {}\n  help: {}\n",
                    w.path, w.message, w.help
                ));
            }
            out!("{out}");
            outln!(
                "lint: {}{} ({}; {}, {} expired, {} in the lockfile)",
                if findings.is_empty() {
                    "ok".to_string()
                } else {
                    count(findings.len(), "problem")
                },
                match warnings.len() {
                    0 => String::new(),
                    n => format!(", {}", count(n, "warning")),
                },
                policy.source.describe(),
                count(stats.active, "active lease"),
                stats.expired,
                count(lockfile.entries.len(), "fixture")
            );
        }
    }
    Ok(if findings.is_empty() {
        exit::MERGE
    } else {
        exit::REJECT
    })
}

/// The warnings for `policy`, its freeze file and its property files (`property_files`).
fn warnings(policy: &Policy, freeze: &FreezeFile, prop_files: &[String]) -> Vec<Warning> {
    let mut warnings = Vec::new();
    // A property path with no property file in it (a typo, or `files` globs that name none
    // of its files) leaves `score` to say "no property test ran" on every run.
    for path in &policy.properties.paths {
        let under = |f: &String| {
            f == path
                || f.strip_prefix(path.as_str())
                    .is_some_and(|rest| rest.starts_with('/'))
        };
        if !policy.files_optional() && !prop_files.iter().any(under) {
            warnings.push(Warning {
                path: path.clone(),
                message: format!(
                    "`properties.paths` names no property test file here (files are named by `properties.files`: {})",
                    policy.properties.file_patterns.join(", ")
                ),
                help: "correct the path, or the `properties.files` globs, so the property tests are found".to_string(),
            });
        }
    }
    // The first article's plain list has no budget; that is allowed (its frozen tests may
    // fail or skip however many there are), but rarely what a team wants for long.
    if freeze.format == FreezeFormat::List
        && freeze.budget(policy.freeze.max_active_leases).is_none()
    {
        warnings.push(Warning {
            path: policy.freeze.file.clone(),
            message: format!(
                "the plain freeze list has no lease budget, so any number of frozen tests may fail or skip ({} listed now)",
                freeze.leases.len()
            ),
            help: format!(
                "set `max_active_leases = N` under `[freeze]` in the ledger ({}), a budget picked from the suite's size",
                policy.source.describe()
            ),
        });
    }
    warnings
}
