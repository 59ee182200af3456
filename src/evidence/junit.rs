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

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use quick_xml::encoding::EncodingError;
use quick_xml::errors::{Error as XmlError, SyntaxError};
use quick_xml::escape::EscapeError;
use quick_xml::events::{BytesStart, Event};
use quick_xml::{Reader, XmlVersion};

use crate::error::{InputError, Location};
use crate::evidence::position::locate;
use crate::evidence::record::{JunitCounts, JunitFile, Outcome, SuiteFailure, TestCase};

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

const HINT_NOT_JUNIT: &str = "is this a JUnit XML file? produce it with `pytest --junitxml=...` \
     or nextest's `[profile.ci.junit]`";
const HINT_TRUNCATED: &str = "the report is cut short: was the test run killed, or the artifact \
     copied before the runner finished writing it? run the tests again";
const HINT_MALFORMED: &str = "the report is not well-formed XML: regenerate it with the test \
     runner rather than editing it by hand";
const HINT_DTD: &str = "test runners never write a DTD; entity declarations are how \
     billion-laughs and XXE attacks work, so guard refuses them";
const HINT_SPELLING: &str = "test runners write <testcase>, and <failure>, <error> and <skipped> \
     inside it, exactly so: JUnit readers match these names case-sensitively, without a namespace \
     prefix, and only there. A report that spells or places them otherwise was not written by the \
     runner: run the tests again";

/// JUnit nests suites a few levels at most; a deeper document is hostile or broken, and the
/// limit bounds the memory the element stack can take.
const MAX_DEPTH: usize = 256;

/// Why reading stopped. `Io` is the file failing us; `Bad` is the content.
enum Failure {
    Io(io::Error),
    Bad(Bad),
}

/// A content problem at a byte offset of the file.
struct Bad {
    offset: u64,
    message: String,
    hint: Cow<'static, str>,
    /// Where the element that the message is about opens, located in the same pass.
    opened_at: Option<u64>,
    /// Name the byte at `offset` in the message (for bytes that are not UTF-8).
    show_byte: bool,
}

impl Bad {
    fn at(offset: u64, message: impl Into<String>, hint: &'static str) -> Failure {
        Failure::Bad(Bad {
            offset,
            message: message.into(),
            hint: hint.into(),
            opened_at: None,
            show_byte: false,
        })
    }

    fn into_input_error(self, path: &Path, bom: u64) -> InputError {
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

/// What an open element is to the reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Suite,
    Case,
    /// Anything else; its content is skipped.
    Other,
}

struct Open {
    kind: Kind,
    /// Offset of its `<`.
    start: u64,
    /// Where its name starts in `Parser::names`.
    name_at: usize,
}

// Outcome elements seen inside a testcase, as bits.
const FAILURE: u8 = 1;
const ERROR: u8 = 2;
const SKIPPED: u8 = 4;
const RERUN: u8 = 8;

/// The element names a JUnit reader acts on, as runners spell them.
const JUNIT_NAMES: [&str; 10] = [
    "failure",
    "error",
    "skipped",
    "rerunFailure",
    "rerunError",
    "flakyFailure",
    "flakyError",
    "testcase",
    "testsuite",
    "testsuites",
];

/// The JUnit name `element` is a spelling of, ignoring case and a namespace prefix
/// (`Failure`, `x:failure` and `failure` are all `failure`), if any.
fn spelled_like(element: &str) -> Option<&'static str> {
    let local = element.rsplit_once(':').map_or(element, |(_, local)| local);
    JUNIT_NAMES
        .into_iter()
        .find(|known| known.eq_ignore_ascii_case(local))
}

fn outcome_mark(element: &str) -> u8 {
    match element {
        "failure" => FAILURE,
        "error" => ERROR,
        "skipped" => SKIPPED,
        "rerunFailure" | "rerunError" | "flakyFailure" | "flakyError" => RERUN,
        _ => 0,
    }
}

fn outcome_of(marks: u8) -> Outcome {
    if marks & ERROR != 0 {
        Outcome::Errored
    } else if marks & FAILURE != 0 {
        Outcome::Failed
    } else if marks & RERUN != 0 {
        Outcome::Flaky
    } else if marks & SKIPPED != 0 {
        Outcome::Skipped
    } else {
        Outcome::Passed
    }
}

impl TestCase {
    fn empty() -> TestCase {
        TestCase {
            classname: String::new(),
            name: String::new(),
            file: None,
            outcome: Outcome::Passed,
        }
    }

    fn same_test(&self, other: &TestCase) -> bool {
        self.name == other.name && self.classname == other.classname && self.file == other.file
    }
}

struct Parser<'s> {
    sink: &'s mut dyn FnMut(&TestCase),
    counts: JunitCounts,
    open: Vec<Open>,
    /// The names of the open elements, back to back: end tags are matched against them, and
    /// "never closed" messages name them.
    names: String,
    root_seen: bool,
    /// The testcase whose element is open (when `in_case`); its strings are reused from record
    /// to record.
    case: TestCase,
    in_case: bool,
    /// Outcome elements seen inside it.
    marks: u8,
    /// The last complete record (when `held_epoch` is set), held back until the next one
    /// shows whether it was a rerun; with the epoch (see `suite_epoch`) it was read in.
    held: TestCase,
    held_epoch: Option<u64>,
    /// Bumped whenever a suite opens or closes, so only records that are next to each other in
    /// one suite are taken as attempts of one test.
    suite_epoch: u64,
    /// A non-UTF-8 encoding named by the XML declaration, for the message when decoding fails.
    declared_encoding: Option<String>,
    /// The `name` of each open suite that has content, innermost last.
    suite_names: Vec<String>,
    /// Suite-level failures read so far, each at its byte offset: lines and columns are
    /// worked out once reading ends.
    suite_failures: Vec<(u64, SuiteFailure)>,
}

impl<'s> Parser<'s> {
    fn new(sink: &'s mut dyn FnMut(&TestCase)) -> Self {
        Parser {
            sink,
            counts: JunitCounts {
                files: 1,
                ..JunitCounts::default()
            },
            open: Vec::new(),
            names: String::new(),
            root_seen: false,
            case: TestCase::empty(),
            in_case: false,
            marks: 0,
            held: TestCase::empty(),
            held_epoch: None,
            suite_epoch: 0,
            declared_encoding: None,
            suite_names: Vec::new(),
            suite_failures: Vec::new(),
        }
    }

    fn run<R: BufRead>(&mut self, reader: &mut Reader<R>) -> Result<(), Failure> {
        let mut buf = Vec::with_capacity(4 * 1024);
        // Nothing is skipped before quick-xml's first read: that read drops a byte order mark
        // at the front of what it sees, so skipping blanks first would let a mark that is not
        // at the start of the file (` \u{FEFF}<testsuite>`, not well-formed) pass unseen.
        let mut after_text = true;
        loop {
            // quick-xml is between events here unless it just returned text (then it stands
            // on the `<` or `&` that ended the text), so skipping is safe only after markup.
            if !after_text {
                if self
                    .open
                    .last()
                    .is_some_and(|open| open.kind == Kind::Other)
                {
                    skip_content(&mut reader.stream()).map_err(Failure::Io)?;
                } else {
                    // The line break between two records would otherwise be a text event of
                    // its own. (quick-xml's `trim_text_start` would skip it too, but then the
                    // offset taken below would not be the next element's `<`.)
                    skip_whitespace(&mut reader.stream()).map_err(Failure::Io)?;
                }
            }
            let start = reader.buffer_position();
            let event = match reader.read_event_into(&mut buf) {
                Ok(event) => event,
                Err(err) => return Err(self.xml_failure(err, start, reader.error_position())),
            };
            after_text = matches!(event, Event::Text(_));
            match event {
                Event::Start(e) => self.start(&e, start, false)?,
                Event::Empty(e) => self.start(&e, start, true)?,
                Event::End(e) => self.end(e.name().as_ref(), start)?,
                Event::Text(text) => {
                    if self.open.is_empty() && !text.trim_ascii().is_empty() {
                        return Err(self.outside_root(start));
                    }
                }
                Event::CData(_) => {
                    if self.open.is_empty() {
                        return Err(self.outside_root(start));
                    }
                }
                Event::GeneralRef(reference) => {
                    if self.open.is_empty() {
                        return Err(self.outside_root(start));
                    }
                    check_reference(&reference, start)?;
                }
                Event::DocType(_) => {
                    return Err(Bad::at(
                        start,
                        "DTDs are not allowed in JUnit reports (found <!DOCTYPE>)",
                        HINT_DTD,
                    ));
                }
                Event::Decl(decl) => {
                    if let Some(Ok(encoding)) = decl.encoding() {
                        let encoding = encoding.trim();
                        if !encoding.eq_ignore_ascii_case("utf-8")
                            && !encoding.eq_ignore_ascii_case("utf8")
                        {
                            self.declared_encoding = Some(encoding.to_string());
                        }
                    }
                }
                Event::Comment(_) | Event::PI(_) => {}
                Event::Eof => return self.finish(reader.buffer_position()),
            }
            buf.clear();
        }
    }

