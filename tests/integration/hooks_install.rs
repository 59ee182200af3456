//! `install.sh`: chaining an existing hook, installing twice, uninstalling, forge layouts,
//! unusual guard paths, SHA-256 repositories and the server's fsck setting.

use std::path::Path;
use std::process::{Command, Output};

use crate::support::hermetic;
use crate::support::server::{
    AGENTS, GUARD, Pushed, Server, UNKNOWN_ID, ZERO_ID, bare_repo, dir_names, file_url, git_ok,
    install, ledger, run_install, run_with_stdin, write_in,
};

// 7. An existing pre-receive hook is kept and chained.

#[test]
fn existing_pre_receive_hook_is_chained() {
    let seen = tempfile::tempdir().unwrap();
    let seen_path = seen.path().join("stdin-seen");
    let chained = |exit: u8| {
        format!(
            "#!/bin/sh\necho \"site hook ran\" >&2\ncat >\"{}\"\nexit {exit}\n",
            seen_path.display()
        )
    };
    let first = chained(0);
    let s = Server::with_ledger(&ledger(AGENTS, ""), |bare| {
        let hook = bare.join("hooks/pre-receive");
        std::fs::write(&hook, &first).unwrap();
        set_executable(&hook);
    });
    let hooks = s.bare.join("hooks");
    assert_eq!(
        std::fs::read_to_string(hooks.join("pre-receive.guard-chained")).unwrap(),
        first
    );
    // The bootstrap push went through both hooks.
    assert_eq!(
        std::fs::read_to_string(&seen_path).unwrap(),
        format!("{ZERO_ID} {} refs/heads/main\n", s.base)
    );

    // Exit 0: guard decides. A two-ref push: both hooks get both lines.
    s.git(&["checkout", "-q", "-b", "topic"]);
    let topic = s.human_change("docs/topic.md", "Topic");
    s.git(&["checkout", "-q", "main"]);
    let main = s.human_change("README.md", "Main");
    let pushed = s.push(&["origin", "main", "topic"]);
    pushed.assert_accepted();
    assert!(pushed.has_line_starting("remote: site hook ran"));
    let mut lines: Vec<String> = std::fs::read_to_string(&seen_path)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    lines.sort();
    assert_eq!(lines, {
        let mut expected = vec![
            format!("{} {main} refs/heads/main", s.base),
            format!("{ZERO_ID} {topic} refs/heads/topic"),
        ];
        expected.sort();
        expected
    });

    let agent = s.agent_edits_freeze("Agent lease");
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with("remote: error: refs/heads/main: [agent_edit_protected]");
    assert!(pushed.has_line_starting("remote: site hook ran"));
    assert_eq!(
        std::fs::read_to_string(&seen_path).unwrap(),
        format!("{main} {agent} refs/heads/main\n")
    );

    // Exit 1: a clean push is rejected by the site's hook.
    std::fs::write(hooks.join("pre-receive.guard-chained"), chained(1)).unwrap();
    s.git(&["reset", "-q", "--hard", &main]);
    let clean = s.human_change("README.md", "Clean");
    let pushed = s.push(&["origin", "main"]);
    assert!(!pushed.ok, "{}", pushed.stderr);
    assert!(pushed.has_line_starting("remote: site hook ran"));
    assert!(pushed.stderr.contains("(pre-receive hook declined)"));
    assert_eq!(
        std::fs::read_to_string(&seen_path).unwrap(),
        format!("{main} {clean} refs/heads/main\n")
    );
    assert_eq!(s.server_ref("refs/heads/main"), Some(main));
}

fn set_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

// 8. install.sh: idempotent, uninstall restores, GitLab and Gitea layouts, core.hooksPath.

#[test]
fn install_twice_then_uninstall_restores_the_original_hook() {
    let (_tmp, bare) = bare_repo();
    let hooks = bare.join("hooks");
    let hook = hooks.join("pre-receive");
    // Odd bytes on purpose: no trailing newline, a tab, a non-UTF-8 byte.
    let original: &[u8] = b"#!/bin/sh\n# site policy\t\xe9\nexit 0";
    std::fs::write(&hook, original).unwrap();
    set_executable(&hook);
    let target = bare.to_str().unwrap();

    install(&["--server", target]);
    install(&["--server", target]);
    assert_eq!(
        dir_names(&hooks),
        vec!["pre-receive", "pre-receive.guard-chained"]
    );
    let shim = std::fs::read_to_string(&hook).unwrap();
    assert!(
        shim.contains(GUARD),
        "the shim runs the given guard:\n{shim}"
    );
    assert_eq!(mode(&hook) & 0o111, 0o111, "the shim is executable");
    assert_eq!(
        std::fs::read(hooks.join("pre-receive.guard-chained")).unwrap(),
        original
    );

    install(&["--server", target, "--uninstall"]);
    assert_eq!(dir_names(&hooks), vec!["pre-receive"]);
    assert_eq!(std::fs::read(&hook).unwrap(), original);
    assert_eq!(mode(&hook), 0o755);
    // Uninstalling again changes nothing.
    install(&["--server", target, "--uninstall"]);
    assert_eq!(std::fs::read(&hook).unwrap(), original);

    // Without a hook before, uninstall leaves none.
    let (_tmp2, bare2) = bare_repo();
    install(&["--server", bare2.to_str().unwrap()]);
    assert_eq!(dir_names(&bare2.join("hooks")), vec!["pre-receive"]);
    install(&["--server", bare2.to_str().unwrap(), "--uninstall"]);
    assert!(dir_names(&bare2.join("hooks")).is_empty());
}

