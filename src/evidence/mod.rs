//! Test evidence read from runner artifacts: JUnit reports, coverage reports and lists of
//! collected test ids; and from the test sources themselves (`test_source`: what each test
//! function asserts). This module owns parsing untrusted artifact files; it judges nothing.
//! `record` holds the test-result types every result format yields; each format and each
//! coverage format is its own file.

pub mod collected;
pub mod coverage;
pub mod distinct;
pub mod fixtures;
pub mod junit;
pub mod position;
pub mod record;
pub mod test_source;
