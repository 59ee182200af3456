//! The `.pre-commit-hooks.yaml` hook through real pre-commit (`pip install pre-commit`):
//! pre-commit reads git's pre-push lines itself and hands guard `PRE_COMMIT_*` variables,
//! from which `guard hook pre-push` must judge the same push.
//!
//! The consumer's `.pre-commit-config.yaml` points at a local git copy of this repository.
//! `language: rust` makes pre-commit run `cargo install --path .` on its clone of it, a
//! release build of minutes: one ignored test (run by `.ci/run`) does that; the others keep
//! every key of the manifest (id, entry, stages, pass_filenames, always_run) but `language`,
//! which their config sets to `system`, so that `guard` on PATH is the binary under test.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::hermetic;
use crate::support::server::{Server, file_url, git_ok, write_in};

const GUARD: &str = env!("CARGO_BIN_EXE_guard");

/// This repository's pre-commit manifest.
fn manifest() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(".pre-commit-hooks.yaml")
}

/// `python3 -m pre_commit ARGS` in `dir`, hermetic, with its store under `home`.
fn pre_commit(home: &Path, dir: &Path, args: &[&str]) -> std::process::Output {
    hermetic(Command::new("python3"), home)
        .args(["-m", "pre_commit"])
        .args(args)
        .current_dir(dir)
        .env("PRE_COMMIT_HOME", home.join("pre-commit-store"))
        .env_remove("PRE_COMMIT")
        .output()
        .expect("python3 runs")
}

