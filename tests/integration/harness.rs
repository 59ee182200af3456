//! The test harness is protected: `conftest.py`, pytest and coverage options (`pytest.ini`,
//! `tox.ini`, `.coveragerc`, the pytest/coverage sections of `setup.cfg` and
//! `pyproject.toml`) and `.config/nextest.toml`. Real repositories built with `git`, and real
//! pytest runs where the attack is about what pytest reports.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::support::server::{Server, write_in};
use crate::support::{Project, Run};

const HUMAN: (&str, &str) = ("Human Dev", "dev@example.com");
const CURSOR: (&str, &str) = ("Cursor Agent", "cursoragent@cursor.com");

/// A ledger with no `[harness]` table: the built-in harness paths apply.
const LEDGER: &str = r#"version = 1

[properties]
paths = ["tests/properties/"]

[fixtures]
lockfile = "qa/fixtures.lock.json"

[freeze]
file = "qa/freeze.toml"

[protect]
paths = [".github/workflows/**"]
"#;

const FREEZE: &str = "version = 1\nmax_active_leases = 0\n";
const LOCKFILE: &str = "{\"files\": {}}\n";

const CALC: &str = "def add(a, b):\n    return a + b\n";
/// The regression the agent wants to land.
const CALC_BROKEN: &str = "def add(a, b):\n    return a - b\n";
const UNIT_TEST: &str = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n";
const PROPERTY_TEST: &str = r#"import itertools

from calc import add

PAIRS = list(itertools.product(range(-3, 4), repeat=2))


def test_add_is_commutative():
    for a, b in PAIRS:
        assert add(a, b) == add(b, a)


def test_zero_is_identity():
    for a, _ in PAIRS:
        assert add(a, 0) == a
"#;

/// The conftest an agent writes to turn every failure green in the JUnit report.
const EVIL_CONFTEST: &str = r#"import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None
"#;

const PYPROJECT: &str = r#"[project]
name = "calc"
version = "1.0"
dependencies = []

[tool.pytest.ini_options]
addopts = "-p no:cacheprovider"
pythonpath = ["."]

[tool.coverage.run]
branch = true
"#;

const DESELECT: &str = "--deselect=tests/properties/test_add_props.py::test_add_is_commutative";

/// A repository whose first commit (the human base) holds the policy files, a small Python
/// project, and `files`; returns it with the base's id.
fn repo(files: &[(&str, &str)]) -> (Project, String) {
    let p = Project::git();
    p.write("qa/merge_ledger.toml", LEDGER)
        .write("qa/freeze.toml", FREEZE)
        .write("qa/fixtures.lock.json", LOCKFILE)
        .write("calc.py", CALC)
        .write("tests/test_calc.py", UNIT_TEST)
        .write("tests/properties/test_add_props.py", PROPERTY_TEST)
        .write(".github/workflows/ci.yml", "on: push\n");
    for (path, text) in files {
        p.write(path, text);
    }
    let base = p.commit_as(HUMAN, "Start the project\n");
    (p, base)
}

fn check(p: &Project, base: &str, extra: &[&str]) -> Run {
    let range = format!("{base}..HEAD");
    let mut args = vec!["check", range.as_str(), "--format", "json"];
    args.extend_from_slice(extra);
    p.guard(&args)
}

/// Asserts the exit code and the exact (sorted) reasons of a JSON report.
#[track_caller]
fn expect(run: &Run, code: i32, reasons: &[&str]) {
    assert_eq!(
        run.code, code,
        "exit code\nstdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert_eq!(run.reasons(), reasons, "reasons\nstdout:\n{}", run.stdout);
}

/// The paths of the findings with `code`, sorted.
fn paths_of(run: &Run, code: &str) -> Vec<String> {
    let json = run.json();
    let mut paths: Vec<String> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == code)
        .map(|f| f["path"].as_str().unwrap_or("").to_string())
        .collect();
    paths.sort();
    paths
}

/// The one finding with `code`.
#[track_caller]
fn only(run: &Run, code: &str) -> Value {
    let json = run.json();
    let found: Vec<Value> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == code)
        .cloned()
        .collect();
    assert_eq!(found.len(), 1, "one {code} finding in {json:#}");
    found.into_iter().next().unwrap()
}

/// Asserts an agent's range is rejected for editing exactly `paths`.
#[track_caller]
fn expect_agent_edit(run: &Run, paths: &[&str]) {
    expect(run, 1, &["agent_edit_protected"]);
    assert_eq!(
        paths_of(run, "agent_edit_protected"),
        paths,
        "{}",
        run.stdout
    );
}

