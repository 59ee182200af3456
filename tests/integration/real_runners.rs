//! Scoring real runner output: the committed pytest and cargo-nextest reports (regenerated
//! by `tests/data/regen-junit.sh`) and a live pytest run.

use crate::support::{Project, Run, data, sha256sum};

const EMPTY_LOCK: &str = "{\"files\": {}}\n";

/// A plain directory whose ledger reads the freeze list `freeze` and property `paths`.
fn project(property_paths: &str, freeze: &str) -> Project {
    let p = Project::new();
    p.write(
        "qa/merge_ledger.toml",
        format!(
            "[properties]\npaths = [{property_paths}]\nfiles = [\"*\"]\n\n[fixtures]\nlockfile = \"qa/fixtures.lock.json\"\n\n[freeze]\nfile = \"qa/flake_freeze.txt\"\nmax_active_leases = 5\n"
        ),
    )
    .write("qa/fixtures.lock.json", EMPTY_LOCK)
    .write("qa/flake_freeze.txt", freeze);
    p
}

/// Asserts the exit code, the decision that goes with it and the exact (sorted) reasons of a
/// JSON report.
#[track_caller]
fn expect(run: &Run, code: i32, reasons: &[&str]) {
    assert_eq!(
        run.code, code,
        "exit code\nstdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    let decision = if code == 0 { "MERGE" } else { "REJECT" };
    assert_eq!(run.json()["decision"], decision, "{}", run.stdout);
    assert_eq!(run.reasons(), reasons, "reasons\nstdout:\n{}", run.stdout);
}

fn score(p: &Project, report: &str, extra: &[&str]) -> Run {
    let report = data(&format!("junit/{report}"));
    let mut args = vec![
        "score",
        "--format",
        "json",
        "--junit",
        report.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    p.guard(&args)
}

// In the pytest samples (checked by hand against the XML): TestInvoice::test_discount_applies
// fails, test_converts_currency errors, test_vat_table and test_round_half_up (an xfail) skip,
// and all seven tests under tests/properties/ pass.
const PYTEST_FLAKES: &str = "tests/test_billing.py::TestInvoice::test_discount_applies\ntests/test_billing.py::test_converts_currency\n";

#[test]
fn pytest_reports_merge_when_the_failures_are_frozen() {
    for report in ["pytest-xunit2.xml", "pytest-xunit1.xml"] {
        let p = project("\"tests/properties/\"", PYTEST_FLAKES);
        let collected = data("junit/pytest-collected.txt");
        let run = score(&p, report, &["--collected", collected.to_str().unwrap()]);
        expect(&run, 0, &[]);
        let json = run.json();
        assert_eq!(json["collected_tests"], 17);
        assert_eq!(json["active_leases"], 2);
        assert_eq!(
            json["junit"],
            serde_json::json!({"files": 1, "cases": 17, "tests": 17, "passed": 13, "failed": 1, "errors": 1, "skipped": 2})
        );
    }
}

#[test]
fn pytest_report_rejects_unfrozen_failures_by_name() {
    let p = project("\"tests/properties/\"", "");
    let run = score(&p, "pytest-xunit2.xml", &[]);
    expect(&run, 1, &["test_failures"]);
    let json = run.json();
    let names: Vec<String> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["test"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        names,
        vec![
            "tests.test_billing.TestInvoice::test_discount_applies",
            "tests.test_billing::test_converts_currency"
        ]
    );
}

#[test]
fn pytest_frozen_test_with_escaped_param_that_passes_is_caught() {
    // `test_rounding[net<gross]` is written `net&lt;gross` in the XML.
    let p = project(
        "\"tests/properties/\"",
        &format!("{PYTEST_FLAKES}tests/test_billing.py::test_rounding[net<gross]\n"),
    );
    let run = score(&p, "pytest-xunit2.xml", &[]);
    expect(&run, 1, &["frozen_test_passed"]);
    assert_eq!(
        run.json()["findings"][0]["test"],
        "tests/test_billing.py::test_rounding[net<gross]"
    );
}

#[test]
fn pytest_properties_are_found_by_path_in_dotted_classnames() {
    // The first article's scorer finds no property tests in real pytest output; guard must.
    let p = project("\"tests/properties/\"", PYTEST_FLAKES);
    let run = score(&p, "pytest-xunit2.xml", &[]);
    expect(&run, 0, &[]);
    assert_eq!(run.json()["property_failures"], 0);
    let p = project("\"tests/elsewhere/\"", PYTEST_FLAKES);
    expect(&score(&p, "pytest-xunit2.xml", &[]), 1, &["property_hold"]);
}

#[test]
fn pytest_rerun_pass_is_flaky_not_a_pass() {
    // pytest-rerunfailures writes the failed attempt and the passing rerun as two records.
    let p = project("\"tests/properties/\"", PYTEST_FLAKES);
    let run = score(&p, "pytest-rerun.xml", &[]);
    expect(&run, 1, &["test_failures"]);
    // 21 <testcase> elements (`grep -c` and ElementTree agree) of 18 tests: the three rerun
    // tests are written twice each.
    assert_eq!(
        run.json()["junit"],
        serde_json::json!({"files": 1, "cases": 21, "tests": 18, "passed": 14, "failed": 1, "errors": 1, "skipped": 2})
    );
    assert_eq!(
        run.json()["findings"][0]["test"],
        "flaky.test_flaky_network::test_fetch_eventually_succeeds"
    );
    let p = project(
        "\"tests/properties/\"",
        &format!("{PYTEST_FLAKES}flaky/test_flaky_network.py::test_fetch_eventually_succeeds\n"),
    );
    // A frozen flaky test is allowed.
    expect(&score(&p, "pytest-rerun.xml", &[]), 0, &[]);
}

// In the nextest sample: tests::escapes_quotes fails (with a rerun), tests::flaky::passes_on_retry
// passes on its retry (flakyFailure), and the three tests of tests/properties.rs pass.
const NEXTEST_FLAKES: &str =
    "tests::escapes_quotes\nnextest-sample tests::flaky::passes_on_retry\n";

#[test]
fn nextest_report_merges_with_cargo_and_nextest_ids_frozen() {
    let p = project("\"tests/properties.rs\"", NEXTEST_FLAKES);
    let list = data("junit/nextest-list.txt");
    let run = score(&p, "nextest.xml", &["--collected", list.to_str().unwrap()]);
    expect(&run, 0, &[]);
    assert_eq!(run.json()["collected_tests"], 9);
    assert_eq!(run.json()["junit"]["cases"], 9);
}

#[test]
fn nextest_flaky_and_failing_tests_reject_when_not_frozen() {
    let p = project("\"tests/properties.rs\"", "");
    let run = score(&p, "nextest.xml", &[]);
    expect(&run, 1, &["test_failures"]);
    let json = run.json();
    let names: Vec<&str> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["test"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        vec![
            "nextest-sample::tests::escapes_quotes",
            "nextest-sample::tests::flaky::passes_on_retry"
        ]
    );
}

#[test]
fn nextest_frozen_test_that_passes_is_caught() {
    let p = project(
        "\"tests/properties.rs\"",
        &format!("{NEXTEST_FLAKES}nextest-sample tests::parses_seconds\n"),
    );
    let run = score(&p, "nextest.xml", &[]);
    expect(&run, 1, &["frozen_test_passed"]);
    assert_eq!(
        run.json()["findings"][0]["test"],
        "nextest-sample tests::parses_seconds"
    );
    let p = project("\"tests/elsewhere.rs\"", NEXTEST_FLAKES);
    expect(&score(&p, "nextest.xml", &[]), 1, &["property_hold"]);
}

#[test]
fn live_pytest_run_is_scored() {
    // Copies the sample pytest project, runs real pytest into JUnit, and scores the result.
    let p = Project::new();
    copy_dir(&data("pytest-project"), p.root());
    p.write("qa/merge_ledger.toml", "[properties]\npaths = [\"tests/properties/\"]\nseeds = \"tests/properties/seeds\"\n\n[fixtures]\nlockfile = \"qa/fixtures.lock.json\"\n\n[freeze]\nfile = \"qa/flake_freeze.txt\"\nmax_active_leases = 5\n")
        .write("qa/fixtures.lock.json", EMPTY_LOCK)
        .write("qa/flake_freeze.txt", PYTEST_FLAKES);
    let pytest = std::process::Command::new("python3")
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--junitxml=junit.xml",
        ])
        .current_dir(p.root())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("python3 runs");
    assert!(
        pytest.status.code() == Some(1),
        "pytest must be installed (`python3 -m pip install pytest`) and report the sample's failures: {}{}",
        String::from_utf8_lossy(&pytest.stdout),
        String::from_utf8_lossy(&pytest.stderr)
    );
    let run = p.guard(&["score", "--junit", "junit.xml", "--format", "json"]);
    expect(&run, 0, &[]);
    assert_eq!(run.json()["junit"]["cases"], 17);
    p.write(
        "qa/flake_freeze.txt",
        "tests/test_billing.py::TestInvoice::test_discount_applies\n",
    );
    let run = p.guard(&["score", "--junit", "junit.xml", "--format", "json"]);
    expect(&run, 1, &["test_failures"]);
    assert_eq!(
        run.json()["findings"][0]["test"],
        "tests.test_billing::test_converts_currency"
    );
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_name() == "__pycache__" || entry.file_name() == ".pytest_cache" {
            continue;
        }
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Runs real pytest (default JUnit family, xunit2) in `p` into `junit.xml`; returns its exit
/// code.
fn run_pytest(p: &Project) -> Option<i32> {
    let pytest = std::process::Command::new("python3")
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--import-mode=importlib",
            "--junitxml=junit.xml",
            "tests",
        ])
        .current_dir(p.root())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("python3 runs");
    let junit = std::fs::read_to_string(p.path("junit.xml")).unwrap_or_else(|_| {
        panic!(
            "pytest must be installed (`python3 -m pip install pytest`) and write junit.xml: {}{}",
            String::from_utf8_lossy(&pytest.stdout),
            String::from_utf8_lossy(&pytest.stderr)
        )
    });
    // The default family, not the legacy one with `file` attributes: records are placed by
    // their dotted classnames alone.
    assert!(!junit.contains(" file=\""), "{junit}");
    pytest.status.code()
}

