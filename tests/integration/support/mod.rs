//! Test support: temp projects, hermetic `git`, and running the `guard` binary; `server` is
//! the hook tests' server harness.

pub mod daemons;
pub mod json_contract;
pub mod server;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use tempfile::TempDir;

/// The outcome of one `guard` run.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    fn from(output: Output) -> Run {
        Run {
            code: output.status.code().expect("guard exited by a signal"),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// The stdout parsed as the JSON report.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }

    /// A text report of a run that judged nothing: stdout still ends with the verdict line
    /// (`decision: none, cannot judge (...)`, or `lint: cannot judge (...)`), after the
    /// `error:` line that says why.
    pub fn assert_cannot_judge_text(&self) {
        let last = self.stdout.lines().last().unwrap_or("");
        assert!(
            last.starts_with("decision: none, cannot judge (")
                || last.starts_with("lint: cannot judge ("),
            "stdout: {}\nstderr: {}",
            self.stdout,
            self.stderr
        );
        assert!(
            self.stdout.lines().any(|l| l.starts_with("error: ")),
            "{}",
            self.stdout
        );
    }

    /// The reason codes of a JSON report.
    pub fn reasons(&self) -> Vec<String> {
        self.json()["reasons"]
            .as_array()
            .expect("reasons is an array")
            .iter()
            .map(|r| r.as_str().unwrap().to_string())
            .collect()
    }
}

/// A project directory in a temp dir.
pub struct Project {
    pub dir: TempDir,
}

impl Project {
    /// A plain directory (not a git work tree).
    pub fn new() -> Project {
        Project {
            dir: tempfile::Builder::new()
                .prefix("guard-test-")
                .tempdir()
                .unwrap(),
        }
    }

