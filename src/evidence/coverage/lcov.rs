//! LCOV tracefiles: records of `DA` lines with their `LF`/`LH` summaries, a source file in
//! several records counted once; a summary that contradicts its `DA` lines, or a record cut
//! short, is refused.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

use super::{Coverage, CoverageFormat, lcov_count, no_lines, shorten};
use crate::error::{InputError, Location};

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

pub(super) fn read_lcov(path: &Path, mut input: impl BufRead) -> Result<Coverage, InputError> {
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
        if let (Some((hit, _)), Some((found, _))) = (record.hit, record.found)
            && hit > found
        {
            return Err(at(format!(
                "LH ({hit}) exceeds LF ({found}) in the record starting at line {}",
                record.line
            )));
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
        contexts: None,
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

#[cfg(test)]
mod tests {
    use crate::error::Location;
    use crate::evidence::coverage::CoverageFormat;
    use crate::evidence::coverage::tests::{read, read_text};

    // The figures of tests/data/coverage/ were checked by hand: see `coverage/tests.rs`.

    #[test]
    fn lcov_sums_lh_over_lf() {
        let c = read("coverage/coverage.lcov");
        assert_eq!(c.format, CoverageFormat::Lcov);
        assert_eq!((c.covered, c.total), (Some(23), Some(35)));
        assert_eq!(c.percent, 100.0 * 23.0 / 35.0);
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
}