/// A property file that is not thin: eight code lines and an assert.
const ROUNDTRIP_PROPERTY: &str = r#"import json

CASES = [{}, {"a": 1}, {"nested": {"b": [1, 2, 3]}}, {"text": "caf\u00e9"}]


def test_loads_dumps_roundtrip():
    for payload in CASES:
        text = json.dumps(payload)
        again = json.loads(text)
        assert again == payload
        assert json.dumps(again) == text
"#;

// The first article, verbatim: its ledger (no lease budget) and its plain freeze list.
const FIRST_ARTICLE_LEDGER: &str = r#"# qa/merge_ledger.toml
# Human-owned. Agent writes to this file are a score of 0.

[properties]
paths = ["tests/properties/"]
required = true

[fixtures]
lockfile = "qa/fixtures.lock.json"
allow_unhashed_new = false

[freeze]
file = "qa/flake_freeze.txt"
# A frozen name that passes under the patch fails the score.
passing_frozen_is_error = true
"#;
const FIRST_ARTICLE_FREEZE: &str = "# qa/flake_freeze.txt — human-owned. Agent cannot delete lines.
tests.runtime.test_retry::test_backoff_under_load
tests.http.test_client::test_header_order_stable
";

#[test]
fn first_article_ledger_and_freeze_list_merge_with_a_failing_and_a_skipped_flake() {
    // The first article's decision table: "frozen tests still fail or skip" scores 1. Its
    // plain list has no lease budget, however many flakes it names.
    let p = Project::new();
    let invoice = "{\"net\": 100, \"tax\": 19}\n";
    p.write("qa/merge_ledger.toml", FIRST_ARTICLE_LEDGER)
        .write("qa/flake_freeze.txt", FIRST_ARTICLE_FREEZE)
        .write("tests/fixtures/invoice_v3.json", invoice)
        .write("tests/fixtures/empty_batch.ndjson", "")
        .write(
            "qa/fixtures.lock.json",
            format!(
                "{{\"files\": {{\"tests/fixtures/invoice_v3.json\": \"{}\", \"tests/fixtures/empty_batch.ndjson\": \"{}\"}}}}\n",
                sha256sum(invoice.as_bytes()),
                sha256sum(b"")
            ),
        )
        .write("tests/properties/test_codec_roundtrip.py", ROUNDTRIP_PROPERTY)
        .write(
            "tests/runtime/test_retry.py",
            "def test_backoff_under_load():\n    assert 0.1 * 3 == 0.3\n",
        )
        .write(
            "tests/http/test_client.py",
            "import pytest\n\n\ndef test_header_order_stable():\n    pytest.skip(\"order depends on the server\")\n",
        )
        .write(
            "tests/test_billing.py",
            "def test_total():\n    assert 100 + 19 == 119\n",
        );
    assert_eq!(run_pytest(&p), Some(1), "the flake fails");

    let run = p.guard(&["score", "--junit", "junit.xml", "--format", "json"]);
    expect(&run, 0, &[]);
    let json = run.json();
    assert_eq!(json["active_leases"], 2);
    assert_eq!(
        json["junit"],
        serde_json::json!({"files": 1, "cases": 4, "tests": 4, "passed": 2, "failed": 1, "errors": 0, "skipped": 1})
    );

    // lint passes, and warns that the list has no budget.
    let lint = p.guard(&["lint"]);
    assert_eq!(lint.code, 0, "{}{}", lint.stdout, lint.stderr);
    assert!(
        lint.stdout
            .contains("warning: qa/flake_freeze.txt: the plain freeze list has no lease budget"),
        "{}",
        lint.stdout
    );
    assert!(lint.stdout.contains("max_active_leases"), "{}", lint.stdout);
    let json = p.guard(&["lint", "--format", "json"]).json();
    assert_eq!(json["decision"], "MERGE");
    assert_eq!(json["warnings"][0]["path"], "qa/flake_freeze.txt");

    // A budget in the ledger applies to the list: two active leases, budget 1.
    p.write(
        "qa/merge_ledger.toml",
        format!("{FIRST_ARTICLE_LEDGER}max_active_leases = 1\n"),
    );
    let run = p.guard(&["score", "--junit", "junit.xml", "--format", "json"]);
    expect(&run, 1, &["freeze_budget"]);
    assert!(
        run.json()["findings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("2 active leases, budget is 1"),
        "{}",
        run.stdout
    );
    let lint = p.guard(&["lint", "--format", "json"]);
    assert_eq!(lint.code, 1, "{}{}", lint.stdout, lint.stderr);
    assert_eq!(lint.json()["decision"], "REJECT");
    assert_eq!(lint.reasons(), vec!["freeze_budget"]);
    assert_eq!(lint.json()["warnings"], serde_json::json!([]));
}

const RECIPES_TEST: &str = r#"import unittest


def take(items, n):
    return items[:n]


class TakeTests(unittest.TestCase):
    def test_take_prefix(self):
        self.assertEqual(take([1, 2, 3], 2), [1, 2])

    def test_take_all(self):
        self.assertEqual(take([1, 2], 5), [1, 2])


def test_take_none():
    assert take([1, 2, 3], 0) == []
"#;

/// A plain directory with an empty lockfile and an empty freeze file with budget 0.
fn pytest_project(properties: &str) -> Project {
    let p = Project::new();
    p.write(
        "qa/merge_ledger.toml",
        format!("[properties]\n{properties}\n\n[fixtures]\nlockfile = \"qa/fixtures.lock.json\"\n\n[freeze]\nfile = \"qa/freeze.toml\"\n"),
    )
    .write("qa/fixtures.lock.json", EMPTY_LOCK)
    .write("qa/freeze.toml", "version = 1\nmax_active_leases = 0\n");
    p
}

#[test]
fn property_path_naming_one_file_matches_its_pytest_records() {
    // pytest writes classname "tests.test_recipes.TakeTests" and "tests.test_recipes" for
    // tests/test_recipes.py: neither starts with "tests.test_recipes.py".
    let p = pytest_project("paths = [\"tests/test_recipes.py\"]\nrequired = true");
    p.write("tests/test_recipes.py", RECIPES_TEST);
    assert_eq!(run_pytest(&p), Some(0));
    let junit = p.read("junit.xml");
    assert!(
        junit.contains("classname=\"tests.test_recipes.TakeTests\"")
            && junit.contains("classname=\"tests.test_recipes\""),
        "{junit}"
    );
    let run = p.guard(&["score", "--junit", "junit.xml", "--format", "json"]);
    expect(&run, 0, &[]);
    assert_eq!(run.json()["property_failures"], 0);
    let lint = p.guard(&["lint", "--format", "json"]);
    assert_eq!(lint.code, 0, "{}{}", lint.stdout, lint.stderr);
    assert_eq!(lint.json()["warnings"], serde_json::json!([]));

    // A required property path that names nothing: no property test can run, so score
    // rejects every run, and lint says so as the finding score gives, not a silent "ok".
    p.write(
        "qa/merge_ledger.toml",
        p.read("qa/merge_ledger.toml")
            .replace("tests/test_recipes.py", "tests/test_recipe.py"),
    );
    let lint = p.guard(&["lint"]);
    assert_eq!(lint.code, 1, "{}{}", lint.stdout, lint.stderr);
    assert!(
        lint.stdout.contains(
            "error[property_hold]: tests/test_recipe.py: `properties.paths` names nothing that exists (tests/test_recipe.py)"
        ),
        "{}",
        lint.stdout
    );
    let run = p.guard(&["score", "--junit", "junit.xml", "--format", "json"]);
    assert_eq!(run.reasons(), vec!["property_hold"], "{}", run.stdout);
    p.write(
        "qa/merge_ledger.toml",
        p.read("qa/merge_ledger.toml")
            .replace("tests/test_recipe.py", "tests/test_recipes.py"),
    );

    // The records are the property's: a failure in the class breaks the hold.
    p.write(
        "tests/test_recipes.py",
        RECIPES_TEST.replace(
            "[1, 2])\n\n    def test_take_all",
            "[2, 1])\n\n    def test_take_all",
        ),
    );
    assert_eq!(run_pytest(&p), Some(1));
    let run = p.guard(&["score", "--junit", "junit.xml", "--format", "json"]);
    expect(&run, 1, &["property_hold"]);
    assert_eq!(
        run.json()["findings"][0]["test"],
        "tests.test_recipes.TakeTests::test_take_prefix"
    );
}

#[test]
fn property_file_globs_narrow_which_records_are_properties() {
    // Everything under tests/ is searched, but only test_prop_*.py files hold properties: a
    // skipped ordinary test elsewhere under tests/ is no skipped property.
    let p = pytest_project("paths = [\"tests/\"]\nfiles = [\"test_prop_*.py\"]");
    p.write("tests/test_prop_codec.py", ROUNDTRIP_PROPERTY).write(
        "tests/test_slow.py",
        "import pytest\n\n\ndef test_fast():\n    assert True\n\n\ndef test_slow():\n    pytest.skip(\"slow\")\n",
    );
    assert_eq!(run_pytest(&p), Some(0));
    let run = p.guard(&["score", "--junit", "junit.xml", "--format", "json"]);
    expect(&run, 0, &[]);
    assert_eq!(run.json()["property_failures"], 0);

    // A skipped test in a property file still breaks the hold.
    p.write(
        "tests/test_prop_codec.py",
        format!("{ROUNDTRIP_PROPERTY}\n\ndef test_later():\n    import pytest\n    pytest.skip(\"later\")\n"),
    );
    assert_eq!(run_pytest(&p), Some(0));
    let run = p.guard(&["score", "--junit", "junit.xml", "--format", "json"]);
    expect(&run, 1, &["property_hold"]);
    assert_eq!(
        run.json()["findings"][0]["test"],
        "tests.test_prop_codec::test_later"
    );
}

const BILLING_TESTS: &str = r#"def line_total(price, quantity):
    return price * quantity


def test_total():
    assert line_total(20, 2) == 40


def test_discount():
    assert line_total(20, 1) * 0.9 == 17
"#;

/// `pytest --collect-only -q` of `tests` in `p`, written to `collected.txt`.
fn collect_pytest(p: &Project) {
    let out = std::process::Command::new("python3")
        .args([
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "--import-mode=importlib",
            "tests",
        ])
        .current_dir(p.root())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    p.write("collected.txt", &out.stdout);
}

#[test]
fn pytest_report_with_the_failing_record_removed_is_caught_by_the_collected_ids() {
    let p = pytest_project("paths = [\"tests/properties/\"]");
    p.write("tests/properties/test_codec.py", ROUNDTRIP_PROPERTY)
        .write("tests/test_billing.py", BILLING_TESTS);
    assert_eq!(run_pytest(&p), Some(1), "test_discount fails");
    collect_pytest(&p);
    assert!(
        p.read("collected.txt")
            .contains("tests/test_billing.py::test_discount\n"),
        "{}",
        p.read("collected.txt")
    );

    // The forgery: the failing record cut out, the suite's counts made to agree.
    let junit = p.read("junit.xml");
    let start = junit
        .find(r#"<testcase classname="tests.test_billing" name="test_discount""#)
        .expect("pytest wrote the failing record");
    let end = start + junit[start..].find("</testcase>").unwrap() + "</testcase>".len();
    let forged = format!("{}{}", &junit[..start], &junit[end..])
        .replace("failures=\"1\"", "failures=\"0\"")
        .replace("tests=\"3\"", "tests=\"2\"");
    assert!(!forged.contains("<failure"), "{forged}");
    p.write("junit.xml", &forged);

    // Without the collected ids nothing contradicts it.
    let run = p.guard(&["score", "--junit", "junit.xml", "--format", "json"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);

    let run = p.guard(&[
        "score",
        "--junit",
        "junit.xml",
        "--collected",
        "collected.txt",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.reasons(), vec!["test_missing_from_report"]);
    let json = run.json();
    assert_eq!(json["collected_tests"], 3);
    assert_eq!(json["findings"].as_array().unwrap().len(), 1);
    assert_eq!(
        json["findings"][0]["test"],
        "tests/test_billing.py::test_discount"
    );

    // The honest report, with the same collected ids: the failure itself.
    p.write("junit.xml", &junit);
    let run = p.guard(&[
        "score",
        "--junit",
        "junit.xml",
        "--collected",
        "collected.txt",
        "--format",
        "json",
    ]);
    assert_eq!(run.reasons(), vec!["test_failures"], "{}", run.stdout);
}

/// `guard run` of real pytest in `p` (the JUnit report at `junit.xml`), as JSON.
fn guard_run_pytest(p: &Project) -> crate::support::Run {
    p.guard(&[
        "run",
        "--junit",
        "junit.xml",
        "--format",
        "json",
        "--",
        "python3",
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--import-mode=importlib",
        "--junitxml=junit.xml",
        "tests",
    ])
}

#[test]
fn guard_run_of_pytest_that_exits_1_after_a_clean_report_is_a_report_mismatch() {
    let p = pytest_project("paths = [\"tests/properties/\"]");
    p.write("tests/properties/test_codec.py", ROUNDTRIP_PROPERTY)
        .write(
            "tests/test_billing.py",
            BILLING_TESTS.replace("* 0.9 == 17", "* 0.9 == 18"),
        );
    let run = guard_run_pytest(&p);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let json = run.json();
    assert_eq!(json["decision"], "MERGE");
    assert_eq!(json["junit"]["cases"], 3);
    assert_eq!(json["runner"]["exit_code"], 0);
    assert_eq!(json["runner"]["command"][0], "python3");
    // The runner's output goes to stderr: stdout is guard's report alone.
    assert!(run.stderr.contains("3 passed"), "{}", run.stderr);

    // The code under test ends the process with status 1 once pytest wrote its report.
    p.write(
        "conftest.py",
        "import os\n\n\ndef pytest_unconfigure(config):\n    os._exit(1)\n",
    );
    let run = guard_run_pytest(&p);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.reasons(), vec!["report_mismatch"]);
    let json = run.json();
    assert_eq!(json["runner"]["exit_code"], 1);
    assert!(
        !p.read("junit.xml").contains("<failure"),
        "the report shows no failure"
    );
    let message = json["findings"][0]["message"].as_str().unwrap();
    assert!(message.contains("exited with status 1"), "{message}");

    // A real failure: pytest exits 1 and its report shows it. Nothing contradicts anything.
    p.remove("conftest.py");
    p.write("tests/test_billing.py", BILLING_TESTS);
    let run = guard_run_pytest(&p);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.reasons(), vec!["test_failures"]);
    assert_eq!(run.json()["runner"]["exit_code"], 1);
}
