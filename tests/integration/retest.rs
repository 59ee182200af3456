//! `guard retest`: the base's versions of the tests agent commits changed, run with real
//! pytest against the range's code in a copy of its tip. The agent breaks the code and hides
//! it in a way the static reading of test diffs does not see; the humans' test fails.

use crate::support::{Project, Run};

pub(crate) const HUMAN: (&str, &str) = ("Dev Human", "dev@example.com");
pub(crate) const AGENT: (&str, &str) = ("Cursor Agent", "cursoragent@cursor.com");

const LEDGER: &str = "version = 1\n\n[properties]\npaths = []\nrequired = false\n\n[fixtures]\nlockfile = \"qa/fixtures.lock.json\"\n\n[freeze]\nfile = \"qa/freeze.toml\"\n\n[agents]\nemails = ['cursoragent@cursor.com']\n";

const CALC: &str = "def total(xs):\n    return sum(xs)\n";
const TESTS: &str = "from calc import total\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n\n\ndef test_empty():\n    assert total([]) == 0\n";

/// A project whose first commit (a human's) holds the ledger, the code and its tests.
fn project() -> Project {
    project_with(&[("src/calc.py", CALC), ("tests/test_calc.py", TESTS)])
}

/// A project whose first commit (a human's) holds the ledger and `files`.
pub(crate) fn project_with(files: &[(&str, &str)]) -> Project {
    let p = Project::git();
    p.write("qa/merge_ledger.toml", LEDGER)
        .write("qa/freeze.toml", "version = 1\nmax_active_leases = 0\n")
        .write("qa/fixtures.lock.json", "{\"files\": {}}\n")
        .write(".gitignore", "__pycache__/\ntarget/\n");
    for (path, text) in files {
        p.write(path, text);
    }
    p.commit_as(
        HUMAN,
        "Add calc\n\nLedger-Change: human\nFreeze-Lease: human\nFixture-Lock: human\n",
    );
    p
}

/// `guard retest RANGE` with pytest on the put-back files, as JSON.
pub(crate) fn retest(p: &Project, range: &str) -> Run {
    p.guard(&[
        "retest",
        range,
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
        "--junitxml=junit.xml",
        "{files}",
    ])
}

/// The agent's own suite passes in the work tree (pytest, and hypothesis where used, must
/// be installed): the evasion under test is real.
pub(crate) fn pytest_green(p: &Project) {
    let ran = std::process::Command::new("python3")
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .current_dir(p.root())
        .env("PYTHONPATH", p.path("src"))
        .output()
        .unwrap();
    assert!(
        ran.status.success(),
        "the agent's suite must be green (pytest and hypothesis installed):\n{}{}",
        String::from_utf8_lossy(&ran.stdout),
        String::from_utf8_lossy(&ran.stderr)
    );
}

