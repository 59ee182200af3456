//! The element names a JUnit reader acts on: which outcome each marks on a record, how marks
//! combine into an `Outcome`, and which other spellings (case, namespace prefix) are taken
//! for them so that the parser can refuse them.

use crate::evidence::record::Outcome;

// Outcome elements seen inside a testcase, as bits.
const FAILURE: u8 = 1;
const ERROR: u8 = 2;
const SKIPPED: u8 = 4;
const RERUN: u8 = 8;

/// The element names a JUnit reader acts on, as runners spell them.
const JUNIT_NAMES: [&str; 10] = [
    "failure",
    "error",
    "skipped",
    "rerunFailure",
    "rerunError",
    "flakyFailure",
    "flakyError",
    "testcase",
    "testsuite",
    "testsuites",
];

/// The JUnit name `element` is a spelling of, ignoring case and a namespace prefix
/// (`Failure`, `x:failure` and `failure` are all `failure`), if any.
pub(super) fn spelled_like(element: &str) -> Option<&'static str> {
    let local = element.rsplit_once(':').map_or(element, |(_, local)| local);
    JUNIT_NAMES
        .into_iter()
        .find(|known| known.eq_ignore_ascii_case(local))
}

/// Whether `mark` is a failure's or an error's (not a skip or a rerun's).
pub(super) fn fails(mark: u8) -> bool {
    mark & (FAILURE | ERROR) != 0
}

pub(super) fn outcome_mark(element: &str) -> u8 {
    match element {
        "failure" => FAILURE,
        "error" => ERROR,
        "skipped" => SKIPPED,
        "rerunFailure" | "rerunError" | "flakyFailure" | "flakyError" => RERUN,
        _ => 0,
    }
}

pub(super) fn outcome_of(marks: u8) -> Outcome {
    if marks & ERROR != 0 {
        Outcome::Errored
    } else if marks & FAILURE != 0 {
        Outcome::Failed
    } else if marks & RERUN != 0 {
        Outcome::Flaky
    } else if marks & SKIPPED != 0 {
        Outcome::Skipped
    } else {
        Outcome::Passed
    }
}
