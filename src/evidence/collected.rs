//! Lists of collected test ids: `pytest --collect-only -q`, `cargo nextest list`,
//! `cargo test -- --list`, or one id per line.
//!
//! The form is told from the content. What is not an id (summaries, pytest's warnings
//! block, cargo's status lines) is skipped by name; any other line is an error, so a list
//! from a run that failed to collect is never taken for the whole suite.

use std::collections::HashSet;
use std::path::Path;

use serde::Deserialize;

use crate::error::{InputError, Location, line_column};

const FORMATS_HINT: &str = "give the output of `pytest --collect-only -q`, `cargo nextest list`, \
     `cargo test -- --list`, or one test id per line";

/// Reads the collected test ids at `path`, in file order, without duplicates.
pub fn read_collected(path: &Path) -> Result<Vec<String>, InputError> {
    let bytes = std::fs::read(path).map_err(|e| InputError::io(path, &e))?;
    if bytes.starts_with(b"\xFF\xFE") || bytes.starts_with(b"\xFE\xFF") {
        return Err(
            InputError::new(path, "UTF-16 text; expected UTF-8").with_hint(
                "Windows PowerShell's `>` writes UTF-16: pipe to `Out-File -Encoding utf8` instead",
            ),
        );
    }
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        let (line, column) = line_column(&bytes, e.valid_up_to());
        InputError::new(path, "not UTF-8 text").at(Location::LineColumn(line, column))
    })?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);

    let ids = if text.trim_start().starts_with('{') {
        nextest_json(path, text)?
    } else {
        // Every tool ends its output with a newline: a last line without one was cut short,
        // and is a test id cut short or a `(skipped)` mark lost.
        let last = text.rsplit('\n').next().unwrap_or_default();
        if !last.trim().is_empty() {
            return Err(InputError::new(
                path,
                format!(
                    "the last line (`{}`) has no newline at its end: the list is cut short",
                    shorten(last.trim())
                ),
            )
            .at(Location::Line(text.lines().count() as u64))
            .with_hint(
                "collect again and keep the whole output (a list written by hand ends with a newline too)",
            ));
        }
        let lines: Vec<(u64, &str)> = text
            .lines()
            .map(|l| l.trim_end_matches('\r'))
            .enumerate()
            .map(|(i, l)| (i as u64 + 1, l))
            .collect();
        match detect(&lines) {
            Form::CargoTest => cargo_test_list(path, &lines)?,
            Form::NextestHuman => nextest_human(path, &lines)?,
            Form::Ids => id_lines(path, &lines)?,
        }
    };

    let mut seen = HashSet::with_capacity(ids.len());
    let ids: Vec<String> = ids
        .into_iter()
        .filter(|id| seen.insert(id.clone()))
        .collect();
    if ids.is_empty() {
        return Err(InputError::new(path, "no collected test ids").with_hint(FORMATS_HINT));
    }
    Ok(ids)
}

/// The line-oriented forms. `Ids` covers `pytest --collect-only -q`, `cargo nextest list
/// --message-format oneline` (what `cargo nextest list` prints when piped) and plain lists:
/// all three are one id per line, around lines of their own that are skipped.
enum Form {
    CargoTest,
    NextestHuman,
    Ids,
}

fn detect(lines: &[(u64, &str)]) -> Form {
    let mut significant = lines
        .iter()
        .map(|&(_, l)| l)
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#') && !is_cargo_status(l));
    let Some(first) = significant.next() else {
        return Form::Ids;
    };
    if first.ends_with(": test") || first.ends_with(": benchmark") || is_cargo_summary(first) {
        return Form::CargoTest;
    }
    let header = !first.starts_with(char::is_whitespace)
        && first.ends_with(':')
        && !first.ends_with("::")
        && !first.contains(char::is_whitespace);
    if header
        && significant
            .next()
            .is_some_and(|l| l.starts_with(char::is_whitespace))
    {
        return Form::NextestHuman;
    }
    Form::Ids
}

