//! Coverage report reader: coverage.py JSON, LCOV and Cobertura XML, detected by content.

use std::path::Path;

use crate::error::InputError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CoverageFormat {
    CoveragePyJson,
    Lcov,
    Cobertura,
}

/// The coverage figure guard judges, and what it was computed from.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Coverage {
    pub format: CoverageFormat,
    /// Percent in 0..=100.
    pub percent: f64,
}

pub fn read_coverage(path: &Path) -> Result<Coverage, InputError> {
    Err(InputError::new(
        path,
        "coverage reading is not implemented yet",
    ))
}
