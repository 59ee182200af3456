//! coverage.py JSON: the figure is computed from each file's `executed_lines` and
//! `missing_lines` (and branch lists), and every file summary and the totals must agree with
//! them. With `--show-contexts`, each executed line's contexts (the tests that ran it) are
//! read too. Positions in messages come from serde_json or from where a key is written.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::{Contexts, Coverage, CoverageFormat, no_lines, shorten};
use crate::error::{InputError, Location, line_column};

#[derive(Deserialize)]
struct CoveragePy {
    meta: Option<Meta>,
    totals: Option<Totals>,
    files: Option<BTreeMap<String, PyFile>>,
}

#[derive(Deserialize)]
struct Meta {
    /// Written by `coverage json --show-contexts` (or `[json] show_contexts`).
    show_contexts: Option<bool>,
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
    /// Lines `exclude_lines`/`# pragma: no cover` leave out; coverage.py still records the
    /// tests that ran them.
    excluded_lines: Option<Vec<u64>>,
    /// Branch arcs (`[from, to]`); only counted.
    executed_branches: Option<Vec<serde::de::IgnoredAny>>,
    missing_branches: Option<Vec<serde::de::IgnoredAny>>,
    summary: Option<PySummary>,
    /// With `--show-contexts`: line number (as a string) to the contexts that ran it. It may
    /// name lines that are not statements (coverage.py records what ran); only executed
    /// lines are read.
    contexts: Option<BTreeMap<String, Vec<String>>>,
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

/// The hint for figures that disagree with the line data they are computed from.
const FORGED: &str = "coverage.py computes its figures from the line data in the same file, so \
                      they always agree: regenerate the report rather than editing it";

pub(super) fn read_coverage_py(path: &Path, text: &[u8]) -> Result<Coverage, InputError> {
    let report: CoveragePy =
        serde_json::from_slice(text).map_err(|e| json_error(path, text, &e))?;
    let hint = "coverage.py writes it with `coverage json` or \
                `pytest --cov=src --cov-report=json:coverage.json`";
    let forged = FORGED;
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
    let with_contexts = report.meta.and_then(|m| m.show_contexts) == Some(true)
        || files.values().any(|f| f.contexts.is_some());
    let mut contexts = ContextsBuilder::default();
    for (name, file) in &files {
        let (counts, lines) = file_counts(path, text, name, file)?;
        if with_contexts {
            let excluded = file.excluded_lines.as_deref().unwrap_or_default();
            let executed = file.executed_lines.as_deref().unwrap_or_default();
            contexts.add(executed, &lines, excluded, file.contexts.as_ref());
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
        contexts: with_contexts.then(|| contexts.finish(sum.statements, sum.branches)),
    })
}

/// One file's counts from its line lists, and its lines (executed and missing, sorted); its
/// summary, where it has one, must agree with them (`forged` otherwise).
fn file_counts(
    path: &Path,
    text: &[u8],
    name: &str,
    file: &PyFile,
) -> Result<(PyCounts, Vec<u64>), InputError> {
    let forged = FORGED;
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
    Ok((counts, lines))
}

/// The contexts of every executed line, each distinct context name kept once.
#[derive(Default)]
struct ContextsBuilder {
    names: Vec<String>,
    index: std::collections::HashMap<String, u32>,
    lines: Vec<Vec<u32>>,
}

impl ContextsBuilder {
    /// The executed lines of one file, with the file's `contexts` map. `statements` is every
    /// statement line, executed or missing, sorted. A statement that spans lines is one line
    /// to coverage.py's counts (its first) while the tests that ran it are recorded on the
    /// lines that ran (a multi-line `if (` is executed on its first line, its contexts are
    /// on the conditions below): the contexts of a statement are those of its first line and
    /// of the lines right after it that ran, up to the first that is a statement, is
    /// excluded (`excluded`, whose tests coverage.py records too) or has no record (a blank
    /// line, a closing bracket): a test that ran a later method must not count for it.
    fn add(
        &mut self,
        executed: &[u64],
        statements: &[u64],
        excluded: &[u64],
        by_line: Option<&BTreeMap<String, Vec<String>>>,
    ) {
        let recorded: BTreeMap<u64, &Vec<String>> = by_line
            .into_iter()
            .flatten()
            .filter_map(|(line, names)| Some((line.parse::<u64>().ok()?, names)))
            .collect();
        for &line in executed {
            let next = statements
                .get(statements.partition_point(|&s| s <= line))
                .copied()
                .unwrap_or(u64::MAX);
            // The run of consecutive recorded lines from the statement's own.
            let mut end = line + 1;
            while end < next && !excluded.contains(&end) && recorded.contains_key(&end) {
                end += 1;
            }
            let mut ids: Vec<u32> = Vec::new();
            for names in recorded.range(line..end).map(|(_, names)| names) {
                for n in names.iter() {
                    let id = match self.index.get(n) {
                        Some(&i) => i,
                        None => {
                            let i = self.names.len() as u32;
                            self.names.push(n.clone());
                            self.index.insert(n.clone(), i);
                            i
                        }
                    };
                    ids.push(id);
                }
            }
            // A context on the first line and on a continuation line is one context.
            if end > line + 1 {
                ids.sort_unstable();
                ids.dedup();
            }
            self.lines.push(ids);
        }
    }

