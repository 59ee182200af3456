//! Markdown: a report's summary for a CI job's page (`GITHUB_STEP_SUMMARY`), and the
//! reference tables that the README and `docs/` hold, generated from the code so that they
//! cannot drift from it (a test compares them).

use std::fmt::Write as _;

use crate::render::{Severity, entries, one_line};
use crate::report::{Code, Report};
use crate::wording::count;

/// The reason-code table: `| code | meaning | fix |`, one row per code in `Code::ALL` order.
pub fn reason_code_table() -> String {
    let mut out = String::from("| code | meaning | fix |\n|---|---|---|\n");
    for code in Code::ALL {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} |",
            code.as_str(),
            code.description(),
            code.fix()
        );
    }
    out
}

/// `docs/reason-codes.md`: the table, then one section per code (a stable anchor to link a
/// finding to).
pub fn reason_codes_page() -> String {
    let mut out = String::from(
        "# Reason codes\n\n\
         <!-- generated from src/report/finding.rs by `GUARD_REGENERATE_DOCS=1 cargo test --test integration docs`; do not edit -->\n\n\
         Every finding has one of these codes (JSON `findings[].code`, `reasons`). Any finding \
         rejects: the decision is REJECT and the exit code 1. The codes are part of the \
         command-line contract: they are never renamed.\n\n",
    );
    out.push_str(&reason_code_table());
    for code in Code::ALL {
        let _ = write!(
            out,
            "\n## `{}`\n\n{}.\n\nFix: {}.\n",
            code.as_str(),
            capitalise(code.description()),
            code.fix()
        );
    }
    out
}

fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The Markdown summary of a report for a CI job's page (`GITHUB_STEP_SUMMARY`): the
/// decision, a table of the findings, and the figures.
pub fn summary(report: &Report) -> String {
    let mut out = String::from("### merge-guard\n\n");
    let decision = match report.decision() {
        Some(d) => format!("**{}**", d.as_str()),
        None => "**cannot judge** (no decision)".to_string(),
    };
    let _ = writeln!(
        out,
        "Decision: {decision}{}, {}.\n",
        super::not_enforced(report),
        count(report.findings.len(), "finding")
    );
    let entries = entries(report);
    if !entries.is_empty() {
        out.push_str("| | code | where | what |\n|---|---|---|---|\n");
        for entry in &entries {
            let mark = match entry.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::CannotJudge => "cannot judge",
            };
            let place = match (entry.line, entry.column) {
                (Some(l), Some(c)) => format!("{}:{l}:{c}", entry.path),
                (Some(l), None) => format!("{}:{l}", entry.path),
                _ => entry.path.clone(),
            };
            let what = match entry.help {
                Some(help) => format!("{}<br>help: {}", cell(&entry.message), cell(help)),
                None => cell(&entry.message),
            };
            let _ = writeln!(
                out,
                "| {mark} | `{}` | `{}` | {what} |",
                entry.code,
                one_line(&place).replace('|', "\\|").replace('`', "'"),
            );
        }
        out.push('\n');
    }
    let s = &report.stats;
    let figure = |v: Option<usize>| v.map_or("-".to_string(), |n| n.to_string());
    let _ = writeln!(
        out,
        "| policy | collected tests | active leases | expired leases | fixtures changed | property failures | proven coverage |\n|---|---|---|---|---|---|---|\n| {} | {} | {} | {} | {} | {} | {} |\n",
        cell(
            &report
                .policy
                .as_ref()
                .map_or("-".to_string(), |p| p.describe())
        ),
        figure(s.collected_tests),
        figure(s.active_leases),
        figure(s.expired_leases),
        figure(s.fixture_digest_delta),
        figure(s.property_failures),
        match (s.proven_coverage_percent, s.min_proven_coverage_percent) {
            (Some(p), Some(f)) => format!("{p:.2}% (floor {f}%)"),
            (Some(p), None) => format!("{p:.2}%"),
            (None, Some(f)) => format!("- (floor {f}%)"),
            (None, None) => "-".to_string(),
        },
    );
    out
}

/// Text for one table cell: one line, control characters as spaces, and what Markdown or
/// HTML would read as structure escaped (`|`, `<`, `>`, `[`, `]`): the text comes from the
/// reports and commits under judgement, which could otherwise add links or images.
fn cell(text: &str) -> String {
    let mut out = String::new();
    for c in one_line(text).chars() {
        match c {
            '|' => out.push_str("\\|"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '[' => out.push_str("\\["),
            ']' => out.push_str("\\]"),
            '\\' => out.push_str("\\\\"),
            _ => out.push(c),
        }
    }
    out
}
