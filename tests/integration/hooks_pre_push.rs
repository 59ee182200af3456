//! The pre-push hook in a clone: it refuses locally what the server would refuse.

use std::process::Command;

use crate::support::hermetic;
use crate::support::server::{
    GUARD, Server, UNKNOWN_ID, append_in, blob_in, file_url, install, run_for_output,
    run_with_stdin, server_with_golden_fixture, write_in,
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
        .args(["cat-file", "-e", &UNKNOWN_ID.to_string()])
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

/// A human's test, pushed; then its assertion loosened in the work tree (not committed).
/// Returns the server's tip.
fn weaken_a_pushed_test(s: &Server) -> String {
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
    s.server_ref("refs/heads/main").unwrap()
}

#[test]
fn pre_push_shows_what_the_ledger_only_warns_of() {
    // A weakened test under `[tests] weakened = "warn"`: the report's warnings never reached
    // the developer's terminal (the server printed them; pre-push dropped them).
    let s = Server::new("[tests]\nweakened = \"warn\"\n");
    install(&["--hooks", s.work.to_str().unwrap()]);
    weaken_a_pushed_test(&s);
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

/// The lines of a hook's report about refs (findings, hints, warnings, signers, what could
/// not be judged), without git's `remote: ` prefix and padding: what both hooks must agree on.
fn ref_lines(stderr: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut after_ref_error = false;
    for line in stderr.lines().map(str::trim_end) {
        let line = line.strip_prefix("remote: ").unwrap_or(line);
        let about_a_ref = ["error: refs/", "warning: refs/", "guard: refs/"]
            .iter()
            .any(|p| line.starts_with(p));
        // A hint belongs to the line before it: kept after a finding, not after the summary.
        if about_a_ref || (after_ref_error && line.starts_with("hint: ")) {
            out.push(line.to_string());
        }
        after_ref_error = line.starts_with("error: refs/");
    }
    out
}

#[test]
fn pre_push_prints_what_pre_receive_prints_for_the_same_update() {
    // One decision path: the same update through the developer's hook and the server's gives
    // the same findings, hints and warnings, in the same order. (pre-push dropped the
    // report's warnings, and words its own summary: those lines differ, by design.)
    let s = Server::new("[tests]\nweakened = \"warn\"\n");
    let old = weaken_a_pushed_test(&s);
    append_in(&s.work, "qa/freeze.toml", "# parked\n");
    s.agent_commit("Simplify the test and park another\n");
    let tip = s.git(&["rev-parse", "HEAD"]).trim().to_string();

    let url = file_url(&s.bare);
    let mut cmd = hermetic(Command::new(GUARD), s.home());
    cmd.args(["hook", "pre-push", "origin", &url, "--format", "json"])
        .current_dir(&s.work);
    let line = format!("refs/heads/main {tip} refs/heads/main {old}\n");
    let (code, stdout, local) = run_for_output(cmd, line.as_bytes());
    assert_eq!(code, 1, "{local}");

    let pushed = s.push(&["--no-verify", "origin", "main"]);
    assert!(!pushed.ok, "{}", pushed.stderr);
    let local_lines = ref_lines(&local);
    assert!(
        local_lines
            .iter()
            .any(|l| l.starts_with("warning: refs/heads/main: [weakened_test]")),
        "{local}"
    );
    assert!(
        local_lines
            .iter()
            .any(|l| l.starts_with("error: refs/heads/main: [agent_edit_protected]")),
        "{local}"
    );
    assert_eq!(local_lines, ref_lines(&pushed.stderr), "{}", pushed.stderr);

    // The same report as one JSON line on standard output, for a wrapper to log.
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["hook"], "pre-push");
    assert_eq!(json["outcome"], "rejected");
    assert_eq!(json["decision"], "REJECT");
    assert_eq!(json["exit_code"], 1);
    assert_eq!(json["refs"][0]["ref"], "refs/heads/main");
    assert_eq!(
        json["refs"][0]["findings"][0]["code"],
        "agent_edit_protected"
    );
    assert_eq!(json["refs"][0]["warnings"][0]["code"], "weakened_test");
    assert!(json["failure"].is_null(), "{stdout}");
}

#[test]
fn pre_receive_writes_its_report_as_json_for_a_wrapper() {
    // `guard hook pre-receive --format json`, run as git runs it in the bare repository: the
    // pusher's lines on standard error, the report as one JSON line on standard output.
    let s = Server::new("");
    let agent = s.agent_edits_freeze("Park a test");
    // The objects reach the server (under a ref the ledger does not protect), as a push's
    // quarantine holds them when the hook runs.
    s.push(&["--no-verify", "origin", "HEAD:refs/incoming/x"])
        .assert_accepted();
    let mut cmd = hermetic(Command::new(GUARD), s.home());
    cmd.args(["hook", "pre-receive", "--format", "json"])
        .current_dir(&s.bare)
        .env("GIT_DIR", &s.bare);
    let line = format!("{} {agent} refs/heads/main\n", s.base);
    let (code, stdout, stderr) = run_for_output(cmd, line.as_bytes());
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("error: guard: push rejected by the merge ledger"),
        "{stderr}"
    );
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["hook"], "pre-receive");
    assert_eq!(json["outcome"], "rejected");
    assert_eq!(json["enforced"], true);
    assert_eq!(json["refs"][0]["commits"], 1);
    assert_eq!(
        json["refs"][0]["findings"][0]["code"],
        "agent_edit_protected"
    );
    assert_eq!(json["refs"][0]["findings"][0]["commit"], s.short(&agent));

    // Garbage on standard input: exit 2, and the JSON says why.
    let mut cmd = hermetic(Command::new(GUARD), s.home());
    cmd.args(["hook", "pre-receive", "--format", "json"])
        .current_dir(&s.bare)
        .env("GIT_DIR", &s.bare);
    let (code, stdout, _) = run_for_output(cmd, b"not a ref update\n");
    assert_eq!(code, 2);
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["outcome"], "cannot_judge");
    assert_eq!(json["failure"]["kind"], "input");
    assert!(json["decision"].is_null());
}

#[test]
fn pre_push_without_the_remote_default_branch_reads_the_ledger_at_the_base() {
    // The base's ledger protects deploy/**, which the embedded default does not.
    let s = Server::new("[protect]\npaths = [\"deploy/**\"]\n");
    install(&["--hooks", s.work.to_str().unwrap()]);
    // A clone that never saw the remote's default branch (its tracking refs gone, as when
    // pushing to a URL): the ledger in force is read at each update's base.
    for tracking in ["refs/remotes/origin/HEAD", "refs/remotes/origin/main"] {
        s.git(&["update-ref", "-d", tracking]);
    }
    write_in(&s.work, "deploy/run.sh", "echo deploy\n");
    let agent = s.agent_commit("Deploy differently");
    let pushed = s.push(&["origin", "main"]);
    assert!(!pushed.ok, "{}", pushed.stderr);
    assert!(
        pushed.has_line_starting(&format!(
            "error: refs/heads/main: [agent_edit_protected] {}",
            s.short(&agent)
        )) && !pushed.has_line_starting("remote:"),
        "refused locally, under the base's ledger:\n{}",
        pushed.stderr
    );
    assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));
}
