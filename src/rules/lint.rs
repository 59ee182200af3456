//! Lint: what `lint` says about a valid policy before any test ran: a required property
//! path that does not exist (a finding: `score` will reject every run), and advice about a
//! policy that may not mean what its author meant (property paths with no property test,
//! a plain freeze list without a budget).

use crate::policy::freeze::{FreezeFile, FreezeFormat};
use crate::policy::ledger::Policy;
use crate::report::{Advice, Code, Finding};

/// Required properties and no property path exists: no property test can run, so `score`
/// rejects every run with `property_hold` ("no property test ran").
pub fn no_property_path_finding(policy: &Policy, missing: &[String]) -> Finding {
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

/// The advice for `policy`, its freeze file, its property files (`property_files`) and
/// the property paths with nothing at them.
pub fn advice(
    policy: &Policy,
    freeze: &FreezeFile,
    prop_files: &[String],
    missing_paths: &[String],
) -> Vec<Advice> {
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
            warnings.push(Advice {
                path: path.clone(),
                message: format!(
                    "`properties.paths` names a path that does not exist{consequence}"
                ),
                help: "create it with the property tests, or correct the path".to_string(),
            });
        } else {
            warnings.push(Advice {
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
        warnings.push(Advice {
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
