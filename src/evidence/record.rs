//! The test-result records every result reader yields (one `TestCase` per record, its
//! `Outcome`) and what a reader returns besides them (counts, suite-level failures). Shared
//! by any result format; the formats themselves live in their own modules (`junit`). The
//! `Junit` in `JunitCounts` and `JunitFile` dates from when JUnit was the only format.

use crate::error::Location;

/// The result of one test record (a JUnit `<testcase>`), ordered so that merging duplicate
/// records of one test keeps the worst: an error or failure wins over a flaky pass, a pass
/// over a skip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Outcome {
    Skipped,
    Passed,
    /// Passed in the end, but a rerun or flaky element records an earlier failure.
    Flaky,
    Failed,
    Errored,
}

/// One test record (a JUnit `<testcase>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestCase {
    pub classname: String,
    pub name: String,
    /// The `file` attribute when the runner writes one (pytest xunit1, some others).
    pub file: Option<String>,
    pub outcome: Outcome,
    /// The first failure's or error's `message` (its first line, shortened), when it has one.
    pub message: Option<Box<str>>,
}

/// Counts of one or more reports, before duplicate records merge.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct JunitCounts {
    pub files: u64,
    /// `<testcase>` elements as written, every attempt of a rerun included.
    pub cases: u64,
    /// Records by outcome, the attempts of one test that a rerun plugin writes back to back
    /// taken as one record (so these add up to `cases` less those repeated attempts).
    pub passed: u64,
    pub failed: u64,
    pub errors: u64,
    pub skipped: u64,
}

/// A `<failure>` or `<error>` written on a suite (`<testsuite>` or `<testsuites>`) rather
/// than on a record: how some runners report a collection or setup error. It is no test's
/// outcome, and a failure all the same.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuiteFailure {
    /// The suite's `name`, empty when it has none.
    pub suite: String,
    /// `Failed` for `<failure>`, `Errored` for `<error>`.
    pub outcome: Outcome,
    /// The element's `message` attribute.
    pub message: Option<String>,
    /// Where the element opens.
    pub location: Location,
}

/// What one report holds besides its records: what a reader returns.
#[derive(Debug, Clone, PartialEq)]
pub struct JunitFile {
    /// This file's counts (`files` is 1).
    pub counts: JunitCounts,
    pub suite_failures: Vec<SuiteFailure>,
}
