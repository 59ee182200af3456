//! Tree entry names a checkout reads differently from guard: names that another file system
//! folds onto a protected path (Unicode case, NFD, HFS+-ignored code points, NTFS trailing
//! dots, streams and backslashes). Each attack goes through a real push into a bare
//! repository set up by `install.sh --server`, and through `guard check`. Trees are written
//! with git's plumbing (`update-index --cacheinfo`) and commits with `commit-tree`.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::scenario::PROPERTY_FILE;
use crate::support::{Project, Run, hermetic, sha256sum};

const GUARD: &str = env!("CARGO_BIN_EXE_guard");
const AGENT: (&str, &str) = ("Cursor Agent", "cursoragent@cursor.com");

/// Forge variables that name a pusher: kept out so the surroundings cannot change a decision.
const FORGE_VARS: &[&str] = &[
    "GITHUB_USER_LOGIN",
    "GL_USERNAME",
    "GL_ID",
    "GITEA_PUSHER_NAME",
    "GIT_PUSH_CERT_SIGNER",
    "GIT_PUSH_CERT_STATUS",
    "GIT_PUSH_CERT_NONCE_STATUS",
    "REMOTE_USER",
];

/// The protected name with an accent, kept in NFC in the ledger.
const CAFE_NFC: &str = "docs/caf\u{e9}.md";

fn ledger() -> String {
    format!(
        "version = 1\n\n[properties]\nrequired = false\n\n[fixtures]\nlockfile = \"qa/fixtures.lock.json\"\npaths = [\"tests/fixtures/\"]\n\n[freeze]\nfile = \"qa/freeze.toml\"\n\n[agents]\nemails = ['cursoragent@cursor.com']\n\n[protect]\npaths = [\"{CAFE_NFC}\"]\n"
    )
}

const INVOICE: &str = "{\"net\": 100, \"tax\": 19}\n";

/// A bare repository with guard's hook installed by `install.sh --server`, git's own object
/// checks off, and a working clone whose first (human) commit is on the server.
struct Server {
    tmp: Project,
    bare: PathBuf,
    work: PathBuf,
    base: String,
}