#[test]
fn install_refuses_a_clone_for_server_and_bad_guard() {
    let (tmp, bare) = bare_repo();
    let clone = tmp.path("clone");
    git_ok(
        tmp.root(),
        tmp.root(),
        &["clone", "-q", &file_url(&bare), "clone"],
    );
    let out = run_install(&["--server", clone.to_str().unwrap()], true);
    assert_refused(
        &out,
        &format!(
            "error: {} is not a bare repository (use --hooks for a clone)",
            clone.display()
        ),
    );
    assert!(!clone.join(".git/hooks/pre-receive").exists());
    let missing = tmp.path("no-such-guard");
    let out = run_install(
        &[
            "--server",
            bare.to_str().unwrap(),
            "--guard",
            missing.to_str().unwrap(),
        ],
        false,
    );
    assert_refused(
        &out,
        &format!("error: {} is not an executable guard", missing.display()),
    );
    assert!(!bare.join("hooks/pre-receive").exists());
}

/// install.sh refused with exit 2 and exactly `line` on stderr.
#[track_caller]
fn assert_refused(out: &Output, line: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().collect::<Vec<_>>(), vec![line]);
}

#[test]
fn install_for_gitlab_and_gitea_layouts() {
    let (_tmp, bare) = bare_repo();
    install(&["--server", bare.to_str().unwrap(), "--gitlab"]);
    let gitlab = bare.join("custom_hooks/pre-receive.d/merge-guard");
    assert!(gitlab.is_file());
    assert_eq!(mode(&gitlab) & 0o111, 0o111);
    assert!(!bare.join("hooks/pre-receive").exists());
    install(&["--server", bare.to_str().unwrap(), "--gitlab"]);
    assert_eq!(
        dir_names(&bare.join("custom_hooks/pre-receive.d")),
        vec!["merge-guard"]
    );
    install(&[
        "--server",
        bare.to_str().unwrap(),
        "--gitlab",
        "--uninstall",
    ]);
    assert!(!gitlab.exists());

    // Gitea runs every script in hooks/pre-receive.d from its own hooks/pre-receive; a
    // dispatcher like Gitea's shows the installed script judges real pushes.
    let dispatcher = concat!(
        "#!/bin/sh\n",
        "data=$(cat)\n",
        "for h in hooks/pre-receive.d/*; do\n",
        "  [ -x \"$h\" ] || continue\n",
        "  printf '%s\\n' \"$data\" | \"$h\" || exit 1\n",
        "done\n",
    );
    let s = Server::with_ledger(&ledger(AGENTS, ""), |bare| {
        std::fs::write(bare.join("hooks/pre-receive"), dispatcher).unwrap();
        set_executable(&bare.join("hooks/pre-receive"));
    });
    // `with_ledger` installed the plain hook (chaining the dispatcher): undo that, then
    // install for Gitea.
    install(&["--server", s.bare.to_str().unwrap(), "--uninstall"]);
    assert_eq!(
        std::fs::read_to_string(s.bare.join("hooks/pre-receive")).unwrap(),
        dispatcher
    );
    install(&["--server", s.bare.to_str().unwrap(), "--gitea"]);
    let gitea = s.bare.join("hooks/pre-receive.d/merge-guard");
    assert!(gitea.is_file());
    assert_eq!(
        std::fs::read_to_string(s.bare.join("hooks/pre-receive")).unwrap(),
        dispatcher,
        "the forge's own hook is left alone"
    );
    s.agent_edits_freeze("Agent lease");
    s.push(&["origin", "main"])
        .assert_rejected_with("remote: error: refs/heads/main: [agent_edit_protected]");
    s.git(&["reset", "-q", "--hard", &s.base]);
    let clean = s.human_change("README.md", "Clean");
    s.push(&["origin", "main"]).assert_accepted();
    assert_eq!(s.server_ref("refs/heads/main"), Some(clean));
}

