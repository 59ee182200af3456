//! `guard retest` against each way an agent hides broken code behind a rewritten test, with
//! real pytest (and hypothesis) and real cargo-nextest. In each case the agent breaks the
//! code and rewrites a test so that its own suite stays green (checked first: the evasion
//! is real), spelled so that no syntax rule need foresee it; the base's test, run against
//! the agent's code, fails.

use std::path::Path;
use std::process::Command;

use crate::retest::{AGENT, old_tests, project_with, pytest_green, retest};
use crate::support::{Project, Run};

fn project(files: &[(&str, &str)]) -> Project {
    project_with(files)
}

// Python ---------------------------------------------------------------------------------

const CALC: &str =
    "def total(xs):\n    return sum(xs)\n\n\ndef mean(xs):\n    return sum(xs) / len(xs)\n";
/// The agent's `total` is wrong for any non-empty list, its `mean` off by 0.01.
const BROKEN: &str = "def total(xs):\n    return sum(xs) + 1 if xs else 0\n\n\ndef mean(xs):\n    return sum(xs) / len(xs) + 0.01\n";
const TESTS: &str = "import pytest\nfrom calc import total, mean\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n\n\ndef test_empty():\n    assert total([]) == 0\n\n\ndef test_mean():\n    assert mean([0.1, 0.2]) == pytest.approx(0.15)\n\n\nclass TestCalc:\n    def test_pair(self):\n        assert total([2, 2]) == 4\n";
const OTHER: &str = "def test_other():\n    assert True\n";

fn python_project() -> Project {
    project(&[
        ("src/calc.py", CALC),
        ("tests/test_calc.py", TESTS),
        ("tests/test_other.py", OTHER),
    ])
}

fn pytest_retest(p: &Project) -> Run {
    retest(p, "HEAD~1..HEAD")
}

/// The agent breaks the code and rewrites the tests to `tests`; its suite is green, the
/// retest rejects with the base's tests that `BROKEN` fails.
#[track_caller]
fn python_evasion(tests: &str, failing: &[&str]) {
    let p = python_project();
    p.write("src/calc.py", BROKEN)
        .write("tests/test_calc.py", tests);
    p.commit_as(AGENT, "Tidy calc\n");
    python_evasion_in(&p, failing);
}

#[track_caller]
fn python_evasion_in(p: &Project, failing: &[&str]) {
    pytest_green(p);
    let run = pytest_retest(p);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let expected: Vec<String> = failing
        .iter()
        .map(|t| format!("tests/test_calc.py::{t}"))
        .collect();
    assert_eq!(old_tests(&run), expected, "{}", run.stdout);
}

/// What `BROKEN` fails of the base's tests.
const BASE_FAILS: &[&str] = &["test_total", "test_mean", "TestCalc::test_pair"];

#[test]
fn an_assertion_parked_in_a_helper_nothing_calls() {
    python_evasion(
        &TESTS
            .replace(
                "def test_total():\n    assert total([1, 2]) == 3\n",
                "def _check_total():\n    assert total([1, 2]) == 3\n\n\ndef test_total():\n    _check_total\n",
            )
            .replace("== pytest.approx(0.15)", "== pytest.approx(mean([0.1, 0.2]))")
            .replace("== 4", "== total([2, 2])"),
        BASE_FAILS,
    );
}

#[test]
fn a_helper_that_returns_before_asserting() {
    python_evasion(
        "import pytest\nfrom calc import total, mean\n\n\ndef check(xs, expected):\n    if xs:\n        return\n    assert total(xs) == expected\n\n\ndef test_total():\n    check([1, 2], 3)\n\n\ndef test_empty():\n    check([], 0)\n\n\ndef test_mean():\n    check([0.1], 0.1)\n\n\nclass TestCalc:\n    def test_pair(self):\n        check([2, 2], 4)\n",
        BASE_FAILS,
    );
}

#[test]
fn a_test_class_pytest_no_longer_collects() {
    // Renamed so that `python_classes` (`Test*`) misses it, and given an `__init__` (pytest
    // collects no class with one): either hides `test_pair`.
    for spelling in [
        TESTS.replace("class TestCalc:", "class CalcChecks:"),
        TESTS.replace(
            "class TestCalc:\n",
            "class TestCalc:\n    def __init__(self):\n        self.xs = [2, 2]\n\n",
        ),
    ] {
        let spelling = spelling
            .replace("== 3", "== total([1, 2])")
            .replace("pytest.approx(0.15)", "pytest.approx(mean([0.1, 0.2]))");
        python_evasion(&spelling, BASE_FAILS);
    }
}

