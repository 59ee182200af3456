//! Proven coverage from one run: real pytest with pytest-cov records which test ran each line
//! (`--cov-context=test`, then `coverage json --show-contexts`), and guard leaves out the
//! lines only a frozen test ran. The figure must be the one the two-run way gives (a second
//! run with the frozen tests deselected by `guard deselect`).

use std::path::Path;
use std::process::Command;

use crate::support::{Project, Run};

/// Code under test: `add` is covered by an ordinary test, `big` only by the frozen one.
/// Statements (coverage.py counts them): lines 1, 2, 5, 6, 7, 8, 11, 12: eight.
const CALC: &str = "def add(a, b):\n    return a + b\n\n\ndef big(x):\n    if x > 10:\n        return \"big\"\n    return \"small\"\n\n\ndef unused():\n    return 42\n";

/// `test_big` is flaky (it fails here) and frozen; it alone runs `big`.
const TESTS: &str = "from calc import add, big\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\ndef test_big():\n    assert big(11) == \"big\"\n    assert big(1) == \"small\"\n    assert False, \"flaky on CI\"\n";

const FROZEN: &str = "tests/test_calc.py::test_big";

/// The project: the code, its tests, a ledger whose floor is `floor`, and a lease on
/// `test_big`.
fn project(floor: u32) -> Project {
    let p = Project::new();
    p.write("src/calc/__init__.py", CALC)
        .write("tests/test_calc.py", TESTS)
        .write(
            "qa/merge_ledger.toml",
            format!("version = 1\n\n[properties]\nrequired = false\n\n[fixtures]\nlockfile = \"qa/fixtures.lock.json\"\n\n[freeze]\nfile = \"qa/freeze.toml\"\n\n[coverage]\nmin_proven = {floor}.0\n"),
        )
        .write("qa/fixtures.lock.json", "{\"files\": {}}\n")
        .write(
            "qa/freeze.toml",
            format!("version = 1\nmax_active_leases = 1\n\n[[leases]]\nnodeid = \"{FROZEN}\"\nreason = \"flaky on CI\"\nowner = \"calc-team\"\nexpires = \"2099-12-31\"\n"),
        );
    p
}

