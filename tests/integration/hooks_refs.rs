//! What a push does to refs: new branches, deletions, force pushes, tags, replace refs and
//! notes, and refs deleted and made again; the default branch's own protection.

use std::path::Path;

use crate::support::server::{
    Server, append_in, blob_in, run_with_stdin, server_with_golden_fixture,
};

// 3. New branches, deletions, force pushes, tags.

#[test]
fn new_branch_is_judged_against_the_default_branch() {
    let s = Server::new("");
    s.git(&["checkout", "-q", "-b", "feature"]);
    let clean = s.human_change("docs/feature.md", "Feature work");
    s.push(&["origin", "feature"]).assert_accepted();
    assert_eq!(s.server_ref("refs/heads/feature"), Some(clean));

    s.git(&["checkout", "-q", "-b", "agent-feature", "main"]);
    s.agent_edits_freeze("Agent feature");
    s.push(&["origin", "agent-feature"])
        .assert_rejected_with("remote: error: refs/heads/agent-feature: [agent_edit_protected]");
    assert_eq!(s.server_ref("refs/heads/agent-feature"), None);

    // An agent commit that landed on main by break-glass: a new branch at main's tip brings
    // nothing that is not on the default branch, so it is accepted ...
    s.push(&["origin", "main:refs/heads/trunk"])
        .assert_accepted();
    s.config("receive.advertisePushOptions", "true");
    s.config("guard.bypass", "alice");
    let log = s.tmp.path("audit.log");
    s.config("guard.auditLog", log.to_str().unwrap());
    s.git(&["checkout", "-q", "main"]);
    let landed = s.agent_edits_freeze("Emergency lease");
    s.push_from(
        &s.work,
        &["-o", "guard.bypass=outage", "origin", "main"],
        &[("REMOTE_USER", "alice")],
    )
    .assert_accepted();
    assert_eq!(s.server_ref("refs/heads/main"), Some(landed.clone()));
    s.push(&["origin", "main:refs/heads/hotfix"])
        .assert_accepted();
    assert_eq!(s.server_ref("refs/heads/hotfix"), Some(landed.clone()));
    // ... but judged against `guard.defaultBranch = trunk`, which lacks it, it is rejected.
    s.config("guard.defaultBranch", "trunk");
    s.push(&["origin", "main:refs/heads/hotfix2"])
        .assert_rejected_with("remote: error: refs/heads/hotfix2: [agent_edit_protected]");
    assert_eq!(s.server_ref("refs/heads/hotfix2"), None);
}

#[test]
fn branch_deletion_is_allowed_by_default() {
    let s = Server::new("");
    s.git(&["checkout", "-q", "-b", "feature"]);
    s.human_change("docs/feature.md", "Feature work");
    s.push(&["origin", "feature"]).assert_accepted();
    s.push(&["origin", "--delete", "feature"]).assert_accepted();
    assert_eq!(s.server_ref("refs/heads/feature"), None);
}

#[test]
fn branch_deletion_is_rejected_when_the_ledger_forbids_it() {
    let s = Server::new("[refs]\nprotected = [\"refs/heads/*\"]\nallow_delete = false\n");
    s.git(&["checkout", "-q", "-b", "feature"]);
    let tip = s.human_change("docs/feature.md", "Feature work");
    s.git(&["tag", "v0.1"]);
    s.push(&["origin", "feature", "v0.1"]).assert_accepted();

    let pushed = s.push(&["origin", "--delete", "feature"]);
    pushed.assert_rejected_with(
        "remote: error: refs/heads/feature: [ref_deletion] the push deletes a protected ref",
    );
    assert!(
        pushed.lines().contains(
            &"remote: hint: the ledger's [refs] allow_delete = false; ask a server admin"
        ),
        "{}",
        pushed.stderr
    );
    assert_eq!(s.server_ref("refs/heads/feature"), Some(tip));
    // Tags are not protected under this ledger: deleting one passes.
    s.push(&["origin", "--delete", "refs/tags/v0.1"])
        .assert_accepted();
    assert_eq!(s.server_ref("refs/tags/v0.1"), None);
}

