//! Coverage report reader: coverage.py JSON, LCOV and Cobertura XML, detected by content.
//! It reads the report's overall figure; it does not judge it against a floor.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Cursor, Read};
use std::path::Path;

use serde::Deserialize;

use crate::error::{InputError, Location, line_column};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CoverageFormat {
    CoveragePyJson,
    Lcov,
    Cobertura,
}

/// The coverage figure guard judges, and what it was computed from.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Coverage {
    pub format: CoverageFormat,
    /// Percent in 0..=100.
    pub percent: f64,
    /// The counts behind `percent` when the report gives them: lines for LCOV and
    /// Cobertura; statements plus branches for coverage.py JSON (branches are 0 unless the
    /// run measured them). `None` when only a rate was given (Cobertura `line-rate`).
    pub covered: Option<u64>,
    pub total: Option<u64>,
}

const NOT_A_REPORT: &str =
    "not a coverage report: expected coverage.py JSON, LCOV or Cobertura XML";
const PRODUCE_HINT: &str = "produce one with `pytest --cov=src --cov-report=json:coverage.json` \
     (or `--cov-report=lcov:coverage.lcov`, `--cov-report=xml:coverage.xml`; \
     `cargo llvm-cov --lcov --output-path coverage.lcov` for Rust)";

/// How much of the file is read to tell the formats apart. The rest is streamed.
const HEAD_LEN: u64 = 8 * 1024;

pub fn read_coverage(path: &Path) -> Result<Coverage, InputError> {
    let mut file = File::open(path).map_err(|e| InputError::io(path, &e))?;
    let mut head = Vec::new();
    (&mut file)
        .take(HEAD_LEN)
        .read_to_end(&mut head)
        .map_err(|e| InputError::io(path, &e))?;
    let bom = if head.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    };
    let Some(start) = head[bom..].iter().position(|b| !b.is_ascii_whitespace()) else {
        let more = file
            .read(&mut [0u8; 1])
            .map_err(|e| InputError::io(path, &e))?;
        let message = if more == 0 {
            "empty file"
        } else {
            NOT_A_REPORT
        };
        return Err(InputError::new(path, message).with_hint(PRODUCE_HINT));
    };
    let first = &head[bom + start..];

    if first.starts_with(b"{") {
        let mut text = head[bom..].to_vec();
        file.read_to_end(&mut text)
            .map_err(|e| InputError::io(path, &e))?;
        read_coverage_py(path, &text)
    } else if first.starts_with(b"<") {
        let input = BufReader::new(Cursor::new(head.clone()).chain(file));
        read_cobertura(path, &head, input)
    } else if is_lcov_start(first) {
        let input = BufReader::new(Cursor::new(head[bom..].to_vec()).chain(file));
        read_lcov(path, input)
    } else {
        Err(InputError::new(path, NOT_A_REPORT).with_hint(PRODUCE_HINT))
    }
}

/// LCOV tracefiles open with a test name or a source file record.
fn is_lcov_start(text: &[u8]) -> bool {
    ["TN:", "SF:"]
        .iter()
        .any(|k| text.starts_with(k.as_bytes()))
}

// ---------------------------------------------------------------------------------------
// coverage.py JSON

#[derive(Deserialize)]
struct CoveragePy {
    totals: Option<Totals>,
}

#[derive(Deserialize)]
struct Totals {
    #[serde(default, deserialize_with = "percent_covered")]
    percent_covered: Option<f64>,
    covered_lines: Option<u64>,
    num_statements: Option<u64>,
    #[serde(default)]
    covered_branches: u64,
    #[serde(default)]
    num_branches: u64,
}

