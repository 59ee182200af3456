//! `guard retest`: the humans' tests judge the agent's code. The tests as the base revision
//! holds them are evidence the agent cannot write: every test file (and whole harness file)
//! whose last change in the range is an agent commit's is put back as the base has it, in a
//! copy of the range's tip, and the suite runs there. An agent that changed behaviour and
//! rewrote a test to hide it meets the old test, however the rewrite was spelled.
//!
//! This module plans what is put back and judges the run; `cli::retest` makes the copy, runs
//! the command and prints.

use std::collections::BTreeMap;
use std::path::Path;

use globset::GlobSetBuilder;
use jiff::civil::Date;

use crate::engine::audit::{WhoContext, base_of, load_policy, load_signers};
use crate::engine::score::{Artifacts, Evaluation, score};
use crate::evidence::junit::read_junit;
use crate::evidence::record::Outcome;
use crate::evidence::test_source::{self, PythonTests};
use crate::git::commit::Commit;
use crate::git::worktree_copy::{self, FileAt, file_changes};
use crate::git::{self, Oid, Repository, range};
use crate::policy::ledger::{DEFAULT_LEDGER_PATH, Policy, protect_glob};
use crate::policy::load::load_freeze;
use crate::project::PytestConfig;
use crate::report::finding::{Code, Finding};
use crate::testid::{PathMatcher, id_key, record_keys};

/// A file put back as the base has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PutBack {
    pub path: String,
    /// The base's file; `None` when the base has none (an agent added it).
    pub base: Option<FileAt>,
    /// The agent commits that changed it, as `abc1234 "subject"`.
    pub by: Vec<String>,
    /// A test module the runner collects (pytest's `python_files`, a Cargo `tests/` target):
    /// each of its base tests must run and pass. Other files (helpers, data, harness) are
    /// put back and not checked.
    pub test_file: bool,
    /// What the copy gets where the base has no such file: an agent's new test module stays
    /// (its tests are new, and run), an agent's new file that Python or pytest load on their
    /// own (a `conftest.py`, an `__init__.py`, `sitecustomize.py`, a `pytest.ini` that pytest
    /// would prefer to the base's settings) is removed.
    pub remove_if_new: bool,
}

/// What `guard retest` does for a range.
pub struct Plan {
    pub spec: String,
    pub base: Option<Oid>,
    pub tip: Oid,
    pub base_short: String,
    pub policy: Policy,
    pub put_back: Vec<PutBack>,
    /// Files an agent changed whose tests cannot be put back (Rust unit tests inside source
    /// files), with why.
    pub not_put_back: Vec<(String, String)>,
    /// The ids of frozen tests (the base's freeze file): they fail as allowed.
    frozen: Vec<String>,
    /// Which Python functions are tests, by the base's pytest settings.
    python: PythonTests,
}

/// An agent commit's change of a path, not yet approved by a human commit after it.
struct AgentTouch {
    commit: Oid,
    label: String,
    /// The path at the other side of a rename (a human's change there approves it too).
    other: Option<String>,
}

/// Files that Python or pytest load without being named: an agent's new one changes how
/// every test runs.
fn loaded_unasked(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    matches!(
        name,
        "conftest.py" | "__init__.py" | "sitecustomize.py" | "usercustomize.py"
    ) || matches!(path, "pytest.py" | "py.py" | "src/pytest.py")
        || path.starts_with("_pytest/")
        || path.starts_with("pluggy/")
}