#[test]
fn force_push_judges_the_new_commits() {
    let s = Server::new("");
    let first = s.human_change("README.md", "First");
    s.push(&["origin", "main"]).assert_accepted();

    // Rewrite main: a clean replacement is accepted.
    s.git(&["reset", "-q", "--hard", &s.base]);
    let rewritten = s.human_change("NOTES.md", "Rewritten");
    let plain = s.push(&["origin", "main"]);
    assert!(!plain.ok, "a non-fast-forward needs --force");
    assert_eq!(s.server_ref("refs/heads/main"), Some(first));
    s.push(&["--force", "origin", "main"]).assert_accepted();
    assert_eq!(s.server_ref("refs/heads/main"), Some(rewritten.clone()));

    // A forced agent edit is rejected.
    s.git(&["reset", "-q", "--hard", &s.base]);
    s.agent_edits_freeze("Forced lease");
    s.push(&["--force", "origin", "main"])
        .assert_rejected_with("remote: error: refs/heads/main: [agent_edit_protected]");
    assert_eq!(s.server_ref("refs/heads/main"), Some(rewritten));
}

#[test]
fn force_push_that_undoes_a_protected_change_is_rejected() {
    let s = Server::new("");
    // A human drops the freeze comment block and lands it, with its trailer.
    append_in(
        &s.work,
        "qa/freeze.toml",
        "# reviewed by the platform team\n",
    );
    let approved = s.commit("Note the review\n\nFreeze-Lease: human\n");
    s.push(&["origin", "main"]).assert_accepted();

    // Rewinding main past it undoes the change with no commit to judge (0 commits new).
    s.git(&["reset", "-q", "--hard", &s.base]);
    s.push(&["--force", "origin", "main"])
        .assert_rejected_with("remote: error: refs/heads/main: [protected_rewind]");
    assert_eq!(s.server_ref("refs/heads/main"), Some(approved.clone()));

    // Rewinding past unprotected work only is fine; a rebase that re-applies the protected
    // change is judged through its new commit (which carries the trailer).
    s.git(&["reset", "-q", "--hard", &approved]);
    let extra = s.human_change("README.md", "Docs");
    s.push(&["origin", "main"]).assert_accepted();
    s.git(&["reset", "-q", "--hard", &approved]);
    s.push(&["--force", "origin", "main"]).assert_accepted();
    assert_ne!(s.server_ref("refs/heads/main"), Some(extra));
    s.git(&["reset", "-q", "--hard", &s.base]);
    s.human_change("NOTES.md", "Other work first");
    append_in(
        &s.work,
        "qa/freeze.toml",
        "# reviewed by the platform team\n",
    );
    s.commit("Note the review again\n\nFreeze-Lease: human\n");
    s.push(&["--force", "origin", "main"]).assert_accepted();
}

#[test]
fn lightweight_and_annotated_tags() {
    let s = Server::new("");
    // A lightweight tag on a new clean commit (the tag brings the commit).
    s.git(&["checkout", "-q", "-b", "side"]);
    let clean = s.human_change("docs/side.md", "Side work");
    s.git(&["tag", "v1"]);
    s.push(&["origin", "v1"]).assert_accepted();
    assert_eq!(s.server_ref("refs/tags/v1"), Some(clean.clone()));

    // An annotated tag: the ref holds the tag object, which the hook peels.
    s.git(&["tag", "-a", "-m", "Release 1.1", "v1.1", &clean]);
    let tag_object = s.git(&["rev-parse", "refs/tags/v1.1"]);
    assert_ne!(tag_object, clean);
    s.push(&["origin", "v1.1"]).assert_accepted();
    assert_eq!(s.server_ref("refs/tags/v1.1"), Some(tag_object));

    // Annotated and lightweight tags on an agent commit that edits a protected path.
    s.git(&["checkout", "-q", "-b", "agent", "main"]);
    let agent = s.agent_edits_freeze("Agent lease");
    s.git(&["tag", "-a", "-m", "Release 2", "v2", &agent]);
    s.push(&["origin", "v2"])
        .assert_rejected_with("remote: error: refs/tags/v2: [agent_edit_protected]");
    assert_eq!(s.server_ref("refs/tags/v2"), None);
    s.git(&["tag", "v2-light", &agent]);
    s.push(&["origin", "v2-light"])
        .assert_rejected_with("remote: error: refs/tags/v2-light: [agent_edit_protected]");
    assert_eq!(s.server_ref("refs/tags/v2-light"), None);
}