/// `totals.percent_covered` as a number in 0..=100. The error is raised inside the parse so
/// serde_json gives it a position: the end of the `totals` object.
fn percent_covered<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    use serde::de::Error;
    let value = serde_json::Value::deserialize(d)?;
    let Some(percent) = value.as_f64() else {
        return Err(D::Error::custom(format!(
            "`totals.percent_covered` is not a number: {}",
            shorten(&value.to_string())
        )));
    };
    if !(0.0..=100.0).contains(&percent) {
        return Err(D::Error::custom(format!(
            "`totals.percent_covered` is {percent}, outside 0..=100"
        )));
    }
    Ok(Some(percent))
}

fn read_coverage_py(path: &Path, text: &[u8]) -> Result<Coverage, InputError> {
    let report: CoveragePy =
        serde_json::from_slice(text).map_err(|e| json_error(path, text, &e))?;
    let hint = "coverage.py writes it with `coverage json` or \
                `pytest --cov=src --cov-report=json:coverage.json`";
    let Some(totals) = report.totals else {
        return Err(
            InputError::new(path, "not coverage.py JSON: `totals` is missing").with_hint(hint),
        );
    };
    let Some(percent) = totals.percent_covered else {
        return Err(InputError::new(
            path,
            "not coverage.py JSON: `totals.percent_covered` is missing",
        )
        .with_hint(hint));
    };
    // coverage.py reports 100% for a run that measured nothing (`--cov` naming the wrong
    // package); that is no evidence.
    if totals.num_statements == Some(0) {
        return Err(no_lines(path));
    }
    let (covered, total) = match (totals.covered_lines, totals.num_statements) {
        (Some(covered), Some(total)) => (
            Some(covered.saturating_add(totals.covered_branches)),
            Some(total.saturating_add(totals.num_branches)),
        ),
        _ => (None, None),
    };
    Ok(Coverage {
        format: CoverageFormat::CoveragePyJson,
        percent,
        covered,
        total,
    })
}

/// A serde_json error as an input error at its line and column.
fn json_error(path: &Path, text: &[u8], err: &serde_json::Error) -> InputError {
    let (line, column) = (err.line() as u64, err.column() as u64);
    let full = err.to_string();
    let mut message = full
        .strip_suffix(&format!(" at line {line} column {column}"))
        .unwrap_or(&full)
        .to_string();
    if err.is_eof() {
        message = format!("truncated JSON: {message}");
    }
    // Python's json module writes NaN and Infinity, which JSON does not allow.
    if let Some(offset) = offset_of(text, line, column) {
        let rest = &text[offset.saturating_sub(1)..];
        if let Some(word) = ["NaN", "Infinity", "-Infinity"]
            .iter()
            .find(|w| rest.starts_with(w.as_bytes()))
        {
            message = match key_before(text, offset.saturating_sub(1)) {
                Some(key) => format!("`{key}` is {word}, which is not a JSON number"),
                None => format!("{word} is not a JSON number"),
            };
        }
    }
    let err = InputError::new(path, message);
    if line == 0 {
        err
    } else {
        err.at(Location::LineColumn(line, column))
    }
}

/// The byte offset of 1-based `line`, `column` in `text`.
fn offset_of(text: &[u8], line: u64, column: u64) -> Option<usize> {
    if line == 0 || column == 0 {
        return None;
    }
    let mut start = 0;
    for _ in 1..line {
        start += text[start..].iter().position(|&b| b == b'\n')? + 1;
    }
    let offset = start + column as usize;
    (offset <= text.len()).then_some(offset)
}

/// The object key whose value starts at `offset`, read backwards over `"key" :`.
fn key_before(text: &[u8], offset: usize) -> Option<String> {
    let before = text[..offset].trim_ascii_end().strip_suffix(b":")?;
    let before = before.trim_ascii_end().strip_suffix(b"\"")?;
    let open = before.iter().rposition(|&b| b == b'"')?;
    String::from_utf8(before[open + 1..].to_vec()).ok()
}

// ---------------------------------------------------------------------------------------
// LCOV

