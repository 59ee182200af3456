//! The pre-receive hook end to end: accepted and rejected pushes, a push of several refs,
//! a commit judged for every ref it reaches, objects read from quarantine, and hook input
//! that cannot be judged.

use crate::support::server::{
    AGENT_EMAIL, AGENT_NAME, AGENTS, FREEZE, LOCKFILE, Pushed, Server, UNKNOWN_ID, ZERO_ID,
    bare_repo, file_url, git_command, git_ok, install, ledger, write_in,
};

// 1. Accepted and rejected pushes.

#[test]
fn human_push_is_accepted_and_agent_push_rejected() {
    let s = Server::new("");
    let human = s.human_change("README.md", "Document the project");
    s.push(&["origin", "main"]).assert_accepted();
    assert_eq!(s.server_ref("refs/heads/main"), Some(human.clone()));

    s.agent_edits_freeze("Park a flaky test");
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with("remote: error: refs/heads/main: [agent_edit_protected]");
    assert!(
        pushed.has_line_starting("remote: hint: "),
        "{}",
        pushed.stderr
    );
    assert!(
        pushed.stderr.contains("qa/freeze.toml"),
        "the message names the path: {}",
        pushed.stderr
    );
    assert!(
        !pushed.stderr.contains('\x1b'),
        "no colour codes in hook output"
    );
    assert_eq!(s.server_ref("refs/heads/main"), Some(human));
}

// 2. One bad ref rejects the whole push.

#[test]
fn multi_ref_push_with_one_bad_ref_is_rejected_whole() {
    let s = Server::new("");
    s.git(&["checkout", "-q", "-b", "good"]);
    let good = s.human_change("docs/good.md", "Good change");
    s.git(&["checkout", "-q", "-b", "bad", "main"]);
    let bad = s.agent_edits_freeze("Bad change");
    s.git(&["checkout", "-q", "main"]);
    let main = s.human_change("README.md", "Clean main change");
    assert_ne!(good, bad);

    for atomic in [false, true] {
        let mut args = vec!["origin", "main", "good", "bad"];
        if atomic {
            args.insert(0, "--atomic");
        }
        let pushed = s.push(&args);
        pushed.assert_rejected_with("remote: error: refs/heads/bad: [agent_edit_protected]");
        assert!(
            !pushed.has_line_starting("remote: error: refs/heads/good:")
                && !pushed.has_line_starting("remote: error: refs/heads/main:"),
            "only the bad ref has findings:\n{}",
            pushed.stderr
        );
        // pre-receive decides for the whole push: no ref moves.
        assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));
        assert_eq!(s.server_ref("refs/heads/good"), None);
        assert_eq!(s.server_ref("refs/heads/bad"), None);
    }
    s.push(&["origin", "main", "good"]).assert_accepted();
    assert_eq!(s.server_ref("refs/heads/main"), Some(main));
    assert_eq!(s.server_ref("refs/heads/good"), Some(good));
}

// 5. Judged again for every ref it reaches.

#[test]
fn agent_commit_accepted_on_feature_is_rejected_for_main() {
    let s = Server::new("[refs]\nprotected = [\"refs/heads/main\"]\n");
    s.git(&["checkout", "-q", "-b", "feature"]);
    let agent = s.agent_edits_freeze("Park a test on a feature branch");
    s.push(&["origin", "feature"]).assert_accepted();
    assert_eq!(s.server_ref("refs/heads/feature"), Some(agent.clone()));

    // A fast-forward of main to a commit the server already has.
    let pushed = s.push(&["origin", "feature:main"]);
    pushed.assert_rejected_with(&format!(
        "remote: error: refs/heads/main: [agent_edit_protected] {}",
        s.short(&agent)
    ));
    assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));
}

// 6. The hook sees the quarantined objects.

