//! `guard init` on projects laid out as real ones are (each modelled on one tried by hand:
//! pytest's own repository, rand's Cargo workspace, attrs with hypothesis): the ledger it
//! writes lints clean, scores the project's green run MERGE, and still catches an agent.

use crate::support::server::Server;
use crate::support::{Project, Run};

/// pytest's own layout: tests under `testing/`, and `testing/python/*.py` collected whatever
/// their names (pytest's pyproject.toml, abridged).
const PYTEST_PYPROJECT: &str = "[project]\nname = \"pytest\"\n\n[tool.pytest]\npython_files = [\"test_*.py\", \"*_test.py\", \"testing/python/*.py\"]\npython_classes = [\"Test\", \"Acceptance\"]\ntestpaths = [\"testing\"]\n";

/// A test file named as pytest's `testing/python/approx.py` is: no `test_` prefix.
const APPROX: &str = "from pytest import approx\n\n\nclass TestApprox:\n    def test_repr_string(self):\n        assert repr(approx(1.0)) == \"1.0 ± 1.0e-06\"\n        assert approx(1.0) == 1.0\n";

/// `guard init` in `p`, which must succeed; its stdout.
fn init(p: &Project) -> String {
    let run = p.guard(&["init"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    run.stdout
}

fn lint_clean(p: &Project) {
    let run = p.guard(&["lint"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.starts_with("lint: ok"), "{}", run.stdout);
}

fn assert_decision(run: &Run, code: i32, reasons: &[&str]) {
    assert_eq!(run.code, code, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.reasons(), reasons, "{}", run.stdout);
}

#[test]
fn init_reads_pytests_own_layout_and_the_hook_then_judges_testing_python() {
    // The ledger guard init writes for pytest's layout.
    let scratch = Project::git();
    scratch.write("pyproject.toml", PYTEST_PYPROJECT);
    scratch.write("testing/python/approx.py", APPROX);
    let said = init(&scratch);
    assert!(
        said.contains("test files ([tests] paths): testing/**, **/test_*.py, **/*_test.py, **/testing/python/*.py"),
        "{said}"
    );
    lint_clean(&scratch);
    let ledger = scratch.read("qa/merge_ledger.toml");

    // On a server guarded by it, an agent that drops an assertion of testing/python/approx.py
    // is rejected. The hook also reads pytest's settings at the base, so a ledger whose test
    // paths leave the file out (the embedded ledger's: tests/**, test_*.py, *_test.py)
    // catches it too; only where pytest itself does not collect the file (no testpaths, no
    // `testing/python/*.py` in python_files) is it no test file, and the push lands.
    let default_paths = ledger.replace(
        "paths = [\"testing/**\", \"**/test_*.py\", \"**/*_test.py\", \"**/testing/python/*.py\"]",
        "paths = [\"tests/**\", \"**/test_*.py\", \"**/*_test.py\"]",
    );
    assert_ne!(default_paths, ledger);
    let not_collected =
        "[project]\nname = \"pytest\"\n\n[tool.pytest]\npython_files = [\"test_*.py\"]\n";
    for (ledger, pyproject, rejected) in [
        (&ledger, PYTEST_PYPROJECT, true),
        (&default_paths, PYTEST_PYPROJECT, true),
        (&default_paths, not_collected, false),
    ] {
        let s = Server::with_ledger(ledger, |_| {});
        s.write("pyproject.toml", pyproject);
        s.write("testing/python/approx.py", APPROX);
        s.commit("Add approx and its tests\n\nTest-Harness: human\n");
        s.push(&["origin", "main"]).assert_accepted();
        s.write(
            "testing/python/approx.py",
            &APPROX.replace("        assert approx(1.0) == 1.0\n", ""),
        );
        let commit = s.agent_commit("Simplify the approx tests\n");
        let pushed = s.push(&["origin", "main"]);
        if rejected {
            pushed.assert_rejected_with(&format!(
                "remote: error: refs/heads/main: [weakened_test] {} \"Simplify the approx tests\" testing/python/approx.py:5",
                s.short(&commit)
            ));
        } else {
            pushed.assert_accepted();
        }
    }
}

/// A nextest JUnit report of rand's workspace, in the form cargo-nextest 0.9 writes it (the
/// binary ids and test names as in a real run of rand at 0bc3f652c4~1): the root crate's unit
/// tests and rand_distr's `value_stability` integration test.
fn rand_report(with_value_stability: bool) -> String {
    let mut suites = String::from(
        "<testsuite name=\"rand\" tests=\"1\" disabled=\"0\" errors=\"0\" failures=\"0\"><testcase name=\"distr::bernoulli::test::bernoulli_distributions_can_be_compared\" classname=\"rand\" time=\"0.006\"/></testsuite>",
    );
    if with_value_stability {
        suites.push_str("<testsuite name=\"rand_distr::value_stability\" tests=\"2\" disabled=\"0\" errors=\"0\" failures=\"0\"><testcase name=\"binomial_stability\" classname=\"rand_distr::value_stability\" time=\"0.004\"/><testcase name=\"geometric_stability\" classname=\"rand_distr::value_stability\" time=\"0.004\"/></testsuite>");
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"nextest-run\" tests=\"3\" failures=\"0\" errors=\"0\">{suites}</testsuites>\n"
    )
}

const VALUE_STABILITY: &str = "use rand_distr::Binomial;\n\n#[test]\nfn binomial_stability() {\n    let got = sample(Binomial::new(20, 0.3));\n    assert_eq!(got, [7, 5, 6]);\n    assert_eq!(got.len(), 3);\n}\n\n#[test]\nfn geometric_stability() {\n    assert_eq!(1, 1);\n}\n";

#[test]
fn init_reads_a_cargo_workspace_and_a_members_property_test_meets_its_nextest_binary() {
    let p = Project::git();
    p.write(
        "Cargo.toml",
        "[package]\nname = \"rand\"\nversion = \"0.9.0\"\n\n[workspace]\nmembers = [\"rand_core\", \"rand_distr\"]\nexclude = [\"benches\"]\n",
    );
    p.write("rand_core/Cargo.toml", "[package]\nname = \"rand_core\"\n");
    p.write(
        "rand_distr/Cargo.toml",
        "[package]\nname = \"rand_distr\"\n",
    );
    p.write("rand_distr/tests/value_stability.rs", VALUE_STABILITY);
    p.write("benches/Cargo.toml", "[package]\nname = \"benches\"\n");
    let said = init(&p);
    assert!(
        said.contains(
            "test files ([tests] paths): tests/**, rand_core/tests/**, rand_distr/tests/**\n"
        ),
        "{said}"
    );
    assert!(
        said.contains("Cargo packages: rand, rand_core (rand_core), rand_distr (rand_distr)\n"),
        "{said}"
    );
    assert!(said.contains("cargo nextest run --profile ci"), "{said}");
    lint_clean(&p);
    p.write("junit.xml", rand_report(true));
    assert_decision(
        &p.guard(&["score", "--junit", "junit.xml", "--format", "json"]),
        0,
        &[],
    );

    // A human makes the member's value-stability test a property.
    let ledger = p.read("qa/merge_ledger.toml").replacen(
        "paths = []\nrequired = false\n",
        "paths = [\"rand_distr/tests/value_stability.rs\"]\nrequired = true\n",
        1,
    );
    p.write("qa/merge_ledger.toml", ledger);
    lint_clean(&p);
    // nextest calls it rand_distr::value_stability: it ran, so the green run merges (every
    // run was rejected with "no property test ran" before members' binaries were named).
    let run = p.guard(&["score", "--junit", "junit.xml", "--format", "json"]);
    assert_decision(&run, 0, &[]);
    // A run without it is rejected, and the figures say one property did not run.
    p.write("junit.xml", rand_report(false));
    let run = p.guard(&["score", "--junit", "junit.xml", "--format", "json"]);
    assert_decision(&run, 1, &["property_hold"]);
    assert_eq!(run.json()["property_failures"], 1, "{}", run.stdout);
    let text = p.guard(&["score", "--junit", "junit.xml"]).stdout;
    assert!(text.contains("properties failed or not run: 1;"), "{text}");
    // Another package's binary of the same name is not the member's.
    p.write(
        "junit.xml",
        rand_report(false).replace(
            "</testsuites>",
            "<testsuite name=\"rand::value_stability\" tests=\"1\" disabled=\"0\" errors=\"0\" failures=\"0\"><testcase name=\"binomial_stability\" classname=\"rand::value_stability\" time=\"0.004\"/></testsuite></testsuites>",
        ),
    );
    let run = p.guard(&["score", "--junit", "junit.xml", "--format", "json"]);
    assert_decision(&run, 1, &["property_hold"]);
}

#[test]
fn init_offers_hypothesis_tests_and_requires_a_property_directory() {
    let p = Project::git();
    p.write(
        "pyproject.toml",
        "[tool.pytest.ini_options]\ntestpaths = \"tests\"\n\n[tool.coverage.report]\nfail_under = 100\n",
    );
    p.write(
        "tests/test_plain.py",
        "def test_plain():\n    assert 1 + 1 == 2\n",
    );
    p.write(
        "tests/test_funcs.py",
        "from hypothesis import given, strategies as st\n\n\n@given(st.integers())\ndef test_roundtrip(x):\n    assert int(str(x)) == x\n",
    );
    p.write(
        "tests/strategies.py",
        "import hypothesis.strategies as st\n",
    );
    p.write(".circleci/config.yml", "version: 2.1\n");
    let said = init(&p);
    assert!(
        said.contains("property tests ([properties] paths): none\n"),
        "{said}"
    );
    let ledger = p.read("qa/merge_ledger.toml");
    // Offered, commented, and only the test file (not the strategies helper).
    assert!(
        ledger.contains("\n#   \"tests/test_funcs.py\",\n"),
        "{ledger}"
    );
    assert!(!ledger.contains("strategies.py"), "{ledger}");
    assert!(ledger.contains("\nmin_proven = 100.0"), "{ledger}");
    assert!(ledger.contains("\".circleci/**\""), "{ledger}");
    lint_clean(&p);
    // The CI file it found is protected: an agent may not change it.
    p.commit_as(
        ("Dev Human", "dev@example.com"),
        "Add the ledger\n\nLedger-Change: human\nFreeze-Lease: human\nFixture-Lock: human\nTest-Harness: human\n",
    );
    p.write(".circleci/config.yml", "version: 2.1\n# no tests\n");
    p.commit_as(("Cursor Agent", "cursoragent@cursor.com"), "Speed up CI\n");
    let run = p.guard(&["check", "HEAD~1..HEAD", "--format", "json"]);
    assert_decision(&run, 1, &["agent_edit_protected"]);

    // With a property directory, its tests are required properties.
    let q = Project::git();
    q.write(
        "tests/properties/test_codec.py",
        "from hypothesis import given, strategies as st\n\n\n@given(st.binary())\ndef test_roundtrip(data):\n    encoded = data.hex()\n    decoded = bytes.fromhex(encoded)\n    assert decoded == data\n    assert len(encoded) == 2 * len(data)\n    assert encoded == encoded.lower()\n",
    );
    let said = init(&q);
    assert!(
        said.contains("property tests ([properties] paths): tests/properties\n"),
        "{said}"
    );
    lint_clean(&q);
    // The starter demands that they ran.
    q.write(
        "junit.xml",
        "<testsuites><testsuite name=\"pytest\" tests=\"1\"><testcase classname=\"tests.test_other\" name=\"test_x\"/></testsuite></testsuites>\n",
    );
    let run = q.guard(&["score", "--junit", "junit.xml", "--format", "json"]);
    assert_decision(&run, 1, &["property_hold"]);
}

#[test]
fn init_check_prints_the_ledger_and_writes_nothing() {
    let p = Project::git();
    p.write("pyproject.toml", PYTEST_PYPROJECT);
    let run = p.guard(&["init", "--check"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.starts_with("Found:\n"), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("guard init would write qa/merge_ledger.toml:\n\n# qa/merge_ledger.toml"),
        "{}",
        run.stdout
    );
    assert!(!p.path("qa").exists());
    // A pytest configuration pytest itself cannot read stops init, naming the file.
    p.write("pyproject.toml", "[tool.pytest\n");
    let run = p.guard(&["init", "--check"]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("pyproject.toml: does not parse as TOML"),
        "{}",
        run.stderr
    );
}

#[test]
fn pytests_python_functions_decide_which_functions_are_tests() {
    // A project whose tests are `check_*` functions (pytest's python_functions): an agent
    // that drops one's assertion was not read (only `test*` functions were tests).
    let p = Project::git();
    p.write(
        "pyproject.toml",
        "[tool.pytest.ini_options]\npython_functions = \"check_*\"\n",
    );
    p.write(
        "tests/test_calc.py",
        "def check_total():\n    assert sum([1, 2]) == 3\n",
    );
    p.commit_as(
        ("Dev Human", "dev@example.com"),
        "Add the checks\n\nTest-Harness: human\n",
    );
    p.write(
        "tests/test_calc.py",
        "def check_total():\n    sum([1, 2])\n",
    );
    p.commit_as(("Cursor Agent", "cursoragent@cursor.com"), "Simplify\n");
    let run = p.guard(&["check", "HEAD~1..HEAD", "--format", "json"]);
    assert_decision(&run, 1, &["weakened_test"]);
    assert_eq!(
        run.json()["findings"][0]["test"],
        "tests/test_calc.py::check_total"
    );
}

#[test]
fn init_reads_testpaths_that_name_a_module_or_lie_outside_the_repository() {
    // pydantic-ai's pyproject.toml names a test module among its testpaths; other projects
    // name paths outside the repository, which guard cannot read in a revision (init used
    // to panic on those, slicing the globs by the number of testpaths).
    let p = Project::git();
    p.write(
        "pytest.ini",
        "[pytest]\ntestpaths = tests ../elsewhere /abs .github/scripts/test_ci_duration.py\npython_files = check_*.py\n",
    );
    p.write("tests/check_a.py", "def test_a():\n    assert 1 + 1 == 2\n");
    p.write(
        ".github/scripts/test_ci_duration.py",
        "def test_budget():\n    assert 3 < 5\n",
    );
    init(&p);
    let ledger = std::fs::read_to_string(p.path("qa/merge_ledger.toml")).unwrap();
    let paths = ledger
        .lines()
        .find(|l| l.starts_with("paths = [\"tests/**\""))
        .unwrap_or_else(|| panic!("no [tests] paths:\n{ledger}"));
    assert_eq!(
        paths,
        "paths = [\"tests/**\", \".github/scripts/test_ci_duration.py\", \"**/check_*.py\"]"
    );
    lint_clean(&p);
}
