//! The git hooks end to end: a bare repository set up by `install.sh --server`, working
//! clones, and real pushes over `file://` and `git daemon`. Every check is made from the
//! pusher's side (the push's exit status, git's `remote:` lines, the server's refs
//! afterwards); expected values come from git, not from guard.

use std::io::Write as _;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use crate::support::{Project, fixture_corpus, hermetic, sha256sum, sha256sum_lockfile};

const GUARD: &str = env!("CARGO_BIN_EXE_guard");
const AGENT_NAME: &str = "Cursor Agent";
const AGENT_EMAIL: &str = "cursoragent@cursor.com";
/// A 40-hex id that no test repository holds.
const UNKNOWN_ID: &str = "0123456789abcdef0123456789abcdef01234567";
const ZERO_ID: &str = "0000000000000000000000000000000000000000";

/// The `[agents]` table of the test ledger (without its header).
pub(crate) const AGENTS: &str = "emails = ['cursoragent@cursor.com']";

/// A small ledger: no property tests required (no test runs here), an agent e-mail,
/// `agents` as the body of `[agents]`, then `extra` tables.
pub(crate) fn ledger(agents: &str, extra: &str) -> String {
    format!(
        "version = 1\n\n[properties]\nrequired = false\n\n[fixtures]\nlockfile = \"qa/fixtures.lock.json\"\npaths = [\"tests/fixtures/\"]\n\n[freeze]\nfile = \"qa/freeze.toml\"\n\n[agents]\n{agents}\n\n{extra}\n"
    )
}

const FREEZE: &str = "version = 1\nmax_active_leases = 2\n";
const LOCKFILE: &str = "{\"files\": {}}\n";

/// The commit that brings the policy files into an empty server repository: judged by the
/// embedded policy, so it carries every human trailer.
const BOOTSTRAP_MESSAGE: &str =
    "Add the merge ledger\n\nLedger-Change: human\nFreeze-Lease: human\nFixture-Lock: human\n";

/// The outcome of a `git push`, as the pusher sees it.
#[derive(Debug)]
pub(crate) struct Pushed {
    pub(crate) ok: bool,
    pub(crate) stderr: String,
}