#[test]
fn install_quotes_an_unusual_guard_path_and_a_missing_guard_fails_closed() {
    let (tmp, bare) = bare_repo();
    // Characters that mean something to sed's replacement or to a single-quoted string.
    let dir = tmp.path("it's a #1 & \\only");
    std::fs::create_dir_all(&dir).unwrap();
    let guard = dir.join("guard");
    // A link, not a copy: executing a just-written file races with other tests' forks
    // (ETXTBSY).
    std::os::unix::fs::symlink(GUARD, &guard).unwrap();
    let out = run_install(
        &[
            "--server",
            bare.to_str().unwrap(),
            "--guard",
            guard.to_str().unwrap(),
        ],
        false,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let hook = bare.join("hooks/pre-receive");
    let mut cmd = hermetic(Command::new(&hook), tmp.root());
    cmd.env("GIT_DIR", &bare);
    // Empty input: guard runs and accepts; a broken shim would fail.
    let (code, stderr) = run_with_stdin(cmd, b"");
    assert_eq!(code, 0, "{stderr}");
    let mut cmd = hermetic(Command::new(&hook), tmp.root());
    cmd.env("GIT_DIR", &bare);
    let (code, stderr) = run_with_stdin(cmd, b"garbage\n");
    assert_eq!(code, 2, "guard itself judged the input: {stderr}");

    // The binary the shim names is gone: every push is rejected, and the shell says which
    // program it could not run (127: command not found).
    std::fs::remove_file(&guard).unwrap();
    let mut cmd = hermetic(Command::new(&hook), tmp.root());
    cmd.env("GIT_DIR", &bare);
    let (code, stderr) = run_with_stdin(
        cmd,
        format!("{ZERO_ID} {UNKNOWN_ID} refs/heads/main\n").as_bytes(),
    );
    assert_eq!(code, 127, "{stderr}");
    assert!(stderr.contains(guard.to_str().unwrap()), "{stderr}");
}

#[test]
fn a_sha256_repository_is_judged_as_a_sha1_one_is() {
    // A forge that hosts SHA-256 repositories keeps the gate on: `install.sh --server` on one,
    // a human's push lands, an agent's edit of a fixture is refused, and `guard check` in a
    // clone names the agent's commit by its 64-digit id.
    let s = Server::sha256(&ledger(AGENTS, ""));
    assert_eq!(s.bare_git(&["rev-parse", "--show-object-format"]), "sha256");
    assert_eq!(s.base.len(), 64, "{}", s.base);

    s.lock_fixture("tests/fixtures/golden.csv", "a,b\n1,2\n");
    let human = s.commit("Add a golden file\n\nFixture-Lock: human\n");
    s.push(&["origin", "main"]).assert_accepted();
    assert_eq!(s.server_ref("refs/heads/main"), Some(human.clone()));

    write_in(&s.work, "tests/fixtures/golden.csv", "a,b\n1,3\n");
    let agent = s.agent_commit("Regenerate the golden file\n");
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with("remote: error: refs/heads/main: [agent_edit_protected]");
    assert!(
        pushed.stderr.contains(&s.short(&agent)),
        "the agent's commit is named:\n{}",
        pushed.stderr
    );
    assert_eq!(s.server_ref("refs/heads/main"), Some(human.clone()));

    let checked = hermetic(Command::new(GUARD), s.home())
        .args(["check", &format!("{human}..HEAD"), "--format", "json"])
        .current_dir(&s.work)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&checked.stdout);
    assert_eq!(checked.status.code(), Some(1), "{stdout}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let findings = report["findings"].as_array().unwrap();
    assert!(
        findings
            .iter()
            .any(|f| f["code"] == "agent_edit_protected" && f["commit"] == s.short(&agent)),
        "{report:#}"
    );
}

// The server's own object checks (receive.fsckObjects).

#[test]
fn install_turns_on_fsck_and_the_hook_warns_when_it_is_off() {
    let s = Server::new("");
    assert_eq!(s.bare_git(&["config", "receive.fsckObjects"]), "true");
    let fsck_warnings = |p: &Pushed| {
        p.lines()
            .iter()
            .filter(|l| l.starts_with("remote: warning:") && l.contains("fsckObjects"))
            .count()
    };
    s.git(&["checkout", "-q", "-b", "a"]);
    s.human_change("docs/a.md", "A");
    let pushed = s.push(&["origin", "main", "a"]);
    pushed.assert_accepted();
    assert_eq!(fsck_warnings(&pushed), 0, "{}", pushed.stderr);

    // Off: one warning per push, however many refs it updates.
    s.config("receive.fsckObjects", "false");
    s.git(&["checkout", "-q", "-b", "b"]);
    s.human_change("docs/b.md", "B");
    let pushed = s.push(&["origin", "a", "b", "b:refs/heads/c"]);
    pushed.assert_accepted();
    assert_eq!(fsck_warnings(&pushed), 1, "{}", pushed.stderr);

    // transfer.fsckObjects counts when receive.fsckObjects is unset.
    s.bare_git(&["config", "--unset", "receive.fsckObjects"]);
    s.config("transfer.fsckObjects", "true");
    s.human_change("docs/b.md", "B again");
    let pushed = s.push(&["origin", "b"]);
    pushed.assert_accepted();
    assert_eq!(fsck_warnings(&pushed), 0, "{}", pushed.stderr);
}

#[test]
fn install_keeps_an_explicit_fsck_setting() {
    let (tmp, bare) = bare_repo();
    git_ok(
        tmp.root(),
        &bare,
        &["config", "receive.fsckObjects", "false"],
    );
    let out = install(&["--server", bare.to_str().unwrap()]);
    assert_eq!(
        git_ok(tmp.root(), &bare, &["config", "receive.fsckObjects"]),
        "false"
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("receive.fsckObjects"),
        "install says so: {said}"
    );
}

#[test]
fn hooks_use_the_installed_guard_while_it_is_newer_than_the_sources() {
    // `./install.sh` then `./install.sh --server REPO`: the second built guard again (a
    // minute of a release build for nothing). Without cargo on PATH a build fails, so an
    // install that succeeds did not build.
    let (tmp, bare) = bare_repo();
    let prefix = tmp.path("prefix");
    std::fs::create_dir_all(prefix.join("bin")).unwrap();
    std::fs::copy(GUARD, prefix.join("bin/guard")).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("install.sh");
    let install = |installed_age: Option<std::time::SystemTime>| {
        if let Some(t) = installed_age {
            let f = std::fs::File::options()
                .write(true)
                .open(prefix.join("bin/guard"))
                .unwrap();
            f.set_modified(t).unwrap();
        }
        hermetic(Command::new("bash"), tmp.root())
            .arg(&script)
            .args(["--server", bare.to_str().unwrap(), "--prefix"])
            .arg(&prefix)
            .env("PATH", "/usr/bin:/bin")
            .output()
            .unwrap()
    };
    let out = install(Some(
        std::time::SystemTime::now() + std::time::Duration::from_secs(3600),
    ));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("using "), "{stderr}");
    let hook = std::fs::read_to_string(bare.join("hooks/pre-receive")).unwrap();
    assert!(
        hook.contains(prefix.join("bin/guard").to_str().unwrap()),
        "{hook}"
    );

    // Another program installed as guard is not taken for it.
    std::fs::write(
        prefix.join("bin/guard"),
        "#!/bin/sh\necho guard 9.9.9\nexit 0\n",
    )
    .unwrap();
    let out = install(Some(
        std::time::SystemTime::now() + std::time::Duration::from_secs(3600),
    ));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("cargo not found"), "{stderr}");
    std::fs::copy(GUARD, prefix.join("bin/guard")).unwrap();

    // Older than the sources: it is built again (here: cargo is not on PATH, so it says so).
    let out = install(Some(
        std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(86_400),
    ));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("cargo not found"), "{stderr}");
}