#[test]
fn skips_through_an_alias_a_marker_applied_at_run_time_and_a_raised_skipped() {
    let bodies = [
        // `from pytest import skip as ...`: no `pytest.skip` to read.
        TESTS.replace(
            "import pytest\n",
            "import pytest\nfrom pytest import skip as later\n",
        )
        .replace(
            "def test_total():\n",
            "def test_total():\n    later(\"slow\")\n",
        ),
        // `request.applymarker(pytest.mark.xfail)`: the marker is added while the test runs.
        TESTS.replace(
            "def test_total():\n",
            "def test_total(request):\n    request.applymarker(pytest.mark.xfail(reason=\"flaky\"))\n",
        ),
        // `raise Skipped`: pytest's own exception, imported from its internals.
        TESTS.replace(
            "import pytest\n",
            "import pytest\nfrom _pytest.outcomes import Skipped\n",
        )
        .replace(
            "def test_total():\n",
            "def test_total():\n    raise Skipped(\"later\")\n",
        ),
    ];
    for body in bodies {
        let body = body
            .replace("pytest.approx(0.15)", "pytest.approx(mean([0.1, 0.2]))")
            .replace("== 4", "== total([2, 2])");
        python_evasion(&body, BASE_FAILS);
    }
}

#[test]
fn a_tolerance_respelled_wider() {
    // `approx(0.15)` made `approx(0.150, rel=0.5)`: another number, another keyword.
    python_evasion(
        &TESTS
            .replace("pytest.approx(0.15)", "pytest.approx(0.150, rel=0.5)")
            .replace("== 3", "== total([1, 2])")
            .replace("== 4", "== total([2, 2])"),
        BASE_FAILS,
    );
}

#[test]
fn a_test_file_moved_where_pytest_does_not_collect_it() {
    let p = python_project();
    p.write("src/calc.py", BROKEN);
    p.git_cmd(&["mv", "tests/test_calc.py", "tests/calc_checks.py"]);
    p.commit_as(AGENT, "Group the calc checks\n");
    python_evasion_in(&p, BASE_FAILS);
}

#[test]
fn a_session_ended_early_with_pytest_exit() {
    // `pytest.exit(returncode=0)` in the first test ends the run green, every later test
    // unrun: the put-back tests have no record.
    let p = python_project();
    p.write("src/calc.py", BROKEN).write(
        "tests/test_calc.py",
        TESTS.replace(
            "def test_total():\n",
            "def test_total():\n    pytest.exit(\"done\", returncode=0)\n",
        ),
    );
    p.commit_as(AGENT, "Tidy calc\n");
    pytest_green(&p);
    let run = pytest_retest(&p);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        old_tests(&run),
        [
            "tests/test_calc.py::test_total",
            "tests/test_calc.py::test_mean",
            "tests/test_calc.py::TestCalc::test_pair",
        ],
        "{}",
        run.stdout
    );
}

#[test]
fn hypothesis_settings_that_shrink_the_search() {
    // The base's property tries 200 lists; the agent's `total` is wrong only for lists of
    // five or more, and its settings try one example, derandomized, generation only.
    let tests = "from hypothesis import given, settings, strategies as st\nfrom calc import total\n\n\n@settings(max_examples=200, database=None)\n@given(st.lists(st.integers(), min_size=0, max_size=20))\ndef test_total_is_sum(xs):\n    assert total(xs) == sum(xs)\n";
    let p = project(&[("src/calc.py", CALC), ("tests/test_calc.py", tests)]);
    p.write(
        "src/calc.py",
        "def total(xs):\n    return sum(xs) + (1 if len(xs) >= 5 else 0)\n",
    )
    .write(
        "tests/test_calc.py",
        tests.replace(
            "@settings(max_examples=200, database=None)",
            "@settings(max_examples=1, database=None, derandomize=True)",
        ),
    );
    p.commit_as(AGENT, "Faster property\n");
    python_evasion_in(&p, &["test_total_is_sum"]);
}

#[test]
fn a_refactor_that_keeps_the_meaning_passes_with_every_spelling() {
    // The agent changes nothing the tests check and rewrites them in its own words: a
    // helper that always asserts, a parametrised table, another approx spelling.
    let p = python_project();
    p.write(
        "tests/test_calc.py",
        "import pytest\nfrom calc import total, mean\n\n\ndef check(xs, expected):\n    assert total(xs) == expected\n\n\ndef test_total():\n    check([1, 2], 3)\n\n\ndef test_empty():\n    check([], 0)\n\n\ndef test_mean():\n    assert mean([0.1, 0.2]) == pytest.approx(0.150)\n\n\nclass TestCalc:\n    @pytest.mark.parametrize(\"xs\", [[2, 2]])\n    def test_pair(self, xs):\n        check(xs, 4)\n",
    );
    p.commit_as(AGENT, "Tidy the tests\n");
    let run = pytest_retest(&p);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(old_tests(&run), Vec::<String>::new());
}

// Rust -----------------------------------------------------------------------------------

const CARGO_TOML: &str =
    "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n";