/// One `SF:` ... `end_of_record` block.
#[derive(Default)]
struct Record {
    source: Option<String>,
    /// Line where the record starts, for messages.
    line: u64,
    found: Option<u64>,
    hit: Option<u64>,
    /// `DA:` lines as (line number, executed).
    lines: Vec<(u64, bool)>,
}

impl Record {
    /// (hit, found): the record's `LH`/`LF` summary, or its `DA` lines when it has none.
    fn counts(&self) -> (u64, u64) {
        match (self.hit, self.found) {
            (Some(hit), Some(found)) => (hit, found),
            _ => distinct_lines(&self.lines),
        }
    }
}

/// (executed, measured) over distinct line numbers.
fn distinct_lines(lines: &[(u64, bool)]) -> (u64, u64) {
    let mut by_line: HashMap<u64, bool> = HashMap::with_capacity(lines.len());
    for &(line, executed) in lines {
        *by_line.entry(line).or_default() |= executed;
    }
    let hit = by_line.values().filter(|&&executed| executed).count() as u64;
    (hit, by_line.len() as u64)
}

fn read_lcov(path: &Path, mut input: impl BufRead) -> Result<Coverage, InputError> {
    let mut records = Vec::new();
    let mut record = Record {
        line: 1,
        ..Record::default()
    };
    let mut started = false;
    let mut raw = Vec::new();
    let mut number = 0u64;
    loop {
        raw.clear();
        let n = input
            .read_until(b'\n', &mut raw)
            .map_err(|e| InputError::io(path, &e))?;
        if n == 0 {
            break;
        }
        number += 1;
        let at = |message: String| InputError::new(path, message).at(Location::Line(number));
        let text = std::str::from_utf8(&raw).map_err(|e| {
            InputError::new(path, "not UTF-8 text")
                .at(Location::LineColumn(number, e.valid_up_to() as u64 + 1))
        })?;
        let text = text.trim_end_matches(['\n', '\r']);
        if text.trim().is_empty() {
            continue;
        }
        if text == "end_of_record" {
            let done = std::mem::take(&mut record);
            records.push(done);
            record.line = number + 1;
            started = false;
            continue;
        }
        let Some((key, value)) = text.split_once(':').filter(|(k, _)| is_lcov_key(k)) else {
            return Err(at(format!(
                "not an LCOV line (expected KEY:value or end_of_record): `{}`",
                shorten(text)
            )));
        };
        if !started {
            record.line = number;
            started = true;
        }
        let count = |v: &str| {
            v.trim()
                .parse::<u64>()
                .map_err(|_| at(format!("{key}: expected a count, found `{}`", shorten(v))))
        };
        match key {
            "SF" => record.source = Some(value.to_string()),
            "LF" => record.found = Some(count(value)?),
            "LH" => record.hit = Some(count(value)?),
            "DA" => {
                // DA:<line>,<execution count>[,<checksum>]
                let mut fields = value.split(',');
                let line = fields.next().and_then(|f| f.trim().parse::<u64>().ok());
                let hits = fields.next().and_then(|f| f.trim().parse::<i64>().ok());
                let (Some(line), Some(hits)) = (line, hits) else {
                    return Err(at(format!(
                        "DA: expected `line,count`, found `{}`",
                        shorten(value)
                    )));
                };
                record.lines.push((line, hits > 0));
            }
            // LCOV has many more record types (TN, FN, FNDA, BRDA, VER, ...); none of them
            // change the line figure.
            _ => {}
        }
        if let (Some(hit), Some(found)) = (record.hit, record.found) {
            if hit > found {
                return Err(at(format!(
                    "LH ({hit}) exceeds LF ({found}) in the record starting at line {}",
                    record.line
                )));
            }
        }
    }
    if started {
        // Every generator closes each record; one left open is a report cut short (a run
        // killed while writing it, a copy made too early), whose figure is not the run's.
        return Err(InputError::new(
            path,
            format!(
                "the record starting at line {} has no end_of_record: the report is cut short",
                record.line
            ),
        )
        .at(Location::Line(record.line))
        .with_hint("produce the report again and let the run finish writing it"));
    }

    let (hit, found) = lcov_totals(path, &records)?;
    if found == 0 {
        return Err(no_lines(path));
    }
    Ok(Coverage {
        format: CoverageFormat::Lcov,
        percent: 100.0 * hit as f64 / found as f64,
        covered: Some(hit),
        total: Some(found),
    })
}

