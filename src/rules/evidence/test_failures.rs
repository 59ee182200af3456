//! Ordinary tests (neither frozen nor property tests): in a hook the report is the only
//! evidence, so a failing one rejects unless the ledger hands that job to CI. So does an error
//! a suite reports outside any test (collection and setup errors).

use std::collections::BTreeMap;

use crate::error::Location;
use crate::evidence::record::{Outcome, SuiteFailure};
use crate::report::finding::{Code, Finding};

/// `junit_missing`: no JUnit report was given where evidence is expected; `example` is how
/// the project's runner writes one.
pub fn junit_missing(example: &str) -> Finding {
    Finding::new(
        Code::JunitMissing,
        "no JUnit report given: nothing shows that the tests ran",
    )
    .help(format!(
        "pass --junit with the report of the test run (e.g. {example})"
    ))
}

/// `failures` maps a test's display id to its merged outcome (only tests that did not pass).
pub fn judge(failures: &BTreeMap<String, Outcome>, failures_reject: bool) -> Vec<Finding> {
    if !failures_reject {
        return Vec::new();
    }
    failures
        .iter()
        .filter_map(|(id, outcome)| {
            let what = match outcome {
                Outcome::Failed => "failed",
                Outcome::Errored => "errored",
                Outcome::Flaky => "failed, then passed on a rerun (a rerun pass is not evidence)",
                Outcome::Passed | Outcome::Skipped => return None,
            };
            Some(
                Finding::new(Code::TestFailures, format!("test {id} {what}"))
                    .test(id)
                    .help("fix the code or the test; a known flake needs a lease in the freeze file from a human"),
            )
        })
        .collect()
}

/// `failures` are the `<failure>`/`<error>` elements written on suites, each with the report
/// it is in.
pub fn judge_suites(failures: &[(String, SuiteFailure)], failures_reject: bool) -> Vec<Finding> {
    if !failures_reject {
        return Vec::new();
    }
    failures
        .iter()
        .map(|(report, failure)| {
            let what = match failure.outcome {
                Outcome::Errored => "an error",
                _ => "a failure",
            };
            let suite = if failure.suite.is_empty() {
                "a suite without a name".to_string()
            } else {
                format!("suite {}", failure.suite)
            };
            let mut message = format!("{suite} reports {what} outside any test");
            if let Location::Byte(byte) = failure.location {
                message.push_str(&format!(" (at byte {byte})"));
            }
            if let Some(text) = &failure.message {
                message.push_str(&format!(": {text}"));
            }
            let finding = Finding::new(Code::TestFailures, message).path(report);
            match failure.location {
                Location::LineColumn(line, column) => finding.line(line).column(column),
                Location::Line(line) => finding.line(line),
                Location::Byte(_) => finding,
            }
            .test(&failure.suite)
                .help("a suite-level error is a collection or setup failure (an import error, a failing module fixture or setUpClass): the tests under it did not run; fix it")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Location;

    #[test]
    fn suite_failures_reject_unless_switched_off() {
        let failure = SuiteFailure {
            suite: "tests.test_setup".into(),
            outcome: Outcome::Errored,
            message: Some("setup_module failed".into()),
            location: Location::LineColumn(3, 5),
        };
        let found = judge_suites(&[("junit.xml".into(), failure.clone())], true);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].code, Code::TestFailures);
        assert_eq!(
            found[0].message,
            "suite tests.test_setup reports an error outside any test: setup_module failed"
        );
        assert_eq!(
            (found[0].path.as_deref(), found[0].line, found[0].column),
            (Some("junit.xml"), Some(3), Some(5))
        );
        assert_eq!(found[0].test.as_deref(), Some("tests.test_setup"));
        assert!(judge_suites(&[("j".into(), failure)], false).is_empty());
    }

    #[test]
    fn failures_reject_unless_switched_off() {
        let mut failures = BTreeMap::new();
        failures.insert("t::a".to_string(), Outcome::Failed);
        failures.insert("t::b".to_string(), Outcome::Errored);
        failures.insert("t::c".to_string(), Outcome::Flaky);
        let found = judge(&failures, true);
        assert_eq!(found.len(), 3);
        assert!(found.iter().all(|f| f.code == Code::TestFailures));
        assert_eq!(found[0].test.as_deref(), Some("t::a"));
        assert!(judge(&failures, false).is_empty());
    }
}