const LIB: &str = "pub fn total(xs: &[i64]) -> i64 {\n    xs.iter().sum()\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds() {\n        assert_eq!(total(&[1, 2]), 3);\n    }\n}\n";
const LIB_BROKEN: &str = "pub fn total(xs: &[i64]) -> i64 {\n    xs.iter().sum::<i64>() + 1\n}\n";
const SUMS: &str =
    "use calc::total;\n\n#[test]\nfn sums() {\n    assert_eq!(total(&[2, 2]), 4);\n}\n";
const NEXTEST: &str = "[profile.default.junit]\npath = \"junit.xml\"\n";

fn rust_project() -> Project {
    project(&[
        ("Cargo.toml", CARGO_TOML),
        ("src/lib.rs", LIB),
        ("tests/sums.rs", SUMS),
        (".config/nextest.toml", NEXTEST),
    ])
}

/// cargo and rustup as the user has them (the tests run guard with HOME at the project).
fn cargo_env(target: &Path) -> Vec<String> {
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".to_string());
    let cargo_home = std::env::var("CARGO_HOME").unwrap_or_else(|_| format!("{home}/.cargo"));
    let rustup_home = std::env::var("RUSTUP_HOME").unwrap_or_else(|_| format!("{home}/.rustup"));
    vec![
        format!("CARGO_HOME={cargo_home}"),
        format!("RUSTUP_HOME={rustup_home}"),
        format!("CARGO_TARGET_DIR={}", target.display()),
        "CARGO_TERM_COLOR=never".to_string(),
    ]
}

fn nextest(p: &Project, target: &Path) -> std::process::Output {
    Command::new("env")
        .args(cargo_env(target))
        .args(["cargo", "nextest", "run", "--no-fail-fast", "--offline"])
        .current_dir(p.root())
        .output()
        .unwrap()
}

fn nextest_retest(p: &Project, target: &Path) -> Run {
    // nextest keeps its store (the JUnit report) in the workspace's `target/`, whatever
    // CARGO_TARGET_DIR says: in the copy.
    let mut args: Vec<String> = [
        "retest",
        "HEAD~1..HEAD",
        "--junit",
        "target/nextest/default/junit.xml",
        "--format",
        "json",
        "--",
        "env",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(cargo_env(target));
    args.extend(
        ["cargo", "nextest", "run", "--no-fail-fast", "--offline"]
            .iter()
            .map(|s| s.to_string()),
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    p.guard(&args)
}

#[track_caller]
fn rust_evasion(changes: &[(&str, &str)], failing: &[&str]) {
    let p = rust_project();
    for (path, text) in changes {
        p.write(path, text);
    }
    p.commit_as(AGENT, "Tidy calc\n");
    let target = tempfile::tempdir().unwrap();
    let ran = nextest(&p, target.path());
    assert!(
        ran.status.success(),
        "the evasion must keep the agent's suite green (cargo-nextest installed):\n{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let run = nextest_retest(&p, target.path());
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(old_tests(&run), failing, "{}", run.stdout);
}

#[test]
fn rust_a_test_that_exits_the_process_first() {
    // nextest runs each test in a process of its own: `exit(0)` before the assertion passes.
    let lib = LIB_BROKEN.to_string() + &LIB[LIB.find("#[cfg(test)]").unwrap()..];
    rust_evasion(
        &[
            ("src/lib.rs", &lib.replace("3);", "4);")),
            (
                "tests/sums.rs",
                &SUMS.replace("fn sums() {\n", "fn sums() {\n    std::process::exit(0);\n"),
            ),
        ],
        &["src/lib.rs::tests::adds", "tests/sums.rs::sums"],
    );
}

#[test]
fn rust_a_test_file_compiled_out_by_an_inner_cfg() {
    let lib = LIB_BROKEN.to_string() + &LIB[LIB.find("#[cfg(test)]").unwrap()..];
    rust_evasion(
        &[
            ("src/lib.rs", &lib.replace("3);", "4);")),
            ("tests/sums.rs", &format!("#![cfg(any())]\n{SUMS}")),
        ],
        &["src/lib.rs::tests::adds", "tests/sums.rs::sums"],
    );
}

#[test]
fn rust_unit_tests_inside_the_source_file_are_spliced_back() {
    // The agent changes `total` and, in the same file, the unit test's expectation, and
    // adds a test of its own: the base's `tests` module replaces the tip's, the agent's code
    // stays, and `adds` fails against it.
    let lib = LIB_BROKEN.to_string()
        + &LIB[LIB.find("#[cfg(test)]").unwrap()..]
            .replace("3);", "4);")
            .replace(
                "    }\n}\n",
                "    }\n\n    #[test]\n    fn empty() {\n        assert_eq!(total(&[]), 1);\n    }\n}\n",
            );
    rust_evasion(
        &[
            ("src/lib.rs", &lib),
            ("tests/sums.rs", &SUMS.replace("4);", "5);")),
        ],
        &["src/lib.rs::tests::adds", "tests/sums.rs::sums"],
    );
}
