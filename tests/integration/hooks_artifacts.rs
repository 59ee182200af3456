//! CI artifacts on the server (`guard.artifacts`): required, scored, held against the
//! collected ids, and the base's reports as the baseline.

use crate::support::server::{Server, ZERO_ID, write_in};

// 13. Artifacts on the server.

#[test]
fn server_artifacts_are_required_and_scored() {
    let s = Server::new("[artifacts]\nrequired = true\njunit = [\"junit.xml\"]\n");
    let ci = s.artifacts_per_commit();
    let commit = s.human_change("README.md", "Change with CI");
    let dir = ci.join(&commit);

    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with("remote: error: refs/heads/main: [artifacts_missing]");
    assert!(
        pushed.stderr.contains(dir.to_str().unwrap()),
        "names the directory {}:\n{}",
        dir.display(),
        pushed.stderr
    );

    write_in(
        &dir,
        "junit.xml",
        &junit(&[("test_ok", ""), ("test_broken", FAILURE)]),
    );
    s.push(&["origin", "main"])
        .assert_rejected_with("remote: error: refs/heads/main: [test_failures]");
    assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));

    write_in(
        &dir,
        "junit.xml",
        &junit(&[("test_ok", ""), ("test_broken", "")]),
    );
    s.push(&["origin", "main"]).assert_accepted();
    assert_eq!(s.server_ref("refs/heads/main"), Some(commit.clone()));

    // `{tree}`: CI results keyed by tree serve a rebased commit with the same tree.
    let trees = s.tmp.path("ci-trees");
    s.config("guard.artifacts", &format!("{}/{{tree}}", trees.display()));
    s.git(&["checkout", "-q", "-b", "topic"]);
    let topic = s.human_change("docs/topic.md", "Topic");
    let tree = s.git(&["rev-parse", &format!("{topic}^{{tree}}")]);
    write_in(&trees.join(&tree), "junit.xml", &junit(&[("test_ok", "")]));
    s.git(&["commit", "-q", "--amend", "-m", "Topic, reworded"]);
    let reworded = s.git(&["rev-parse", "HEAD"]);
    assert_ne!(reworded, topic);
    s.push(&["origin", "topic"]).assert_accepted();
    assert_eq!(s.server_ref("refs/heads/topic"), Some(reworded));
}

#[test]
fn server_artifacts_are_held_against_the_collected_ids() {
    // CI publishes a report whose failing record was cut out; the list of collected tests,
    // written before the code under test ran, still names it.
    let s = Server::new(
        "[artifacts]\nrequired = true\njunit = [\"junit.xml\"]\ncollected = \"collected.txt\"\n",
    );
    let ci = s.artifacts_per_commit();
    let commit = s.human_change("README.md", "Change with CI");
    let dir = ci.join(&commit);
    write_in(
        &dir,
        "collected.txt",
        "tests/test_app.py::test_ok\ntests/test_app.py::test_broken\n",
    );
    write_in(&dir, "junit.xml", &junit(&[("test_ok", "")]));
    s.push(&["origin", "main"]).assert_rejected_with(
        "remote: error: refs/heads/main: [test_missing_from_report] test tests/test_app.py::test_broken was collected",
    );
    assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));

    write_in(
        &dir,
        "junit.xml",
        &junit(&[("test_ok", ""), ("test_broken", "")]),
    );
    s.push(&["origin", "main"]).assert_accepted();
    assert_eq!(s.server_ref("refs/heads/main"), Some(commit));
}