/// The test ids of a JSON report's `old_test_fails` findings.
pub(crate) fn old_tests(run: &Run) -> Vec<String> {
    run.json()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "old_test_fails")
        .map(|f| f["test"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// The repository's state a retest must leave as it was: HEAD, the index, the work tree.
fn state(p: &Project) -> (String, Vec<u8>, String) {
    (
        p.rev("HEAD"),
        std::fs::read(p.path(".git/index")).unwrap(),
        p.git_cmd(&["status", "--porcelain", "--untracked-files=all"]),
    )
}

/// The agent breaks `total` and throws the test bodies away with a decorator of its own:
/// each test's text is as it was, so reading the diff finds no weakened assertion.
fn decorator_hidden() -> Project {
    let p = project();
    p.write("src/calc.py", "def total(xs):\n    return sum(xs) + 1\n");
    p.write(
        "tests/test_calc.py",
        format!(
            "def _fast(f):\n    def run():\n        pass\n    return run\n\n\n{}",
            TESTS
                .replace("def test_total", "@_fast\ndef test_total")
                .replace("def test_empty", "@_fast\ndef test_empty")
        ),
    );
    p.commit_as(AGENT, "Speed up the tests\n");
    p
}

#[test]
fn an_agent_that_breaks_the_code_and_hides_it_meets_the_humans_test() {
    let p = decorator_hidden();
    // Green with the agent's tests: pytest runs the empty wrappers.
    pytest_green(&p);
    let before = state(&p);
    let run = retest(&p, "HEAD~1..HEAD");
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let json = run.json();
    let old = old_tests(&run);
    assert_eq!(
        old,
        [
            "tests/test_calc.py::test_total",
            "tests/test_calc.py::test_empty"
        ],
        "{json:#}"
    );
    // The finding ends with pytest's own failure message.
    let message = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "old_test_fails")
        .and_then(|f| f["message"].as_str())
        .unwrap();
    assert!(message.ends_with("): assert 4 == 3"), "{message}");
    assert!(
        run.stderr.contains("guard: 1 file of HEAD~1..HEAD as "),
        "{}",
        run.stderr
    );
    // The repository is as it was: HEAD, index and work tree (no junit.xml, no copy).
    assert_eq!(state(&p), before);
    assert!(!p.path("junit.xml").exists());
}

#[test]
fn a_refactor_that_keeps_the_meaning_passes() {
    let p = project();
    p.write(
        "tests/test_calc.py",
        "from calc import total\n\n\ndef test_total():\n    numbers = [1, 2]\n    assert total(numbers) == 3\n\n\ndef test_empty():\n    assert total([]) == 0\n\n\ndef test_one():\n    assert total([5]) == 5\n",
    );
    p.commit_as(AGENT, "Tidy the tests\n");
    let run = retest(&p, "HEAD~1..HEAD");
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.json()["findings"], serde_json::json!([]));
}

