//! The server harness of the hook tests: a bare repository set up by `install.sh --server`,
//! a working clone, real pushes, and the helpers the `hooks_*` modules share. Every check is
//! made from the pusher's side (the push's exit status, git's `remote:` lines, the server's
//! refs afterwards); expected values come from git, not from guard.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use super::{Project, hermetic};

pub(crate) const GUARD: &str = env!("CARGO_BIN_EXE_guard");
pub(crate) const AGENT_NAME: &str = "Cursor Agent";
pub(crate) const AGENT_EMAIL: &str = "cursoragent@cursor.com";
/// An id that no test repository holds, as long as the test repositories' ids.
pub(crate) const UNKNOWN_ID: TestId = TestId("0123456789abcdef");
/// The zero id git writes for a ref that is created or deleted.
pub(crate) const ZERO_ID: TestId = TestId("0");

/// An id of the test repositories' object format: `pattern` repeated to 40 hex digits, or to
/// 64 when the tests make SHA-256 repositories (CI runs the hook tests with
/// `GIT_DEFAULT_HASH=sha256`, which `git init` follows).
pub(crate) struct TestId(&'static str);

impl std::fmt::Display for TestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let hex: String = self.0.chars().cycle().take(hex_len()).collect();
        f.write_str(&hex)
    }
}

/// How many hex digits the test repositories' ids have.
pub(crate) fn hex_len() -> usize {
    match std::env::var("GIT_DEFAULT_HASH").as_deref() {
        Ok("sha256") => 64,
        _ => 40,
    }
}

/// The `[agents]` table of the test ledger (without its header).
pub(crate) const AGENTS: &str = "emails = ['cursoragent@cursor.com']";

/// A small ledger: no property tests required (no test runs here), an agent e-mail,
/// `agents` as the body of `[agents]`, then `extra` tables.
pub(crate) fn ledger(agents: &str, extra: &str) -> String {
    format!(
        "version = 1\n\n[properties]\nrequired = false\n\n[fixtures]\nlockfile = \"qa/fixtures.lock.json\"\npaths = [\"tests/fixtures/\"]\n\n[freeze]\nfile = \"qa/freeze.toml\"\n\n[agents]\n{agents}\n\n{extra}\n"
    )
}

pub(crate) const FREEZE: &str = "version = 1\nmax_active_leases = 2\n";
pub(crate) const LOCKFILE: &str = "{\"files\": {}}\n";

/// The commit that brings the policy files into an empty server repository: judged by the
/// embedded policy, so it carries every human trailer.
pub(crate) const BOOTSTRAP_MESSAGE: &str =
    "Add the merge ledger\n\nLedger-Change: human\nFreeze-Lease: human\nFixture-Lock: human\n";

/// The outcome of a `git push`, as the pusher sees it.
#[derive(Debug)]
pub(crate) struct Pushed {
    pub(crate) ok: bool,
    pub(crate) stderr: String,
}

