//! Coverage report reader: coverage.py JSON, LCOV and Cobertura XML, detected by content.
//! It computes the overall figure from the report's line data and refuses a report whose own
//! totals contradict that data (a file is written by a process that runs the agent's code);
//! it does not judge the figure against a floor.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{BufRead, BufReader, Cursor, Read};
use std::path::Path;

use serde::Deserialize;

use crate::error::{InputError, Location, line_column};
use crate::evidence::position::locate;

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
        let input = BufReader::new(Cursor::new(head[bom..].to_vec()).chain(file));
        read_cobertura(path, bom as u64, input)
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
    files: Option<BTreeMap<String, PyFile>>,
}

#[derive(Deserialize)]
struct Totals {
    #[serde(default, deserialize_with = "percent_covered")]
    percent_covered: Option<f64>,
    covered_lines: Option<u64>,
    num_statements: Option<u64>,
    covered_branches: Option<u64>,
    num_branches: Option<u64>,
}

/// One file's entry: its line data, and the summary coverage.py computed from it.
#[derive(Deserialize)]
struct PyFile {
    executed_lines: Option<Vec<u64>>,
    missing_lines: Option<Vec<u64>>,
    /// Branch arcs (`[from, to]`); only counted.
    executed_branches: Option<Vec<serde::de::IgnoredAny>>,
    missing_branches: Option<Vec<serde::de::IgnoredAny>>,
    summary: Option<PySummary>,
}

#[derive(Deserialize)]
struct PySummary {
    covered_lines: Option<u64>,
    num_statements: Option<u64>,
    covered_branches: Option<u64>,
    num_branches: Option<u64>,
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

/// Statements and branches, executed and measured: what coverage.py's figure counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct PyCounts {
    covered_lines: u64,
    statements: u64,
    covered_branches: u64,
    branches: u64,
}

impl PyCounts {
    fn covered(&self) -> u64 {
        self.covered_lines + self.covered_branches
    }

    fn total(&self) -> u64 {
        self.statements + self.branches
    }

    /// coverage.py's `pc_covered`, computed the same way (100 for nothing measured).
    fn percent(&self) -> f64 {
        match self.total() {
            0 => 100.0,
            total => 100.0 * self.covered() as f64 / total as f64,
        }
    }

    fn checked_add(self, other: PyCounts) -> Option<PyCounts> {
        Some(PyCounts {
            covered_lines: self.covered_lines.checked_add(other.covered_lines)?,
            statements: self.statements.checked_add(other.statements)?,
            covered_branches: self.covered_branches.checked_add(other.covered_branches)?,
            branches: self.branches.checked_add(other.branches)?,
        })
    }
}

/// Rounding slack between a percentage coverage.py wrote and the one computed here from the
/// same counts (the same arithmetic, so in practice none).
const PERCENT_SLACK: f64 = 1e-6;