#[test]
fn a_finding_rejects_with_exit_one_beside_artifacts_that_cannot_be_read() {
    let s = Server::new("[artifacts]\njunit = [\"junit.xml\"]\n");
    let ci = s.artifacts_per_commit();
    let agent = s.agent_edits_freeze("Park a test");
    // CI's report for the commit is cut off: that part cannot be judged.
    write_in(&ci.join(&agent), "junit.xml", "<testsuites>\n<testsuite");

    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with("remote: error: refs/heads/main: [agent_edit_protected]");
    assert!(
        pushed.has_line_starting("remote: error: refs/heads/main: cannot judge: "),
        "{}",
        pushed.stderr
    );
    // The finding decides: rejected by the ledger, not "could not be judged".
    assert!(
        pushed.has_line_starting("remote: error: guard: push rejected by the merge ledger"),
        "{}",
        pushed.stderr
    );

    // The hook's own exit code, on the same update: 1 (a finding), not 2.
    s.push(&["origin", "HEAD:refs/scratch/agent"])
        .assert_accepted();
    let (code, stderr) = s.run_pre_receive(
        format!("{} {agent} refs/heads/main\n", s.base).as_bytes(),
        |_| {},
    );
    assert_eq!(code, 1, "{stderr}");
}

#[test]
fn a_finding_rejects_with_exit_one_beside_a_ref_that_cannot_be_judged() {
    let s = Server::new("");
    let agent = s.agent_edits_freeze("Park a test");
    s.push(&["origin", "HEAD:refs/scratch/agent"])
        .assert_accepted();
    // A tag of a tree is no commit guard can judge; it comes first in the push.
    let tree = s.git(&["rev-parse", "HEAD^{tree}"]);
    let stdin = format!(
        "{ZERO_ID} {tree} refs/tags/tree\n{} {agent} refs/heads/main\n",
        s.base
    );
    let (code, stderr) = s.run_pre_receive(stdin.as_bytes(), |_| {});
    assert_eq!(code, 1, "the finding decides: {stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("error: refs/heads/main: [agent_edit_protected]")),
        "{stderr}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("error: refs/tags/tree: cannot judge: ")
                && l.contains("not a commit")),
        "{stderr}"
    );
    // Alone, the tag cannot be judged: exit 2.
    let (code, stderr) = s.run_pre_receive(
        format!("{ZERO_ID} {tree} refs/tags/tree\n").as_bytes(),
        |_| {},
    );
    assert_eq!(code, 2, "{stderr}");
}

const FAILURE: &str = "<failure message=\"assert 1 == 2\">AssertionError</failure>";

#[test]
fn base_reports_in_guard_artifacts_are_the_baseline() {
    let s = Server::new("");
    let ci = s.artifacts_per_commit();
    // A human adds two tests; CI reports both passing.
    let both = "def test_ok():\n    assert True\n\n\ndef test_kept():\n    assert True\n";
    s.write("tests/test_app.py", both);
    let tests = s.commit("Add tests");
    write_in(
        &ci.join(&tests),
        "junit.xml",
        &junit(&[("test_ok", ""), ("test_kept", "")]),
    );
    s.push(&["origin", "main"]).assert_accepted();

    // The agent deletes one; CI's report of its commit lacks it.
    s.write("tests/test_app.py", "def test_ok():\n    assert True\n");
    let agent = s.agent_commit("Remove a slow test\n\nTest-Removal: human");
    write_in(&ci.join(&agent), "junit.xml", &junit(&[("test_ok", "")]));
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with("remote: error: refs/heads/main: [test_vanished]");
    assert!(
        pushed.stderr.contains("tests.test_app::test_kept")
            && pushed.stderr.contains(&s.short(&agent)),
        "names the test and the agent commit:\n{}",
        pushed.stderr
    );
    assert_eq!(s.server_ref("refs/heads/main"), Some(tests.clone()));

    // A human removes it with the trailer: the same reports land.
    s.git(&["reset", "-q", "--hard", &tests]);
    s.write("tests/test_app.py", "def test_ok():\n    assert True\n");
    let human = s.commit("Remove a slow test\n\nTest-Removal: human");
    write_in(&ci.join(&human), "junit.xml", &junit(&[("test_ok", "")]));
    s.push(&["origin", "main"]).assert_accepted();
    assert_eq!(s.server_ref("refs/heads/main"), Some(human));
}

