//! GitLab Code Quality: a JSON array of issues that a merge request shows beside the diff
//! (`artifacts: reports: codequality:`). Each finding is one issue with its reason code as
//! `check_name`, a `fingerprint` that is unique in the report and stable across runs (no
//! line number in it), a severity, and a place (`lines.begin` is required: 1 when the
//! finding has no line).

use std::collections::HashMap;

use serde::Serialize;

use crate::render::{Entry, Severity, entries, fingerprint};
use crate::report::Report;

#[derive(Serialize)]
struct Issue<'a> {
    description: String,
    check_name: &'a str,
    fingerprint: String,
    severity: &'static str,
    location: Location,
}

#[derive(Serialize)]
struct Location {
    path: String,
    lines: Lines,
}

#[derive(Serialize)]
struct Lines {
    begin: u64,
}

/// `report` as a Code Quality report.
pub fn report(report: &Report) -> String {
    // Two findings that look alike (same code, path, test and message) still get two
    // fingerprints: the second of a kind is told apart by its rank, which does not move
    // when other findings come or go.
    let mut seen: HashMap<String, usize> = HashMap::new();
    let entries = entries(report);
    let issues: Vec<Issue> = entries
        .iter()
        .map(|entry| {
            let rank = seen.entry(entry.identity.clone()).or_insert(0);
            let identity = if *rank == 0 {
                entry.identity.clone()
            } else {
                format!("{}\0{rank}", entry.identity)
            };
            *rank += 1;
            issue(entry, fingerprint(&identity))
        })
        .collect();
    let mut out = crate::render::pretty_json(&issues);
    out.push('\n');
    out
}

fn issue<'a>(entry: &'a Entry, fingerprint: String) -> Issue<'a> {
    let description = match entry.help {
        Some(help) => format!("{} (help: {help})", entry.message),
        None => entry.message.clone(),
    };
    Issue {
        description,
        check_name: entry.code,
        fingerprint,
        // A finding blocks the merge; advice and warnings do not; a run that could not be
        // judged blocks it too, and says why.
        severity: match entry.severity {
            Severity::Error | Severity::CannotJudge => "blocker",
            Severity::Warning => "minor",
        },
        location: Location {
            path: entry.path.clone(),
            lines: Lines {
                begin: entry.line.unwrap_or(1),
            },
        },
    }
}