impl Server {
    fn new() -> Server {
        let tmp = Project::new();
        let bare = tmp.path("bare.git");
        let work = tmp.path("work");
        let s = Server {
            tmp,
            bare,
            work,
            base: String::new(),
        };
        s.git_in(
            s.tmp.root(),
            &["init", "-q", "--bare", "-b", "main", "bare.git"],
        );
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("install.sh");
        let out = hermetic(Command::new("bash"), s.tmp.root())
            .arg(script)
            .args(["--server", s.bare.to_str().unwrap(), "--guard", GUARD])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "install.sh failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // A debug build beside the whole suite is slow; and git's own checks stay off, so
        // guard alone stands between a malformed tree and the branch.
        s.git_in(&s.bare, &["config", "guard.timeout", "300"]);
        s.git_in(&s.bare, &["config", "receive.fsckObjects", "false"]);
        let url = format!("file://{}", s.bare.display());
        s.git_in(s.tmp.root(), &["clone", "-q", &url, "work"]);
        for (rel, text) in [
            ("qa/merge_ledger.toml", ledger()),
            ("qa/freeze.toml", "version = 1\n".to_string()),
            (
                "qa/fixtures.lock.json",
                format!(
                    "{{\"files\": {{\"tests/fixtures/invoice.json\": \"{}\"}}}}\n",
                    sha256sum(INVOICE.as_bytes())
                ),
            ),
            ("tests/fixtures/invoice.json", INVOICE.to_string()),
            (
                "tests/properties/test_invariants.py",
                PROPERTY_FILE.to_string(),
            ),
            ("tests/properties/test_codec.py", PROPERTY_FILE.to_string()),
            (CAFE_NFC, "Menu\n".to_string()),
            ("README.md", "A guarded project.\n".to_string()),
        ] {
            let path = s.work.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        s.git(&["add", "-A"]);
        s.git(&[
            "commit",
            "-q",
            "-m",
            "Start\n\nLedger-Change: human\nFreeze-Lease: human\nFixture-Lock: human\nProperty-Seeds: human",
        ]);
        let base = s.git(&["rev-parse", "HEAD"]);
        let pushed = s.push(&base);
        assert!(pushed.0, "bootstrap push refused:\n{}", pushed.1);
        Server { base, ..s }
    }

    fn command(&self, program: &str, dir: &Path) -> Command {
        let mut cmd = hermetic(Command::new(program), self.tmp.root());
        for v in FORGE_VARS {
            cmd.env_remove(v);
        }
        cmd.current_dir(dir);
        cmd
    }

    #[track_caller]
    fn git_in(&self, dir: &Path, args: &[&str]) -> String {
        let out = self.command("git", dir).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "git {args:?} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    #[track_caller]
    fn git(&self, args: &[&str]) -> String {
        self.git_in(&self.work, args)
    }

    /// `git ARGS` in the working clone with `input` on stdin; its stdout, trimmed.
    #[track_caller]
    fn git_stdin(&self, args: &[&str], input: &[u8]) -> String {
        let mut child = self
            .command("git", &self.work)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "git {args:?} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    fn blob(&self, text: &str) -> String {
        self.git_stdin(&["hash-object", "-w", "--stdin"], text.as_bytes())
    }

    /// A commit of `tree` on the base by `who`.
    fn commit_tree(&self, tree: &str, who: (&str, &str), message: &str) -> String {
        self.commit_tree_on(tree, &[&self.base], who, message)
    }

    /// A commit of `tree` with `parents` by `who`.
    fn commit_tree_on(
        &self,
        tree: &str,
        parents: &[&str],
        who: (&str, &str),
        message: &str,
    ) -> String {
        let mut cmd = self.command("git", &self.work);
        cmd.args(["commit-tree", tree, "-m", message]);
        for p in parents {
            cmd.args(["-p", p]);
        }
        let out = cmd
            .env("GIT_AUTHOR_NAME", who.0)
            .env("GIT_AUTHOR_EMAIL", who.1)
            .env("GIT_COMMITTER_NAME", who.0)
            .env("GIT_COMMITTER_EMAIL", who.1)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "commit-tree failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// The base plus one file at `path` (any bytes git's index takes), committed by `who`.
    fn commit_file(&self, path: &str, text: &str, who: (&str, &str)) -> String {
        self.git(&["read-tree", &self.base]);
        let info = format!("100644,{},{path}", self.blob(text));
        self.git(&["update-index", "--add", "--cacheinfo", &info]);
        let tree = self.git(&["write-tree"]);
        self.commit_tree(&tree, who, "Tidy up")
    }

    /// `git push origin COMMIT:refs/heads/main`: accepted, and stderr.
    fn push(&self, commit: &str) -> (bool, String) {
        let out = self
            .command("git", &self.work)
            .args(["push", "origin", &format!("{commit}:refs/heads/main")])
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// `guard check base..COMMIT --format json` in the working clone.
    fn check(&self, commit: &str) -> Run {
        self.check_range(&format!("{}..{commit}", self.base))
    }

    /// `guard check RANGE --format json` in the working clone.
    fn check_range(&self, range: &str) -> Run {
        let out = self
            .command(GUARD, &self.work)
            .args(["check", range, "--format", "json"])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        Run {
            code: out.status.code().unwrap(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    fn short(&self, id: &str) -> String {
        self.git(&["rev-parse", "--short", id])
    }

    /// Whether pushing `tip` is refused with a `code` finding at `path` for the commit
    /// `culprit`, by `guard check` and by the server's hook; else what went otherwise.
    fn refused(&self, tip: &str, culprit: &str, code: &str, path: &str) -> Result<(), String> {
        let run = self.check(tip);
        if run.code != 1 {
            return Err(format!(
                "{path:?}: guard check exits {}\n{}\n{}",
                run.code, run.stdout, run.stderr
            ));
        }
        let json = run.json();
        let found = json["findings"].as_array().unwrap().iter().any(|f| {
            f["code"] == code && f["path"] == path && f["commit"] == self.short(culprit).as_str()
        });
        if !found {
            return Err(format!(
                "{path:?}: no {code} finding for {culprit}:\n{}",
                run.stdout
            ));
        }
        let (ok, stderr) = self.push(tip);
        let line = format!("remote: error: refs/heads/main: [{code}]");
        if ok
            || !stderr.contains("(pre-receive hook declined)")
            || !stderr
                .lines()
                .any(|l| l.starts_with(&line) && l.contains(path))
        {
            return Err(format!(
                "{path:?}: push not refused with {line:?}:\n{stderr}"
            ));
        }
        assert_eq!(self.git_in(&self.bare, &["rev-parse", "main"]), self.base);
        Ok(())
    }
}

// Path variants on other file systems (issue 10, item 4).

#[test]
fn a_well_formed_push_with_unusual_names_elsewhere_is_accepted() {
    let s = Server::new();
    // Non-ASCII names, trailing dots and backslashes outside protected paths are not
    // variants of anything protected.
    s.git(&["read-tree", &s.base]);
    for path in [
        "docs/na\u{ef}ve.md",
        "docs/caf\u{e9}-menu.md",
        "qa/freeze.toml.bak",
        "notes\\todo.txt",
        "src/\u{17f}lice.py",
    ] {
        let info = format!("100644,{},{path}", s.blob("text\n"));
        s.git(&["update-index", "--add", "--cacheinfo", &info]);
    }
    let tree = s.git(&["write-tree"]);
    let commit = s.commit_tree(&tree, AGENT, "Add notes");
    let run = s.check(&commit);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let (ok, stderr) = s.push(&commit);
    assert!(ok, "{stderr}");
}

#[test]
fn agent_writes_protected_paths_through_file_system_variants() {
    let s = Server::new();
    let cafe_nfd = "docs/cafe\u{301}.md";
    let mut missed = Vec::new();
    for path in [
        // Full case folding: long s folds to s, the Kelvin sign to k.
        "te\u{17f}ts/properties/x.py",
        "qa/fixtures.loc\u{212a}.json",
        // macOS: the NFD spelling of an NFC protected name.
        cafe_nfd,
        // HFS+ ignores zero-width joiners and friends.
        ".git\u{200c}attributes",
        "qa/free\u{200d}ze.toml",
        "qa/freeze.toml\u{feff}",
        // NTFS: trailing dots and spaces, the default data stream, backslashes.
        "qa/freeze.toml.",
        "qa/freeze.toml ",
        "qa/freeze.toml::$DATA",
        "qa\\freeze.toml",
        "tests\\fixtures\\extra.json",
    ] {
        let commit = s.commit_file(path, "weakened\n", AGENT);
        if let Err(why) = s.refused(&commit, &commit, "agent_edit_protected", path) {
            missed.push(why);
        }
    }
    assert!(missed.is_empty(), "{}", missed.join("\n"));
}