#[test]
fn hook_reads_the_pushed_commit_from_quarantine() {
    let s = Server::new("");
    let subject = "Quarantine probe: park test_retry";
    let agent = s.agent_edits_freeze(subject);
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with(&format!(
        "remote: error: refs/heads/main: [agent_edit_protected] {} \"{subject}\" qa/freeze.toml:",
        s.short(&agent)
    ));
    // The commit never entered the repository: the hook read it from git's quarantine.
    let out = s
        .git_cmd(&s.bare)
        .args(["cat-file", "-e", &agent])
        .output()
        .unwrap();
    assert!(!out.status.success(), "rejected objects were kept");
}

#[test]
fn server_with_a_commit_graph_walks_it_beside_the_quarantine() {
    // `git gc` on the server writes a commit-graph: guard walks the commits it holds from the
    // graph and reads the pushed ones (in quarantine, outside the graph) from the objects.
    let s = Server::new("");
    s.human_change("README.md", "Before gc");
    s.push(&["origin", "main"]).assert_accepted();
    s.bare_git(&["gc", "-q"]);
    assert!(s.bare.join("objects/info/commit-graph").exists());

    let before = s.server_ref("refs/heads/main");
    s.human_change("README.md", "A human change");
    s.agent_edits_freeze("Park a flaky test");
    s.human_change("docs/notes.md", "Another human change");
    s.push(&["origin", "main"])
        .assert_rejected_with("remote: error: refs/heads/main: [agent_edit_protected]");
    assert_eq!(s.server_ref("refs/heads/main"), before);

    // A new branch is judged against the default branch, whose tip is in the graph.
    s.push(&["origin", "main:refs/heads/feature"])
        .assert_rejected_with("remote: error: refs/heads/feature: [agent_edit_protected]");
    s.git(&["reset", "-q", "--hard", "HEAD~3"]);
    let human = s.human_change("README.md", "A clean change");
    s.push(&["origin", "main", "main:refs/heads/feature"])
        .assert_accepted();
    assert_eq!(s.server_ref("refs/heads/feature"), Some(human));
}

// 14. Bad hook input.

#[test]
fn garbage_on_hook_stdin_cannot_be_judged() {
    let s = Server::new("");
    let b = &s.base;
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("garbage", b"hello world\n".to_vec()),
        ("truncated line", format!("{ZERO_ID} {b}").into_bytes()),
        (
            "truncated id",
            format!("{ZERO_ID} {} refs/heads/x\n", &b[..39]).into_bytes(),
        ),
        (
            "second line bad",
            format!("{ZERO_ID} {b} refs/heads/x\n{b} {b}\n").into_bytes(),
        ),
        ("non-UTF-8", b"\xff\xfe\x00garbage\n".to_vec()),
        ("not a ref", format!("{ZERO_ID} {b} main\n").into_bytes()),
        (
            "unknown object",
            format!("{ZERO_ID} {UNKNOWN_ID} refs/heads/x\n").into_bytes(),
        ),
    ];
    for (what, input) in cases {
        let (code, stderr) = s.run_pre_receive(&input, |_| {});
        assert_eq!(code, 2, "{what}: {stderr}");
        assert!(
            stderr.lines().any(|l| l.starts_with("error: ")),
            "{what}: {stderr}"
        );
    }
    // Where and what: the line number and the line itself, cut to 80 characters.
    let long = "x".repeat(200);
    for (input, said) in [
        (
            "hello world\n".to_string(),
            "line 1: expected `<old-id> <new-id> <ref>`, got \"hello world\"".to_string(),
        ),
        (
            format!("{ZERO_ID} {b} refs/heads/x\n{b} {b}\n"),
            // Cut to 80 characters.
            format!(
                "line 2: expected `<old-id> <new-id> <ref>`, got \"{}\"",
                &format!("{b} {b}")[..80]
            ),
        ),
        (
            format!("{long}\n"),
            format!(
                "line 1: expected `<old-id> <new-id> <ref>`, got \"{}\"",
                &long[..80]
            ),
        ),
    ] {
        let (code, stderr) = s.run_pre_receive(input.as_bytes(), |_| {});
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains(&said), "{said:?} in\n{stderr}");
    }
    let (code, stderr) = s.run_pre_receive(b"", |_| {});
    assert_eq!(code, 0, "empty input: {stderr}");
}

// Issue 14: what surviving mutants of the hook let through.

