//! Cross-checks of the evidence (issue 12): a report is written by a process that runs the
//! agent's code, so what it leaves out, spells otherwise or contradicts is caught. Each attack
//! here scored MERGE before the check that stops it.

use crate::scenario::*;
use crate::support::{Project, Run, data};

/// The clean project's cases plus one failing ordinary test, its outcome element spelled
/// `failure` (the attacks below change that spelling or where it sits).
fn with_hidden_failure(child: &str) -> String {
    let mut cases = clean_cases();
    cases.push(("tests.test_billing", "test_discount", child));
    junit(&cases)
}

fn score_json(p: &Project, extra: &[&str]) -> Run {
    let mut args = vec!["score", "--junit", "junit.xml", "--format", "json"];
    args.extend_from_slice(extra);
    p.guard(&args)
}

/// Exit 2, the report's name with a line and column on stderr, and `mentions`.
fn assert_refused(run: &Run, at: &str, mentions: &[&str]) {
    assert_eq!(
        run.code, 2,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert!(
        run.stderr.starts_with(&format!("error: {at}: ")),
        "expected `error: {at}: ` in:\n{}",
        run.stderr
    );
    for m in mentions {
        assert!(
            run.stderr.contains(m),
            "stderr lacks {m:?}:\n{}",
            run.stderr
        );
    }
    assert!(run.json()["decision"].is_null(), "{}", run.stdout);
}

#[test]
fn the_plain_failure_rejects() {
    // The baseline the attacks start from: spelled as runners write it, it is a failure.
    let p = clean();
    p.write("junit.xml", with_hidden_failure(FAIL));
    let run = score_json(&p, &[]);
    assert_eq!(run.reasons(), vec!["test_failures"], "{}", run.stdout);
    assert_eq!(
        run.json()["findings"][0]["test"],
        "tests.test_billing::test_discount"
    );
}

#[test]
fn capitalised_failure_element_is_refused() {
    let p = clean();
    p.write(
        "junit.xml",
        with_hidden_failure(r#"<Failure message="assert 1 == 2">AssertionError</Failure>"#),
    );
    // The report is one line: the element sits after the five clean records.
    let column = p.read("junit.xml").find("<Failure").unwrap() + 1;
    assert_refused(
        &score_json(&p, &[]),
        &format!("junit.xml:1:{column}"),
        &[
            "<Failure>",
            "<failure>",
            "tests.test_billing::test_discount",
        ],
    );
}

#[test]
fn namespaced_failure_element_is_refused() {
    let p = clean();
    p.write(
        "junit.xml",
        with_hidden_failure(r#"<x:failure xmlns:x="urn:x" message="m">AssertionError</x:failure>"#),
    );
    let column = p.read("junit.xml").find("<x:failure").unwrap() + 1;
    assert_refused(
        &score_json(&p, &[]),
        &format!("junit.xml:1:{column}"),
        &["<x:failure>"],
    );
}

#[test]
fn case_variants_of_every_outcome_element_are_refused() {
    for element in [
        "FAILURE",
        "Error",
        "Skipped",
        "rerunfailure",
        "RerunError",
        "flakyfailure",
        "FlakyError",
        "ns:error",
        "ns:skipped",
        "ns:flakyFailure",
    ] {
        let p = clean();
        p.write(
            "junit.xml",
            with_hidden_failure(&format!("<{element} message=\"m\">boom</{element}>")),
        );
        let column = p.read("junit.xml").find(&format!("<{element}")).unwrap() + 1;
        assert_refused(
            &score_json(&p, &[]),
            &format!("junit.xml:1:{column}"),
            &[&format!("<{element}>")],
        );
    }
}

#[test]
fn failure_wrapped_in_properties_is_refused() {
    let p = clean();
    p.write(
        "junit.xml",
        with_hidden_failure(
            r#"<properties><property name="k" value="v"/><failure message="m">boom</failure></properties>"#,
        ),
    );
    let report = p.read("junit.xml");
    let properties = report.find("<properties>").unwrap();
    let column = properties + report[properties..].find("<failure").unwrap() + 1;
    assert_refused(
        &score_json(&p, &[]),
        &format!("junit.xml:1:{column}"),
        &["<failure>", "inside <properties>"],
    );
}

#[test]
fn outcome_elements_in_captured_output_are_refused() {
    // Runners escape what a test prints (`&lt;failure/&gt;`) or wrap it in CDATA; an element
    // there was put there by someone else.
    for wrapper in ["system-out", "system-err"] {
        let p = clean();
        p.write(
            "junit.xml",
            with_hidden_failure(&format!(
                "<{wrapper}>log line <error message=\"m\">boom</error></{wrapper}>"
            )),
        );
        let column = p.read("junit.xml").find("<error").unwrap() + 1;
        assert_refused(
            &score_json(&p, &[]),
            &format!("junit.xml:1:{column}"),
            &["<error>", &format!("inside <{wrapper}>")],
        );
    }
    // Escaped or in CDATA, it is text about a failure: still a pass.
    let p = clean();
    p.write(
        "junit.xml",
        with_hidden_failure("<system-out>&lt;failure/&gt; <![CDATA[<error/>]]></system-out>"),
    );
    assert_eq!(score_json(&p, &[]).code, 0);
}

#[test]
fn testcase_hidden_inside_properties_or_spelled_otherwise_is_refused() {
    let clean_report = junit(&clean_cases());
    let failing = r#"<testcase classname="tests.test_billing" name="test_discount"><failure message="m"/></testcase>"#;
    for (hidden, element) in [
        (format!("<properties>{failing}</properties>"), "<testcase>"),
        (
            failing
                .replace("<testcase", "<TestCase")
                .replace("</testcase", "</TestCase"),
            "<TestCase>",
        ),
        (
            format!(r#"<testsuite name="inner">{failing}</testsuite>"#)
                .replace("testsuite", "TestSuite"),
            "<TestSuite>",
        ),
    ] {
        let p = clean();
        let report = clean_report.replace(
            "</testsuite></testsuites>",
            &format!("{hidden}</testsuite></testsuites>"),
        );
        p.write("junit.xml", &report);
        let at = report.find(&hidden).unwrap();
        let column = at + hidden.find(&element[..element.len() - 1]).unwrap() + 1;
        assert_refused(
            &score_json(&p, &[]),
            &format!("junit.xml:1:{column}"),
            &[element],
        );
    }
}

#[test]
fn suite_level_error_beside_passing_records_is_a_failure() {
    // Collection and setup errors: some runners write them on the suite, not on a record.
    let p = clean();
    let report = junit(&clean_cases()).replace(
        "<testsuite name=\"pytest\"",
        "<testsuite name=\"tests.test_setup\"><error message=\"setup_module failed\">ConnectionError</error></testsuite><testsuite name=\"pytest\"",
    );
    p.write("junit.xml", &report);
    let run = score_json(&p, &[]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.reasons(), vec!["test_failures"], "{}", run.stdout);
    let finding = &run.json()["findings"][0];
    assert_eq!(finding["test"], "tests.test_setup");
    let column = report.find("<error").unwrap() + 1;
    assert_eq!(
        (&finding["path"], &finding["line"], &finding["column"]),
        (
            &serde_json::json!("junit.xml"),
            &serde_json::json!(1),
            &serde_json::json!(column)
        )
    );
    assert!(
        finding["message"]
            .as_str()
            .unwrap()
            .contains("setup_module failed"),
        "{finding}"
    );

    // A <failure> on the root <testsuites> counts the same.
    let report = junit(&clean_cases()).replace(
        "<testsuites name=\"pytest tests\">",
        "<testsuites name=\"pytest tests\"><failure message=\"internal error\"/>",
    );
    p.write("junit.xml", &report);
    let run = score_json(&p, &[]);
    assert_eq!(run.reasons(), vec!["test_failures"], "{}", run.stdout);
    assert_eq!(run.json()["findings"][0]["test"], "pytest tests");
}

#[test]
fn text_from_the_report_cannot_print_lines_of_its_own() {
    // `&#10;` in a message decodes to a newline: printed as it stands it would add a line
    // that reads like guard's own verdict.
    let p = clean();
    let report = junit(&clean_cases()).replace(
        "<testsuite name=\"pytest\"",
        "<testsuite name=\"tests.test_setup\"><error message=\"boom&#10;decision: MERGE (score 1, 0 findings)\">x</error></testsuite><testsuite name=\"pytest\"",
    );
    p.write("junit.xml", &report);
    let run = p.guard(&["score", "--junit", "junit.xml"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        !run.stdout.lines().any(|l| l.starts_with("decision: MERGE")),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("boom decision: MERGE (score 1, 0 findings)"),
        "{}",
        run.stdout
    );
}

#[test]
fn suite_level_skip_or_rerun_is_refused() {
    for element in ["<skipped/>", "<flakyFailure/>", "<Failure/>"] {
        let p = clean();
        let report =
            junit(&clean_cases()).replace("time=\"0.1\">", &format!("time=\"0.1\">{element}"));
        p.write("junit.xml", &report);
        let column = report.find(&element[..element.len() - 2]).unwrap() + 1;
        assert_refused(
            &score_json(&p, &[]),
            &format!("junit.xml:1:{column}"),
            &[&element.replace('/', "")],
        );
    }
}

#[test]
fn committed_junit_corpus_files_name_the_element_and_its_place() {
    let p = clean();
    for (name, at, element) in [
        ("capital-failure.xml", "6:7", "<Failure>"),
        ("namespaced-failure.xml", "6:7", "<x:failure>"),
        ("failure-in-properties.xml", "8:9", "<failure>"),
        ("error-in-system-err.xml", "7:1", "<error>"),
        ("lowercase-rerun.xml", "6:7", "<flakyfailure>"),
        ("capital-skipped.xml", "6:7", "<SKIPPED>"),
        ("testcase-in-properties.xml", "6:7", "<testcase>"),
        ("capital-testcase.xml", "5:5", "<TestCase>"),
        ("skipped-on-suite.xml", "4:5", "<skipped>"),
    ] {
        let path = data(&format!("bad/junit/{name}"));
        let run = p.guard(&["score", "--junit", path.to_str().unwrap()]);
        assert_eq!(run.code, 2, "{name}: {}{}", run.stdout, run.stderr);
        let want = format!("error: {}:{at}: ", path.display());
        assert!(run.stderr.starts_with(&want), "{name}: {}", run.stderr);
        assert!(run.stderr.contains(element), "{name}: {}", run.stderr);
    }
}

#[test]
fn junit_counts_records_as_written_and_distinct_tests() {
    // mocha writes two `it()` of one name in one `describe` as two records; pytest-rerunfailures
    // writes each attempt as a record. `cases` counts records, `tests` the ids they are of.
    let p = clean();
    let mut cases = clean_cases();
    cases.push(("invoice totals", "adds tax", PASS));
    cases.push(("invoice totals", "rounds", PASS));
    cases.push(("invoice totals", "adds tax", PASS));
    cases.push(("invoice totals", "rounds", SKIP));
    p.write("junit.xml", junit(&cases));
    let extra = junit(&[("tests.test_billing.TestInvoice", "test_total[p-1]", PASS)]);
    p.write("more.xml", extra);
    let run = score_json(&p, &["--junit", "more.xml"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    // 10 records in two files: the 5 clean ones, 4 more, and one repeated in more.xml. They
    // are of 7 tests: the clean 5, `adds tax` and `rounds`, whose pass and skip merge into a
    // pass (a skip is the mildest outcome).
    assert_eq!(
        run.json()["junit"],
        serde_json::json!({"files": 2, "cases": 10, "tests": 7, "passed": 5, "failed": 1, "errors": 0, "skipped": 1})
    );
    let text = p.guard(&["score", "--junit", "junit.xml", "--junit", "more.xml"]);
    assert!(
        text.stdout.contains(
            "junit: 2 files, 10 cases, 7 tests (5 passed, 1 failed, 0 errors, 1 skipped)"
        ),
        "{}",
        text.stdout
    );

    // Judging still merges, a failure winning: a failing record of a test that also passed.
    p.write(
        "more.xml",
        junit(&[("tests.test_billing.TestInvoice", "test_total[p-1]", FAIL)]),
    );
    let run = score_json(&p, &["--junit", "more.xml"]);
    assert_eq!(run.reasons(), vec!["test_failures"], "{}", run.stdout);
    assert_eq!(run.json()["junit"]["tests"], 7);
    assert_eq!(run.json()["junit"]["failed"], 2);
    assert_eq!(run.json()["junit"]["passed"], 4);
}

// --- guard run ----------------------------------------------------------------------------

/// `guard run` in `p` with `options` before `--` and the runner `sh -c SCRIPT` after it.
fn run_sh(p: &Project, options: &[&str], script: &str) -> Run {
    let mut args = vec!["run"];
    args.extend_from_slice(options);
    args.extend(["--", "sh", "-c", script]);
    p.guard(&args)
}

/// The clean project's report with the frozen test skipped rather than failing: no record in
/// it failed.
fn no_failure_report() -> String {
    let cases: Vec<Case> = clean_cases()
        .into_iter()
        .map(|(classname, name, child)| (classname, name, if child == FAIL { SKIP } else { child }))
        .collect();
    junit(&cases)
}

#[test]
fn guard_run_of_a_runner_that_fails_with_a_clean_report_is_a_report_mismatch() {
    let p = clean();
    p.write("passing.xml", no_failure_report());
    p.remove("junit.xml");
    let options = ["--junit", "junit.xml", "--format", "json"];

    let run = run_sh(&p, &options, "cp passing.xml junit.xml");
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.json()["runner"]["exit_code"], 0);

    let run = run_sh(&p, &options, "cp passing.xml junit.xml; exit 3");
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.reasons(), vec!["report_mismatch"]);
    assert_eq!(run.json()["runner"]["exit_code"], 3);

    // Killed by a signal: no exit status at all, which is no success either.
    let run = run_sh(&p, &options, "cp passing.xml junit.xml; kill -9 $$");
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.reasons(), vec!["report_mismatch"]);
    let json = run.json();
    assert!(json["runner"]["exit_code"].is_null(), "{json}");
    assert_eq!(json["runner"]["signal"], 9);
}

#[test]
fn guard_run_scores_a_runner_that_exits_0_with_failures_in_its_report() {
    let p = clean();
    p.write("failing.xml", with_hidden_failure(FAIL));
    p.remove("junit.xml");
    let run = run_sh(
        &p,
        &["--junit", "junit.xml", "--format", "json"],
        "cp failing.xml junit.xml",
    );
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.reasons(), vec!["test_failures"]);
    assert_eq!(run.json()["runner"]["exit_code"], 0);
}

#[test]
fn guard_run_explains_a_non_zero_exit_by_failures_the_report_shows() {
    let p = clean();
    p.write("failing.xml", with_hidden_failure(FAIL));
    p.write("clean.xml", junit(&clean_cases()));
    p.remove("junit.xml");
    let options = ["--junit", "junit.xml", "--format", "json"];
    let run = run_sh(&p, &options, "cp failing.xml junit.xml; exit 1");
    assert_eq!(run.reasons(), vec!["test_failures"], "{}", run.stdout);
    // The frozen test fails, which is allowed, and which explains the exit status too.
    let run = run_sh(&p, &options, "cp clean.xml junit.xml; exit 1");
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    // So does a suite-level error.
    p.write(
        "suite-error.xml",
        no_failure_report().replace(
            "<testsuite name=\"pytest\"",
            "<testsuite name=\"tests.test_setup\"><error message=\"setup failed\"/></testsuite><testsuite name=\"pytest\"",
        ),
    );
    let run = run_sh(&p, &options, "cp suite-error.xml junit.xml; exit 1");
    assert_eq!(run.reasons(), vec!["test_failures"], "{}", run.stdout);
}

#[test]
fn guard_run_refuses_a_runner_it_cannot_start() {
    let p = clean();
    let run = p.guard(&[
        "run",
        "--junit",
        "junit.xml",
        "--format",
        "json",
        "--",
        "./no-such-runner",
        "-q",
    ]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .starts_with("error: cannot run `./no-such-runner -q`: "),
        "{}",
        run.stderr
    );
    assert!(run.json()["decision"].is_null(), "{}", run.stdout);
    // No command at all is an argument error.
    let run = p.guard(&["run", "--junit", "junit.xml"]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
}

#[test]
fn guard_run_refuses_a_report_the_run_did_not_write() {
    // A report left from an earlier run is not this run's evidence.
    let p = clean();
    let before = p.read("junit.xml");
    let run = run_sh(&p, &["--junit", "junit.xml"], "exit 0");
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.starts_with("error: junit.xml: "),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("not written by the run"),
        "{}",
        run.stderr
    );
    assert_eq!(p.read("junit.xml"), before);
    // Not written at all.
    p.remove("junit.xml");
    let run = run_sh(&p, &["--junit", "junit.xml"], "exit 0");
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("junit.xml"), "{}", run.stderr);
}

#[test]
fn guard_run_text_report_names_the_runner_status() {
    let p = clean();
    p.write("passing.xml", no_failure_report());
    let run = run_sh(
        &p,
        &["--junit", "junit.xml"],
        "cp passing.xml junit.xml; exit 3",
    );
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("error[report_mismatch]: "),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("runner: `sh -c 'cp passing.xml junit.xml; exit 3'` exited with status 3"),
        "{}",
        run.stdout
    );
}

// --- coverage reports that contradict themselves -------------------------------------------

#[test]
fn self_contradicting_coverage_reports_are_refused_naming_the_contradiction() {
    // Each merged before (with the floor at 0; most of them above the default floor too).
    let p = clean();
    for (name, at, mentions) in [
        (
            "json-totals-disagree-with-files.json",
            ":192:3: ",
            &[
                "`totals` says 90% (48 of 53 statements and branches)",
                "but the files' lines give 0% (0 of 53 statements and branches)",
            ][..],
        ),
        (
            "json-summary-disagrees-with-lines.json",
            ":131:5: ",
            &[
                "`calc/stats.py`",
                "summary says 13 covered lines",
                "`executed_lines` lists 4",
            ],
        ),
        ("json-no-files.json", ":1:1: ", &["`files` is missing"]),
        (
            "lcov-negative-da.lcov",
            ":4: ",
            &["DA: negative execution count `-7`"],
        ),
        (
            "lcov-lh-contradicts-da.lcov",
            ":14: ",
            &["LH (10) contradicts the record's DA lines: 1 of 10 executed"],
        ),
        (
            "lcov-lf-contradicts-da.lcov",
            ":5: ",
            &["LF (5) contradicts the record's DA lines: 2 lines"],
        ),
        ("lcov-sum-overflows.lcov", ":6: ", &["overflow"]),
        (
            "lcov-count-overflows.lcov",
            ":4: ",
            &["execution count `184467440737095516150` overflows"],
        ),
        (
            "cobertura-rate-disagrees-with-counts.xml",
            ":2:1: ",
            &["line-rate=\"0.9\"", "23 of 35"],
        ),
        (
            "cobertura-counts-disagree-with-lines.xml",
            ":2:1: ",
            &[
                "lines-covered=\"33\" lines-valid=\"35\"",
                "<line> records",
                "23 of 35",
            ],
        ),
        (
            "cobertura-negative-hits.xml",
            ":32:7: ",
            &["hits=\"-4\"", "negative"],
        ),
        (
            "cobertura-rate-without-lines.xml",
            ":2:1: ",
            &["no <line> records"],
        ),
    ] {
        let path = data(&format!("bad/coverage/{name}"));
        let shown = path.to_str().unwrap();
        let run = score_json(&p, &["--coverage", shown, "--min-proven", "0"]);
        assert_eq!(run.code, 2, "{name}: {}{}", run.stdout, run.stderr);
        let want = format!("error: {shown}{at}");
        assert!(
            run.stderr.starts_with(&want),
            "{name}: want {want:?} in:\n{}",
            run.stderr
        );
        for m in mentions {
            assert!(
                run.stderr.contains(m),
                "{name}: stderr lacks {m:?}:\n{}",
                run.stderr
            );
        }
    }
}

#[test]
fn coverage_figures_come_from_the_line_data() {
    // The real reports of one run (tests/data/coverage): the figure is computed from the
    // lines they list, and agrees with their own totals.
    let p = clean();
    for (name, percent) in [
        ("coverage.json", 100.0 * 33.0 / 53.0),
        ("coverage.lcov", 100.0 * 23.0 / 35.0),
        ("cobertura.xml", 100.0 * 23.0 / 35.0),
    ] {
        let path = data(&format!("coverage/{name}"));
        let run = score_json(
            &p,
            &["--coverage", path.to_str().unwrap(), "--min-proven", "60"],
        );
        assert_eq!(run.code, 0, "{name}: {}{}", run.stdout, run.stderr);
        let got = run.json()["proven_coverage_percent"].as_f64().unwrap();
        assert!((got - percent).abs() < 1e-9, "{name}: {got} != {percent}");
    }
}

#[test]
fn guard_run_scores_coverage_and_collected_ids_from_runs_of_their_own() {
    // The proven-coverage run and `--collect-only` come before the full run: their files are
    // not the command's to write.
    let p = clean();
    p.write("passing.xml", no_failure_report())
        .write(
            "cov.lcov",
            "SF:src/a.py\nDA:1,1\nDA:2,1\nDA:3,0\nDA:4,1\nend_of_record\n",
        )
        .write(
            "collected.txt",
            "tests/properties/test_codec_roundtrip.py::test_roundtrip_on_seeds\n\
             tests/runtime/test_retry.py::test_backoff_under_load\n",
        );
    p.remove("junit.xml");
    let run = run_sh(
        &p,
        &[
            "--junit",
            "junit.xml",
            "--coverage",
            "cov.lcov",
            "--collected",
            "collected.txt",
            "--format",
            "json",
        ],
        "cp passing.xml junit.xml",
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let json = run.json();
    assert_eq!(json["proven_coverage_percent"], 75.0);
    assert_eq!(json["collected_tests"], 2);
}

#[test]
fn a_collected_frozen_test_missing_from_the_report_is_the_freeze_rules_finding() {
    let p = clean();
    let mut cases = clean_cases();
    cases.retain(|c| c.1 != "test_backoff_under_load");
    p.write("junit.xml", junit(&cases)).write(
        "collected.txt",
        "tests/properties/test_codec_roundtrip.py::test_roundtrip_on_seeds\n\
         tests/runtime/test_retry.py::test_backoff_under_load\n\
         tests/test_billing.py::TestInvoice::test_total[p-1]\n\
         tests/test_billing.py::TestInvoice::test_total[p-3]\n",
    );
    let run = score_json(&p, &["--collected", "collected.txt"]);
    assert_eq!(
        run.reasons(),
        vec!["frozen_test_missing", "test_missing_from_report"],
        "{}",
        run.stdout
    );
    let json = run.json();
    let missing: Vec<&str> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "test_missing_from_report")
        .map(|f| f["test"].as_str().unwrap())
        .collect();
    assert_eq!(
        missing,
        ["tests/test_billing.py::TestInvoice::test_total[p-3]"]
    );
}