#[test]
fn the_server_holds_an_agents_test_change_to_the_retest_report() {
    // CI runs `guard retest` and leaves `retest-junit.xml` (the humans' tests, run against
    // the pushed code) beside its other reports.
    let s = Server::new("[artifacts]\nrequired = true\n");
    let ci = s.artifacts_per_commit();
    let tests = "def test_ok():\n    assert True\n\n\ndef test_kept():\n    assert True\n";
    s.write("tests/test_app.py", tests);
    let human = s.commit("Add tests");
    let both = junit(&[("test_ok", ""), ("test_kept", "")]);
    write_in(&ci.join(&human), "junit.xml", &both);
    // A human's change needs no retest.
    s.push(&["origin", "main"]).assert_accepted();

    s.write(
        "tests/test_app.py",
        &tests.replace("def test_kept():\n", "def test_kept():\n    x = 1\n"),
    );
    let agent = s.agent_commit("Tidy the tests");
    write_in(&ci.join(&agent), "junit.xml", &both);
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with("remote: error: refs/heads/main: [old_test_fails] tests/test_app.py: no report of `guard retest` among the artifacts");

    write_in(
        &ci.join(&agent),
        "retest-junit.xml",
        &junit(&[("test_ok", ""), ("test_kept", FAILURE)]),
    );
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with("remote: error: refs/heads/main: [old_test_fails] tests/test_app.py:5: the base's test tests/test_app.py::test_kept fails against the range's code");
    assert_eq!(s.server_ref("refs/heads/main"), Some(human.clone()));

    write_in(&ci.join(&agent), "retest-junit.xml", &both);
    s.push(&["origin", "main"]).assert_accepted();
    assert_eq!(s.server_ref("refs/heads/main"), Some(agent));
}

fn junit(cases: &[(&str, &str)]) -> String {
    let body: String = cases
        .iter()
        .map(|(name, child)| {
            format!("<testcase classname=\"tests.test_app\" name=\"{name}\" time=\"0.01\">{child}</testcase>")
        })
        .collect();
    format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><testsuites><testsuite name=\"pytest\" tests=\"{}\">{body}</testsuite></testsuites>\n",
        cases.len()
    )
}

#[test]
fn required_artifacts_without_an_artifact_directory_reject() {
    let s = Server::new("[artifacts]\nrequired = true\n");
    s.human_change("NOTES.md", "Notes");
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with("remote: error: refs/heads/main: [artifacts_missing]");
}

#[test]
fn server_coverage_below_the_floor_rejects() {
    let s = Server::new("[artifacts]\njunit = [\"junit.xml\"]\ncoverage = \"coverage.lcov\"\n");
    let ci = s.artifacts_per_commit();
    let commit = s.human_change("README.md", "Change with CI");
    let dir = ci.join(&commit);
    write_in(&dir, "junit.xml", &junit(&[("test_ok", "")]));
    // One of two lines covered: 50%, under the default floor of 70%.
    write_in(
        &dir,
        "coverage.lcov",
        "SF:app.py\nDA:1,1\nDA:2,0\nend_of_record\n",
    );
    s.push(&["origin", "main"]).assert_rejected_with(&format!(
        "remote: error: refs/heads/main: [proven_coverage] {}: proven coverage 50.00% is below the floor of 70%",
        dir.join("coverage.lcov").display()
    ));
    assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));

    write_in(
        &dir,
        "coverage.lcov",
        "SF:app.py\nDA:1,1\nDA:2,1\nend_of_record\n",
    );
    s.push(&["origin", "main"]).assert_accepted();
    assert_eq!(s.server_ref("refs/heads/main"), Some(commit));
}

#[test]
fn an_artifact_directory_under_a_file_is_not_read_as_no_reports() {
    // guard.artifacts leads through a regular file: the directory cannot be looked at
    // (ENOTDIR), which must not pass for "CI published nothing yet".
    let s = Server::new("[artifacts]\njunit = [\"junit.xml\"]\n");
    let ci = s.artifacts_per_commit();
    std::fs::write(&ci, "not a directory\n").unwrap();
    s.human_change("README.md", "Change with CI");
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with("remote: error: refs/heads/main: cannot judge: ");
    assert!(
        pushed
            .stderr
            .contains(&format!("cannot read {}/", ci.display())),
        "{}",
        pushed.stderr
    );
    assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));
}
