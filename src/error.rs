//! Errors: why guard could not judge. `InputError` is input it cannot judge (unreadable or
//! malformed ledgers, freeze files, lockfiles and artifacts): it says what failed and where;
//! the caller adds nothing but context. `InputErrors` is several of them in one file (a
//! ledger with three mistakes names all three). `Internal` is a failure that is not the
//! input's (a corrupt object store, a full disk). `ErrorKind` tells them apart and is the one
//! place that maps an error to an exit code. `ErrorReport` is how reports show any of them.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// What kind of failure stopped a run. Scripts read the kind (JSON `error.kind`); the exit
/// code is the same for both (2: nothing was judged, and in a hook the push is rejected).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The input could not be judged: a bad argument, range or revision, an unreadable or
    /// malformed ledger, freeze file, lockfile or artifact. The user fixes the input.
    Input,
    /// guard or its environment failed on good input: the repository's object store cannot
    /// be read, a write to disk failed, a worker thread died. Not the input's fault.
    Internal,
}

impl ErrorKind {
    /// The kind of `err`: `Internal` when an `Internal` is in its chain, else `Input` (every
    /// other error guard raises describes the input it was given).
    pub fn of(err: &anyhow::Error) -> ErrorKind {
        // `downcast_ref` on the error itself also finds an `Internal` added as context (the
        // chain holds context only as text).
        if err.downcast_ref::<Internal>().is_some()
            || err.chain().any(|c| c.downcast_ref::<Internal>().is_some())
        {
            ErrorKind::Internal
        } else {
            ErrorKind::Input
        }
    }

    /// The exit code of a run that stopped at an error of this kind.
    pub fn exit_code(self) -> i32 {
        match self {
            ErrorKind::Input | ErrorKind::Internal => crate::exit::CANNOT_JUDGE,
        }
    }

    /// How the text output names it: `error: ...` for input, `error: internal: ...`.
    pub fn label(self) -> &'static str {
        match self {
            ErrorKind::Input => "error",
            ErrorKind::Internal => "error: internal",
        }
    }
}

/// A failure that is not the input's: what failed, in words. Wrapped around the underlying
/// error (`anyhow::Error::context`) where guard knows the input was fine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Internal(pub String);

impl fmt::Display for Internal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Internal {}

/// Where in a file a problem was found. Lines and columns are 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    Line(u64),
    LineColumn(u64, u64),
    /// A byte offset, for formats where lines mean little (XML on one line).
    Byte(u64),
}

/// Input that could not be judged. Rendered as `path:line:col: message` so editors and
/// terminals can jump to it; `hint` says how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    pub path: PathBuf,
    pub location: Option<Location>,
    pub message: String,
    pub hint: Option<String>,
}

impl InputError {
    pub fn new(path: impl AsRef<Path>, message: impl Into<String>) -> Self {
        InputError {
            path: path.as_ref().to_path_buf(),
            location: None,
            message: message.into(),
            hint: None,
        }
    }

