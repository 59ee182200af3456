//! Coverage report reader: coverage.py JSON, LCOV and Cobertura XML, detected by content.
//! It computes the overall figure from the report's line data and refuses a report whose own
//! totals contradict that data (a file is written by a process that runs the agent's code);
//! it does not judge the figure against a floor.
//!
//! One file per format (`coverage_py`, `lcov`, `cobertura`); this module tells them apart by
//! content and holds what they share.

mod cobertura;
mod coverage_py;
mod lcov;
#[cfg(test)]
mod tests;

use std::fs::File;
use std::io::{BufReader, Cursor, Read};
use std::path::Path;

use crate::error::InputError;
use cobertura::read_cobertura;
use coverage_py::read_coverage_py;
use lcov::read_lcov;

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
    /// The counts behind `percent` when the report gives them: lines for LCOV and
    /// Cobertura; statements plus branches for coverage.py JSON (branches are 0 unless the
    /// run measured them). `None` when only a rate was given (Cobertura `line-rate`).
    pub covered: Option<u64>,
    pub total: Option<u64>,
    /// Which contexts ran each executed line, when the report records them (coverage.py
    /// JSON written with `--show-contexts` from a run with contexts, such as pytest-cov's
    /// `--cov-context=test`).
    #[serde(skip)]
    pub contexts: Option<Contexts>,
}

/// Which contexts (with pytest-cov's `--cov-context=test`, the tests) ran each executed line
/// of a coverage report. Judging which of them count is the rules' job.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Contexts {
    /// Each distinct context as the report writes it: `tests/test_x.py::test_y|run` (or
    /// `|setup`, `|teardown`), `""` for code run outside any test (at import), or a label.
    pub names: Vec<String>,
    /// Per executed line, the indices (into `names`) of the contexts that ran it; empty for
    /// an executed line the report gives no context for.
    pub lines: Vec<Vec<u32>>,
    /// Statements measured, executed or not: the figure's denominator without branches.
    pub statements: u64,
    /// Branches measured: a report with branches gives no context per branch.
    pub branches: u64,
}

const NOT_A_REPORT: &str =
    "not a coverage report: expected coverage.py JSON, LCOV or Cobertura XML";
const PRODUCE_HINT: &str = "produce one with `pytest --cov=src --cov-report=json:coverage.json` \
     (or `--cov-report=lcov:coverage.lcov`, `--cov-report=xml:coverage.xml`; \
     `cargo llvm-cov --lcov --output-path coverage.lcov` for Rust)";

/// How much of the file is read to tell the formats apart. The rest is streamed.
const HEAD_LEN: u64 = 8 * 1024;

pub fn read_coverage(path: &Path) -> Result<Coverage, InputError> {
    let mut file = File::open(path).map_err(|e| InputError::io(path, &e))?;
    let mut head = Vec::new();
    (&mut file)
        .take(HEAD_LEN)
        .read_to_end(&mut head)
        .map_err(|e| InputError::io(path, &e))?;
    let bom = if head.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    };
    let Some(start) = head[bom..].iter().position(|b| !b.is_ascii_whitespace()) else {
        let more = file
            .read(&mut [0u8; 1])
            .map_err(|e| InputError::io(path, &e))?;
        let message = if more == 0 {
            "empty file"
        } else {
            NOT_A_REPORT
        };
        return Err(InputError::new(path, message).with_hint(PRODUCE_HINT));
    };
    let first = &head[bom + start..];

    if first.starts_with(b"{") {
        let mut text = head[bom..].to_vec();
        file.read_to_end(&mut text)
            .map_err(|e| InputError::io(path, &e))?;
        read_coverage_py(path, &text)
    } else if first.starts_with(b"<") {
        let input = BufReader::new(Cursor::new(head[bom..].to_vec()).chain(file));
        read_cobertura(path, bom as u64, input)
    } else if is_lcov_start(first) {
        let input = BufReader::new(Cursor::new(head[bom..].to_vec()).chain(file));
        read_lcov(path, input)
    } else {
        Err(InputError::new(path, NOT_A_REPORT).with_hint(PRODUCE_HINT))
    }
}

/// LCOV tracefiles open with a test name or a source file record.
fn is_lcov_start(text: &[u8]) -> bool {
    ["TN:", "SF:"]
        .iter()
        .any(|k| text.starts_with(k.as_bytes()))
}

fn no_lines(path: &Path) -> InputError {
    InputError::new(path, "report measures no lines")
        .with_hint("check that `--cov` names the package under test and that the tests import it")
}

/// `text` cut to a length that fits in a message.
fn shorten(text: &str) -> String {
    const MAX: usize = 60;
    match text.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text.to_string(),
    }
}

/// A count in an LCOV field (or a Cobertura attribute): a non-negative integer that fits
/// 64 bits.
fn lcov_count(what: &str, value: &str) -> Result<u64, String> {
    let value = value.trim();
    match value.parse::<u64>() {
        Ok(count) => Ok(count),
        Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => {
            Err(format!("{what} `{}` overflows", shorten(value)))
        }
        Err(_) => match value.strip_prefix('-').map(|digits| digits.parse::<u64>()) {
            Some(Ok(_)) => Err(format!("negative {what} `{}`", shorten(value))),
            Some(Err(e)) if *e.kind() == std::num::IntErrorKind::PosOverflow => {
                Err(format!("negative {what} `{}`", shorten(value)))
            }
            _ => {
                let article = if what.starts_with(['a', 'e', 'i', 'o', 'u']) {
                    "an"
                } else {
                    "a"
                };
                Err(format!(
                    "expected {article} {what}, found `{}`",
                    shorten(value)
                ))
            }
        },
    }
}