/// Sum of (hit, found) over the report's source files. A file that appears in more than one
/// record (one per test name, as `geninfo --test-name` writes) is counted once: its `DA`
/// lines are merged, a line counting as hit when any record hit it.
fn lcov_totals(path: &Path, records: &[Record]) -> Result<(u64, u64), InputError> {
    let mut by_source: HashMap<&str, Vec<&Record>> = HashMap::new();
    let mut totals = (0u64, 0u64);
    for record in records {
        match &record.source {
            Some(source) => by_source.entry(source).or_default().push(record),
            None => add(&mut totals, record.counts()),
        }
    }
    for (source, group) in by_source {
        let counts = match group.as_slice() {
            [one] => one.counts(),
            many => {
                if let Some(bare) = many.iter().find(|r| r.lines.is_empty()) {
                    return Err(InputError::new(
                        path,
                        format!(
                            "`{}` has several records but the one at line {} has no DA lines \
                             to merge",
                            shorten(source),
                            bare.line
                        ),
                    )
                    .at(Location::Line(bare.line)));
                }
                let lines: Vec<(u64, bool)> =
                    many.iter().flat_map(|r| r.lines.iter().copied()).collect();
                distinct_lines(&lines)
            }
        };
        add(&mut totals, counts);
    }
    Ok(totals)
}

fn add(totals: &mut (u64, u64), (hit, found): (u64, u64)) {
    totals.0 = totals.0.saturating_add(hit);
    totals.1 = totals.1.saturating_add(found);
}

