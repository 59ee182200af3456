//! `weakened_test`: an agent commit that makes a test check less, found by `guard check` and
//! the hooks in the test files the commit changed, on real git repositories. Each attack is
//! the smallest edit that turns a red test green without fixing anything; the same edit by a
//! human, and an agent that adds tests, renames or reformats, pass.

use crate::support::server::{Server, write_in};
use crate::support::{Project, Run};

const AGENT: (&str, &str) = ("Cursor Agent", "cursoragent@cursor.com");
const HUMAN: (&str, &str) = ("Dev Human", "dev@example.com");

/// A pytest file; the lines the tests below name are counted by hand:
/// 6 `def test_total`, 7 and 8 its assertions, 11 `def test_ratio`, 12 its assertion.
const CALC: &str = "import pytest\n\nfrom calc import ratio, total\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n    assert total([]) == 0\n\n\ndef test_ratio():\n    assert ratio(1, 2) == pytest.approx(0.5, rel=1e-9)\n";

/// A Rust crate's unit tests: line 9 `#[test]`, 10 `fn adds`, 11 its assertion.
const LIB: &str = "pub fn add(a: u32, b: u32) -> u32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds() {\n        assert_eq!(add(1, 2), 3);\n    }\n}\n";

/// A repository whose first commit (a human's) holds `tests/test_calc.py` and `src/lib.rs`.
fn project() -> Project {
    let p = Project::git();
    p.write("tests/test_calc.py", CALC).write("src/lib.rs", LIB);
    p.commit_as(HUMAN, "Add calc and its tests\n");
    p
}

/// `guard check HEAD~1..HEAD --format json` after `who` commits `files` (path, text).
fn commit_and_check(p: &Project, who: (&str, &str), files: &[(&str, &str)]) -> Run {
    for (rel, text) in files {
        p.write(rel, text);
    }
    p.commit_as(who, "Make the suite green\n");
    p.guard(&["check", "HEAD~1..HEAD", "--format", "json"])
}

/// `commit_and_check` of an agent's commit that writes `edited` over `test_total`'s first
/// assertion (line 7), in a new project.
fn agent_rewrites_first_total(edited: &str) -> Run {
    let p = project();
    let calc = CALC.replace("    assert total([1, 2]) == 3\n", edited);
    commit_and_check(&p, AGENT, &[("tests/test_calc.py", &calc)])
}

/// The same edit pushed through the installed pre-receive hook: rejected with `finding` (the
/// part after the file name) on tests/test_calc.py.
fn hook_rejects_first_total_rewrite(edited: &str, finding: &str) {
    hook_rejects_calc(
        &CALC.replace("    assert total([1, 2]) == 3\n", edited),
        finding,
    );
}

/// An agent's commit that makes tests/test_calc.py `calc`, pushed through the installed
/// pre-receive hook: rejected with `finding` (the part after the file name).
fn hook_rejects_calc(calc: &str, finding: &str) {
    let s = Server::new("");
    write_in(&s.work, "tests/test_calc.py", CALC);
    s.commit("Add the calc tests\n");
    s.push(&["origin", "main"]).assert_accepted();
    write_in(&s.work, "tests/test_calc.py", calc);
    let commit = s.agent_commit("Tidy test_total\n");
    s.push(&["origin", "main"]).assert_rejected_with(&format!(
        "remote: error: refs/heads/main: [weakened_test] {} \"Tidy test_total\" tests/test_calc.py:{finding}",
        s.short(&commit)
    ));
}

/// (path, line, test) of each `weakened_test` finding, and the messages.
fn weakened(run: &Run) -> Vec<(String, u64, String)> {
    run.json()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "weakened_test")
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap(),
                f["test"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn messages(run: &Run) -> Vec<String> {
    run.json()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "weakened_test")
        .map(|f| f["message"].as_str().unwrap().to_string())
        .collect()
}

/// One of the run's `weakened_test` messages starts with `kind` and shows `shown`.
fn assert_said(run: &Run, kind: &str, shown: &str) {
    assert!(
        messages(run)
            .iter()
            .any(|m| m.starts_with(kind) && m.contains(shown)),
        "{kind} {shown}: {:?}",
        messages(run)
    );
}