    fn start(&mut self, e: &BytesStart<'_>, start: u64, empty: bool) -> Result<(), Failure> {
        let qname = e.name();
        let name = qname.as_ref();
        let parent = match self.open.last() {
            Some(open) => Some(open.kind),
            None if self.root_seen => {
                return Err(Bad::at(
                    start,
                    format!("a second root element <{name}> follows the end of the report"),
                    HINT_MALFORMED,
                ));
            }
            None => {
                if name != "testsuites" && name != "testsuite" {
                    return Err(Bad::at(
                        start,
                        format!(
                            "not a JUnit report: root element is <{name}>, \
                             expected <testsuites> or <testsuite>"
                        ),
                        HINT_NOT_JUNIT,
                    ));
                }
                self.root_seen = true;
                None
            }
        };
        let kind = match (parent, name) {
            // Inside skipped content (captured output, properties, an outcome's text) nothing
            // a reader acts on may hide.
            (Some(Kind::Other), _) => {
                if let Some(known) = spelled_like(name) {
                    return Err(self.misplaced(name, known, start));
                }
                Kind::Other
            }
            (Some(Kind::Case), "testcase") => {
                // Skipping it would drop a record, and no runner writes this.
                return Err(Bad::at(
                    start,
                    "<testcase> inside another <testcase>",
                    HINT_MALFORMED,
                ));
            }
            (Some(Kind::Case), _) => {
                let mark = outcome_mark(name);
                if mark != 0 {
                    if self.in_case {
                        self.marks |= mark;
                    }
                } else if let Some(known) = spelled_like(name) {
                    return Err(self.misplaced(name, known, start));
                }
                Kind::Other
            }
            (_, "testsuites" | "testsuite") => {
                self.suite_epoch += 1;
                if !empty {
                    self.suite_names
                        .push(attribute(e, "name").unwrap_or_default());
                }
                Kind::Suite
            }
            (_, "testcase") => {
                read_case_attributes(e, start, &mut self.case)?;
                self.in_case = true;
                self.marks = 0;
                Kind::Case
            }
            (Some(Kind::Suite), "failure" | "error") => {
                let failure = SuiteFailure {
                    suite: self.suite_names.last().cloned().unwrap_or_default(),
                    outcome: if name == "error" {
                        Outcome::Errored
                    } else {
                        Outcome::Failed
                    },
                    message: attribute(e, "message"),
                    location: Location::Byte(start),
                };
                self.suite_failures.push((start, failure));
                Kind::Other
            }
            _ => {
                if let Some(known) = spelled_like(name) {
                    return Err(self.misplaced(name, known, start));
                }
                Kind::Other
            }
        };
        if empty {
            self.close(kind);
            return Ok(());
        }
        if self.open.len() == MAX_DEPTH {
            return Err(Bad::at(
                start,
                format!("elements are nested more than {MAX_DEPTH} deep"),
                HINT_MALFORMED,
            ));
        }
        self.open.push(Open {
            kind,
            start,
            name_at: self.names.len(),
        });
        self.names.push_str(name);
        Ok(())
    }

    fn end(&mut self, name: &str, start: u64) -> Result<(), Failure> {
        let Some(open) = self.open.pop() else {
            return Err(Bad::at(
                start,
                format!("</{name}> closes no open element"),
                HINT_MALFORMED,
            ));
        };
        let expected = &self.names[open.name_at..];
        if expected != name {
            return Err(Bad::at(
                start,
                format!("mismatched tags: </{name}> closes <{expected}>"),
                HINT_MALFORMED,
            ));
        }
        self.names.truncate(open.name_at);
        if open.kind == Kind::Suite {
            self.suite_names.pop();
        }
        self.close(open.kind);
        Ok(())
    }

    /// The error for an element at `start` named `name`, a spelling of the JUnit name `known`
    /// (or `known` itself) where no reader would act on it: a failure there reads as a pass.
    fn misplaced(&self, name: &str, known: &str, start: u64) -> Failure {
        let parent = self
            .open
            .last()
            .map_or("", |open| &self.names[open.name_at..]);
        let mut message = if name != known {
            format!(
                "<{name}> is not <{known}>: JUnit readers match element names exactly \
                 (case and no namespace prefix), so they would skip it"
            )
        } else if matches!(known, "testcase" | "testsuite" | "testsuites") {
            format!("<{name}> nested inside <{parent}>, where JUnit readers do not look for tests")
        } else if self
            .open
            .last()
            .is_some_and(|open| open.kind == Kind::Suite)
        {
            format!("<{name}> directly inside <{parent}> belongs to no test")
        } else {
            format!(
                "<{name}> nested inside <{parent}>, where JUnit readers do not look for outcomes"
            )
        };
        if self.in_case {
            let case = &self.case;
            if case.classname.is_empty() {
                message.push_str(&format!(" (in the record of {})", case.name));
            } else {
                message.push_str(&format!(
                    " (in the record of {}::{})",
                    case.classname, case.name
                ));
            }
        }
        Bad::at(start, message, HINT_SPELLING)
    }

    fn close(&mut self, kind: Kind) {
        match kind {
            Kind::Suite => self.suite_epoch += 1,
            Kind::Case => {
                if self.in_case {
                    self.in_case = false;
                    self.counts.cases += 1;
                    self.case.outcome = outcome_of(self.marks);
                    self.record();
                }
            }
            Kind::Other => {}
        }
    }

    /// Takes the record just read in `case`: emits the held one unless this one repeats it,
    /// then holds this one.
    fn record(&mut self) {
        let epoch = self.suite_epoch;
        if let Some(held_epoch) = self.held_epoch {
            if held_epoch == epoch && self.held.same_test(&self.case) {
                // An earlier attempt of this test did not count: it failed, whatever the
                // record says (pytest-rerunfailures writes failed attempts as bare records).
                self.case.outcome = self.case.outcome.max(Outcome::Flaky);
            } else {
                self.emit_held();
            }
        }
        std::mem::swap(&mut self.held, &mut self.case);
        self.held_epoch = Some(epoch);
    }

    fn emit_held(&mut self) {
        let case = &self.held;
        match case.outcome {
            Outcome::Passed | Outcome::Flaky => self.counts.passed += 1,
            Outcome::Failed => self.counts.failed += 1,
            Outcome::Errored => self.counts.errors += 1,
            Outcome::Skipped => self.counts.skipped += 1,
        }
        (self.sink)(case);
    }

    fn finish(&mut self, end: u64) -> Result<(), Failure> {
        if let Some(open) = self.open.last() {
            let name = &self.names[open.name_at..];
            return Err(Failure::Bad(Bad {
                offset: end,
                message: format!("the file ends inside <{name}>, which is never closed"),
                hint: HINT_TRUNCATED.into(),
                opened_at: Some(open.start),
                show_byte: false,
            }));
        }
        if !self.root_seen {
            let message = if end == 0 {
                "empty file: no JUnit report in it"
            } else {
                "no root element: the file holds no XML elements"
            };
            return Err(Bad::at(end, message, HINT_NOT_JUNIT));
        }
        if self.held_epoch.take().is_some() {
            self.emit_held();
        }
        Ok(())
    }