#[track_caller]
fn pre_commit_ok(home: &Path, dir: &Path, args: &[&str]) -> String {
    let out = pre_commit(home, dir, args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("No module named pre_commit"),
        "pre-commit is not installed: `python3 -m pip install pre-commit` (.ci/run does)"
    );
    assert!(
        out.status.success(),
        "pre-commit {args:?} failed:\n{}\n{stderr}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn manifest_passes_pre_commits_validation() {
    let tmp = tempfile::tempdir().unwrap();
    let path = manifest();
    pre_commit_ok(
        tmp.path(),
        tmp.path(),
        &["validate-manifest", path.to_str().unwrap()],
    );
    // The validator can fail: a manifest with an unknown language does.
    let bad = tmp.path().join("bad.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("language: rust"));
    std::fs::write(&bad, text.replace("language: rust", "language: cobol")).unwrap();
    let out = pre_commit(
        tmp.path(),
        tmp.path(),
        &["validate-manifest", bad.to_str().unwrap()],
    );
    assert!(!out.status.success(), "an unknown language validated");
}

/// A git repository in `server`'s temp dir holding this repository's manifest, as pre-commit
/// fetches hook repositories; its commit id.
fn hook_repository(server: &Server) -> (PathBuf, String) {
    let home = server.home();
    let repo = home.join("merge-guard");
    git_ok(home, home, &["init", "-q", "-b", "main", "merge-guard"]);
    std::fs::copy(manifest(), repo.join(".pre-commit-hooks.yaml")).unwrap();
    git_ok(home, &repo, &["add", "-A"]);
    git_ok(
        home,
        &repo,
        &["commit", "-q", "-m", "merge-guard's pre-commit hook"],
    );
    let rev = git_ok(home, &repo, &["rev-parse", "HEAD"]);
    (repo, rev)
}

/// A directory holding only `guard` (the binary under test), for PATH.
fn guard_on_path(home: &Path) -> String {
    let bin = home.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(GUARD, bin.join("guard")).unwrap();
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// The working clone with pre-commit's pre-push hook installed (`pre-commit install`) for a
/// config that uses the manifest's `guard` hook; the PATH that finds guard.
fn with_pre_commit(s: &Server) -> String {
    let (repo, rev) = hook_repository(s);
    write_in(
        &s.work,
        ".pre-commit-config.yaml",
        &format!(
            "repos:\n  - repo: {}\n    rev: {rev}\n    hooks:\n      - id: guard\n        language: system\n",
            file_url(&repo)
        ),
    );
    s.commit("Run merge-guard through pre-commit");
    s.push(&["origin", "main"]).assert_accepted();
    pre_commit_ok(s.home(), &s.work, &["install", "--hook-type", "pre-push"]);
    let hook = std::fs::read_to_string(s.work.join(".git/hooks/pre-push")).unwrap();
    assert!(
        hook.contains("pre_commit"),
        "not pre-commit's hook:\n{hook}"
    );
    guard_on_path(s.home())
}

#[test]
fn pre_commit_runs_guard_at_push_and_rejects_an_agent_edit() {
    let s = Server::new("");
    let path = with_pre_commit(&s);
    let base = s.git(&["rev-parse", "HEAD"]);
    let store = s.home().join("pre-commit-store");
    let env = [
        ("PATH", path.as_str()),
        ("PRE_COMMIT_HOME", store.to_str().unwrap()),
    ];

    let agent = s.agent_edits_freeze("Park a flaky test");
    let (ok, seen) = push(&s, &["origin", "main"], &env);
    assert!(!ok, "agent push went through:\n{seen}");
    assert!(
        has_line(
            &seen,
            &format!(
                "error: refs/heads/main: [agent_edit_protected] {}",
                s.short(&agent)
            )
        ),
        "{seen}"
    );
    // pre-commit ran the manifest's hook (its name, then the verdict); the server never saw
    // the push.
    assert!(
        seen.lines()
            .any(|l| l.starts_with("merge-guard.") && l.ends_with("Failed")),
        "{seen}"
    );
    assert!(!has_line(&seen, "remote:"), "{seen}");
    assert_eq!(s.server_ref("refs/heads/main"), Some(base.clone()));

    s.git(&["reset", "-q", "--hard", &base]);
    let clean = s.human_change("README.md", "Clean");
    let (ok, seen) = push(&s, &["origin", "main"], &env);
    assert!(ok, "clean push refused:\n{seen}");
    assert!(
        seen.lines()
            .any(|l| l.starts_with("merge-guard.") && l.ends_with("Passed")),
        "the hook did not run:\n{seen}"
    );
    assert_eq!(s.server_ref("refs/heads/main"), Some(clean));
}

#[test]
fn pre_commit_judges_a_whole_history_new_to_the_remote() {
    let s = Server::new("");
    let path = with_pre_commit(&s);
    let store = s.home().join("pre-commit-store");
    let env = [
        ("PATH", path.as_str()),
        ("PRE_COMMIT_HOME", store.to_str().unwrap()),
    ];
    // An empty remote without a hook: every commit of main, root included, is new to it, and
    // pre-commit passes no range, only the local ref.
    let home = s.home();
    git_ok(home, home, &["init", "-q", "--bare", "mirror.git"]);
    let mirror = file_url(&home.join("mirror.git"));
    s.git(&["remote", "add", "mirror", &mirror]);

    let agent = s.agent_edits_freeze("Park a flaky test");
    let (ok, seen) = push(&s, &["mirror", "main"], &env);
    assert!(!ok, "agent push went through:\n{seen}");
    assert!(
        has_line(
            &seen,
            &format!(
                "error: refs/heads/main: [agent_edit_protected] {}",
                s.short(&agent)
            )
        ),
        "{seen}"
    );

    s.git(&["reset", "-q", "--hard", "HEAD~1"]);
    let (ok, seen) = push(&s, &["mirror", "main"], &env);
    assert!(ok, "clean push refused:\n{seen}");
    assert!(
        seen.lines()
            .any(|l| l.starts_with("merge-guard.") && l.ends_with("Passed")),
        "the hook did not run:\n{seen}"
    );
}

/// `git push ARGS` from the working clone with `env`: whether it went through, and what the
/// pusher saw (pre-commit prints its hooks' output on stdout, git on stderr).
fn push(s: &Server, args: &[&str], env: &[(&str, &str)]) -> (bool, String) {
    let out = s
        .git_cmd(&s.work)
        .arg("push")
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let seen = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), seen)
}

/// Whether `output` has a line starting with `prefix`.
fn has_line(output: &str, prefix: &str) -> bool {
    output.lines().any(|l| l.starts_with(prefix))
}

/// `guard hook pre-push` as pre-commit starts it: no arguments, the variables set, nothing
/// on standard input.
fn as_pre_commit(s: &Server, vars: &[(&str, &str)]) -> (i32, String) {
    let out = hermetic(Command::new(GUARD), s.home())
        .args(["hook", "pre-push"])
        .current_dir(&s.work)
        .envs(vars.iter().copied())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn pre_push_reads_pre_commits_variables() {
    let s = Server::new("[refs]\nprotected = [\"refs/heads/main\"]\n");
    let url = file_url(&s.bare);
    let agent = s.agent_edits_freeze("Park a flaky test");
    let vars = |from: &str, to: &str| {
        [
            ("PRE_COMMIT_REMOTE_NAME", "origin".to_string()),
            ("PRE_COMMIT_REMOTE_URL", url.clone()),
            ("PRE_COMMIT_REMOTE_BRANCH", "refs/heads/main".to_string()),
            ("PRE_COMMIT_LOCAL_BRANCH", "refs/heads/main".to_string()),
            ("PRE_COMMIT_FROM_REF", from.to_string()),
            ("PRE_COMMIT_TO_REF", to.to_string()),
        ]
    };
    let run = |vars: &[(&str, String)]| {
        let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
        as_pre_commit(&s, &vars)
    };

    let (code, stderr) = run(&vars(&s.base, &agent));
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.lines().any(|l| l.starts_with(&format!(
            "error: refs/heads/main: [agent_edit_protected] {}",
            s.short(&agent)
        ))),
        "{stderr}"
    );
    // The same range to an unprotected ref passes.
    let mut feature = vars(&s.base, &agent);
    feature[2].1 = "refs/heads/feature".into();
    let (code, stderr) = run(&feature);
    assert_eq!(code, 0, "{stderr}");
    // The range before the agent's commit passes.
    let (code, stderr) = run(&vars(&s.base, &s.base));
    assert_eq!(code, 0, "{stderr}");

    // Without the ref, or without anything, guard cannot judge: exit 2, never a pass.
    let (code, stderr) = run(&vars(&s.base, &agent)[..2]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("no remote given"), "{stderr}");
    let mut no_branch = vars(&s.base, &agent).to_vec();
    no_branch.remove(2);
    let (code, stderr) = run(&no_branch);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.starts_with("error: guard: pre-commit did not say which ref is pushed (PRE_COMMIT_REMOTE_BRANCH is not set)"),
        "{stderr}"
    );
}

