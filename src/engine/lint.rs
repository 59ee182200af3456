//! `lint`: the policy judged without artifacts: the ledger parses, leases are well-formed,
//! unexpired and in budget, lockfile paths are safe, property files are not thin, and the
//! seed corpus is there. It also judges what `score` will reject whatever the test reports
//! say, as the same findings: fixtures missing from the lockfile or differing from it, and a
//! required property path that does not exist. Advice names a valid policy that may not mean
//! what its author meant; it does not fail the lint.

use jiff::civil::Date;

use crate::engine::score::{judge_fixtures, judge_property_files, property_files};
use crate::error::InputError;
use crate::policy::ledger::Policy;
use crate::policy::load::{load_freeze, load_lockfile};
use crate::report::{Kind, Report, Stats};
use crate::rules;
use crate::source::{Source, WorkTree};
use crate::workspace::Workspace;

/// Lints the policy of `ws`.
pub fn lint(ws: &Workspace, policy: &Policy, today: Date) -> anyhow::Result<Report> {
    let tree = WorkTree { ws };
    let freeze = load_freeze(&tree, policy)?;
    let (mut findings, stats) = rules::freeze::judge(&rules::freeze::FreezeInput {
        freeze_path: &policy.freeze.file,
        file: &freeze,
        ledger_budget: policy.freeze.max_active_leases,
        today,
        passing_frozen_is_error: policy.freeze.passing_frozen_is_error,
        outcomes: None,
        collected: None,
    });
    let lockfile = load_lockfile(&tree, policy)?;
    for rel in lockfile.entries.keys() {
        ws.resolve(rel).map_err(|e| {
            InputError::new(&policy.fixtures.lockfile, format!("entry {rel:?}: {e}"))
        })?;
    }
    let prop_files = property_files(&tree, policy)?;
    findings.extend(judge_property_files(&tree, policy, &prop_files)?);
    let missing_paths = missing_property_paths(&tree, policy)?;
    let no_property_can_run = policy.properties.required
        && !policy.files_optional()
        && prop_files.is_empty()
        && missing_paths.len() == policy.properties.paths.len();
    if no_property_can_run {
        findings.push(rules::lint::no_property_path_finding(
            policy,
            &missing_paths,
        ));
    }
    // The corpus against the lockfile, as `score` judges it (the embedded policy has no
    // fixtures to judge until `guard init` writes a lockfile).
    if !policy.files_optional() {
        findings.extend(judge_fixtures(&tree, policy, &lockfile)?.0);
    }

    let mut report = Report::gate(policy.source.clone(), findings, Stats::unknown(today, None));
    report.kind = Kind::Lint;
    report.stats.active_leases = Some(stats.active);
    report.stats.expired_leases = Some(stats.expired);
    report.fixtures = Some(lockfile.entries.len());
    report.advice = rules::lint::advice(policy, &freeze, &prop_files, &missing_paths);
    Ok(report)
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