#[test]
fn a_humans_change_of_the_test_is_not_put_back() {
    let p = project();
    // The agent changes behaviour and the test; a human then approves it in a commit of
    // their own, re-making the test change.
    p.write("src/calc.py", "def total(xs):\n    return sum(xs) + 1\n");
    p.write(
        "tests/test_calc.py",
        TESTS.replace("== 3", "== 4").replace("== 0", "== 1"),
    );
    p.commit_as(AGENT, "Count the carry\n");
    let run = retest(&p, "HEAD~1..HEAD");
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    p.write(
        "tests/test_calc.py",
        format!(
            "{}\n",
            TESTS.replace("== 3", "== 4").replace("== 0", "== 1")
        ),
    );
    p.commit_as(HUMAN, "Approve the carry\n");
    let run = retest(&p, "HEAD~2..HEAD");
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("guard: nothing to retest in HEAD~2..HEAD"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_put_back_test_file_that_did_not_run_is_old_test_fails() {
    let p = project();
    p.write("tests/test_calc.py", TESTS.replace("== 3", "== 3  # same"));
    p.commit_as(AGENT, "Comment\n");
    // The command runs other tests than the put-back file.
    p.write(
        "tests/test_other.py",
        "def test_other():\n    assert True\n",
    );
    p.commit_as(HUMAN, "Another test\n");
    let run = p.guard(&[
        "retest",
        "HEAD~2..HEAD",
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
        "--junitxml=junit.xml",
        "tests/test_other.py",
    ]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let json = run.json();
    assert_eq!(
        json["reasons"],
        serde_json::json!(["old_test_fails"]),
        "{json:#}"
    );
    assert!(
        json["findings"][0]["message"]
            .as_str()
            .unwrap()
            .starts_with("the base's test tests/test_calc.py::test_total did not run (no record in the reports)"),
        "{json:#}"
    );
    // A command that cannot start, and a report it did not write, cannot be judged.
    let run = p.guard(&[
        "retest",
        "HEAD~2..HEAD",
        "--junit",
        "junit.xml",
        "--",
        "no-such-runner",
    ]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    let run = p.guard(&[
        "retest",
        "HEAD~2..HEAD",
        "--junit",
        "junit.xml",
        "--",
        "true",
    ]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("the run wrote no report here"),
        "{}",
        run.stderr
    );
}

#[test]
fn an_agents_new_conftest_is_not_in_the_copy_and_each_base_test_must_run() {
    let p = project();
    // The agent breaks the code, rewrites one test, and adds a conftest.py that turns every
    // failure into a pass and deselects the other test: files the base has none of that
    // pytest loads unasked are removed from the copy.
    p.write("src/calc.py", "def total(xs):\n    return sum(xs) + 1\n");
    p.write("tests/test_calc.py", TESTS.replace("== 3", "== 4"));
    p.write(
        "tests/conftest.py",
        "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n    outcome = yield\n    rep = outcome.get_result()\n    rep.outcome = \"passed\"\n\n\ndef pytest_collection_modifyitems(items):\n    items[:] = [i for i in items if \"empty\" not in i.name]\n",
    );
    p.commit_as(AGENT, "Fix the totals\n");
    let run = retest(&p, "HEAD~1..HEAD");
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("guard: removed from the copy, as the base has none and pytest or Python would load them unasked: tests/conftest.py"),
        "{}",
        run.stderr
    );
    let old = old_tests(&run);
    assert_eq!(
        old,
        [
            "tests/test_calc.py::test_total",
            "tests/test_calc.py::test_empty"
        ]
    );
}

#[test]
fn the_command_keeps_ctrl_c() {
    // guard catches SIGINT to outlive the command and remove the copy; the command must get
    // the default action (an ignored signal stays ignored in a program it starts, and
    // pytest then could not be stopped). Python installs its KeyboardInterrupt handler only
    // over the default.
    let p = project();
    p.write("tests/test_calc.py", TESTS.replace("== 3", "== 3  # same"));
    p.commit_as(AGENT, "Comment\n");
    let run = p.guard(&[
        "retest",
        "HEAD~1..HEAD",
        "--junit",
        "junit.xml",
        "--",
        "python3",
        "-c",
        "import signal, sys; print(signal.getsignal(signal.SIGINT), file=sys.stderr)",
    ]);
    assert!(run.stderr.contains("default_int_handler"), "{}", run.stderr);
}

#[test]
fn a_human_commit_on_a_parallel_branch_approves_nothing_of_the_agents() {
    // The agent breaks the code and rewrites a test on one branch; a human adds a test to
    // the same file on another, dated later, and the branches are merged. Read in date
    // order, the human's commit came last and counted as approving the file: nothing was
    // put back. Only a human commit that descends from the agent's approves it.
    let p = project();
    let base = p.rev("HEAD");
    let commit = |who: (&str, &str), date: &str, message: &str| {
        p.git_cmd(&["add", "-A"]);
        let author = format!("{} <{}>", who.0, who.1);
        p.git_env(
            &[
                ("GIT_AUTHOR_DATE", date),
                ("GIT_COMMITTER_DATE", date),
                ("GIT_COMMITTER_NAME", who.0),
                ("GIT_COMMITTER_EMAIL", who.1),
            ],
            &["commit", "-q", "--author", &author, "-m", message],
        );
    };
    p.git_cmd(&["checkout", "-q", "-b", "agent"]);
    p.write(
        "src/calc.py",
        "def total(xs):\n    return sum(xs) if xs else 1\n",
    );
    p.write("tests/test_calc.py", TESTS.replace("== 0", "== 1"));
    commit(AGENT, "2026-01-02T00:00:00Z", "Empty totals count one");
    p.git_cmd(&["checkout", "-q", "-b", "human", &base]);
    p.write(
        "tests/test_calc.py",
        TESTS.replace(
            "from calc import total\n",
            "from calc import total\n\n\ndef test_pair():\n    assert total([2, 2]) == 4\n",
        ),
    );
    commit(HUMAN, "2026-01-03T00:00:00Z", "Add a test");
    p.git_cmd(&["checkout", "-q", "agent"]);
    p.git_env(
        &[
            ("GIT_AUTHOR_DATE", "2026-01-04T00:00:00Z"),
            ("GIT_COMMITTER_DATE", "2026-01-04T00:00:00Z"),
        ],
        &["merge", "-q", "--no-ff", "-m", "Merge", "human"],
    );
    let run = retest(&p, &format!("{base}..HEAD"));
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.reasons().contains(&"old_test_fails".to_string()),
        "{}",
        run.stdout
    );
}

#[test]
fn check_judges_the_retest_report_ci_passes_it() {
    // CI's test job runs `guard retest` and keeps its report; the judging job's `guard
    // check` plans the same put-back from git and holds the report to it.
    let p = decorator_hidden();
    let report = p.path("retest-junit.xml");
    let report = report.to_str().unwrap();
    let run = p.guard(&[
        "retest",
        "HEAD~1..HEAD",
        "--junit",
        report,
        "--",
        "python3",
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        &format!("--junitxml={report}"),
        "{files}",
    ]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);

    let check = |args: &[&str]| {
        let mut all = vec!["check", "HEAD~1..HEAD", "--format", "json"];
        all.extend(args);
        p.guard(&all)
    };
    let judged = check(&["--retest-junit", "retest-junit.xml"]);
    assert_eq!(judged.code, 1, "{}{}", judged.stdout, judged.stderr);
    assert_eq!(
        old_tests(&judged),
        [
            "tests/test_calc.py::test_total",
            "tests/test_calc.py::test_empty"
        ],
        "{}",
        judged.stdout
    );

    // A report that is not there, while an agent changed a test: the humans' tests did not
    // run, which rejects.
    let missing = check(&["--retest-junit", "nowhere.xml"]);
    assert_eq!(missing.code, 1, "{}{}", missing.stdout, missing.stderr);
    let message = missing.json()["findings"][0]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.starts_with("no report of `guard retest` at nowhere.xml"),
        "{message}"
    );
    // Without `--retest-junit`, `check` judges what it always did (the weakened test's
    // decorator is not a rule of its own): no retest finding.
    let plain = check(&[]);
    assert!(!plain.stdout.contains("old_test_fails"), "{}", plain.stdout);
}

#[test]
fn a_range_without_agent_test_changes_needs_no_retest_report() {
    let p = project();
    p.write("src/calc.py", "def total(xs):\n    return sum(list(xs))\n");
    p.commit_as(AGENT, "Accept any iterable\n");
    let run = p.guard(&[
        "check",
        "HEAD~1..HEAD",
        "--retest-junit",
        "nowhere.xml",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    // And `guard retest` runs nothing: the range's own run is all there is.
    let run = retest(&p, "HEAD~1..HEAD");
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("guard: nothing to retest in HEAD~1..HEAD"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("pytest"), "{}", run.stderr);
}

#[test]
fn the_quickstart_script_ends_with_a_retest_that_rejects() {
    // README's quick start runs examples/quickstart.sh: every stage, the last one the
    // humans' test run against an agent's hidden break.
    let tmp = Project::new();
    // As a user runs it: the script sets the identities of its commits itself.
    let out = std::process::Command::new("bash")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/quickstart.sh"
        ))
        .env("GUARD", env!("CARGO_BIN_EXE_guard"))
        .env("TMPDIR", tmp.root())
        .env("HOME", tmp.root())
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("GIT_AUTHOR_NAME")
        .env_remove("GIT_AUTHOR_EMAIL")
        .env_remove("GIT_COMMITTER_NAME")
        .env_remove("GIT_COMMITTER_EMAIL")
        .env_remove("GIT_DIR")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("(guard score of the agent's own run: MERGE, exit 0)")
            && stdout.contains("error[old_test_fails]: tests/test_billing.py:12: the base's test tests/test_billing.py::test_total fails")
            && stdout.ends_with(&format!(
                "(exit 1: REJECT)\n\nThe repository is in {}\n",
                stdout.rsplit_once("The repository is in ").unwrap().1.trim_end()
            )),
        "{stdout}"
    );
}

