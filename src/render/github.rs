//! GitHub Actions workflow commands: one `::error` (or `::warning`) annotation per finding,
//! shown on the file and line in the pull request. GitHub shows at most 10 annotations of
//! each type per step, so after 10 of a type one `::notice` counts the rest; a last `::notice`
//! gives the decision. Escaping is GitHub's: `%`, CR and LF in the message; those and `:` and
//! `,` in property values.

use std::fmt::Write as _;

use crate::render::{Entry, Severity, entries};
use crate::report::Report;

/// GitHub shows this many annotations of one type per step.
pub const SHOWN_PER_TYPE: usize = 10;

/// `report` as workflow commands.
pub fn report(report: &Report) -> String {
    let mut out = String::new();
    let mut errors = 0;
    let mut warnings = 0;
    let mut hidden_errors = 0;
    let mut hidden_warnings = 0;
    for entry in entries(report) {
        let (command, shown, hidden) = match entry.severity {
            Severity::Error | Severity::CannotJudge => ("error", &mut errors, &mut hidden_errors),
            Severity::Warning => ("warning", &mut warnings, &mut hidden_warnings),
        };
        if *shown == SHOWN_PER_TYPE {
            *hidden += 1;
            continue;
        }
        *shown += 1;
        annotation(&mut out, command, &entry);
    }
    for (hidden, what) in [(hidden_errors, "error"), (hidden_warnings, "warning")] {
        if hidden > 0 {
            let _ = writeln!(
                out,
                "::notice title=merge-guard::{}",
                data(&format!(
                    "{hidden} more {what}{} not shown as annotations (GitHub shows {SHOWN_PER_TYPE} per step); run guard with --format text to read them all",
                    if hidden == 1 { "" } else { "s" }
                ))
            );
        }
    }
    let decision = match report.decision() {
        Some(d) => d.as_str(),
        None => "none, cannot judge",
    };
    let _ = writeln!(
        out,
        "::notice title=merge-guard::{}",
        data(&format!(
            "decision: {decision}{} ({} finding{})",
            super::not_enforced(report),
            report.findings.len(),
            if report.findings.len() == 1 { "" } else { "s" }
        ))
    );
    out
}

fn annotation(out: &mut String, command: &str, entry: &Entry) {
    let _ = write!(out, "::{command} file={}", property(&entry.path));
    if let Some(line) = entry.line {
        let _ = write!(out, ",line={line}");
        if let Some(column) = entry.column {
            let _ = write!(out, ",col={column}");
        }
    }
    let mut message = entry.message.clone();
    if let Some(help) = entry.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    let _ = writeln!(out, ",title={}::{}", property(entry.code), data(&message));
}

/// A command's message: `%`, CR and LF escaped (GitHub's `escapeData`); other control
/// characters (a colour escape the job log would act on) and bidi controls made inert.
pub fn data(text: &str) -> String {
    let kept: String = text
        .chars()
        .map(|c| match c {
            '\r' | '\n' => c,
            c => crate::render::inert(c),
        })
        .collect();
    kept.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A property value: as `data`, and `:` and `,` too (GitHub's `escapeProperty`).
pub fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_as_github_specifies() {
        assert_eq!(data("50% done\r\nnext"), "50%25 done%0D%0Anext");
        assert_eq!(property("a:b,c%d\n"), "a%3Ab%2Cc%25d%0A");
        // `:` and `,` are left alone in a message: only properties split on them.
        assert_eq!(data("a:b,c"), "a:b,c");
        // A colour escape or bidi override the tested code printed acts on nothing.
        assert_eq!(data("\u{1b}[31mred\u{202e}x"), " [31mred\u{fffd}x");
    }
}