    fn finish(self, statements: u64, branches: u64) -> Contexts {
        Contexts {
            names: self.names,
            lines: self.lines,
            statements,
            branches,
        }
    }
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

#[cfg(test)]
mod tests {
    use crate::evidence::coverage::CoverageFormat;
    use crate::evidence::coverage::tests::{read, read_text};

    // The figures of tests/data/coverage/ were checked by hand: see `coverage/tests.rs`.

    #[test]
    fn coverage_py_json_reads_percent_covered() {
        let c = read("coverage/coverage.json");
        assert_eq!(c.format, CoverageFormat::CoveragePyJson);
        assert_eq!(c.percent, 62.264150943396224);
        assert_eq!((c.covered, c.total), (Some(33), Some(53)));
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
    fn a_statement_over_several_lines_has_the_contexts_of_its_lines() {
        // As coverage.py 7 writes a six-line `if (` (checked with pytest-cov): the statement
        // is executed on line 2, its contexts are on lines 3 and 4. Read per line alone,
        // line 2 had no test and proven coverage was 75%, not the 100% a deselected run gives.
        let text = r#"{"meta": {"show_contexts": true},
            "files": {"m.py": {"executed_lines": [1, 2, 6, 7], "missing_lines": [9],
                "contexts": {"1": [""], "3": ["t.py::test_a|run"], "4": ["t.py::test_a|run", "t.py::test_b|run"],
                    "6": ["t.py::test_a|run"], "7": ["t.py::test_b|run"], "8": ["t.py::test_c|run"]},
                "summary": {"covered_lines": 4, "num_statements": 5}}},
            "totals": {"covered_lines": 4, "num_statements": 5, "percent_covered": 80.0}}"#;
        let c = read_text(text).unwrap();
        let contexts = c.contexts.unwrap();
        let names = |line: usize| -> Vec<&str> {
            contexts.lines[line]
                .iter()
                .map(|&i| contexts.names[i as usize].as_str())
                .collect()
        };
        assert_eq!(names(0), [""]);
        assert_eq!(names(1), ["t.py::test_a|run", "t.py::test_b|run"]);
        assert_eq!(names(2), ["t.py::test_a|run"]);
        // Line 7's statement runs to the next statement (9): line 8 is part of it.
        assert_eq!(names(3), ["t.py::test_b|run", "t.py::test_c|run"]);
    }

    #[test]
    fn contexts_are_read_per_executed_line() {
        let text = r#"{"meta": {"show_contexts": true},
            "files": {"a.py": {"executed_lines": [1, 2, 3], "missing_lines": [4],
                "contexts": {"1": [""], "2": ["t.py::test_a|run", "t.py::test_b|run"],
                             "9": ["t.py::test_a|run"]}}},
            "totals": {"percent_covered": 75.0}}"#;
        let c = read_text(text).unwrap();
        let contexts = c.contexts.unwrap();
        assert_eq!(contexts.names, ["", "t.py::test_a|run", "t.py::test_b|run"]);
        // Line 3 ran under no context the report names; line 9 is no statement.
        assert_eq!(contexts.lines, [vec![0], vec![1, 2], vec![]]);
        assert_eq!((contexts.statements, contexts.branches), (4, 0));
        // Without `--show-contexts` there are none.
        let plain = read_text(&py_json(&[1, 2, 3], &[4], r#"{"percent_covered": 75.0}"#)).unwrap();
        assert!(plain.contexts.is_none());
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
}