fn is_lcov_key(key: &str) -> bool {
    key.starts_with(|c: char| c.is_ascii_uppercase())
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

// ---------------------------------------------------------------------------------------
// Cobertura XML

/// Reads the totals from the attributes of the root `<coverage>` element, then streams the
/// rest (keeping nothing) to its end: a report cut short is refused like any malformed
/// evidence. quick-xml never expands DTD entities, and a DOCTYPE is refused outright.
fn read_cobertura(path: &Path, head: &[u8], input: impl BufRead) -> Result<Coverage, InputError> {
    let mut reader = quick_xml::Reader::from_reader(input);
    let mut buf = Vec::new();
    let locate = |offset: u64| {
        if offset <= head.len() as u64 {
            let (line, column) = line_column(head, offset as usize);
            Location::LineColumn(line, column)
        } else {
            Location::Byte(offset)
        }
    };
    loop {
        buf.clear();
        // Whitespace between prolog items arrives as text events, so this is where the next
        // markup starts.
        let start = locate(reader.buffer_position());
        let event = match reader.read_event_into(&mut buf) {
            Ok(event) => event,
            Err(e) => {
                return Err(InputError::new(path, format!("malformed XML: {e}"))
                    .at(locate(reader.error_position())));
            }
        };
        use quick_xml::events::Event;
        let (root, open) = match event {
            Event::Start(e) => (e, true),
            Event::Empty(e) => (e, false),
            Event::DocType(_) => {
                return Err(InputError::new(
                    path,
                    "XML with a DOCTYPE is refused: coverage reports need no DTD or entities",
                )
                .at(start));
            }
            Event::Eof => {
                return Err(
                    InputError::new(path, "XML without a root element").with_hint(PRODUCE_HINT)
                );
            }
            _ => continue,
        };
        let position = start;
        let name = String::from_utf8_lossy(root.name().as_ref().as_bytes()).into_owned();
        if name != "coverage" {
            return Err(InputError::new(
                path,
                format!(
                    "not a coverage report: the XML root is <{}>, not Cobertura's <coverage>",
                    shorten(&name)
                ),
            )
            .at(position)
            .with_hint(PRODUCE_HINT));
        }
        let mut attrs: HashMap<String, String> = HashMap::new();
        for attr in root.attributes() {
            let attr = attr.map_err(|e| {
                InputError::new(path, format!("malformed XML attribute: {e}")).at(position)
            })?;
            let key = attr.key.as_ref().to_string();
            if matches!(key.as_str(), "lines-covered" | "lines-valid" | "line-rate") {
                attrs.insert(key, attr.value.trim().to_string());
            }
        }
        let figure = cobertura_figure(path, &attrs).map_err(|e| e.at(position))?;
        let mut depth: u64 = open.into();
        loop {
            buf.clear();
            match reader.read_event_into(&mut buf) {
                Ok(Event::Start(_)) => depth += 1,
                Ok(Event::End(_)) => depth = depth.saturating_sub(1),
                Ok(Event::Eof) => break,
                Ok(_) => {}
                Err(e) => {
                    return Err(InputError::new(path, format!("malformed XML: {e}"))
                        .at(locate(reader.error_position())));
                }
            }
        }
        if depth > 0 {
            return Err(InputError::new(
                path,
                "the file ends before </coverage>: the report is cut short",
            )
            .at(locate(reader.buffer_position()))
            .with_hint("produce the report again and let the run finish writing it"));
        }
        return Ok(figure);
    }
}

fn cobertura_figure(path: &Path, attrs: &HashMap<String, String>) -> Result<Coverage, InputError> {
    let number = |key: &str| -> Result<Option<f64>, InputError> {
        match attrs.get(key) {
            None => Ok(None),
            Some(v) => match v.parse::<f64>() {
                Ok(n) if n.is_finite() && n >= 0.0 => Ok(Some(n)),
                _ => Err(InputError::new(
                    path,
                    format!("<coverage {key}=\"{}\">: not a number", shorten(v)),
                )),
            },
        }
    };
    let count = |key: &str| -> Result<Option<u64>, InputError> {
        match attrs.get(key) {
            None => Ok(None),
            Some(v) => v.parse::<u64>().map(Some).map_err(|_| {
                InputError::new(
                    path,
                    format!("<coverage {key}=\"{}\">: not a count", shorten(v)),
                )
            }),
        }
    };
    // Prefer the counts: coverage.py rounds `line-rate` to four digits.
    if let (Some(covered), Some(valid)) = (count("lines-covered")?, count("lines-valid")?) {
        if valid == 0 {
            return Err(no_lines(path));
        }
        if covered > valid {
            return Err(InputError::new(
                path,
                format!("<coverage>: lines-covered ({covered}) exceeds lines-valid ({valid})"),
            ));
        }
        return Ok(Coverage {
            format: CoverageFormat::Cobertura,
            percent: 100.0 * covered as f64 / valid as f64,
            covered: Some(covered),
            total: Some(valid),
        });
    }
    match number("line-rate")? {
        Some(rate) if rate <= 1.0 => Ok(Coverage {
            format: CoverageFormat::Cobertura,
            percent: rate * 100.0,
            covered: None,
            total: None,
        }),
        Some(rate) => Err(InputError::new(
            path,
            format!("<coverage line-rate=\"{rate}\">: outside 0..=1"),
        )),
        None => Err(InputError::new(
            path,
            "<coverage> has neither lines-covered/lines-valid nor line-rate",
        )
        .with_hint(PRODUCE_HINT)),
    }
}

// ---------------------------------------------------------------------------------------

fn no_lines(path: &Path) -> InputError {
    InputError::new(path, "report measures no lines")
        .with_hint("check that `--cov` names the package under test and that the tests import it")
}

/// `text` cut to a length that fits in a message.
fn shorten(text: &str) -> String {
    const MAX: usize = 60;
    match text.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn data(rel: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(rel)
    }

    fn read(rel: &str) -> Coverage {
        read_coverage(&data(rel)).unwrap_or_else(|e| panic!("{e}"))
    }

    fn error(rel: &str) -> String {
        match read_coverage(&data(rel)) {
            Ok(c) => panic!("{rel}: expected an error, got {c:?}"),
            Err(e) => {
                let shown = e.to_string();
                assert!(
                    shown.starts_with(&data(rel).display().to_string()),
                    "{shown}"
                );
                shown
            }
        }
    }

    // The three reports of one pytest-cov run (tests/data/regen-coverage.sh), checked by hand:
    //   awk -F: '/^LF:/{lf+=$2} /^LH:/{lh+=$2} END{print lh, lf}' coverage.lcov   -> 23 35
    //   cobertura.xml root: lines-covered="23" lines-valid="35" line-rate="0.6571"
    //   coverage.json totals: percent_covered 62.264150943396224, covered_lines 23,
    //     num_statements 35, covered_branches 10, num_branches 18
    // The run had --cov-branch, and coverage.py then counts branches in percent_covered:
    // (23 + 10) / (35 + 18) = 62.26%, while LCOV and Cobertura give lines only: 23 / 35 =
    // 65.71%.

    #[test]
    fn coverage_py_json_reads_percent_covered() {
        let c = read("coverage/coverage.json");
        assert_eq!(c.format, CoverageFormat::CoveragePyJson);
        assert_eq!(c.percent, 62.264150943396224);
        assert_eq!((c.covered, c.total), (Some(33), Some(53)));
    }

    #[test]
    fn lcov_sums_lh_over_lf() {
        let c = read("coverage/coverage.lcov");
        assert_eq!(c.format, CoverageFormat::Lcov);
        assert_eq!((c.covered, c.total), (Some(23), Some(35)));
        assert_eq!(c.percent, 100.0 * 23.0 / 35.0);
    }

    #[test]
    fn cobertura_prefers_line_counts_to_rounded_rate() {
        let c = read("coverage/cobertura.xml");
        assert_eq!(c.format, CoverageFormat::Cobertura);
        assert_eq!((c.covered, c.total), (Some(23), Some(35)));
        assert_eq!(c.percent, 100.0 * 23.0 / 35.0);
    }

    #[test]
    fn three_formats_of_one_run_agree_within_their_definitions() {
        let json = read("coverage/coverage.json");
        let lcov = read("coverage/coverage.lcov");
        let xml = read("coverage/cobertura.xml");
        // Lines: LCOV and Cobertura count the same lines.
        assert_eq!(lcov.percent, xml.percent);
        // JSON counts the same lines plus branches: removing the 10 of 18 branches from its
        // counts gives the line figure back.
        let (covered, total) = (json.covered.unwrap(), json.total.unwrap());
        assert_eq!((covered - 10, total - 18), (23, 35));
        assert!((json.percent - 100.0 * covered as f64 / total as f64).abs() < 1e-9);
        // And the line-rate attribute agrees with the counts to its four digits.
        assert!((xml.percent / 100.0 - 0.6571).abs() < 5e-5);
    }

    fn temp_with(content: &[u8]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report");
        std::fs::write(&path, content).unwrap();
        (dir, path)
    }

    fn read_text(content: &str) -> Result<Coverage, InputError> {
        let (_dir, path) = temp_with(content.as_bytes());
        read_coverage(&path)
    }

    #[test]
    fn lcov_without_summaries_counts_da_lines() {
        let c = read_text("SF:a.py\nDA:1,3\nDA:2,0\nDA:3,1,abcd\nend_of_record\n").unwrap();
        assert_eq!((c.covered, c.total), (Some(2), Some(3)));
    }

    #[test]
    fn lcov_counts_a_file_in_several_records_once() {
        // geninfo --test-name writes one record per test for the same file.
        let text = "TN:one\nSF:a.py\nDA:1,1\nDA:2,0\nLF:2\nLH:1\nend_of_record\n\
                    TN:two\nSF:a.py\nDA:1,0\nDA:2,4\nLF:2\nLH:1\nend_of_record\n\
                    SF:b.py\nLF:4\nLH:0\nend_of_record";
        let c = read_text(text).unwrap();
        assert_eq!((c.covered, c.total), (Some(2), Some(6)));
    }

    #[test]
    fn lcov_tolerates_unknown_records_and_crlf() {
        let c =
            read_text("TN:\r\nSF:a.py\r\nVER:2\r\nFNL:0,1,2\r\nLF:4\r\nLH:1\r\nend_of_record\r\n")
                .unwrap();
        assert_eq!(c.percent, 25.0);
    }

    #[test]
    fn cobertura_with_only_a_rate_and_reports_with_a_bom() {
        let c = read_text("<?xml version=\"1.0\"?><coverage line-rate=\"0.5\" version=\"1\"/>")
            .unwrap();
        assert_eq!((c.percent, c.covered, c.total), (50.0, None, None));
        let c = read_text("\u{feff}{\"totals\": {\"percent_covered\": 80}}").unwrap();
        assert_eq!(
            (c.format, c.percent),
            (CoverageFormat::CoveragePyJson, 80.0)
        );
        let c = read_text("\u{feff}<coverage lines-covered=\"1\" lines-valid=\"4\"/>").unwrap();
        assert_eq!((c.format, c.percent), (CoverageFormat::Cobertura, 25.0));
        let c = read_text("\u{feff}SF:a.py\nDA:1,0\nend_of_record\n").unwrap();
        assert_eq!((c.format, c.percent), (CoverageFormat::Lcov, 0.0));
    }

    #[test]
    fn bad_reports_give_errors_naming_file_and_place() {
        let cases: &[(&str, &[&str])] = &[
            (
                "bad/coverage/empty.txt",
                &[": empty file", "help: produce one with"],
            ),
            ("bad/coverage/whitespace-only.txt", &[": empty file"]),
            (
                "bad/coverage/truncated.json",
                &[":1:1500:", "truncated JSON"],
            ),
            (
                "bad/coverage/no-totals.json",
                &["`totals` is missing", "help:"],
            ),
            (
                "bad/coverage/no-percent.json",
                &["`totals.percent_covered` is missing"],
            ),
            (
                "bad/coverage/percent-150.json",
                &[":7:3:", "`totals.percent_covered` is 150, outside 0..=100"],
            ),
            (
                "bad/coverage/percent-string.json",
                &[":3:", "`totals.percent_covered` is not a number: \"62.26\""],
            ),
            (
                "bad/coverage/percent-nan.json",
                &[
                    ":5:",
                    "`percent_covered` is NaN, which is not a JSON number",
                ],
            ),
            (
                "bad/coverage/no-statements.json",
                &["report measures no lines"],
            ),
            ("bad/coverage/no-lines.lcov", &["report measures no lines"]),
            ("bad/coverage/no-lines.xml", &["report measures no lines"]),
            (
                "bad/coverage/garbage-line.lcov",
                &[":9: not an LCOV line", "`this is not lcov`"],
            ),
            (
                "bad/coverage/lh-exceeds-lf.lcov",
                &[":5: LH (3) exceeds LF (2)"],
            ),
            ("bad/coverage/non-utf8.lcov", &[":2:12: not UTF-8"]),
            (
                "bad/coverage/cobertura-no-rates.xml",
                &[":2:1:", "neither lines-covered/lines-valid nor line-rate"],
            ),
            (
                "bad/coverage/cobertura-rate-above-one.xml",
                &["outside 0..=1"],
            ),
            (
                "bad/coverage/cobertura-doctype.xml",
                &[":2:1:", "DOCTYPE is refused"],
            ),
            (
                "bad/coverage/junit-not-coverage.xml",
                &[
                    ":2:1:",
                    "not a coverage report",
                    "root is <testsuites>, not Cobertura's <coverage>",
                ],
            ),
            (
                "bad/coverage/binary.bin",
                &[
                    "not a coverage report: expected coverage.py JSON, LCOV or Cobertura XML",
                    "--cov-report=json:coverage.json",
                ],
            ),
            ("bad/coverage/term-report.txt", &["not a coverage report"]),
            (
                "bad/coverage/cut-short.lcov",
                &[
                    ":7: the record starting at line 7 has no end_of_record: the report is cut short",
                ],
            ),
            (
                // 680 bytes, all in the first 8 KiB: the position is a line and column.
                "bad/coverage/cut-short.xml",
                &[":13:1: the file ends before </coverage>: the report is cut short"],
            ),
            ("no/such/file.json", &[": file not found"]),
        ];
        for (rel, wanted) in cases {
            let shown = error(rel);
            for w in *wanted {
                assert!(shown.contains(w), "{rel}: {shown:?} lacks {w:?}");
            }
        }
    }

    #[test]
    fn no_panic_on_garbage_and_a_figure_only_from_a_sane_report() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report");
        let prefixes: [&[u8]; 5] = [b"", b"{", b"<", b"SF:", b"<coverage "];
        for i in 0..2000 {
            let len = (next() % 64) as usize;
            let mut bytes = prefixes[i % prefixes.len()].to_vec();
            // Mostly printable report characters, with some arbitrary bytes.
            const ALPHABET: &[u8] = b"{}[]<>\"=:,.-0123456789 \n\rSFDALHe_oftrcvg/&;!?\t";
            bytes.extend((0..len).map(|_| {
                let r = next();
                if r % 5 == 0 {
                    r as u8
                } else {
                    ALPHABET[(r >> 8) as usize % ALPHABET.len()]
                }
            }));
            std::fs::write(&path, &bytes).unwrap();
            if let Ok(c) = read_coverage(&path) {
                assert!((0.0..=100.0).contains(&c.percent), "{c:?} from {bytes:?}");
                if let (Some(covered), Some(total)) = (c.covered, c.total) {
                    assert!(covered <= total && total > 0, "{c:?} from {bytes:?}");
                }
            }
        }
    }

    /// Every cut of a real report short of its end is refused, except where the cut leaves a
    /// whole report by the format's own rules: LCOV after an `end_of_record` line (a
    /// tracefile has no end marker of its own; the figure is then that of the records
    /// before the cut).
    #[test]
    fn truncated_reports_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report");
        for rel in [
            "coverage/coverage.json",
            "coverage/coverage.lcov",
            "coverage/cobertura.xml",
        ] {
            let full = std::fs::read(data(rel)).unwrap();
            let end = full.trim_ascii_end().len();
            let mut accepted = 0;
            // Every cut of the LCOV report, every third of the XML, every 13th of the JSON
            // (whose totals come last, so that no cut can keep them).
            let step = match rel.rsplit('.').next() {
                Some("lcov") => 1,
                Some("xml") => 3,
                _ => 13,
            };
            for cut in (0..end).step_by(step) {
                let prefix = &full[..cut];
                std::fs::write(&path, prefix).unwrap();
                let result = read_coverage(&path);
                let whole = rel.ends_with(".lcov")
                    && cut > 0
                    && String::from_utf8_lossy(prefix)
                        .trim_end()
                        .ends_with("\nend_of_record");
                match result {
                    Ok(c) => {
                        assert!(whole, "{rel} cut at byte {cut} accepted: {c:?}");
                        accepted += 1;
                    }
                    Err(e) => assert!(!whole, "{rel} cut after a whole record: {e}"),
                }
            }
            // The LCOV report has three records: the first two end whole at two cuts each,
            // before and after the newline of their end_of_record.
            let expected = if rel.ends_with(".lcov") { 4 } else { 0 };
            assert_eq!(accepted, expected, "{rel}");
        }
    }
}