    /// A git work tree made with the `git` command.
    pub fn git() -> Project {
        let p = Project::new();
        p.git_cmd(&["init", "-q", "-b", "main"]);
        p
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn write(&self, rel: &str, contents: impl AsRef<[u8]>) -> &Self {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
        self
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap()
    }

    pub fn remove(&self, rel: &str) {
        std::fs::remove_file(self.path(rel)).unwrap();
    }

    /// Runs `git` hermetically in the project.
    pub fn git_cmd(&self, args: &[&str]) -> String {
        let out = hermetic(Command::new("git"), self.root())
            .args(args)
            .current_dir(self.root())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs `git` hermetically as `who` (`(name, e-mail)`, both author and committer): the
    /// hermetic environment fixes `GIT_AUTHOR_*`/`GIT_COMMITTER_*`, which beat `-c user.*`.
    pub fn git_as(&self, who: (&str, &str), args: &[&str]) -> String {
        let out = hermetic(Command::new("git"), self.root())
            .env("GIT_AUTHOR_NAME", who.0)
            .env("GIT_AUTHOR_EMAIL", who.1)
            .env("GIT_COMMITTER_NAME", who.0)
            .env("GIT_COMMITTER_EMAIL", who.1)
            .args(args)
            .current_dir(self.root())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?} as {who:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs `git` hermetically with `env` set on top (dates, identities).
    pub fn git_env(&self, env: &[(&str, &str)], args: &[&str]) -> String {
        let out = hermetic(Command::new("git"), self.root())
            .envs(env.iter().copied())
            .args(args)
            .current_dir(self.root())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?} with {env:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Commits the index as `who` with `message` kept byte for byte (`--cleanup=verbatim`:
    /// CRLF, non-UTF-8 bytes and trailers stay as given); `config` are `-c` settings.
    /// Returns the new commit id.
    pub fn commit_index_as(
        &self,
        who: (&str, &str),
        message: impl AsRef<[u8]>,
        config: &[&str],
    ) -> String {
        let file = self.root().join(".git/guard-test-message");
        std::fs::write(&file, message).unwrap();
        let mut args: Vec<&str> = Vec::new();
        for c in config {
            args.extend(["-c", c]);
        }
        let file = file.to_str().unwrap();
        args.extend([
            "commit",
            "-q",
            "--allow-empty",
            "--cleanup=verbatim",
            "-F",
            file,
        ]);
        self.git_as(who, &args);
        self.rev("HEAD")
    }

    /// `git add -A`, then [`Project::commit_index_as`] without extra config.
    pub fn commit_as(&self, who: (&str, &str), message: impl AsRef<[u8]>) -> String {
        self.git_cmd(&["add", "-A"]);
        self.commit_index_as(who, message, &[])
    }

    /// The full id of `rev`.
    pub fn rev(&self, rev: &str) -> String {
        self.git_cmd(&["rev-parse", "--verify", "-q", rev])
            .trim()
            .to_string()
    }

    /// The abbreviated id git shows for `rev`.
    pub fn short(&self, rev: &str) -> String {
        self.git_cmd(&["rev-parse", "--short", rev])
            .trim()
            .to_string()
    }

    /// A clone of `src` made with `git clone` (`--bare` when `bare`) in a new temp dir.
    pub fn clone_of(src: &Project, bare: bool) -> Project {
        let p = Project::new();
        let from = src.root().to_str().unwrap();
        let into = p.root().to_str().unwrap();
        let mut args = vec!["clone", "-q"];
        if bare {
            args.push("--bare");
        }
        args.extend([from, into]);
        p.git_cmd(&args);
        p
    }

    /// Runs guard in the project root.
    pub fn guard(&self, args: &[&str]) -> Run {
        self.guard_in(self.root(), args)
    }

    /// Runs guard in the project root twice: as the repository is, and with a commit-graph
    /// written (what `git gc` leaves), and asserts that both runs print the same. Without a
    /// commit-graph libgit2 walks the range; with one guard walks the graph itself.
    ///
    /// Both walks always run: a repository that already has a commit-graph, or in which git
    /// writes none, fails the test (a test that cannot have both walks calls `guard`).
    #[track_caller]
    pub fn guard_both_walks(&self, args: &[&str]) -> Run {
        let common = self.git_cmd(&["rev-parse", "--git-common-dir"]);
        let info = self.root().join(common.trim()).join("objects/info");
        let graph = info.join("commit-graph");
        for existing in [&graph, &info.join("commit-graphs")] {
            assert!(
                !existing.exists(),
                "{} exists before the run without a commit-graph",
                existing.display()
            );
        }
        let plain = self.guard(args);
        let written = hermetic(Command::new("git"), self.root())
            .args(["commit-graph", "write", "--reachable"])
            .current_dir(self.root())
            .output()
            .unwrap();
        assert!(
            written.status.success(),
            "git commit-graph write failed: {}",
            String::from_utf8_lossy(&written.stderr)
        );
        assert!(
            graph.is_file(),
            "git wrote no commit-graph at {} (replace refs or grafts stop it: call `guard` instead)",
            graph.display()
        );
        let with_graph = self.guard(args);
        std::fs::remove_file(&graph).unwrap();
        assert_eq!(
            (plain.code, &plain.stdout, &plain.stderr),
            (with_graph.code, &with_graph.stdout, &with_graph.stderr),
            "guard {args:?} without (left) and with (right) a commit-graph"
        );
        plain
    }

    /// Runs guard in `dir`.
    pub fn guard_in(&self, dir: &Path, args: &[&str]) -> Run {
        let out = hermetic(Command::new(env!("CARGO_BIN_EXE_guard")), self.root())
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let run = Run::from(out);
        json_contract::check_if_json(args, &run.stdout);
        run
    }
}

/// Variables through which forges tell a hook who pushes. Every command runs without them,
/// so the surrounding environment cannot change a decision; a test that plays a forge sets
/// them itself.
pub const FORGE_VARS: &[&str] = &[
    "GITHUB_USER_LOGIN",
    "GL_USERNAME",
    "GL_ID",
    "GITEA_PUSHER_NAME",
    "GIT_PUSH_CERT_SIGNER",
    "GIT_PUSH_CERT_STATUS",
    "GIT_PUSH_CERT_NONCE_STATUS",
    "REMOTE_USER",
    "GITHUB_PULL_REQUEST_AUTHOR_LOGIN",
    "GITEA_PUSHER_EMAIL",
    "GL_USER",
];

/// No global or system git config, fixed identities and dates, a private HOME, no forge
/// identities.
pub fn hermetic(mut cmd: Command, home: &Path) -> Command {
    for v in FORGE_VARS {
        cmd.env_remove(v);
    }
    cmd.env("HOME", home)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Human Dev")
        .env("GIT_AUTHOR_EMAIL", "dev@example.com")
        .env("GIT_COMMITTER_NAME", "Human Dev")
        .env("GIT_COMMITTER_EMAIL", "dev@example.com")
        .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
        .env("LC_ALL", "C")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE");
    cmd
}

/// Appends commits to `p`'s `main` with `git fast-import` (seconds for thousands; it writes
/// them as one pack), then checks `main` out. Commit `i` is made by `who(i)` and writes one
/// file, `file(i)` (path, text); its message is `Change {i}`.
pub fn fast_import(
    p: &Project,
    n: usize,
    who: impl Fn(usize) -> (&'static str, &'static str),
    file: impl Fn(usize) -> (String, String),
) {
    let tip = p.rev("HEAD");
    let mut stream = String::new();
    for i in 0..n {
        let ((name, email), (path, data)) = (who(i), file(i));
        let message = format!("Change {i}\n");
        stream.push_str(&format!(
            "commit refs/heads/main\ncommitter {name} <{email}> {} +0000\ndata {}\n{message}",
            1_767_225_600 + i,
            message.len()
        ));
        if i == 0 {
            stream.push_str(&format!("from {tip}\n"));
        }
        stream.push_str(&format!(
            "M 100644 inline {path}\ndata {}\n{data}\n",
            data.len()
        ));
    }
    let mut git = hermetic(Command::new("git"), p.root());
    git.current_dir(p.root());
    run_fast_import(git, &stream);
    p.git_cmd(&["reset", "-q", "--hard", "main"]);
}

/// Runs `git fast-import --quiet` with `git` (a `git` command, hermetic, in its repository)
/// on `stream`, and asserts that it succeeded.
pub fn run_fast_import(mut git: Command, stream: &str) {
    let mut child = git
        .args(["fast-import", "--quiet"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stream.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
}

/// The SHA-256 of `bytes` as computed by coreutils `sha256sum` (an independent
/// implementation, so tests do not check guard's hashing against itself).
pub fn sha256sum(bytes: &[u8]) -> String {
    use std::io::Write;
    let mut child = Command::new("sha256sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("sha256sum (coreutils) is installed");
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

/// `count` fixture files of pseudo-random bytes, `(path under dir/, bytes)`, of sizes from
/// `size / 2` to `size * 3 / 2` in no order: the same arguments give the same bytes, and
/// files 10 and 11 hold the same bytes (one blob at two paths).
pub fn fixture_corpus(dir: &str, count: usize, size: usize) -> Vec<(String, Vec<u8>)> {
    (0..count)
        .map(|i| {
            let seed = if i == 11 { 10 } else { i };
            let len = size / 2 + (seed * 7919) % size.max(1);
            let mut x = (seed as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            let bytes = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            (format!("{dir}/f_{i:03}.bin"), bytes)
        })
        .collect()
}

/// The JSON lockfile coreutils `sha256sum` gives for the files `rels` under `root`, in one run.
pub fn sha256sum_lockfile(root: &Path, rels: &[&str]) -> String {
    let out = Command::new("sha256sum")
        .args(rels)
        .current_dir(root)
        .output()
        .expect("sha256sum (coreutils) is installed");
    assert!(out.status.success(), "sha256sum {rels:?}");
    let lines: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let (digest, path) = line.split_once("  ").expect("sha256sum output");
            format!("    \"{path}\": \"{digest}\"")
        })
        .collect();
    assert_eq!(lines.len(), rels.len());
    format!("{{\n  \"files\": {{\n{}\n  }}\n}}\n", lines.join(",\n"))
}

/// A directory of committed test data.
pub fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
}

/// The Markdown file at `path` as GitHub shows it: HTML from cmark-gfm, GitHub's own
/// Markdown with its autolinks (the `cmarkgfm` Python package, which .ci/run installs).
pub fn github_markdown_html(path: &Path) -> String {
    let out = Command::new("python3")
        .args([
            "-c",
            "import sys, cmarkgfm; print(cmarkgfm.github_flavored_markdown_to_html(open(sys.argv[1]).read()))",
        ])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cmarkgfm must be installed (`python3 -m pip install cmarkgfm`; .ci/run does): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