fn read_coverage_py(path: &Path, text: &[u8]) -> Result<Coverage, InputError> {
    let report: CoveragePy =
        serde_json::from_slice(text).map_err(|e| json_error(path, text, &e))?;
    let hint = "coverage.py writes it with `coverage json` or \
                `pytest --cov=src --cov-report=json:coverage.json`";
    let forged = "coverage.py computes its figures from the line data in the same file, so \
                  they always agree: regenerate the report rather than editing it";
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
    let Some(files) = report.files else {
        let start = text
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .unwrap_or(0);
        return Err(InputError::new(
            path,
            "`files` is missing: the report has totals but not the line data they are computed from",
        )
        .at(position(text, start))
        .with_hint(hint));
    };

    // The figure is computed from each file's line lists; every summary and the totals must
    // agree with them.
    let mut sum = PyCounts::default();
    for (name, file) in &files {
        let at = |message: String| {
            let shown = format!("`{}`: {message}", shorten(name));
            let err = InputError::new(path, shown).with_hint(forged);
            match key_position(text, name) {
                Some(location) => err.at(location),
                None => err,
            }
        };
        let (Some(executed), Some(missing)) = (&file.executed_lines, &file.missing_lines) else {
            return Err(at(
                "no `executed_lines` and `missing_lines`: the line data is missing".to_string(),
            ));
        };
        let mut lines: Vec<u64> = executed.iter().chain(missing).copied().collect();
        lines.sort_unstable();
        if let Some(twice) = lines.windows(2).find(|w| w[0] == w[1]) {
            return Err(at(format!(
                "line {} is listed twice in `executed_lines` and `missing_lines`",
                twice[0]
            )));
        }
        let summary = file.summary.as_ref();
        let listed = |l: &Option<Vec<serde::de::IgnoredAny>>| l.as_ref().map(|l| l.len() as u64);
        let (covered_branches, branches) = match (
            listed(&file.executed_branches),
            listed(&file.missing_branches),
        ) {
            (Some(executed), Some(missing)) => (
                executed,
                executed
                    .checked_add(missing)
                    .ok_or_else(|| at("the branch counts overflow".to_string()))?,
            ),
            // Without branch lists (older coverage.py) the summary's counts are all there is.
            _ => (
                summary.and_then(|s| s.covered_branches).unwrap_or(0),
                summary.and_then(|s| s.num_branches).unwrap_or(0),
            ),
        };
        if covered_branches > branches {
            return Err(at(format!(
                "{covered_branches} covered branches of {branches}"
            )));
        }
        let counts = PyCounts {
            covered_lines: executed.len() as u64,
            statements: lines.len() as u64,
            covered_branches,
            branches,
        };
        if let Some(summary) = summary {
            for (what, claimed, listed, list) in [
                (
                    "covered lines",
                    summary.covered_lines,
                    counts.covered_lines,
                    "`executed_lines` lists",
                ),
                (
                    "statements",
                    summary.num_statements,
                    counts.statements,
                    "`executed_lines` and `missing_lines` list",
                ),
                (
                    "covered branches",
                    summary.covered_branches,
                    counts.covered_branches,
                    "`executed_branches` lists",
                ),
                (
                    "branches",
                    summary.num_branches,
                    counts.branches,
                    "`executed_branches` and `missing_branches` list",
                ),
            ] {
                if claimed.is_some_and(|claimed| claimed != listed) {
                    return Err(at(format!(
                        "its summary says {} {what}, but its {list} {listed}",
                        claimed.unwrap_or_default()
                    )));
                }
            }
        }
        sum = sum.checked_add(counts).ok_or_else(|| {
            InputError::new(path, "the line counts of the files overflow").with_hint(forged)
        })?;
    }

    let claimed = PyCounts {
        covered_lines: totals.covered_lines.unwrap_or(sum.covered_lines),
        statements: totals.num_statements.unwrap_or(sum.statements),
        covered_branches: totals.covered_branches.unwrap_or(sum.covered_branches),
        branches: totals.num_branches.unwrap_or(sum.branches),
    };
    if claimed != sum || (percent - sum.percent()).abs() > PERCENT_SLACK {
        let counted = |c: &PyCounts| {
            format!(
                "{} of {} statements{}",
                c.covered(),
                c.total(),
                if c.branches > 0 { " and branches" } else { "" }
            )
        };
        let err = InputError::new(
            path,
            format!(
                "`totals` says {}% ({}), but the files' lines give {}% ({})",
                shown_percent(percent),
                counted(&claimed),
                shown_percent(sum.percent()),
                counted(&sum)
            ),
        )
        .with_hint(forged);
        return Err(match key_position(text, "totals") {
            Some(location) => err.at(location),
            None => err,
        });
    }
    // coverage.py reports 100% for a run that measured nothing (`--cov` naming the wrong
    // package); that is no evidence.
    if sum.statements == 0 {
        return Err(no_lines(path));
    }
    Ok(Coverage {
        format: CoverageFormat::CoveragePyJson,
        percent: sum.percent(),
        covered: Some(sum.covered()),
        total: Some(sum.total()),
    })
}

/// `62.26` for a figure, `90` for a whole one.
fn shown_percent(percent: f64) -> String {
    if percent.fract() == 0.0 {
        format!("{percent:.0}")
    } else {
        format!("{percent:.2}")
    }
}

