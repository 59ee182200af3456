//! Which ledger judges a push: the one in force before it, wherever `guard.ledger` and
//! `guard.policyRef` say it is, and never one that does not parse.

use crate::support::server::{AGENTS, Server, append_in, install, ledger, write_in};

// 4. A push that edits the ledger is judged by the ledger it replaces.

#[test]
fn push_that_edits_the_ledger_to_allow_itself_is_judged_by_the_old_ledger() {
    let s = Server::new("");
    s.write("qa/merge_ledger.toml", &ledger("emails = []", ""));
    let loosen = s.commit("Trust everyone\n\nLedger-Change: human\n");
    // The agent, no longer listed in the new ledger, parks a test with a human trailer.
    append_in(&s.work, "qa/freeze.toml", "# parked\n");
    let agent = s.agent_commit("Park a test\n\nFreeze-Lease: human\n");

    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with(&format!(
        "remote: error: refs/heads/main: [agent_edit_protected] {}",
        s.short(&agent)
    ));
    assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));

    // Once the ledger change itself has landed, it is the policy in force.
    s.push(&["origin", &format!("{loosen}:refs/heads/main")])
        .assert_accepted();
    s.push(&["origin", "main"]).assert_accepted();
    assert_eq!(s.server_ref("refs/heads/main"), Some(agent));
}

// Where the ledger in force is read from, and a ledger that does not parse.

#[test]
fn guard_ledger_names_a_ledger_kept_elsewhere() {
    let s = Server::new("");
    // Moving the ledger away from where guard reads it would leave the pushes after it to
    // the embedded default: rejected, whatever trailer the move carries.
    s.git(&["mv", "qa/merge_ledger.toml", "policy-ledger.toml"]);
    s.commit("Move the ledger\n\nLedger-Change: human\n");
    s.push(&["origin", "main"]).assert_rejected_with(
        "remote: error: refs/heads/main: [ledger_removed] qa/merge_ledger.toml",
    );
    // The way to move it: a copy at the new path, then the server's config, then the old
    // copy goes.
    s.git(&["reset", "-q", "--hard", "HEAD~"]);
    std::fs::copy(
        s.work.join("qa/merge_ledger.toml"),
        s.work.join("policy-ledger.toml"),
    )
    .unwrap();
    s.commit("Copy the ledger\n\nLedger-Change: human\n");
    s.push(&["origin", "main"]).assert_accepted();
    s.config("guard.ledger", "policy-ledger.toml");
    s.git(&["rm", "-q", "qa/merge_ledger.toml"]);
    s.commit("Drop the old ledger copy\n\nLedger-Change: human\n");
    s.push(&["origin", "main"]).assert_accepted();
    append_in(&s.work, "policy-ledger.toml", "# loosened\n");
    s.agent_commit("Loosen the ledger\n");
    s.push(&["origin", "main"])
        .assert_rejected_with("remote: error: refs/heads/main: [agent_edit_protected]");
}

#[test]
fn branch_made_at_an_old_commit_is_judged_by_the_default_branchs_ledger() {
    let s = Server::new("");
    write_in(
        &s.work,
        "src/secure/auth.py",
        "def check(token):\n    return False\n",
    );
    let before = s.commit("Add the auth module");
    s.push(&["origin", "main"]).assert_accepted();
    // A human protects src/secure/ from then on.
    s.write(
        "qa/merge_ledger.toml",
        &ledger(AGENTS, "[protect]\npaths = [\"src/secure/\"]\n"),
    );
    s.commit("Protect the auth module\n\nLedger-Change: human\n");
    s.push(&["origin", "main"]).assert_accepted();

    // The agent makes `hot` at the commit before that (no new commits: accepted), ...
    s.git(&["checkout", "-q", "-b", "hot", &before]);
    s.push(&["origin", "hot"]).assert_accepted();
    // ... then edits the now protected file there: main's ledger is in force, not hot's.
    write_in(
        &s.work,
        "src/secure/auth.py",
        "def check(token):\n    return True\n",
    );
    let agent = s.agent_commit("Simplify the auth check");
    let pushed = s.push(&["origin", "hot"]);
    pushed.assert_rejected_with(&format!(
        "remote: error: refs/heads/hot: [agent_edit_protected] {}",
        s.short(&agent)
    ));
    assert!(
        pushed.stderr.contains("src/secure/auth.py"),
        "{}",
        pushed.stderr
    );
    assert_eq!(s.server_ref("refs/heads/hot"), Some(before));

    // The pre-push hook reads the remote default branch's ledger too.
    install(&["--hooks", s.work.to_str().unwrap()]);
    s.push(&["origin", "hot"])
        .assert_refused_locally_with("error: refs/heads/hot: [agent_edit_protected]");
}

