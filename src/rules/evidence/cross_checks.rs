//! Cross-checks of the reports against the rest of the run's evidence. A report is written by
//! a process that runs the agent's code, so it is held against what that code does not write:
//! the list of collected tests, and the exit status of the runner that guard ran itself.

use crate::report::RunnerExit;
use crate::report::finding::{Code, Finding};

/// `missing` are the collected ids (as collected, in order) that no record in the reports is
/// of, frozen tests left out (the freeze rule judges those).
pub fn judge_collected(missing: &[&str]) -> Vec<Finding> {
    missing
        .iter()
        .map(|id| {
            Finding::new(
                Code::TestMissingFromReport,
                format!("test {id} was collected, but no record in the JUnit reports is of it"),
            )
            .test(*id)
            .help(
                "score the report of a run of the collected tests, as the runner wrote it; \
                 collect with the same paths and options as that run",
            )
        })
        .collect()
}

/// A runner that failed must show why: `reports_show_failure` is whether any record (frozen
/// and property tests included) failed or errored, or a suite reports an error.
pub fn judge_runner(runner: &RunnerExit, reports_show_failure: bool) -> Option<Finding> {
    if runner.succeeded() || reports_show_failure {
        return None;
    }
    Some(
        Finding::new(
            Code::ReportMismatch,
            format!(
                "the test runner `{}` {}, but its reports show no failing test",
                runner.command_line(),
                runner.describe()
            ),
        )
        .help(
            "find out why the run failed (the runner's output is above): a crash after the \
             report was written, an option that fails the run for another reason \
             (`--cov-fail-under`, `-W error`), or code under test that rewrote the report; \
             fix it and run again",
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runner(exit_code: Option<i32>, signal: Option<i32>) -> RunnerExit {
        RunnerExit {
            command: vec![
                "python3".into(),
                "-m".into(),
                "pytest".into(),
                "-k".into(),
                "not slow".into(),
            ],
            exit_code,
            signal,
        }
    }

    #[test]
    fn a_failed_run_needs_a_failure_in_its_reports() {
        assert_eq!(judge_runner(&runner(Some(0), None), false), None);
        assert_eq!(judge_runner(&runner(Some(0), None), true), None);
        assert_eq!(judge_runner(&runner(Some(1), None), true), None);
        let found = judge_runner(&runner(Some(1), None), false).unwrap();
        assert_eq!(found.code, Code::ReportMismatch);
        assert_eq!(
            found.message,
            "the test runner `python3 -m pytest -k 'not slow'` exited with status 1, but its \
             reports show no failing test"
        );
        let killed = judge_runner(&runner(None, Some(9)), false).unwrap();
        assert!(
            killed.message.contains("was killed by signal 9"),
            "{}",
            killed.message
        );
    }

    #[test]
    fn each_missing_test_is_named() {
        let found = judge_collected(&["tests/test_a.py::test_x", "tests/test_a.py::test_y"]);
        assert_eq!(found.len(), 2);
        assert!(found.iter().all(|f| f.code == Code::TestMissingFromReport));
        assert_eq!(found[1].test.as_deref(), Some("tests/test_a.py::test_y"));
    }
}