/// Plans a retest of `spec` (as `guard check` reads a range), under the base's policy.
pub fn plan(repo: &Repository, spec: Option<&str>, ledger: Option<&str>) -> anyhow::Result<Plan> {
    let range = range::resolve(repo, spec)?;
    let ledger_path = ledger.unwrap_or(DEFAULT_LEDGER_PATH);
    let (base_short, base_tree) = base_of(repo, range.base)?;
    let policy = load_policy(base_tree.as_ref(), ledger_path, base_short.as_deref())?;
    let needs_proof = policy.humans.require_signature || policy.agents.default_agent;
    let signers = load_signers(base_tree.as_ref(), &policy, None, needs_proof)?;
    let who = WhoContext {
        policy: &policy,
        needs_proof,
        signers: signers.as_ref(),
        pusher: None,
        signatures_valid_at: None,
    };
    let mut harness = GlobSetBuilder::new();
    for pattern in &policy.harness.paths {
        if let Ok(glob) = protect_glob(pattern) {
            harness.add(glob);
        }
    }
    let harness = harness
        .build()
        .unwrap_or_else(|_| globset::GlobSet::empty());
    // Which files the runner collects as test modules, by the base's pytest settings.
    let pytest = match &base_tree {
        Some(tree) => PytestConfig::read(tree).unwrap_or_default(),
        None => PytestConfig::default(),
    };
    let mut collected = GlobSetBuilder::new();
    for pattern in &pytest.python_files {
        // A name anywhere, or (with a `/`) the end of a path, as pytest's fnmatch_ex reads it.
        let glob = format!("**/{pattern}");
        if let Ok(g) = globset::GlobBuilder::new(&glob)
            .literal_separator(true)
            .build()
        {
            collected.add(g);
        }
    }
    let collected = collected
        .build()
        .unwrap_or_else(|_| globset::GlobSet::empty());
    let collects = |path: &str| {
        if path.ends_with(".py") {
            return collected.is_match(path);
        }
        // Cargo's integration tests: `tests/NAME.rs` or `tests/NAME/main.rs`, at the root or
        // in a workspace member.
        let in_tests = path
            .strip_prefix("tests/")
            .or_else(|| path.rsplit_once("/tests/").map(|(_, rest)| rest));
        in_tests.is_some_and(|rest| {
            (rest.ends_with(".rs") && !rest.contains('/')) || rest.ends_with("/main.rs")
        })
    };

    // An agent's change stands until a human commit that descends from it changes the file
    // again (the humans' approval); order alone is the commit dates', which the agent writes.
    let commits = range::commits(repo, range.tip, range.base.as_slice())?;
    let mut touched: BTreeMap<String, Vec<AgentTouch>> = BTreeMap::new();
    for &id in commits.ids() {
        let commit = Commit::find(repo, id)?;
        let agent = who.agent(&commit).is_some();
        let parents = worktree_copy::parents(repo, id)?;
        // A merge's changes came from the commits it merged, which are in the range and
        // judged on their own: a human's merge of an agent's branch approves no test. An
        // agent's merge is held to what it changed against its first parent.
        if parents.len() > 1 && !agent {
            continue;
        }
        let label = format!("{} {:?}", commit.short_id(), commit.summary());
        for change in file_changes(repo, id, parents.first().copied())? {
            if agent {
                for (path, other) in [
                    (change.old.clone(), change.new.clone()),
                    (change.new.clone(), change.old.clone()),
                ] {
                    let Some(path) = path else { continue };
                    let other = other.filter(|o| *o != path);
                    touched.entry(path).or_default().push(AgentTouch {
                        commit: id,
                        label: label.clone(),
                        other,
                    });
                }
                continue;
            }
            for path in [change.old, change.new].into_iter().flatten() {
                for (key, touches) in touched.iter_mut() {
                    let mut kept = Vec::new();
                    for t in touches.drain(..) {
                        let about = *key == path || t.other.as_deref() == Some(path.as_str());
                        if about && git::commit::descends_from(repo, id, t.commit)? {
                            continue;
                        }
                        kept.push(t);
                    }
                    *touches = kept;
                }
            }
        }
    }

    let mut put_back = Vec::new();
    let mut not_put_back = Vec::new();
    for (path, touches) in touched {
        if touches.is_empty() {
            continue;
        }
        let mut by: Vec<String> = Vec::new();
        for t in touches {
            if !by.contains(&t.label) {
                by.push(t.label);
            }
        }
        let base = match range.base {
            Some(b) => worktree_copy::file_at(repo, b, &path)?,
            None => None,
        };
        let listed = policy.tests.is_test_file(&path);
        let is_harness = harness.is_match(&path);
        let unasked = loaded_unasked(&path);
        let rust_unit_tests = path.ends_with(".rs")
            && !collects(&path)
            && !listed
            && base
                .as_ref()
                .is_some_and(|b| memchr::memmem::find(&b.bytes, b"#[test]").is_some());
        if rust_unit_tests {
            not_put_back.push((
                path,
                "Rust unit tests inside a source file are not put back (the file is the agent's code too): they run as the tip has them".to_string(),
            ));
            continue;
        }
        if listed || is_harness || unasked {
            put_back.push(PutBack {
                test_file: listed && !is_harness && !unasked && collects(&path),
                remove_if_new: is_harness || unasked,
                path,
                base,
                by,
            });
        }
    }
    let frozen = match &base_tree {
        Some(tree) => load_freeze(tree, &policy)
            .map(|f| f.leases.iter().map(|l| id_key(&l.nodeid)).collect())
            .unwrap_or_default(),
        None => Vec::new(),
    };
    Ok(Plan {
        spec: range.spec,
        base: range.base,
        tip: range.tip,
        base_short: base_short.unwrap_or_else(|| "the root".to_string()),
        policy,
        put_back,
        not_put_back,
        frozen,
        python: PythonTests::new(&pytest.python_functions),
    })
}

