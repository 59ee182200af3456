//! The pre-push hook in a clone: it refuses locally what the server would refuse.

use std::process::Command;

use crate::support::hermetic;
use crate::support::server::{
    GUARD, Server, UNKNOWN_ID, append_in, blob_in, file_url, install, run_with_stdin,
    server_with_golden_fixture, write_in,
};

// 9. pre-push in a clone.

#[test]
fn pre_push_refuses_an_agent_push_locally() {
    let s = Server::new("");
    install(&["--hooks", s.work.to_str().unwrap()]);
    assert!(s.work.join(".git/hooks/pre-push").is_file());

    let agent = s.agent_edits_freeze("Park a test");
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_refused_locally_with(&format!(
        "error: refs/heads/main: [agent_edit_protected] {}",
        s.short(&agent)
    ));
    assert!(
        pushed.stderr.contains("failed to push"),
        "{}",
        pushed.stderr
    );
    assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));

    // --no-verify skips the local check; the server still rejects.
    s.push(&["--no-verify", "origin", "main"])
        .assert_rejected_with("remote: error: refs/heads/main: [agent_edit_protected]");

    s.git(&["reset", "-q", "--hard", &s.base]);
    let clean = s.human_change("README.md", "Clean");
    s.push(&["origin", "main"]).assert_accepted();
    assert_eq!(s.server_ref("refs/heads/main"), Some(clean));
}

#[test]
fn pre_push_with_a_remote_id_unknown_locally() {
    let s = Server::new("");
    // The clone does not have UNKNOWN_ID (as after the server moved on without a fetch).
    let out = s
        .git_cmd(&s.work)
        .args(["cat-file", "-e", UNKNOWN_ID])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let url = file_url(&s.bare);
    let pre_push = |tip: &str| {
        let mut cmd = hermetic(Command::new(GUARD), s.home());
        cmd.args(["hook", "pre-push", "origin", &url])
            .current_dir(&s.work);
        run_with_stdin(
            cmd,
            format!("refs/heads/main {tip} refs/heads/main {UNKNOWN_ID}\n").as_bytes(),
        )
    };

    let clean = s.human_change("README.md", "Clean");
    let (code, stderr) = pre_push(&clean);
    assert_eq!(code, 0, "{stderr}");

    let agent = s.agent_edits_freeze("Park a test");
    let (code, stderr) = pre_push(&agent);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.lines().any(|l| l.starts_with(&format!(
            "error: refs/heads/main: [agent_edit_protected] {}",
            s.short(&agent)
        ))),
        "{stderr}"
    );
}

#[test]
fn pre_push_judges_like_the_server_not_against_every_remote_branch() {
    let s = Server::new("[refs]\nprotected = [\"refs/heads/main\", \"refs/heads/release/*\"]\n");
    install(&["--hooks", s.work.to_str().unwrap()]);
    s.git(&["checkout", "-q", "-b", "feature"]);
    let agent = s.agent_edits_freeze("Park a test on a feature branch");
    // feature is not protected: both hooks let it through.
    s.push(&["origin", "feature"]).assert_accepted();
    assert_eq!(s.server_ref("refs/heads/feature"), Some(agent.clone()));

    // A new protected ref at that commit: the server judges it against main, and so must
    // the local hook, though the commit is on a remote-tracking ref already.
    let pushed = s.push(&["origin", "feature:refs/heads/release/1"]);
    assert!(!pushed.ok, "{}", pushed.stderr);
    assert!(
        pushed.has_line_starting(&format!(
            "error: refs/heads/release/1: [agent_edit_protected] {}",
            s.short(&agent)
        )) && !pushed.has_line_starting("remote:"),
        "refused locally:\n{}",
        pushed.stderr
    );
    assert_eq!(s.server_ref("refs/heads/release/1"), None);

    // main with a remote id this clone lacks: judged from where the clone last saw main.
    let human = s.human_change("docs/more.md", "Human work on top");
    let mut cmd = hermetic(Command::new(GUARD), s.home());
    cmd.args(["hook", "pre-push", "origin", &file_url(&s.bare)])
        .current_dir(&s.work);
    let (code, stderr) = run_with_stdin(
        cmd,
        format!("refs/heads/feature {human} refs/heads/main {UNKNOWN_ID}\n").as_bytes(),
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.lines().any(|l| l.starts_with(&format!(
            "error: refs/heads/main: [agent_edit_protected] {}",
            s.short(&agent)
        ))),
        "{stderr}"
    );
}

#[test]
fn pre_push_install_honours_core_hooks_path() {
    let s = Server::new("");
    s.git(&["config", "core.hooksPath", "githooks"]);
    install(&["--hooks", s.work.to_str().unwrap()]);
    assert!(s.work.join("githooks/pre-push").is_file());
    assert!(!s.work.join(".git/hooks/pre-push").exists());

    s.agent_edits_freeze("Park a test");
    let pushed = s.push(&["origin", "main"]);
    assert!(!pushed.ok);
    assert!(
        pushed.has_line_starting("error: refs/heads/main: [agent_edit_protected]")
            && !pushed.has_line_starting("remote:"),
        "refused locally by the hook in core.hooksPath:\n{}",
        pushed.stderr
    );
    install(&["--hooks", s.work.to_str().unwrap(), "--uninstall"]);
    assert!(!s.work.join("githooks/pre-push").exists());
}

