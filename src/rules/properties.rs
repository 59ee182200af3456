//! Properties: every property test passes and at least one ran, no property file is thin,
//! and the seed corpus the properties read exists and is not empty.

use std::collections::BTreeMap;

use crate::evidence::record::Outcome;
use crate::report::finding::{Code, Finding};
use crate::runner::TestRunner;

/// Judges the property tests found in the reports. Returns the findings and the number of
/// property tests that did not hold (one when none ran and one must: the report's
/// "properties failed or not run" then agrees with "no property test ran").
pub fn judge_results(
    properties: &BTreeMap<String, Outcome>,
    paths: &[String],
    required: bool,
    runner: TestRunner,
) -> (Vec<Finding>, usize) {
    let mut findings = Vec::new();
    let mut failures = 0;
    if properties.is_empty() && required {
        failures = 1;
        findings.push(
            Finding::new(
                Code::PropertyHold,
                format!(
                    "no property test ran (looked for tests under {})",
                    paths.join(", ")
                ),
            )
            .help(format!(
                "run the property suite into the JUnit report, e.g. {}",
                runner.junit_hint()
            )),
        );
    }
    for (id, outcome) in properties {
        let what = match outcome {
            Outcome::Passed => continue,
            Outcome::Failed => "failed",
            Outcome::Errored => "errored",
            Outcome::Flaky => "failed on a run and passed on a rerun",
            Outcome::Skipped => "was skipped (a skipped property proves nothing)",
        };
        failures += 1;
        findings.push(
            Finding::new(Code::PropertyHold, format!("property {id} {what}"))
                .test(id)
                .help("reject the patch; do not change the property or its seeds to make it pass"),
        );
    }
    (findings, failures)
}

/// Property files with no record in the reports. `ran` holds the (classname, file) of every
/// property record. A Python file `tests/properties/test_x.py` ran when a record's `file` is
/// it or its classname is `tests.properties.test_x` (or a class in it); `tests/NAME.rs` ran
/// when a nextest binary `crate::NAME` reported. Other files cannot be told apart and pass.
pub fn judge_files_ran(
    files: &[String],
    ran: &std::collections::HashSet<(String, Option<String>)>,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    for path in files {
        let seen = if let Some(module) = path.strip_suffix(".py") {
            let dotted = module.replace('/', ".");
            ran.iter().any(|(classname, file)| {
                file.as_deref().map(|f| f.trim_start_matches("./")) == Some(path.as_str())
                    || classname == &dotted
                    || classname
                        .strip_prefix(dotted.as_str())
                        .is_some_and(|r| r.starts_with('.'))
            })
        } else if let Some(stem) = path
            .strip_prefix("tests/")
            .and_then(|p| p.strip_suffix(".rs"))
            .filter(|s| !s.contains('/'))
        {
            ran.iter().any(|(classname, _)| {
                classname
                    .rsplit_once("::")
                    .is_some_and(|(_, target)| target == stem)
            })
        } else {
            true
        };
        if !seen {
            findings.push(
                Finding::new(Code::PropertyHold, "property file has no test in the reports: it did not run")
                    .path(path)
                    .help("run every property test into the JUnit report; a property that was deselected or skipped proves nothing"),
            );
        }
    }
    findings
}

/// Why a property test file is thin, or `None`: fewer than `min_lines` non-empty,
/// non-comment lines, or no `assert`/`raise`/`panic!` at all (the first article's lint).
pub fn thin_reason(text: &str, min_lines: usize) -> Option<String> {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with("//"))
        .collect();
    let asserts = lines
        .iter()
        .any(|l| l.contains("assert") || l.contains("raise") || l.contains("panic!"));
    match (lines.len() < min_lines, asserts) {
        (true, false) => Some(format!(
            "{} code lines (minimum {min_lines}) and no assert or raise",
            lines.len()
        )),
        (true, true) => Some(format!("{} code lines (minimum {min_lines})", lines.len())),
        (false, false) => Some("no assert or raise".to_string()),
        (false, true) => None,
    }
}

/// Judges property files given as (repository-relative path, text).
pub fn judge_files(files: &[(String, String)], min_lines: usize) -> Vec<Finding> {
    files
        .iter()
        .filter_map(|(path, text)| {
            let reason = thin_reason(text, min_lines)?;
            Some(
                Finding::new(Code::PropertyThin, format!("thin property file: {reason}"))
                    .path(path)
                    .help("a property names an invariant with real assertions; restore the human-written file"),
            )
        })
        .collect()
}

