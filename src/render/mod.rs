//! Turning a `Report` into what a reader consumes: text for people, one JSON object for
//! merge queues and scripts, `error:`/`hint:` lines for git hooks. One file per format; a new
//! format is a new file here and one arm in `render`.

pub mod hook;
pub mod json;
pub mod markdown;
pub mod text;

use crate::report::{Finding, Report};

/// The output formats of `score`, `check`, `run` and `lint` (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
}

/// `report` in `format`.
pub fn render(report: &Report, format: Format) -> String {
    match format {
        Format::Text => text::report(report),
        Format::Json => json::report(report),
    }
}

/// Where a finding is, as editors and terminals jump to it: `path`, `path:line` or
/// `path:line:column`; `None` when it has no path.
pub fn place(f: &Finding) -> Option<String> {
    let path = f.path.as_ref()?;
    Some(match (f.line, f.column) {
        (Some(line), Some(column)) => format!("{path}:{line}:{column}"),
        (Some(line), None) => format!("{path}:{line}"),
        _ => path.clone(),
    })
}

/// `text` with control characters (newlines, colour codes) turned into spaces: what a report or
/// commit under judgement wrote never reaches a terminal as more than one line of text.
pub fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}