#[test]
fn pre_push_refuses_a_rewind_that_undoes_a_protected_change() {
    let s = Server::new("");
    append_in(&s.work, "qa/freeze.toml", "# reviewed\n");
    let reviewed = s.commit("Note the review\n\nFreeze-Lease: human\n");
    s.push(&["origin", "main"]).assert_accepted();
    let out = install(&["--hooks", s.work.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    s.git(&["reset", "-q", "--hard", &s.base]);
    s.push(&["--force", "origin", "main"])
        .assert_refused_locally_with("error: refs/heads/main: [protected_rewind]");
    assert_eq!(s.server_ref("refs/heads/main"), Some(reviewed));
}

#[test]
fn pre_push_refuses_a_replace_ref_locally() {
    let (s, blob) = server_with_golden_fixture();
    install(&["--hooks", s.work.to_str().unwrap()]);
    let agent_blob = blob_in(&s, &s.work, "a,b\n1,3\n");
    s.git(&["replace", &blob, &agent_blob]);
    let name = format!("refs/replace/{blob}");
    s.push(&["origin", &name])
        .assert_refused_locally_with(&format!("error: {name}: [replace_ref]"));
}

#[test]
fn pre_push_refuses_deleting_a_protected_ref_locally() {
    let s = Server::new("[refs]\nprotected = [\"refs/heads/*\"]\nallow_delete = false\n");
    s.git(&["checkout", "-q", "-b", "feature"]);
    let tip = s.human_change("docs/feature.md", "Feature work");
    s.push(&["origin", "feature"]).assert_accepted();
    install(&["--hooks", s.work.to_str().unwrap()]);

    let pushed = s.push(&["origin", "--delete", "feature"]);
    pushed.assert_refused_locally_with(
        "error: refs/heads/feature: [ref_deletion] the push deletes a protected ref",
    );
    // No server admin to ask on a developer's machine.
    assert!(
        pushed
            .lines()
            .contains(&"hint: the ledger's [refs] allow_delete = false"),
        "{}",
        pushed.stderr
    );
    assert_eq!(s.server_ref("refs/heads/feature"), Some(tip));
}

#[test]
fn pre_push_cannot_judge_with_a_report_older_than_the_changes_it_pushes() {
    // The first push of a ledger was rejected from a junit.xml that an earlier run left in
    // the work tree ("no property test ran"): a report written before the last edit of a
    // pushed file is an earlier run's, of other code, and the push cannot be judged until
    // the tests run again (dropping it would push on with no evidence). Edited, tested,
    // committed and pushed, it is scored.
    let s = Server::new("");
    install(&["--hooks", s.work.to_str().unwrap()]);
    write_in(&s.work, ".gitignore", "junit.xml\n");
    s.commit("Ignore the test report\n");
    s.push(&["origin", "main"]).assert_accepted();
    let failing = "<testsuites><testsuite name=\"pytest\" tests=\"1\"><testcase classname=\"tests.test_a\" name=\"test_a\"><failure message=\"boom\"/></testcase></testsuite></testsuites>\n";
    let set_written = |when: std::time::SystemTime| {
        std::fs::File::options()
            .write(true)
            .open(s.work.join("junit.xml"))
            .unwrap()
            .set_modified(when)
            .unwrap();
    };
    write_in(&s.work, "junit.xml", failing);
    set_written(std::time::SystemTime::now() - std::time::Duration::from_secs(3600));
    s.human_change("README.md", "More docs");
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_refused_locally_with(
        "error: refs/heads/main: cannot judge: junit.xml was written before README.md was last edited, so it is an earlier run's, not this push's: run the tests again",
    );

    // Edited, then tested (the report is newer than the edit): scored, and it rejects.
    s.human_change("README.md", "Even more docs");
    set_written(std::time::SystemTime::now() + std::time::Duration::from_secs(60));
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_refused_locally_with("error: refs/heads/main: [test_failures]");
}

#[test]
fn pre_push_shows_what_the_ledger_only_warns_of() {
    // A weakened test under `[tests] weakened = "warn"`: the report's warnings never reached
    // the developer's terminal (the server printed them; pre-push dropped them).
    let s = Server::new("[tests]\nweakened = \"warn\"\n");
    install(&["--hooks", s.work.to_str().unwrap()]);
    write_in(
        &s.work,
        "tests/test_calc.py",
        "def test_total():\n    assert sum([1, 2]) == 3\n",
    );
    s.commit("Add a test\n");
    s.push(&["origin", "main"]).assert_accepted();
    write_in(
        &s.work,
        "tests/test_calc.py",
        "def test_total():\n    assert sum([1, 2])\n",
    );
    s.agent_commit("Simplify the test\n");
    let hook = s.work.join(".git/hooks/pre-push");
    let url = file_url(&s.bare);
    let tip = s.git(&["rev-parse", "HEAD"]);
    let old = s.server_ref("refs/heads/main").unwrap();
    let mut cmd = hermetic(Command::new(&hook), s.home());
    cmd.args(["origin", &url]).current_dir(&s.work);
    let (code, stderr) = run_with_stdin(
        cmd,
        format!("refs/heads/main {} refs/heads/main {old}\n", tip.trim()).as_bytes(),
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("warning: refs/heads/main: [weakened_test]"),
        "{stderr}"
    );
}