impl Plan {
    /// Writes the tip's files into `dir`, then the base's version of every put-back file,
    /// and removes what the base did not have where an agent's new file would change how
    /// the tests run. Nothing is written through a symlink: a directory on the way that the
    /// tip made a symlink (or a file) gives way to a real directory in the copy.
    pub fn materialize(&self, repo: &Repository, dir: &Path) -> anyhow::Result<()> {
        worktree_copy::write_commit_to(repo, self.tip, dir)?;
        for p in &self.put_back {
            let target = dir.join(&p.path);
            let in_copy =
                |e: std::io::Error| anyhow::anyhow!("cannot put back {} in the copy: {e}", p.path);
            match &p.base {
                Some(file) => {
                    real_directories(dir, &p.path).map_err(in_copy)?;
                    remove_entry(&target).map_err(in_copy)?;
                    write_file(&target, file).map_err(in_copy)?;
                }
                None if p.remove_if_new => {
                    real_directories(dir, &p.path).map_err(in_copy)?;
                    remove_entry(&target).map_err(in_copy)?;
                }
                None => {}
            }
        }
        Ok(())
    }

    /// The put-back test files, for the runner's own selection (`{files}`).
    pub fn test_files(&self) -> Vec<&str> {
        self.put_back
            .iter()
            .filter(|p| p.test_file && p.base.is_some())
            .map(|p| p.path.as_str())
            .collect()
    }

    /// Scores the run in `dir` as `guard run` does, then holds every put-back test module to
    /// each of its base tests: each must have a record, and none may fail or error, nor be
    /// skipped unless the base's test is marked to skip.
    pub fn judge(
        &self,
        dir: &Path,
        artifacts: &Artifacts,
        today: Date,
    ) -> anyhow::Result<Evaluation> {
        let ws = crate::workspace::Workspace::at(dir);
        let source = crate::source::WorkTree { ws: &ws };
        let mut scored = score(&source, &self.policy, artifacts, today)?;
        // The base's tests of each put-back module, by the name its runner gives them.
        let files: Vec<(&PutBack, Module, Vec<test_source::TestFunction>)> = self
            .put_back
            .iter()
            .filter(|p| p.test_file)
            .filter_map(|p| {
                let base = p.base.as_ref()?;
                let tests = test_source::parse_with(&p.path, &base.bytes, &self.python)?.functions;
                Some((p, Module::new(&p.path), tests))
            })
            .collect();
        // (file index, qualified test name) -> worst outcome (a skip counts worse than a
        // pass here: a pass in one report must not hide a skip in another).
        let mut seen: BTreeMap<(usize, String), Outcome> = BTreeMap::new();
        for report in &artifacts.junit {
            read_junit(report, &mut |case| {
                let frozen = record_keys(&case.classname, &case.name)
                    .iter()
                    .any(|k| self.frozen.contains(k));
                if frozen {
                    return;
                }
                for (i, (_, module, _)) in files.iter().enumerate() {
                    let Some(test) =
                        module.test_of(&case.classname, case.file.as_deref(), &case.name)
                    else {
                        continue;
                    };
                    let slot = seen.entry((i, test)).or_insert(case.outcome);
                    *slot = worse(*slot, case.outcome);
                }
            })?;
        }
        for (i, (put, _, tests)) in files.iter().enumerate() {
            let by = put.by.join(", ");
            let help = format!(
                "the agent's code fails the humans' test: fix the code, not the test; if the behaviour is meant to change, a human changes {} in a commit of their own (not an agent's), and that version is the one run",
                put.path
            );
            for test in tests {
                let what = match seen.get(&(i, test.name.clone())) {
                    None => "did not run (no record in the reports)",
                    Some(Outcome::Passed | Outcome::Flaky) => continue,
                    Some(Outcome::Skipped) if !test.skips.is_empty() => continue,
                    Some(Outcome::Failed) => "fails",
                    Some(Outcome::Errored) => "errors",
                    Some(Outcome::Skipped) => "is skipped",
                };
                scored.findings.push(
                    Finding::new(
                        Code::OldTestFails,
                        format!(
                            "the base's test {}::{} {what} against the range's code ({} as {} has it, put back over the change by {by})",
                            put.path, test.name, put.path, self.base_short
                        ),
                    )
                    .path(&put.path)
                    .line(test.line)
                    .test(format!("{}::{}", put.path, test.name))
                    .help(help.clone()),
                );
            }
        }
        Ok(scored)
    }
}