/// Runs real pytest in `dir` into `junit` (a path outside the work tree); its exit code.
fn pytest(dir: &Path, junit: &Path, extra: &[&str]) -> i32 {
    let out = Command::new("python3")
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(format!("--junitxml={}", junit.display()))
        .args(extra)
        .current_dir(dir)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env_remove("PYTEST_ADDOPTS")
        .output()
        .expect("python3 runs");
    let code = out.status.code().expect("pytest exited by a signal");
    assert!(
        code == 0 || code == 1,
        "pytest must be installed (`python3 -m pip install pytest`) and run the tests: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    code
}

// ---------------------------------------------------------------------------------------
// conftest.py: a report hook that turns every outcome into a pass.

#[test]
fn agent_conftest_that_passes_every_test_is_rejected_though_pytest_reports_green() {
    let (p, base) = repo(&[("pytest.ini", "[pytest]\npythonpath = .\n")]);
    let out = tempfile::tempdir().unwrap();
    let junit = out.path().join("junit.xml");
    let junit_arg = junit.to_str().unwrap();

    p.write("calc.py", CALC_BROKEN);
    // Without the hook the regression fails a unit test and a property.
    assert_eq!(pytest(p.root(), &junit, &[]), 1);
    p.write("tests/conftest.py", EVIL_CONFTEST);
    p.commit_as(CURSOR, "Simplify add\n");
    assert_eq!(
        pytest(p.root(), &junit, &[]),
        0,
        "the hook turns pytest green"
    );
    let report = std::fs::read_to_string(&junit).unwrap();
    assert!(
        report.contains("test_add_is_commutative") && !report.contains("<failure"),
        "the JUnit report shows every test passing:\n{report}"
    );
    // The evidence alone cannot tell: the report is all green.
    let scored = p.guard(&["score", "--junit", junit_arg, "--format", "json"]);
    expect(&scored, 0, &[]);

    let run = check(&p, &base, &["--junit", junit_arg]);
    expect_agent_edit(&run, &["tests/conftest.py"]);
    let finding = only(&run, "agent_edit_protected");
    let message = finding["message"].as_str().unwrap();
    assert!(message.contains("the test harness"), "{message}");
    assert!(
        finding["help"]
            .as_str()
            .unwrap()
            .contains("Test-Harness: human"),
        "{finding:#}"
    );
}

#[test]
fn a_conftest_anywhere_is_protected_and_deleting_one_counts() {
    let (p, base) = repo(&[("conftest.py", "import sys\n")]);
    p.write("src/pkg/deep/conftest.py", EVIL_CONFTEST);
    p.remove("conftest.py");
    p.commit_as(CURSOR, "Move the conftest\n");
    expect_agent_edit(
        &check(&p, &base, &[]),
        &["conftest.py", "src/pkg/deep/conftest.py"],
    );
}

#[test]
fn a_conftest_replaced_by_a_directory_counts_among_names_that_sort_between() {
    // git sorts the directory `conftest.py` as `conftest.py/`, after `conftest.py-old` and
    // `conftest.py.bak`: the file and the directory are apart in the two trees' entry lists.
    let (p, base) = repo(&[
        ("tests/conftest.py", "import sys\n"),
        ("tests/conftest.py-old", "old\n"),
        ("tests/conftest.py.bak", "bak\n"),
    ]);
    p.remove("tests/conftest.py");
    p.write("tests/conftest.py/README", "a directory now\n");
    p.commit_as(CURSOR, "Make room\n");
    let run = check(&p, &base, &[]);
    expect_agent_edit(&run, &["tests/conftest.py"]);
    assert!(
        run.stdout.contains("changes the type of tests/conftest.py"),
        "{}",
        run.stdout
    );

    // And back: the directory becomes a file again.
    let base = p.rev("HEAD");
    p.git_cmd(&["rm", "-q", "-r", "tests/conftest.py"]);
    p.write("tests/conftest.py", EVIL_CONFTEST);
    p.commit_as(CURSOR, "Restore the conftest\n");
    expect_agent_edit(&check(&p, &base, &[]), &["tests/conftest.py"]);
}

// ---------------------------------------------------------------------------------------
// pytest options: `addopts = --deselect=...` drops one property test from the run.

#[test]
fn agent_deselecting_a_property_test_in_pyproject_is_rejected_though_collection_agrees() {
    let (p, base) = repo(&[("pyproject.toml", PYPROJECT)]);
    let out = tempfile::tempdir().unwrap();
    let junit = out.path().join("junit.xml");
    let junit_arg = junit.to_str().unwrap();

    p.write("calc.py", CALC_BROKEN);
    p.write(
        "pyproject.toml",
        PYPROJECT.replace(
            "addopts = \"-p no:cacheprovider\"",
            &format!("addopts = \"-p no:cacheprovider {DESELECT}\""),
        ),
    );
    // Keep the unit test quiet too, the way an agent would: here by fixing its expectation.
    p.write("tests/test_calc.py", UNIT_TEST.replace("== 5", "== -1"));
    p.commit_as(CURSOR, "Tidy the test options\n");
    assert_eq!(
        pytest(p.root(), &junit, &[]),
        0,
        "the deselected property is gone"
    );
    // Collection honours addopts, so the collected ids agree with the report.
    let collected = Command::new("python3")
        .args([
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
        ])
        .current_dir(p.root())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    let collected_path = out.path().join("collected.txt");
    std::fs::write(&collected_path, &collected.stdout).unwrap();
    let collected_text = String::from_utf8_lossy(&collected.stdout);
    assert!(
        !collected_text.contains("test_add_is_commutative")
            && collected_text.contains("test_zero_is_identity"),
        "{collected_text}"
    );
    let evidence = [
        "--junit",
        junit_arg,
        "--collected",
        collected_path.to_str().unwrap(),
    ];
    let mut score_args = vec!["score", "--format", "json"];
    score_args.extend_from_slice(&evidence);
    expect(&p.guard(&score_args), 0, &[]);

    let run = check(&p, &base, &evidence);
    expect_agent_edit(&run, &["pyproject.toml"]);
    let message = only(&run, "agent_edit_protected")["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.contains("tool.pytest"),
        "names the section: {message}"
    );
}

#[test]
fn agent_deselect_in_pytest_ini_tox_ini_and_coveragerc_is_rejected() {
    for (file, old, new) in [
        (
            "pytest.ini",
            "[pytest]\naddopts = -q\n",
            format!("[pytest]\naddopts = -q {DESELECT}\n"),
        ),
        (
            "tox.ini",
            "[tox]\nenv_list = py3\n\n[pytest]\naddopts = -q\n",
            format!("[tox]\nenv_list = py3\n\n[pytest]\naddopts = -q {DESELECT}\n"),
        ),
        (
            ".coveragerc",
            "[run]\nbranch = true\n",
            "[run]\nbranch = true\nomit = calc.py\n".to_string(),
        ),
        (
            "tests/pytest.ini",
            "[pytest]\naddopts = -q\n",
            format!("[pytest]\naddopts = -q {DESELECT}\n"),
        ),
    ] {
        let (p, base) = repo(&[(file, old)]);
        p.write(file, new);
        p.commit_as(CURSOR, "Tidy the test options\n");
        expect_agent_edit(&check(&p, &base, &[]), &[file]);
    }
    // Adding a pytest.ini where there was none counts as well.
    let (p, base) = repo(&[]);
    p.write(
        "tests/unit/pytest.ini",
        format!("[pytest]\naddopts = {DESELECT}\n"),
    );
    p.commit_as(CURSOR, "Add test options\n");
    expect_agent_edit(&check(&p, &base, &[]), &["tests/unit/pytest.ini"]);
}

// ---------------------------------------------------------------------------------------
// pyproject.toml and setup.cfg: only the harness sections count.

#[test]
fn agent_dependency_in_pyproject_project_table_is_accepted() {
    let (p, base) = repo(&[("pyproject.toml", PYPROJECT)]);
    p.write(
        "pyproject.toml",
        PYPROJECT.replace("dependencies = []", "dependencies = [\"requests>=2\"]"),
    );
    p.commit_as(CURSOR, "Add requests\n");
    expect(&check(&p, &base, &[]), 0, &[]);

    // Reformatting the pytest table without changing a value is no change either.
    let reformatted = PYPROJECT.replace(
        "addopts = \"-p no:cacheprovider\"\npythonpath = [\".\"]",
        "# options for every run\npythonpath = [ \".\" ]\naddopts = '-p no:cacheprovider'",
    );
    p.write("pyproject.toml", reformatted);
    p.commit_as(CURSOR, "Reformat\n");
    expect(&check(&p, &base, &[]), 0, &[]);

    // A new pyproject.toml of a sub-package, with no harness section, is fine too.
    p.write("pkg/pyproject.toml", "[project]\nname = \"pkg\"\n");
    p.commit_as(CURSOR, "Add a package\n");
    expect(&check(&p, &base, &[]), 0, &[]);

    // An executable pyproject.toml is a regular file all the same: compared by sections.
    use std::os::unix::fs::PermissionsExt;
    let (p, base) = repo(&[("pyproject.toml", PYPROJECT)]);
    std::fs::set_permissions(
        p.path("pyproject.toml"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    p.commit_as(HUMAN, "Make it executable\n");
    p.write(
        "pyproject.toml",
        PYPROJECT.replace("dependencies = []", "dependencies = [\"requests>=2\"]"),
    );
    p.commit_as(CURSOR, "Add requests\n");
    assert_eq!(
        p.git_cmd(&["ls-files", "-s", "pyproject.toml"])[..6],
        *"100755"
    );
    expect(&check(&p, &base, &[]), 0, &[]);
}

#[test]
fn agent_changes_to_pyproject_harness_tables_are_rejected() {
    for (what, new) in [
        (
            "coverage settings",
            PYPROJECT.replace("branch = true", "branch = true\nomit = [\"calc.py\"]"),
        ),
        (
            "a [tool.pytest] table (pytest 9)",
            format!("{PYPROJECT}\n[tool.pytest]\naddopts = [\"{DESELECT}\"]\n"),
        ),
        (
            "the pytest table removed",
            PYPROJECT.replace(
                "[tool.pytest.ini_options]\naddopts = \"-p no:cacheprovider\"\npythonpath = [\".\"]\n",
                "",
            ),
        ),
        (
            "a dotted key outside the table header",
            PYPROJECT.replace(
                "[project]\n",
                "tool.pytest.ini_options.markers = [\"slow\"]\n\n[project]\n",
            )
            .replace("[tool.pytest.ini_options]\n", "[tool.pytest.ini_options]\nminversion = \"8\"\n"),
        ),
        (
            "a pytest plugin registered by entry point",
            PYPROJECT.replace(
                "[tool.pytest.ini_options]",
                "[project.entry-points.pytest11]\ngreen = \"calc\"\n\n[tool.pytest.ini_options]",
            ),
        ),
        ("a file that no longer parses", format!("{PYPROJECT}\n[project\n")),
    ] {
        let (p, base) = repo(&[("pyproject.toml", PYPROJECT)]);
        p.write("pyproject.toml", &new);
        p.commit_as(CURSOR, "Tidy the project file\n");
        let run = check(&p, &base, &[]);
        assert_eq!(run.code, 1, "{what}: {}", run.stdout);
        expect_agent_edit(&run, &["pyproject.toml"]);
    }
}

const SETUP_CFG: &str = "[metadata]\nname = calc\nversion = 1.0\n\n[options]\ninstall_requires =\n    attrs\n\n[tool:pytest]\naddopts = -q\ntestpaths =\n    tests\n\n[coverage:run]\nbranch = True\n";

#[test]
fn setup_cfg_pytest_and_coverage_sections_are_protected_metadata_is_not() {
    let (p, base) = repo(&[("setup.cfg", SETUP_CFG)]);
    p.write(
        "setup.cfg",
        SETUP_CFG
            .replace("version = 1.0", "version = 1.1")
            .replace("    attrs\n", "    attrs\n    requests\n"),
    );
    p.commit_as(CURSOR, "Release 1.1\n");
    expect(&check(&p, &base, &[]), 0, &[]);

    for new in [
        SETUP_CFG.replace("addopts = -q", &format!("addopts = -q {DESELECT}")),
        SETUP_CFG.replace("branch = True", "branch = True\nomit = calc.py"),
        SETUP_CFG.replace("    tests\n", "    tests/unit\n"),
        // An inline `;` is no comment to pytest: `-q ;--deselect=...` passes both options.
        SETUP_CFG.replace("addopts = -q", &format!("addopts = -q ;{DESELECT}")),
        // Key names are case-sensitive to pytest: `ADDOPTS` is not `addopts`.
        SETUP_CFG.replace("addopts = -q", "ADDOPTS = -q"),
        // configparser (coverage, setuptools) reads [DEFAULT] into every section.
        format!("{SETUP_CFG}\n[DEFAULT]\nomit = calc.py\n"),
        // A pytest plugin registered by entry point is loaded into every run.
        format!("{SETUP_CFG}\n[options.entry_points]\npytest11 =\n    green = calc\n"),
    ] {
        let (p, base) = repo(&[("setup.cfg", SETUP_CFG)]);
        p.write("setup.cfg", &new);
        p.commit_as(CURSOR, "Tidy setup.cfg\n");
        expect_agent_edit(&check(&p, &base, &[]), &["setup.cfg"]);
    }
}

/// What pytest's own INI reader (iniconfig) reads from `setup.cfg` in `dir`: the
/// `[tool:pytest]` section, or the parse error.
fn pytest_view(dir: &Path) -> String {
    let out = Command::new("python3")
        .args([
            "-c",
            "import iniconfig, sys\ntry:\n    c = iniconfig.IniConfig('setup.cfg')\n    print(sorted(c['tool:pytest'].items()) if 'tool:pytest' in c else 'no section')\nexcept Exception as e:\n    print('error', type(e).__name__)\n",
        ])
        .current_dir(dir)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "iniconfig (installed with pytest) must import: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn setup_cfg_tricks_that_hide_pytest_options_from_a_plain_ini_reader_are_caught() {
    // Each edit looks like a change to [metadata] to a plain INI reader, yet changes the
    // options pytest reads from [tool:pytest]: pytest's own reader is asked what it reads.
    let plain = "[metadata]\nname = calc\n";
    let with_pytest = "[tool:pytest]\naddopts = -q\n\n[metadata]\nname = calc\n";
    let injected = |separator: &str| {
        format!("[metadata]\nname = calc{separator}[tool:pytest]{separator}addopts = {DESELECT}\n")
    };
    let tricks = [
        // An indented header: a value line to pytest, a header to a looser reader.
        (
            with_pytest.to_string(),
            format!(
                "[tool:pytest]\naddopts = -q\n  [metadata]\n  {DESELECT}\n\n[metadata]\nname = calc\n"
            ),
        ),
        // Line breaks Python's str.splitlines() honours and Rust's str::lines() does not.
        (plain.to_string(), injected("\x1c")),
        (plain.to_string(), injected("\x0c")),
        (plain.to_string(), injected("\r")),
        (plain.to_string(), injected("\u{2028}")),
        (plain.to_string(), injected("\u{85}")),
        // A comment after the header that holds a `]`: `tool:pytest` to pytest.
        (
            plain.to_string(),
            format!("{plain}\n[tool:pytest] ; ]\naddopts = {DESELECT}\n"),
        ),
        // A byte order mark before the first header.
        (
            plain.to_string(),
            format!("\u{feff}[tool:pytest]\naddopts = {DESELECT}\n\n{plain}"),
        ),
    ];
    for (i, (old, new)) in tricks.iter().enumerate() {
        let (p, base) = repo(&[("setup.cfg", old)]);
        let before = pytest_view(p.root());
        p.write("setup.cfg", new);
        let after = pytest_view(p.root());
        assert!(
            after != before && after.contains("--deselect") && !after.starts_with("error"),
            "trick {i} ({new:?}) must change what pytest reads: {before} -> {after}"
        );
        p.commit_as(CURSOR, "Tidy setup.cfg\n");
        let run = check(&p, &base, &[]);
        assert_eq!(
            run.code, 1,
            "trick {i} ({new:?}): pytest reads {after}, guard says: {}",
            run.stdout
        );
        expect_agent_edit(&run, &["setup.cfg"]);
    }
}

#[test]
fn setup_cfg_header_with_text_after_it_hides_addopts_from_guard_not_from_pytest() {
    // `[x]y` is a section header to configparser (Python's and guard's: the text after `]` is
    // ignored) but a value line to pytest's reader, which takes a header only when the line
    // ends with `]`: to pytest the lines after it stay in [tool:pytest].
    let old = "[metadata]\nname = calc\n\n[tool:pytest]\npythonpath = .\ntestpaths =\n    tests\n";
    let (p, base) = repo(&[("setup.cfg", old)]);
    let before = pytest_view(p.root());
    let new = format!("{old}[x]y\naddopts = {DESELECT}\n");
    p.write("setup.cfg", &new);
    let after = pytest_view(p.root());
    assert!(
        before.contains("testpaths") && !before.contains("addopts") && after.contains(DESELECT),
        "pytest reads the option in [tool:pytest]: {before} -> {after}"
    );
    p.write(
        "calc.py",
        "def add(a, b):\n    return a + b + (1 if a > b != 0 else 0)\n",
    );
    p.commit_as(CURSOR, "Name the project\n");
    // Real pytest runs the unit test and one property test, and not the one that fails.
    let out = tempfile::tempdir().unwrap();
    let junit = out.path().join("junit.xml");
    assert_eq!(
        pytest(p.root(), &junit, &[]),
        0,
        "the failing property is deselected"
    );
    let report = std::fs::read_to_string(&junit).unwrap();
    assert!(
        report.contains("test_zero_is_identity") && !report.contains("test_add_is_commutative"),
        "{report}"
    );

    let run = check(&p, &base, &[]);
    expect_agent_edit(&run, &["setup.cfg"]);
}

#[test]
#[ignore = "hole: an ordinary test module's `pytest_plugins` loads a plugin (and any module the tests import can patch pytest) that rewrites every outcome; only conftest.py and config files are harness"]
fn agent_test_module_that_loads_a_plugin_turning_every_test_green_is_rejected() {
    let (p, base) = repo(&[("pytest.ini", "[pytest]\npythonpath = .\n")]);
    let out = tempfile::tempdir().unwrap();
    let junit = out.path().join("junit.xml");
    let junit_arg = junit.to_str().unwrap();
    p.write("calc.py", CALC_BROKEN);
    // pytest registers the plugins a test module names when it collects the module, before
    // any test runs: the plugin is the conftest above under an ordinary name.
    p.write(
        "tests/test_helpers.py",
        "pytest_plugins = [\"helpers_plugin\"]\n",
    );
    p.write("tests/helpers_plugin.py", EVIL_CONFTEST);
    p.commit_as(CURSOR, "Share test helpers\n");
    assert_eq!(
        pytest(p.root(), &junit, &[]),
        0,
        "the plugin turns pytest green"
    );
    let report = std::fs::read_to_string(&junit).unwrap();
    assert!(
        report.contains("test_add_is_commutative") && !report.contains("<failure"),
        "{report}"
    );
    let run = check(&p, &base, &["--junit", junit_arg]);
    assert_eq!(run.code, 1, "{}", run.stdout);
}

#[test]
fn agent_edits_of_what_ci_runs_beside_the_workflows_are_rejected_under_the_starter_ledger() {
    // Under `guard init`'s ledger. A workflow's test step often lives in a local action
    // (`uses: ./.github/actions/test`), a nox session, or a Poetry plugin table: each decides
    // which tests run, like the workflow, tox.ini and [project.entry-points.pytest11] do.
    let pyproject = "[tool.poetry]\nname = \"calc\"\nversion = \"1.0\"\n";
    let edits: [(&str, &str, &str); 3] = [
        (
            ".github/actions/test/action.yml",
            "runs:\n  using: composite\n  steps:\n    - run: python -m pytest\n      shell: bash\n",
            "runs:\n  using: composite\n  steps:\n    - run: python -m pytest --deselect=tests/properties/test_add_props.py::test_add_is_commutative\n      shell: bash\n",
        ),
        (
            "noxfile.py",
            "import nox\n\n\n@nox.session\ndef tests(session):\n    session.run(\"pytest\")\n",
            "import nox\n\n\n@nox.session\ndef tests(session):\n    session.run(\"pytest\", \"-k\", \"not commutative\")\n",
        ),
        (
            "pyproject.toml",
            pyproject,
            "[tool.poetry]\nname = \"calc\"\nversion = \"1.0\"\n\n[tool.poetry.plugins.pytest11]\nhelpers = \"calc\"\n",
        ),
    ];
    for (path, old, new) in edits {
        let p = Project::git();
        p.write("calc.py", CALC)
            .write("tests/properties/test_add_props.py", PROPERTY_TEST)
            .write("tests/properties/seeds/pairs.txt", "1 2\n")
            .write(path, old);
        let init = p.guard(&["init"]);
        assert_eq!(init.code, 0, "{}", init.stderr);
        p.commit_as(
            HUMAN,
            "Add the merge ledger\n\nLedger-Change: human\nFreeze-Lease: human\nFixture-Lock: human\nTest-Harness: human\n",
        );
        let base = p.rev("HEAD");
        p.write(path, new);
        p.commit_as(CURSOR, "Speed up CI\n");
        let run = check(&p, &base, &[]);
        assert_eq!(run.code, 1, "{path}: {}", run.stdout);
        expect_agent_edit(&run, &[path]);
        // The same edit by a human who means it carries the trailer.
        p.git_cmd(&["reset", "-q", "--soft", "HEAD~"]);
        p.commit_as(
            HUMAN,
            "Speed up CI\n\nLedger-Change: human\nTest-Harness: human\n",
        );
        expect(&check(&p, &base, &[]), 0, &[]);
    }
}

#[test]
fn agent_submodule_that_brings_a_conftest_into_the_test_run_is_rejected() {
    // The agent's own repository holds a conftest whose hook, once collected, registers a
    // plugin that turns every outcome in the run into a pass.
    let plugin = Project::git();
    plugin.write(
        "conftest.py",
        "import pytest\n\n\nclass Green:\n    @pytest.hookimpl(hookwrapper=True)\n    def pytest_runtest_makereport(self, item, call):\n        outcome = yield\n        report = outcome.get_result()\n        report.outcome = \"passed\"\n        report.longrepr = None\n\n\ndef pytest_collection_modifyitems(config, items):\n    config.pluginmanager.register(Green())\n",
    );
    plugin.commit_as(CURSOR, "Test helpers\n");
    let (p, base) = repo(&[("pytest.ini", "[pytest]\npythonpath = .\n")]);
    p.write("calc.py", CALC_BROKEN);
    let file_allowed = "protocol.file.allow=always";
    let url = plugin.root().to_str().unwrap();
    p.git_as(
        CURSOR,
        &[
            "-c",
            file_allowed,
            "submodule",
            "add",
            "-q",
            url,
            "tests/helpers",
        ],
    );
    p.commit_as(CURSOR, "Vendor the test helpers\n");

    // CI checks out with submodules, and pytest collects the submodule's conftest.
    let ci = Project::clone_of(&p, false);
    ci.git_cmd(&["-c", file_allowed, "submodule", "update", "-q", "--init"]);
    let out = tempfile::tempdir().unwrap();
    let junit = out.path().join("junit.xml");
    assert_eq!(
        pytest(ci.root(), &junit, &[]),
        0,
        "the plugin turns pytest green"
    );
    let report = std::fs::read_to_string(&junit).unwrap();
    assert!(
        report.contains("test_add_is_commutative") && !report.contains("<failure"),
        "{report}"
    );

    let run = check(&p, &base, &["--junit", junit.to_str().unwrap()]);
    expect_agent_edit(&run, &[".gitmodules"]);
}

// ---------------------------------------------------------------------------------------
// Who may change the harness.

#[test]
fn human_harness_change_needs_the_test_harness_trailer() {
    let (p, base) = repo(&[("pyproject.toml", PYPROJECT)]);
    p.write("tests/conftest.py", "import pytest\n");
    p.write(
        "pyproject.toml",
        PYPROJECT.replace("-p no:cacheprovider", "-p no:cacheprovider -ra"),
    );
    p.commit_as(HUMAN, "Show skip reasons\n");
    let run = check(&p, &base, &[]);
    expect(&run, 1, &["missing_human_trailer"]);
    assert_eq!(
        paths_of(&run, "missing_human_trailer"),
        ["pyproject.toml", "tests/conftest.py"]
    );
    assert!(
        run.stdout.contains("Test-Harness: human"),
        "the help names the trailer: {}",
        run.stdout
    );

    p.git_cmd(&[
        "commit",
        "-q",
        "--amend",
        "-m",
        "Show skip reasons\n\nTest-Harness: human\n",
    ]);
    expect(&check(&p, &base, &[]), 0, &[]);

    // Another class's trailer does not approve a harness change.
    p.git_cmd(&[
        "commit",
        "-q",
        "--amend",
        "-m",
        "Show skip reasons\n\nLedger-Change: human\n",
    ]);
    expect(&check(&p, &base, &[]), 1, &["missing_human_trailer"]);
}

#[test]
fn agent_harness_change_with_the_harness_trailer_is_a_forgery() {
    let (p, base) = repo(&[]);
    p.write("tests/conftest.py", EVIL_CONFTEST);
    p.commit_as(CURSOR, "Add a conftest\n\nTest-Harness: human\n");
    expect(
        &check(&p, &base, &[]),
        1,
        &["agent_edit_protected", "forged_human_trailer"],
    );
}

#[test]
fn the_harness_trailer_is_configurable() {
    let ledger = format!("{LEDGER}\n[trailers]\nharness = \"QA-Approved: harness\"\n");
    let (p, base) = repo(&[("qa/merge_ledger.toml", &ledger)]);
    p.write("tests/conftest.py", "import pytest\n");
    p.commit_as(HUMAN, "Add a conftest\n\nTest-Harness: human\n");
    let run = check(&p, &base, &[]);
    expect(&run, 1, &["missing_human_trailer"]);
    assert!(
        run.stdout.contains("QA-Approved: harness"),
        "{}",
        run.stdout
    );
    p.git_cmd(&[
        "commit",
        "-q",
        "--amend",
        "-m",
        "Add a conftest\n\nQA-Approved: harness\n",
    ]);
    expect(&check(&p, &base, &[]), 0, &[]);
}

// ---------------------------------------------------------------------------------------
// nextest, attributes, and what the ledger adds.

#[test]
fn agent_nextest_config_is_rejected() {
    let (p, base) = repo(&[(".config/nextest.toml", "[profile.default]\nretries = 0\n")]);
    p.write(".config/nextest.toml", "[profile.default]\nretries = 5\n");
    p.commit_as(CURSOR, "Retry flaky tests\n");
    expect_agent_edit(&check(&p, &base, &[]), &[".config/nextest.toml"]);

    // In a workspace below the root as well.
    let (p, base) = repo(&[]);
    p.write(
        "rust/.config/nextest.toml",
        "[profile.default]\ndefault-filter = \"not test(properties)\"\n",
    );
    p.commit_as(CURSOR, "Skip slow tests\n");
    expect_agent_edit(&check(&p, &base, &[]), &["rust/.config/nextest.toml"]);
}

#[test]
fn agent_cargo_config_that_runs_tests_through_a_wrapper_or_sets_their_env_is_rejected() {
    // Cargo reads `.cargo/config.toml` from the directory it runs in and every parent: a
    // target `runner` wraps every test binary nextest runs (one that swallows the exit code
    // turns every failure into a pass in nextest's JUnit report), and `[env]` sets the tests'
    // environment (`PROPTEST_CASES = "1"` runs each property once).
    for (path, text) in [
        (
            ".cargo/config.toml",
            "[target.x86_64-unknown-linux-gnu]\nrunner = \"tools/run.sh\"\n",
        ),
        ("rust/.cargo/config.toml", "[env]\nPROPTEST_CASES = \"1\"\n"),
        (".cargo/config", "[env]\nPROPTEST_CASES = \"1\"\n"),
    ] {
        let (p, base) = repo(&[]);
        p.write(path, text);
        p.commit_as(CURSOR, "Speed up the tests\n");
        expect_agent_edit(&check(&p, &base, &[]), &[path]);
    }
}

#[test]
fn agent_attributes_beside_the_ledger_and_protected_globs_are_rejected() {
    for file in ["qa/.gitattributes", ".github/.gitattributes"] {
        let (p, base) = repo(&[]);
        p.write(file, "*.toml ident\n");
        p.commit_as(CURSOR, "Normalise attributes\n");
        expect_agent_edit(&check(&p, &base, &[]), &[file]);
    }
    // Attributes elsewhere are not protected.
    let (p, base) = repo(&[]);
    p.write("docs/.gitattributes", "*.md text\n");
    p.commit_as(CURSOR, "Normalise attributes\n");
    expect(&check(&p, &base, &[]), 0, &[]);
}

#[test]
fn ledger_can_add_harness_paths_and_sections() {
    let ledger = format!(
        "{LEDGER}\n[harness]\npaths = [\"**/conftest.py\", \"scripts/run-tests.sh\"]\n\n[harness.sections]\n\"**/pyproject.toml\" = [\"tool.pytest\", \"tool.hatch.envs.test\"]\n"
    );
    let pyproject = "[project]\nname = \"calc\"\n\n[tool.hatch.envs.test.scripts]\nrun = \"pytest\"\n\n[tool.hatch.envs.docs.scripts]\nbuild = \"mkdocs build\"\n";
    let (p, base) = repo(&[
        ("qa/merge_ledger.toml", &ledger),
        ("pyproject.toml", pyproject),
        ("scripts/run-tests.sh", "pytest\n"),
    ]);
    p.write(
        "pyproject.toml",
        pyproject.replace("mkdocs build", "mkdocs build --strict"),
    );
    p.commit_as(CURSOR, "Strict docs\n");
    expect(&check(&p, &base, &[]), 0, &[]);

    p.write(
        "pyproject.toml",
        pyproject.replace("run = \"pytest\"", "run = \"pytest || true\""),
    );
    p.write("scripts/run-tests.sh", "pytest || true\n");
    p.commit_as(CURSOR, "Never fail\n");
    expect_agent_edit(
        &check(&p, &base, &[]),
        &["pyproject.toml", "scripts/run-tests.sh"],
    );

    // The ledger names its harness paths in full: tox.ini is not among them here.
    let (p, base) = repo(&[("qa/merge_ledger.toml", &ledger), ("tox.ini", "[pytest]\n")]);
    p.write("tox.ini", "[pytest]\naddopts = -x\n");
    p.commit_as(CURSOR, "Stop at the first failure\n");
    expect(&check(&p, &base, &[]), 0, &[]);
}

#[test]
fn harness_globs_from_different_directories_are_each_walked_from_their_own() {
    // `ci/conftest.py` is walked from `ci/`, `tests/**/conftest.py` from `tests/`: a glob
    // grouped under another's directory would never see its own files.
    let ledger = format!(
        "{LEDGER}\n[harness]\npaths = [\"ci/conftest.py\", \"tests/**/conftest.py\", \"tools/*.cfg\"]\n"
    );
    let (p, base) = repo(&[
        ("qa/merge_ledger.toml", &ledger),
        ("ci/conftest.py", ""),
        ("tests/unit/conftest.py", ""),
        ("tools/pytest.cfg", "[pytest]\n"),
    ]);
    p.write("tests/unit/conftest.py", EVIL_CONFTEST);
    p.write("tools/pytest.cfg", "[pytest]\naddopts = -p no:warnings\n");
    p.commit_as(CURSOR, "Tidy the test setup\n");
    expect_agent_edit(
        &check(&p, &base, &[]),
        &["tests/unit/conftest.py", "tools/pytest.cfg"],
    );
}

#[test]
fn merge_that_changes_harness_sections_itself_is_judged() {
    let (p, base) = repo(&[("pyproject.toml", PYPROJECT)]);
    // A human branch changes [project]; main gets another change; an agent merges and
    // edits the pytest table in the merge.
    p.git_cmd(&["checkout", "-q", "-b", "side"]);
    p.write(
        "pyproject.toml",
        PYPROJECT.replace("dependencies = []", "dependencies = [\"attrs\"]"),
    );
    p.commit_as(HUMAN, "Depend on attrs\n");
    p.git_cmd(&["checkout", "-q", "main"]);
    p.write("README.md", "calc\n");
    p.commit_as(HUMAN, "Add a README\n");
    p.git_as(CURSOR, &["merge", "-q", "--no-ff", "--no-commit", "side"]);
    let clean = p.root().join("pyproject.toml");
    let merged = std::fs::read_to_string(&clean).unwrap();
    assert!(merged.contains("attrs"), "{merged}");
    p.git_as(CURSOR, &["commit", "-q", "-m", "Merge side"]);
    expect(&check(&p, &base, &[]), 0, &[]);

    p.git_cmd(&["reset", "-q", "--hard", "HEAD~"]);
    p.git_as(CURSOR, &["merge", "-q", "--no-ff", "--no-commit", "side"]);
    p.write(
        "pyproject.toml",
        merged.replace(
            "-p no:cacheprovider",
            &format!("-p no:cacheprovider {DESELECT}"),
        ),
    );
    p.git_cmd(&["add", "pyproject.toml"]);
    p.git_as(CURSOR, &["commit", "-q", "-m", "Merge side"]);
    expect_agent_edit(&check(&p, &base, &[]), &["pyproject.toml"]);
}

#[test]
fn a_new_pyproject_with_a_pytest_table_counts() {
    let (p, base) = repo(&[("pyproject.toml", PYPROJECT)]);
    p.write(
        "other/pyproject.toml",
        PYPROJECT.replace(
            "-p no:cacheprovider",
            &format!("-p no:cacheprovider {DESELECT}"),
        ),
    );
    p.commit_as(CURSOR, "Add another project\n");
    expect_agent_edit(&check(&p, &base, &[]), &["other/pyproject.toml"]);
}

#[test]
fn a_symlinked_or_case_variant_pyproject_counts_whole() {
    // The link's target is a file whose name is the old pyproject text: the link's blob is
    // the old file's blob (same harness tables), while pytest follows the link and reads the
    // agent's options from that file.
    let (p, base) = repo(&[("pyproject.toml", PYPROJECT)]);
    assert!(!PYPROJECT.contains('/') && PYPROJECT.len() < 255);
    p.write(
        PYPROJECT,
        PYPROJECT.replace(
            "-p no:cacheprovider",
            &format!("-p no:cacheprovider {DESELECT}"),
        ),
    );
    p.remove("pyproject.toml");
    std::os::unix::fs::symlink(PYPROJECT, p.path("pyproject.toml")).unwrap();
    p.commit_as(CURSOR, "Link the project file\n");
    let new_blob = p.git_cmd(&["rev-parse", "HEAD:pyproject.toml"]);
    let old_blob = p.git_cmd(&["rev-parse", &format!("{base}:pyproject.toml")]);
    assert_eq!(new_blob, old_blob, "the link's blob is the old file's");
    let run = check(&p, &base, &[]);
    expect_agent_edit(&run, &["pyproject.toml"]);
    assert!(run.stdout.contains("symlink"), "{}", run.stdout);

    // A name that differs only in case replaces the file on a case-insensitive checkout.
    let (p, base) = repo(&[("setup.cfg", SETUP_CFG)]);
    p.write("Setup.cfg", "[metadata]\nname = calc\n");
    p.commit_as(CURSOR, "Add metadata\n");
    expect_agent_edit(&check(&p, &base, &[]), &["Setup.cfg"]);
}

// ---------------------------------------------------------------------------------------
// The ledger keys.

#[test]
fn lint_accepts_the_harness_keys_and_init_writes_them() {
    let p = Project::git();
    let init = p.guard(&["init"]);
    assert_eq!(init.code, 0, "{}{}", init.stdout, init.stderr);
    assert!(
        init.stdout.contains("Test-Harness: human"),
        "{}",
        init.stdout
    );
    let ledger = p.read("qa/merge_ledger.toml");
    for needle in [
        "[harness]",
        "\"**/conftest.py\"",
        "\"**/.config/nextest.toml\"",
        "[harness.sections]",
        "\"tool:pytest\"",
        "harness = \"Test-Harness: human\"",
    ] {
        assert!(ledger.contains(needle), "{needle} in:\n{ledger}");
    }
    p.write("tests/properties/seeds/one.json", "{}\n");
    let lint = p.guard(&["lint"]);
    assert_eq!(lint.code, 0, "{}{}", lint.stdout, lint.stderr);
}

#[test]
fn bad_harness_keys_are_errors_with_file_and_line() {
    for (table, line, needle) in [
        ("[harness]\npathz = []\n", 3, "pathz"),
        (
            "[harness.sections]\n\"**/pyproject.toml\" = [\"tool..pytest\"]\n",
            3,
            "tool..pytest",
        ),
        (
            "[harness.sections]\n\"**/setup.cfg\" = [\"tool:[pytest\"]\n",
            3,
            "tool:[pytest",
        ),
        (
            "[harness]\npaths = [\"/abs/conftest.py\"]\n",
            3,
            "/abs/conftest.py",
        ),
        (
            "[trailers]\nharness = \"no colon\"\n",
            3,
            "trailers.harness",
        ),
    ] {
        let p = Project::new();
        p.write("qa/merge_ledger.toml", format!("version = 1\n{table}"));
        let run = p.guard(&["lint"]);
        assert_eq!(run.code, 2, "{table}: {}{}", run.stdout, run.stderr);
        let expected = format!("qa/merge_ledger.toml:{line}:");
        assert!(
            run.stderr.contains(&expected) && run.stderr.contains(needle),
            "{table}: wants {expected} and {needle}: {}",
            run.stderr
        );
    }
}

// Cargo.toml: how the tests build, and which files build as tests.

const CARGO_TOML: &str = "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n\n[profile.dev]\nopt-level = 0\n";

#[test]
fn agent_changes_to_cargo_test_builds_are_rejected_a_dependency_is_not() {
    for (what, new) in [
        (
            "debug assertions off for the tests (debug_assert_eq! then checks nothing)",
            CARGO_TOML.replace(
                "opt-level = 0\n",
                "opt-level = 0\ndebug-assertions = false\n",
            ),
        ),
        (
            "a test profile of its own",
            format!("{CARGO_TOML}\n[profile.test]\noverflow-checks = false\n"),
        ),
        (
            "an integration test that no longer runs",
            format!("{CARGO_TOML}\n[[test]]\nname = \"sums\"\ntest = false\n"),
        ),
        (
            "a test target built from another file",
            format!("{CARGO_TOML}\n[[test]]\nname = \"sums\"\npath = \"tests/sums_v2.rs\"\n"),
        ),
        (
            "the library's unit tests left out",
            format!("{CARGO_TOML}\n[lib]\ntest = false\n"),
        ),
        (
            "tests not discovered",
            CARGO_TOML.replace(
                "edition = \"2021\"\n",
                "edition = \"2021\"\nautotests = false\n",
            ),
        ),
        (
            "a build script",
            CARGO_TOML.replace(
                "edition = \"2021\"\n",
                "edition = \"2021\"\nbuild = \"gen.rs\"\n",
            ),
        ),
    ] {
        let (p, base) = repo(&[("Cargo.toml", CARGO_TOML)]);
        p.write("Cargo.toml", &new);
        p.commit_as(CURSOR, "Tidy the manifest\n");
        let run = check(&p, &base, &[]);
        assert_eq!(run.code, 1, "{what}: {}", run.stdout);
        expect_agent_edit(&run, &["Cargo.toml"]);
    }
    // A dependency, or the version, is the code's: no finding.
    let (p, base) = repo(&[("Cargo.toml", CARGO_TOML)]);
    p.write(
        "Cargo.toml",
        CARGO_TOML
            .replace("version = \"0.1.0\"", "version = \"0.2.0\"")
            .replace("[dependencies]\n", "[dependencies]\nitoa = \"1\"\n"),
    );
    p.commit_as(CURSOR, "Format numbers with itoa\n");
    expect(&check(&p, &base, &[]), 0, &[]);
}

#[test]
fn a_changed_setup_py_is_a_harness_edit() {
    // Its entry points can register a pytest plugin that passes every test, and guard cannot
    // run it to know: any agent change of it counts.
    let setup = "from setuptools import setup\n\nsetup(name=\"calc\", version=\"1.0\")\n";
    let (p, base) = repo(&[("setup.py", setup)]);
    p.write(
        "setup.py",
        setup.replace(
            "version=\"1.0\")",
            "version=\"1.0\", entry_points={\"pytest11\": [\"green = calc\"]})",
        ),
    );
    p.commit_as(CURSOR, "Package metadata\n");
    expect_agent_edit(&check(&p, &base, &[]), &["setup.py"]);
}

#[test]
fn the_pre_receive_hook_rejects_an_agents_debug_assertions_off() {
    let s = Server::new("");
    write_in(&s.work, "Cargo.toml", CARGO_TOML);
    s.commit("Add the manifest\n\nTest-Harness: human\n");
    s.push(&["origin", "main"]).assert_accepted();
    write_in(
        &s.work,
        "Cargo.toml",
        &CARGO_TOML.replace(
            "opt-level = 0\n",
            "opt-level = 0\ndebug-assertions = false\n",
        ),
    );
    let commit = s.agent_commit("Faster debug builds\n");
    s.push(&["origin", "main"]).assert_rejected_with(&format!(
        "remote: error: refs/heads/main: [agent_edit_protected] {}",
        s.short(&commit)
    ));
}

// The task runners and scripts the CI workflow runs.

const WORKFLOW: &str = "on: push\njobs:\n  tests:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - run: make test\n      - name: Lint\n        run: |\n          ./ci/lint.sh\n";
const MAKEFILE: &str = "test:\n\tpython -m pytest tests\n";

#[test]
fn a_task_runner_the_ci_workflow_runs_is_harness_one_it_does_not_run_is_not() {
    let files = [
        (".github/workflows/ci.yml", WORKFLOW),
        ("Makefile", MAKEFILE),
        ("ci/lint.sh", "#!/bin/sh\nruff check .\n"),
        ("tools/other.sh", "#!/bin/sh\necho other\n"),
    ];
    // The agent drops a test from `make test`, which the protected workflow runs.
    let (p, base) = repo(&files);
    p.write(
        "Makefile",
        MAKEFILE.replace(
            "pytest tests",
            "pytest tests --deselect tests/test_calc.py::test_add",
        ),
    );
    p.commit_as(CURSOR, "Speed up CI\n");
    expect_agent_edit(&check(&p, &base, &[]), &["Makefile"]);
    // The same for a script a step runs by path.
    let (p, base) = repo(&files);
    p.write("ci/lint.sh", "#!/bin/sh\ntrue\n");
    p.commit_as(CURSOR, "Quieter lint\n");
    expect_agent_edit(&check(&p, &base, &[]), &["ci/lint.sh"]);
    // A script no CI file runs is the project's code.
    let (p, base) = repo(&files);
    p.write("tools/other.sh", "#!/bin/sh\necho changed\n");
    p.commit_as(CURSOR, "Other\n");
    expect(&check(&p, &base, &[]), 0, &[]);
    // Through the pre-receive hook.
    let s = Server::new("");
    for (path, text) in files {
        write_in(&s.work, path, text);
    }
    s.commit("Add CI\n\nLedger-Change: human\nTest-Harness: human\n");
    s.push(&["origin", "main"]).assert_accepted();
    write_in(&s.work, "Makefile", "test:\n\ttrue\n");
    let commit = s.agent_commit("Speed up CI\n");
    s.push(&["origin", "main"]).assert_rejected_with(&format!(
        "remote: error: refs/heads/main: [agent_edit_protected] {}",
        s.short(&commit)
    ));
}

#[test]
fn a_task_runner_is_found_in_the_directory_its_step_runs_in() {
    // The job's default working directory, a step's own, and a `cd` in the script.
    let workflow = "on: push\njobs:\n  tests:\n    defaults:\n      run:\n        working-directory: backend\n    steps:\n      - run: make test\n      - run: ./lint.sh\n        working-directory: ${{ github.workspace }}/ci\n      - run: cd ../docs && just check\n";
    let files = [
        (".github/workflows/ci.yml", workflow),
        ("backend/Makefile", MAKEFILE),
        ("ci/lint.sh", "#!/bin/sh\nruff check .\n"),
        ("docs/justfile", "check:\n\tsphinx-build -W docs out\n"),
        ("Makefile", MAKEFILE),
    ];
    for (path, weakened) in [
        ("backend/Makefile", "test:\n\ttrue\n"),
        ("ci/lint.sh", "#!/bin/sh\ntrue\n"),
        ("docs/justfile", "check:\n\ttrue\n"),
    ] {
        let (p, base) = repo(&files);
        p.write(path, weakened);
        p.commit_as(CURSOR, "Speed up CI\n");
        expect_agent_edit(&check(&p, &base, &[]), &[path]);
    }
    // The root's Makefile is not what the job runs.
    let (p, base) = repo(&files);
    p.write("Makefile", "test:\n\ttrue\n");
    p.commit_as(CURSOR, "Root Makefile\n");
    expect(&check(&p, &base, &[]), 0, &[]);
    // Through the pre-receive hook.
    let s = Server::new("");
    for (path, text) in files {
        write_in(&s.work, path, text);
    }
    s.commit("Add CI\n\nLedger-Change: human\nTest-Harness: human\n");
    s.push(&["origin", "main"]).assert_accepted();
    write_in(&s.work, "backend/Makefile", "test:\n\ttrue\n");
    let commit = s.agent_commit("Speed up CI\n");
    s.push(&["origin", "main"]).assert_rejected_with(&format!(
        "remote: error: refs/heads/main: [agent_edit_protected] {}",
        s.short(&commit)
    ));
}

#[test]
fn an_agents_change_of_npm_scripts_is_a_harness_edit_a_dependency_bump_is_not() {
    let package = "{\n  \"name\": \"app\",\n  \"scripts\": {\n    \"test\": \"jest --ci\"\n  },\n  \"devDependencies\": {\n    \"jest\": \"29.7.0\"\n  }\n}\n";
    let (p, base) = repo(&[("package.json", package)]);
    p.write(
        "package.json",
        package.replace(
            "jest --ci",
            "jest --ci --passWithNoTests --testPathIgnorePatterns=calc",
        ),
    );
    p.commit_as(CURSOR, "Faster tests\n");
    expect_agent_edit(&check(&p, &base, &[]), &["package.json"]);
    let (p, base) = repo(&[("package.json", package)]);
    p.write("package.json", package.replace("29.7.0", "30.0.0"));
    p.commit_as(CURSOR, "Bump jest\n");
    expect(&check(&p, &base, &[]), 0, &[]);
}