    pub fn at(mut self, location: Location) -> Self {
        self.location = Some(location);
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// An I/O failure reading `path`, with the OS reason.
    pub fn io(path: impl AsRef<Path>, err: &std::io::Error) -> Self {
        let message = match err.kind() {
            std::io::ErrorKind::NotFound => "file not found".to_string(),
            std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
            _ => format!("cannot read: {err}"),
        };
        InputError::new(path, message)
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        match self.location {
            Some(Location::Line(l)) => write!(f, ":{l}")?,
            Some(Location::LineColumn(l, c)) => write!(f, ":{l}:{c}")?,
            Some(Location::Byte(b)) => write!(f, ": at byte {b}")?,
            None => {}
        }
        write!(f, ": {}", self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, "\n  help: {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for InputError {}

impl InputError {
    /// Where in the file, in words: "line 3, column 9", "line 3", "byte 120".
    pub fn position(&self) -> Option<String> {
        match self.location? {
            Location::Line(l) => Some(format!("line {l}")),
            Location::LineColumn(l, c) => Some(format!("line {l}, column {c}")),
            Location::Byte(b) => Some(format!("byte {b}")),
        }
    }
}

/// Every problem found in one input file, in file order; never empty. Shown as each error
/// would be alone, one after the other: the caller writes `error: ` before the first, as it
/// does before any error, and each further one starts a line of its own with `error: `.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputErrors {
    first: InputError,
    rest: Vec<InputError>,
}

impl InputErrors {
    /// The errors, or `None` when there are none.
    pub fn from_vec(errors: Vec<InputError>) -> Option<Self> {
        let mut errors = errors.into_iter();
        let first = errors.next()?;
        Some(InputErrors {
            first,
            rest: errors.collect(),
        })
    }

    /// The first error in the file.
    pub fn first(&self) -> &InputError {
        &self.first
    }

    pub fn iter(&self) -> impl Iterator<Item = &InputError> {
        std::iter::once(&self.first).chain(&self.rest)
    }

    /// The errors after the first.
    pub fn rest(&self) -> &[InputError] {
        &self.rest
    }

    /// Every error as `path:line:col: message`, without its help, joined by `; `: one line,
    /// for a finding about the file.
    pub fn brief(&self) -> String {
        self.iter()
            .map(|e| {
                InputError {
                    hint: None,
                    ..e.clone()
                }
                .to_string()
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

impl From<InputError> for InputErrors {
    fn from(first: InputError) -> Self {
        InputErrors {
            first,
            rest: Vec::new(),
        }
    }
}

impl fmt::Display for InputErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.first)?;
        for e in &self.rest {
            write!(f, "\nerror: {e}")?;
        }
        Ok(())
    }
}

/// Not a chain: the errors are siblings, all shown by `Display`.
impl std::error::Error for InputErrors {}

/// Why (part of) a run could not be judged, as a report shows it: the `error` object of a
/// JSON report (each key `null` where unknown), and the text people read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ErrorReport {
    /// Whether the input or guard failed.
    pub kind: ErrorKind,
    pub message: String,
    pub path: Option<String>,
    pub line: Option<u64>,
    pub column: Option<u64>,
    /// A byte offset, for a position the reader could not turn into a line (XML on one line).
    pub byte: Option<u64>,
    pub help: Option<String>,
    /// The whole error as text (`path:line:col: message` and a `help:` line).
    #[serde(skip)]
    text: String,
    /// The other errors of the same file (a ledger is checked whole), each with its own
    /// position: the CI formats annotate every one. JSON counts them in `message`.
    #[serde(skip)]
    pub more: Vec<ErrorReport>,
}

impl From<&InputError> for ErrorReport {
    fn from(e: &InputError) -> Self {
        let (line, column, byte) = match e.location {
            Some(Location::Line(l)) => (Some(l), None, None),
            Some(Location::LineColumn(l, c)) => (Some(l), Some(c), None),
            Some(Location::Byte(b)) => (None, None, Some(b)),
            None => (None, None, None),
        };
        ErrorReport {
            kind: ErrorKind::Input,
            message: e.message.clone(),
            path: Some(e.path.display().to_string()),
            line,
            column,
            byte,
            help: e.hint.clone(),
            text: e.to_string(),
            more: Vec::new(),
        }
    }
}

impl ErrorReport {
    /// Any error: where an `InputError` is in its chain, its file and position, with the
    /// context above it leading the message; otherwise only the message. For `InputErrors`,
    /// the first error's, its message counting the others ("(and 2 more errors in this
    /// file)"); the text shows them all.
    pub fn from_error(err: &anyhow::Error) -> Self {
        let text = format!("{err:#}");
        let mut context = Vec::new();
        for cause in err.chain() {
            let (input, rest) = match (
                cause.downcast_ref::<InputError>(),
                cause.downcast_ref::<InputErrors>(),
            ) {
                (Some(input), _) => (input, &[][..]),
                (None, Some(all)) => (all.first(), all.rest()),
                (None, None) => {
                    context.push(cause.to_string());
                    continue;
                }
            };
            let more = rest.len();
            let mut report = ErrorReport::from(input);
            report.more = rest.iter().map(ErrorReport::from).collect();
            context.push(report.message);
            report.message = context.join(": ");
            if more > 0 {
                let s = if more == 1 { "" } else { "s" };
                report.message =
                    format!("{} (and {more} more error{s} in this file)", report.message);
            }
            report.text = text;
            report.kind = ErrorKind::of(err);
            return report;
        }
        ErrorReport {
            kind: ErrorKind::of(err),
            message: text.clone(),
            path: None,
            line: None,
            column: None,
            byte: None,
            help: None,
            text,
            more: Vec::new(),
        }
    }
}

impl fmt::Display for ErrorReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// The 1-based line and column of byte `offset` in `text`.
pub fn line_column(text: &[u8], offset: usize) -> (u64, u64) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    (line, (offset - line_start) as u64 + 1)
}

#[cfg(test)]
mod tests {

    #[test]
    fn an_internal_failure_is_found_as_context_or_as_a_cause() {
        let io = std::io::Error::other("disk on fire");
        let as_context = anyhow::Error::new(io).context(Internal("writing the log".into()));
        assert_eq!(ErrorKind::of(&as_context), ErrorKind::Internal);
        let under_more = as_context.context("judging the push");
        assert_eq!(ErrorKind::of(&under_more), ErrorKind::Internal);
        let input = anyhow::anyhow!("no such revision");
        assert_eq!(ErrorKind::of(&input), ErrorKind::Input);
    }

    use super::*;

    #[test]
    fn line_column_counts_from_one() {
        let text = b"ab\ncd\nef";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 4), (2, 2));
        assert_eq!(line_column(text, 6), (3, 1));
        assert_eq!(line_column(text, 999), (3, 3));
    }