#[test]
fn a_merge_that_takes_an_older_test_from_an_older_first_parent_is_put_back() {
    // The humans strengthen the test (the base); the agent breaks the code in a merge whose
    // first parent is the older commit, keeping the older, weaker test. Against its first
    // parent the merge changes no test; against the base it does.
    let p = project();
    let older = p.rev("HEAD");
    p.write(
        "tests/test_calc.py",
        format!("{TESTS}\n\ndef test_pair():\n    assert total([2, 2]) == 4\n"),
    );
    p.commit_as(HUMAN, "Test pairs\n");
    let base = p.rev("HEAD");
    p.git_cmd(&["checkout", "-q", "--detach", &older]);
    p.write(
        "src/calc.py",
        "def total(xs):\n    return sum(xs) + (1 if len(xs) == 2 and xs[0] == xs[1] else 0)\n",
    );
    p.git_cmd(&["add", "-A"]);
    let tree = p.git_cmd(&["write-tree"]);
    let merge = p.git_env(
        &[
            ("GIT_AUTHOR_NAME", AGENT.0),
            ("GIT_AUTHOR_EMAIL", AGENT.1),
            ("GIT_COMMITTER_NAME", AGENT.0),
            ("GIT_COMMITTER_EMAIL", AGENT.1),
        ],
        &[
            "commit-tree",
            tree.trim(),
            "-p",
            &older,
            "-p",
            &base,
            "-m",
            "Merge main",
        ],
    );
    p.git_cmd(&["checkout", "-q", "--detach", merge.trim()]);
    let run = retest(&p, &format!("{base}..HEAD"));
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert_eq!(old_tests(&run), ["tests/test_calc.py::test_pair"]);
    assert!(
        run.stdout
            .contains("a merge of the range (no commit of it wrote this version itself)")
            || run.stdout.contains("Merge main"),
        "{}",
        run.stdout
    );
}

