//! Who pushes: break-glass by an allowed and a disallowed pusher, pusher accounts that
//! make every commit an agent's, push certificates and the forges' identities.

use crate::support::server::{AGENTS, Server, append_in, ledger};

// 11. Break-glass.

#[test]
fn break_glass_by_an_allowed_and_a_disallowed_pusher() {
    let s = Server::new("");
    // install.sh --server set an audit log; this server's admin removed it.
    s.bare_git(&["config", "--unset", "guard.auditLog"]);
    let agent = s.agent_edits_freeze("Emergency lease");
    let bypass = ["-o", "guard.bypass=outage 42", "origin", "main"];

    // Without advertised push options, git itself refuses -o.
    let pushed = s.push_from(&s.work, &bypass, &[("REMOTE_USER", "alice")]);
    assert!(!pushed.ok);
    assert!(
        pushed.stderr.contains("push options"),
        "git refuses: {}",
        pushed.stderr
    );
    assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));

    s.config("receive.advertisePushOptions", "true");
    s.config("guard.bypass", "root-admin");
    s.bare_git(&["config", "--add", "guard.bypass", "bob, alice"]);
    let log = s.tmp.path("audit.log");

    // An allowed pusher, but no audit log configured: refused, judged as usual.
    let pushed = s.push_from(&s.work, &bypass, &[("REMOTE_USER", "alice")]);
    pushed.assert_rejected_with("remote: error: refs/heads/main: [agent_edit_protected]");
    assert!(
        pushed
            .lines()
            .iter()
            .any(|l| l.starts_with("remote: warning:") && l.contains("refused")),
        "{}",
        pushed.stderr
    );
    assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));

    s.config("guard.auditLog", log.to_str().unwrap());
    // A pusher not on the list.
    let pushed = s.push_from(&s.work, &bypass, &[("REMOTE_USER", "mallory")]);
    pushed.assert_rejected_with("remote: error: refs/heads/main: [agent_edit_protected]");
    assert!(
        pushed
            .lines()
            .iter()
            .any(|l| l.starts_with("remote: warning:") && l.contains("refused")),
        "{}",
        pushed.stderr
    );
    assert!(!log.exists(), "a refused bypass is not logged as one");
    assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));

    // Options are not the pusher: claiming a name in them changes nothing.
    let pushed = s.push_from(
        &s.work,
        &[
            "-o",
            "guard.bypass=me",
            "-o",
            "REMOTE_USER=alice",
            "origin",
            "main",
        ],
        &[],
    );
    pushed.assert_rejected_with("remote: error: refs/heads/main: [agent_edit_protected]");

    // The allowed pusher with an audit log.
    let pushed = s.push_from(&s.work, &bypass, &[("REMOTE_USER", "alice")]);
    assert!(pushed.ok, "{}", pushed.stderr);
    assert!(
        pushed
            .lines()
            .iter()
            .any(|l| l.starts_with("remote: warning:") && l.contains("alice")),
        "{}",
        pushed.stderr
    );
    // Break-glass skips judging, and the closing line says so.
    assert!(
        pushed.has_line_starting("remote: guard: 1 ref update accepted, 0 commits judged"),
        "{}",
        pushed.stderr
    );
    assert_eq!(s.server_ref("refs/heads/main"), Some(agent.clone()));
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "{text}");
    let entry: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(entry["pusher"], "alice");
    assert_eq!(entry["reason"], "outage 42");
    assert_eq!(
        entry["refs"],
        serde_json::json!([{"ref": "refs/heads/main", "old": s.base, "new": agent}])
    );
    let time = entry["time_utc"].as_str().expect("a UTC time");
    assert!(time.ends_with('Z'), "{time}");
}

// 12. The pusher as agent; GitLab's message prefix.

#[test]
fn agent_pusher_makes_every_commit_an_agents() {
    let s = Server::with_ledger(
        &ledger(&format!("{AGENTS}\npushers = [\"ci-bot-*\"]"), ""),
        |_| {},
    );
    append_in(&s.work, "qa/freeze.toml", "# parked\n");
    let human = s.commit("Park a test\n\nFreeze-Lease: human\n");

    let pushed = s.push_from(
        &s.work,
        &["origin", "main"],
        &[("GL_USERNAME", "ci-bot-7"), ("GL_ID", "user-7")],
    );
    pushed.assert_rejected_with(&format!(
        "remote: GL-HOOK-ERR: error: refs/heads/main: [agent_edit_protected] {}",
        s.short(&human)
    ));
    assert!(pushed.has_line_starting("remote: GL-HOOK-ERR: hint: "));
    for line in pushed.lines() {
        assert!(
            !line.starts_with("remote: error:") && !line.starts_with("remote: hint:"),
            "unprefixed line under GitLab: {line}"
        );
    }
    assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));

    // The same commit pushed by a person is a human's, with its trailer.
    let pushed = s.push_from(
        &s.work,
        &["origin", "main"],
        &[("GL_USERNAME", "dev-alice")],
    );
    pushed.assert_accepted();
    assert_eq!(s.server_ref("refs/heads/main"), Some(human));
}