/// Runs `python3 -m MODULE ARGS` in `dir` (with `src` importable); its output.
fn python(dir: &Path, module: &str, args: &[&str]) -> std::process::Output {
    Command::new("python3")
        .arg("-m")
        .arg(module)
        .args(args)
        .current_dir(dir)
        .env("PYTHONPATH", dir.join("src"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env_remove("COVERAGE_FILE")
        .output()
        .expect("python3 runs")
}

/// Runs pytest with pytest-cov and `extra` arguments; asserts it ran (exit 0 or 1).
fn pytest_cov(dir: &Path, extra: &[&str]) {
    let mut args = vec![
        "-q",
        "-p",
        "no:cacheprovider",
        "--cov=calc",
        "--cov-report=",
    ];
    args.extend_from_slice(extra);
    args.push("tests");
    let out = python(dir, "pytest", &args);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "pytest and pytest-cov must be installed (`python3 -m pip install pytest pytest-cov`): {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `coverage json` of the last run into `out`, with `extra` options.
fn coverage_json(dir: &Path, out: &str, extra: &[&str]) {
    let mut args = vec!["json", "-o", out];
    args.extend_from_slice(extra);
    let run = python(dir, "coverage", &args);
    assert!(
        run.status.success(),
        "coverage json: {}",
        String::from_utf8_lossy(&run.stderr)
    );
}

fn score(p: &Project, coverage: &str) -> Run {
    p.guard(&[
        "score",
        "--junit",
        "junit.xml",
        "--coverage",
        coverage,
        "--format",
        "json",
    ])
}

#[test]
fn one_run_with_contexts_proves_what_the_run_with_frozen_tests_deselected_proves() {
    let p = project(60);
    // One run, every test included, each line's tests recorded.
    pytest_cov(p.root(), &["--cov-context=test", "--junitxml=junit.xml"]);
    coverage_json(p.root(), "contexts.json", &["--show-contexts"]);
    let report: serde_json::Value = serde_json::from_str(&p.read("contexts.json")).unwrap();
    let file = &report["files"]["src/calc/__init__.py"];
    assert_eq!(
        file["contexts"]["7"],
        serde_json::json!(["tests/test_calc.py::test_big|run"]),
        "pytest-cov's contexts as the README describes them"
    );
    // Every test ran: coverage.py's own figure counts the frozen test's lines (7 of 8).
    assert_eq!(report["totals"]["percent_covered"], 87.5);

    // The two-run way: the frozen test deselected, as `guard deselect` says.
    let collected = python(
        p.root(),
        "pytest",
        &["-q", "--collect-only", "-p", "no:cacheprovider", "tests"],
    );
    p.write("collected.txt", &collected.stdout);
    let deselect = p.guard(&["deselect", "--collected", "collected.txt"]);
    assert_eq!(deselect.code, 0, "{}", deselect.stderr);
    assert_eq!(deselect.stdout, format!("--deselect={FROZEN}\n"));
    pytest_cov(p.root(), &[deselect.stdout.trim()]);
    coverage_json(p.root(), "deselected.json", &[]);

    // Both give 4 of 8: lines 1, 5 and 11 ran at import, line 2 under test_add.
    let two_runs = score(&p, "deselected.json");
    let one_run = score(&p, "contexts.json");
    assert_eq!(two_runs.json()["proven_coverage_percent"], 50.0);
    assert_eq!(
        one_run.json()["proven_coverage_percent"],
        two_runs.json()["proven_coverage_percent"]
    );
    // Below the floor of 60: rejected, saying what was left out.
    assert_eq!(one_run.code, 1, "{}", one_run.stdout);
    assert_eq!(one_run.reasons(), ["proven_coverage"]);
    let message = one_run.json()["findings"][0]["message"].clone();
    assert_eq!(
        message,
        "proven coverage 50.00% is below the floor of 60% (3 executed lines only frozen tests ran, which do not count)"
    );

    // The same report without the lease: every line a test ran counts.
    p.write("qa/freeze.toml", "version = 1\nmax_active_leases = 1\n");
    let unfrozen = score(&p, "contexts.json");
    assert_eq!(unfrozen.json()["proven_coverage_percent"], 87.5);
}

#[test]
fn frozen_lease_in_the_dotted_form_matches_the_contexts_too() {
    let p = project(60);
    p.write(
        "qa/freeze.toml",
        "version = 1\nmax_active_leases = 1\n\n[[leases]]\nnodeid = \"tests.test_calc::test_big\"\nreason = \"flaky on CI\"\nowner = \"calc-team\"\nexpires = \"2099-12-31\"\n",
    );
    pytest_cov(p.root(), &["--cov-context=test", "--junitxml=junit.xml"]);
    coverage_json(p.root(), "contexts.json", &["--show-contexts"]);
    assert_eq!(
        score(&p, "contexts.json").json()["proven_coverage_percent"],
        50.0
    );
}

#[test]
fn branch_coverage_with_frozen_contexts_cannot_be_judged() {
    let p = project(60);
    pytest_cov(
        p.root(),
        &["--cov-branch", "--cov-context=test", "--junitxml=junit.xml"],
    );
    coverage_json(p.root(), "contexts.json", &["--show-contexts"]);
    let run = score(&p, "contexts.json");
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("contexts.json: frozen tests ran in this run (3 executed lines only they ran), and the report measured branches"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("guard deselect"), "{}", run.stderr);
    // The run with the frozen test deselected needs no contexts and keeps its branches.
    pytest_cov(
        p.root(),
        &[
            "--cov-branch",
            "--cov-context=test",
            &format!("--deselect={FROZEN}"),
        ],
    );
    coverage_json(p.root(), "deselected.json", &["--show-contexts"]);
    let run = score(&p, "deselected.json");
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.reasons(), ["proven_coverage"]);
}

/// The README's one-run command, as written there.
fn readme_one_run_command() -> String {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    readme
        .lines()
        .find(|l| l.starts_with("pytest ") && l.contains("--cov-context=test"))
        .expect("the README shows the one-run coverage command")
        .split("   #")
        .next()
        .unwrap()
        .trim()
        .to_string()
}

#[test]
fn the_readmes_one_run_command_writes_the_report_when_a_test_fails() {
    // A failing test is the case the one run exists for (the frozen test fails here): the
    // command was `pytest ... && coverage json ...`, which writes no report then.
    let p = project(60);
    let command = readme_one_run_command();
    let script = format!(
        "pytest() {{ python3 -m pytest -p no:cacheprovider \"$@\"; }}\ncoverage() {{ python3 -m coverage \"$@\"; }}\n{command}\n"
    );
    let out = Command::new("bash")
        .args(["-c", &script])
        .current_dir(p.root())
        .env("PYTHONPATH", p.root().join("src"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env_remove("COVERAGE_FILE")
        .output()
        .unwrap();
    assert!(
        p.path("coverage.json").is_file(),
        "{command}: no coverage.json\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // And guard reads it: the frozen test's lines are left out.
    let json = score(&p, "coverage.json").json();
    assert!(json["proven_coverage_percent"].is_number(), "{json:#}");
}

/// The proven coverage guard reads from one run with contexts, and from the run with the
/// frozen test deselected, of the project as it is (JSON reports of `score`).
fn one_run_and_two_runs(p: &Project) -> (serde_json::Value, serde_json::Value) {
    pytest_cov(p.root(), &["--cov-context=test", "--junitxml=junit.xml"]);
    coverage_json(p.root(), "contexts.json", &["--show-contexts"]);
    pytest_cov(p.root(), &[&format!("--deselect={FROZEN}")]);
    coverage_json(p.root(), "deselected.json", &[]);
    (
        score(p, "contexts.json").json(),
        score(p, "deselected.json").json(),
    )
}

#[test]
fn a_statement_over_several_lines_counts_as_in_the_deselected_run() {
    // coverage.py counts a multi-line `if (` on its first line and records the tests that
    // ran it on the lines of its conditions: read line by line, one run with contexts gave
    // 75% here where the run with the frozen test deselected gives 100%. (The frozen test
    // runs the code too, so that the contexts decide.)
    let p = project(60);
    p.write(
        "src/calc/__init__.py",
        "def check(a, b):\n    if (\n        a > 0\n        and b > 0\n    ):\n        return True\n    return False\n",
    );
    p.write(
        "tests/test_calc.py",
        "from calc import check\n\n\ndef test_check():\n    assert check(1, 1)\n    assert not check(0, 1)\n\n\ndef test_big():\n    assert check(5, 5)\n    assert False, \"flaky on CI\"\n",
    );
    let (one_run, two_runs) = one_run_and_two_runs(&p);
    assert_eq!(two_runs["proven_coverage_percent"], 100.0, "{two_runs:#}");
    assert_eq!(one_run["proven_coverage_percent"], 100.0, "{one_run:#}");
}

#[test]
fn a_line_only_the_frozen_test_ran_gets_nothing_from_excluded_lines_below_it() {
    // coverage.py records the tests that ran excluded lines (`# pragma: no cover`) too: read
    // as part of the statement above them, they made a line only the frozen test ran count.
    let p = project(60);
    p.write(
        "src/calc/__init__.py",
        "class R:\n    def area(self):\n        return 2\n\n    def __repr__(self):  # pragma: no cover\n        return \"R\"\n\n\ndef f():\n    return 1\n",
    );
    p.write(
        "tests/test_calc.py",
        "from calc import R, f\n\n\ndef test_big():\n    assert R().area() == 2\n    assert False, \"flaky on CI\"\n\n\ndef test_add():\n    assert repr(R()) == \"R\"\n    assert f() == 1\n",
    );
    let (one_run, two_runs) = one_run_and_two_runs(&p);
    assert_eq!(
        one_run["proven_coverage_percent"], two_runs["proven_coverage_percent"],
        "{one_run:#}\n{two_runs:#}"
    );
    assert_eq!(two_runs["proven_coverage_percent"], 80.0, "{two_runs:#}");
}
