//! How reading a JUnit report fails: `Failure` (the file or its content), the content problem
//! `Bad` at a byte offset, its conversion to an `InputError` with line, column and hint, and
//! the hints themselves.

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use crate::error::{InputError, Location};
use crate::evidence::position::locate;

pub(super) const HINT_NOT_JUNIT: &str = "is this a JUnit XML file? produce it with `pytest --junitxml=...` \
     or nextest's `[profile.ci.junit]`";
pub(super) const HINT_TRUNCATED: &str = "the report is cut short: was the test run killed, or the artifact \
     copied before the runner finished writing it? run the tests again";
pub(super) const HINT_MALFORMED: &str = "the report is not well-formed XML: regenerate it with the test \
     runner rather than editing it by hand";
pub(super) const HINT_DTD: &str = "test runners never write a DTD; entity declarations are how \
     billion-laughs and XXE attacks work, so guard refuses them";
pub(super) const HINT_SPELLING: &str = "test runners write <testcase>, and <failure>, <error> and <skipped> \
     inside it, exactly so: JUnit readers match these names case-sensitively, without a namespace \
     prefix, and only there. A report that spells or places them otherwise was not written by the \
     runner: run the tests again";

/// Why reading stopped. `Io` is the file failing us; `Bad` is the content.
pub(super) enum Failure {
    Io(io::Error),
    Bad(Bad),
}

/// A content problem at a byte offset of the file.
pub(super) struct Bad {
    pub(super) offset: u64,
    pub(super) message: String,
    pub(super) hint: Cow<'static, str>,
    /// Where the element that the message is about opens, located in the same pass.
    pub(super) opened_at: Option<u64>,
    /// Name the byte at `offset` in the message (for bytes that are not UTF-8).
    pub(super) show_byte: bool,
}

impl Bad {
    pub(super) fn at(offset: u64, message: impl Into<String>, hint: &'static str) -> Failure {
        Failure::Bad(Bad {
            offset,
            message: message.into(),
            hint: hint.into(),
            opened_at: None,
            show_byte: false,
        })
    }

    pub(super) fn into_input_error(self, path: &Path, bom: u64) -> InputError {
        let offset = self.offset + bom;
        let mut wanted = vec![offset];
        wanted.extend(self.opened_at.map(|opened| opened + bom));
        let found = locate(path, &wanted);
        let mut message = self.message;
        if let Some(byte) = self.show_byte.then(|| byte_at(path, offset)).flatten() {
            message.push_str(&format!(": byte 0x{byte:02X}"));
        }
        match found.get(1) {
            Some(Location::LineColumn(line, column)) => {
                message.push_str(&format!(" (it opens at line {line}, column {column})"));
            }
            Some(Location::Byte(byte)) => message.push_str(&format!(" (it opens at byte {byte})")),
            _ => {}
        }
        InputError::new(path, message)
            .at(found[0])
            .with_hint(self.hint)
    }
}

/// The byte at `offset` of `path`, read again for an error message.
fn byte_at(path: &Path, offset: u64) -> Option<u8> {
    let mut file = File::open(path).ok()?;
    file.seek(SeekFrom::Start(offset)).ok()?;
    let mut byte = [0u8];
    file.read_exact(&mut byte).ok()?;
    Some(byte[0])
}