impl Pushed {
    fn from(out: Output) -> Pushed {
        Pushed {
            ok: out.status.success(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// stderr lines without git's trailing padding.
    fn lines(&self) -> Vec<&str> {
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
        assert!(!self.ok, "push was accepted:\n{}", self.stderr);
        assert!(
            self.has_line_starting(expected),
            "no line starting {expected:?}:\n{}",
            self.stderr
        );
        assert!(
            self.stderr.contains("(pre-receive hook declined)"),
            "not refused by pre-receive:\n{}",
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
        let (tmp, bare) = bare_repo();
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
    fn git_in(&self, dir: &Path, args: &[&str]) -> String {
        git_ok(self.home(), dir, args)
    }

    /// `git ARGS` in the working clone.
    pub(crate) fn git(&self, args: &[&str]) -> String {
        self.git_in(&self.work, args)
    }

    /// `git ARGS` in the bare repository.
    fn bare_git(&self, args: &[&str]) -> String {
        self.git_in(&self.bare, args)
    }

    fn config(&self, key: &str, value: &str) {
        self.bare_git(&["config", key, value]);
    }

    /// Writes a file in the working clone.
    fn write(&self, rel: &str, contents: &str) {
        write_in(&self.work, rel, contents);
    }

    /// Commits everything in the working clone as the human; the new commit id.
    pub(crate) fn commit(&self, message: &str) -> String {
        commit_in(self, &self.work, None, message)
    }

    /// Commits everything in the working clone as the agent (author and committer).
    fn agent_commit(&self, message: &str) -> String {
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
    fn clone(&self, name: &str) -> PathBuf {
        self.git_in(self.home(), &["clone", "-q", &file_url(&self.bare), name]);
        self.tmp.path(name)
    }

    pub(crate) fn short(&self, id: &str) -> String {
        self.git(&["rev-parse", "--short=7", id])
    }

    /// Runs `guard hook pre-receive` directly on the bare repository with `stdin`.
    fn run_pre_receive(&self, stdin: &[u8], setup: impl FnOnce(&mut Command)) -> (i32, String) {
        let mut cmd = hermetic(Command::new(GUARD), self.home());
        cmd.args(["hook", "pre-receive"])
            .current_dir(self.home())
            .env("GIT_DIR", &self.bare);
        setup(&mut cmd);
        run_with_stdin(cmd, stdin)
    }
}

/// A temp dir with an empty bare repository `bare.git` whose HEAD is `main`.
fn bare_repo() -> (Project, PathBuf) {
    let tmp = Project::new();
    git_ok(
        tmp.root(),
        tmp.root(),
        &["init", "-q", "--bare", "-b", "main", "bare.git"],
    );
    let bare = tmp.path("bare.git");
    (tmp, bare)
}

pub(crate) fn file_url(path: &Path) -> String {
    format!("file://{}", path.display())
}

fn git_command(home: &Path, dir: &Path) -> Command {
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
fn commit_in(server: &Server, dir: &Path, who: Option<(&str, &str)>, message: &str) -> String {
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
fn install(args: &[&str]) -> Output {
    let out = run_install(args, true);
    assert!(
        out.status.success(),
        "install.sh {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn run_install(args: &[&str], with_guard: bool) -> Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("install.sh");
    let home = tempfile::tempdir().unwrap();
    let mut cmd = hermetic(Command::new("bash"), home.path());
    cmd.arg(script).args(args);
    if with_guard {
        cmd.args(["--guard", GUARD]);
    }
    cmd.output().unwrap()
}

fn run_with_stdin(mut cmd: Command, stdin: &[u8]) -> (i32, String) {
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
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

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
    pushed.assert_rejected_with("remote: error: refs/heads/feature: [ref_deletion]");
    assert!(
        pushed.has_line_starting("remote: hint: "),
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

fn dir_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".sample"))
        .collect();
    names.sort();
    names
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
fn sha256_repository_is_rejected_with_a_clear_message() {
    let tmp = Project::new();
    let home = tmp.root();
    git_ok(
        home,
        home,
        &[
            "init",
            "-q",
            "--bare",
            "--object-format=sha256",
            "-b",
            "main",
            "bare.git",
        ],
    );
    let bare = tmp.path("bare.git");
    install(&["--server", bare.to_str().unwrap()]);
    git_ok(
        home,
        home,
        &["init", "-q", "--object-format=sha256", "-b", "main", "work"],
    );
    let work = tmp.path("work");
    write_in(&work, "README.md", "hello\n");
    git_ok(home, &work, &["add", "-A"]);
    git_ok(home, &work, &["commit", "-q", "-m", "First"]);
    let out = git_command(home, &work)
        .args(["push", bare.to_str().unwrap(), "main"])
        .output()
        .unwrap();
    let pushed = Pushed::from(out);
    pushed.assert_rejected_with("remote: error: ");
    assert!(
        pushed
            .lines()
            .iter()
            .any(|l| l.starts_with("remote: error:") && l.contains("SHA-256")),
        "{}",
        pushed.stderr
    );
    let out = git_command(home, &bare)
        .args(["rev-parse", "-q", "--verify", "refs/heads/main"])
        .output()
        .unwrap();
    assert!(!out.status.success(), "nothing landed");
}

// 9. pre-push in a clone.

#[test]
fn pre_push_refuses_an_agent_push_locally() {
    let s = Server::new("");
    install(&["--hooks", s.work.to_str().unwrap()]);
    assert!(s.work.join(".git/hooks/pre-push").is_file());

    let agent = s.agent_edits_freeze("Park a test");
    let pushed = s.push(&["origin", "main"]);
    assert!(!pushed.ok, "{}", pushed.stderr);
    assert!(
        pushed.has_line_starting(&format!(
            "error: refs/heads/main: [agent_edit_protected] {}",
            s.short(&agent)
        )),
        "{}",
        pushed.stderr
    );
    assert!(
        !pushed.has_line_starting("remote:"),
        "refused before reaching the server:\n{}",
        pushed.stderr
    );
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
        .args(["cat-file", "-e", UNKNOWN_ID])
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

// 10. Concurrent pushes.

#[test]
fn twenty_concurrent_pushes_are_each_judged() {
    let s = Server::new("");
    let clones: Vec<(usize, PathBuf, String)> = (0..20)
        .map(|i| {
            let dir = s.clone(&format!("clone-{i}"));
            s.git_in(&dir, &["checkout", "-q", "-b", &format!("topic-{i}")]);
            let id = if i % 2 == 0 {
                write_in(&dir, &format!("notes/{i}.md"), &format!("note {i}\n"));
                commit_in(&s, &dir, None, &format!("Note {i}"))
            } else {
                append_in(&dir, "qa/freeze.toml", &format!("# parked by agent {i}\n"));
                commit_in(
                    &s,
                    &dir,
                    Some((AGENT_NAME, AGENT_EMAIL)),
                    &format!("Agent lease {i}"),
                )
            };
            (i, dir, id)
        })
        .collect();

    let results: Vec<(usize, String, Pushed)> = std::thread::scope(|scope| {
        let handles: Vec<_> = clones
            .iter()
            .map(|(i, dir, id)| {
                let s = &s;
                scope.spawn(move || {
                    let pushed = s.push_from(dir, &["origin", &format!("topic-{i}")], &[]);
                    (*i, id.clone(), pushed)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });

    for (i, id, pushed) in &results {
        let name = format!("refs/heads/topic-{i}");
        if i % 2 == 0 {
            pushed.assert_accepted();
            assert_eq!(s.server_ref(&name), Some(id.clone()), "topic-{i}");
        } else {
            pushed.assert_rejected_with(&format!(
                "remote: error: {name}: [agent_edit_protected] {}",
                &id[..7]
            ));
            assert_eq!(s.server_ref(&name), None, "topic-{i}");
        }
    }
    let refs = s.bare_git(&["for-each-ref", "--format=%(refname)"]);
    assert_eq!(refs.lines().count(), 11, "main and ten topics:\n{refs}");

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
    // No quarantine directory left behind.
    let leftovers: Vec<String> = dir_names(&s.bare.join("objects"))
        .into_iter()
        .filter(|n| n.starts_with("tmp_objdir") || n.starts_with("incoming"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

// 11. Break-glass.

#[test]
fn break_glass_by_an_allowed_and_a_disallowed_pusher() {
    let s = Server::new("");
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

// 13. Artifacts on the server.

#[test]
fn server_artifacts_are_required_and_scored() {
    let s = Server::new("[artifacts]\nrequired = true\njunit = [\"junit.xml\"]\n");
    let ci = s.tmp.path("ci");
    s.config("guard.artifacts", &format!("{}/{{commit}}", ci.display()));
    let commit = s.human_change("README.md", "Change with CI");
    let dir = ci.join(&commit);

    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with("remote: error: refs/heads/main: [artifacts_missing]");
    assert!(
        pushed.stderr.contains(dir.to_str().unwrap()),
        "names the directory {}:\n{}",
        dir.display(),
        pushed.stderr
    );

    write_in(
        &dir,
        "junit.xml",
        &junit(&[("test_ok", ""), ("test_broken", FAILURE)]),
    );
    s.push(&["origin", "main"])
        .assert_rejected_with("remote: error: refs/heads/main: [test_failures]");
    assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));

    write_in(
        &dir,
        "junit.xml",
        &junit(&[("test_ok", ""), ("test_broken", "")]),
    );
    s.push(&["origin", "main"]).assert_accepted();
    assert_eq!(s.server_ref("refs/heads/main"), Some(commit.clone()));

    // `{tree}`: CI results keyed by tree serve a rebased commit with the same tree.
    let trees = s.tmp.path("ci-trees");
    s.config("guard.artifacts", &format!("{}/{{tree}}", trees.display()));
    s.git(&["checkout", "-q", "-b", "topic"]);
    let topic = s.human_change("docs/topic.md", "Topic");
    let tree = s.git(&["rev-parse", &format!("{topic}^{{tree}}")]);
    write_in(&trees.join(&tree), "junit.xml", &junit(&[("test_ok", "")]));
    s.git(&["commit", "-q", "--amend", "-m", "Topic, reworded"]);
    let reworded = s.git(&["rev-parse", "HEAD"]);
    assert_ne!(reworded, topic);
    s.push(&["origin", "topic"]).assert_accepted();
    assert_eq!(s.server_ref("refs/heads/topic"), Some(reworded));
}

#[test]
fn server_artifacts_are_held_against_the_collected_ids() {
    // CI publishes a report whose failing record was cut out; the list of collected tests,
    // written before the code under test ran, still names it.
    let s = Server::new(
        "[artifacts]\nrequired = true\njunit = [\"junit.xml\"]\ncollected = \"collected.txt\"\n",
    );
    let ci = s.tmp.path("ci");
    s.config("guard.artifacts", &format!("{}/{{commit}}", ci.display()));
    let commit = s.human_change("README.md", "Change with CI");
    let dir = ci.join(&commit);
    write_in(
        &dir,
        "collected.txt",
        "tests/test_app.py::test_ok\ntests/test_app.py::test_broken\n",
    );
    write_in(&dir, "junit.xml", &junit(&[("test_ok", "")]));
    s.push(&["origin", "main"]).assert_rejected_with(
        "remote: error: refs/heads/main: [test_missing_from_report] test tests/test_app.py::test_broken was collected",
    );
    assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));

    write_in(
        &dir,
        "junit.xml",
        &junit(&[("test_ok", ""), ("test_broken", "")]),
    );
    s.push(&["origin", "main"]).assert_accepted();
    assert_eq!(s.server_ref("refs/heads/main"), Some(commit));
}

#[test]
fn a_finding_rejects_with_exit_one_beside_artifacts_that_cannot_be_read() {
    let s = Server::new("[artifacts]\njunit = [\"junit.xml\"]\n");
    let ci = s.tmp.path("ci");
    s.config("guard.artifacts", &format!("{}/{{commit}}", ci.display()));
    let agent = s.agent_edits_freeze("Park a test");
    // CI's report for the commit is cut off: that part cannot be judged.
    write_in(&ci.join(&agent), "junit.xml", "<testsuites>\n<testsuite");

    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with("remote: error: refs/heads/main: [agent_edit_protected]");
    assert!(
        pushed.has_line_starting("remote: error: refs/heads/main: cannot judge: "),
        "{}",
        pushed.stderr
    );
    // The finding decides: rejected by the ledger, not "could not be judged".
    assert!(
        pushed.has_line_starting("remote: error: guard: push rejected by the merge ledger"),
        "{}",
        pushed.stderr
    );

    // The hook's own exit code, on the same update: 1 (a finding), not 2.
    s.push(&["origin", "HEAD:refs/scratch/agent"])
        .assert_accepted();
    let (code, stderr) = s.run_pre_receive(
        format!("{} {agent} refs/heads/main\n", s.base).as_bytes(),
        |_| {},
    );
    assert_eq!(code, 1, "{stderr}");
}

#[test]
fn a_finding_rejects_with_exit_one_beside_a_ref_that_cannot_be_judged() {
    let s = Server::new("");
    let agent = s.agent_edits_freeze("Park a test");
    s.push(&["origin", "HEAD:refs/scratch/agent"])
        .assert_accepted();
    // A tag of a tree is no commit guard can judge; it comes first in the push.
    let tree = s.git(&["rev-parse", "HEAD^{tree}"]);
    let stdin = format!(
        "{ZERO_ID} {tree} refs/tags/tree\n{} {agent} refs/heads/main\n",
        s.base
    );
    let (code, stderr) = s.run_pre_receive(stdin.as_bytes(), |_| {});
    assert_eq!(code, 1, "the finding decides: {stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("error: refs/heads/main: [agent_edit_protected]")),
        "{stderr}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("error: refs/tags/tree: cannot judge: ")
                && l.contains("not a commit")),
        "{stderr}"
    );
    // Alone, the tag cannot be judged: exit 2.
    let (code, stderr) = s.run_pre_receive(
        format!("{ZERO_ID} {tree} refs/tags/tree\n").as_bytes(),
        |_| {},
    );
    assert_eq!(code, 2, "{stderr}");
}

const FAILURE: &str = "<failure message=\"assert 1 == 2\">AssertionError</failure>";

#[test]
fn base_reports_in_guard_artifacts_are_the_baseline() {
    let s = Server::new("");
    let ci = s.tmp.path("ci");
    s.config("guard.artifacts", &format!("{}/{{commit}}", ci.display()));
    // A human adds two tests; CI reports both passing.
    let both = "def test_ok():\n    assert True\n\n\ndef test_kept():\n    assert True\n";
    s.write("tests/test_app.py", both);
    let tests = s.commit("Add tests");
    write_in(
        &ci.join(&tests),
        "junit.xml",
        &junit(&[("test_ok", ""), ("test_kept", "")]),
    );
    s.push(&["origin", "main"]).assert_accepted();

    // The agent deletes one; CI's report of its commit lacks it.
    s.write("tests/test_app.py", "def test_ok():\n    assert True\n");
    let agent = s.agent_commit("Remove a slow test\n\nTest-Removal: human");
    write_in(&ci.join(&agent), "junit.xml", &junit(&[("test_ok", "")]));
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with("remote: error: refs/heads/main: [test_vanished]");
    assert!(
        pushed.stderr.contains("tests.test_app::test_kept")
            && pushed.stderr.contains(&s.short(&agent)),
        "names the test and the agent commit:\n{}",
        pushed.stderr
    );
    assert_eq!(s.server_ref("refs/heads/main"), Some(tests.clone()));

    // A human removes it with the trailer: the same reports land.
    s.git(&["reset", "-q", "--hard", &tests]);
    s.write("tests/test_app.py", "def test_ok():\n    assert True\n");
    let human = s.commit("Remove a slow test\n\nTest-Removal: human");
    write_in(&ci.join(&human), "junit.xml", &junit(&[("test_ok", "")]));
    s.push(&["origin", "main"]).assert_accepted();
    assert_eq!(s.server_ref("refs/heads/main"), Some(human));
}

fn junit(cases: &[(&str, &str)]) -> String {
    let body: String = cases
        .iter()
        .map(|(name, child)| {
            format!("<testcase classname=\"tests.test_app\" name=\"{name}\" time=\"0.01\">{child}</testcase>")
        })
        .collect();
    format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><testsuites><testsuite name=\"pytest\" tests=\"{}\">{body}</testsuite></testsuites>\n",
        cases.len()
    )
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
    let (code, stderr) = s.run_pre_receive(b"", |_| {});
    assert_eq!(code, 0, "empty input: {stderr}");
}

// 15. Server surroundings: GIT_DIR=., no HOME, guard's own timeout.

#[test]
fn hook_works_with_git_dir_dot_and_without_home() {
    let s = Server::new("");
    // Bring commits into the server under an unprotected ref (through the hook).
    let agent = s.agent_edits_freeze("Agent lease");
    s.push(&["origin", "HEAD:refs/scratch/agent"])
        .assert_accepted();
    s.git(&["reset", "-q", "--hard", &s.base]);
    let clean = s.human_change("README.md", "Clean");
    s.push(&["origin", "HEAD:refs/scratch/clean"])
        .assert_accepted();

    let at_bare = |cmd: &mut Command| {
        cmd.current_dir(&s.bare)
            .env("GIT_DIR", ".")
            .env_remove("HOME");
    };
    let (code, stderr) = s.run_pre_receive(
        format!("{} {agent} refs/heads/main\n", s.base).as_bytes(),
        at_bare,
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("error: refs/heads/main: [agent_edit_protected]")),
        "{stderr}"
    );
    let (code, stderr) = s.run_pre_receive(
        format!("{} {clean} refs/heads/main\n", s.base).as_bytes(),
        at_bare,
    );
    assert_eq!(code, 0, "{stderr}");

    // A real push from an environment without HOME.
    let mut cmd = s.git_cmd(&s.work);
    cmd.args(["push", "origin", "main"]).env_remove("HOME");
    Pushed::from(cmd.output().unwrap()).assert_accepted();
    assert_eq!(s.server_ref("refs/heads/main"), Some(clean));
}

#[test]
fn guard_timeout_fails_closed() {
    let s = Server::new("");
    s.config("guard.timeout", "0.000001");
    s.human_change("README.md", "Clean but slow to judge");
    let pushed = s.push(&["origin", "main"]);
    assert!(!pushed.ok, "{}", pushed.stderr);
    assert!(
        pushed
            .lines()
            .iter()
            .any(|l| l.starts_with("remote: error:") && l.contains("guard.timeout")),
        "{}",
        pushed.stderr
    );
    assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));

    // A setting guard cannot read rejects too.
    s.config("guard.timeout", "soon");
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with("remote: error:");
    assert!(pushed.stderr.contains("guard.timeout"), "{}", pushed.stderr);
    assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));
}

#[test]
fn repository_owned_by_another_user() {
    // Only root can hand a repository to another user. CI runs the suite as root; elsewhere
    // this fails rather than passing without having tested anything.
    let uid = Command::new("id").arg("-u").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&uid.stdout).trim(),
        "0",
        "this test needs root (to chown the server repository to another user); run the suite as root as CI does, or leave it out by name: cargo test -- --skip repository_owned_by_another_user"
    );
    let s = Server::new("");
    // 65534 is `nobody` on most systems; a numeric id needs no account.
    let out = Command::new("chown")
        .args(["-R", "65534:65534"])
        .arg(&s.bare)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let owner = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(&s.bare).unwrap());
    assert_eq!(owner, 65534, "the repository now belongs to another user");
    // git itself refuses a repository owned by someone else unless it is a safe.directory
    // (protected config; for a local push only `--receive-pack` can carry it to the server).
    let receive_pack = "--receive-pack=git -c safe.directory=* receive-pack";
    s.agent_edits_freeze("Agent lease");
    s.push(&[receive_pack, "origin", "main"])
        .assert_rejected_with("remote: error: refs/heads/main: [agent_edit_protected]");
    s.git(&["reset", "-q", "--hard", &s.base]);
    let clean = s.human_change("README.md", "Clean");
    s.push(&[receive_pack, "origin", "main"]).assert_accepted();
    assert_eq!(
        s.git_in(
            s.home(),
            &[
                "-c",
                "safe.directory=*",
                "-C",
                s.bare.to_str().unwrap(),
                "rev-parse",
                "refs/heads/main"
            ]
        ),
        clean
    );
}

// 16. git daemon.

/// A running `git daemon`, killed when dropped.
struct Daemon {
    child: Child,
    port: u16,
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Daemon {
    /// Starts `git daemon` serving `root` (pushes allowed) on a free port of 127.0.0.1.
    ///
    /// Any way of picking a port races with other processes: a port found free (here by
    /// binding port 0 and letting it go) may be taken before the daemon binds it. So the
    /// daemon is started on it, and when it cannot bind (it exits, "Address already in
    /// use") another port is tried. It is ready when it logs "Ready to rumble" (`--verbose`),
    /// which it does only once it listens; a successful connect() alone could reach whoever
    /// took the port. The daemon program is run itself, not through `git daemon`: killing
    /// that wrapper would leave the daemon running.
    fn start(home: &Path, root: &Path) -> Daemon {
        let exec_path = git_ok(Path::new("/"), Path::new("/"), &["--exec-path"]);
        let program = Path::new(&exec_path).join("git-daemon");
        assert!(
            program.is_file(),
            "`git daemon` is not installed ({} missing): install it (it ships with git)",
            program.display()
        );
        let log_path = home.join("daemon.log");
        for _ in 0..20 {
            let port = TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            let log = std::fs::File::create(&log_path).unwrap();
            let mut cmd = hermetic(Command::new(&program), home);
            cmd.arg("--verbose")
                .arg("--reuseaddr")
                .arg(format!("--base-path={}", root.display()))
                .arg("--export-all")
                .arg("--enable=receive-pack")
                .arg(format!("--port={port}"))
                .arg("--listen=127.0.0.1")
                .arg(root)
                .current_dir(root)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(log);
            let mut daemon = Daemon {
                child: cmd.spawn().expect("git daemon starts"),
                port,
            };
            // Up to 60 s: a loaded machine may be slow to start it, and a late start is no
            // failure.
            for _ in 0..2400 {
                let logged = std::fs::read_to_string(&log_path).unwrap_or_default();
                if logged.contains("Ready to rumble") {
                    return daemon;
                }
                if let Some(status) = daemon.child.try_wait().unwrap() {
                    let logged = std::fs::read_to_string(&log_path).unwrap_or_default();
                    assert!(
                        logged.contains("Address already in use"),
                        "git daemon exited ({status}): {logged}"
                    );
                    break;
                }
                std::thread::sleep(Duration::from_millis(25));
            }
            if daemon.child.try_wait().unwrap().is_none() {
                panic!(
                    "git daemon did not get ready on port {port}: {}",
                    std::fs::read_to_string(&log_path).unwrap_or_default()
                );
            }
        }
        panic!("git daemon found no free port in 20 tries");
    }
}

#[test]
fn pushes_over_git_daemon() {
    let s = Server::new("");
    let daemon = Daemon::start(s.home(), s.home());
    let port = daemon.port;
    let url = format!("git://127.0.0.1:{port}/bare.git");

    s.agent_edits_freeze("Agent lease over git://");
    s.push(&[&url, "main"])
        .assert_rejected_with("remote: error: refs/heads/main: [agent_edit_protected]");
    assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));

    s.git(&["reset", "-q", "--hard", &s.base]);
    let clean = s.human_change("README.md", "Clean over git://");
    s.push(&[&url, "main"]).assert_accepted();
    assert_eq!(s.server_ref("refs/heads/main"), Some(clean));
    drop(daemon);
}

// Review findings: each test below fails if its rule is removed.

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
fn required_artifacts_without_an_artifact_directory_reject() {
    let s = Server::new("[artifacts]\nrequired = true\n");
    s.human_change("NOTES.md", "Notes");
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with("remote: error: refs/heads/main: [artifacts_missing]");
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
    let pushed = s.push(&["--force", "origin", "main"]);
    assert!(!pushed.ok, "{}", pushed.stderr);
    assert!(
        pushed.has_line_starting("error: refs/heads/main: [protected_rewind]"),
        "{}",
        pushed.stderr
    );
    assert!(
        !pushed.has_line_starting("remote:"),
        "refused before reaching the server: {}",
        pushed.stderr
    );
    assert_eq!(s.server_ref("refs/heads/main"), Some(reviewed));
}

#[test]
fn fixtures_are_hashed_again_after_a_break_glass_push() {
    // The hook trusts the old tip's fixture digests because the old tip passed the gate; a tip
    // that came in by break-glass did not.
    let s = Server::new("");
    write_in(&s.work, "tests/fixtures/golden.csv", "a,b\n1,2\n");
    write_in(
        &s.work,
        "qa/fixtures.lock.json",
        &format!(
            "{{\"files\": {{\"tests/fixtures/golden.csv\": \"{}\"}}}}\n",
            crate::support::sha256sum(b"a,b\n1,2\n")
        ),
    );
    s.commit("Add a golden file\n\nFixture-Lock: human\n");
    s.push(&["origin", "main"]).assert_accepted();

    s.config("receive.advertisePushOptions", "true");
    s.config("guard.bypass", "alice");
    s.config("guard.auditLog", s.tmp.path("audit.log").to_str().unwrap());
    write_in(&s.work, "tests/fixtures/golden.csv", "a,b\n1,3\n");
    s.agent_commit("Regenerate the golden file\n");
    s.push_from(
        &s.work,
        &["-o", "guard.bypass=hotfix", "origin", "main"],
        &[("REMOTE_USER", "alice")],
    )
    .assert_accepted();

    // The next ordinary push brings nothing protected, yet the drift is found again.
    s.human_change("NOTES.md", "Notes");
    s.push(&["origin", "main"])
        .assert_rejected_with("remote: error: refs/heads/main: [fixture_digest]");

    // An audit log that exists but cannot be read cannot vouch that the old tip passed the
    // gate: the fixtures are hashed again all the same.
    let log = s.tmp.path("audit.log");
    std::fs::rename(&log, s.tmp.path("audit.log.kept")).unwrap();
    std::fs::create_dir(&log).unwrap();
    assert!(std::fs::read_to_string(&log).is_err());
    s.push(&["origin", "main"])
        .assert_rejected_with("remote: error: refs/heads/main: [fixture_digest]");
}

#[test]
fn a_push_of_many_fixtures_is_hashed_from_quarantine_on_every_core() {
    // 200 fixtures of about 8 KiB (1.6 MB: hashed on every core, each thread through its own
    // repository handle, which must see the push's quarantined objects), in one push with
    // their lockfile; one was regenerated after the lockfile was written.
    let s = Server::new("");
    let corpus = fixture_corpus("tests/fixtures/many", 200, 8192);
    for (path, bytes) in &corpus {
        let file = s.work.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, bytes).unwrap();
    }
    let rels: Vec<&str> = corpus.iter().map(|(path, _)| path.as_str()).collect();
    write_in(
        &s.work,
        "qa/fixtures.lock.json",
        &sha256sum_lockfile(&s.work, &rels),
    );
    let drifted = "tests/fixtures/many/f_063.bin";
    let new_bytes = vec![b'y'; 5000];
    std::fs::write(s.work.join(drifted), &new_bytes).unwrap();
    s.commit("Add the golden corpus\n\nFixture-Lock: human\n");
    // Over 100 objects arrive as a pack in the quarantine; with a higher unpack limit, git
    // unpacks them there as loose objects.
    for unpack_limit in ["100", "10000"] {
        s.config("receive.unpackLimit", unpack_limit);
        let pushed = s.push(&["origin", "main"]);
        pushed.assert_rejected_with(&format!(
            "remote: error: refs/heads/main: [fixture_digest] {drifted}"
        ));
        assert!(
            pushed.stderr.contains(&sha256sum(&new_bytes)),
            "{}",
            pushed.stderr
        );
        assert_eq!(
            pushed
                .lines()
                .iter()
                .filter(|l| l.contains("[fixture_digest]"))
                .count(),
            1,
            "{}",
            pushed.stderr
        );
        assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));
    }

