//! The streaming parser: one pass over quick-xml's events with a stack of open elements,
//! turning `<testcase>` elements and the outcome elements inside them into records, folding
//! repeated records of a rerun, keeping suite-level failures, and refusing what a JUnit
//! reader would misread.

use std::io::{self, BufRead};

use quick_xml::Reader;
use quick_xml::encoding::EncodingError;
use quick_xml::errors::{Error as XmlError, SyntaxError};
use quick_xml::events::{BytesStart, Event};

use super::attributes::{attribute, read_case_attributes};
use super::content::{check_reference, skip_content, skip_whitespace};
use super::errors::{
    Bad, Failure, HINT_DTD, HINT_MALFORMED, HINT_NOT_JUNIT, HINT_SPELLING, HINT_TRUNCATED,
};
use super::names::{fails, outcome_mark, outcome_of, spelled_like};
use crate::error::Location;
use crate::evidence::record::{JunitCounts, Outcome, SuiteFailure, TestCase};

/// JUnit nests suites a few levels at most; a deeper document is hostile or broken, and the
/// limit bounds the memory the element stack can take.
const MAX_DEPTH: usize = 256;

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

// The parser's own uses of the shared record: a buffer reused from record to record, and the
// identity that tells a rerun's repeated record from the next test.
impl TestCase {
    fn empty() -> TestCase {
        TestCase {
            classname: String::new(),
            name: String::new(),
            file: None,
            outcome: Outcome::Passed,
            message: None,
        }
    }

    fn same_test(&self, other: &TestCase) -> bool {
        self.name == other.name && self.classname == other.classname && self.file == other.file
    }
}

pub(super) struct Parser<'s> {
    sink: &'s mut dyn FnMut(&TestCase),
    pub(super) counts: JunitCounts,
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
    pub(super) suite_failures: Vec<(u64, SuiteFailure)>,
}

impl<'s> Parser<'s> {
    pub(super) fn new(sink: &'s mut dyn FnMut(&TestCase)) -> Self {
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

    pub(super) fn run<R: BufRead>(&mut self, reader: &mut Reader<R>) -> Result<(), Failure> {
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
                        // The first failure's message, for findings that name it.
                        if fails(mark) && self.case.message.is_none() {
                            self.case.message = attribute(e, "message").map(short_message);
                        }
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
                self.case.message = None;
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

/// A failure message as findings show it: its first line, at most 200 characters, control
/// characters made spaces (a message is the test's output, which the tested code writes).
pub(super) fn short_message(message: String) -> Box<str> {
    let first = message.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let mut out: String = first
        .chars()
        .take(200)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if first.chars().count() > 200 {
        out.push_str("...");
    }
    out.trim().into()
}