/// One attack of issue 12 by an agent commit.
struct Attack {
    what: &'static str,
    /// The files it writes (path, text).
    files: Vec<(&'static str, String)>,
    /// The finding's path, line and test.
    at: (&'static str, u64, &'static str),
    /// A piece of the finding's message: the diff excerpt.
    excerpt: &'static str,
}

fn attack(
    what: &'static str,
    files: Vec<(&'static str, String)>,
    at: (&'static str, u64, &'static str),
    excerpt: &'static str,
) -> Attack {
    Attack {
        what,
        files,
        at,
        excerpt,
    }
}

fn attacks() -> Vec<Attack> {
    let calc = "tests/test_calc.py";
    vec![
        attack(
            "(a) an assert deleted",
            vec![(calc, CALC.replace("    assert total([]) == 0\n", ""))],
            (calc, 6, "tests/test_calc.py::test_total"),
            "removes an assertion in test tests/test_calc.py::test_total: `-assert total([]) == 0`",
        ),
        attack(
            "(b) `assert x == y` made `assert x`",
            vec![(calc, CALC.replace("assert total([1, 2]) == 3", "assert total([1, 2])"))],
            (calc, 7, "tests/test_calc.py::test_total"),
            "loosens an assertion in test tests/test_calc.py::test_total: `-assert total([1, 2]) == 3` `+assert total([1, 2])`",
        ),
        attack(
            "(c) @pytest.mark.skip added",
            vec![(
                calc,
                CALC.replace(
                    "def test_total():",
                    "@pytest.mark.skip(reason=\"flaky\")\ndef test_total():",
                ),
            )],
            (calc, 6, "tests/test_calc.py::test_total"),
            "adds a skip or expected failure in test tests/test_calc.py::test_total: `+@pytest.mark.skip(reason=\"flaky\")`",
        ),
        attack(
            "(d) an early return added",
            vec![(
                calc,
                CALC.replace("def test_total():\n", "def test_total():\n    return\n"),
            )],
            (calc, 7, "tests/test_calc.py::test_total"),
            "returns before its assertions in test tests/test_calc.py::test_total: `+return`",
        ),
        attack(
            "(e) pytest.approx widened from rel=1e-9 to rel=0.5",
            vec![(calc, CALC.replace("rel=1e-9", "rel=0.5"))],
            (calc, 12, "tests/test_calc.py::test_ratio"),
            "widens a tolerance in test tests/test_calc.py::test_ratio: `-rel=1e-9` `+rel=0.5`",
        ),
        attack(
            "(f) a test function deleted",
            vec![(
                calc,
                CALC.replace(
                    "\n\ndef test_ratio():\n    assert ratio(1, 2) == pytest.approx(0.5, rel=1e-9)\n",
                    "",
                ),
            )],
            (calc, 11, "tests/test_calc.py::test_ratio"),
            "deletes the test in test tests/test_calc.py::test_ratio (in the parent): `-test_ratio (line 11)`",
        ),
        attack(
            "(g) #[ignore] added to a Rust test",
            vec![("src/lib.rs", LIB.replace("    #[test]\n", "    #[test]\n    #[ignore]\n"))],
            ("src/lib.rs", 10, "src/lib.rs::tests::adds"),
            "adds a skip or expected failure in test src/lib.rs::tests::adds: `+#[ignore]`",
        ),
        attack(
            "(h) assert_eq! made assert!(true)",
            vec![("src/lib.rs", LIB.replace("assert_eq!(add(1, 2), 3)", "assert!(true)"))],
            ("src/lib.rs", 10, "src/lib.rs::tests::adds"),
            "removes an assertion in test src/lib.rs::tests::adds: `-assert_eq!(add(1, 2), 3)`",
        ),
    ]
}

#[test]
fn each_weakening_by_an_agent_commit_is_rejected_with_file_line_and_excerpt() {
    for Attack {
        what,
        files,
        at: (path, line, test),
        excerpt,
    } in attacks()
    {
        let p = project();
        let files: Vec<(&str, &str)> = files.iter().map(|(r, t)| (*r, t.as_str())).collect();
        let run = commit_and_check(&p, AGENT, &files);
        assert_eq!(run.code, 1, "{what}: {}", run.stdout);
        assert_eq!(run.reasons(), ["weakened_test"], "{what}");
        assert_eq!(
            weakened(&run),
            [(path.to_string(), line, test.to_string())],
            "{what}"
        );
        let message = &messages(&run)[0];
        assert!(message.contains(excerpt), "{what}: {message}");
        let finding = &run.json()["findings"][0];
        assert_eq!(
            finding["commit"].as_str(),
            Some(p.short("HEAD").as_str()),
            "{what}"
        );
        let help = finding["help"].as_str().unwrap();
        assert!(
            help.contains("git rebase -i") && help.contains("Test-Removal: human"),
            "{what}: {help}"
        );
    }
}

#[test]
fn weakenings_in_several_files_of_one_commit_are_each_found() {
    // The commit's changed test files are parsed on the calling thread when they are small,
    // and on every core at once past 256 KiB of text (a bot's reformatting commit touches
    // dozens): each file's weakening is found, in file order, whichever thread read which
    // version. The filler (after the tests) takes the second past the bound.
    for filler_lines in [0, 10_000] {
        let p = project();
        let python_filler = "FILLER_LINE_OF_A_LONG_TEST_MODULE = 1\n".repeat(filler_lines);
        let rust_filler = "// filler line of a long source file\n".repeat(filler_lines);
        let files = [
            (
                "tests/test_calc.py",
                CALC.replace("rel=1e-9", "rel=0.5") + &python_filler,
            ),
            (
                "src/lib.rs",
                LIB.replace("assert_eq!(add(1, 2), 3)", "assert!(true)") + &rust_filler,
            ),
            (
                "tests/test_more.py",
                "def test_more():\n    assert 1\n".to_string() + &python_filler,
            ),
        ];
        let total: usize = files.iter().map(|(_, text)| text.len()).sum();
        assert_eq!(total > 256 << 10, filler_lines > 0, "{total} bytes");
        let files: Vec<(&str, &str)> = files.iter().map(|(r, t)| (*r, t.as_str())).collect();
        let run = commit_and_check(&p, AGENT, &files);
        assert_eq!(run.code, 1, "{}", run.stdout);
        assert_eq!(
            weakened(&run),
            [
                (
                    "src/lib.rs".to_string(),
                    10,
                    "src/lib.rs::tests::adds".to_string()
                ),
                (
                    "tests/test_calc.py".to_string(),
                    12,
                    "tests/test_calc.py::test_ratio".to_string()
                ),
            ],
            "{filler_lines} filler lines"
        );
    }
}

#[test]
fn the_same_edits_by_a_human_are_not_weakened_tests() {
    let p = project();
    // (a) to (e), (g) and (h) in one human commit, then (f) in another.
    let calc = "import pytest\n\nfrom calc import ratio, total\n\n\n@pytest.mark.skip(reason=\"flaky\")\ndef test_total():\n    return\n    assert total([1, 2])\n\n\ndef test_ratio():\n    assert ratio(1, 2) == pytest.approx(0.5, rel=0.5)\n";
    let lib = LIB
        .replace("    #[test]\n", "    #[test]\n    #[ignore]\n")
        .replace("assert_eq!(add(1, 2), 3)", "assert!(true)");
    p.write("tests/test_calc.py", calc)
        .write("src/lib.rs", &lib);
    p.commit_as(HUMAN, "Park the calc tests\n");
    let cut = calc.replace(
        "\n\ndef test_ratio():\n    assert ratio(1, 2) == pytest.approx(0.5, rel=0.5)\n",
        "",
    );
    let run = commit_and_check(&p, HUMAN, &[("tests/test_calc.py", &cut)]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let run = p.guard(&["check", "HEAD~2..HEAD", "--format", "json"]);
    assert_eq!((run.code, weakened(&run)), (0, vec![]), "{}", run.stdout);

    // The same two commits by the agent: every weakening is named, in commit order, and in
    // a commit by file.
    let p = project();
    p.write("tests/test_calc.py", calc)
        .write("src/lib.rs", &lib);
    p.commit_as(AGENT, "Park the calc tests\n");
    commit_and_check(&p, AGENT, &[("tests/test_calc.py", &cut)]);
    let run = p.guard(&["check", "HEAD~2..HEAD", "--format", "json"]);
    let kinds: Vec<String> = messages(&run)
        .iter()
        .map(|m| m.split(" in test ").next().unwrap().to_string())
        .collect();
    assert_eq!(
        kinds,
        [
            // src/lib.rs, then tests/test_calc.py; (a) and (b) in one test are one removal.
            "removes an assertion",
            "adds a skip or expected failure",
            "removes an assertion",
            "adds a skip or expected failure",
            "returns before its assertions",
            "widens a tolerance",
            "deletes the test",
        ],
        "{}",
        run.stdout
    );
}

#[test]
fn an_agent_adding_tests_and_assertions_is_no_finding() {
    let p = project();
    let more = CALC.replace(
        "    assert total([]) == 0\n",
        "    assert total([]) == 0\n    assert total([5]) == 5\n",
    ) + "\n\ndef test_total_of_negatives():\n    assert total([-1, -2]) == -3\n";
    let lib = LIB.replace(
        "        assert_eq!(add(1, 2), 3);\n",
        "        assert_eq!(add(1, 2), 3);\n        assert_eq!(add(0, 0), 0);\n",
    );
    let run = commit_and_check(
        &p,
        AGENT,
        &[("tests/test_calc.py", &more), ("src/lib.rs", &lib)],
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(weakened(&run).is_empty());
}

#[test]
fn an_agent_renaming_moving_or_reformatting_tests_is_no_finding() {
    let p = project();
    // The file moved (git mv), a test renamed with its body unchanged, and the rest
    // reformatted as black would.
    p.git_cmd(&["mv", "tests/test_calc.py", "tests/test_arithmetic.py"]);
    let moved = CALC
        .replace("def test_ratio():", "def test_ratio_of_halves():")
        .replace(
            "    assert ratio(1, 2) == pytest.approx(0.5, rel=1e-9)\n",
            "    assert ratio(\n        1,\n        2,\n    ) == pytest.approx(0.5, rel=1e-9)  # exact\n",
        );
    let run = commit_and_check(&p, AGENT, &[("tests/test_arithmetic.py", &moved)]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(weakened(&run).is_empty());
}

#[test]
fn an_agent_commit_with_the_human_trailer_is_still_rejected() {
    let p = project();
    p.write(
        "tests/test_calc.py",
        CALC.replace("    assert total([]) == 0\n", ""),
    );
    p.commit_as(AGENT, "Drop a flaky assertion\n\nTest-Removal: human\n");
    let run = p.guard(&["check", "HEAD~1..HEAD", "--format", "json"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert_eq!(weakened(&run).len(), 1);
    let help = run.json()["findings"][0]["help"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(help.contains("does not count"), "{help}");
}

/// A ledger with the test agent, the policy files it names, and `tests` as `[tests]`.
fn ledger_project(tests: &str) -> Project {
    let p = Project::git();
    p.write(
        "qa/merge_ledger.toml",
        format!(
            "version = 1\n\n[properties]\nrequired = false\n\n[fixtures]\nlockfile = \"qa/fixtures.lock.json\"\n\n[freeze]\nfile = \"qa/flake_freeze.txt\"\n\n[agents]\nemails = ['cursoragent@cursor.com']\n\n[tests]\n{tests}\n"
        ),
    )
    .write("qa/fixtures.lock.json", "{\"files\": {}}\n")
    .write("qa/flake_freeze.txt", "")
    .write("checks/verify_calc.py", CALC)
    .write("tests/test_calc.py", CALC);
    p.commit_as(HUMAN, "Add calc, its checks and the ledger\n");
    p
}

#[test]
fn tests_paths_name_the_test_files_and_weakened_can_warn() {
    let loosened = CALC.replace("assert total([1, 2]) == 3", "assert total([1, 2])");
    // By default `checks/` holds no test files.
    let p = ledger_project("");
    let run = commit_and_check(&p, AGENT, &[("checks/verify_calc.py", &loosened)]);
    assert_eq!((run.code, weakened(&run)), (0, vec![]), "{}", run.stdout);

    // Named in `[tests] paths` (a directory covers what is under it), it does; and then
    // `tests/` is not one unless listed.
    let p = ledger_project("paths = [\"checks/\"]");
    let run = commit_and_check(
        &p,
        AGENT,
        &[
            ("checks/verify_calc.py", &loosened),
            ("tests/test_calc.py", &loosened),
        ],
    );
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert_eq!(
        weakened(&run),
        [(
            "checks/verify_calc.py".to_string(),
            7,
            "checks/verify_calc.py::test_total".to_string()
        )]
    );

    // "warn" shows it without rejecting.
    let p = ledger_project("weakened = \"warn\"");
    let run = commit_and_check(&p, AGENT, &[("tests/test_calc.py", &loosened)]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let warnings = run.json()["warnings"].clone();
    assert_eq!(warnings[0]["code"], "weakened_test", "{warnings}");
    assert_eq!(warnings[0]["line"], 7);

    // "off" computes nothing; a value outside the three is refused with its line.
    let p = ledger_project("weakened = \"off\"");
    let run = commit_and_check(&p, AGENT, &[("tests/test_calc.py", &loosened)]);
    assert_eq!(
        (run.code, run.json()["warnings"].clone()),
        (0, serde_json::json!([]))
    );
    let p = Project::new();
    p.write("qa/merge_ledger.toml", "[tests]\nweakened = \"maybe\"\n");
    let run = p.guard(&["lint"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("qa/merge_ledger.toml:2:12: `tests.weakened` must be \"reject\", \"warn\" or \"off\", not \"maybe\""),
        "{}",
        run.stderr
    );
}

#[test]
fn a_merge_is_judged_by_what_it_changes_against_every_parent() {
    let p = project();
    // A human's side loosens an assertion; an agent merges it: the merge brings the human's
    // edit, it does not make it.
    p.git_cmd(&["checkout", "-q", "-b", "side"]);
    p.write(
        "tests/test_calc.py",
        CALC.replace("assert total([1, 2]) == 3", "assert total([1, 2])"),
    );
    p.commit_as(HUMAN, "Loosen a check on purpose\n");
    p.git_cmd(&["checkout", "-q", "main"]);
    p.write("README.md", "calc\n");
    p.commit_as(HUMAN, "Add a README\n");
    p.git_as(
        AGENT,
        &["merge", "-q", "--no-ff", "-m", "Merge side", "side"],
    );
    let run = p.guard(&["check", "HEAD~1..HEAD", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stdout);

    // An agent's merge that deletes a test itself (an evil merge) is its own weakening.
    p.git_cmd(&["reset", "-q", "--hard", "HEAD~1"]);
    p.git_as(AGENT, &["merge", "-q", "--no-ff", "--no-commit", "side"]);
    p.write(
        "tests/test_calc.py",
        CALC.replace("assert total([1, 2]) == 3", "assert total([1, 2])")
            .replace(
                "\n\ndef test_ratio():\n    assert ratio(1, 2) == pytest.approx(0.5, rel=1e-9)\n",
                "",
            ),
    );
    p.git_cmd(&["add", "-A"]);
    p.commit_index_as(AGENT, "Merge side\n", &[]);
    let run = p.guard(&["check", "HEAD~1..HEAD", "--format", "json"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert_eq!(
        weakened(&run),
        [(
            "tests/test_calc.py".to_string(),
            11,
            "tests/test_calc.py::test_ratio".to_string()
        )]
    );
}

#[test]
fn an_agent_push_that_loosens_an_assertion_is_rejected_by_the_pre_receive_hook() {
    let s = Server::new("");
    write_in(&s.work, "tests/test_calc.py", CALC);
    s.commit("Add the calc tests\n");
    s.push(&["origin", "main"]).assert_accepted();
    let landed = s.server_ref("refs/heads/main");

    write_in(
        &s.work,
        "tests/test_calc.py",
        &CALC.replace("assert total([1, 2]) == 3", "assert total([1, 2])"),
    );
    let commit = s.agent_commit("Make test_total pass\n");
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with(&format!(
        "remote: error: refs/heads/main: [weakened_test] {} \"Make test_total pass\" tests/test_calc.py:7: loosens an assertion",
        s.short(&commit)
    ));
    assert!(
        pushed
            .stderr
            .contains("`-assert total([1, 2]) == 3` `+assert total([1, 2])`"),
        "{}",
        pushed.stderr
    );
    assert_eq!(s.server_ref("refs/heads/main"), landed);

    // The same change by a human lands.
    s.git(&["reset", "-q", "--soft", "HEAD~"]);
    s.commit("Loosen test_total on purpose\n");
    s.push(&["origin", "main"]).assert_accepted();
}

#[test]
fn assertions_made_so_they_cannot_fail_are_found() {
    // An f-string is never empty when it has text of its own, and `f"{x == 1}"` is "True" or
    // "False": truthy whatever `x` is. A thing is always in a collection written to hold it.
    // `a || true` holds whatever `a` is, and `_` matches anything.
    for (edited, kind) in [
        (
            "    assert f\"{total([1, 2]) == 3}\"\n",
            "loosens an assertion",
        ),
        (
            "    assert f\"total: {total([1, 2])}\"\n",
            "removes an assertion",
        ),
        (
            "    assert total([1, 2]) in (3, total([1, 2]))\n",
            "removes an assertion",
        ),
    ] {
        let run = agent_rewrites_first_total(edited);
        assert_eq!(run.code, 1, "{edited}: {}", run.stdout);
        assert!(
            messages(&run).iter().any(|m| m.starts_with(kind)),
            "{edited}: {:?}",
            messages(&run)
        );
    }

    // Rust: a comparison `|| true` and a `matches!` of `_`.
    for edited in [
        "assert!(add(1, 2) == 3 || true);",
        "assert!(matches!(add(1, 2), _));",
    ] {
        let p = project();
        let lib = LIB.replace("assert_eq!(add(1, 2), 3);", edited);
        let run = commit_and_check(&p, AGENT, &[("src/lib.rs", &lib)]);
        assert_eq!(run.code, 1, "{edited}: {}", run.stdout);
        assert!(
            messages(&run)
                .iter()
                .any(|m| m.starts_with("removes an assertion")),
            "{edited}: {:?}",
            messages(&run)
        );
    }

    // Through the pre-receive hook.
    hook_rejects_first_total_rewrite(
        "    assert f\"{total([1, 2]) == 3}\"\n",
        "7: loosens an assertion",
    );
}

#[test]
fn a_test_unbound_after_its_definition_is_skipped() {
    // pytest collects what a test's name holds once the module has run: a test defined again
    // under the same name, its name bound to something else or deleted, or marked
    // `__test__ = False`, is not run (each checked with pytest). CALC has 12 lines.
    for (tail, line, shown) in [
        ("\n\ndef test_total():\n    pass\n", 15, "def test_total():"),
        ("\n\ntest_total = None\n", 15, "test_total = None"),
        ("\n\ndel test_total\n", 15, "del test_total"),
        (
            "\n\ntest_total.__test__ = False\n",
            15,
            "test_total.__test__ = False",
        ),
        (
            "\n\ntest_total = pytest.mark.skip(test_total)\n",
            15,
            "test_total = pytest.mark.skip(test_total)",
        ),
    ] {
        let p = project();
        let calc = format!("{CALC}{tail}");
        let run = commit_and_check(&p, AGENT, &[("tests/test_calc.py", &calc)]);
        assert_eq!(run.code, 1, "{tail}: {}", run.stdout);
        let found = weakened(&run);
        assert!(
            found.contains(&(
                "tests/test_calc.py".to_string(),
                line,
                "tests/test_calc.py::test_total".to_string()
            )),
            "{tail}: {found:?}"
        );
        assert_said(&run, "adds a skip", &format!("`+unbound later: {shown}`"));
    }

    // `__test__ = False` in the module: none of its tests is collected.
    let p = project();
    let calc = CALC.replace("import pytest\n", "import pytest\n__test__ = False\n");
    let run = commit_and_check(&p, AGENT, &[("tests/test_calc.py", &calc)]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    // One change that skips both tests: one finding that counts them.
    assert_eq!(weakened(&run).len(), 1, "{:?}", messages(&run));
    assert_said(
        &run,
        "adds a skip",
        "and 1 more test of the file, by one change: `+__test__ = False`",
    );

    // Through the pre-receive hook.
    hook_rejects_calc(&format!("{CALC}\n\ntest_total = None\n"), "15: adds a skip");
}

#[test]
fn skips_gained_without_a_new_skip_line_are_found() {
    // Each an agent's edit that makes a test skip (or pass whatever it asserts) without
    // adding a skip of the kinds above: a skip's condition made always true, the test
    // defined only under `if False:`, `#[should_panic]`, a `cfg` that leaves the test (or
    // its module) out of the build. (base, agent's edit, path, line, excerpt)
    let skipif = CALC.replace(
        "def test_total():",
        "@pytest.mark.skipif(sys.platform == \"win32\", reason=\"posix\")\ndef test_total():",
    );
    let cases = [
        (
            skipif.clone(),
            skipif.replace("sys.platform == \"win32\"", "True"),
            "tests/test_calc.py",
            6,
            "`+@pytest.mark.skipif(True, reason=\"posix\")`",
        ),
        (
            CALC.to_string(),
            CALC.replace(
                "def test_total():\n    assert total([1, 2]) == 3\n    assert total([]) == 0\n",
                "if False:\n    def test_total():\n        assert total([1, 2]) == 3\n        assert total([]) == 0\n",
            ),
            "tests/test_calc.py",
            6,
            "`+defined only under: if False:`",
        ),
        (
            LIB.to_string(),
            LIB.replace("    #[test]\n", "    #[test]\n    #[should_panic]\n"),
            "src/lib.rs",
            10,
            "`+#[should_panic]`",
        ),
        (
            LIB.to_string(),
            LIB.replace("    #[test]\n", "    #[test]\n    #[cfg(any())]\n"),
            "src/lib.rs",
            10,
            "`+#[cfg(any())]`",
        ),
        (
            LIB.to_string(),
            LIB.replace("#[cfg(test)]\nmod tests", "#[cfg(all(test, any()))]\nmod tests"),
            "src/lib.rs",
            5,
            "`+#[cfg(all(test, any()))]`",
        ),
    ];
    for (base, edited, path, line, excerpt) in cases {
        let p = project();
        p.write(path, &base);
        p.commit_as(HUMAN, "Set the tests up\n");
        let run = commit_and_check(&p, AGENT, &[(path, &edited)]);
        assert_eq!(run.code, 1, "{excerpt}: {}", run.stdout);
        let test = match path {
            "src/lib.rs" => "src/lib.rs::tests::adds",
            _ => "tests/test_calc.py::test_total",
        };
        assert_eq!(
            weakened(&run),
            [(path.to_string(), line, test.to_string())],
            "{excerpt}"
        );
        let message = &messages(&run)[0];
        assert!(
            message.contains("adds a skip or expected failure") && message.contains(excerpt),
            "{message}"
        );
    }

    // The same skip only reformatted (one argument a line, a trailing comma) is no finding.
    let p = project();
    p.write("tests/test_calc.py", &skipif);
    p.commit_as(HUMAN, "Skip on Windows\n");
    let reformatted = skipif.replace(
        "@pytest.mark.skipif(sys.platform == \"win32\", reason=\"posix\")",
        "@pytest.mark.skipif(\n    sys.platform==\"win32\",\n    reason=\"posix\",\n)",
    );
    let run = commit_and_check(&p, AGENT, &[("tests/test_calc.py", &reformatted)]);
    assert_eq!((run.code, weakened(&run)), (0, vec![]), "{}", run.stdout);

    // Through the pre-receive hook.
    for (base, edited, path) in [
        (
            skipif.clone(),
            skipif.replace("sys.platform == \"win32\"", "True"),
            "tests/test_calc.py",
        ),
        (
            LIB.to_string(),
            LIB.replace("    #[test]\n", "    #[test]\n    #[should_panic]\n"),
            "src/lib.rs",
        ),
    ] {
        let s = Server::new("");
        write_in(&s.work, path, &base);
        s.commit("Add the tests\n");
        s.push(&["origin", "main"]).assert_accepted();
        write_in(&s.work, path, &edited);
        let commit = s.agent_commit("Tidy the tests\n");
        s.push(&["origin", "main"]).assert_rejected_with(&format!(
            "remote: error: refs/heads/main: [weakened_test] {} \"Tidy the tests\" {path}:",
            s.short(&commit)
        ));
    }
}

#[test]
fn an_assertion_moved_where_it_may_not_run_is_loosened() {
    // The assertion's text is unchanged, but it no longer always runs: under `if False:`, in
    // a loop over nothing, or in a `try` whose handler swallows its failure (and in Rust
    // under `if false`).
    for (wrapped, header) in [
        (
            "    if False:\n        assert total([1, 2]) == 3\n",
            "if False:",
        ),
        (
            "    for _ in []:\n        assert total([1, 2]) == 3\n",
            "for _ in []:",
        ),
        (
            "    while False:\n        assert total([1, 2]) == 3\n",
            "while False:",
        ),
        (
            "    try:\n        assert total([1, 2]) == 3\n    except AssertionError:\n        pass\n",
            "try:",
        ),
        // A function the test defines and never calls, and a context manager that swallows
        // the failure.
        (
            "    def _later():\n        assert total([1, 2]) == 3\n",
            "def _later():",
        ),
        (
            "    with contextlib.suppress(AssertionError):\n        assert total([1, 2]) == 3\n",
            "with contextlib.suppress(AssertionError):",
        ),
    ] {
        let run = agent_rewrites_first_total(wrapped);
        assert_eq!(run.code, 1, "{header}: {}", run.stdout);
        assert_eq!(
            weakened(&run),
            [(
                "tests/test_calc.py".to_string(),
                8,
                "tests/test_calc.py::test_total".to_string()
            )],
            "{header}"
        );
        let shown = format!("`+assert total([1, 2]) == 3 [only under: {header}]`");
        assert_said(&run, "loosens an assertion", &shown);
    }

    // An assertion that already ran in a loop, left as it was, is no finding.
    let p = project();
    let looped = CALC.replace(
        "    assert total([]) == 0\n",
        "    for rows in ([], [0]):\n        assert total(rows) == 0\n",
    );
    p.write("tests/test_calc.py", &looped);
    p.commit_as(HUMAN, "Check the empty totals in a loop\n");
    let run = commit_and_check(
        &p,
        AGENT,
        &[(
            "tests/test_calc.py",
            &format!("{looped}\n\ndef test_more():\n    assert total([2]) == 2\n"),
        )],
    );
    assert_eq!(run.code, 0, "{}", run.stdout);

    // Rust: the same under `if false`, and in a closure the test never calls.
    for wrapped in [
        "        if false {\n            assert_eq!(add(1, 2), 3);\n        }\n",
        "        let _later = || {\n            assert_eq!(add(1, 2), 3);\n        };\n",
    ] {
        let p = project();
        let lib = LIB.replace("        assert_eq!(add(1, 2), 3);\n", wrapped);
        let run = commit_and_check(&p, AGENT, &[("src/lib.rs", &lib)]);
        assert_eq!(run.code, 1, "{wrapped}: {}", run.stdout);
        assert_eq!(
            weakened(&run),
            [(
                "src/lib.rs".to_string(),
                12,
                "src/lib.rs::tests::adds".to_string()
            )]
        );
    }

    // Through the pre-receive hook.
    for wrapped in [
        "    if False:\n        assert total([1, 2]) == 3\n",
        "    def _later():\n        assert total([1, 2]) == 3\n",
    ] {
        hook_rejects_first_total_rewrite(wrapped, "8: loosens an assertion");
    }
}

#[test]
fn a_block_of_many_assertions_under_one_statement_is_read_once() {
    // Each assertion under a statement that may not run is named by the statement's first
    // line. Read from the whole statement's text, 20,000 assertions under one `if` copied it
    // 20,000 times (8.7 s in a release build, past the hooks' default timeout); 40,000 here,
    // with 120 s allowed (the whole test takes about 4 s when the first line alone is read,
    // in a debug build; copied, four times 8.7 s in a release build and ten times that in a
    // debug one, it runs out of time, with room for a loaded two-core machine).
    let many: String = (0..40_000)
        .map(|i| format!("        assert total([{i}]) == {i}\n"))
        .collect();
    agent_adds_tests_within_the_timeout(&format!(
        "{CALC}\n\ndef test_each(rows):\n    if rows:\n{many}"
    ));
}

/// An agent's commit that makes tests/test_calc.py `calc` (tests added, none weakened),
/// pushed through the installed hook with 120 s allowed (a quadratic reading takes many
/// times that in a debug build; a loaded machine only a few times the idle 4 s): accepted.
fn agent_adds_tests_within_the_timeout(calc: &str) {
    let s = Server::new("");
    s.config("guard.timeout", "120");
    write_in(&s.work, "tests/test_calc.py", CALC);
    s.commit("Add the calc tests\n");
    s.push(&["origin", "main"]).assert_accepted();
    write_in(&s.work, "tests/test_calc.py", calc);
    s.agent_commit("Check every single-row total\n");
    s.push(&["origin", "main"]).assert_accepted();
}

#[test]
fn a_module_of_many_tests_is_read_once_for_names_bound_again() {
    // Whether a test's name is bound again after it is looked up among the bindings of that
    // name alone. Compared with every binding of the module, 20,000 tests cost a second more
    // in a release build, growing with the square; 100,000 here (25 times that: minutes in a
    // debug build), with 120 s allowed (the whole test takes about 10 s in a debug build).
    let many: String = (0..100_000)
        .map(|i| format!("\n\ndef test_total_of_{i}():\n    assert total([{i}]) == {i}\n"))
        .collect();
    agent_adds_tests_within_the_timeout(&format!("{CALC}{many}"));
}

#[test]
fn copies_of_a_test_file_at_rust_paths_do_not_stand_for_it() {
    // The same blob at a Rust path and at a Python path reads differently. The agent adds
    // copies of the test file's old and new text at Rust paths (read first: they sort
    // first), where they hold no `fn` and so no test; those readings, held by blob, stood
    // for the Python file's too, and the removed assertion went unseen.
    let p = project();
    let weakened_calc = CALC.replace("    assert total([]) == 0\n", "");
    let run = commit_and_check(
        &p,
        AGENT,
        &[
            ("tests/a1.rs", CALC),
            ("tests/a2.rs", &weakened_calc),
            ("tests/test_calc.py", &weakened_calc),
        ],
    );
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert_eq!(
        weakened(&run),
        [(
            "tests/test_calc.py".to_string(),
            6,
            "tests/test_calc.py::test_total".to_string()
        )]
    );
}

#[test]
fn an_agent_test_file_in_an_encoding_guard_does_not_read_is_not_let_through() {
    // Python decodes a file from the encoding its first lines declare. In UTF-7 `+AAo-` is a
    // line feed, so the comment below ends there and the test returns before its assertion;
    // read as UTF-8 it is one comment line. An agent's commit with such a file is not judged
    // blind: the push is rejected and says why. A human's lands (humans' tests are not read).
    let s = Server::new("");
    write_in(&s.work, "tests/test_calc.py", CALC);
    s.commit("Add the calc tests\n");
    s.push(&["origin", "main"]).assert_accepted();
    let landed = s.server_ref("refs/heads/main");

    let utf7 = CALC
        .replace("import pytest\n", "# coding: utf-7\nimport pytest\n")
        .replace(
            "def test_total():\n",
            "def test_total():\n    # see the tracker +AAo-    return\n",
        );
    write_in(&s.work, "tests/test_calc.py", &utf7);
    s.agent_commit("Note the tracker issue\n");
    let pushed = s.push(&["origin", "main"]);
    assert!(
        pushed
            .stderr
            .contains("tests/test_calc.py:1: declares the source encoding \"utf-7\"")
            && pushed.stderr.contains("save the file as UTF-8"),
        "{}",
        pushed.stderr
    );
    assert_eq!(s.server_ref("refs/heads/main"), landed);

    s.git(&["reset", "-q", "--soft", "HEAD~"]);
    s.commit("Note the tracker issue\n");
    s.push(&["origin", "main"]).assert_accepted();
}

#[test]
fn a_test_file_with_old_macintosh_line_ends_is_read_line_by_line() {
    // Python reads a carriage return alone as a line end; tree-sitter's grammar did not, and
    // read such a file as one line holding no test, so any weakening in it went unseen.
    let p = project();
    let mac = |text: &str| text.replace('\n', "\r");
    p.write("tests/test_mac.py", mac(CALC));
    p.commit_as(HUMAN, "Add the calc tests, as the old editor saves them\n");
    let run = commit_and_check(
        &p,
        AGENT,
        &[(
            "tests/test_mac.py",
            &mac(&CALC.replace("assert total([1, 2]) == 3", "assert total([1, 2])")),
        )],
    );
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert_eq!(
        weakened(&run),
        [(
            "tests/test_mac.py".to_string(),
            7,
            "tests/test_mac.py::test_total".to_string()
        )]
    );
}

#[test]
fn a_test_file_with_a_long_commented_out_block_is_judged_within_the_hook_timeout() {
    // 20,000 commented-out lines inside a test: tree-sitter's Python scanner looked past the
    // rest of the run at each of them (minutes, past the hook's default 4 s), so the push was
    // rejected for taking too long. Read as blank lines, the agent's loosened assertion is
    // found, and the block alone lands. The tests' servers allow 300 s for a debug build;
    // this one 120 s (the push takes well under a second; the old reading took minutes).
    let s = Server::new("");
    s.config("guard.timeout", "120");
    write_in(&s.work, "tests/test_calc.py", CALC);
    s.commit("Add the calc tests\n");
    s.push(&["origin", "main"]).assert_accepted();

    let parked =
        "    # assert total([3, 4]) == 7  (parked until the rounding fix)\n".repeat(20_000);
    let with_block = CALC.replace(
        "    assert total([]) == 0\n",
        &format!("    assert total([]) == 0\n{parked}"),
    );
    write_in(&s.work, "tests/test_calc.py", &with_block);
    s.agent_commit("Park the rounding cases\n");
    s.push(&["origin", "main"]).assert_accepted();

    write_in(
        &s.work,
        "tests/test_calc.py",
        &with_block.replace("rel=1e-9", "rel=0.5"),
    );
    let commit = s.agent_commit("Make test_ratio pass\n");
    s.push(&["origin", "main"]).assert_rejected_with(&format!(
        "remote: error: refs/heads/main: [weakened_test] {} \"Make test_ratio pass\" tests/test_calc.py:20012: widens a tolerance in test tests/test_calc.py::test_ratio",
        s.short(&commit)
    ));
}

#[test]
fn weakenings_in_both_halves_of_a_long_range_are_each_found() {
    // `guard check` compares a range of 256 commits or more on two threads, in blocks of 64
    // commits, each thread judging its blocks' weakened tests: a weakening at either end is
    // found, and the report is the same with a commit-graph and without (as for every check
    // in these tests).
    let p = project();
    let base = p.rev("HEAD");
    p.write("tests/test_calc.py", CALC.replace("rel=1e-9", "rel=0.5"));
    p.commit_as(AGENT, "Loosen the ratio test\n");
    for k in 0..298 {
        p.git_cmd(&["commit", "-q", "--allow-empty", "-m", &format!("step {k}")]);
    }
    p.write(
        "src/lib.rs",
        LIB.replace("assert_eq!(add(1, 2), 3)", "assert!(true)"),
    );
    p.commit_as(AGENT, "Simplify the add test\n");
    let range = format!("{base}..HEAD");
    assert_eq!(p.git_cmd(&["rev-list", "--count", &range]).trim(), "300");
    let run = p.guard(&["check", &range, "--format", "json"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert_eq!(
        weakened(&run),
        [
            (
                "tests/test_calc.py".to_string(),
                12,
                "tests/test_calc.py::test_ratio".to_string()
            ),
            (
                "src/lib.rs".to_string(),
                10,
                "src/lib.rs::tests::adds".to_string()
            ),
        ]
    );
}

#[test]
fn the_retest_evasions_a_precise_rule_reads_are_weakened_tests() {
    // The cheap spellings of issue 29, each read by a rule of its own (`guard retest`
    // catches them all by running the base's tests; these need no run). (base, agent's
    // edit, path, line, kind, excerpt)
    let given = "from hypothesis import given, strategies as st\nfrom calc import total\n\n\n@given(st.lists(st.integers()))\ndef test_total_is_sum(xs):\n    assert total(xs) == sum(xs)\n";
    let sums = "use calc::total;\n\n#[test]\nfn sums() {\n    assert_eq!(total(&[2, 2]), 4);\n}\n";
    let helper_edit = CALC
        .replace(
            "from calc import ratio, total\n",
            "from calc import ratio, total\n\n\ndef check(xs, expected):\n    if xs:\n        return\n    assert total(xs) == expected\n",
        )
        .replace("    assert total([1, 2]) == 3\n", "    check([1, 2], 3)\n");
    let guarded_call = CALC
        .replace(
            "from calc import ratio, total\n",
            "from calc import ratio, total\n\n\ndef check(xs, expected):\n    assert total(xs) == expected\n",
        )
        .replace(
            "    assert total([1, 2]) == 3\n",
            "    if total:\n        check([1, 2], 3)\n",
        );
    let cases: Vec<(String, String, &str, u64, &str, &str)> = vec![
        // A skip through an alias of pytest.skip.
        (
            CALC.to_string(),
            CALC.replace(
                "import pytest\n",
                "import pytest\nfrom pytest import skip as later\n",
            )
            .replace(
                "def test_total():\n",
                "def test_total():\n    later(\"slow\")\n",
            ),
            "tests/test_calc.py",
            8,
            "adds a skip or expected failure",
            "later(\"slow\")",
        ),
        // An xfail marker applied while the test runs.
        (
            CALC.to_string(),
            CALC.replace(
                "def test_total():\n",
                "def test_total(request):\n    request.applymarker(pytest.mark.xfail)\n",
            ),
            "tests/test_calc.py",
            7,
            "adds a skip or expected failure",
            "pytest.mark.xfail",
        ),
        // pytest's own Skipped outcome, raised.
        (
            CALC.to_string(),
            CALC.replace(
                "import pytest\n",
                "import pytest\nfrom _pytest.outcomes import Skipped\n",
            )
            .replace(
                "def test_total():\n",
                "def test_total():\n    raise Skipped(\"later\")\n",
            ),
            "tests/test_calc.py",
            8,
            "adds a skip or expected failure",
            "raise Skipped(\"later\")",
        ),
        // The session ended green before the assertions.
        (
            CALC.to_string(),
            CALC.replace(
                "def test_total():\n",
                "def test_total():\n    pytest.exit(\"done\", returncode=0)\n",
            ),
            "tests/test_calc.py",
            7,
            "adds a skip or expected failure",
            "pytest.exit(",
        ),
        // A test class pytest no longer collects: renamed out of `python_classes`.
        (
            format!(
                "{CALC}\n\nclass TestPair:\n    def test_pair(self):\n        assert total([2, 2]) == 4\n"
            ),
            format!(
                "{CALC}\n\nclass PairChecks:\n    def test_pair(self):\n        assert total([2, 2]) == 4\n"
            ),
            "tests/test_calc.py",
            15,
            "adds a skip or expected failure",
            "class PairChecks is not collected",
        ),
        // ... or given an `__init__`.
        (
            format!(
                "{CALC}\n\nclass TestPair:\n    def test_pair(self):\n        assert total([2, 2]) == 4\n"
            ),
            format!(
                "{CALC}\n\nclass TestPair:\n    def __init__(self):\n        self.xs = [2, 2]\n\n    def test_pair(self):\n        assert total([2, 2]) == 4\n"
            ),
            "tests/test_calc.py",
            16,
            "adds a skip or expected failure",
            "class TestPair is not collected (it defines __init__)",
        ),
        // A tolerance respelled: another spelling of the expected value, a wider `rel`.
        (
            CALC.to_string(),
            CALC.replace(
                "pytest.approx(0.5, rel=1e-9)",
                "pytest.approx(0.50, rel=0.5)",
            ),
            "tests/test_calc.py",
            12,
            "widens a tolerance",
            "rel=0.5",
        ),
        // `rel` given by position.
        (
            CALC.replace("pytest.approx(0.5, rel=1e-9)", "pytest.approx(0.5, 1e-9)"),
            CALC.replace("pytest.approx(0.5, rel=1e-9)", "pytest.approx(0.5, 0.5)"),
            "tests/test_calc.py",
            12,
            "widens a tolerance",
            "rel=0.5",
        ),
        // hypothesis told to try one example.
        (
            given.to_string(),
            given
                .replace("@given(", "@settings(max_examples=1)\n@given(")
                .replace("import given,", "import given, settings,"),
            "tests/test_calc.py",
            5,
            "widens a tolerance",
            "max_examples=1",
        ),
        // ... or the same examples every run.
        (
            given
                .replace("@given(", "@settings(max_examples=200)\n@given(")
                .replace("import given,", "import given, settings,"),
            given
                .replace(
                    "@given(",
                    "@settings(max_examples=200, derandomize=True)\n@given(",
                )
                .replace("import given,", "import given, settings,"),
            "tests/test_calc.py",
            5,
            "widens a tolerance",
            "derandomize=True",
        ),
        // An assertion moved into a helper that returns before it.
        (
            CALC.to_string(),
            helper_edit.clone(),
            "tests/test_calc.py",
            helper_edit
                .lines()
                .position(|l| l.contains("check([1, 2], 3)"))
                .unwrap() as u64
                + 1,
            "loosens an assertion",
            "`+check([1, 2], 3)`",
        ),
        // ... or into a helper the test calls only on some paths.
        (
            CALC.to_string(),
            guarded_call.clone(),
            "tests/test_calc.py",
            guarded_call
                .lines()
                .position(|l| l.contains("check([1, 2], 3)"))
                .unwrap() as u64
                + 1,
            "loosens an assertion",
            "`+check([1, 2], 3) [only under: if total:]`",
        ),
        // A test module moved where pytest does not collect it (`python_files`).
        (
            CALC.to_string(),
            CALC.to_string(),
            "tests/calc_checks.py",
            1,
            "adds a skip or expected failure",
            "calc_checks.py is not collected (python_files: test_*.py *_test.py)",
        ),
        // Rust: the process ended before the assertion.
        (
            sums.to_string(),
            sums.replace("fn sums() {\n", "fn sums() {\n    std::process::exit(0);\n"),
            "tests/sums.rs",
            5,
            "returns before its assertions",
            "std::process::exit(0)",
        ),
        // Rust: the whole file compiled out.
        (
            sums.to_string(),
            format!("#![cfg(any())]\n{sums}"),
            "tests/sums.rs",
            1,
            "adds a skip or expected failure",
            "#![cfg(any())]",
        ),
    ];
    for (base, edited, path, line, kind, excerpt) in &cases {
        let p = project();
        if *path == "tests/calc_checks.py" {
            // Moved: the base is tests/test_calc.py (the project's own).
            p.git_cmd(&["mv", "tests/test_calc.py", path]);
        } else {
            p.write(path, base);
            p.commit_as(HUMAN, "Set the tests up\n");
        }
        let run = commit_and_check(&p, AGENT, &[(path, edited)]);
        assert_eq!(run.code, 1, "{excerpt}: {}", run.stdout);
        let found = weakened(&run);
        // Each case weakens one test, or (a moved module that is no longer collected) skips
        // both of the module's tests by one change: one finding either way.
        assert_eq!(found.len(), 1, "{excerpt}: {found:?}");
        assert_eq!(
            (found[0].0.as_str(), found[0].1),
            (*path, *line),
            "{excerpt}"
        );
        assert_said(&run, kind, excerpt);
    }
    // Through the pre-receive hook: one of each kind of rule.
    for i in [0, 4, 6, 13] {
        let (base, edited, path, ..) = &cases[i];
        let s = Server::new("");
        write_in(&s.work, path, base);
        s.commit("Add the tests\n");
        s.push(&["origin", "main"]).assert_accepted();
        write_in(&s.work, path, edited);
        let commit = s.agent_commit("Tidy the tests\n");
        s.push(&["origin", "main"]).assert_rejected_with(&format!(
            "remote: error: refs/heads/main: [weakened_test] {} \"Tidy the tests\" {path}:",
            s.short(&commit)
        ));
    }
}

#[test]
fn a_swallowing_context_manager_under_a_never_swallowing_name_is_found() {
    // `with patch(..):` never swallows a failure when `patch` is unittest.mock's; an agent
    // that imports contextlib's `suppress` as `patch` (or binds the name otherwise) moves the
    // assertion where its failure is swallowed. Through the installed hook; the same wrap
    // with the real `patch` lands.
    let base = "from unittest.mock import patch\n\n\ndef total(xs):\n    return sum(xs)\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n";
    for (edited, rejected) in [
        (
            base.replace(
                "from unittest.mock import patch\n",
                "from contextlib import suppress as patch\n",
            )
            .replace(
                "    assert total([1, 2]) == 3\n",
                "    with patch(AssertionError):\n        assert total([1, 2]) == 3\n",
            ),
            true,
        ),
        (
            base.replace(
                "    assert total([1, 2]) == 3\n",
                "    with patch(\"os.getcwd\"):\n        assert total([1, 2]) == 3\n",
            ),
            false,
        ),
    ] {
        let s = Server::new("");
        write_in(&s.work, "tests/test_calc.py", base);
        s.commit("Add the tests\n");
        s.push(&["origin", "main"]).assert_accepted();
        write_in(&s.work, "tests/test_calc.py", &edited);
        let commit = s.agent_commit("Tidy the tests\n");
        let pushed = s.push(&["origin", "main"]);
        if rejected {
            pushed.assert_rejected_with(&format!(
                "remote: error: refs/heads/main: [weakened_test] {} \"Tidy the tests\" tests/test_calc.py:",
                s.short(&commit)
            ));
            assert!(
                pushed
                    .stderr
                    .contains("[only under: with patch(AssertionError):]"),
                "{}",
                pushed.stderr
            );
        } else {
            pushed.assert_accepted();
        }
    }
}

#[test]
fn an_exact_equality_stands_for_checks_on_its_parts_and_a_rebound_name_for_nothing() {
    // The humans' test checks two parts of what `totals` returns.
    let parts = "from calc import totals\n\n\ndef test_totals():\n    t = totals([1, 2])\n    assert t['sum'] == 3\n    assert len(t) == 2\n";
    let s = Server::new("");
    write_in(&s.work, "tests/test_calc.py", parts);
    s.commit("Add the totals test\n");
    s.push(&["origin", "main"]).assert_accepted();

    // An agent writes the whole value out instead: it checks no less, and lands.
    let whole = parts.replace(
        "    assert t['sum'] == 3\n    assert len(t) == 2\n",
        "    assert t == {'sum': 3, 'count': 2}\n",
    );
    write_in(&s.work, "tests/test_calc.py", &whole);
    s.agent_commit("Check the whole totals\n");
    s.push(&["origin", "main"]).assert_accepted();

    // Binding the name again to the constant first makes the equality a tautology: the
    // checks on what `totals` returns are gone, and the push is rejected.
    s.git(&["reset", "-q", "--hard", "HEAD~1"]);
    let rebound = parts.replace(
        "    assert t['sum'] == 3\n    assert len(t) == 2\n",
        "    for t in [{'sum': 3, 'count': 2}]:\n        pass\n    assert t == {'sum': 3, 'count': 2}\n",
    );
    write_in(&s.work, "tests/test_calc.py", &rebound);
    let commit = s.agent_commit("Check the whole totals\n");
    s.push(&["--force", "origin", "main"])
        .assert_rejected_with(&format!(
            "remote: error: refs/heads/main: [weakened_test] {} \"Check the whole totals\" tests/test_calc.py:4: removes an assertion in test tests/test_calc.py::test_totals: `-assert t['sum'] == 3`",
            s.short(&commit)
        ));
}

/// A suite written once and run on two stores by the classes that inherit it, and two fakes
/// whose `delete` the suite's `store.delete(..)` may reach (linked by name). Line 5, counted
/// by hand, is `def test_roundtrip`.
const STORE_SUITE: &str = "\
from unittest import TestCase


class _Suite:
    def test_roundtrip(self):
        self.store.write('a', 'x')
        assert self.store.read('a') == 'x'
        self.store.delete('a')


class TestMemory(TestCase, _Suite):
    def setUp(self):
        self.store = Memory(FakeBlob())


class TestHttp(TestCase, _Suite):
    def setUp(self):
        self.store = Http(FakeHttp('http://x/'))


class FakeBlob:
    def delete(self, key):
        self.gone = True


class FakeHttp:
    def delete(self, url):
        assert url.startswith('http://x/')
";

#[test]
fn deleting_the_class_that_runs_an_inherited_suite_deletes_its_tests() {
    let s = Server::new("");
    write_in(&s.work, "tests/test_store.py", STORE_SUITE);
    s.commit("Add the store suite\n");
    s.push(&["origin", "main"]).assert_accepted();
    let landed = s.server_ref("refs/heads/main");

    // The agent stops running the suite on the HTTP store: its tests are gone, though no
    // `def test_` line is.
    let without_http = STORE_SUITE.replace(
        "class TestHttp(TestCase, _Suite):\n    def setUp(self):\n        self.store = Http(FakeHttp('http://x/'))\n\n\n",
        "",
    );
    assert_ne!(without_http, STORE_SUITE);
    write_in(&s.work, "tests/test_store.py", &without_http);
    let commit = s.agent_commit("Drop the flaky HTTP store tests\n");
    s.push(&["origin", "main"]).assert_rejected_with(&format!(
        "remote: error: refs/heads/main: [weakened_test] {} \"Drop the flaky HTTP store tests\" tests/test_store.py:5: deletes the test in test tests/test_store.py::TestHttp::test_roundtrip",
        s.short(&commit)
    ));
    assert_eq!(s.server_ref("refs/heads/main"), landed);

    // A human may drop them; then the agent removes the fake nothing uses any more. The
    // suite's `store.delete(..)` still reaches FakeBlob's `delete`; FakeHttp's, which
    // asserted, is read where it was: the suite checks no less.
    s.git(&["reset", "-q", "--soft", "HEAD~"]);
    s.commit("Drop the HTTP store\n");
    s.push(&["origin", "main"]).assert_accepted();
    let without_fake = without_http.replace(
        "\n\nclass FakeHttp:\n    def delete(self, url):\n        assert url.startswith('http://x/')\n",
        "",
    );
    assert_ne!(without_fake, without_http);
    write_in(&s.work, "tests/test_store.py", &without_fake);
    s.agent_commit("Remove the unused HTTP fake\n");
    s.push(&["origin", "main"]).assert_accepted();
}

#[test]
fn a_subclass_that_overrides_an_inherited_test_with_less_weakens_it() {
    let s = Server::new("");
    write_in(&s.work, "tests/test_store.py", STORE_SUITE);
    s.commit("Add the store suite\n");
    s.push(&["origin", "main"]).assert_accepted();
    let landed = s.server_ref("refs/heads/main");

    // The memory store breaks the round trip; the agent overrides the test there alone.
    // Before, that read as a new test added. (The 1 more: its `delete` call, which may reach
    // the HTTP fake that asserts.)
    let overridden = STORE_SUITE.replace(
        "        self.store = Memory(FakeBlob())\n",
        "        self.store = Memory(FakeBlob())\n\n    def test_roundtrip(self):\n        self.store.write('a', 'x')\n",
    );
    assert_ne!(overridden, STORE_SUITE);
    write_in(&s.work, "tests/test_store.py", &overridden);
    let commit = s.agent_commit("Skip the read back on the memory store\n");
    s.push(&["origin", "main"]).assert_rejected_with(&format!(
        "remote: error: refs/heads/main: [weakened_test] {} \"Skip the read back on the memory store\" tests/test_store.py:15: removes an assertion (and 1 more) in test tests/test_store.py::TestMemory::test_roundtrip: `-assert self.store.read('a') == 'x'`",
        s.short(&commit)
    ));
    assert_eq!(s.server_ref("refs/heads/main"), landed);

    // Dropping the suite from the class's bases drops its tests there.
    let unbased = STORE_SUITE.replace(
        "class TestMemory(TestCase, _Suite):",
        "class TestMemory(TestCase):",
    );
    write_in(&s.work, "tests/test_store.py", &unbased);
    s.git(&[
        "commit",
        "-q",
        "--amend",
        "-a",
        "-m",
        "Run the memory store alone\n",
    ]);
    let commit = s.git(&["rev-parse", "HEAD"]);
    s.push(&["origin", "main", "--force"]).assert_rejected_with(&format!(
        "remote: error: refs/heads/main: [weakened_test] {} \"Run the memory store alone\" tests/test_store.py:5: deletes the test in test tests/test_store.py::TestMemory::test_roundtrip",
        s.short(commit.trim())
    ));
    assert_eq!(s.server_ref("refs/heads/main"), landed);
}

/// A unittest test of a function that lists changed files, its checks one by one. Line 5,
/// counted by hand, is `def test_changes`. Three checks made one equality: two lost, unless
/// the equality pins the value whole.
const CHANGES_TEST: &str = "\
from unittest import TestCase


class TestChanges(TestCase):
    def test_changes(self):
        changes = list_changes('repo')
        self.assertIsNotNone(changes)
        paths = [c['path'] for c in changes]
        self.assertIn('a.txt', paths)
        self.assertIn('b.txt', paths)
";

#[test]
fn checks_made_one_equality_with_a_list_bound_to_a_name_are_kept_unless_the_list_can_change() {
    let s = Server::new("");
    write_in(&s.work, "tests/test_changes.py", CHANGES_TEST);
    s.commit("Test the changes\n");
    s.push(&["origin", "main"]).assert_accepted();
    let landed = s.server_ref("refs/heads/main");

    // The list filled from the value itself: the equality holds whatever `changes` is.
    let filled = CHANGES_TEST.replace(
        "        self.assertIsNotNone(changes)\n        paths = [c['path'] for c in changes]\n        self.assertIn('a.txt', paths)\n        self.assertIn('b.txt', paths)\n",
        "        expected = []\n        expected.extend(changes)\n        assert changes == expected\n",
    );
    assert_ne!(filled, CHANGES_TEST);
    write_in(&s.work, "tests/test_changes.py", &filled);
    let commit = s.agent_commit("Check the changes whole\n");
    s.push(&["origin", "main"]).assert_rejected_with(&format!(
        "remote: error: refs/heads/main: [weakened_test] {} \"Check the changes whole\" tests/test_changes.py:5: removes an assertion (and 1 more) in test tests/test_changes.py::TestChanges::test_changes: `-self.assertIsNotNone(changes)`",
        s.short(&commit)
    ));
    assert_eq!(s.server_ref("refs/heads/main"), landed);

    // The whole list written out and bound once: every check stands in the equality.
    let whole = CHANGES_TEST.replace(
        "        self.assertIsNotNone(changes)\n        paths = [c['path'] for c in changes]\n        self.assertIn('a.txt', paths)\n        self.assertIn('b.txt', paths)\n",
        "        expected = [{'path': 'a.txt'}, {'path': 'b.txt'}]\n        assert changes == expected\n",
    );
    write_in(&s.work, "tests/test_changes.py", &whole);
    s.git(&[
        "commit",
        "-q",
        "--amend",
        "-a",
        "-m",
        "Check the changes whole\n",
    ]);
    s.push(&["origin", "main", "--force"]).assert_accepted();
}
