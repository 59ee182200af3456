//! `[baseline]`: the tests of the base revision's reports compared with the tests now, on
//! reports written by real pytest runs. A test that passed there and is gone or skipped now is
//! a finding; a human commit with `Test-Removal: human` may remove it, an agent commit not.

use std::path::{Path, PathBuf};

use crate::support::{Project, Run};

const AGENT: (&str, &str) = ("Cursor Agent", "cursoragent@cursor.com");
const HUMAN: (&str, &str) = ("Dev Human", "dev@example.com");

/// A ledger with no property suite, the test agent, and `extra` tables.
fn ledger(extra: &str) -> String {
    format!(
        "version = 1\n\n[properties]\nrequired = false\n\n[fixtures]\nlockfile = \"qa/fixtures.lock.json\"\n\n[freeze]\nfile = \"qa/flake_freeze.txt\"\n\n[agents]\nemails = ['cursoragent@cursor.com']\n\n{extra}\n"
    )
}

const TESTS: &str =
    "def test_adds():\n    assert 1 + 1 == 2\n\n\ndef test_subtracts():\n    assert 2 - 1 == 1\n";
const KEPT: &str = "def test_kept():\n    assert True\n";

/// A project with the ledger (`extra` tables), `tests/test_calc.py` and `tests/test_kept.py`.
fn project(p: &Project, extra: &str) {
    p.write("qa/merge_ledger.toml", ledger(extra))
        .write("qa/fixtures.lock.json", "{\"files\": {}}\n")
        .write("qa/flake_freeze.txt", "")
        .write("tests/test_calc.py", TESTS)
        .write("tests/test_kept.py", KEPT);
}