    fn outside_root(&self, start: u64) -> Failure {
        let message = if self.root_seen {
            "text after the end of the report"
        } else {
            "text before the root element"
        };
        Bad::at(start, message, HINT_NOT_JUNIT)
    }

    /// Turns a quick-xml error into a failure at the most useful offset: quick-xml knows where
    /// syntax errors start; for decoding errors the bad byte is inside the event at `start`.
    fn xml_failure(&self, err: XmlError, start: u64, error_position: u64) -> Failure {
        match err {
            XmlError::Io(err) => Failure::Io(io::Error::new(err.kind(), err.to_string())),
            XmlError::Encoding(err) => {
                let offset = match &err {
                    EncodingError::Utf8(utf8) => start + utf8.valid_up_to() as u64,
                    #[allow(unreachable_patterns)] // other encodings exist behind a feature
                    _ => start,
                };
                let hint = match (&self.declared_encoding, self.root_seen) {
                    (Some(encoding), _) => format!(
                        "the XML declaration says {encoding}, but guard reads only UTF-8 \
                         reports: have the runner write UTF-8 (they do by default)"
                    )
                    .into(),
                    (None, true) => "write the report as UTF-8; test runners do by default".into(),
                    // Before the root, the file is more likely not XML at all.
                    (None, false) => HINT_NOT_JUNIT.into(),
                };
                Failure::Bad(Bad {
                    offset,
                    message: "not valid UTF-8".to_string(),
                    hint,
                    opened_at: None,
                    show_byte: true,
                })
            }
            XmlError::Syntax(err) => Bad::at(
                error_position,
                format!("malformed XML: {err}"),
                match err {
                    SyntaxError::InvalidBangMarkup => HINT_MALFORMED,
                    // Every other syntax error is markup still open when the input runs out.
                    _ => HINT_TRUNCATED,
                },
            ),
            other => Bad::at(
                error_position.max(start),
                format!("malformed XML: {other}"),
                HINT_MALFORMED,
            ),
        }
    }
}

/// Consumes the text and CDATA sections at the front of `input`, stopping at the next element,
/// comment or reference. Used inside skipped elements (`system-out` and the like), where
/// captured output can run to many megabytes: quick-xml would copy each text or CDATA node into
/// memory whole. Skipped bytes are not decoded, so stray non-UTF-8 output there is tolerated.
fn skip_content(input: &mut impl BufRead) -> io::Result<()> {
    const CDATA_OPEN: &[u8] = b"<![CDATA[";
    loop {
        let available = input.fill_buf()?;
        let Some(at) = find_markup(available) else {
            let all = available.len();
            if all == 0 {
                return Ok(());
            }
            input.consume(all);
            continue;
        };
        // A CDATA opener split across reads is left to quick-xml, which handles it correctly.
        let is_cdata = available[at..].starts_with(CDATA_OPEN);
        input.consume(at);
        if !is_cdata {
            return Ok(());
        }
        input.consume(CDATA_OPEN.len());
        skip_cdata_body(input)?;
    }
}

/// Consumes the XML whitespace at the front of `input`.
fn skip_whitespace(input: &mut impl BufRead) -> io::Result<()> {
    loop {
        let available = input.fill_buf()?;
        let blank = available
            .iter()
            .take_while(|&&b| matches!(b, b' ' | b'\n' | b'\t' | b'\r'))
            .count();
        let all = available.len();
        input.consume(blank);
        if blank < all || all == 0 {
            return Ok(());
        }
    }
}

/// Consumes through the `]]>` that ends a CDATA section (or to the end of input, which the
/// caller then reports as an unclosed element).
fn skip_cdata_body(input: &mut impl BufRead) -> io::Result<()> {
    // How many bytes of `]]>` the previous read ended with.
    let mut matched = 0;
    loop {
        let available = input.fill_buf()?;
        if available.is_empty() {
            return Ok(());
        }
        for (i, &b) in available.iter().enumerate() {
            matched = match (matched, b) {
                (2, b'>') => {
                    input.consume(i + 1);
                    return Ok(());
                }
                (2, b']') => 2,
                (_, b']') => matched + 1,
                _ => 0,
            };
        }
        let all = available.len();
        input.consume(all);
    }
}

/// The first `<` or `&` in `bytes`.
fn find_markup(bytes: &[u8]) -> Option<usize> {
    memchr::memchr2(b'<', b'&', bytes)
}

/// Only the five predefined entities and character references exist: with DTDs refused, any
/// other `&name;` is undefined (and would be an entity-expansion attack if it were defined).
fn check_reference(reference: &str, start: u64) -> Result<(), Failure> {
    let known = match reference.strip_prefix('#') {
        Some(number) => parse_char_ref(number).is_some(),
        None => matches!(reference, "lt" | "gt" | "amp" | "apos" | "quot"),
    };
    if known {
        Ok(())
    } else {
        Err(Bad::at(
            start,
            format!("undefined entity or bad character reference `&{reference};`"),
            HINT_MALFORMED,
        ))
    }
}

fn parse_char_ref(number: &str) -> Option<char> {
    let code = match number.strip_prefix('x') {
        Some(hex) => u32::from_str_radix(hex, 16).ok()?,
        None => number.parse().ok()?,
    };
    char::from_u32(code).filter(|&c| c != '\0')
}

/// Whether an attribute value has nothing XML normalisation would change: no reference and
/// no control character. Whole 16-byte blocks first, without early exit inside a block, so
/// the compiler can vectorise.
fn is_plain(value: &[u8]) -> bool {
    let special = |b: u8| (b == b'&') | (b < b' ');
    let mut blocks = value.chunks_exact(16);
    for block in &mut blocks {
        if block.iter().fold(false, |hit, &b| hit | special(b)) {
            return false;
        }
    }
    !blocks.remainder().iter().any(|&b| special(b))
}

/// The value of attribute `key` of `e`, for messages: `None` when it is absent or malformed.
fn attribute(e: &BytesStart<'_>, key: &str) -> Option<String> {
    let attribute = e.try_get_attribute(key).ok().flatten()?;
    let value = attribute.normalized_value(XmlVersion::Implicit1_0).ok()?;
    Some(value.into_owned())
}

