//! Streaming JUnit XML reader. Owns the JUnit dialects (pytest xunit1/xunit2, cargo-nextest,
//! surefire, jest-junit, gotestsum); yields one `TestCase` per `<testcase>` element and never
//! holds the document in memory.
//!
//! Dialect notes that shape the code:
//! - The root is `<testsuites>` or `<testsuite>`, suites may nest, and everything that is not a
//!   suite, a testcase or an outcome element (`properties`, `system-out`, ...) is skipped.
//! - Outcome elements are matched exactly, as every JUnit reader matches them. A spelling that
//!   readers skip (`<Failure>`, `<x:failure>`) or an outcome element nested where readers do not
//!   look (`<properties><failure/></properties>`) would turn a failure into a pass, so the report
//!   is refused rather than read either way. A `<failure>` or `<error>` written on a suite
//!   (a collection or setup error) is kept as a `SuiteFailure`.
//! - Reruns are written two ways. Surefire and nextest put `<rerunFailure>`/`<flakyFailure>`
//!   (and the `Error` forms) inside the one record of the test. pytest-rerunfailures (16.6.1
//!   and later) instead repeats the whole `<testcase>` once per attempt, and the failed attempts
//!   carry no failure element at all. A record repeated back to back in one suite is therefore
//!   read as one record whose earlier attempts failed: at least `Flaky`.
//! - Captured output (`system-out`, failure text, ...) can be most of a report. It is skipped
//!   without being copied or decoded, so its size does not matter and stray non-UTF-8 bytes
//!   there are tolerated; entity references in it are still checked.
//! - Positions are only turned into line and column when reading fails, by reading the file a
//!   second time up to the offset, so the happy path stays one streaming pass.

mod attributes;
mod content;
mod errors;
mod names;
mod parser;
#[cfg(test)]
mod tests;

use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

use quick_xml::Reader;

use crate::error::InputError;
use crate::evidence::position::locate;
use crate::evidence::record::{JunitFile, SuiteFailure, TestCase};
use errors::{Bad, Failure, HINT_NOT_JUNIT};
use parser::Parser;

/// Reads the JUnit report at `path`, calling `sink` for each testcase record in document
/// order. The sink borrows each record: the reader reuses its buffers, so a million-record
/// report costs no allocation per record.
pub fn read_junit(path: &Path, sink: &mut dyn FnMut(&TestCase)) -> Result<JunitFile, InputError> {
    let file = File::open(path).map_err(|err| InputError::io(path, &err))?;
    // Bigger than the 8 KiB default: fewer read calls on reports of hundreds of megabytes.
    let mut input = BufReader::with_capacity(64 * 1024, file);
    // quick-xml drops a UTF-8 byte order mark without counting it in its offsets; dropping it
    // here keeps every offset (and so every error position) true to the file.
    let bom = skip_utf8_bom(&mut input).map_err(|err| InputError::io(path, &err))?;
    // quick-xml would drop a second mark as silently, but there it is U+FEFF before the root.
    let again = input.fill_buf().map_err(|err| InputError::io(path, &err))?;
    if bom > 0 && again.starts_with(UTF8_BOM) {
        let bad = Bad {
            offset: 0,
            message: "text before the root element".into(),
            hint: HINT_NOT_JUNIT.into(),
            opened_at: None,
            show_byte: false,
        };
        return Err(bad.into_input_error(path, bom));
    }
    let mut reader = Reader::from_reader(input);
    // The parser matches end tags against its own stack of open elements, which it keeps
    // anyway to name an unclosed element; quick-xml keeping a second copy costs time.
    reader.config_mut().check_end_names = false;
    let mut parser = Parser::new(sink);
    match parser.run(&mut reader) {
        Ok(()) => {
            let found = std::mem::take(&mut parser.suite_failures);
            let offsets: Vec<u64> = found.iter().map(|(offset, _)| offset + bom).collect();
            let suite_failures = found
                .into_iter()
                .zip(locate(path, &offsets))
                .map(|((_, failure), location)| SuiteFailure {
                    location,
                    ..failure
                })
                .collect();
            Ok(JunitFile {
                counts: parser.counts,
                suite_failures,
            })
        }
        Err(Failure::Io(err)) => Err(InputError::io(path, &err)),
        Err(Failure::Bad(bad)) => Err(bad.into_input_error(path, bom)),
    }
}

/// Returns 3 when the file starts with a UTF-8 byte order mark (and consumes it), else 0.
fn skip_utf8_bom(input: &mut impl BufRead) -> io::Result<u64> {
    // A read this early returns the whole first block, so a BOM is never split.
    if input.fill_buf()?.starts_with(UTF8_BOM) {
        input.consume(UTF8_BOM.len());
        return Ok(UTF8_BOM.len() as u64);
    }
    Ok(0)
}

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";
