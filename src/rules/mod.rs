//! The gate's rules, one family per file. Rules never read files, the clock or the
//! environment: they get what they judge as arguments and return findings.

pub mod baseline;
pub mod coverage;
pub mod cross_checks;
pub mod fixtures;
pub mod freeze;
pub mod lint;
pub mod malformed;
pub mod properties;
pub mod provenance;
pub mod test_failures;