    // The lockfile made again: the push lands.
    write_in(
        &s.work,
        "qa/fixtures.lock.json",
        &sha256sum_lockfile(&s.work, &rels),
    );
    let fixed = s.commit("Lock the regenerated fixture\n\nFixture-Lock: human\n");
    s.push(&["origin", "main"]).assert_accepted();
    assert_eq!(s.server_ref("refs/heads/main"), Some(fixed));
}

// Issue 10: what a push can change besides commits (replace refs, ref lifecycle, the ledger
// itself), the forge's identities, and the server's own object checks.

/// The lockfile line for one golden fixture, hashed by coreutils.
fn golden_lock(contents: &str) -> String {
    format!(
        "{{\"files\": {{\"tests/fixtures/golden.csv\": \"{}\"}}}}\n",
        crate::support::sha256sum(contents.as_bytes())
    )
}

/// A server whose `main` holds a locked golden fixture; its blob id.
fn server_with_golden_fixture() -> (Server, String) {
    let s = Server::new("");
    write_in(&s.work, "tests/fixtures/golden.csv", "a,b\n1,2\n");
    write_in(&s.work, "qa/fixtures.lock.json", &golden_lock("a,b\n1,2\n"));
    s.commit("Add a golden file\n\nFixture-Lock: human\n");
    s.push(&["origin", "main"]).assert_accepted();
    let blob = s.git(&["rev-parse", "main:tests/fixtures/golden.csv"]);
    (s, blob)
}

