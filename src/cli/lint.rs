//! `guard lint`: validate the policy without artifacts: the ledger parses, leases are
//! well-formed, unexpired and in budget, lockfile paths are safe, property files are not
//! thin, and the seed corpus is there. It also judges what `score` will reject whatever the
//! test reports say, as the same findings: fixtures missing from the lockfile or differing
//! from it, and a required property path that does not exist. Warnings name a valid policy
//! that may not mean what its author meant; they do not fail the lint.

use serde::Serialize;

use crate::cli::Progress;
use crate::cli::args::LintArgs;
use crate::engine::score::{
    judge_fixtures, judge_property_files, load_freeze, load_lockfile, property_files,
};
use crate::error::{ErrorReport, InputError};
use crate::exit;
use crate::policy::freeze::{FreezeFile, FreezeFormat, today_utc};
use crate::policy::ledger::Policy;
use crate::report::finding::{Code, Finding, reasons};
use crate::report::{Format, count, render_finding};
use crate::rules;
use crate::source::{Source, WorkTree};
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
    let missing_paths = missing_property_paths(&tree, &policy)?;
    let no_property_can_run = policy.properties.required
        && !policy.files_optional()
        && prop_files.is_empty()
        && missing_paths.len() == policy.properties.paths.len();
    if no_property_can_run {
        findings.push(no_property_path_finding(&policy, &missing_paths));
    }
    // The corpus against the lockfile, as `score` judges it (the embedded policy has no
    // fixtures to judge until `guard init` writes a lockfile).
    if !policy.files_optional() {
        findings.extend(judge_fixtures(&tree, &policy, &lockfile)?.0);
    }
    let warnings = warnings(&policy, &freeze, &prop_files, &missing_paths);

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

/// The property paths with nothing at them (no directory, no file).
fn missing_property_paths(tree: &WorkTree, policy: &Policy) -> anyhow::Result<Vec<String>> {
    let mut missing = Vec::new();
    for path in &policy.properties.paths {
        if !tree.is_dir(path)? && tree.read(path)?.is_none() {
            missing.push(path.clone());
        }
    }
    Ok(missing)
}

/// Required properties and no property path exists: no property test can run, so `score`
/// rejects every run with `property_hold` ("no property test ran").
fn no_property_path_finding(policy: &Policy, missing: &[String]) -> Finding {
    Finding::new(
        Code::PropertyHold,
        format!(
            "`properties.paths` names nothing that exists ({}), so no property test can run and `guard score` will reject every run (no property test ran)",
            missing.join(", ")
        ),
    )
    .path(missing.first().map_or("", String::as_str))
    .help(format!(
        "add the property tests there (files named by `properties.files`: {}), or point `properties.paths` at them; while the project has none, `properties.required = false` in the ledger",
        policy.properties.file_patterns.join(", ")
    ))
}

/// The warnings for `policy`, its freeze file, its property files (`property_files`) and
/// the property paths with nothing at them.
fn warnings(
    policy: &Policy,
    freeze: &FreezeFile,
    prop_files: &[String],
    missing_paths: &[String],
) -> Vec<Warning> {
    let mut warnings = Vec::new();
    // A property path with no property file in it (a typo, or `files` globs that name none
    // of its files) finds no property test there; when none is found anywhere, `score`
    // says "no property test ran" on every run (lint's finding when no path exists).
    let all_missing = missing_paths.len() == policy.properties.paths.len();
    for path in &policy.properties.paths {
        let under = |f: &String| {
            f == path
                || f.strip_prefix(path.as_str())
                    .is_some_and(|rest| rest.starts_with('/'))
        };
        if policy.files_optional() || prop_files.iter().any(under) {
            continue;
        }
        let consequence = if policy.properties.required && prop_files.is_empty() {
            "; with no property test anywhere, `guard score` will reject every run (no property test ran)"
        } else {
            ""
        };
        if missing_paths.contains(path) {
            if policy.properties.required && prop_files.is_empty() && all_missing {
                continue; // the finding says it
            }
            warnings.push(Warning {
                path: path.clone(),
                message: format!(
                    "`properties.paths` names a path that does not exist{consequence}"
                ),
                help: "create it with the property tests, or correct the path".to_string(),
            });
        } else {
            warnings.push(Warning {
                path: path.clone(),
                message: format!(
                    "`properties.paths` names no property test file here (files are named by `properties.files`: {}){consequence}",
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