/// Judges the seed corpus: `files` is the number of files in it, `None` when it is missing.
pub fn judge_seeds(seeds: &str, files: Option<usize>) -> Vec<Finding> {
    let message = match files {
        None => "property seed corpus is missing",
        Some(0) => "property seed corpus is empty",
        Some(_) => return Vec::new(),
    };
    // A new suite has nothing to restore: say how to create the corpus, and how to do
    // without one, as well as what to do when a patch took it away.
    let help = format!(
        "create {seeds}/ with the seed files the property tests read and commit them as a human \
         (seeds are human-owned and read-only); if a patch removed them, restore them from the \
         base branch; if the properties read no seeds, remove `properties.seeds` from the ledger"
    );
    vec![
        Finding::new(Code::PropertySeeds, message)
            .path(seeds)
            .help(help),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_property_run_rejects_when_required() {
        let (found, failures) = judge_results(
            &BTreeMap::new(),
            &["tests/properties".into()],
            true,
            TestRunner::Nextest,
        );
        assert_eq!(found[0].code, Code::PropertyHold);
        // Counted, so that the text report's "properties failed or not run" is not 0 beside
        // "no property test ran".
        assert_eq!(failures, 1);
        assert!(
            found[0]
                .help
                .as_deref()
                .unwrap()
                .contains("cargo nextest run --profile ci")
        );
        assert!(
            judge_results(&BTreeMap::new(), &[], false, TestRunner::Pytest)
                .0
                .is_empty()
        );
    }

    #[test]
    fn any_non_pass_breaks_the_hold() {
        let mut props = BTreeMap::new();
        props.insert("p::ok".to_string(), Outcome::Passed);
        props.insert("p::fail".to_string(), Outcome::Failed);
        props.insert("p::skip".to_string(), Outcome::Skipped);
        props.insert("p::flaky".to_string(), Outcome::Flaky);
        let (found, failures) = judge_results(&props, &[], true, TestRunner::Pytest);
        assert_eq!(failures, 3);
        assert_eq!(found.len(), 3);
        props.retain(|_, o| *o == Outcome::Passed);
        assert_eq!(
            judge_results(&props, &[], true, TestRunner::Pytest),
            (vec![], 0)
        );
    }

    #[test]
    fn property_files_that_did_not_run_are_named() {
        let ran: std::collections::HashSet<(String, Option<String>)> = [
            ("tests.properties.test_codec".to_string(), None),
            (
                "x".to_string(),
                Some("tests/properties/test_filed.py".to_string()),
            ),
            ("crate::properties".to_string(), None),
        ]
        .into();
        let files: Vec<String> = [
            "tests/properties/test_codec.py",
            "tests/properties/test_filed.py",
            "tests/properties/test_money.py",
            "tests/properties.rs",
            "tests/other.rs",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let found = judge_files_ran(&files, &ran);
        let paths: Vec<&str> = found.iter().map(|f| f.path.as_deref().unwrap()).collect();
        assert_eq!(
            paths,
            vec!["tests/properties/test_money.py", "tests/other.rs"]
        );
    }

    #[test]
    fn thin_files_are_found() {
        let tautology = "from x import f\n\ndef test_f():\n    assert f(1) == f(1)\n";
        assert!(thin_reason(tautology, 8).unwrap().contains("3 code lines"));
        let no_assert = (0..10).map(|i| format!("x{i} = {i}\n")).collect::<String>();
        assert_eq!(
            thin_reason(&no_assert, 8).as_deref(),
            Some("no assert or raise")
        );
        let comments = "# a\n# b\n# c\n# d\n# e\n# f\n# g\n# h\nassert x\n";
        assert!(thin_reason(comments, 8).is_some(), "comments do not count");
        let real = "import json\n\ndef test_a():\n    a = 1\n    b = 2\n    c = a + b\n    d = c * 2\n    e = d - 1\n    assert e == 5\n";
        assert_eq!(thin_reason(real, 8), None);
        // A `raise` or a `panic!` checks as an `assert` does.
        let body = "let a = 1;\nlet b = 2;\nlet c = a + b;\nlet d = c * 2;\nlet e = d - 1;\nlet f = e;\nlet g = f;\n";
        for check in [
            "if g != 5 { panic!(\"{g}\") }\n",
            "if g != 5: raise ValueError(g)\n",
        ] {
            assert_eq!(thin_reason(&format!("{body}{check}"), 8), None, "{check}");
        }
        let found = judge_files(
            &[("tests/properties/test_t.py".into(), tautology.into())],
            8,
        );
        assert_eq!(found[0].code, Code::PropertyThin);
        assert_eq!(found[0].path.as_deref(), Some("tests/properties/test_t.py"));
    }

    #[test]
    fn seeds_missing_or_empty_reject() {
        assert_eq!(judge_seeds("s", None)[0].code, Code::PropertySeeds);
        assert_eq!(judge_seeds("s", Some(0))[0].code, Code::PropertySeeds);
        assert!(judge_seeds("s", Some(2)).is_empty());
    }
}