/// Writes `contents` as a blob into the repository at `dir` (outside any work tree); its id.
fn blob_in(s: &Server, dir: &Path, contents: &str) -> String {
    let file = tempfile::NamedTempFile::new_in(s.home()).unwrap();
    std::fs::write(file.path(), contents).unwrap();
    s.git_in(dir, &["hash-object", "-w", file.path().to_str().unwrap()])
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
    let pushed = s.push(&["origin", "hot"]);
    assert!(!pushed.ok, "{}", pushed.stderr);
    assert!(
        pushed.has_line_starting("error: refs/heads/hot: [agent_edit_protected]")
            && !pushed.has_line_starting("remote:"),
        "refused before reaching the server: {}",
        pushed.stderr
    );
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
fn deleting_a_protected_ref_without_an_audit_log_warns() {
    let s = Server::new("");
    s.git(&["checkout", "-q", "-b", "feature"]);
    s.human_change("docs/feature.md", "Feature work");
    s.push(&["origin", "feature"]).assert_accepted();
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

    // More globs than the glob engine compiles into one set.
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
    assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));

    // The push after it is judged as usual.
    s.git(&["reset", "-q", "--hard", &s.base]);
    s.human_change("README.md", "Docs");
    s.push(&["origin", "main"]).assert_accepted();
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
fn pre_push_refuses_a_replace_ref_locally() {
    let (s, blob) = server_with_golden_fixture();
    install(&["--hooks", s.work.to_str().unwrap()]);
    let agent_blob = blob_in(&s, &s.work, "a,b\n1,3\n");
    s.git(&["replace", &blob, &agent_blob]);
    let name = format!("refs/replace/{blob}");
    let pushed = s.push(&["origin", &name]);
    assert!(!pushed.ok, "{}", pushed.stderr);
    assert!(
        pushed.has_line_starting(&format!("error: {name}: [replace_ref]")),
        "{}",
        pushed.stderr
    );
    assert!(
        !pushed.has_line_starting("remote:"),
        "refused before reaching the server: {}",
        pushed.stderr
    );
}

