//! The figures a report carries beside its findings (the JSON contract's counts, the JUnit
//! totals) and how a test command that guard ran ended.

use jiff::civil::Date;
use serde::Serialize;

/// How the test command `guard run` ran ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunnerExit {
    /// The program and its arguments, as given.
    pub command: Vec<String>,
    /// Its exit status; `None` when a signal ended it.
    pub exit_code: Option<i32>,
    /// The signal that ended it (Unix).
    pub signal: Option<i32>,
}

impl RunnerExit {
    pub fn succeeded(&self) -> bool {
        self.exit_code == Some(0)
    }

    /// The command as a shell would take it, for messages.
    pub fn command_line(&self) -> String {
        shlex::try_join(self.command.iter().map(String::as_str))
            .unwrap_or_else(|_| format!("{:?}", self.command))
    }

    /// `exited with status 3`, `was killed by signal 9`.
    pub fn describe(&self) -> String {
        match (self.exit_code, self.signal) {
            (Some(code), _) => format!("exited with status {code}"),
            (None, Some(signal)) => format!("was killed by signal {signal}"),
            (None, None) => "ended without an exit status".to_string(),
        }
    }
}

/// The figures of the JSON contract (DESIGN.md), beside the findings. A figure that was not
/// computed (its input could not be read, or was not given) is `None`, shown as `null`.
#[derive(Debug, Clone, Serialize)]
pub struct Stats {
    pub today_utc: String,
    pub collected_tests: Option<usize>,
    pub active_leases: Option<usize>,
    pub expired_leases: Option<usize>,
    pub proven_coverage_percent: Option<f64>,
    pub min_proven_coverage_percent: Option<f64>,
    pub fixture_digest_delta: Option<usize>,
    /// `None` when no JUnit report was scored: property outcomes were not judged.
    pub property_failures: Option<usize>,
    pub agent_added_leases: Option<usize>,
    pub junit: Option<JunitStats>,
}

/// The `junit` figures: what the reports hold as written, and the tests they are of.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct JunitStats {
    pub files: u64,
    /// `<testcase>` elements as written, every repeated record and rerun attempt included.
    pub cases: u64,
    /// Distinct test ids (classname and name) once duplicate records merge; `passed`,
    /// `failed`, `errors` and `skipped` count these, each under its worst record's outcome.
    pub tests: u64,
    pub passed: u64,
    pub failed: u64,
    pub errors: u64,
    pub skipped: u64,
}

impl Stats {
    /// Figures for a run that computed nothing: every figure unknown but the floor, which is
    /// known once the ledger (or `--min-proven`) was read.
    pub fn unknown(today: Date, floor: Option<f64>) -> Stats {
        Stats {
            today_utc: today.to_string(),
            collected_tests: None,
            active_leases: None,
            expired_leases: None,
            proven_coverage_percent: None,
            min_proven_coverage_percent: floor,
            fixture_digest_delta: None,
            property_failures: None,
            agent_added_leases: None,
            junit: None,
        }
    }

    /// Whether test outcomes were judged: at least one JUnit report was read.
    pub fn tests_scored(&self) -> bool {
        self.junit.is_some_and(|j| j.files > 0)
    }
}