    #[test]
    fn error_report_keeps_position_and_leads_with_context() {
        let input = InputError::new("qa/x.toml", "bad date")
            .at(Location::LineColumn(3, 9))
            .with_hint("write YYYY-MM-DD");
        let err = anyhow::Error::from(input.clone()).context("the policy could not be read");
        let report = ErrorReport::from_error(&err);
        assert_eq!(report.message, "the policy could not be read: bad date");
        assert_eq!(report.path.as_deref(), Some("qa/x.toml"));
        assert_eq!(
            (report.line, report.column, report.byte),
            (Some(3), Some(9), None)
        );
        assert_eq!(report.help.as_deref(), Some("write YYYY-MM-DD"));
        assert_eq!(report.to_string(), format!("{err:#}"));
        assert_eq!(ErrorReport::from(&input).to_string(), input.to_string());

        let at_byte = ErrorReport::from(&InputError::new("j.xml", "bad").at(Location::Byte(7)));
        assert_eq!((at_byte.line, at_byte.byte), (None, Some(7)));
        let plain = ErrorReport::from_error(&anyhow::anyhow!("no such range"));
        assert_eq!(
            (plain.message.as_str(), plain.path),
            ("no such range", None)
        );
    }

    #[test]
    fn several_errors_show_all_and_report_the_first() {
        let first = InputError::new("qa/l.toml", "bad date")
            .at(Location::LineColumn(3, 9))
            .with_hint("write YYYY-MM-DD");
        let second = InputError::new("qa/l.toml", "bad glob").at(Location::LineColumn(7, 2));
        let third = InputError::new("qa/l.toml", "no such key").at(Location::Line(9));
        let all = InputErrors::from_vec(vec![first.clone(), second, third]).unwrap();
        assert_eq!(
            all.to_string(),
            "qa/l.toml:3:9: bad date\n  help: write YYYY-MM-DD\nerror: qa/l.toml:7:2: bad glob\nerror: qa/l.toml:9: no such key"
        );
        assert_eq!(
            all.brief(),
            "qa/l.toml:3:9: bad date; qa/l.toml:7:2: bad glob; qa/l.toml:9: no such key"
        );

        let err = anyhow::Error::from(all.clone()).context("the policy could not be read");
        let report = ErrorReport::from_error(&err);
        assert_eq!(
            report.message,
            "the policy could not be read: bad date (and 2 more errors in this file)"
        );
        assert_eq!(
            (report.path.as_deref(), report.line, report.column),
            (Some("qa/l.toml"), Some(3), Some(9))
        );
        assert_eq!(report.help.as_deref(), Some("write YYYY-MM-DD"));
        assert_eq!(
            report.to_string(),
            format!("the policy could not be read: {all}")
        );

        let two = InputErrors::from_vec(vec![first.clone(), first.clone()]).unwrap();
        let report = ErrorReport::from_error(&anyhow::Error::from(two));
        assert_eq!(report.message, "bad date (and 1 more error in this file)");

        // One error is shown, and reported, as the error alone.
        let one = InputErrors::from(first.clone());
        assert_eq!(one.to_string(), first.to_string());
        assert_eq!(one.brief(), "qa/l.toml:3:9: bad date");
        assert_eq!(
            ErrorReport::from_error(&anyhow::Error::from(one)),
            ErrorReport::from_error(&anyhow::Error::from(first))
        );
        assert!(InputErrors::from_vec(Vec::new()).is_none());
    }

    #[test]
    fn display_names_file_line_and_hint() {
        let e = InputError::new("qa/x.toml", "bad date")
            .at(Location::LineColumn(3, 9))
            .with_hint("write YYYY-MM-DD");
        assert_eq!(
            e.to_string(),
            "qa/x.toml:3:9: bad date\n  help: write YYYY-MM-DD"
        );
    }
}