// Push certificates and the forges' other identities.

#[test]
fn a_replayed_push_certificate_names_no_pusher() {
    let s = Server::with_ledger(
        &ledger(&format!("{AGENTS}\npushers = [\"ci-bot-*\"]"), ""),
        |_| {},
    );
    append_in(&s.work, "qa/freeze.toml", "# parked\n");
    s.commit("Park a test\n\nFreeze-Lease: human\n");
    let cert = |nonce: &'static str| {
        vec![
            ("GIT_PUSH_CERT_STATUS", "G"),
            ("GIT_PUSH_CERT_SIGNER", "ci-bot-7"),
            ("GIT_PUSH_CERT_NONCE_STATUS", nonce),
        ]
    };
    // A good certificate with a fresh nonce names the pusher: an agent account.
    s.push_from(&s.work, &["origin", "main"], &cert("OK"))
        .assert_rejected_with("remote: error: refs/heads/main: [agent_edit_protected]");
    // A replayed one (nonce status SLOP/BAD) names nobody: judged as the human commit it is.
    s.push_from(&s.work, &["origin", "main"], &cert("BAD"))
        .assert_accepted();
}

#[test]
fn more_forge_identities_mark_the_push_an_agents() {
    let s = Server::with_ledger(
        &ledger(
            &format!("{AGENTS}\npushers = [\"agent-*\", \"*@agents.example\"]"),
            "",
        ),
        |_| {},
    );
    append_in(&s.work, "qa/freeze.toml", "# parked\n");
    let human = s.commit("Park a test\n\nFreeze-Lease: human\n");
    let expected = format!(
        "remote: error: refs/heads/main: [agent_edit_protected] {}",
        s.short(&human)
    );
    for env in [
        // GitHub Enterprise's merge button: a person merges an agent's pull request.
        vec![
            ("GITHUB_USER_LOGIN", "dev-alice"),
            ("GITHUB_PULL_REQUEST_AUTHOR_LOGIN", "agent-7"),
        ],
        // Gitea/Forgejo: the pusher's e-mail as well as the name.
        vec![
            ("GITEA_PUSHER_NAME", "robot"),
            ("GITEA_PUSHER_EMAIL", "robot@agents.example"),
        ],
        // gitolite.
        vec![("GL_USER", "agent-9")],
    ] {
        let pushed = s.push_from(&s.work, &["origin", "main"], &env);
        pushed.assert_rejected_with(&expected);
        assert_eq!(
            s.server_ref("refs/heads/main"),
            Some(s.base.clone()),
            "{env:?}"
        );
    }
    // The same push by people is the human's commit it is.
    s.push_from(
        &s.work,
        &["origin", "main"],
        &[
            ("GITHUB_USER_LOGIN", "dev-alice"),
            ("GITHUB_PULL_REQUEST_AUTHOR_LOGIN", "dev-bob"),
        ],
    )
    .assert_accepted();
}

/// pre-commit-ci's identity, as pytest's history has it on squash-merged pull requests.
const PRE_COMMIT_CI: &str =
    "pre-commit-ci[bot] <66853113+pre-commit-ci[bot]@users.noreply.github.com>";

#[test]
fn a_humans_squash_merge_co_authored_by_pre_commit_ci_is_a_humans() {
    // The human changes the freeze file with its trailer, in a commit that also carries
    // pre-commit-ci's co-author line: accepted (it was called a forged human trailer, since
    // any `[bot]` co-author marked an agent).
    let s = Server::new("");
    append_in(&s.work, "qa/freeze.toml", "# reviewed\n");
    s.commit(&format!(
        "Tidy the freeze file (#123)\n\nFreeze-Lease: human\nCo-authored-by: {PRE_COMMIT_CI}\n"
    ));
    s.push(&["origin", "main"]).assert_accepted();

    // Another bot as co-author still marks the commit an agent's, and its trailer a forgery.
    append_in(&s.work, "qa/freeze.toml", "# again\n");
    let commit = s.commit(
        "Tidy the freeze file (#124)\n\nFreeze-Lease: human\nCo-authored-by: devin-ai-integration[bot] <158243242+devin-ai-integration[bot]@users.noreply.github.com>\n",
    );
    let pushed = s.push(&["origin", "main"]);
    assert!(!pushed.ok, "{}", pushed.stderr);
    assert!(
        pushed
            .stderr
            .contains(&format!("[forged_human_trailer] {}", s.short(&commit))),
        "{}",
        pushed.stderr
    );
}