// Merges that bring back old protected content.

const LEASE_BLOCK: &str = "\n[[leases]]\nnodeid = \"tests/test_io.py::test_unicode\"\nreason = \"flaky on CI\"\nowner = \"qa\"\nexpires = \"2099-01-31\"\n";

/// The tree of `rev` with each `(path, from)` taken from revision `from`, built with git's
/// plumbing in the working clone's index (reset to HEAD after).
fn tree_with(s: &Server, rev: &str, take: &[(&str, &str)]) -> String {
    s.git(&["read-tree", rev]);
    for (path, from) in take {
        let blob = s.git(&["rev-parse", &format!("{from}:{path}")]);
        s.git(&[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("100644,{blob},{path}"),
        ]);
    }
    let tree = s.git(&["write-tree"]);
    s.git(&["read-tree", "HEAD"]);
    tree
}

/// A commit of `tree` with `parents` in this order, by the agent at `date`.
fn agent_commit_tree(
    s: &Server,
    tree: &str,
    parents: &[&str],
    subject: &str,
    date: &str,
) -> String {
    let mut cmd = s.git_cmd(&s.work);
    cmd.args(["commit-tree", tree, "-m", subject]);
    for parent in parents {
        cmd.args(["-p", parent]);
    }
    let out = cmd
        .env("GIT_AUTHOR_NAME", AGENT_NAME)
        .env("GIT_AUTHOR_EMAIL", AGENT_EMAIL)
        .env("GIT_COMMITTER_NAME", AGENT_NAME)
        .env("GIT_COMMITTER_EMAIL", AGENT_EMAIL)
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_DATE", date)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A human adds a lease to the freeze file (H1) and removes it again (T); both land on main.
/// Returns (H1, T).
fn lease_landed_then_removed(s: &Server) -> (String, String) {
    append_in(&s.work, "qa/freeze.toml", LEASE_BLOCK);
    let h1 = s.commit("Freeze the unicode test\n\nFreeze-Lease: human\n");
    s.write("qa/freeze.toml", FREEZE);
    let t = s.commit("Unfreeze the unicode test\n\nFreeze-Lease: human\n");
    s.push(&["origin", "main"]).assert_accepted();
    (h1, t)
}

#[test]
fn agent_octopus_merge_bringing_back_a_removed_lease_is_rejected() {
    let s = Server::new("");
    let (h1, t) = lease_landed_then_removed(&s);
    let x = s.agent_commit("Agent work");
    let tree = tree_with(&s, &x, &[("qa/freeze.toml", &h1)]);
    let merge = agent_commit_tree(&s, &tree, &[&t, &h1, &x], "Merge", "2026-01-01T00:00:00Z");
    let pushed = s.push(&["origin", &format!("{merge}:refs/heads/main")]);
    pushed.assert_rejected_with(&format!(
        "remote: error: refs/heads/main: [agent_edit_protected] {} \"Merge\" qa/freeze.toml:",
        s.short(&merge)
    ));
    pushed.assert_rejected_with(&format!(
        "remote: error: refs/heads/main: [agent_added_lease] {}",
        s.short(&merge)
    ));
    assert_eq!(s.server_ref("refs/heads/main"), Some(t));
}

#[test]
fn octopus_merge_bringing_back_the_ledger_before_strict_mode_is_rejected() {
    let s = Server::new("");
    let before = s.base.clone();
    s.write(
        "qa/merge_ledger.toml",
        &ledger(&format!("{AGENTS}\ndefault = \"agent\""), ""),
    );
    let strict = s.commit("Strict mode\n\nLedger-Change: human\n");
    s.push(&["origin", "main"]).assert_accepted();
    // In strict mode every unsigned commit is an agent's: an unrelated one passes ...
    let x = s.human_change("README.md", "Document the project");
    // ... and the merge that takes the ledger from before strict mode is an agent's edit.
    let tree = tree_with(&s, &x, &[("qa/merge_ledger.toml", &before)]);
    let merge = agent_commit_tree(
        &s,
        &tree,
        &[&strict, &before, &x],
        "Merge",
        "2026-01-01T00:00:00Z",
    );
    let pushed = s.push(&["origin", &format!("{merge}:refs/heads/main")]);
    pushed.assert_rejected_with(&format!(
        "remote: error: refs/heads/main: [agent_edit_protected] {} \"Merge\" qa/merge_ledger.toml:",
        s.short(&merge)
    ));
    assert_eq!(s.server_ref("refs/heads/main"), Some(strict));
}

#[test]
fn agent_criss_cross_merge_bringing_back_a_removed_lease_is_rejected() {
    // As in `guard check`'s test: Y is the agent's commit from before H1; K merges T and Y, M1
    // merges H1 into Y, F merges K and M1 with M1's freeze file. Y's date decides which of the
    // two merge bases of K and M1 libgit2 picks; neither may matter.
    for y_date in ["2026-06-01T00:00:00Z", "2025-06-01T00:00:00Z"] {
        let s = Server::new("");
        let before = s.base.clone();
        let (h1, t) = lease_landed_then_removed(&s);
        s.git(&["checkout", "-q", "-b", "agent", &before]);
        s.write("src/agent.py", "WORK = 1\n");
        s.git(&["add", "src/agent.py"]);
        let y_tree = s.git(&["write-tree"]);
        let y = agent_commit_tree(&s, &y_tree, &[&before], "Agent work", y_date);
        s.git(&["checkout", "-q", "-f", "main"]);
        let date = "2026-01-01T00:00:00Z";
        let k = agent_commit_tree(
            &s,
            &tree_with(&s, &t, &[("src/agent.py", &y)]),
            &[&t, &y],
            "Merge T",
            date,
        );
        let m1 = agent_commit_tree(
            &s,
            &tree_with(&s, &y, &[("qa/freeze.toml", &h1)]),
            &[&y, &h1],
            "Merge H1",
            date,
        );
        let f = agent_commit_tree(
            &s,
            &tree_with(&s, &k, &[("qa/freeze.toml", &m1)]),
            &[&k, &m1],
            "Merge",
            date,
        );

        let pushed = s.push(&["origin", &format!("{f}:refs/heads/main")]);
        pushed.assert_rejected_with(&format!(
            "remote: error: refs/heads/main: [agent_edit_protected] {} \"Merge\" qa/freeze.toml:",
            s.short(&f)
        ));
        let errors: Vec<&str> = pushed
            .lines()
            .into_iter()
            .filter(|l| l.starts_with("remote: error: refs/heads/main: ["))
            .collect();
        assert_eq!(
            errors.len(),
            2,
            "F's edit and its lease, nothing else: {errors:#?}"
        );
        assert_eq!(s.server_ref("refs/heads/main"), Some(t));
    }
}

#[test]
fn feature_branch_that_merges_main_then_lands_by_a_human_merge_is_accepted() {
    let s = Server::new("");
    s.git(&["checkout", "-q", "-b", "feature"]);
    append_in(&s.work, "qa/freeze.toml", LEASE_BLOCK);
    s.commit("Freeze the unicode test\n\nFreeze-Lease: human\n");
    s.push(&["origin", "feature"]).assert_accepted();
    s.git(&["checkout", "-q", "main"]);
    append_in(
        &s.work,
        "qa/freeze.toml",
        "# reviewed by the platform team\n",
    );
    s.commit("Note the review\n\nFreeze-Lease: human\n");
    s.human_change("README.md", "Main work");
    s.push(&["origin", "main"]).assert_accepted();

    // main merged into the feature branch: the human resolves the freeze file to hold both
    // changes, with the trailer (a merge's own edit of a protected file needs one).
    s.git(&["checkout", "-q", "feature"]);
    let merged = s
        .git_cmd(&s.work)
        .args(["merge", "-q", "--no-ff", "-m", "Merge main", "main"])
        .output()
        .unwrap();
    if !merged.status.success() {
        let mut text = FREEZE.to_string();
        text.push_str("# reviewed by the platform team\n");
        text.push_str(LEASE_BLOCK);
        s.write("qa/freeze.toml", &text);
        s.commit("Merge main\n\nFreeze-Lease: human\n");
    }
    s.push(&["origin", "feature"]).assert_accepted();
    s.human_change("docs/feature.md", "Feature work");
    s.push(&["origin", "feature"]).assert_accepted();

    // The feature branch lands on main by a human merge that takes its freeze file.
    s.git(&["checkout", "-q", "main"]);
    s.git(&["merge", "-q", "--no-ff", "-m", "Merge feature", "feature"]);
    let tip = s.git(&["rev-parse", "HEAD"]);
    s.push(&["origin", "main"]).assert_accepted();
    assert_eq!(s.server_ref("refs/heads/main"), Some(tip));
}

#[test]
fn agent_branch_landed_by_a_human_merge_names_the_agent_commit_once() {
    let s = Server::new("");
    s.git(&["checkout", "-q", "-b", "agent"]);
    let agent = s.agent_edits_freeze("Park a flaky test");
    s.git(&["checkout", "-q", "main"]);
    s.human_change("README.md", "Main work");
    s.git(&["merge", "-q", "--no-ff", "-m", "Merge agent", "agent"]);
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with(&format!(
        "remote: error: refs/heads/main: [agent_edit_protected] {} ",
        s.short(&agent)
    ));
    let errors: Vec<&str> = pushed
        .lines()
        .into_iter()
        .filter(|l| l.starts_with("remote: error: refs/heads/main: ["))
        .collect();
    assert_eq!(
        errors.len(),
        1,
        "the merge brings the agent's change, no edit of its own: {errors:#?}"
    );
}

// 17. The test harness.

#[test]
fn agent_push_of_a_conftest_that_passes_every_test_is_rejected() {
    let s = Server::new("");
    write_in(
        &s.work,
        "tests/conftest.py",
        "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n    outcome = yield\n    outcome.get_result().outcome = \"passed\"\n",
    );
    s.agent_commit("Stabilise the test run\n");
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with("remote: error: refs/heads/main: [agent_edit_protected]");
    assert!(
        pushed.stderr.contains("tests/conftest.py")
            && pushed.stderr.contains("Test-Harness: human"),
        "names the path and the trailer: {}",
        pushed.stderr
    );
    assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));

    // A human who means it pushes the same change with the harness trailer.
    s.git(&["reset", "-q", "--soft", "HEAD~"]);
    s.commit("Stabilise the test run\n\nTest-Harness: human\n");
    s.push(&["origin", "main"]).assert_accepted();
}