/// `cargo test -- --list`: `tests::it_works: test` per test, a `N tests, M benchmarks`
/// summary per test binary, and cargo's status lines when stderr was captured too.
fn cargo_test_list(path: &Path, lines: &[(u64, &str)]) -> Result<Vec<String>, InputError> {
    let mut ids = Vec::new();
    for &(number, line) in lines {
        if line.trim().is_empty()
            || line.starts_with('#')
            || is_cargo_status(line)
            || is_cargo_summary(line)
            || line.ends_with(": benchmark")
        {
            continue;
        }
        match line.strip_suffix(": test") {
            Some(name) if !name.is_empty() && !name.starts_with(char::is_whitespace) => {
                ids.push(name.to_string());
            }
            _ => return Err(unrecognised(path, number, line)),
        }
    }
    Ok(ids)
}

/// `cargo nextest list` in its human form: a `binary-id:` line, then the binary's tests
/// indented by four spaces. With `-v` each binary also has `  bin: ...`-style lines indented
/// by two, and tests the filter leaves out are listed with a ` (skipped)` suffix.
fn nextest_human(path: &Path, lines: &[(u64, &str)]) -> Result<Vec<String>, InputError> {
    let mut ids = Vec::new();
    let mut binary: Option<&str> = None;
    for &(number, line) in lines {
        if line.trim().is_empty() || is_cargo_status(line) {
            continue;
        }
        let indent = line.len() - line.trim_start_matches(' ').len();
        let text = line.trim();
        match (indent, binary) {
            (0, _) => match text.strip_suffix(':') {
                Some(id) if is_binary_id(id) => binary = Some(id),
                _ => return Err(unrecognised(path, number, line)),
            },
            (4.., Some(binary)) => {
                if !text.ends_with(" (skipped)") {
                    ids.push(format!("{binary} {text}"));
                }
            }
            (2 | 3, Some(_)) if text.contains(": ") => {}
            _ => return Err(unrecognised(path, number, line)),
        }
    }
    Ok(ids)
}

/// One id per line, as `pytest --collect-only -q`, `cargo nextest list --message-format
/// oneline` and hand-written lists give them.
fn id_lines(path: &Path, lines: &[(u64, &str)]) -> Result<Vec<String>, InputError> {
    let mut ids = Vec::new();
    let mut in_warnings = false;
    for &(number, raw) in lines {
        let line = raw.trim();
        let rule = rule_title(line);
        if in_warnings {
            // pytest's warnings summary runs to its `-- Docs:` line or the next rule.
            if rule.is_none() {
                in_warnings = !line.starts_with("-- Docs:");
                continue;
            }
            in_warnings = false;
        }
        if line.is_empty() || line.starts_with('#') || is_cargo_status(raw) {
            continue;
        }
        let summary = pytest_summary(rule.unwrap_or(line));
        if summary == Some(true) || rule.is_some_and(|t| t == "ERRORS") {
            return Err(InputError::new(
                path,
                "pytest reported collection errors, so the list is incomplete",
            )
            .at(Location::Line(number))
            .with_hint("fix the errors pytest printed, then collect again"));
        }
        if summary.is_some() {
            continue;
        }
        match rule {
            Some("warnings summary") => {
                in_warnings = true;
                continue;
            }
            Some(_) => return Err(unrecognised(path, number, raw)),
            None => {}
        }
        // Every tool writes these ids flush left; an indented line is some other output.
        if raw.starts_with(char::is_whitespace) {
            return Err(unrecognised(path, number, raw));
        }
        match test_id(line) {
            Some(Some(id)) => ids.push(id.to_string()),
            Some(None) => {}
            None => return Err(unrecognised(path, number, raw)),
        }
    }
    Ok(ids)
}

