//! Tests of coverage reports across formats: detection by content, byte order marks, the
//! three reports of one run agreeing, bad reports and garbage. Each format's own tests live
//! in its file, and use the helpers here.

use std::path::{Path, PathBuf};

use super::{Coverage, CoverageFormat, read_coverage};
use crate::error::{InputError, Location};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
}

pub(super) fn read(rel: &str) -> Coverage {
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

fn temp_with(content: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report");
    std::fs::write(&path, content).unwrap();
    (dir, path)
}

pub(super) fn read_text(content: &str) -> Result<Coverage, InputError> {
    let (_dir, path) = temp_with(content.as_bytes());
    read_coverage(&path)
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