#[test]
fn agent_push_of_pytest_addopts_in_pyproject_is_rejected_and_a_dependency_is_not() {
    let s = Server::new("");
    let pyproject = "[project]\nname = \"calc\"\ndependencies = []\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n";
    s.write("pyproject.toml", pyproject);
    s.commit("Add the project file\n\nTest-Harness: human\n");
    s.push(&["origin", "main"]).assert_accepted();

    s.write(
        "pyproject.toml",
        &pyproject.replace("dependencies = []", "dependencies = [\"attrs\"]"),
    );
    s.agent_commit("Depend on attrs\n");
    s.push(&["origin", "main"]).assert_accepted();

    s.write(
        "pyproject.toml",
        &pyproject
            .replace("dependencies = []", "dependencies = [\"attrs\"]")
            .replace(
                "\"-q\"",
                "\"-q --deselect=tests/properties/test_x.py::test_y\"",
            ),
    );
    s.agent_commit("Tidy the test options\n");
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with("remote: error: refs/heads/main: [agent_edit_protected]");
    assert!(
        pushed.stderr.contains("pyproject.toml"),
        "names the path: {}",
        pushed.stderr
    );
}

#[test]
fn agent_push_of_attributes_beside_the_ledger_is_rejected() {
    let s = Server::new("");
    write_in(&s.work, "qa/.gitattributes", "freeze.toml ident\n");
    s.agent_commit("Normalise attributes\n");
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with("remote: error: refs/heads/main: [agent_edit_protected]");
    assert!(
        pushed.stderr.contains("qa/.gitattributes"),
        "{}",
        pushed.stderr
    );
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

// Rewinds that a merge base misjudges.

/// A human's commit of everything in the working clone, dated `date`.
fn commit_dated(s: &Server, message: &str, date: &str) -> String {
    s.git(&["add", "-A"]);
    let out = s
        .git_cmd(&s.work)
        .args(["commit", "-q", "-m", message])
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_DATE", date)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    s.git(&["rev-parse", "HEAD"])
}

#[test]
fn agent_force_push_of_a_merge_of_two_old_commits_that_undoes_a_lease_removal_is_rejected() {
    // main: a side branch from the first commit, a lease (H1), the side branch merged, the
    // lease removed (T). The agent force-pushes main to a new merge of H1 and the side
    // branch: it drops T, and H1 and the side branch are both merge bases of T and it.
    // Judged against the side branch's tree, the lease looks brought by the merge; it is T's
    // removal undone. The side branch's date decides which base libgit2 returns.
    for side_date in ["2025-06-01T00:00:00Z", "2026-06-01T00:00:00Z"] {
        for h1_first in [true, false] {
            let s = Server::new("");
            s.git(&["checkout", "-q", "-b", "side"]);
            s.write("docs/side.md", "Side work.\n");
            let side = commit_dated(&s, "Side work", side_date);
            s.git(&["checkout", "-q", "main"]);
            append_in(&s.work, "qa/freeze.toml", LEASE_BLOCK);
            let h1 = s.commit("Freeze the unicode test\n\nFreeze-Lease: human\n");
            s.git(&["merge", "-q", "--no-ff", "-m", "Merge side", "side"]);
            s.write("qa/freeze.toml", FREEZE);
            let t = s.commit("Unfreeze the unicode test\n\nFreeze-Lease: human\n");
            s.push(&["origin", "main"]).assert_accepted();

            let tree = tree_with(&s, &h1, &[("docs/side.md", &side)]);
            let parents: [&str; 2] = if h1_first { [&h1, &side] } else { [&side, &h1] };
            let merge =
                agent_commit_tree(&s, &tree, &parents, "Merge side", "2026-01-01T00:00:00Z");
            let pushed = s.push(&["--force", "origin", &format!("{merge}:refs/heads/main")]);
            pushed.assert_rejected_with("remote: error: refs/heads/main: [protected_rewind]");
            assert!(
                pushed.stderr.contains("qa/freeze.toml"),
                "{side_date} {h1_first}: {}",
                pushed.stderr
            );
            assert_eq!(s.server_ref("refs/heads/main"), Some(t));
        }
    }
}
