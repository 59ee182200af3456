//! Turning a `Report` into what a reader consumes: text for people, one JSON object for
//! merge queues and scripts, `error:`/`hint:` lines for git hooks. One file per format; a new
//! format is a new file here and one arm in `render`.

pub mod github;
pub mod gitlab;
pub mod hook;
pub mod json;
pub mod markdown;
pub mod push;
pub mod sarif;
pub mod text;

use crate::policy::ledger::{DEFAULT_LEDGER_PATH, PolicySource};
use crate::report::{Finding, Report};

/// The output formats of `score`, `check`, `run` and `lint` (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    /// GitHub Actions workflow commands (`::error file=...::message`).
    Github,
    /// SARIF 2.1.0, for code scanning.
    Sarif,
    /// GitLab Code Quality.
    Gitlab,
}

/// `report` in `format`.
pub fn render(report: &Report, format: Format) -> String {
    match format {
        Format::Text => text::report(report),
        Format::Json => json::report(report),
        Format::Github => github::report(report),
        Format::Sarif => sarif::report(report),
        Format::Gitlab => gitlab::report(report),
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

/// One thing a CI format shows: a finding (or a warning, or why the run could not be
/// judged), at a file. Formats that need a file for every entry (annotations, code scanning,
/// code quality) get the ledger's path for findings that have none (a missing JUnit report,
/// a commit without a path): the ledger is what asked for what is missing.
pub struct Entry<'a> {
    /// The reason code; `policy_advice` for `lint`'s advice and `cannot_judge` for the error
    /// that stopped the run (neither is a reason code: neither rejects by itself).
    pub code: &'static str,
    pub severity: Severity,
    /// The finding's text: where it is about a commit, the commit first.
    pub message: String,
    pub help: Option<&'a str>,
    pub path: String,
    pub line: Option<u64>,
    pub column: Option<u64>,
    /// What identifies the finding across runs (no line number): code, path, test, message.
    pub identity: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// A finding: it rejects.
    Error,
    /// Shown without rejecting: a `[baseline]` warning, `lint`'s advice.
    Warning,
    /// The run could not be judged (exit 2).
    CannotJudge,
}

/// The check name of `lint`'s advice in CI formats.
pub const ADVICE: &str = "policy_advice";
/// The check name of the error that stopped a run in CI formats.
pub const CANNOT_JUDGE: &str = "cannot_judge";

/// What follows the decision in evaluate mode: that it was not enforced.
pub fn not_enforced(report: &Report) -> &'static str {
    if report.enforced {
        ""
    } else {
        ", not enforced (evaluate mode)"
    }
}

/// The ledger's path, for entries without one of their own.
pub fn ledger_path(report: &Report) -> String {
    match &report.policy {
        Some(PolicySource::File(path)) => path.display().to_string(),
        Some(PolicySource::Revision { path, .. }) => path.clone(),
        Some(PolicySource::Embedded) | None => DEFAULT_LEDGER_PATH.to_string(),
    }
}

/// Every entry of `report`: findings, warnings, `lint`'s advice, and the error that stopped
/// the run, in that order.
pub fn entries<'a>(report: &'a Report) -> Vec<Entry<'a>> {
    let ledger = ledger_path(report);
    let finding = |f: &'a Finding, severity: Severity| -> Entry<'a> {
        let message = match (&f.commit, &f.subject) {
            (Some(commit), Some(subject)) => format!("{commit} {subject:?}: {}", f.message),
            (Some(commit), None) => format!("{commit}: {}", f.message),
            _ => f.message.clone(),
        };
        let path = f.path.clone().unwrap_or_else(|| ledger.clone());
        let identity = [
            f.code.as_str(),
            path.as_str(),
            f.test.as_deref().unwrap_or(""),
            f.subject.as_deref().unwrap_or(""),
            f.message.as_str(),
        ]
        .join("\0");
        Entry {
            code: f.code.as_str(),
            severity,
            message,
            help: f.help.as_deref(),
            path,
            line: f.line,
            column: f.column,
            identity,
        }
    };
    let mut out: Vec<Entry> = report
        .findings
        .iter()
        .map(|f| finding(f, Severity::Error))
        .collect();
    out.extend(
        report
            .warnings
            .iter()
            .map(|f| finding(f, Severity::Warning)),
    );
    out.extend(report.advice.iter().map(|a| Entry {
        code: ADVICE,
        severity: Severity::Warning,
        message: a.message.clone(),
        help: Some(a.help.as_str()),
        path: a.path.clone(),
        line: None,
        column: None,
        identity: [ADVICE, a.path.as_str(), a.message.as_str()].join("\0"),
    }));
    // The error that stopped the run, and the other errors of its file (a ledger is
    // checked whole: each mistake is annotated where it is).
    if let Some(first) = &report.unjudged {
        for e in std::iter::once(first).chain(&first.more) {
            let path = e.path.clone().unwrap_or_else(|| ledger.clone());
            out.push(Entry {
                code: CANNOT_JUDGE,
                severity: Severity::CannotJudge,
                message: format!("cannot judge: {}", e.message),
                help: e.help.as_deref(),
                identity: [CANNOT_JUDGE, path.as_str(), e.message.as_str()].join("\0"),
                path,
                line: e.line,
                column: e.column,
            });
        }
    }
    out
}