#[test]
fn an_agents_first_push_into_an_empty_server_is_judged() {
    // The first commit has no parent: it is compared with the empty tree, so everything it
    // adds is its change.
    let (tmp, bare) = bare_repo();
    install(&["--server", bare.to_str().unwrap()]);
    git_ok(tmp.root(), &bare, &["config", "guard.timeout", "300"]);
    git_ok(
        tmp.root(),
        tmp.root(),
        &["init", "-q", "-b", "main", "work"],
    );
    let work = tmp.path("work");
    write_in(&work, "qa/merge_ledger.toml", &ledger(AGENTS, ""));
    write_in(&work, "qa/freeze.toml", FREEZE);
    write_in(&work, "qa/fixtures.lock.json", LOCKFILE);
    git_ok(tmp.root(), &work, &["add", "-A"]);
    let out = git_command(tmp.root(), &work)
        .args(["commit", "-q", "-m", "Start the project"])
        .env("GIT_AUTHOR_NAME", AGENT_NAME)
        .env("GIT_AUTHOR_EMAIL", AGENT_EMAIL)
        .env("GIT_COMMITTER_NAME", AGENT_NAME)
        .env("GIT_COMMITTER_EMAIL", AGENT_EMAIL)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = git_command(tmp.root(), &work)
        .args(["push", &file_url(&bare), "main"])
        .output()
        .unwrap();
    let pushed = Pushed::from(out);
    for path in [
        "qa/fixtures.lock.json",
        "qa/freeze.toml",
        "qa/merge_ledger.toml",
    ] {
        assert!(
            pushed.lines().iter().any(|l| l
                .starts_with("remote: error: refs/heads/main: [agent_edit_protected]")
                && l.contains(&format!("\" {path}: agent commit adds {path} "))),
            "{path}:\n{}",
            pushed.stderr
        );
    }
    pushed.assert_rejected_with("remote: error: refs/heads/main: [agent_edit_protected]");
    // A root commit has no base to rebase onto: the advice names `--root`.
    assert!(
        pushed.stderr.contains("`git rebase -i --root`") && !pushed.stderr.contains("HEAD~"),
        "{}",
        pushed.stderr
    );
    let main = git_command(tmp.root(), &bare)
        .args(["rev-parse", "-q", "--verify", "refs/heads/main"])
        .output()
        .unwrap();
    assert!(!main.status.success(), "the server has no main");
}

#[test]
fn hook_input_over_64_mib_is_refused_whole() {
    // git never writes that much. A hook that read only the first 64 MiB would judge the
    // updates there and let the ones after them through unjudged.
    let s = Server::new("");
    let agent = s.agent_edits_freeze("Agent lease");
    s.push(&["origin", "HEAD:refs/scratch/agent"])
        .assert_accepted();
    let last = format!("{} {agent} refs/heads/main\n", s.base);
    // Alone, that update is judged and rejected.
    let (code, stderr) = s.run_pre_receive(last.as_bytes(), |_| {});
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("error: refs/heads/main: [agent_edit_protected]")),
        "{stderr}"
    );
    // Exactly 64 MiB of well-formed updates of a ref guard does not protect (each accepted
    // at once), then that update.
    const LIMIT: usize = 64 << 20;
    let filler = format!("{ZERO_ID} {} refs/scratch/x\n", s.base);
    let mut input = filler.repeat(LIMIT / filler.len() - 1);
    let pad = "y".repeat(LIMIT - input.len() - filler.len());
    input.push_str(&format!("{ZERO_ID} {} refs/scratch/x{pad}\n", s.base));
    assert_eq!(input.len(), LIMIT);
    // Exactly the limit is still read, and judged.
    let (code, stderr) = s.run_pre_receive(input.as_bytes(), |_| {});
    assert_eq!(code, 0, "{stderr}");
    input.push_str(&last);
    let (code, stderr) = s.run_pre_receive(input.as_bytes(), |_| {});
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(
        stderr.lines().next(),
        Some(
            "error: guard: standard input is larger than 64 MiB; this is not git's pre-receive input"
        ),
        "{stderr}"
    );
}