/// The line and column of byte `offset` of `text`.
fn position(text: &[u8], offset: usize) -> Location {
    let (line, column) = line_column(text, offset);
    Location::LineColumn(line, column)
}

/// Where the object key `key` is written in `text` (its opening quote), for messages: the
/// first occurrence of the key as JSON writes it, followed by a colon.
fn key_position(text: &[u8], key: &str) -> Option<Location> {
    let quoted = serde_json::to_string(key).ok()?;
    let mut from = 0;
    while let Some(i) = memchr::memmem::find(&text[from..], quoted.as_bytes()) {
        let at = from + i;
        let after = text[at + quoted.len()..].trim_ascii_start();
        if after.starts_with(b":") {
            return Some(position(text, at));
        }
        from = at + 1;
    }
    None
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
    /// `LF` and `LH` with the lines they are on.
    found: Option<(u64, u64)>,
    hit: Option<(u64, u64)>,
    /// `DA:` lines as (line number, executed).
    lines: Vec<(u64, bool)>,
}

impl Record {
    /// (hit, found): from its `DA` lines, or its `LH`/`LF` summary when it has none.
    fn counts(&self) -> (u64, u64) {
        match (self.lines.is_empty(), self.hit, self.found) {
            (true, Some((hit, _)), Some((found, _))) => (hit, found),
            _ => distinct_lines(&self.lines),
        }
    }

    /// A summary that contradicts the record's own `DA` lines.
    fn check(&self, path: &Path) -> Result<(), InputError> {
        if self.lines.is_empty() {
            return Ok(());
        }
        let (hit, found) = distinct_lines(&self.lines);
        let contradiction = |line: u64, message: String| {
            InputError::new(path, message)
                .at(Location::Line(line))
                .with_hint(LCOV_FORGED)
        };
        if let Some((lf, line)) = self.found.filter(|&(lf, _)| lf != found) {
            return Err(contradiction(
                line,
                format!("LF ({lf}) contradicts the record's DA lines: {found} lines"),
            ));
        }
        if let Some((lh, line)) = self.hit.filter(|&(lh, _)| lh != hit) {
            return Err(contradiction(
                line,
                format!("LH ({lh}) contradicts the record's DA lines: {hit} of {found} executed"),
            ));
        }
        Ok(())
    }
}

const LCOV_FORGED: &str = "LCOV writers count LF and LH from the record's DA lines, so they \
     always agree: regenerate the report rather than editing it";

/// (executed, measured) over distinct line numbers.
fn distinct_lines(lines: &[(u64, bool)]) -> (u64, u64) {
    let mut by_line: HashMap<u64, bool> = HashMap::with_capacity(lines.len());
    for &(line, executed) in lines {
        *by_line.entry(line).or_default() |= executed;
    }
    let hit = by_line.values().filter(|&&executed| executed).count() as u64;
    (hit, by_line.len() as u64)
}