// The default branch; replace refs and notes; deleting and re-creating refs; many tags; an
// audit log for deletions.

#[test]
fn the_default_branch_cannot_be_deleted_and_must_exist() {
    let s = Server::new("");
    // git itself refuses to delete the branch HEAD names; make another the default.
    s.git(&["push", "-q", "origin", "main:trunk"]);
    s.config("guard.defaultBranch", "trunk");
    s.push(&["origin", ":trunk"])
        .assert_rejected_with("remote: error: refs/heads/trunk: [ref_deletion]");
    assert_eq!(s.server_ref("refs/heads/trunk"), Some(s.base.clone()));

    // A default branch that does not exist: new refs would have no policy.
    s.config("guard.defaultBranch", "nosuch");
    s.git(&["checkout", "-q", "-b", "feature"]);
    s.human_change("NOTES.md", "Notes");
    let pushed = s.push(&["origin", "feature"]);
    pushed.assert_rejected_with(
        "remote: error: guard: the default branch (refs/heads/nosuch) does not exist",
    );
    assert_eq!(s.server_ref("refs/heads/feature"), None);
}

#[test]
fn replace_refs_are_refused_and_notes_pass() {
    let (s, blob) = server_with_golden_fixture();
    // The agent's bytes stand in for the fixture without a commit: git show, git archive and
    // a clone that fetches replace refs would all see them.
    let agent_blob = blob_in(&s, &s.work, "a,b\n1,3\n");
    s.git(&["replace", &blob, &agent_blob]);
    assert_eq!(
        s.git(&["show", "main:tests/fixtures/golden.csv"]),
        "a,b\n1,3",
        "git honours the replace ref locally"
    );
    let name = format!("refs/replace/{blob}");
    let pushed = s.push(&["origin", &name]);
    pushed.assert_rejected_with(&format!("remote: error: {name}: [replace_ref]"));
    assert!(
        pushed.has_line_starting("remote: hint: "),
        "{}",
        pushed.stderr
    );
    assert_eq!(s.server_ref(&name), None);

    // One an admin made on the server can be removed by a push, not moved.
    let admin_blob = blob_in(&s, &s.bare, "a,b\n1,4\n");
    s.bare_git(&["update-ref", &name, &admin_blob]);
    s.push(&["--force", "origin", &name])
        .assert_rejected_with(&format!("remote: error: {name}: [replace_ref]"));
    assert_eq!(s.server_ref(&name), Some(admin_blob));
    s.push(&["origin", &format!(":{name}")]).assert_accepted();
    assert_eq!(s.server_ref(&name), None);

    // Notes annotate commits; they change no object: a notes ref passes.
    s.git(&["notes", "add", "-m", "Reviewed", "main"]);
    s.push(&["origin", "refs/notes/commits"]).assert_accepted();
    assert!(s.server_ref("refs/notes/commits").is_some());
}

/// A server with an audit log, and a `release` branch whose tip carries a human's approved
/// change of the freeze file that `main` lacks; (server, release tip).
fn server_with_a_release_branch() -> (Server, String) {
    let s = Server::new("");
    s.config("guard.auditLog", s.tmp.path("audit.log").to_str().unwrap());
    s.git(&["checkout", "-q", "-b", "release"]);
    append_in(&s.work, "qa/freeze.toml", "# reviewed for the release\n");
    let approved = s.commit("Review the leases\n\nFreeze-Lease: human\n");
    s.push(&["origin", "release"]).assert_accepted();
    (s, approved)
}