/// The id on a line of an id list: `Some(Some(id))`, `Some(None)` for a nextest test the
/// filter skips, `None` when the line is no id.
///
/// An id is one word (`tests::it_works`, `tests.test_x::test_y`), a pytest node id whose
/// parameters may hold spaces (`tests/test_x.py::test_y[a b]`), or a nextest id: a binary id,
/// one space, and a test name (`tiny-crate::bin/tiny tests::it_works`). Only pytest ids
/// hold `.py::`, so a space inside their brackets is not taken for nextest's separator.
fn test_id(line: &str) -> Option<Option<&str>> {
    // `cargo nextest list -v --message-format oneline`:
    // `crate tests::x [bin: ...] [cwd: ...] [build platform: target] (skipped)`
    let line = match line.split_once(" [bin: ") {
        Some(_) if line.ends_with(" (skipped)") => return Some(None),
        Some((id, _)) => id,
        None => line,
    };
    // No id ends with a colon; `tiny-crate:` and `tests/test_x.py:` are headers.
    if line.ends_with(':') {
        return None;
    }
    let (head, params) = split_params(line);
    if !head.contains(char::is_whitespace) && (params.is_empty() || head.contains(".py::")) {
        return Some(Some(line));
    }
    let (binary, test) = line.split_once(' ')?;
    let (test_head, _) = split_params(test);
    (is_binary_id(binary) && !test_head.is_empty() && !test_head.contains(char::is_whitespace))
        .then_some(Some(line))
}

/// Splits `test_y[p 1]` into `("test_y", "[p 1]")` when the line ends with the bracket.
fn split_params(id: &str) -> (&str, &str) {
    match id.find('[') {
        Some(i) if id.ends_with(']') => id.split_at(i),
        _ => (id, ""),
    }
}

/// A nextest binary id: `crate`, `crate::test-target`, `crate::bin/name`, ...
fn is_binary_id(id: &str) -> bool {
    let (package, target) = id.split_once("::").unwrap_or((id, "x"));
    let word = |s: &str, extra: &[char]| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || extra.contains(&c))
    };
    word(package, &[]) && word(target, &['/', '.'])
}

// ---------------------------------------------------------------------------------------
// `cargo nextest list --message-format json`

#[derive(Deserialize)]
struct NextestList {
    #[serde(rename = "rust-suites")]
    rust_suites: Ordered<Suite>,
}

#[derive(Deserialize)]
struct Suite {
    #[serde(default)]
    testcases: Ordered<TestCase>,
}

#[derive(Deserialize)]
struct TestCase {
    #[serde(rename = "filter-match")]
    filter_match: Option<FilterMatch>,
}

#[derive(Deserialize)]
struct FilterMatch {
    status: String,
}

/// A JSON object as its entries in file order (serde_json's map sorts its keys).
struct Ordered<T>(Vec<(String, T)>);

impl<T> Default for Ordered<T> {
    fn default() -> Self {
        Ordered(Vec::new())
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Ordered<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Visitor<T> {
            type Value = Ordered<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    entries.push(entry);
                }
                Ok(Ordered(entries))
            }
        }
        d.deserialize_map(Visitor(std::marker::PhantomData))
    }
}

/// Tests the list's filter selects (`filter-match.status == "matches"`; by default nextest
/// leaves ignored tests out this way), as `binary-id test::name`.
fn nextest_json(path: &Path, text: &str) -> Result<Vec<String>, InputError> {
    let list: NextestList = serde_json::from_str(text).map_err(|e| {
        let (line, column) = (e.line() as u64, e.column() as u64);
        let full = e.to_string();
        let message = full
            .strip_suffix(&format!(" at line {line} column {column}"))
            .unwrap_or(&full);
        let message = match e.classify() {
            serde_json::error::Category::Eof => format!("truncated JSON: {message}"),
            serde_json::error::Category::Data => {
                format!("not `cargo nextest list --message-format json` output: {message}")
            }
            _ => format!("malformed JSON: {message}"),
        };
        let err = InputError::new(path, message);
        if line == 0 {
            err
        } else {
            err.at(Location::LineColumn(line, column))
        }
    })?;
    let mut ids = Vec::new();
    for (binary, suite) in list.rust_suites.0 {
        for (name, case) in suite.testcases.0 {
            if case.filter_match.is_none_or(|m| m.status == "matches") {
                ids.push(format!("{binary} {name}"));
            }
        }
    }
    Ok(ids)
}

// ---------------------------------------------------------------------------------------

/// `=====... title ...=====`, pytest's section rule, as its title.
fn rule_title(line: &str) -> Option<&str> {
    (line.len() >= 6 && line.starts_with("===") && line.ends_with("==="))
        .then(|| line.trim_matches('=').trim())
}