/// Reads `classname`, `name` and `file` of a `<testcase>` starting at `start` into `case`,
/// reusing its strings.
fn read_case_attributes(
    e: &BytesStart<'_>,
    start: u64,
    case: &mut TestCase,
) -> Result<(), Failure> {
    let mut have = [false; 3]; // classname, name, file
    // quick-xml's own duplicate check keeps a heap list per element; a record has a handful
    // of attributes, so a list on the stack does (a longer one spills to the heap).
    let mut keys: [&str; 8] = [""; 8];
    let mut more_keys: Vec<&str> = Vec::new();
    for (count, attribute) in e.attributes().with_checks(false).enumerate() {
        let attribute = attribute.map_err(|err| {
            Bad::at(
                start,
                format!("malformed attribute in <testcase>: {err}"),
                HINT_MALFORMED,
            )
        })?;
        let key = attribute.key.into_inner();
        let seen = keys[..count.min(keys.len())].contains(&key) || more_keys.contains(&key);
        if seen {
            return Err(Bad::at(
                start,
                format!("malformed attribute in <testcase>: `{key}` is given twice"),
                HINT_MALFORMED,
            ));
        }
        if count < keys.len() {
            keys[count] = key;
        } else {
            more_keys.push(key);
        }
        let slot = match key {
            "classname" => 0,
            "name" => 1,
            "file" => 2,
            _ => continue,
        };
        // XML 1.0 normalisation: entities and character references resolved, literal
        // newlines and tabs turned into spaces (escaped ones kept), as every XML reader does.
        // Nearly every value has nothing to normalise (no reference, no control character),
        // and is taken as it stands.
        let plain = is_plain(attribute.value.as_bytes());
        let value = if plain {
            attribute.value
        } else {
            attribute
                .normalized_value(XmlVersion::Implicit1_0)
                .map_err(|err| {
                    let why = match err {
                        XmlError::Escape(EscapeError::UnrecognizedEntity(_, entity)) => {
                            format!("undefined entity `&{entity};`")
                        }
                        other => other.to_string(),
                    };
                    Bad::at(
                        start,
                        format!("bad `{key}` attribute in <testcase>: {why}"),
                        HINT_MALFORMED,
                    )
                })?
        };
        let target = match slot {
            0 => &mut case.classname,
            1 => &mut case.name,
            _ => case.file.get_or_insert_with(String::new),
        };
        target.clear();
        target.push_str(&value);
        have[slot] = true;
    }
    if !have[1] {
        return Err(Bad::at(
            start,
            "<testcase> has no `name` attribute",
            "every JUnit writer names its test cases; was this record written by hand?",
        ));
    }
    if !have[0] {
        case.classname.clear();
    }
    if !have[2] {
        case.file = None;
    }
    case.outcome = Outcome::Passed;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::io::Write;
    use std::path::PathBuf;

    use super::*;
    use crate::error::line_column;

    fn data(relative: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(relative)
    }

    /// Reads a report, returning its records in order and its counts.
    fn read(path: &Path) -> Result<(Vec<TestCase>, JunitCounts), InputError> {
        let mut cases = Vec::new();
        let read = read_junit(path, &mut |case| cases.push(case.clone()))?;
        Ok((cases, read.counts))
    }

    fn read_sample(name: &str) -> (Vec<TestCase>, JunitCounts) {
        let path = data(&format!("junit/{name}"));
        read(&path).unwrap_or_else(|err| panic!("{err}"))
    }

    /// Records keyed by `classname::name`; fails on a key seen twice.
    fn by_id(cases: &[TestCase]) -> HashMap<String, &TestCase> {
        let mut map = HashMap::new();
        for case in cases {
            let id = format!("{}::{}", case.classname, case.name);
            assert!(map.insert(id.clone(), case).is_none(), "{id} twice");
        }
        map
    }

    fn outcome(cases: &[TestCase], classname: &str, name: &str) -> Outcome {
        by_id(cases)
            .get(&format!("{classname}::{name}"))
            .unwrap_or_else(|| panic!("no record {classname}::{name}"))
            .outcome
    }

    fn counts(cases: u64, passed: u64, failed: u64, errors: u64, skipped: u64) -> JunitCounts {
        JunitCounts {
            files: 1,
            cases,
            passed,
            failed,
            errors,
            skipped,
        }
    }

    /// Writes `content` to a fresh temp file and reads it.
    fn read_text(content: &[u8]) -> Result<(Vec<TestCase>, JunitCounts), InputError> {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(content).unwrap();
        file.flush().unwrap();
        read(file.path())
    }

    fn read_text_err(content: &[u8]) -> InputError {
        match read_text(content) {
            Ok(read) => panic!("expected an error, got {read:?}"),
            Err(err) => err,
        }
    }

    // --- real runner output ---------------------------------------------------------------

    #[test]
    fn pytest_xunit2_sample() {
        let (cases, counts_read) = read_sample("pytest-xunit2.xml");
        // pytest's own summary for this run: 1 failed, 13 passed, 1 skipped, 1 xfailed, 1 error.
        assert_eq!(counts_read, counts(17, 13, 1, 1, 2));
        let billing = "tests.test_billing";
        let invoice = "tests.test_billing.TestInvoice";
        assert_eq!(outcome(&cases, invoice, "test_total[p-1]"), Outcome::Passed);
        assert_eq!(outcome(&cases, invoice, "test_total[p-2]"), Outcome::Passed);
        assert_eq!(
            outcome(&cases, invoice, "test_discount_applies"),
            Outcome::Failed
        );
        assert_eq!(
            outcome(&cases, billing, "test_rounding[EUR]"),
            Outcome::Passed
        );
        // The id is written `test_rounding[net&lt;gross]` in the file.
        assert_eq!(
            outcome(&cases, billing, "test_rounding[net<gross]"),
            Outcome::Passed
        );
        assert_eq!(outcome(&cases, billing, "test_vat_table"), Outcome::Skipped);
        // xfail is written as <skipped type="pytest.xfail">.
        assert_eq!(
            outcome(&cases, billing, "test_round_half_up"),
            Outcome::Skipped
        );
        // The fixture raised during setup: <error message="failed on setup ...">.
        assert_eq!(
            outcome(&cases, billing, "test_converts_currency"),
            Outcome::Errored
        );
        assert_eq!(
            outcome(
                &cases,
                "tests.runtime.test_retry",
                "test_backoff_under_load"
            ),
            Outcome::Passed
        );
        let properties: Vec<_> = cases
            .iter()
            .filter(|c| c.classname == "tests.properties.test_codec_roundtrip")
            .collect();
        assert_eq!(properties.len(), 7);
        assert!(properties.iter().all(|c| c.outcome == Outcome::Passed));
        // xunit2 has no file attribute.
        assert!(cases.iter().all(|c| c.file.is_none()));
    }

    #[test]
    fn pytest_xunit1_sample_has_file_attributes() {
        let (cases, counts_read) = read_sample("pytest-xunit1.xml");
        assert_eq!(counts_read, counts(17, 13, 1, 1, 2));
        let ids = by_id(&cases);
        let failing = ids["tests.test_billing.TestInvoice::test_discount_applies"];
        assert_eq!(failing.outcome, Outcome::Failed);
        // Relative to the rootdir, with slashes: the same path as the node id.
        assert_eq!(failing.file.as_deref(), Some("tests/test_billing.py"));
        let retry = ids["tests.runtime.test_retry::test_backoff_under_load"];
        assert_eq!(retry.file.as_deref(), Some("tests/runtime/test_retry.py"));
        assert!(cases.iter().all(|c| c.file.is_some()));
    }

    #[test]
    fn pytest_rerunfailures_repeated_records_are_one_flaky_or_failed_record() {
        let (cases, counts_read) = read_sample("pytest-rerun.xml");
        // The file holds 21 <testcase> elements for 18 tests: each of the three tests that was
        // rerun once appears twice, its first (failed) attempt as a bare record. `cases` counts
        // the elements; the outcomes, the 18 records they fold into.
        assert_eq!(cases.len(), 18);
        assert_eq!(counts_read, counts(21, 14, 1, 1, 2));
        assert_eq!(
            outcome(
                &cases,
                "flaky.test_flaky_network",
                "test_fetch_eventually_succeeds"
            ),
            Outcome::Flaky
        );
        assert_eq!(
            outcome(
                &cases,
                "tests.test_billing.TestInvoice",
                "test_discount_applies"
            ),
            Outcome::Failed
        );
        assert_eq!(
            outcome(&cases, "tests.test_billing", "test_converts_currency"),
            Outcome::Errored
        );
        assert_eq!(
            outcome(
                &cases,
                "tests.runtime.test_retry",
                "test_backoff_under_load"
            ),
            Outcome::Passed
        );
    }

    #[test]
    fn nextest_sample() {
        let (cases, counts_read) = read_sample("nextest.xml");
        // nextest's summary: 9 tests run: 8 passed (1 flaky), 1 failed, 1 skipped. The skipped
        // one is the #[ignore]d test, which nextest leaves out of the JUnit report entirely.
        assert_eq!(counts_read, counts(9, 8, 1, 0, 0));
        let unit = "nextest-sample";
        assert_eq!(
            outcome(&cases, unit, "tests::parses_seconds"),
            Outcome::Passed
        );
        // <failure> plus a <rerunFailure> for the retry that failed too.
        assert_eq!(
            outcome(&cases, unit, "tests::escapes_quotes"),
            Outcome::Failed
        );
        // Only a <flakyFailure>: failed once, passed on the retry.
        assert_eq!(
            outcome(&cases, unit, "tests::flaky::passes_on_retry"),
            Outcome::Flaky
        );
        assert!(
            !cases
                .iter()
                .any(|c| c.name.contains("clock_is_synchronised"))
        );
        let integration = "nextest-sample::properties";
        for name in [
            "escaped_text_has_no_raw_markup",
            "escaping_never_shrinks",
            "milliseconds_round_trip",
        ] {
            assert_eq!(outcome(&cases, integration, name), Outcome::Passed);
        }
    }

    #[test]
    fn surefire_sample() {
        let (cases, counts_read) = read_sample("surefire.xml");
        assert_eq!(counts_read, counts(8, 5, 1, 1, 1));
        let class = "com.example.billing.InvoiceTest";
        assert_eq!(outcome(&cases, class, "totalFor(int)[1]"), Outcome::Passed);
        assert_eq!(outcome(&cases, class, "appliesDiscount"), Outcome::Failed);
        assert_eq!(
            outcome(&cases, class, "fetchesExchangeRates"),
            Outcome::Flaky
        );
        assert_eq!(outcome(&cases, class, "loadsTaxTable"), Outcome::Flaky);
        assert_eq!(outcome(&cases, class, "connectsToLedger"), Outcome::Errored);
        assert_eq!(outcome(&cases, class, "exportsPdf"), Outcome::Skipped);
    }

    #[test]
    fn jest_junit_sample() {
        let (cases, counts_read) = read_sample("jest-junit.xml");
        assert_eq!(counts_read, counts(8, 5, 1, 1, 1));
        let formats = "invoice totals formats <EUR> & \"USD\" amounts";
        assert_eq!(outcome(&cases, formats, formats), Outcome::Passed);
        let discount = "invoice totals applies percentage discounts";
        assert_eq!(outcome(&cases, discount, discount), Outcome::Failed);
        let pdf = "invoice totals exports a PDF";
        assert_eq!(outcome(&cases, pdf, pdf), Outcome::Skipped);
        assert_eq!(
            outcome(
                &cases,
                "Test suite failed to run",
                "src/__tests__/refunds.test.ts"
            ),
            Outcome::Errored
        );
        assert_eq!(
            by_id(&cases)[&format!("{formats}::{formats}")]
                .file
                .as_deref(),
            Some("src/__tests__/invoice.test.ts")
        );
    }

    #[test]
    fn gotestsum_sample() {
        let (cases, counts_read) = read_sample("gotestsum.xml");
        assert_eq!(counts_read, counts(7, 4, 2, 0, 1));
        let invoice = "example.com/billing/invoice";
        // A failed TestMain has an empty classname.
        assert_eq!(outcome(&cases, "", "TestMain"), Outcome::Failed);
        assert_eq!(outcome(&cases, invoice, "TestTotal/p-1"), Outcome::Passed);
        assert_eq!(
            outcome(&cases, invoice, "TestRoundHalfEven"),
            Outcome::Failed
        );
        assert_eq!(
            outcome(&cases, invoice, "TestExchangeRates"),
            Outcome::Skipped
        );
        assert_eq!(outcome(&cases, invoice, "TestDiscount"), Outcome::Passed);
    }

    // --- bad input ------------------------------------------------------------------------

    /// Reads a file of the bad corpus, which must fail with its name and a line and column.
    fn bad(name: &str) -> (InputError, (u64, u64)) {
        let path = data(&format!("bad/junit/{name}"));
        let err = match read(&path) {
            Ok(read) => panic!("{name}: expected an error, got {read:?}"),
            Err(err) => err,
        };
        let shown = err.to_string();
        assert!(shown.contains(name), "{shown}");
        assert!(err.hint.is_some(), "{shown}");
        let Some(Location::LineColumn(line, column)) = err.location else {
            panic!("{name}: no line and column in {shown}");
        };
        assert!(
            shown.contains(&format!("{name}:{line}:{column}: ")),
            "{shown}"
        );
        (err, (line, column))
    }

    #[test]
    fn empty_file() {
        let (err, at) = bad("empty.xml");
        assert!(err.message.contains("empty file"), "{err}");
        assert_eq!(at, (1, 1));
        assert!(err.hint.unwrap().contains("--junitxml"));
    }

    #[test]
    fn truncated_file_names_the_unclosed_element() {
        let (err, at) = bad("truncated.xml");
        assert_eq!(
            err.message,
            "the file ends inside <testsuite>, which is never closed \
             (it opens at line 3, column 5)"
        );
        // Just past the last byte: the file ends with a newline, so on a line of its own.
        let text = std::fs::read(data("bad/junit/truncated.xml")).unwrap();
        assert_eq!(at, line_column(&text, text.len()));
    }

    #[test]
    fn wrong_root_element() {
        let (err, at) = bad("not-junit.xml");
        assert_eq!(
            err.message,
            "not a JUnit report: root element is <project>, expected <testsuites> or <testsuite>"
        );
        assert_eq!(at, (2, 1));
    }

    #[test]
    fn dtds_are_refused() {
        for name in ["billion-laughs.xml", "xxe.xml"] {
            let (err, at) = bad(name);
            assert!(err.message.contains("DTDs are not allowed"), "{err}");
            assert_eq!(at, (2, 1), "{name}");
        }
    }

    #[test]
    fn latin1_byte_in_a_utf8_report() {
        let (err, at) = bad("non-utf8.xml");
        assert!(err.message.contains("not valid UTF-8"), "{err}");
        let text = std::fs::read(data("bad/junit/non-utf8.xml")).unwrap();
        let e9 = text.iter().position(|&b| b == 0xE9).unwrap();
        assert_eq!(at, line_column(&text, e9));
    }

    #[test]
    fn mismatched_tags() {
        let (err, at) = bad("mismatched.xml");
        assert_eq!(
            err.message,
            "mismatched tags: </testsuite> closes <testcase>"
        );
        assert_eq!(at, (7, 3));
    }

    #[test]
    fn testcase_without_name() {
        let (err, at) = bad("no-name.xml");
        assert!(err.message.contains("no `name` attribute"), "{err}");
        assert_eq!(at, (5, 5));
    }

    #[test]
    fn random_bytes() {
        bad("garbage.xml");
    }

    #[test]
    fn missing_file_is_an_io_error() {
        let err = read(&data("junit/no-such-report.xml")).unwrap_err();
        assert_eq!(err.message, "file not found");
        assert!(err.to_string().contains("no-such-report.xml"));
    }

    #[test]
    fn undefined_entities_without_a_dtd() {
        let err = read_text_err(b"<testsuites><testsuite>\n<testcase name=\"a\">&lol9;</testcase></testsuite></testsuites>");
        assert!(err.message.contains("`&lol9;`"), "{err}");
        assert_eq!(err.location, Some(Location::LineColumn(2, 20)));
        let err = read_text_err(b"<testsuite><testcase name=\"a&xxe;b\"/></testsuite>");
        assert!(err.message.contains("undefined entity `&xxe;`"), "{err}");
        assert_eq!(err.location, Some(Location::LineColumn(1, 12)));
        let err = read_text_err(b"<testsuite>&#0;</testsuite>");
        assert!(err.message.contains("`&#0;`"), "{err}");
    }

    #[test]
    fn content_outside_the_root() {
        let err = read_text_err(b"junit:\n<testsuites/>");
        assert_eq!(err.message, "text before the root element");
        let err = read_text_err(b"<testsuites/>\n<testsuites/>");
        assert!(err.message.contains("second root element"), "{err}");
        assert_eq!(err.location, Some(Location::LineColumn(2, 1)));
        let err = read_text_err(b"<testsuites/>trailing");
        assert_eq!(err.message, "text after the end of the report");
        // A byte order mark anywhere but at the very start is text before the root.
        for late_mark in [
            &b" \xEF\xBB\xBF<testsuite><testcase name=\"a\"/></testsuite>"[..],
            &b"\xEF\xBB\xBF\n\xEF\xBB\xBF<testsuite><testcase name=\"a\"/></testsuite>"[..],
        ] {
            let err = read_text_err(late_mark);
            assert_eq!(err.message, "text before the root element");
        }
        // The position is the text's first non-blank byte, not the line break before it.
        let err = read_text_err(b"<testsuites/>\n  trailing");
        assert_eq!(err.message, "text after the end of the report");
        assert_eq!(err.location, Some(Location::LineColumn(2, 3)));
        let err = read_text_err(b"<!-- only a comment -->\n");
        assert!(err.message.contains("no root element"), "{err}");
    }

    #[test]
    fn testcase_inside_testcase() {
        let err = read_text_err(
            b"<testsuite><testcase name=\"outer\"><testcase name=\"inner\"><failure/></testcase></testcase></testsuite>",
        );
        assert_eq!(err.message, "<testcase> inside another <testcase>");
    }

    #[test]
    fn outcome_spellings_readers_skip_are_refused_at_the_element() {
        for (name, at, message) in [
            (
                "capital-failure.xml",
                (6, 7),
                "<Failure> is not <failure>: JUnit readers match element names exactly \
                 (case and no namespace prefix), so they would skip it \
                 (in the record of tests.test_billing::test_discount)",
            ),
            (
                "namespaced-failure.xml",
                (6, 7),
                "<x:failure> is not <failure>: JUnit readers match element names exactly \
                 (case and no namespace prefix), so they would skip it \
                 (in the record of tests.test_billing::test_discount)",
            ),
            (
                "capital-skipped.xml",
                (6, 7),
                "<SKIPPED> is not <skipped>: JUnit readers match element names exactly \
                 (case and no namespace prefix), so they would skip it \
                 (in the record of tests.properties.test_codec::test_escapes)",
            ),
            (
                "lowercase-rerun.xml",
                (6, 7),
                "<flakyfailure> is not <flakyFailure>: JUnit readers match element names \
                 exactly (case and no namespace prefix), so they would skip it \
                 (in the record of nextest-sample::tests::flaky::passes_on_retry)",
            ),
            (
                "capital-testcase.xml",
                (5, 5),
                "<TestCase> is not <testcase>: JUnit readers match element names exactly \
                 (case and no namespace prefix), so they would skip it",
            ),
        ] {
            let (err, found) = bad(name);
            assert_eq!(err.message, message, "{name}");
            assert_eq!(found, at, "{name}");
            assert_eq!(err.hint.as_deref(), Some(HINT_SPELLING), "{name}");
        }
    }

    #[test]
    fn outcomes_and_records_nested_where_readers_do_not_look_are_refused() {
        for (name, at, message) in [
            (
                "failure-in-properties.xml",
                (8, 9),
                "<failure> nested inside <properties>, where JUnit readers do not look for \
                 outcomes (in the record of tests.test_billing::test_discount)",
            ),
            (
                "error-in-system-err.xml",
                (7, 1),
                "<error> nested inside <system-err>, where JUnit readers do not look for \
                 outcomes (in the record of tests.test_billing::test_converts_currency)",
            ),
            (
                "testcase-in-properties.xml",
                (6, 7),
                "<testcase> nested inside <properties>, where JUnit readers do not look for tests",
            ),
            (
                "skipped-on-suite.xml",
                (4, 5),
                "<skipped> directly inside <testsuite> belongs to no test",
            ),
        ] {
            let (err, found) = bad(name);
            assert_eq!(err.message, message, "{name}");
            assert_eq!(found, at, "{name}");
        }
        // Deeper, and inside an outcome's own content.
        for text in [
            &b"<testsuite><testcase name=\"a\"><properties><property name=\"k\"><Error/></property></properties></testcase></testsuite>"[..],
            b"<testsuite><testcase name=\"a\"><skipped><failure/></skipped></testcase></testsuite>",
            b"<testsuite><testcase name=\"a\"><rerunFailure><stackTrace/><ns:error/></rerunFailure></testcase></testsuite>",
            b"<testsuite><testcase name=\"a\"><testsuite name=\"inner\"/></testcase></testsuite>",
            b"<testsuite><system-out><testcase name=\"hidden\"/></system-out></testsuite>",
            b"<testsuite><flakyError/><testcase name=\"a\"/></testsuite>",
        ] {
            let err = read_text_err(text);
            assert_eq!(err.hint.as_deref(), Some(HINT_SPELLING), "{err}");
        }
        // What runners do write there is fine: surefire's stack traces and captured output
        // inside a rerun, pytest's record properties.
        let (cases, _) = read_text(
            b"<testsuite><testcase name=\"a\"><properties><property name=\"k\" value=\"v\"/></properties>\
              <flakyFailure message=\"m\"><stackTrace>t</stackTrace><system-out>o</system-out></flakyFailure>\
              </testcase></testsuite>",
        )
        .unwrap();
        assert_eq!(cases[0].outcome, Outcome::Flaky);
    }

    #[test]
    fn suite_level_failures_and_errors_are_kept_with_suite_and_place() {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(
            b"<testsuites name=\"run\">\n<failure message=\"internal error\"/>\n\
              <testsuite name=\"outer\"><testsuite name=\"tests.test_setup\">\n  \
              <error message=\"setup_module &amp; more\">trace</error>\
              <testcase name=\"a\"/></testsuite>\n<testcase name=\"b\"/></testsuite></testsuites>",
        )
        .unwrap();
        file.flush().unwrap();
        let mut names = Vec::new();
        let read = read_junit(file.path(), &mut |case| names.push(case.name.clone())).unwrap();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(read.counts, counts(2, 2, 0, 0, 0));
        assert_eq!(
            read.suite_failures,
            vec![
                SuiteFailure {
                    suite: "run".into(),
                    outcome: Outcome::Failed,
                    message: Some("internal error".into()),
                    location: Location::LineColumn(2, 1),
                },
                SuiteFailure {
                    suite: "tests.test_setup".into(),
                    outcome: Outcome::Errored,
                    message: Some("setup_module & more".into()),
                    location: Location::LineColumn(4, 3),
                },
            ]
        );
    }

    #[test]
    fn cut_inside_a_tag() {
        let err = read_text_err(b"<testsuites>\n  <testsuite name=\"x\">\n    <testcase name=\"a");
        assert!(err.message.starts_with("malformed XML"), "{err}");
        assert_eq!(err.location, Some(Location::LineColumn(3, 5)));
        assert_eq!(err.hint.as_deref(), Some(HINT_TRUNCATED));
    }

    #[test]
    fn deep_nesting_is_refused() {
        let mut text = b"<testsuites>".to_vec();
        for _ in 0..10_000 {
            text.extend_from_slice(b"<a>");
        }
        let err = read_text_err(&text);
        assert!(err.message.contains("nested more than"), "{err}");
    }

    #[test]
    fn byte_order_mark_keeps_positions_true() {
        let err = read_text_err(b"\xEF\xBB\xBF<project/>");
        // Columns count bytes, and the mark is three of them.
        assert_eq!(err.location, Some(Location::LineColumn(1, 4)));
        let (cases, _) =
            read_text(b"\xEF\xBB\xBF<testsuite><testcase name=\"a\"/></testsuite>").unwrap();
        assert_eq!(cases[0].name, "a");
        // A second mark is U+FEFF as text before the root (quick-xml would drop it silently).
        let err =
            read_text_err(b"\xEF\xBB\xBF\xEF\xBB\xBF<testsuite><testcase name=\"a\"/></testsuite>");
        assert_eq!(err.message, "text before the root element");
        assert_eq!(err.location, Some(Location::LineColumn(1, 4)));
    }

    /// Every proper prefix of a real report that cuts into its content is an error, never a
    /// shorter report; and no prefix panics.
    #[test]
    fn truncation_anywhere_is_an_error() {
        let text = std::fs::read(data("junit/pytest-xunit2.xml")).unwrap();
        let end_of_root = text
            .windows(b"</testsuites>".len())
            .rposition(|w| w == b"</testsuites>")
            .unwrap()
            + b"</testsuites>".len();
        let mut file = tempfile::NamedTempFile::new().unwrap();
        for cut in 0..text.len() {
            file.as_file().set_len(0).unwrap();
            std::fs::write(file.path(), &text[..cut]).unwrap();
            let result = read(file.path());
            if cut < end_of_root {
                let err = result.expect_err(&format!("cut at {cut} was accepted"));
                assert!(err.location.is_some(), "cut at {cut}: {err}");
            } else {
                assert!(result.is_ok(), "cut at {cut}");
            }
        }
        file.flush().unwrap();
    }

    /// Byte flips in a real report never panic; whatever is accepted still has a name.
    #[test]
    fn corrupted_reports_never_panic() {
        let text = std::fs::read(data("junit/nextest.xml")).unwrap();
        let file = tempfile::NamedTempFile::new().unwrap();
        // A fixed xorshift, so failures reproduce.
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..1_000 {
            let mut corrupted = text.clone();
            for _ in 0..(next() % 4 + 1) {
                let at = (next() % corrupted.len() as u64) as usize;
                corrupted[at] = next() as u8;
            }
            std::fs::write(file.path(), &corrupted).unwrap();
            match read(file.path()) {
                Ok((cases, counts_read)) => assert_eq!(cases.len() as u64, counts_read.cases),
                Err(err) => assert!(err.location.is_some(), "{err}"),
            }
        }
    }

    // --- structure and outcomes -----------------------------------------------------------

    #[test]
    fn testcase_in_nested_suites_is_found() {
        let (cases, counts_read) = read_text(
            br#"<?xml version="1.0"?>
<testsuites>
  <testsuite name="outer">
    <testsuite name="middle">
      <properties><property name="k" value="v"/></properties>
      <testsuite name="inner">
        <testcase classname="deep.Suite" name="found"><failure message="x"/></testcase>
      </testsuite>
    </testsuite>
    <testcase classname="outer.Suite" name="shallow"/>
  </testsuite>
</testsuites>"#,
        )
        .unwrap();
        assert_eq!(counts_read, counts(2, 1, 1, 0, 0));
        assert_eq!(outcome(&cases, "deep.Suite", "found"), Outcome::Failed);
        assert_eq!(outcome(&cases, "outer.Suite", "shallow"), Outcome::Passed);
    }

    #[test]
    fn empty_roots_are_valid_reports() {
        for text in [
            &b"<testsuites/>"[..],
            b"<?xml version=\"1.0\"?>\n<!-- c -->\n<?pi x?>\n<testsuite name=\"none\"></testsuite>\n",
        ] {
            let (cases, counts_read) = read_text(text).unwrap();
            assert!(cases.is_empty());
            assert_eq!(counts_read, counts(0, 0, 0, 0, 0));
        }
    }

    #[test]
    fn outcome_rules() {
        let (cases, counts_read) = read_text(
            br#"<testsuite>
  <testcase classname="c" name="self-closing"/>
  <testcase classname="c" name="open-and-close"></testcase>
  <testcase classname="c" name="failure"><failure/></testcase>
  <testcase classname="c" name="error"><error>boom</error></testcase>
  <testcase classname="c" name="both"><failure/><error/></testcase>
  <testcase classname="c" name="skipped"><skipped/></testcase>
  <testcase classname="c" name="xfail"><skipped type="pytest.xfail" message="x"/></testcase>
  <testcase classname="c" name="rerun-then-pass"><rerunFailure><stackTrace>t</stackTrace></rerunFailure></testcase>
  <testcase classname="c" name="flaky-error"><flakyError/></testcase>
  <testcase classname="c" name="rerun-error"><rerunError/></testcase>
  <testcase classname="c" name="rerun-and-failure"><failure/><rerunFailure/></testcase>
  <testcase classname="c" name="flaky-and-error"><flakyFailure/><error/></testcase>
  <testcase classname="c" name="output-only"><system-out>&lt;failure/&gt; <![CDATA[<error/>]]></system-out><system-err>&lt;error&gt;</system-err></testcase>
</testsuite>"#,
        )
        .unwrap();
        let expect = [
            ("self-closing", Outcome::Passed),
            ("open-and-close", Outcome::Passed),
            ("failure", Outcome::Failed),
            ("error", Outcome::Errored),
            ("both", Outcome::Errored),
            ("skipped", Outcome::Skipped),
            ("xfail", Outcome::Skipped),
            ("rerun-then-pass", Outcome::Flaky),
            ("flaky-error", Outcome::Flaky),
            ("rerun-error", Outcome::Flaky),
            ("rerun-and-failure", Outcome::Failed),
            ("flaky-and-error", Outcome::Errored),
            // A failure element inside captured output is text about a failure, not one.
            ("output-only", Outcome::Passed),
        ];
        for (name, want) in expect {
            assert_eq!(outcome(&cases, "c", name), want, "{name}");
        }
        assert_eq!(counts_read, counts(13, 6, 2, 3, 2));
    }

    #[test]
    fn captured_output_is_skipped_unread() {
        let (cases, _) = read_text(
            b"<testsuite><testcase name=\"a\"><system-out>x]]y <![CDATA[<failure/> & ]] ]]]></system-out>\
              <system-err><![CDATA[]]><x>not an element</x>]]>\xff\xfe raw bytes</system-err></testcase>\
              <testcase name=\"b\"><failure/></testcase></testsuite>",
        )
        .unwrap();
        let seen: Vec<_> = cases.iter().map(|c| (c.name.as_str(), c.outcome)).collect();
        assert_eq!(seen, [("a", Outcome::Passed), ("b", Outcome::Failed)]);
        // Entities are still checked there.
        let err = read_text_err(b"<testsuite><system-out>a &xxe; b</system-out></testsuite>");
        assert!(err.message.contains("`&xxe;`"), "{err}");
        let err = read_text_err(b"<testsuite><system-out><![CDATA[cut short");
        assert_eq!(
            err.message,
            "the file ends inside <system-out>, which is never closed \
             (it opens at line 1, column 12)"
        );
    }

    /// Text and CDATA that straddle the reader's 64 KiB blocks are skipped the same way.
    #[test]
    fn skipped_output_across_read_blocks() {
        for shift in 65_500..65_560 {
            let mut text = b"<testsuite><testcase name=\"a\"><system-out>".to_vec();
            text.resize(shift, b'.');
            text.extend_from_slice(b"<![CDATA[<error/>");
            text.resize(text.len() + (shift % 7) * 9_000, b']');
            text.extend_from_slice(b"]]></system-out><failure/></testcase></testsuite>");
            let (cases, _) = read_text(&text).unwrap_or_else(|err| panic!("{shift}: {err}"));
            assert_eq!(cases.len(), 1);
            assert_eq!(cases[0].outcome, Outcome::Failed, "{shift}");
        }
    }

    #[test]
    fn skip_content_stops_at_markup() {
        let mut input: &[u8] = b"some text <![CDATA[a]]b]]]>more&amp;rest";
        skip_content(&mut input).unwrap();
        assert_eq!(input, b"&amp;rest");
        let mut input: &[u8] = b"no markup at all";
        skip_content(&mut input).unwrap();
        assert!(input.is_empty());
        let long = [b"x".repeat(100), b"<y/>".to_vec()].concat();
        assert_eq!(find_markup(&long), Some(100));
        assert_eq!(find_markup(b"&"), Some(0));
        assert_eq!(find_markup(&b"z".repeat(64)), None);
    }

    #[test]
    fn attributes_are_unescaped() {
        let (cases, _) = read_text(
            br#"<testsuite><testcase name="t[a&lt;b &quot;q&quot; &amp; &#x41;&#66;&apos;]" file="tests/x.py"/><testcase classname="k" name="line&#10;break"/></testsuite>"#,
        )
        .unwrap();
        assert_eq!(cases[0].name, "t[a<b \"q\" & AB']");
        assert_eq!(cases[0].classname, "");
        assert_eq!(cases[0].file.as_deref(), Some("tests/x.py"));
        assert_eq!(cases[1].name, "line\nbreak");
    }

    #[test]
    fn literal_whitespace_in_attributes_is_normalised_in_long_and_short_values() {
        // Values longer than one 16-byte block and shorter ones: both ways through `is_plain`.
        let (cases, _) = read_text(
            b"<testsuite><testcase classname=\"tests.a_long_module_name\tx\" name=\"a\nb\"/>\
              <testcase classname=\"tests.a_long_module_name_without_any\" name=\"t\r\n[0]\"/>\
              </testsuite>",
        )
        .unwrap();
        assert_eq!(cases[0].classname, "tests.a_long_module_name x");
        assert_eq!(cases[0].name, "a b");
        assert_eq!(cases[1].classname, "tests.a_long_module_name_without_any");
        // XML end-of-line handling turns CR LF into one LF before normalisation.
        assert_eq!(cases[1].name, "t [0]");
    }

    #[test]
    fn duplicate_attributes_are_refused() {
        let name_twice = br#"<testsuite><testcase name="a" classname="k" name="b"/></testsuite>"#;
        let err = read_text_err(name_twice);
        assert!(
            err.message.contains("`name` is given twice"),
            "{}",
            err.message
        );
        // On and past the eight attributes kept on the stack.
        for twice in ["a3", "a9"] {
            let report = format!(
                r#"<testsuite><testcase name="a" a1="" a2="" a3="" a4="" a5="" a6="" a7="" a8="" a9="" {twice}=""/></testsuite>"#
            );
            let err = read_text_err(report.as_bytes());
            let want = format!("`{twice}` is given twice");
            assert!(err.message.contains(&want), "{}", err.message);
        }
    }

    #[test]
    fn reused_buffers_do_not_leak_between_records() {
        let (cases, _) = read_text(
            br#"<testsuite>
  <testcase classname="k.one" name="a" file="tests/one.py"/>
  <testcase name="b"/>
  <testcase classname="k.three" name="c"><failure/></testcase>
  <testcase classname="k.four" name="d" file="tests/four.py"/>
</testsuite>"#,
        )
        .unwrap();
        let got: Vec<_> = cases
            .iter()
            .map(|c| {
                (
                    c.classname.as_str(),
                    c.name.as_str(),
                    c.file.as_deref(),
                    c.outcome,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("k.one", "a", Some("tests/one.py"), Outcome::Passed),
                ("", "b", None, Outcome::Passed),
                ("k.three", "c", None, Outcome::Failed),
                ("k.four", "d", Some("tests/four.py"), Outcome::Passed),
            ]
        );
    }

    #[test]
    fn repeated_records_fold_only_when_adjacent_in_one_suite() {
        let (cases, counts_read) = read_text(
            br#"<testsuites>
  <testsuite name="a">
    <testcase classname="m" name="flaky"/>
    <testcase classname="m" name="flaky"/>
    <testcase classname="m" name="always-fails"/>
    <testcase classname="m" name="always-fails"><failure/></testcase>
    <testcase classname="m" name="once"/>
  </testsuite>
  <testsuite name="b">
    <testcase classname="m" name="once"/>
    <testcase classname="m" name="x"/>
    <testcase classname="m" name="y"/>
    <testcase classname="m" name="x"/>
  </testsuite>
</testsuites>"#,
        )
        .unwrap();
        let seen: Vec<_> = cases.iter().map(|c| (c.name.as_str(), c.outcome)).collect();
        assert_eq!(
            seen,
            [
                ("flaky", Outcome::Flaky),
                ("always-fails", Outcome::Failed),
                ("once", Outcome::Passed),
                ("once", Outcome::Passed),
                ("x", Outcome::Passed),
                ("y", Outcome::Passed),
                ("x", Outcome::Passed),
            ]
        );
        // Nine elements, folded into seven records.
        assert_eq!(counts_read, counts(9, 6, 1, 0, 0));
    }

    /// Writes a report of `cases` testcases in pytest's layout with some failures, skips,
    /// captured output and properties. Returns the expected counts.
    fn write_large_report(out: &mut impl Write, cases: u64) -> JunitCounts {
        let mut expected = counts(cases, 0, 0, 0, 0);
        writeln!(out, r#"<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" tests="{cases}"><properties><property name="k" value="v"/></properties>"#).unwrap();
        for i in 0..cases {
            let class = format!("tests.module_{}.TestGroup{}", i / 1000, i % 7);
            write!(
                out,
                r#"<testcase classname="{class}" name="test_case_{i}[p-{}]" time="0.001""#,
                i % 13
            )
            .unwrap();
            match i % 100 {
                0 => {
                    expected.failed += 1;
                    write!(out, r#"><failure message="assert 1 == 2">def test():&#10;&gt;  assert 1 == 2&#10;E  assert 1 == 2</failure><system-out>captured &amp; kept</system-out></testcase>"#).unwrap();
                }
                1 => {
                    expected.skipped += 1;
                    write!(out, r#"><skipped type="pytest.skip" message="no network">tests/x.py:3: no network</skipped></testcase>"#).unwrap();
                }
                2 => {
                    expected.errors += 1;
                    write!(
                        out,
                        r#"><error message="failed on setup">E ConnectionError</error></testcase>"#
                    )
                    .unwrap();
                }
                _ => {
                    expected.passed += 1;
                    write!(out, " />").unwrap();
                }
            }
        }
        writeln!(out, "</testsuite></testsuites>").unwrap();
        expected
    }

    #[test]
    fn large_report_streams_and_counts() {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        let expected = {
            let mut out = std::io::BufWriter::new(file.as_file_mut());
            let expected = write_large_report(&mut out, 200_000);
            out.flush().unwrap();
            expected
        };
        let mut seen = 0u64;
        let mut last = None;
        let counts_read = read_junit(file.path(), &mut |case| {
            seen += 1;
            last = Some(case.clone());
        })
        .unwrap()
        .counts;
        assert_eq!(counts_read, expected);
        assert_eq!(seen, 200_000);
        let last = last.unwrap();
        assert_eq!(last.name, "test_case_199999[p-7]");
        assert_eq!(last.classname, "tests.module_199.TestGroup2");
    }

    /// Peak resident memory of this process so far, in MB (Linux only).
    fn peak_rss_mb() -> Option<f64> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb / 1e3)
    }

    fn time_read(path: &Path) -> (JunitCounts, f64) {
        let size = path.metadata().unwrap().len() as f64 / 1e6;
        let started = std::time::Instant::now();
        let counts_read = read_junit(path, &mut |case| {
            std::hint::black_box(case);
        })
        .unwrap()
        .counts;
        let seconds = started.elapsed().as_secs_f64();
        println!(
            "{size:.0} MB in {seconds:.2} s: {:.0} MB/s, peak RSS {:.0} MB",
            size / seconds,
            peak_rss_mb().unwrap_or(f64::NAN)
        );
        (counts_read, seconds)
    }

    /// `cargo test --release --lib -- --ignored --nocapture throughput` prints MB/s and peak
    /// memory for two ~200 MB reports: one of many testcases, one that is mostly captured
    /// output (which must not be held in memory).
    #[test]
    #[ignore = "a benchmark: run in release mode"]
    fn throughput() {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        let expected = {
            let mut out = std::io::BufWriter::new(file.as_file_mut());
            let expected = write_large_report(&mut out, 2_100_000);
            out.flush().unwrap();
            expected
        };
        assert_eq!(time_read(file.path()).0, expected);

        let mut file = tempfile::NamedTempFile::new().unwrap();
        {
            let mut out = std::io::BufWriter::new(file.as_file_mut());
            let line = "captured output line with &lt;markup&gt; in it\n".repeat(1_000);
            out.write_all(b"<testsuites><testsuite><testcase name=\"t\"><system-out>")
                .unwrap();
            for _ in 0..2_000 {
                out.write_all(line.as_bytes()).unwrap();
            }
            out.write_all(b"</system-out><system-err><![CDATA[")
                .unwrap();
            let raw = "raw <output> & more\n".repeat(1_000);
            for _ in 0..2_000 {
                out.write_all(raw.as_bytes()).unwrap();
            }
            out.write_all(b"]]></system-err></testcase></testsuite></testsuites>")
                .unwrap();
            out.flush().unwrap();
        }
        assert_eq!(time_read(file.path()).0, counts(1, 1, 0, 0, 0));
    }
}