#[test]
fn deleting_and_recreating_a_branch_is_judged_as_a_rewind() {
    let (s, approved) = server_with_a_release_branch();
    // A force push that undoes the approved change is a rewind ...
    s.push(&[
        "--force",
        "origin",
        &format!("{}:refs/heads/release", s.base),
    ])
    .assert_rejected_with("remote: error: refs/heads/release: [protected_rewind]");
    // ... and so is deleting the branch, then making it again at the old commit.
    s.push(&["origin", ":release"]).assert_accepted();
    assert_eq!(s.server_ref("refs/heads/release"), None);
    let pushed = s.push(&["origin", &format!("{}:refs/heads/release", s.base)]);
    pushed.assert_rejected_with("remote: error: refs/heads/release: [protected_rewind]");
    assert!(
        pushed.stderr.contains("qa/freeze.toml"),
        "{}",
        pushed.stderr
    );
    assert!(
        pushed.stderr.contains(&s.short(&approved)),
        "names the deleted tip: {}",
        pushed.stderr
    );
    assert_eq!(s.server_ref("refs/heads/release"), None);

    // Re-created where it was (or past it), nothing is undone.
    s.push(&["origin", &format!("{approved}:refs/heads/release")])
        .assert_accepted();
    assert_eq!(s.server_ref("refs/heads/release"), Some(approved));
}

#[test]
fn a_new_branch_at_an_old_commit_is_not_a_rewind() {
    let (s, _) = server_with_a_release_branch();
    // `main` moves on with a protected change; a branch made now at the first commit holds
    // the older freeze file, but no ref of that name ever held the newer one: a maintenance
    // branch or a tag on an old release looks the same. Merging it back is judged then.
    s.git(&["checkout", "-q", "main"]);
    append_in(&s.work, "qa/freeze.toml", "# reviewed on main\n");
    s.commit("Review the leases on main\n\nFreeze-Lease: human\n");
    s.push(&["origin", "main"]).assert_accepted();
    s.push(&["origin", &format!("{}:refs/heads/maint-1.x", s.base)])
        .assert_accepted();
    s.push(&["origin", &format!("{}:refs/tags/v1.0", s.base)])
        .assert_accepted();
}

/// Makes `count` lightweight tags `refs/tags/<prefix>NNNN` in `dir`, spread over `commits`.
fn make_tags(s: &Server, dir: &Path, prefix: &str, count: usize, commits: &[String]) {
    let mut stdin = String::new();
    for k in 0..count {
        let commit = &commits[k % commits.len()];
        stdin.push_str(&format!("create refs/tags/{prefix}{k:04} {commit}\n"));
    }
    let mut cmd = s.git_cmd(dir);
    cmd.args(["update-ref", "--stdin"]);
    let (code, stderr) = run_with_stdin(cmd, stdin.as_bytes());
    assert_eq!(code, 0, "git update-ref --stdin: {stderr}");
}

/// The tags of the server.
fn server_tags(s: &Server) -> Vec<String> {
    let out = s.bare_git(&["for-each-ref", "--format=%(refname)", "refs/tags/"]);
    out.lines().map(str::to_string).collect()
}

