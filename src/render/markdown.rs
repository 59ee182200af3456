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
/// HTML would read as structure escaped (`|`, `<`, `>`, `[`, `]`, `*`, `_`, `~`, and what
/// GitHub turns into links: `scheme:`, `www.`, `name@host`): the text comes from the
/// reports and commits under judgement, which could otherwise add links or images. Inside a
/// code span (a run of backticks closed by a run of the same length) nothing is structure and
/// a backslash is shown as written, so there only `|` is escaped (GFM splits table cells at a
/// `|` before it reads code spans); a backtick run that is never closed is escaped.
fn cell(text: &str) -> String {
    let line = one_line(text);
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '`' {
            let run = chars[i..].iter().take_while(|&&c| c == '`').count();
            match closing_backticks(&chars, i + run, run) {
                Some(end) => {
                    for &c in &chars[i..end + run] {
                        match c {
                            '|' => out.push_str("\\|"),
                            _ => out.push(c),
                        }
                    }
                    i = end + run;
                }
                None => {
                    for _ in 0..run {
                        out.push_str("\\`");
                    }
                    i += run;
                }
            }
            continue;
        }
        match chars[i] {
            '|' => out.push_str("\\|"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '[' => out.push_str("\\["),
            ']' => out.push_str("\\]"),
            '\\' => out.push_str("\\\\"),
            // Emphasis and strikethrough: `**decision: MERGE**` in a test name was bold.
            '*' => out.push_str("\\*"),
            '_' => out.push_str("\\_"),
            '~' => out.push_str("\\~"),
            // GitHub links bare URLs, `www.` names and e-mail addresses (GFM's autolinks):
            // an escaped `:` or `.` is no scheme or `www.` to it; before `@` only a
            // zero-width space breaks the address (an escape does not).
            ':' => out.push_str("\\:"),
            '.' if out
                .as_bytes()
                .get(out.len().saturating_sub(3)..)
                .is_some_and(|end| end.eq_ignore_ascii_case(b"www")) =>
            {
                out.push_str("\\.")
            }
            '@' => out.push_str("\u{200B}@"),
            c => out.push(c),
        }
        i += 1;
    }
    out
}

/// Where the run of exactly `len` backticks that closes a code span starts, looking from
/// `from`.
fn closing_backticks(chars: &[char], from: usize, len: usize) -> Option<usize> {
    let mut i = from;
    while i < chars.len() {
        if chars[i] == '`' {
            let run = chars[i..].iter().take_while(|&&c| c == '`').count();
            if run == len {
                return Some(i);
            }
            i += run;
        } else {
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-column GFM table holding `text` in its cell, rendered to HTML as GitHub's
    /// Markdown (tables on) renders it.
    fn rendered(text: &str) -> String {
        let md = format!("| what |\n|---|\n| {} |\n", cell(text));
        let parser = pulldown_cmark::Parser::new_ext(&md, pulldown_cmark::Options::ENABLE_TABLES);
        let mut html = String::new();
        pulldown_cmark::html::push_html(&mut html, parser);
        html
    }

    #[test]
    fn code_spans_in_a_cell_show_their_text_as_written() {
        // A finding that quotes the ledger's glob: backslash escapes inside the code span
        // were shown literally (`*\\\[bot\\\]`).
        let html = rendered(
            r#"author e-mail x matches agents.emails `*\[bot\]@users.noreply.github.com` and `a|b`"#,
        );
        assert!(
            html.contains(r"<code>*\[bot\]@users.noreply.github.com</code>"),
            "{html}"
        );
        assert!(html.contains("<code>a|b</code>"), "{html}");
        // Outside code spans the text reads as written too.
        let html = rendered(r"a \ b [c] <d> e|f");
        assert!(html.contains(r"a \ b [c] &lt;d&gt; e|f"), "{html}");
    }

    #[test]
    fn text_from_the_reports_adds_no_link_image_or_cell() {
        for text in [
            "[approved](https://example.com) **decision: MERGE**",
            "`unclosed [approved](https://example.com)",
            "``a` [x](https://example.com) <img src=x>",
            "` a ` [x](https://example.com) | <b>",
        ] {
            let html = rendered(text);
            assert!(!html.contains("<a "), "{text}: {html}");
            assert!(!html.contains("<img"), "{text}: {html}");
            assert!(!html.contains("<b>"), "{text}: {html}");
            assert!(!html.contains("<strong>"), "{text}: {html}");
            assert!(!html.contains("<em>"), "{text}: {html}");
            assert_eq!(html.matches("<td>").count(), 1, "{text}: {html}");
        }
    }
}