/// A git repository holding what `cargo install --path` needs of this working tree (the
/// manifest, lockfile, sources, embedded policy files) and the hook manifest; its commit.
fn source_copy(server: &Server) -> (PathBuf, String) {
    let home = server.home();
    let copy = home.join("merge-guard-src");
    git_ok(home, home, &["init", "-q", "-b", "main", "merge-guard-src"]);
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
            "--",
        ])
        .args([
            "Cargo.toml",
            "Cargo.lock",
            ".pre-commit-hooks.yaml",
            "src",
            "policy",
        ])
        .current_dir(here)
        .output()
        .unwrap();
    assert!(out.status.success());
    for rel in out.stdout.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        let rel = std::str::from_utf8(rel).unwrap();
        let (from, to) = (here.join(rel), copy.join(rel));
        if from.is_file() {
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(from, to).unwrap();
        }
    }
    git_ok(home, &copy, &["add", "-A"]);
    git_ok(home, &copy, &["commit", "-q", "-m", "merge-guard"]);
    let rev = git_ok(home, &copy, &["rev-parse", "HEAD"]);
    (copy, rev)
}

#[test]
#[ignore = "pre-commit builds guard with cargo install (a release build, minutes); .ci/run runs it"]
fn pre_commit_builds_guard_with_language_rust_and_rejects_an_agent_edit() {
    let s = Server::new("");
    let (copy, rev) = source_copy(&s);
    write_in(
        &s.work,
        ".pre-commit-config.yaml",
        &format!(
            "repos:\n  - repo: {}\n    rev: {rev}\n    hooks:\n      - id: guard\n",
            file_url(&copy)
        ),
    );
    s.commit("Run merge-guard through pre-commit");
    s.push(&["origin", "main"]).assert_accepted();
    pre_commit_ok(s.home(), &s.work, &["install", "--hook-type", "pre-push"]);

    // cargo and rustup as this user has them (the tests' HOME is a temp dir), building into
    // the static test's target directory with its flags, so that only guard itself compiles
    // (from a copy of the same sources: either build's binary serves the other test).
    let real_home = PathBuf::from(std::env::var("HOME").expect("HOME is set"));
    let cargo_home = std::env::var("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|_| real_home.join(".cargo"));
    let rustup_home = std::env::var("RUSTUP_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|_| real_home.join(".rustup"));
    let target_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/static");
    let store = s.home().join("pre-commit-store");
    let path = format!(
        "{}:{}",
        cargo_home.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let env = [
        ("PATH", path.as_str()),
        ("PRE_COMMIT_HOME", store.to_str().unwrap()),
        ("CARGO_HOME", cargo_home.to_str().unwrap()),
        ("RUSTUP_HOME", rustup_home.to_str().unwrap()),
        ("CARGO_TARGET_DIR", target_dir.to_str().unwrap()),
        ("CARGO_BUILD_TARGET", "x86_64-unknown-linux-gnu"),
        ("RUSTFLAGS", "-C target-feature=+crt-static"),
    ];

    let base = s.git(&["rev-parse", "HEAD"]);
    let agent = s.agent_edits_freeze("Park a flaky test");
    let (ok, seen) = push(&s, &["origin", "main"], &env);
    assert!(!ok, "agent push went through:\n{seen}");
    assert!(
        has_line(
            &seen,
            &format!(
                "error: refs/heads/main: [agent_edit_protected] {}",
                s.short(&agent)
            )
        ),
        "{seen}"
    );
    assert!(!has_line(&seen, "remote:"), "{seen}");
    // The guard that ran is the one pre-commit built in its store.
    let built: Vec<_> = std::fs::read_dir(&store)
        .unwrap()
        .filter_map(|e| {
            let bin = e.ok()?.path().join("rustenv-system/bin/guard");
            bin.is_file().then_some(bin)
        })
        .collect();
    assert_eq!(built.len(), 1, "pre-commit's store: {seen}");

    s.git(&["reset", "-q", "--hard", &base]);
    let clean = s.human_change("README.md", "Clean");
    let (ok, seen) = push(&s, &["origin", "main"], &env);
    assert!(ok, "clean push refused:\n{seen}");
    assert_eq!(s.server_ref("refs/heads/main"), Some(clean));
}