/// A count in an LCOV field: a non-negative integer that fits 64 bits.
fn lcov_count(what: &str, value: &str) -> Result<u64, String> {
    let value = value.trim();
    match value.parse::<u64>() {
        Ok(count) => Ok(count),
        Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => {
            Err(format!("{what} `{}` overflows", shorten(value)))
        }
        Err(_) => match value.strip_prefix('-').map(|digits| digits.parse::<u64>()) {
            Some(Ok(_)) => Err(format!("negative {what} `{}`", shorten(value))),
            Some(Err(e)) if *e.kind() == std::num::IntErrorKind::PosOverflow => {
                Err(format!("negative {what} `{}`", shorten(value)))
            }
            _ => {
                let article = if what.starts_with(['a', 'e', 'i', 'o', 'u']) {
                    "an"
                } else {
                    "a"
                };
                Err(format!(
                    "expected {article} {what}, found `{}`",
                    shorten(value)
                ))
            }
        },
    }
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
            done.check(path)?;
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
        match key {
            "SF" => record.source = Some(value.to_string()),
            "LF" => {
                let count = lcov_count("count", value).map_err(|m| at(format!("LF: {m}")))?;
                record.found = Some((count, number));
            }
            "LH" => {
                let count = lcov_count("count", value).map_err(|m| at(format!("LH: {m}")))?;
                record.hit = Some((count, number));
            }
            "DA" => {
                // DA:<line>,<execution count>[,<checksum>]
                let mut fields = value.split(',');
                let line = fields.next().and_then(|f| f.trim().parse::<u64>().ok());
                let (Some(line), Some(hits)) = (line, fields.next()) else {
                    return Err(at(format!(
                        "DA: expected `line,count`, found `{}`",
                        shorten(value)
                    )));
                };
                let hits =
                    lcov_count("execution count", hits).map_err(|m| at(format!("DA: {m}")))?;
                record.lines.push((line, hits > 0));
            }
            // LCOV has many more record types (TN, FN, FNDA, BRDA, VER, ...); none of them
            // change the line figure.
            _ => {}
        }
        if let (Some((hit, _)), Some((found, _))) = (record.hit, record.found) {
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
        // (What it says is checked first: a contradiction is the more precise error.)
        record.check(path)?;
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

/// Sum of (hit, found) over the report's source files, in the order they first appear. A file
/// that appears in more than one record (one per test name, as `geninfo --test-name` writes)
/// is counted once: its `DA` lines are merged, a line counting as hit when any record hit it.
fn lcov_totals(path: &Path, records: &[Record]) -> Result<(u64, u64), InputError> {
    let mut order: Vec<Vec<&Record>> = Vec::new();
    let mut by_source: HashMap<&str, usize> = HashMap::new();
    for record in records {
        match &record.source {
            Some(source) => match by_source.get(source.as_str()) {
                Some(&i) => order[i].push(record),
                None => {
                    by_source.insert(source, order.len());
                    order.push(vec![record]);
                }
            },
            None => order.push(vec![record]),
        }
    }
    let mut totals = (0u64, 0u64);
    for group in order {
        let counts = match group.as_slice() {
            [one] => one.counts(),
            many => {
                if let Some(bare) = many.iter().find(|r| r.lines.is_empty()) {
                    return Err(InputError::new(
                        path,
                        format!(
                            "`{}` has several records but the one at line {} has no DA lines \
                             to merge",
                            shorten(many[0].source.as_deref().unwrap_or_default()),
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
        let line = group[0].line;
        totals = totals
            .0
            .checked_add(counts.0)
            .zip(totals.1.checked_add(counts.1))
            .ok_or_else(|| {
                InputError::new(
                    path,
                    format!("the line counts overflow with the record at line {line}"),
                )
                .at(Location::Line(line))
                .with_hint(LCOV_FORGED)
            })?;
    }
    Ok(totals)
}

fn is_lcov_key(key: &str) -> bool {
    key.starts_with(|c: char| c.is_ascii_uppercase())
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

// ---------------------------------------------------------------------------------------
// Cobertura XML

/// What the root `<coverage>` element claims, checked for form but not yet against the lines.
struct CoberturaClaims {
    /// `lines-covered` and `lines-valid`, when both are given.
    counts: Option<(u64, u64)>,
    line_rate: Option<f64>,
    /// The attributes as written, for messages.
    attrs: HashMap<String, String>,
}

/// How far a `line-rate` may stray from the rate of the counts it rounds: coverage.py writes
/// four significant digits, istanbul and gcovr four decimals.
const RATE_SLACK: f64 = 5e-4;

const COBERTURA_FORGED: &str = "Cobertura writers compute the root's totals from the <line> \
     records of the same file, so they always agree: regenerate the report rather than editing it";

/// Which element of a Cobertura report is open, as far as counting lines goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum CoberturaTag {
    Class,
    Lines,
    Other,
}

/// Reads Cobertura XML from `input` (the file after its byte order mark, `bom` bytes long):
/// the root `<coverage>` element's totals, then the `<line>` records of every `<class>` (not
/// the copies under its `<methods>`). The figure is computed from the lines, and the totals
/// must agree with them. quick-xml never expands DTD entities, and a DOCTYPE is refused.
fn read_cobertura(path: &Path, bom: u64, input: impl BufRead) -> Result<Coverage, InputError> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_reader(input);
    let mut buf = Vec::new();
    // quick-xml counts offsets from after a byte order mark.
    let at = |offset: u64, message: String| {
        let location = locate(path, &[offset + bom])[0];
        InputError::new(path, message).at(location)
    };
    let mut root_at = None;
    let mut claims = None;
    let mut stack: Vec<CoberturaTag> = Vec::new();
    let mut files: HashMap<String, u32> = HashMap::new();
    let mut file = 0u32;
    // (file, line number) to whether any record of the line hit it.
    let mut lines: HashMap<(u32, u64), bool> = HashMap::new();
    loop {
        buf.clear();
        // Whitespace between prolog items arrives as text events, so this is where the next
        // markup starts.
        let start = reader.buffer_position();
        let event = match reader.read_event_into(&mut buf) {
            Ok(event) => event,
            Err(e) => {
                return Err(at(reader.error_position(), format!("malformed XML: {e}")));
            }
        };
        let (element, empty) = match event {
            Event::Start(e) => (e, false),
            Event::Empty(e) => (e, true),
            Event::End(_) => {
                stack.pop();
                continue;
            }
            Event::DocType(_) => {
                return Err(at(
                    start,
                    "XML with a DOCTYPE is refused: coverage reports need no DTD or entities"
                        .to_string(),
                ));
            }
            Event::Eof => break,
            _ => continue,
        };
        let name = element.name();
        let name = name.as_ref();
        let Some(_) = claims else {
            if name != "coverage" {
                return Err(at(
                    start,
                    format!(
                        "not a coverage report: the XML root is <{}>, not Cobertura's <coverage>",
                        shorten(name)
                    ),
                )
                .with_hint(PRODUCE_HINT));
            }
            root_at = Some(start);
            claims = Some(
                cobertura_claims(path, &element)
                    .map_err(|e| e.at(locate(path, &[start + bom])[0]))?,
            );
            if !empty {
                stack.push(CoberturaTag::Other);
            }
            continue;
        };
        let tag = match name {
            "class" => {
                let filename = cobertura_attr(&element, "filename")
                    .or_else(|| cobertura_attr(&element, "name"))
                    .unwrap_or_default();
                let next = files.len() as u32;
                file = *files.entry(filename).or_insert(next);
                CoberturaTag::Class
            }
            "lines" => CoberturaTag::Lines,
            "line" => {
                let in_class = matches!(
                    stack.as_slice(),
                    [.., CoberturaTag::Class, CoberturaTag::Lines]
                );
                if in_class {
                    let field = |key: &str| {
                        let value = cobertura_attr(&element, key)
                            .ok_or_else(|| at(start, format!("<line> has no `{key}`")))?;
                        lcov_count("count", &value).map_err(|m| {
                            at(start, format!("<line {key}=\"{}\">: {m}", shorten(&value)))
                        })
                    };
                    let number = field("number")?;
                    let hits = field("hits")?;
                    *lines.entry((file, number)).or_default() |= hits > 0;
                }
                CoberturaTag::Other
            }
            _ => CoberturaTag::Other,
        };
        if !empty {
            stack.push(tag);
        }
    }
    let (Some(claims), Some(root_at)) = (claims, root_at) else {
        return Err(InputError::new(path, "XML without a root element").with_hint(PRODUCE_HINT));
    };
    let valid = lines.len() as u64;
    let hit = lines.values().filter(|&&hit| hit).count() as u64;
    let contradiction = |message: String| at(root_at, message).with_hint(COBERTURA_FORGED);
    let claimed = |keys: &[&str]| {
        keys.iter()
            .filter_map(|k| {
                claims
                    .attrs
                    .get(*k)
                    .map(|v| format!("{k}=\"{}\"", shorten(v)))
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    if valid == 0 {
        if claims.counts.is_some_and(|(_, valid)| valid == 0) {
            return Err(no_lines(path));
        }
        return Err(contradiction(format!(
            "<coverage {}> but the report holds no <line> records to compute it from",
            claimed(&["lines-covered", "lines-valid", "line-rate"])
        )));
    }
    if claims.counts.is_some_and(|counts| counts != (hit, valid)) {
        return Err(contradiction(format!(
            "<coverage {}> contradicts its <line> records: {hit} of {valid} lines hit",
            claimed(&["lines-covered", "lines-valid"])
        )));
    }
    let rate = hit as f64 / valid as f64;
    if claims
        .line_rate
        .is_some_and(|claimed| (claimed - rate).abs() > RATE_SLACK)
    {
        return Err(contradiction(format!(
            "<coverage {}> contradicts its <line> records: {hit} of {valid} lines hit ({rate:.4})",
            claimed(&["line-rate"])
        )));
    }
    Ok(Coverage {
        format: CoverageFormat::Cobertura,
        percent: 100.0 * rate,
        covered: Some(hit),
        total: Some(valid),
    })
}

/// Attribute `key` of `element`, unescaped; `None` when absent or malformed.
fn cobertura_attr(element: &quick_xml::events::BytesStart<'_>, key: &str) -> Option<String> {
    let attribute = element.try_get_attribute(key).ok().flatten()?;
    let value = attribute
        .normalized_value(quick_xml::XmlVersion::Implicit1_0)
        .ok()?;
    Some(value.trim().to_string())
}

/// The root's totals, checked for form: numbers, a rate in 0..=1, covered within valid, and at
/// least one of the two.
fn cobertura_claims(
    path: &Path,
    root: &quick_xml::events::BytesStart<'_>,
) -> Result<CoberturaClaims, InputError> {
    let mut attrs: HashMap<String, String> = HashMap::new();
    for attr in root.attributes() {
        let attr =
            attr.map_err(|e| InputError::new(path, format!("malformed XML attribute: {e}")))?;
        let key = attr.key.as_ref().to_string();
        if matches!(key.as_str(), "lines-covered" | "lines-valid" | "line-rate") {
            let value = attr
                .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                .map_err(|e| InputError::new(path, format!("<coverage {key}>: {e}")))?;
            attrs.insert(key, value.trim().to_string());
        }
    }
    let count = |key: &str| -> Result<Option<u64>, InputError> {
        match attrs.get(key) {
            None => Ok(None),
            Some(v) => lcov_count("count", v).map(Some).map_err(|m| {
                InputError::new(path, format!("<coverage {key}=\"{}\">: {m}", shorten(v)))
            }),
        }
    };
    let counts = match (count("lines-covered")?, count("lines-valid")?) {
        (Some(covered), Some(valid)) if covered > valid => {
            return Err(InputError::new(
                path,
                format!("<coverage>: lines-covered ({covered}) exceeds lines-valid ({valid})"),
            ));
        }
        (Some(covered), Some(valid)) => Some((covered, valid)),
        _ => None,
    };
    let line_rate = match attrs.get("line-rate") {
        None => None,
        Some(v) => match v.parse::<f64>() {
            Ok(rate) if rate.is_finite() && (0.0..=1.0).contains(&rate) => Some(rate),
            Ok(rate) if rate.is_finite() && rate > 1.0 => {
                return Err(InputError::new(
                    path,
                    format!("<coverage line-rate=\"{rate}\">: outside 0..=1"),
                ));
            }
            _ => {
                return Err(InputError::new(
                    path,
                    format!("<coverage line-rate=\"{}\">: not a number", shorten(v)),
                ));
            }
        },
    };
    if counts.is_none() && line_rate.is_none() {
        return Err(InputError::new(
            path,
            "<coverage> has neither lines-covered/lines-valid nor line-rate",
        )
        .with_hint(PRODUCE_HINT));
    }
    Ok(CoberturaClaims {
        counts,
        line_rate,
        attrs,
    })
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

    /// A minimal coverage.py JSON report of one file: `executed` of `executed + missing`
    /// lines, with `totals` as given.
    fn py_json(executed: &[u64], missing: &[u64], totals: &str) -> String {
        format!(
            r#"{{"files": {{"a.py": {{"executed_lines": {executed:?}, "missing_lines": {missing:?},
               "summary": {{"covered_lines": {}, "num_statements": {}}}}}}}, "totals": {totals}}}"#,
            executed.len(),
            executed.len() + missing.len()
        )
    }

    #[test]
    fn coverage_py_json_figure_comes_from_the_line_lists() {
        let c = read_text(&py_json(
            &[1, 2, 3],
            &[4],
            r#"{"covered_lines": 3, "num_statements": 4, "percent_covered": 75.0}"#,
        ))
        .unwrap();
        assert_eq!((c.percent, c.covered, c.total), (75.0, Some(3), Some(4)));
        // Totals without counts are held to the percentage alone.
        let c = read_text(&py_json(&[1], &[2, 3, 4], r#"{"percent_covered": 25.0}"#)).unwrap();
        assert_eq!(c.percent, 25.0);
        for (executed, missing, totals, wanted) in [
            (
                &[1u64, 2, 3][..],
                &[4u64][..],
                r#"{"percent_covered": 80.0}"#,
                "`totals` says 80% (3 of 4 statements), but the files' lines give 75% (3 of 4 statements)",
            ),
            (
                &[1, 2, 3],
                &[4],
                r#"{"covered_lines": 4, "num_statements": 4, "percent_covered": 75.0}"#,
                "`totals` says 75% (4 of 4 statements), but the files' lines give 75% (3 of 4 statements)",
            ),
            (
                &[1, 2, 2],
                &[4],
                r#"{"percent_covered": 75.0}"#,
                "line 2 is listed twice",
            ),
            (
                &[1, 2, 3],
                &[3],
                r#"{"percent_covered": 75.0}"#,
                "line 3 is listed twice",
            ),
        ] {
            let err = read_text(&py_json(executed, missing, totals)).unwrap_err();
            assert!(err.message.contains(wanted), "{err}");
            assert!(err.location.is_some(), "{err}");
        }
        // A negative line number is no line.
        let err = read_text(
            r#"{"files": {"a.py": {"executed_lines": [-1], "missing_lines": []}}, "totals": {"percent_covered": 100}}"#,
        )
        .unwrap_err();
        assert!(err.location.is_some(), "{err}");
    }

    #[test]
    fn coverage_py_json_without_branch_lists_takes_the_summarys_branches() {
        // Older coverage.py wrote branch counts in the summary only.
        let text = r#"{"files": {"a.py": {"executed_lines": [1, 2], "missing_lines": [3],
            "summary": {"covered_lines": 2, "num_statements": 3, "covered_branches": 1, "num_branches": 2}}},
            "totals": {"covered_lines": 2, "num_statements": 3, "covered_branches": 1, "num_branches": 2,
            "percent_covered": 60.0}}"#;
        let c = read_text(text).unwrap();
        assert_eq!((c.covered, c.total), (Some(3), Some(5)));
    }

    #[test]
    fn lcov_da_lines_beat_summaries_that_contradict_them() {
        let err = read_text("SF:a.py\nDA:1,1\nDA:2,0\nLF:2\nLH:2\nend_of_record\n").unwrap_err();
        assert_eq!(
            err.message,
            "LH (2) contradicts the record's DA lines: 1 of 2 executed"
        );
        assert_eq!(err.location, Some(Location::Line(5)));
        // A record cut off before end_of_record is checked too.
        let err = read_text("SF:a.py\nDA:1,1\nLF:3\n").unwrap_err();
        assert_eq!(
            err.message,
            "LF (3) contradicts the record's DA lines: 1 lines"
        );
        for (da, wanted) in [
            ("DA:1,-1", "DA: negative execution count `-1`"),
            (
                "DA:1,-99999999999999999999999",
                "DA: negative execution count",
            ),
            (
                "DA:1,99999999999999999999",
                "DA: execution count `99999999999999999999` overflows",
            ),
            ("DA:1,many", "DA: expected an execution count, found `many`"),
            ("DA:1", "DA: expected `line,count`"),
        ] {
            let err = read_text(&format!("SF:a.py\n{da}\nend_of_record\n")).unwrap_err();
            assert!(err.message.starts_with(wanted), "{da}: {err}");
            assert_eq!(err.location, Some(Location::Line(2)), "{da}");
        }
        let err = read_text("SF:a.py\nLF:-3\nend_of_record\n").unwrap_err();
        assert_eq!(err.message, "LF: negative count `-3`");
    }

    #[test]
    fn cobertura_counts_class_lines_not_their_method_copies() {
        // Java's Cobertura repeats each method's lines under <methods>, and writes conditions
        // inside a <line>; a file split into classes (inner classes) counts each line once.
        let text = r#"<?xml version="1.0"?>
<coverage lines-covered="2" lines-valid="3" line-rate="0.6667">
  <packages><package name="p"><classes>
    <class name="A" filename="A.java">
      <methods><method name="m"><lines><line number="1" hits="5"/><line number="9" hits="0"/></lines></method></methods>
      <lines>
        <line number="1" hits="5" branch="true"><conditions><condition number="0" type="jump" coverage="50%"/></conditions></line>
        <line number="2" hits="0"/>
      </lines>
    </class>
    <class name="A$Inner" filename="A.java"><lines><line number="3" hits="1"/></lines></class>
  </classes></package></packages>
</coverage>"#;
        let c = read_text(text).unwrap();
        assert_eq!((c.covered, c.total), (Some(2), Some(3)));
        // A rate within rounding of the counts is the same figure; beyond it, a contradiction.
        assert!(read_text(&text.replace("0.6667", "0.667")).is_ok());
        let err = read_text(&text.replace("0.6667", "0.6")).unwrap_err();
        assert_eq!(
            err.message,
            "<coverage line-rate=\"0.6\"> contradicts its <line> records: 2 of 3 lines hit (0.6667)"
        );
        assert_eq!(err.location, Some(Location::LineColumn(2, 1)));
        let err = read_text(&text.replace(r#"number="2" hits="0""#, r#"number="2""#)).unwrap_err();
        assert_eq!(err.message, "<line> has no `hits`");
        assert_eq!(err.location, Some(Location::LineColumn(8, 9)));
    }

    #[test]
    fn reports_with_a_bom_and_positions_past_it() {
        let c = read_text("\u{feff}{\"files\": {\"a.py\": {\"executed_lines\": [1], \"missing_lines\": []}}, \"totals\": {\"percent_covered\": 100}}")
            .unwrap();
        assert_eq!(
            (c.format, c.percent),
            (CoverageFormat::CoveragePyJson, 100.0)
        );
        let c = read_text(
            "\u{feff}<coverage lines-covered=\"1\" lines-valid=\"4\"><packages><package><classes><class filename=\"a\"><lines>\
             <line number=\"1\" hits=\"1\"/><line number=\"2\" hits=\"0\"/><line number=\"3\" hits=\"0\"/><line number=\"4\" hits=\"0\"/>\
             </lines></class></classes></package></packages></coverage>",
        )
        .unwrap();
        assert_eq!((c.format, c.percent), (CoverageFormat::Cobertura, 25.0));
        // Columns count bytes, the mark's three included.
        let err = read_text("\u{feff}<coverage line-rate=\"0.5\"/>").unwrap_err();
        assert!(err.message.contains("no <line> records"), "{err}");
        assert_eq!(err.location, Some(Location::LineColumn(1, 4)));
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
    fn no_panic_on_garbage_or_truncated_reports() {
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
            let _ = read_coverage(&path);
        }
        for rel in [
            "coverage/coverage.json",
            "coverage/coverage.lcov",
            "coverage/cobertura.xml",
        ] {
            let full = std::fs::read(data(rel)).unwrap();
            for cut in (0..full.len()).step_by(13) {
                std::fs::write(&path, &full[..cut]).unwrap();
                let _ = read_coverage(&path);
            }
        }
    }
}
