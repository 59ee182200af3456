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

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::policy::ledger::PolicySource;

    fn policy(text: &str) -> Policy {
        let source = PolicySource::File(PathBuf::from("qa/merge_ledger.toml"));
        Policy::parse(Path::new("qa/merge_ledger.toml"), text, source).unwrap()
    }

    fn strings(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    /// (path, message) of each piece of advice.
    fn said(
        policy: &Policy,
        freeze: &FreezeFile,
        files: &[&str],
        missing: &[&str],
    ) -> Vec<(String, String)> {
        advice(policy, freeze, &strings(files), &strings(missing))
            .into_iter()
            .map(|a| (a.path, a.message))
            .collect()
    }

    const TWO_PATHS: &str = "[properties]\npaths = [\"tests/properties\", \"tests/more\"]\n";
    const NO_FILE_HERE: &str = "`properties.paths` names no property test file here (files are named by `properties.files`: test_*.py, *_test.py, *.rs)";
    const NONE_ANYWHERE: &str = "; with no property test anywhere, `guard score` will reject every run (no property test ran)";

    #[test]
    fn a_property_path_without_property_files_is_named() {
        let p = policy(TWO_PATHS);
        let freeze = FreezeFile::empty();
        // Files under `tests/properties` count for it, a sibling that shares its prefix does not.
        assert_eq!(
            said(&p, &freeze, &["tests/properties/test_a.py"], &[]),
            vec![("tests/more".to_string(), NO_FILE_HERE.to_string())]
        );
        assert_eq!(
            said(
                &p,
                &freeze,
                &["tests/properties", "tests/more/x/test_b.py"],
                &[]
            ),
            Vec::<(String, String)>::new()
        );
        assert_eq!(
            said(
                &p,
                &freeze,
                &["tests/propertiesX/test_a.py", "tests/more/test_b.py"],
                &[]
            ),
            vec![("tests/properties".to_string(), NO_FILE_HERE.to_string())]
        );
    }

    #[test]
    fn a_missing_property_path_is_named_and_the_consequence_said_when_no_test_exists() {
        let p = policy(TWO_PATHS);
        let freeze = FreezeFile::empty();
        let gone = "`properties.paths` names a path that does not exist";
        assert_eq!(
            said(
                &p,
                &freeze,
                &["tests/properties/test_a.py"],
                &["tests/more"]
            ),
            vec![("tests/more".to_string(), gone.to_string())]
        );
        // No property file anywhere: each path says what `score` will do.
        assert_eq!(
            said(&p, &freeze, &[], &["tests/more"]),
            vec![
                (
                    "tests/properties".to_string(),
                    format!("{NO_FILE_HERE}{NONE_ANYWHERE}")
                ),
                ("tests/more".to_string(), format!("{gone}{NONE_ANYWHERE}")),
            ]
        );
        // Every path missing and properties required: lint's finding says it, not advice.
        assert_eq!(
            said(&p, &freeze, &[], &["tests/properties", "tests/more"]),
            Vec::<(String, String)>::new()
        );
        // Not required: nothing rejects, but the missing paths are still worth a word.
        let optional = policy(&format!("{TWO_PATHS}required = false\n"));
        assert_eq!(
            said(&optional, &freeze, &[], &["tests/properties", "tests/more"]),
            vec![
                ("tests/properties".to_string(), gone.to_string()),
                ("tests/more".to_string(), gone.to_string()),
            ]
        );
    }

    #[test]
    fn the_embedded_ledger_gets_no_advice_about_its_property_paths() {
        let freeze = FreezeFile::empty();
        assert_eq!(
            said(&Policy::embedded(), &freeze, &[], &[]),
            Vec::<(String, String)>::new()
        );
    }

    #[test]
    fn a_plain_freeze_list_without_a_budget_is_advised_one() {
        let list = FreezeFile::parse(Path::new("qa/freeze.txt"), b"tests/test_a.py::test_flaky\n")
            .unwrap();
        let files = ["tests/properties/test_a.py"];
        let p = policy("[freeze]\nfile = \"qa/freeze.txt\"\n");
        let got = advice(&p, &list, &strings(&files), &[]);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].path, "qa/freeze.txt");
        assert_eq!(
            got[0].message,
            "the plain freeze list has no lease budget, so any number of frozen tests may fail or skip (1 listed now)"
        );
        assert!(
            got[0].help.contains("(qa/merge_ledger.toml)"),
            "{}",
            got[0].help
        );
        // A budget in the ledger, or the TOML form (which always has one): no advice.
        let budget = policy("[freeze]\nfile = \"qa/freeze.txt\"\nmax_active_leases = 2\n");
        assert!(advice(&budget, &list, &strings(&files), &[]).is_empty());
        assert!(advice(&p, &FreezeFile::empty(), &strings(&files), &[]).is_empty());
    }
}
