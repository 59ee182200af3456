//! Evidence: what the run's reports show. Ordinary test failures, reports that contradict
//! the rest of the run, tests that passed in the base's reports and are gone or skipped now,
//! and proven coverage below the floor; and what agent commits did to the test sources
//! (`weakened`).

pub mod baseline;
pub mod coverage;
pub mod cross_checks;
pub mod test_failures;
pub mod weakened;
