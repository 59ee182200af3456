//! Per-commit rules through their seam: `coverage_excluded`, pushed through the installed
//! pre-receive hook and found by `guard check`.

use crate::support::server::{AGENTS, Server, ledger, write_in};

const APP: &str = "def f(x):\n    if x:\n        return 1\n    return 2\n";

#[test]
fn an_agent_commit_that_adds_a_coverage_exclusion_is_rejected_a_humans_is_not() {
    let s = Server::new("");
    write_in(&s.work, "src/app.py", APP);
    s.commit("Add the app\n");
    s.push(&["origin", "main"]).assert_accepted();
    let excluded = APP.replace("    if x:\n", "    if x:  # pragma: no cover\n");

    write_in(&s.work, "src/app.py", &excluded);
    let commit = s.agent_commit("Simplify f\n");
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with(&format!(
        "remote: error: refs/heads/main: [coverage_excluded] {} \"Simplify f\" src/app.py:2: adds a coverage exclusion: `if x:  # pragma: no cover`",
        s.short(&commit)
    ));
    // The same in Rust.
    s.git(&["reset", "-q", "--hard", "HEAD^"]);
    write_in(&s.work, "src/lib.rs", "#[coverage(off)]\nfn f() {}\n");
    let commit = s.agent_commit("Add f\n");
    s.push(&["origin", "main"]).assert_rejected_with(&format!(
        "remote: error: refs/heads/main: [coverage_excluded] {} \"Add f\" src/lib.rs:1:",
        s.short(&commit)
    ));

    // A human's commit may.
    s.git(&["reset", "-q", "--hard", "HEAD^"]);
    write_in(&s.work, "src/app.py", &excluded);
    s.commit("Exclude the branch nobody calls\n");
    s.push(&["origin", "main"]).assert_accepted();
}

#[test]
fn levels_turn_the_rule_off_and_check_finds_what_the_hook_does() {
    let s = Server::with_ledger(
        &ledger(AGENTS, "[levels]\ncoverage_excluded = \"off\"\n"),
        |_| {},
    );
    write_in(&s.work, "src/app.py", APP);
    s.commit("Add the app\n");
    s.push(&["origin", "main"]).assert_accepted();
    write_in(
        &s.work,
        "src/app.py",
        &APP.replace("    if x:\n", "    if x:  # pragma: no cover\n"),
    );
    let commit = s.agent_commit("Simplify f\n");
    s.push(&["origin", "main"]).assert_accepted();

    // Under a ledger that leaves it on, `guard check` names it as the hook would.
    let p = crate::support::Project::git();
    p.write("src/app.py", APP);
    p.git_cmd(&["add", "-A"]);
    p.git_cmd(&["commit", "-qm", "Start"]);
    p.write(
        "src/app.py",
        APP.replace("    return 2\n", "    return 2  # pragma: no branch\n"),
    );
    p.commit_as(("Cursor Agent", "cursoragent@cursor.com"), "Tidy\n");
    let run = p.guard(&["check", "HEAD~1..HEAD", "--format", "json"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert_eq!(run.reasons(), ["coverage_excluded"], "{}", run.stdout);
    let _ = commit;
}