#[test]
fn guard_policy_ref_names_the_ledger_in_force() {
    let s = Server::new("");
    // A stricter ledger on a ref only admins move; main's own ledger stays as it was.
    s.git(&["checkout", "-q", "-b", "policy"]);
    s.write(
        "qa/merge_ledger.toml",
        &ledger(AGENTS, "[protect]\npaths = [\"docs/\"]\n"),
    );
    s.commit("Protect the docs\n\nLedger-Change: human\n");
    s.push(&["origin", "policy:refs/meta/policy"])
        .assert_accepted();
    s.config("guard.policyRef", "refs/meta/policy");

    s.git(&["checkout", "-q", "main"]);
    write_in(&s.work, "docs/guide.md", "Run the tests.\n");
    s.agent_commit("Write a guide");
    s.push(&["origin", "main"])
        .assert_rejected_with("remote: error: refs/heads/main: [agent_edit_protected]");
    assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));

    // Like the default branch, the policy ref is never deleted by a push, and must exist.
    s.push(&["origin", ":refs/meta/policy"])
        .assert_rejected_with("remote: error: refs/meta/policy: [ref_deletion]");
    s.config("guard.policyRef", "refs/meta/nosuch");
    s.push(&["origin", "main"]).assert_rejected_with(
        "remote: error: guard: the policy ref (refs/meta/nosuch) does not exist",
    );
}

#[test]
fn a_ledger_that_does_not_parse_is_refused_before_it_lands() {
    let s = Server::new("");
    // A duplicate key, with the human's trailer.
    let text = format!(
        "{}\n[freeze]\nfile = \"qa/other.toml\"\n",
        ledger(AGENTS, "")
    );
    let dup_line = text.lines().count() - 1;
    s.write("qa/merge_ledger.toml", &text);
    s.commit("Tweak the ledger\n\nLedger-Change: human\n");
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with("remote: error: refs/heads/main: [ledger_invalid]");
    assert!(
        pushed
            .stderr
            .contains(&format!("qa/merge_ledger.toml:{dup_line}:")),
        "names file and line {dup_line}: {}",
        pushed.stderr
    );
    assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));

    // More globs than guard judges (each is a rule every commit is compared against).
    s.git(&["reset", "-q", "--hard", &s.base]);
    let globs: Vec<String> = (0..30_000)
        .map(|i| format!("\"src/mod{i}/**/*.py\""))
        .collect();
    s.write(
        "qa/merge_ledger.toml",
        &ledger(
            AGENTS,
            &format!("[protect]\npaths = [\n{}\n]\n", globs.join(",\n")),
        ),
    );
    s.commit("Protect every module\n\nLedger-Change: human\n");
    let first_glob = std::fs::read_to_string(s.work.join("qa/merge_ledger.toml"))
        .unwrap()
        .lines()
        .position(|l| l.starts_with("\"src/mod0/"))
        .unwrap()
        + 1;
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with("remote: error: refs/heads/main: [ledger_invalid]");
    assert!(
        pushed
            .stderr
            .contains(&format!("qa/merge_ledger.toml:{first_glob}:")),
        "names the first glob's line {first_glob}: {}",
        pushed.stderr
    );
    assert!(
        pushed
            .stderr
            .contains("`protect.paths` has 30000 patterns, more than guard judges (4096)"),
        "{}",
        pushed.stderr
    );
    assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));

    // The push after it is judged as usual.
    s.git(&["reset", "-q", "--hard", &s.base]);
    s.human_change("README.md", "Docs");
    s.push(&["origin", "main"]).assert_accepted();
}
