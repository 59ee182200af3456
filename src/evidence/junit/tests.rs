//! Unit tests of the JUnit reader: real runner output, bad input, structure and outcomes,
//! and a large report read as a stream (plus an ignored throughput benchmark).

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::content::{find_markup, skip_content};
use super::errors::{HINT_SPELLING, HINT_TRUNCATED};
use super::read_junit;
use crate::error::{InputError, Location, line_column};
use crate::evidence::record::{JunitCounts, Outcome, SuiteFailure, TestCase};

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
    // A failure's message, its first line (the `&#10;` is a line feed): checked against the
    // sample by hand. A passing record has none.
    assert_eq!(
        failing.message.as_deref(),
        Some("AssertionError: assert (Decimal('20.00') * Decimal('0.9')) == Decimal('17.00')")
    );
    assert!(retry.message.is_none());
    assert_eq!(
        ids["tests.test_billing::test_converts_currency"]
            .message
            .as_deref(),
        Some("failed on setup with \"ConnectionError: rates service unreachable\"")
    );
    assert!(
        ids["tests.test_billing.TestInvoice::test_total[p-1]"]
            .message
            .is_none()
    );
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
    let err = read_text_err(
        b"<testsuites><testsuite>\n<testcase name=\"a\">&lol9;</testcase></testsuite></testsuites>",
    );
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

#[test]
fn a_failure_message_is_shown_as_one_short_inert_line() {
    use super::parser::short_message;
    assert_eq!(
        &*short_message("\n  assert 1 == 2\nwhere 1 = f()".to_string()),
        "assert 1 == 2"
    );
    // Control characters (an ESC the tested code printed) become spaces.
    assert_eq!(
        &*short_message("red \u{1b}[31mtext\u{7}".to_string()),
        "red  [31mtext"
    );
    let long = "x".repeat(300);
    assert_eq!(&*short_message(long), format!("{}...", "x".repeat(200)));
}