#[test]
fn install_sets_the_audit_log_unless_one_is_set_or_it_is_told_not_to() {
    let (tmp, bare) = bare_repo();
    let out = install(&["--server", bare.to_str().unwrap()]);
    let log = git_ok(tmp.root(), &bare, &["config", "guard.auditLog"]);
    let git_dir = std::fs::canonicalize(&bare).unwrap();
    assert_eq!(log, format!("{}/guard-audit.log", git_dir.display()));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("set guard.auditLog = "), "{said}");

    // One the admin set is kept.
    let (tmp, bare) = bare_repo();
    git_ok(
        tmp.root(),
        &bare,
        &["config", "guard.auditLog", "/var/log/guard.log"],
    );
    install(&["--server", bare.to_str().unwrap()]);
    assert_eq!(
        git_ok(tmp.root(), &bare, &["config", "guard.auditLog"]),
        "/var/log/guard.log"
    );

    // --no-audit-log: unset, and install says what that costs.
    let (tmp, bare) = bare_repo();
    let out = install(&["--server", bare.to_str().unwrap(), "--no-audit-log"]);
    let unset = std::process::Command::new("git")
        .args(["config", "guard.auditLog"])
        .current_dir(&bare)
        .output()
        .unwrap();
    assert!(!unset.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(
            "left guard.auditLog unset (--no-audit-log): deleting a protected ref is refused"
        ),
        "{said}"
    );
    drop(tmp);
}
