//! Evaluate mode: a trial before enforcing. guard judges and reports everything, says what
//! it would decide, and rejects nothing: the ledger's `mode = "evaluate"` for every command,
//! the server's `guard.mode = evaluate` for the pre-receive hook.

use crate::scenario::{FAIL, clean, junit};
use crate::support::server::{Server, append_in, ledger};

/// The clean project with `mode` written at the top of its ledger.
fn with_mode(mode: &str) -> crate::support::Project {
    let p = clean();
    let ledger = p.read("qa/merge_ledger.toml");
    p.write("qa/merge_ledger.toml", format!("mode = {mode:?}\n{ledger}"));
    p
}

#[test]
fn evaluate_mode_reports_the_would_be_decision_and_exits_zero() {
    let p = with_mode("evaluate");
    // An ordinary test fails: REJECT, not enforced.
    p.write(
        "junit.xml",
        junit(&[
            (
                "tests.properties.test_codec_roundtrip",
                "test_roundtrip_on_seeds",
                crate::scenario::PASS,
            ),
            ("tests.runtime.test_retry", "test_backoff_under_load", FAIL),
            ("tests.test_billing.TestInvoice", "test_total[p-1]", FAIL),
        ]),
    );
    let run = p.guard(&["score", "--junit", "junit.xml"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("error[test_failures]"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("decision: REJECT, not enforced (evaluate mode) (score 0, 1 finding,"),
        "{}",
        run.stdout
    );
    let json = p
        .guard(&["score", "--junit", "junit.xml", "--format", "json"])
        .json();
    assert_eq!(json["decision"], "REJECT");
    assert_eq!(json["enforced"], false);
    let github = p.guard(&["score", "--junit", "junit.xml", "--format", "github"]);
    assert_eq!(github.code, 0);
    assert!(
        github.stdout.contains(
            "::notice title=merge-guard::decision: REJECT, not enforced (evaluate mode) (1 finding)"
        ),
        "{}",
        github.stdout
    );
    // Input that cannot be judged is said too, and rejects nothing either.
    let run = p.guard(&["score", "--junit", "missing.xml"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);

    // Enforced (the default, or said), the same run rejects.
    let p = with_mode("enforce");
    p.write(
        "junit.xml",
        junit(&[("tests.test_billing.TestInvoice", "test_total[p-1]", FAIL)]),
    );
    let json = p
        .guard(&["score", "--junit", "junit.xml", "--format", "json"])
        .json();
    assert_eq!(json["enforced"], true);
    assert_eq!(p.guard(&["score", "--junit", "junit.xml"]).code, 1);
}

#[test]
fn a_mode_that_is_neither_is_an_error_with_its_line() {
    let p = with_mode("trial");
    let run = p.guard(&["lint"]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains(
            "qa/merge_ledger.toml:1:8: `mode` must be \"enforce\" or \"evaluate\", not \"trial\""
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn the_server_in_evaluate_mode_accepts_what_it_would_reject_and_says_so() {
    let s = Server::new("");
    s.config("guard.mode", "evaluate");
    let agent = s.agent_edits_freeze("Park a flaky test");
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_accepted();
    assert!(
        pushed.has_line_starting(&format!(
            "remote: warning: refs/heads/main: [agent_edit_protected] {}",
            s.short(&agent)
        )),
        "{}",
        pushed.stderr
    );
    assert!(
        pushed.stderr.contains("remote: warning: guard: evaluate mode (guard.mode, or the ledger's mode): this push would be rejected; it is accepted"),
        "{}",
        pushed.stderr
    );
    assert!(
        !pushed.stderr.contains("remote: error:"),
        "{}",
        pushed.stderr
    );

    // Enforcing again, the next such push is rejected.
    s.config("guard.mode", "enforce");
    append_in(&s.work, "qa/freeze.toml", "# parked again\n");
    s.agent_commit("Park another");
    let pushed = s.push(&["origin", "main"]);
    assert!(!pushed.ok, "{}", pushed.stderr);

    // A value guard does not know is refused (fail closed), naming the setting.
    s.config("guard.mode", "trial");
    let pushed = s.push(&["origin", "main"]);
    assert!(!pushed.ok, "{}", pushed.stderr);
    assert!(
        pushed
            .stderr
            .contains("git config guard.mode = \"trial\" is neither \"enforce\" nor \"evaluate\""),
        "{}",
        pushed.stderr
    );
}

#[test]
fn the_ledgers_evaluate_mode_holds_for_pushes_too() {
    let s = Server::with_ledger(
        &format!(
            "mode = \"evaluate\"\n{}",
            ledger("emails = ['cursoragent@cursor.com']", "")
        ),
        |_| {},
    );
    s.agent_edits_freeze("Park a flaky test");
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_accepted();
    assert!(
        pushed.stderr.contains("[agent_edit_protected]"),
        "{}",
        pushed.stderr
    );
    assert!(
        pushed
            .stderr
            .contains("this push would be rejected; it is accepted")
    );
}

#[test]
fn the_pre_push_hook_under_an_evaluating_ledger_lets_the_push_go_on() {
    let s = Server::with_ledger(
        &format!(
            "mode = \"evaluate\"\n{}",
            ledger("emails = ['cursoragent@cursor.com']", "")
        ),
        |_| {},
    );
    crate::support::server::install(&["--hooks", s.work.to_str().unwrap()]);
    s.git(&["fetch", "-q", "origin"]);
    s.agent_edits_freeze("Park a flaky test");
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_accepted();
    assert!(
        pushed.stderr.contains(
            "warning: guard: evaluate mode (the ledger's mode): the server would reject this push; it goes on"
        ),
        "{}",
        pushed.stderr
    );
    assert!(
        pushed
            .stderr
            .contains("warning: refs/heads/main: [agent_edit_protected]"),
        "{}",
        pushed.stderr
    );
}

#[test]
fn evaluate_mode_still_keeps_the_gate_itself() {
    // Found in review: with everything accepted, a push that deleted the default branch or
    // left a ledger that does not parse was accepted, and every later push was then rejected
    // ("the default branch does not exist", "the policy in force could not be read").
    let s = Server::new("");
    s.config("guard.mode", "evaluate");
    let pushed = s.push(&["origin", ":main"]);
    assert!(!pushed.ok, "{}", pushed.stderr);
    assert!(
        pushed
            .stderr
            .contains("remote: error: refs/heads/main: [ref_deletion]"),
        "{}",
        pushed.stderr
    );
    append_in(&s.work, "qa/merge_ledger.toml", "[broken\n");
    s.commit("Edit the ledger\n\nLedger-Change: human\n");
    let pushed = s.push(&["origin", "main"]);
    assert!(!pushed.ok, "{}", pushed.stderr);
    assert!(
        pushed.stderr.contains("[ledger_invalid]"),
        "{}",
        pushed.stderr
    );
    // Other findings are still only shown.
    s.git(&["reset", "-q", "--hard", "HEAD~1"]);
    s.agent_edits_freeze("Park a flaky test");
    s.push(&["origin", "main"]).assert_accepted();
}