#[test]
fn five_thousand_tags_at_landed_commits_pass_within_the_default_timeout() {
    let s = Server::new("");
    // The default guard.timeout (4 s), not the tests' generous one: judged one by one, each
    // tag cost a walk and a scoring of its commit, and a mirror or tag import of this size
    // ran past it (even in a release build) and was rejected.
    s.bare_git(&["config", "--unset", "guard.timeout"]);
    let mut landed = vec![s.base.clone()];
    for k in 0..20 {
        landed.push(s.human_change("docs/log.md", &format!("Change {k}")));
    }
    s.push(&["origin", "main"]).assert_accepted();

    // One bad tag among them, at an agent's edit of the freeze file that main never took:
    // judged as ever, and it rejects the whole push.
    s.git(&["checkout", "-q", "-b", "side"]);
    let bad = s.agent_edits_freeze("Park a flaky test");
    s.git(&["checkout", "-q", "main"]);
    make_tags(&s, &s.work, "r", 5000, &landed);
    s.git(&["tag", "bad", &bad]);
    let pushed = s.push(&["origin", "refs/tags/*:refs/tags/*"]);
    pushed.assert_rejected_with(&format!(
        "remote: error: refs/tags/bad: [agent_edit_protected] {}",
        s.short(&bad)
    ));
    assert!(
        pushed.stderr.contains("qa/freeze.toml"),
        "{}",
        pushed.stderr
    );
    assert!(
        !pushed.has_line_starting("remote: error: refs/tags/r"),
        "only the bad tag has findings:\n{}",
        pushed.stderr
    );
    assert_eq!(server_tags(&s), Vec::<String>::new());

    // Without it, the 5,000 land: each tag's commit is on main, judged when it landed.
    s.git(&["tag", "-d", "bad"]);
    let pushed = s.push(&["origin", "refs/tags/*:refs/tags/*"]);
    pushed.assert_accepted();
    assert!(
        pushed.has_line_starting("remote: guard: 5000 ref updates accepted, 0 commits judged"),
        "{}",
        pushed.stderr
    );
    let tags = server_tags(&s);
    assert_eq!(tags.len(), 5000);
    assert_eq!(s.server_ref("refs/tags/r0000"), Some(landed[0].clone()));
    assert_eq!(
        s.server_ref("refs/tags/r4999"),
        Some(landed[4999 % 21].clone())
    );
}

#[test]
fn deleting_a_protected_ref_needs_the_audit_log_install_sh_sets() {
    let s = Server::new("");
    // install.sh --server set the audit log, in the repository.
    let log = s.bare_git(&["config", "--get", "guard.auditLog"]);
    assert!(log.ends_with("/guard-audit.log"), "{log}");
    s.git(&["checkout", "-q", "-b", "feature"]);
    s.human_change("docs/feature.md", "Feature work");
    s.push(&["origin", "feature"]).assert_accepted();
    s.push(&["origin", ":feature"]).assert_accepted();
    // Remembered, in a file only the server's user can read.
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("refs/heads/feature"), "{text}");
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&log).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);

    // Without an audit log, a deletion the ledger allows is refused: guard could not
    // remember it, and the ref made again at an old commit would land as a new one.
    s.bare_git(&["config", "--unset", "guard.auditLog"]);
    s.push(&["origin", "feature"]).assert_accepted();
    let pushed = s.push(&["origin", ":feature"]);
    pushed.assert_rejected_with("remote: error: refs/heads/feature: [ref_deletion] the push deletes a protected ref, and the server has no guard.auditLog");
    assert!(
        pushed.stderr.contains("git config guard.allowDelete true"),
        "says how: {}",
        pushed.stderr
    );
    assert!(s.server_ref("refs/heads/feature").is_some());

    // The admin accepts deletions guard cannot remember: accepted, with a warning.
    s.config("guard.allowDelete", "true");
    let pushed = s.push(&["origin", ":feature"]);
    pushed.assert_accepted();
    assert!(
        pushed
            .lines()
            .iter()
            .any(|l| l.starts_with("remote: warning:") && l.contains("guard.auditLog")),
        "{}",
        pushed.stderr
    );
    // A value that is no boolean fails closed.
    s.config("guard.allowDelete", "maybe");
    s.push(&["origin", "feature"]).assert_rejected_with(
        "remote: error: guard: git config guard.allowDelete = \"maybe\" is not a boolean",
    );
}