/// Which records are a test module's, and by what name: pytest's dotted classname (or the
/// record's `file`) gives the module and its classes, the name the function (its parameters
/// dropped); a nextest binary built from a `tests/` file gives the function's path.
struct Module {
    matcher: PathMatcher,
    /// `tests.test_calc` for `tests/test_calc.py`.
    dotted: String,
    path: String,
}

impl Module {
    fn new(path: &str) -> Module {
        Module {
            matcher: PathMatcher::new(path),
            dotted: path.trim_end_matches(".py").replace('/', "."),
            path: path.to_string(),
        }
    }

    /// The record's test as the base file names its tests (`TestX::test_y`, `it_works`),
    /// when the record is of this module.
    fn test_of(&self, classname: &str, file: Option<&str>, name: &str) -> Option<String> {
        self.matcher.place(classname, file)?;
        let function = name.split('[').next().unwrap_or(name);
        if !self.path.ends_with(".py") {
            return Some(function.to_string());
        }
        // The classes after the module in the dotted classname (`tests.test_calc.TestX`).
        let classes = classname
            .strip_prefix(self.dotted.as_str())
            .map(|rest| rest.trim_start_matches('.'))?;
        Some(if classes.is_empty() {
            function.to_string()
        } else {
            format!("{}::{function}", classes.replace('.', "::"))
        })
    }
}

/// The worse of two outcomes for a put-back test: a failure or error over a skip over a pass.
fn worse(a: Outcome, b: Outcome) -> Outcome {
    let rank = |o: Outcome| match o {
        Outcome::Passed => 0,
        Outcome::Flaky => 1,
        Outcome::Skipped => 2,
        Outcome::Failed => 3,
        Outcome::Errored => 4,
    };
    if rank(b) > rank(a) { b } else { a }
}

/// Makes every directory on the way to `rel` under `root` a real directory of the copy: a
/// symlink or a file the tip put there is removed first (a write through it could leave the
/// copy).
fn real_directories(root: &Path, rel: &str) -> std::io::Result<()> {
    let mut at = root.to_path_buf();
    let parts: Vec<&str> = rel.split('/').collect();
    for part in &parts[..parts.len().saturating_sub(1)] {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.is_dir() => continue,
            Ok(_) => std::fs::remove_file(&at)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        std::fs::create_dir(&at)?;
    }
    Ok(())
}

/// Removes whatever is at `path` (a file, a symlink, a directory), if anything.
fn remove_entry(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Writes a put-back file with its mode (a new file: nothing there to follow).
fn write_file(path: &Path, file: &FileAt) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(if file.executable { 0o755 } else { 0o644 })
        .open(path)?;
    out.write_all(&file.bytes)
}