/// pytest's closing line: `10 tests collected in 0.74s`, `2/10 tests collected (8
/// deselected) in 0.77s`, `no tests collected in 0.01s`, `10 tests collected, 1 error in
/// 0.66s`. `Some(true)` when it reports errors.
fn pytest_summary(line: &str) -> Option<bool> {
    let mut words = line.split_whitespace();
    let count = words.next()?;
    let counted = count == "no"
        || count
            .split('/')
            .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    let noun = words.next()?;
    let verb = words.next()?;
    let is_summary = counted && matches!(noun, "test" | "tests") && verb.starts_with("collected");
    is_summary.then(|| line.contains(" error"))
}

/// `N tests, M benchmarks`, closing each binary's `cargo test -- --list` output.
fn is_cargo_summary(line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    matches!(
        words.as_slice(),
        [n, "test," | "tests,", m, "benchmark" | "benchmarks"]
            if n.bytes().all(|b| b.is_ascii_digit()) && m.bytes().all(|b| b.is_ascii_digit())
    )
}

/// Cargo's right-aligned status lines (`    Finished ...`, `     Running ...`), there when
/// stderr was captured with stdout.
fn is_cargo_status(line: &str) -> bool {
    const WORDS: &[&str] = &[
        "Blocking",
        "Building",
        "Checking",
        "Compiling",
        "Doc-tests",
        "Downloaded",
        "Downloading",
        "Finished",
        "Fresh",
        "Locking",
        "Running",
        "Updating",
    ];
    line.starts_with(' ')
        && line
            .split_whitespace()
            .next()
            .is_some_and(|w| WORDS.contains(&w))
}

/// The error for a line that fits none of the forms, with a hint when it is a known
/// near-miss.
fn unrecognised(path: &Path, number: u64, line: &str) -> InputError {
    let text = line.trim();
    let (message, hint) = if is_pytest_counts(text) {
        (
            "`pytest --collect-only -qq` output counts tests per file; it lists no ids".to_string(),
            "collect with `pytest --collect-only -q`".to_string(),
        )
    } else if text.starts_with('<') && text.ends_with('>')
        || text.starts_with("collected ")
        || rule_title(text) == Some("test session starts")
    {
        (
            "`pytest --collect-only` output without `-q` lists no node ids".to_string(),
            "collect with `pytest --collect-only -q`".to_string(),
        )
    } else if line.starts_with(char::is_whitespace) {
        (
            format!(
                "indented line where a test id was expected: `{}`",
                shorten(text)
            ),
            FORMATS_HINT.to_string(),
        )
    } else {
        (
            format!("not a test id: `{}`", shorten(text)),
            FORMATS_HINT.to_string(),
        )
    };
    InputError::new(path, message)
        .at(Location::Line(number))
        .with_hint(hint)
}