#[test]
fn committed_bytecode_that_python_would_run_instead_of_the_source_is_not_in_the_copy() {
    // The tests call a helper module; the agent breaks the code and commits an
    // unchecked-hash .pyc of a helper that asserts nothing beside the unchanged source:
    // Python runs the .pyc without reading the .py, and the agent's suite is green.
    let helpers = "from calc import total\n\n\ndef check_total(xs, expected):\n    assert total(xs) == expected\n";
    let tests =
        "from helpers import check_total\n\n\ndef test_total():\n    check_total([1, 2], 3)\n";
    let p = project_with(&[
        ("src/calc.py", CALC),
        ("tests/helpers.py", helpers),
        ("tests/test_calc.py", tests),
        ("pytest.ini", "[pytest]\npythonpath = tests\n"),
    ]);
    p.write("src/calc.py", "def total(xs):\n    return sum(xs) + 1\n");
    // The bytecode of a helper that asserts nothing, at the path Python looks for it.
    let script = "import importlib.util, py_compile, shutil, sys\n\
        open('noop.py', 'w').write('def check_total(xs, expected):\\n    pass\\n')\n\
        target = importlib.util.cache_from_source('tests/helpers.py')\n\
        py_compile.compile('noop.py', cfile=target, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)\n";
    let made = std::process::Command::new("python3")
        .args(["-c", script])
        .current_dir(p.root())
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    p.remove("noop.py");
    p.write(".gitignore", "");
    p.commit_as(AGENT, "Speed up imports\n");
    // Green as committed (a fresh checkout of the tip runs the bytecode).
    pytest_green(&p);
    let run = retest(&p, "HEAD~1..HEAD");
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.reasons().contains(&"test_failures".to_string()),
        "{}",
        run.stdout
    );
}