/// Runs real pytest on `tests/` in `dir`, writing its JUnit report to `out`.
fn pytest(dir: &Path, out: &Path) {
    let run = std::process::Command::new("python3")
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"])
        .arg(format!("--junitxml={}", out.display()))
        .current_dir(dir)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("python3 runs");
    assert!(
        run.status.code() == Some(0),
        "pytest must be installed and pass: {}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
}

/// `guard score --format json` of `now` against the baseline `base`.
fn score(p: &Project, now: &Path, base: &Path) -> Run {
    p.guard(&[
        "score",
        "--format",
        "json",
        "--junit",
        now.to_str().unwrap(),
        "--baseline-junit",
        base.to_str().unwrap(),
    ])
}

/// (code, test) of each finding of a JSON report.
fn findings(run: &Run) -> Vec<(String, String)> {
    run.json()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                f["test"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// Reports live outside the work tree, like CI's.
fn reports() -> (Project, PathBuf, PathBuf) {
    let out = Project::new();
    let base = out.path("base.xml");
    let now = out.path("now.xml");
    (out, base, now)
}

#[test]
fn deleted_test_is_test_vanished_by_name() {
    let p = Project::new();
    project(&p, "");
    let (_out, base, now) = reports();
    pytest(p.root(), &base);
    p.write(
        "tests/test_calc.py",
        "def test_adds():\n    assert 1 + 1 == 2\n",
    );
    pytest(p.root(), &now);
    let run = score(&p, &now, &base);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        findings(&run),
        vec![(
            "test_vanished".to_string(),
            "tests.test_calc::test_subtracts".to_string()
        )]
    );
    // Without a baseline the same run merges: only the comparison finds it.
    let plain = p.guard(&[
        "score",
        "--format",
        "json",
        "--junit",
        now.to_str().unwrap(),
    ]);
    assert_eq!(plain.code, 0, "{}", plain.stdout);
}

#[test]
fn skip_marker_added_is_test_newly_skipped() {
    let p = Project::new();
    project(&p, "");
    let (_out, base, now) = reports();
    pytest(p.root(), &base);
    p.write(
        "tests/test_calc.py",
        "import pytest\n\n\ndef test_adds():\n    assert 1 + 1 == 2\n\n\n@pytest.mark.skip(reason=\"later\")\ndef test_subtracts():\n    assert 2 - 1 == 1\n\n\n@pytest.mark.xfail(reason=\"later\")\ndef test_kept_in_calc():\n    assert False\n",
    );
    p.write(
        "tests/test_kept.py",
        "import pytest\n\n\n@pytest.mark.xfail(reason=\"x\")\ndef test_kept():\n    assert False\n",
    );
    pytest(p.root(), &now);
    let run = score(&p, &now, &base);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        findings(&run),
        vec![
            (
                "test_newly_skipped".to_string(),
                "tests.test_calc::test_subtracts".to_string()
            ),
            (
                "test_newly_skipped".to_string(),
                "tests.test_kept::test_kept".to_string()
            ),
        ]
    );
}

/// A test parametrised with a value that differs per run.
fn stamped(value: &str) -> String {
    format!(
        "import pytest\n\n\n@pytest.mark.parametrize(\"at\", [\"{value}\"])\ndef test_stamp(at):\n    assert at\n"
    )
}

#[test]
fn ignored_parametrised_ids_come_and_go() {
    for (extra, expected) in [
        ("", vec!["test_vanished"]),
        (
            "[baseline]\nignore = [\"tests/test_stamp.py::test_stamp[*]\"]\n",
            vec![],
        ),
    ] {
        let p = Project::new();
        project(&p, extra);
        let (_out, base, now) = reports();
        p.write("tests/test_stamp.py", stamped("run-1"));
        pytest(p.root(), &base);
        p.write("tests/test_stamp.py", stamped("run-2"));
        pytest(p.root(), &now);
        let run = score(&p, &now, &base);
        let codes: Vec<String> = findings(&run).into_iter().map(|f| f.0).collect();
        assert_eq!(codes, expected, "ledger {extra:?}: {}", run.stdout);
        if expected.is_empty() {
            assert_eq!(run.code, 0);
        } else {
            assert_eq!(findings(&run)[0].1, "tests.test_stamp::test_stamp[run-1]");
        }
    }
}

#[test]
fn vanished_warn_merges_with_a_warning() {
    let p = Project::new();
    project(&p, "[baseline]\nvanished = \"warn\"\n");
    let (_out, base, now) = reports();
    pytest(p.root(), &base);
    p.remove("tests/test_kept.py");
    pytest(p.root(), &now);
    let run = score(&p, &now, &base);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let json = run.json();
    assert_eq!(json["decision"], "MERGE");
    assert_eq!(json["warnings"][0]["code"], "test_vanished");
    assert_eq!(json["warnings"][0]["test"], "tests.test_kept::test_kept");
    let text = p.guard(&[
        "score",
        "--junit",
        now.to_str().unwrap(),
        "--baseline-junit",
        base.to_str().unwrap(),
    ]);
    assert_eq!(text.code, 0);
    assert!(
        text.stdout
            .lines()
            .any(|l| l.starts_with("warning[test_vanished]: ")
                && l.contains("tests.test_kept::test_kept")),
        "{}",
        text.stdout
    );
}

#[test]
fn bad_baseline_values_are_errors_with_their_line() {
    let p = Project::new();
    project(&p, "[baseline]\nvanished = \"maybe\"\n");
    let run = p.guard(&["lint"]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(
        run.stderr.contains("qa/merge_ledger.toml:") && run.stderr.contains("`baseline.vanished`"),
        "{}",
        run.stderr
    );
    project(&p, "[baseline]\nvanish = \"warn\"\n");
    let run = p.guard(&["lint"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("vanish"), "{}", run.stderr);
    // A baseline report that does not exist cannot be judged.
    project(&p, "");
    let (_out, base, now) = reports();
    pytest(p.root(), &now);
    let run = score(&p, &now, &base);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
}

/// A git project whose first commit (a human's) holds the ledger and the tests; the base
/// report is of that commit. Returns the base commit.
fn repo_with_tests(base_report: &Path) -> (Project, String) {
    let p = Project::git();
    project(&p, "");
    let base = p.commit_as(
        HUMAN,
        "Add tests\n\nLedger-Change: human\nFixture-Lock: human\nFreeze-Lease: human\n",
    );
    pytest(p.root(), base_report);
    (p, base)
}

fn check(p: &Project, base: &str, now: &Path, baseline: &Path) -> Run {
    p.guard(&[
        "check",
        &format!("{base}..HEAD"),
        "--format",
        "json",
        "--junit",
        now.to_str().unwrap(),
        "--baseline-junit",
        baseline.to_str().unwrap(),
    ])
}

#[test]
fn check_lets_a_human_remove_a_test_with_the_trailer() {
    let (_out, base_report, now) = reports();
    let (p, base) = repo_with_tests(&base_report);
    p.remove("tests/test_kept.py");
    p.commit_as(HUMAN, "Drop an obsolete test\n\nTest-Removal: human\n");
    pytest(p.root(), &now);
    let run = check(&p, &base, &now, &base_report);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(findings(&run), vec![]);

    // Without the trailer the same human commit is named.
    p.git_as(
        HUMAN,
        &["commit", "-q", "--amend", "-m", "Drop an obsolete test"],
    );
    let run = check(&p, &base, &now, &base_report);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let json = run.json();
    assert_eq!(json["findings"][0]["code"], "test_vanished");
    assert_eq!(json["findings"][0]["commit"], p.short("HEAD"));
}

#[test]
fn a_trailer_on_the_merge_does_not_waive_a_removal_made_on_the_merged_branch() {
    // The trailer belongs on the commit that removes the test; a merge only brings it.
    let (_out, base_report, now) = reports();
    let (p, base) = repo_with_tests(&base_report);
    p.git_cmd(&["checkout", "-q", "-b", "side"]);
    p.remove("tests/test_kept.py");
    let removal = p.commit_as(HUMAN, "Drop an obsolete test\n");
    p.git_cmd(&["checkout", "-q", "-"]);
    p.write("README.md", "unrelated\n");
    p.commit_as(HUMAN, "Docs");
    p.git_as(
        HUMAN,
        &[
            "merge",
            "-q",
            "--no-ff",
            "side",
            "-m",
            "Merge side\n\nTest-Removal: human",
        ],
    );
    pytest(p.root(), &now);
    let run = check(&p, &base, &now, &base_report);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let json = run.json();
    assert_eq!(json["findings"][0]["code"], "test_vanished", "{json:#}");
    assert_eq!(json["findings"][0]["commit"], p.short(&removal));
}

#[test]
fn check_with_a_baseline_and_no_current_report_is_junit_missing() {
    // A baseline alone compares nothing: the run must not pass as if it had been compared.
    let (_out, base_report, _now) = reports();
    let (p, base) = repo_with_tests(&base_report);
    p.remove("tests/test_kept.py");
    p.commit_as(AGENT, "Remove a slow test");
    let run = p.guard(&[
        "check",
        &format!("{base}..HEAD"),
        "--format",
        "json",
        "--baseline-junit",
        base_report.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    // The agent's deletion is also a weakened test, whatever the reports say.
    assert_eq!(run.reasons(), vec!["junit_missing", "weakened_test"]);
}

#[test]
fn check_names_the_agent_commit_that_removed_a_test() {
    let (_out, base_report, now) = reports();
    let (p, base) = repo_with_tests(&base_report);
    p.write("README.md", "unrelated\n");
    p.commit_as(HUMAN, "Docs");
    p.remove("tests/test_kept.py");
    // The agent copies the human trailer: an agent commit never waives.
    let agent = p.commit_as(AGENT, "Remove a slow test\n\nTest-Removal: human\n");
    p.write("README.md", "more\n");
    p.commit_as(HUMAN, "More docs");
    pytest(p.root(), &now);
    let run = check(&p, &base, &now, &base_report);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let json = run.json();
    let codes: Vec<&str> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    // The deletion in the agent's commit is a weakened test too (`weakened.rs`).
    assert_eq!(codes, ["weakened_test", "test_vanished"], "{}", run.stdout);
    assert_eq!(json["findings"][0]["commit"], p.short(&agent));
    let f = &json["findings"][1];
    assert_eq!(f["code"], "test_vanished");
    assert_eq!(f["test"], "tests.test_kept::test_kept");
    assert_eq!(f["path"], "tests/test_kept.py");
    assert_eq!(f["commit"], p.short(&agent));
    assert_eq!(f["subject"], "Remove a slow test");
}

#[test]
fn check_names_the_agent_commit_that_skipped_a_test() {
    let (_out, base_report, now) = reports();
    let (p, base) = repo_with_tests(&base_report);
    p.write(
        "tests/test_calc.py",
        format!(
            "import pytest\n\n\n{}",
            TESTS.replace(
                "def test_subtracts",
                "@pytest.mark.skip\ndef test_subtracts"
            )
        ),
    );
    let agent = p.commit_as(AGENT, "Skip a flaky test");
    pytest(p.root(), &now);
    let run = check(&p, &base, &now, &base_report);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let json = run.json();
    // The skip marker in the agent's commit is a weakened test too (`weakened.rs`).
    assert_eq!(run.reasons(), ["test_newly_skipped", "weakened_test"]);
    let f = &json["findings"][1];
    assert_eq!(f["code"], "test_newly_skipped");
    assert_eq!(f["test"], "tests.test_calc::test_subtracts");
    assert_eq!(f["commit"], p.short(&agent));
}

#[test]
fn deselect_added_to_the_harness_is_test_vanished() {
    // `addopts = --deselect ...` in pytest.ini: the test is no longer run, and nothing in the
    // run's own report says so; the base's report does.
    let p = Project::new();
    project(&p, "");
    let (_out, base, now) = reports();
    pytest(p.root(), &base);
    p.write(
        "pytest.ini",
        "[pytest]\naddopts = --deselect tests/test_calc.py::test_subtracts\n",
    );
    pytest(p.root(), &now);
    let run = score(&p, &now, &base);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        findings(&run),
        vec![(
            "test_vanished".to_string(),
            "tests.test_calc::test_subtracts".to_string()
        )]
    );
}

#[test]
fn a_test_gone_from_a_cargo_nextest_report_is_test_vanished_by_its_nextest_id() {
    // The base is real cargo-nextest output (tests/data/junit/nextest.xml, regenerated by
    // tests/data/regen-junit.sh); now is the same run without one of its passing tests, as
    // when the test is deleted or filtered out.
    let p = Project::new();
    project(&p, "");
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/junit/nextest.xml");
    let report = std::fs::read_to_string(&data).unwrap();
    let gone = "        <testcase name=\"tests::parses_seconds\" classname=\"nextest-sample\"";
    let line = report
        .lines()
        .find(|l| l.starts_with(gone))
        .expect("the nextest sample has tests::parses_seconds");
    let (_out, base, now) = reports();
    std::fs::write(&base, &report).unwrap();
    std::fs::write(&now, report.replace(&format!("{line}\n"), "")).unwrap();
    let run = score(&p, &now, &base);
    // The sample's failing tests fail in both runs (test_failures); the comparison adds the
    // test that is gone, by the id nextest gives it.
    let vanished: Vec<(String, String)> = findings(&run)
        .into_iter()
        .filter(|(code, _)| code == "test_vanished")
        .collect();
    assert_eq!(
        vanished,
        vec![(
            "test_vanished".to_string(),
            "nextest-sample::tests::parses_seconds".to_string()
        )],
        "{}",
        run.stdout
    );
}