/// `tests/test_x.py: 3`, a line of `pytest --collect-only -qq`.
fn is_pytest_counts(line: &str) -> bool {
    line.rsplit_once(": ").is_some_and(|(file, n)| {
        file.ends_with(".py") && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
    })
}

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

    fn read(rel: &str) -> Vec<String> {
        read_collected(&data(rel)).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn pytest_q_output_gives_node_ids_without_the_warnings_block() {
        assert_eq!(
            read("collected/pytest-q.txt"),
            [
                "tests/test_calc.py::test_add[p-1]",
                "tests/test_calc.py::test_add[zero sum]",
                "tests/test_calc.py::test_add[floats]",
                "tests/test_calc.py::test_sign[5]",
                "tests/test_calc.py::test_sign[-5]",
                "tests/test_calc.py::TestDivide::test_exact",
                "tests/test_calc.py::TestDivide::test_by_zero",
                "tests/test_calc.py::TestClamp::test_inside_and_below[-1-0]",
                "tests/test_calc.py::TestClamp::test_inside_and_below[5-5]",
                "tests/test_calc.py::test_mean",
            ]
        );
    }

    // The nextest samples are `cargo nextest list` over a throwaway crate with a lib (tests
    // `tests::it_works`, `tests::nested::deep`, `#[ignore]` `tests::it_is_slow`, `#[bench]`
    // `tests::bench_add`), a bin `tiny` and an integration test `tests/properties.rs`.
    // nextest lists the benchmark as a test and leaves the ignored test out.
    const NEXTEST_IDS: [&str; 5] = [
        "tiny-crate tests::bench_add",
        "tiny-crate tests::it_works",
        "tiny-crate tests::nested::deep",
        "tiny-crate::properties add_commutes",
        "tiny-crate::bin/tiny tests::it_works",
    ];

    #[test]
    fn nextest_human_oneline_and_json_give_the_same_ids_in_file_order() {
        for rel in [
            "collected/nextest-list.txt",
            "collected/nextest-list-verbose.txt",
            "collected/nextest-oneline.txt",
            "collected/nextest-list.json",
        ] {
            assert_eq!(read(rel), NEXTEST_IDS, "{rel}");
        }
    }

    #[test]
    fn nextest_verbose_oneline_drops_skipped_tests_and_metadata() {
        // Listed with `--run-ignored all -E 'not test(deep)'`: the ignored test is in, `deep`
        // is marked `(skipped)`.
        assert_eq!(
            read("collected/nextest-oneline-verbose.txt"),
            [
                "tiny-crate tests::bench_add",
                "tiny-crate tests::it_is_slow",
                "tiny-crate tests::it_works",
                "tiny-crate::properties add_commutes",
                "tiny-crate::bin/tiny tests::it_works",
            ]
        );
    }

    #[test]
    fn cargo_test_list_gives_test_paths_once_without_benchmarks() {
        // Same crate, `cargo +nightly test -- --list 2>&1`: cargo's status lines are in the
        // file; `tests::it_works` of the lib and of the bin are one id.
        assert_eq!(
            read("collected/cargo-test-list.txt"),
            [
                "tests::it_is_slow",
                "tests::it_works",
                "tests::nested::deep",
                "add_commutes",
                "src/lib.rs - add (line 8)",
            ]
        );
    }

    #[test]
    fn plain_list_keeps_brackets_verbatim_and_drops_duplicates() {
        assert_eq!(
            read("collected/plain-list.txt"),
            [
                "tests/test_billing.py::TestInvoice::test_total[p-1]",
                "tests/test_billing.py::test_round[half up, 2 places]",
                "tests.runtime.test_retry::test_backoff_under_load",
                "tiny-crate::bin/tiny tests::it_works",
                "tests::it_works",
            ]
        );
    }

    fn read_text(content: &[u8]) -> Result<Vec<String>, InputError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("collected.txt");
        std::fs::write(&path, content).unwrap();
        read_collected(&path)
    }

    #[test]
    fn spaces_in_pytest_params_are_not_a_nextest_separator() {
        let ids = read_text(b"tests/test_a.py::test_b[x y::z.py]\r\ntests/test_a.py::C::t[ a ]\n")
            .unwrap();
        assert_eq!(
            ids,
            [
                "tests/test_a.py::test_b[x y::z.py]",
                "tests/test_a.py::C::t[ a ]"
            ]
        );
    }

    #[test]
    fn bad_lists_give_errors_naming_file_and_line() {
        let cases: &[(&str, &[&str])] = &[
            (
                "bad/collected/empty.txt",
                &[": no collected test ids", "help:"],
            ),
            (
                "bad/collected/only-comments.txt",
                &[": no collected test ids"],
            ),
            (
                "bad/collected/pytest-none.txt",
                &[": no collected test ids"],
            ),
            (
                "bad/collected/pytest-qq.txt",
                &[
                    ":1: `pytest --collect-only -qq`",
                    "help: collect with `pytest --collect-only -q`",
                ],
            ),
            (
                "bad/collected/pytest-no-q.txt",
                &[
                    ":1: `pytest --collect-only` output without `-q`",
                    "help: collect with `pytest --collect-only -q`",
                ],
            ),
            (
                "bad/collected/pytest-collection-error.txt",
                &[":12: pytest reported collection errors"],
            ),
            (
                "bad/collected/random-text.txt",
                &[
                    ":2: not a test id: `all tests were collected fine`",
                    "help:",
                ],
            ),
            (
                "bad/collected/cargo-test-compile-error.txt",
                &[":2: not a test id: `error[E0425]: cannot find value"],
            ),
            (
                "bad/collected/nextest-test-before-binary.txt",
                &[":1: indented line where a test id was expected: `tests::it_works`"],
            ),
            (
                "bad/collected/nextest-truncated.json",
                &[":28:30: truncated JSON: EOF while parsing"],
            ),
            (
                "bad/collected/json-not-nextest.json",
                &[":3:1:", "missing field `rust-suites`"],
            ),
            ("bad/collected/non-utf8.txt", &[":1:15: not UTF-8 text"]),
            (
                "bad/collected/cut-short.txt",
                &[
                    // Cut inside `test_add[floats]`: what is left looks like a whole id.
                    ":3: the last line (`tests/test_calc.py::test_add`) has no newline at its end: the list is cut short",
                    "help: collect again",
                ],
            ),
            (
                "bad/collected/utf16.txt",
                &[": UTF-16 text", "Out-File -Encoding utf8"],
            ),
            ("no/such/list.txt", &[": file not found"]),
        ];
        for (rel, wanted) in cases {
            let shown = match read_collected(&data(rel)) {
                Ok(ids) => panic!("{rel}: expected an error, got {ids:?}"),
                Err(e) => e.to_string(),
            };
            assert!(
                shown.starts_with(&data(rel).display().to_string()),
                "{shown}"
            );
            for w in *wanted {
                assert!(shown.contains(w), "{rel}: {shown:?} lacks {w:?}");
            }
        }
    }

    #[test]
    fn no_panic_on_garbage() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("collected.txt");
        const ALPHABET: &[u8] = b"ab_:/.[] \n\r\t#={}\"-0123456789py";
        for i in 0..2000 {
            let len = (next() % 80) as usize;
            let mut bytes: Vec<u8> = match i % 4 {
                0 => b"tiny-crate:\n    ".to_vec(),
                1 => b"{\"rust-suites\": ".to_vec(),
                2 => b"x: test\n".to_vec(),
                _ => Vec::new(),
            };
            bytes.extend((0..len).map(|_| {
                let r = next();
                if r % 7 == 0 {
                    r as u8
                } else {
                    ALPHABET[(r >> 8) as usize % ALPHABET.len()]
                }
            }));
            std::fs::write(&path, &bytes).unwrap();
            if let Ok(ids) = read_collected(&path) {
                assert!(!ids.is_empty(), "{bytes:?}");
                assert!(
                    ids.iter()
                        .all(|id| !id.trim().is_empty() && !id.contains('\n')),
                    "{ids:?} from {bytes:?}"
                );
            }
        }
    }

    /// A list cut short is refused, except where the cut leaves whole lines: a list of ids
    /// has no end marker, so that is a shorter list, holding the ids of the full list up to
    /// the cut (the tests it lost then fail closed as `lease_not_collected`).
    #[test]
    fn lists_cut_short_are_refused_or_lose_ids_at_the_end_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("collected.txt");
        for rel in [
            "collected/pytest-q.txt",
            "collected/cargo-test-list.txt",
            "collected/nextest-list.txt",
            "collected/nextest-list-verbose.txt",
            "collected/nextest-oneline.txt",
            "collected/nextest-oneline-verbose.txt",
            "collected/nextest-list.json",
            "collected/plain-list.txt",
        ] {
            let full_bytes = std::fs::read(data(rel)).unwrap();
            let full = read(rel);
            let json = rel.ends_with(".json");
            let mut accepted = 0;
            // Every cut of the line lists; every 7th of the JSON (about 480).
            let step = if json { 7 } else { 1 };
            for cut in (0..full_bytes.trim_ascii_end().len()).step_by(step) {
                let prefix = &full_bytes[..cut];
                std::fs::write(&path, prefix).unwrap();
                let Ok(ids) = read_collected(&path) else {
                    continue;
                };
                accepted += 1;
                assert!(!json, "{rel} cut at byte {cut} accepted: {ids:?}");
                assert!(
                    prefix.ends_with(b"\n") || prefix.trim_ascii_end().len() < prefix.len(),
                    "{rel} cut inside a line at byte {cut} accepted: {ids:?}"
                );
                assert!(
                    full.starts_with(&ids),
                    "{rel} cut at byte {cut}: {ids:?} is not the start of {full:?}"
                );
            }
            assert_eq!(accepted > 0, !json, "{rel}");
        }
    }
}