/// A stable fingerprint of `identity`: the first 16 bytes of its SHA-256, in hex.
pub fn fingerprint(identity: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(identity.as_bytes())[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `text` with control characters (newlines, colour codes) turned into spaces, and the
/// Unicode controls that reorder what follows them (bidi embeddings, overrides and isolates,
/// "Trojan Source") into U+FFFD: what a report or commit under judgement wrote never reaches
/// a terminal as more than one line of text, nor shows in another order than it is.
pub fn one_line(text: &str) -> String {
    text.chars().map(inert).collect()
}

/// One character of `one_line`.
pub fn inert(c: char) -> char {
    match c {
        c if c.is_control() => ' ',
        '\u{202A}'..='\u{202E}'
        | '\u{2066}'..='\u{2069}'
        | '\u{200E}'
        | '\u{200F}'
        | '\u{061C}' => '\u{FFFD}',
        c => c,
    }
}

/// `value` as pretty JSON (the `json`, `sarif` and `gitlab` formats) whose strings show
/// every character `inert` changes as a `\uXXXX` escape: the same data to a JSON reader,
/// while a terminal or a log viewer that shows the file neither acts on a C1 control nor
/// shows the text in another order (serde_json escapes only C0 controls).
pub fn pretty_json<T: serde::Serialize + ?Sized>(value: &T) -> String {
    json_with(
        value,
        EscapingFormatter(serde_json::ser::PrettyFormatter::new()),
    )
}

fn json_with<T, F>(value: &T, formatter: F) -> String
where
    T: serde::Serialize + ?Sized,
    F: serde_json::ser::Formatter,
{
    let mut out = Vec::new();
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    value
        .serialize(&mut serializer)
        .expect("a report serializes");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// `value` as JSON on one line (a log's line), escaped as [`pretty_json`] escapes.
pub fn one_line_json<T: serde::Serialize + ?Sized>(value: &T) -> String {
    json_with(value, CompactEscaping)
}

/// A string fragment with what `inert` changes written as `\\uXXXX`.
fn write_escaped<W: ?Sized + std::io::Write>(
    writer: &mut W,
    fragment: &str,
) -> std::io::Result<()> {
    let mut rest = fragment;
    while let Some((at, c)) = rest.char_indices().find(|&(_, c)| inert(c) != c) {
        writer.write_all(&rest.as_bytes()[..at])?;
        write!(writer, "\\u{:04x}", c as u32)?;
        rest = &rest[at + c.len_utf8()..];
    }
    writer.write_all(rest.as_bytes())
}

/// serde_json's compact formatter, with what `inert` changes escaped in strings.
struct CompactEscaping;

impl serde_json::ser::Formatter for CompactEscaping {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        write_escaped(writer, fragment)
    }
}

/// serde_json's pretty formatter, with what `inert` changes escaped in strings.
struct EscapingFormatter<'a>(serde_json::ser::PrettyFormatter<'a>);

impl serde_json::ser::Formatter for EscapingFormatter<'_> {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        write_escaped(writer, fragment)
    }

    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object_value(w)
    }
}

#[cfg(test)]
mod tests {
    use super::{one_line, pretty_json};

    #[test]
    fn json_escapes_what_a_terminal_acts_on_and_reads_back_the_same() {
        let text = "a\u{1b}[2J b\u{9b}c \u{202e}nosj é ✓ \"q\"";
        let json = pretty_json(&serde_json::json!({ "name": text, "list": [text] }));
        assert!(
            !json.chars().any(|c| super::inert(c) != c && c != '\n'),
            "{json:?}"
        );
        assert!(json.contains("\\u202e"), "{json}");
        assert!(json.contains("\\u009b"), "{json}");
        assert!(json.contains("é ✓"), "{json}");
        let back: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(back["name"], text);
        assert_eq!(back["list"][0], text);
        // Pretty, as before.
        assert!(json.starts_with("{\n  \""), "{json}");
    }

    #[test]
    fn one_line_makes_controls_and_reordering_inert() {
        assert_eq!(one_line("a\nb\rc\u{1b}[31md\u{7}"), "a b c [31md ");
        // "Trojan Source": an override or isolate shows what follows in another order.
        assert_eq!(
            one_line("tests/\u{202e}nosj.txt\u{2066}x\u{2069}\u{200f}"),
            "tests/\u{fffd}nosj.txt\u{fffd}x\u{fffd}\u{fffd}"
        );
        assert_eq!(one_line("plain é ✓"), "plain é ✓");
    }
}
