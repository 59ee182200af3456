//! Tree entry names a checkout reads differently from guard: names that another file system
//! folds onto a protected path (Unicode case, NFD, HFS+-ignored code points, NTFS trailing
//! dots, streams and backslashes), and trees git's fsck calls malformed (duplicate or unsorted
//! entries, `.git` and its variants, bad modes). Each attack goes through a real push into a
//! bare repository set up by `install.sh --server` with `receive.fsckObjects` off, and
//! through `guard check`. Trees are written with git's plumbing (`update-index --cacheinfo`,
//! `mktree`, `hash-object -t tree --literally`) and commits with `commit-tree`.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::scenario::PROPERTY_FILE;
use crate::support::{Project, Run, hermetic, sha256sum};

const GUARD: &str = env!("CARGO_BIN_EXE_guard");
const AGENT: (&str, &str) = ("Cursor Agent", "cursoragent@cursor.com");
const HUMAN: (&str, &str) = ("Human Dev", "dev@example.com");

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
const TAMPERED: &str = "{\"net\": 100, \"tax\": 0}\n";
const WEAK_PROPERTY: &str = "def test_roundtrip_on_seeds():\n    assert True\n";

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
        Server::with_ledger(&ledger())
    }

    /// A server whose base holds `ledger` as its ledger.
    fn with_ledger(ledger: &str) -> Server {
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
            ("qa/merge_ledger.toml", ledger.to_string()),
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

    /// The id of `rev:path` (a tree or blob).
    fn id(&self, rev_path: &str) -> String {
        self.git(&["rev-parse", rev_path])
    }

    /// A tree holding exactly `entries` (mode, name, id), byte for byte in this order: git's
    /// `hash-object --literally` checks nothing.
    fn literal_tree(&self, entries: &[(&str, &[u8], &str)]) -> String {
        let mut raw = Vec::new();
        for (mode, name, id) in entries {
            // git writes a tree's mode without the leading zero `ls-tree` shows.
            raw.extend_from_slice(mode.trim_start_matches('0').as_bytes());
            raw.push(b' ');
            raw.extend_from_slice(name);
            raw.push(0);
            raw.extend_from_slice(&hex::decode(id).unwrap());
        }
        self.git_stdin(
            &["hash-object", "-t", "tree", "--literally", "-w", "--stdin"],
            &raw,
        )
    }

    /// The base tree with the directory `dir` (`a/b`) replaced by the tree `sub`. The trees
    /// above it are written by `git mktree` (well formed).
    fn base_tree_with(&self, dir: &str, sub: &str) -> String {
        let base = self.id(&format!("{}^{{tree}}", self.base));
        self.replace(&base, &dir.split('/').collect::<Vec<_>>(), sub)
    }

    fn replace(&self, tree: &str, path: &[&str], sub: &str) -> String {
        let Some((first, rest)) = path.split_first() else {
            return sub.to_string();
        };
        // `-z` both ways: names unquoted.
        let listing = self.git(&["ls-tree", "-z", tree]);
        let mut records = String::new();
        for record in listing.split('\0').filter(|r| !r.is_empty()) {
            let (meta, name) = record.split_once('\t').unwrap();
            if name == *first {
                let old = meta.split(' ').nth(2).unwrap();
                let new = self.replace(old, rest, sub);
                records.push_str(&format!("040000 tree {new}\t{name}\0"));
            } else {
                records.push_str(record);
                records.push('\0');
            }
        }
        self.git_stdin(&["mktree", "-z"], records.as_bytes())
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

    /// Asserts that `commit` is refused with a `code` finding at `path`, by `guard check`
    /// and by the server's hook (whose `main` stays at the base).
    #[track_caller]
    fn assert_refused(&self, commit: &str, code: &str, path: &str) {
        self.assert_refused_for(commit, commit, code, path);
    }

    /// Like `assert_refused`, for a push of `tip` whose commit `culprit` has the finding.
    #[track_caller]
    fn assert_refused_for(&self, tip: &str, culprit: &str, code: &str, path: &str) {
        if let Err(why) = self.refused(tip, culprit, code, path) {
            panic!("{why}");
        }
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
        // The test harness: whole files and the files judged by their sections.
        "tests/confte\u{17f}t.py",
        "pyproject.toml.",
        "setup.cfg::$DATA",
    ] {
        let commit = s.commit_file(path, "weakened\n", AGENT);
        if let Err(why) = s.refused(&commit, &commit, "agent_edit_protected", path) {
            missed.push(why);
        }
    }
    assert!(missed.is_empty(), "{}", missed.join("\n"));
}

// Malformed trees (issue 10, item 8).

/// The entries of the base's `dir` as (mode, name, id), in the base's order.
fn entries_of(s: &Server, dir: &str) -> Vec<(String, Vec<u8>, String)> {
    // `-z`: names unquoted.
    s.git(&["ls-tree", "-z", &format!("{}:{dir}", s.base)])
        .split('\0')
        .filter(|record| !record.is_empty())
        .map(|line| {
            let (meta, name) = line.split_once('\t').unwrap();
            let parts: Vec<&str> = meta.split(' ').collect();
            (
                parts[0].to_string(),
                name.as_bytes().to_vec(),
                parts[2].to_string(),
            )
        })
        .collect()
}

fn literal(s: &Server, entries: &[(String, Vec<u8>, String)]) -> String {
    let borrowed: Vec<(&str, &[u8], &str)> = entries
        .iter()
        .map(|(m, n, i)| (m.as_str(), n.as_slice(), i.as_str()))
        .collect();
    s.literal_tree(&borrowed)
}

#[test]
fn a_property_test_listed_twice_is_a_malformed_tree_whoever_commits_it() {
    for who in [AGENT, HUMAN] {
        let s = Server::new();
        // As `git mktree` writes it (it keeps both entries), with the original first: guard's
        // lookup by name found the first, while a checkout writes the last (the weakened copy).
        let weak = s.blob(WEAK_PROPERTY);
        let mut entries = entries_of(&s, "tests/properties");
        entries.push(("100644".into(), b"test_invariants.py".to_vec(), weak));
        let props = literal(&s, &entries);
        let names = s.git(&["ls-tree", "--name-only", &props]);
        assert_eq!(
            names.lines().collect::<Vec<_>>(),
            ["test_codec.py", "test_invariants.py", "test_invariants.py"]
        );
        let commit = s.commit_tree(
            &s.base_tree_with("tests/properties", &props),
            who,
            "Speed up the tests",
        );
        // What a clone checks out: the weakened file.
        let clone = s.tmp.path(&format!("clone-{}", who.0.replace(' ', "-")));
        s.git_in(
            s.tmp.root(),
            &[
                "clone",
                "-q",
                "-n",
                s.work.to_str().unwrap(),
                clone.to_str().unwrap(),
            ],
        );
        s.git_in(&clone, &["checkout", "-q", &commit]);
        assert_eq!(
            std::fs::read_to_string(clone.join("tests/properties/test_invariants.py")).unwrap(),
            WEAK_PROPERTY
        );
        s.assert_refused(
            &commit,
            "malformed_tree",
            "tests/properties/test_invariants.py",
        );
    }
}

#[test]
fn a_fixture_listed_twice_is_a_malformed_tree() {
    let s = Server::new();
    let tampered = s.blob(TAMPERED);
    let mut entries = entries_of(&s, "tests/fixtures");
    entries.push(("100644".into(), b"invoice.json".to_vec(), tampered));
    let fixtures = literal(&s, &entries);
    let commit = s.commit_tree(
        &s.base_tree_with("tests/fixtures", &fixtures),
        HUMAN,
        "Refresh the invoice",
    );
    s.assert_refused(&commit, "malformed_tree", "tests/fixtures/invoice.json");
}

#[test]
fn a_malformed_tree_under_a_protected_directory_is_refused_when_no_glob_starts_at_the_root() {
    // Harness files named where they are (no `**/` glob): the walk for malformed trees may
    // stop at the root for a commit that changes no directory under a protected top-level
    // name, and must not for one that changes every such directory (`qa` and `tests`).
    let narrow = format!(
        "{}\n[harness]\npaths = [\"conftest.py\"]\n\n[harness.sections]\n\"pyproject.toml\" = [\"tool.pytest\"]\n",
        ledger().replace(&format!("paths = [\"{CAFE_NFC}\"]"), "paths = []")
    );
    let s = Server::with_ledger(&narrow);
    let tampered = s.blob(TAMPERED);
    let mut entries = entries_of(&s, "tests/fixtures");
    entries.push(("100644".into(), b"invoice.json".to_vec(), tampered));
    let fixtures = literal(&s, &entries);
    let mut qa = entries_of(&s, "qa");
    qa.push(("100644".into(), b"notes.md".to_vec(), s.blob("notes\n")));
    qa.sort_by(git_order);
    let tree = s.replace(
        &s.base_tree_with("tests/fixtures", &fixtures),
        &["qa"],
        &literal(&s, &qa),
    );
    let bad = s.commit_tree(&tree, HUMAN, "Refresh the invoice");
    // The tip puts the base's tree back: only the walk of `bad`'s own tree shows the attack.
    let base_tree = s.id(&format!("{}^{{tree}}", s.base));
    let tip = s.commit_tree_on(&base_tree, &[&bad], HUMAN, "Put it back");
    s.assert_refused_for(&tip, &bad, "malformed_tree", "tests/fixtures/invoice.json");
}

#[test]
fn a_merge_that_brings_a_malformed_tree_is_refused() {
    let s = Server::new();
    // A clean side commit, then a hand-made merge of it whose tree lists the fixture twice.
    let side = s.commit_file("docs/notes.md", "notes\n", HUMAN);
    let tampered = s.blob(TAMPERED);
    let mut entries = entries_of(&s, "tests/fixtures");
    entries.push(("100644".into(), b"invoice.json".to_vec(), tampered));
    let fixtures = literal(&s, &entries);
    let tree = s.base_tree_with("tests/fixtures", &fixtures);
    let merge = s.commit_tree_on(&tree, &[&s.base, &side], HUMAN, "Merge notes");
    s.assert_refused(&merge, "malformed_tree", "tests/fixtures/invoice.json");
}

#[test]
fn a_malformed_tree_from_before_the_range_is_refused_at_the_tip() {
    let s = Server::new();
    // An old commit (before guard, say) listed the fixture twice; a clean commit on top of it
    // brings no malformed tree itself, but the tip is scored from that tree.
    let tampered = s.blob(TAMPERED);
    let mut entries = entries_of(&s, "tests/fixtures");
    entries.push(("100644".into(), b"invoice.json".to_vec(), tampered));
    let old = s.commit_tree(
        &s.base_tree_with("tests/fixtures", &literal(&s, &entries)),
        HUMAN,
        "Old",
    );
    let tree = s.git(&["rev-parse", &format!("{old}^{{tree}}")]);
    s.git(&["read-tree", &tree]);
    let info = format!("100644,{},docs/notes.md", s.blob("notes\n"));
    s.git(&["update-index", "--add", "--cacheinfo", &info]);
    let tip = s.commit_tree_on(&s.git(&["write-tree"]), &[&old], HUMAN, "Notes");
    let run = s.check_range(&format!("{old}..{tip}"));
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let json = run.json();
    let findings = json["findings"].as_array().unwrap();
    let malformed: Vec<&Value> = findings
        .iter()
        .filter(|f| f["code"] == "malformed_tree")
        .collect();
    assert_eq!(malformed.len(), 1, "{}", run.stdout);
    assert_eq!(malformed[0]["path"], "tests/fixtures/invoice.json");
    assert_eq!(malformed[0]["commit"], s.short(&tip).as_str());
    // Read as a checkout writes it: the tampered copy, which the lockfile does not match.
    assert!(
        findings
            .iter()
            .any(|f| f["code"] == "fixture_digest" && f["path"] == "tests/fixtures/invoice.json"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_malformed_tree_the_tip_no_longer_has_is_refused_in_its_commit() {
    let s = Server::new();
    // `docs` leads to a `[protect]` path that scoring the tip never reads; the next commit
    // puts the base's tree back, so only the first commit's own tree shows the attack.
    let weak = s.blob("weak\n");
    let mut entries = entries_of(&s, "docs");
    entries.push(("100644".into(), "caf\u{e9}.md".as_bytes().to_vec(), weak));
    let bad = s.commit_tree(
        &s.base_tree_with("docs", &literal(&s, &entries)),
        HUMAN,
        "Menu",
    );
    let base_tree = s.id(&format!("{}^{{tree}}", s.base));
    let tip = s.commit_tree_on(&base_tree, &[&bad], HUMAN, "Put it back");
    s.assert_refused_for(&tip, &bad, "malformed_tree", CAFE_NFC);
}

#[test]
fn unsorted_tree_entries_are_a_malformed_tree() {
    let s = Server::new();
    let mut entries = entries_of(&s, "tests/properties");
    assert_eq!(entries.len(), 2);
    entries.reverse();
    let props = literal(&s, &entries);
    let commit = s.commit_tree(
        &s.base_tree_with("tests/properties", &props),
        HUMAN,
        "Reorder",
    );
    s.assert_refused(&commit, "malformed_tree", "tests/properties/test_codec.py");
}

#[test]
fn malformed_entries_on_the_way_to_protected_paths_each_refuse() {
    let s = Server::new();
    let blob = s.blob("x\n");
    let fixtures = entries_of(&s, "tests/fixtures");
    let sub = s.literal_tree(&[("100644", b"a", &blob)]);
    let with = |extra: (&str, &[u8], &str)| {
        let mut all = fixtures.clone();
        all.push((extra.0.to_string(), extra.1.to_vec(), extra.2.to_string()));
        all.sort_by(git_order);
        literal(&s, &all)
    };
    let cases: Vec<(&str, String)> = vec![
        (".git", with(("40000", b".git", &sub))),
        (
            ".Git\u{200c}",
            with(("40000", ".Git\u{200c}".as_bytes(), &sub)),
        ),
        (".git. ", with(("40000", b".git. ", &sub))),
        ("git~1", with(("40000", b"git~1", &sub))),
        (
            ".git::$INDEX_ALLOCATION",
            with(("40000", b".git::$INDEX_ALLOCATION", &sub)),
        ),
        ("..", with(("40000", b"..", &sub))),
        (".", with(("40000", b".", &sub))),
        ("a/b", with(("100644", b"a/b", &blob))),
        ("odd-mode", with(("100664", b"odd-mode", &blob))),
        ("setuid", with(("104755", b"setuid", &blob))),
    ];
    for (name, fixtures) in cases {
        let commit = s.commit_tree(&s.base_tree_with("tests/fixtures", &fixtures), HUMAN, name);
        s.assert_refused(&commit, "malformed_tree", &format!("tests/fixtures/{name}"));
    }
    // The root too, with a duplicate of an unprotected file: every tree on the way counts.
    let mut root = entries_of(&s, "");
    let readme = root.iter().find(|e| e.1 == b"README.md").cloned().unwrap();
    root.push(readme);
    root.sort_by(git_order);
    let commit = s.commit_tree(&literal(&s, &root), HUMAN, "Twice");
    s.assert_refused(&commit, "malformed_tree", "README.md");
}

/// git's tree order: names compare as bytes, a directory's as if it ended in '/'.
fn git_order(a: &(String, Vec<u8>, String), b: &(String, Vec<u8>, String)) -> std::cmp::Ordering {
    let key = |e: &(String, Vec<u8>, String)| {
        let mut k = e.1.clone();
        if e.0 == "40000" || e.0 == "040000" {
            k.push(b'/');
        }
        k
    };
    key(a).cmp(&key(b))
}