impl Pushed {
    pub(crate) fn from(out: Output) -> Pushed {
        Pushed {
            ok: out.status.success(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// stderr lines without git's trailing padding.
    pub(crate) fn lines(&self) -> Vec<&str> {
        self.stderr.lines().map(str::trim_end).collect()
    }

    pub(crate) fn has_line_starting(&self, prefix: &str) -> bool {
        self.lines().iter().any(|l| l.starts_with(prefix))
    }

    #[track_caller]
    pub(crate) fn assert_accepted(&self) {
        assert!(self.ok, "push was refused:\n{}", self.stderr);
        assert!(
            !self.has_line_starting("remote: error:"),
            "accepted push with remote errors:\n{}",
            self.stderr
        );
    }

    /// Rejected by the server's pre-receive hook, with an error line starting `expected`.
    #[track_caller]
    pub(crate) fn assert_rejected_with(&self, expected: &str) {
        self.assert_refused_with(expected);
        assert!(
            self.stderr.contains("(pre-receive hook declined)"),
            "not refused by pre-receive:\n{}",
            self.stderr
        );
    }

    /// Refused by the pusher's own pre-push hook, with an error line starting `expected`,
    /// before anything reached the server.
    #[track_caller]
    pub(crate) fn assert_refused_locally_with(&self, expected: &str) {
        self.assert_refused_with(expected);
        assert!(
            !self.has_line_starting("remote:"),
            "refused before reaching the server:\n{}",
            self.stderr
        );
    }

    #[track_caller]
    fn assert_refused_with(&self, expected: &str) {
        assert!(!self.ok, "push was accepted:\n{}", self.stderr);
        assert!(
            self.has_line_starting(expected),
            "no line starting {expected:?}:\n{}",
            self.stderr
        );
    }
}

/// A temp dir holding a bare repository with guard's pre-receive hook installed by
/// `install.sh`, and a working clone of it (`work`) whose policy commit is on the server.
pub(crate) struct Server {
    pub(crate) tmp: Project,
    pub(crate) bare: PathBuf,
    pub(crate) work: PathBuf,
    /// The bootstrap commit (the server's first `main`).
    pub(crate) base: String,
}

impl Server {
    /// A server whose ledger has the test agents and `extra` tables.
    pub(crate) fn new(extra: &str) -> Server {
        Server::with_ledger(&ledger(AGENTS, extra), |_| {})
    }

    /// A server with `ledger`; `before_install` runs on the bare repository before
    /// `install.sh` does.
    pub(crate) fn with_ledger(ledger: &str, before_install: impl FnOnce(&Path)) -> Server {
        Server::build(ledger, bare_repo(), before_install)
    }

    /// A server whose repository has SHA-256 object ids, whatever `GIT_DEFAULT_HASH` says.
    pub(crate) fn sha256(ledger: &str) -> Server {
        Server::build(ledger, bare_repo_in(&["--object-format=sha256"]), |_| {})
    }

    fn build(
        ledger: &str,
        (tmp, bare): (Project, PathBuf),
        before_install: impl FnOnce(&Path),
    ) -> Server {
        before_install(&bare);
        install(&["--server", bare.to_str().unwrap()]);
        // The default 4 s budget is for a release build on an idle server; debug builds
        // running beside the whole test suite must not be rejected for being slow.
        git_ok(tmp.root(), &bare, &["config", "guard.timeout", "300"]);
        let work = tmp.path("work");
        git_ok(
            tmp.root(),
            tmp.root(),
            &["clone", "-q", &file_url(&bare), "work"],
        );
        let mut server = Server {
            tmp,
            bare,
            work,
            base: String::new(),
        };
        server.write("qa/merge_ledger.toml", ledger);
        server.write("qa/freeze.toml", FREEZE);
        server.write("qa/fixtures.lock.json", LOCKFILE);
        server.write("README.md", "A project guarded by merge-guard.\n");
        server.base = server.commit(BOOTSTRAP_MESSAGE);
        server.push(&["origin", "main"]).assert_accepted();
        assert_eq!(
            server.server_ref("refs/heads/main"),
            Some(server.base.clone())
        );
        server
    }

    pub(crate) fn home(&self) -> &Path {
        self.tmp.root()
    }

    /// `git` in `dir`, hermetic (so without forge variables).
    pub(crate) fn git_cmd(&self, dir: &Path) -> Command {
        git_command(self.home(), dir)
    }

    /// `git ARGS` in `dir`, which must succeed; its stdout, trimmed.
    pub(crate) fn git_in(&self, dir: &Path, args: &[&str]) -> String {
        git_ok(self.home(), dir, args)
    }

    /// `git ARGS` in the working clone.
    pub(crate) fn git(&self, args: &[&str]) -> String {
        self.git_in(&self.work, args)
    }

    /// `git ARGS` in the bare repository.
    pub(crate) fn bare_git(&self, args: &[&str]) -> String {
        self.git_in(&self.bare, args)
    }

    pub(crate) fn config(&self, key: &str, value: &str) {
        self.bare_git(&["config", key, value]);
    }

    /// Points `guard.artifacts` at `ci/{commit}` in the test's temp dir, as a CI job that
    /// publishes each commit's reports would; returns that `ci` directory.
    pub(crate) fn artifacts_per_commit(&self) -> std::path::PathBuf {
        let ci = self.tmp.path("ci");
        self.config("guard.artifacts", &format!("{}/{{commit}}", ci.display()));
        ci
    }

    /// Writes a file in the working clone.
    pub(crate) fn write(&self, rel: &str, contents: &str) {
        write_in(&self.work, rel, contents);
    }

    /// Commits everything in the working clone as the human; the new commit id.
    pub(crate) fn commit(&self, message: &str) -> String {
        commit_in(self, &self.work, None, message)
    }

    /// Commits everything in the working clone with `env` set for git (an identity, a
    /// date); the new commit id.
    pub(crate) fn commit_with(&self, message: &str, env: &[(&str, &str)]) -> String {
        self.git(&["add", "-A"]);
        let out = self
            .git_cmd(&self.work)
            .args(["commit", "-q", "-m", message])
            .envs(env.iter().copied())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "commit failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        self.git(&["rev-parse", "HEAD"])
    }

    /// Writes the fixture `path` with `content`, and a lockfile that holds its digest alone.
    pub(crate) fn lock_fixture(&self, path: &str, content: &str) {
        write_in(&self.work, path, content);
        write_in(
            &self.work,
            "qa/fixtures.lock.json",
            &format!(
                "{{\"files\": {{\"{path}\": \"{}\"}}}}\n",
                super::sha256sum(content.as_bytes())
            ),
        );
    }

    /// Commits everything in the working clone as the agent (author and committer).
    pub(crate) fn agent_commit(&self, message: &str) -> String {
        commit_in(self, &self.work, Some((AGENT_NAME, AGENT_EMAIL)), message)
    }

    /// The agent parks a test: an edit of the protected freeze file.
    pub(crate) fn agent_edits_freeze(&self, message: &str) -> String {
        append_in(&self.work, "qa/freeze.toml", "# parked: flaky on CI\n");
        self.agent_commit(message)
    }

    /// A human change outside the protected paths.
    pub(crate) fn human_change(&self, file: &str, message: &str) -> String {
        append_in(&self.work, file, "more text\n");
        self.commit(message)
    }

    /// `git push ARGS` from the working clone.
    pub(crate) fn push(&self, args: &[&str]) -> Pushed {
        self.push_from(&self.work, args, &[])
    }

    /// `git push ARGS` from `dir`, with `env` set for git (and so for the hook).
    pub(crate) fn push_from(&self, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Pushed {
        let mut cmd = self.git_cmd(dir);
        cmd.arg("push").args(args).envs(env.iter().copied());
        Pushed::from(cmd.output().unwrap())
    }

    /// The id a ref of the bare repository points at, if it exists.
    pub(crate) fn server_ref(&self, name: &str) -> Option<String> {
        let out = self
            .git_cmd(&self.bare)
            .args(["rev-parse", "-q", "--verify", name])
            .output()
            .unwrap();
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// A second clone of the server.
    pub(crate) fn clone(&self, name: &str) -> PathBuf {
        self.git_in(self.home(), &["clone", "-q", &file_url(&self.bare), name]);
        self.tmp.path(name)
    }

    pub(crate) fn short(&self, id: &str) -> String {
        self.git(&["rev-parse", "--short=7", id])
    }

    /// Runs `guard hook pre-receive` directly on the bare repository with `stdin`.
    pub(crate) fn run_pre_receive(
        &self,
        stdin: &[u8],
        setup: impl FnOnce(&mut Command),
    ) -> (i32, String) {
        let mut cmd = hermetic(Command::new(GUARD), self.home());
        cmd.args(["hook", "pre-receive"])
            .current_dir(self.home())
            .env("GIT_DIR", &self.bare);
        setup(&mut cmd);
        run_with_stdin(cmd, stdin)
    }
}

/// A temp dir with an empty bare repository `bare.git` whose HEAD is `main`.
pub(crate) fn bare_repo() -> (Project, PathBuf) {
    bare_repo_in(&[])
}

/// [`bare_repo`], made with `options` for `git init` too.
pub(crate) fn bare_repo_in(options: &[&str]) -> (Project, PathBuf) {
    let tmp = Project::new();
    let mut args = vec!["init", "-q", "--bare", "-b", "main"];
    args.extend_from_slice(options);
    args.push("bare.git");
    git_ok(tmp.root(), tmp.root(), &args);
    let bare = tmp.path("bare.git");
    (tmp, bare)
}

pub(crate) fn file_url(path: &Path) -> String {
    format!("file://{}", path.display())
}

pub(crate) fn git_command(home: &Path, dir: &Path) -> Command {
    let mut cmd = hermetic(Command::new("git"), home);
    cmd.current_dir(dir);
    cmd
}

#[track_caller]
pub(crate) fn git_ok(home: &Path, dir: &Path, args: &[&str]) -> String {
    let out = git_command(home, dir).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "git {args:?} in {} failed:\n{}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

pub(crate) fn write_in(dir: &Path, rel: &str, contents: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, contents).unwrap();
}

pub(crate) fn append_in(dir: &Path, rel: &str, line: &str) {
    let path = dir.join(rel);
    let mut text = std::fs::read_to_string(&path).unwrap_or_default();
    text.push_str(line);
    write_in(dir, rel, &text);
}

/// Commits everything in `dir` as `who` (default: the hermetic human); the new commit id.
pub(crate) fn commit_in(
    server: &Server,
    dir: &Path,
    who: Option<(&str, &str)>,
    message: &str,
) -> String {
    server.git_in(dir, &["add", "-A"]);
    let mut cmd = server.git_cmd(dir);
    cmd.args(["commit", "-q", "--allow-empty", "-m", message]);
    if let Some((name, email)) = who {
        cmd.env("GIT_AUTHOR_NAME", name)
            .env("GIT_AUTHOR_EMAIL", email)
            .env("GIT_COMMITTER_NAME", name)
            .env("GIT_COMMITTER_EMAIL", email);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "commit failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    server.git_in(dir, &["rev-parse", "HEAD"])
}

/// Runs `install.sh ARGS --guard <the test's guard>`, which must succeed.
#[track_caller]
pub(crate) fn install(args: &[&str]) -> Output {
    let out = run_install(args, true);
    assert!(
        out.status.success(),
        "install.sh {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

pub(crate) fn run_install(args: &[&str], with_guard: bool) -> Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("install.sh");
    let home = tempfile::tempdir().unwrap();
    let mut cmd = hermetic(Command::new("bash"), home.path());
    cmd.arg(script).args(args);
    if with_guard {
        cmd.args(["--guard", GUARD]);
    }
    cmd.output().unwrap()
}

pub(crate) fn run_with_stdin(cmd: Command, stdin: &[u8]) -> (i32, String) {
    let (code, _, stderr) = run_for_output(cmd, stdin);
    (code, stderr)
}

/// `cmd` run with `stdin`: (exit code, stdout, stderr).
pub(crate) fn run_for_output(mut cmd: Command, stdin: &[u8]) -> (i32, String, String) {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A hook that fails before reading its input (a missing guard) closes the pipe early.
    if let Err(e) = child.stdin.take().unwrap().write_all(stdin) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().expect("exited by a signal"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

pub(crate) fn dir_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".sample"))
        .collect();
    names.sort();
    names
}

/// The lockfile line for one golden fixture, hashed by coreutils.
fn golden_lock(contents: &str) -> String {
    format!(
        "{{\"files\": {{\"tests/fixtures/golden.csv\": \"{}\"}}}}\n",
        crate::support::sha256sum(contents.as_bytes())
    )
}

/// A server whose `main` holds a locked golden fixture; its blob id.
pub(crate) fn server_with_golden_fixture() -> (Server, String) {
    let s = Server::new("");
    write_in(&s.work, "tests/fixtures/golden.csv", "a,b\n1,2\n");
    write_in(&s.work, "qa/fixtures.lock.json", &golden_lock("a,b\n1,2\n"));
    s.commit("Add a golden file\n\nFixture-Lock: human\n");
    s.push(&["origin", "main"]).assert_accepted();
    let blob = s.git(&["rev-parse", "main:tests/fixtures/golden.csv"]);
    (s, blob)
}

/// Writes `contents` as a blob into the repository at `dir` (outside any work tree); its id.
pub(crate) fn blob_in(s: &Server, dir: &Path, contents: &str) -> String {
    let file = tempfile::NamedTempFile::new_in(s.home()).unwrap();
    std::fs::write(file.path(), contents).unwrap();
    s.git_in(dir, &["hash-object", "-w", file.path().to_str().unwrap()])
}

/// `git fsck` of the server's repository finds nothing (dangling objects aside), and no
/// quarantine directory of a push is left.
#[track_caller]
pub(crate) fn assert_fsck_clean(s: &Server) {
    let out = s
        .git_cmd(&s.bare)
        .args(["fsck", "--full", "--strict", "--no-dangling"])
        .output()
        .unwrap();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "fsck: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let leftovers: Vec<String> = dir_names(&s.bare.join("objects"))
        .into_iter()
        .filter(|n| n.starts_with("tmp_objdir") || n.starts_with("incoming"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
