//! The error for input guard cannot judge (exit code 2): unreadable or malformed ledgers,
//! freeze files, lockfiles and artifacts. It says what failed and where; the caller adds
//! nothing but context.

use std::fmt;
use std::path::{Path, PathBuf};

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
