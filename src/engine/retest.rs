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

use crate::engine::context::{WhoContext, base_of, load_policy, load_signers};
use crate::engine::score::{Artifacts, Evaluation, score};
use crate::evidence::junit::read_junit;
use crate::evidence::record::Outcome;
use crate::evidence::test_source::{self, PythonTests, TestItems};
use crate::git::commit::Commit;
use crate::git::tree_source::GitTree;
use crate::git::worktree_copy::{self, FileAt, file_changes};
use crate::git::{self, ObjectId, Repository, range};
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
    /// A Rust source file whose tests were put back inside the tip's code (`base` is the
    /// tip's file with the base's test items in place of its own): not a file a runner
    /// selects.
    pub spliced: bool,
}

/// What `guard retest` does for a range.
pub struct Plan {
    pub spec: String,
    pub base: Option<ObjectId>,
    pub tip: ObjectId,
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

/// Files that Python or pytest load without being named: an agent's new one changes how
/// every test runs.
fn loaded_unasked(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    // At the root or in `src/` (first on PYTHONPATH): what shadows pytest or its parts.
    let top = path.strip_prefix("src/").unwrap_or(path);
    matches!(
        name,
        "conftest.py" | "__init__.py" | "sitecustomize.py" | "usercustomize.py"
    )
    // pytest's settings, wherever: pytest takes them from the test files' common directory
    // before the root's.
    || matches!(
        name,
        "pytest.ini" | ".pytest.ini" | "pytest.toml" | ".pytest.toml" | "tox.ini" | "setup.cfg" | "pyproject.toml"
    )
    // Compiled modules Python takes instead of, or beside, the source put back (an
    // unchecked hash-based .pyc is used without reading the .py), and path files.
    || [".pyc", ".pyo", ".so", ".pyd", ".pth"].iter().any(|e| name.ends_with(e))
    || path.contains("__pycache__/")
    || matches!(
        top,
        "pytest.py" | "py.py" | "_pytest.py" | "pluggy.py" | "iniconfig.py"
    )
    || top.starts_with("_pytest/")
    || top.starts_with("pluggy/")
    || top.starts_with("iniconfig/")
}

/// Cargo's files that decide how the tests build, put back whole: a build script (it runs
/// before the crate compiles, and can rewrite what compiles) and cargo's own settings.
fn cargo_build_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name == "build.rs" && !path.contains("/src/") && !path.starts_with("src/")
        || path == ".cargo/config.toml"
        || path == ".cargo/config"
        || path.ends_with("/.cargo/config.toml")
        || path.ends_with("/.cargo/config")
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
    let commits = range::commits(repo, range.tip, range.base.as_slice())?;
    let mut plan = Plan::new(
        repo,
        Scope {
            base: range.base,
            tip: range.tip,
            base_short,
            base_tree: base_tree.as_ref(),
            commits: commits.ids(),
        },
        &who,
    )?;
    plan.spec = range.spec;
    Ok(plan)
}

/// `guard check`'s and the hooks' side of a retest: the reports of `guard retest`'s run
/// (`artifacts.retest_junit`) hold every test an agent commit of `scope` changed, as the base
/// has it. A report named and absent, or none where the hooks require them, while the range
/// put a test back, is a finding: the humans' tests did not run.
pub(super) fn judge_reports(
    repo: &Repository,
    scope: Scope,
    who: &WhoContext,
    artifacts: &Artifacts,
) -> anyhow::Result<Vec<Finding>> {
    if artifacts.retest_junit.is_empty() && !artifacts.retest_required {
        return Ok(Vec::new());
    }
    let plan = Plan::new(repo, scope, who)?;
    if !plan.has_old_tests() {
        return Ok(Vec::new());
    }
    let changed: Vec<&str> = plan
        .put_back
        .iter()
        .filter(|p| p.test_file && p.base.is_some())
        .map(|p| p.path.as_str())
        .collect();
    let not_run = |why: String| {
        Finding::new(
            Code::OldTestFails,
            format!(
                "{why}, and agent commits changed {}: the humans' tests did not run against the range's code",
                changed.join(", ")
            ),
        )
        .path(changed[0])
        .help(format!(
            "run `guard retest {} --junit retest-junit.xml -- <your test command writing retest-junit.xml>` on the range and pass its report (`--retest-junit`, or `retest-junit.xml` in the server's artifact directory)",
            plan.spec
        ))
    };
    let mut findings = Vec::new();
    let mut present = Vec::new();
    for path in &artifacts.retest_junit {
        if std::fs::symlink_metadata(path).is_ok() {
            present.push(path.as_path());
        } else {
            findings.push(not_run(format!(
                "no report of `guard retest` at {}",
                path.display()
            )));
        }
    }
    if artifacts.retest_junit.is_empty() {
        findings.push(not_run(
            "no report of `guard retest` among the artifacts".to_string(),
        ));
    }
    if !present.is_empty() {
        findings.extend(plan.old_test_findings(&present)?);
    }
    Ok(findings)
}

/// The commits a plan covers: `commits` (oldest first) lead from `base` to `tip`.
pub(super) struct Scope<'a, 'r> {
    pub base: Option<ObjectId>,
    pub tip: ObjectId,
    pub base_short: Option<String>,
    pub base_tree: Option<&'a GitTree<'r>>,
    pub commits: &'a [ObjectId],
}

impl Plan {
    /// What an agent's commits of `scope` changed that the humans did not approve since,
    /// under `who`'s policy (the base's).
    pub(super) fn new(repo: &Repository, scope: Scope, who: &WhoContext) -> anyhow::Result<Plan> {
        let policy = who.policy;
        let base_tree = scope.base_tree;
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
        let pytest = match base_tree {
            Some(tree) => PytestConfig::read(tree).unwrap_or_default(),
            None => PytestConfig::default(),
        };
        let collects = collector(&pytest);
        // What `put_back` takes: test files, harness files, what Python loads unasked, and
        // Rust sources (unit tests) and manifests.
        let relevant = |path: &str| {
            policy.tests.is_test_file(path)
                || harness.is_match(path)
                || cargo_build_file(path)
                || loaded_unasked(path)
                || path.ends_with(".rs")
                || path.ends_with("Cargo.toml")
        };
        let changed = changed_by_the_range(repo, &scope, &relevant, who)?;
        let (put_back, not_put_back) = put_back(
            repo,
            (scope.base, scope.tip),
            changed,
            policy,
            &harness,
            &collects,
        )?;
        let frozen = match base_tree {
            Some(tree) => load_freeze(tree, policy)
                .map(|f| f.leases.iter().map(|l| id_key(&l.nodeid)).collect())
                .unwrap_or_default(),
            None => Vec::new(),
        };
        let base_short = scope.base_short.unwrap_or_else(|| "the root".to_string());
        Ok(Plan {
            spec: format!("{base_short}..{}", git::short_id(repo, scope.tip)),
            base: scope.base,
            tip: scope.tip,
            base_short,
            policy: policy.clone(),
            put_back,
            not_put_back,
            frozen,
            python: PythonTests::new(&pytest.python_functions)
                .with_classes(&pytest.python_classes)
                .with_files(&pytest.python_files),
        })
    }
}

/// Whether the runner collects `path` as a test module: pytest's `python_files` (a name
/// anywhere, or with a `/` the end of a path, as pytest's fnmatch_ex reads it), or a Cargo
/// integration test (`tests/NAME.rs`, `tests/NAME/main.rs`, at the root or in a member).
fn collector(pytest: &PytestConfig) -> impl Fn(&str) -> bool + use<> {
    let mut collected = GlobSetBuilder::new();
    for pattern in &pytest.python_files {
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
    move |path: &str| {
        if path.ends_with(".py") {
            return collected.is_match(path);
        }
        let in_tests = path
            .strip_prefix("tests/")
            .or_else(|| path.rsplit_once("/tests/").map(|(_, rest)| rest));
        in_tests.is_some_and(|rest| {
            (rest.ends_with(".rs") && !rest.contains('/')) || rest.ends_with("/main.rs")
        })
    }
}

/// Per path whose version at the tip is not the base's, the agent commits of the range that
/// changed it (empty when only merges did): what the range changed that no human wrote.
/// The tip is compared with the base itself, not commit by commit, so a merge that takes an
/// older version of a test from an older first parent changes it too. A version a human's
/// own commit of the range wrote (a non-merge commit: a human's merge of an agent's branch
/// writes what the branch brought) is the humans' approval: that path is left as the tip
/// has it. Order is not read at all: commit dates are the agent's to write.
fn changed_by_the_range(
    repo: &Repository,
    scope: &Scope,
    relevant: &dyn Fn(&str) -> bool,
    who: &WhoContext,
) -> anyhow::Result<BTreeMap<String, Vec<String>>> {
    // The paths whose tip version is not the base's, and that a retest puts back: most
    // ranges (and pushes) change none, and then no commit is read.
    let mut candidates: Vec<String> = Vec::new();
    for change in file_changes(repo, scope.tip, scope.base, None)? {
        for path in [change.old, change.new].into_iter().flatten() {
            if relevant(&path) && !candidates.contains(&path) {
                candidates.push(path);
            }
        }
    }
    if candidates.is_empty() {
        return Ok(BTreeMap::new());
    }
    // (path, the version a human commit left there: `None` for a deletion).
    let mut human_wrote: std::collections::HashSet<(String, Option<ObjectId>)> =
        std::collections::HashSet::new();
    let mut agent_changed: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for &id in scope.commits {
        let commit = Commit::find(repo, id)?;
        let agent = who.agent(&commit).is_some();
        let parents = worktree_copy::parents(repo, id)?;
        if parents.len() > 1 && !agent {
            continue;
        }
        let label = format!("{} {:?}", commit.short_id(), commit.summary());
        let changes = file_changes(repo, id, parents.first().copied(), Some(&candidates))?;
        for change in changes {
            for path in [change.old, change.new].into_iter().flatten() {
                if agent {
                    let labels = agent_changed.entry(path).or_default();
                    if !labels.contains(&label) {
                        labels.push(label.clone());
                    }
                } else {
                    let version = worktree_copy::entry_id(repo, id, &path)?;
                    human_wrote.insert((path, version));
                }
            }
        }
    }
    let mut changed = BTreeMap::new();
    for path in candidates {
        let at_tip = worktree_copy::entry_id(repo, scope.tip, &path)?;
        if human_wrote.contains(&(path.clone(), at_tip)) {
            continue;
        }
        let labels = agent_changed.get(&path).cloned().unwrap_or_default();
        changed.insert(path, labels);
    }
    Ok(changed)
}

type NotPutBack = Vec<(String, String)>;

/// Which touched files are put back (test files, harness files, files loaded unasked), and
/// which cannot be (with why).
fn put_back(
    repo: &Repository,
    (base, tip): (Option<ObjectId>, ObjectId),
    changed: BTreeMap<String, Vec<String>>,
    policy: &Policy,
    harness: &globset::GlobSet,
    collects: &dyn Fn(&str) -> bool,
) -> anyhow::Result<(Vec<PutBack>, NotPutBack)> {
    let mut put_back = Vec::new();
    let mut not_put_back = Vec::new();
    for (path, mut by) in changed {
        if by.is_empty() {
            by.push("a merge of the range (no commit of it wrote this version itself)".to_string());
        }
        let base_file = match base {
            Some(b) => worktree_copy::file_at(repo, b, &path)?,
            None => None,
        };
        let listed = policy.tests.is_test_file(&path);
        let is_harness = harness.is_match(&path) || cargo_build_file(&path);
        let unasked = loaded_unasked(&path);
        // Cargo.toml also holds the dependencies the agent's code may need: not put back,
        // but its targets decide which files build as tests (a `[[test]]` path, `autotests`,
        // `[lib] test`), so the report says it changed.
        if path == "Cargo.toml" || path.ends_with("/Cargo.toml") {
            not_put_back.push((
                path,
                "Cargo.toml is not put back (it holds the code's dependencies too); its [profile], [lib], [[bin]], [[test]] and build keys decide how and which files build as tests, and an agent's change of them is a harness edit guard check rejects".to_string(),
            ));
            continue;
        }
        let rust_unit_tests = path.ends_with(".rs")
            && !collects(&path)
            && !listed
            && base_file
                .as_ref()
                .is_some_and(|b| memchr::memmem::find(&b.bytes, b"#[test]").is_some());
        if rust_unit_tests {
            let Some(base_file) = base_file else {
                continue;
            };
            match splice_rust_tests(repo, tip, &path, base_file)? {
                Ok(spliced) => put_back.push(PutBack {
                    path,
                    base: Some(spliced),
                    by,
                    test_file: true,
                    remove_if_new: false,
                    spliced: true,
                }),
                Err(why) => not_put_back.push((path, why)),
            }
            continue;
        }
        if listed || is_harness || unasked {
            put_back.push(PutBack {
                test_file: listed && !is_harness && !unasked && collects(&path),
                remove_if_new: is_harness || unasked,
                path,
                base: base_file,
                by,
                spliced: false,
            });
        }
    }
    Ok((put_back, not_put_back))
}

/// The tip's Rust source file `path` with the base's tests in place of its own: the tip's
/// test items (`#[cfg(test)]` modules and items, test functions) are cut out, and the base's
/// go where the first of them stood (or at the end). `Err` says why it cannot be done.
fn splice_rust_tests(
    repo: &Repository,
    tip: ObjectId,
    path: &str,
    base: FileAt,
) -> anyhow::Result<Result<FileAt, String>> {
    let Some(tip_file) = worktree_copy::file_at(repo, tip, path)? else {
        return Ok(Err(
            "the range deleted this Rust source file: its unit tests are gone with it".to_string(),
        ));
    };
    let unreadable = |side: &str| {
        Err(format!(
            "Rust unit tests inside a source file are not put back: the {side}'s file does not parse cleanly, and a splice could cut through code; they run as the tip has them"
        ))
    };
    let Some(base_items) = test_source::rust_test_items(&base.bytes) else {
        return Ok(unreadable("base"));
    };
    let Some(tip_items) = test_source::rust_test_items(&tip_file.bytes) else {
        return Ok(unreadable("tip"));
    };
    Ok(Ok(FileAt {
        bytes: splice(&base.bytes, &base_items, &tip_file.bytes, &tip_items),
        executable: tip_file.executable,
    }))
}

/// `tip` with `tip_items` cut out and `base`'s `base_items` in their place.
fn splice(base: &[u8], base_items: &TestItems, tip: &[u8], tip_items: &TestItems) -> Vec<u8> {
    let base_tests: Vec<u8> = match base_items {
        // The whole file is test code (`#![cfg(test)]`): the base's file.
        TestItems::Whole => return base.to_vec(),
        TestItems::Items(ranges) => {
            let mut out = Vec::new();
            for r in ranges {
                out.extend_from_slice(&base[r.clone()]);
                out.extend_from_slice(b"\n\n");
            }
            out
        }
    };
    let ranges: &[std::ops::Range<usize>] = match tip_items {
        TestItems::Whole => &[],
        TestItems::Items(ranges) => ranges,
    };
    let mut out = Vec::with_capacity(tip.len() + base_tests.len());
    let mut at = 0;
    let mut placed = false;
    for r in ranges {
        out.extend_from_slice(&tip[at..r.start]);
        if !placed {
            out.extend_from_slice(&base_tests);
            placed = true;
        }
        at = r.end;
    }
    out.extend_from_slice(&tip[at..]);
    if !placed {
        if !out.ends_with(b"\n") {
            out.push(b'\n');
        }
        out.push(b'\n');
        out.extend_from_slice(&base_tests);
    }
    out
}

impl Plan {
    /// Writes the tip's files into `dir`, then the base's version of every put-back file,
    /// and removes what the base did not have where an agent's new file would change how
    /// the tests run. Nothing is written through a symlink: a directory on the way that the
    /// tip made a symlink (or a file) gives way to a real directory in the copy.
    pub fn materialize(&self, repo: &Repository, dir: &Path) -> anyhow::Result<()> {
        worktree_copy::write_commit_to(repo, self.tip, dir)?;
        remove_bytecode(dir)
            .map_err(|e| anyhow::anyhow!("cannot remove committed bytecode from the copy: {e}"))?;
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
            .filter(|p| p.test_file && !p.spliced && p.base.is_some())
            .map(|p| p.path.as_str())
            .collect()
    }

    /// Scores the run in `dir` as `guard run` does, then holds every put-back test module to
    /// each of its base tests (`old_test_findings`).
    pub fn judge(
        &self,
        dir: &Path,
        artifacts: &Artifacts,
        today: Date,
    ) -> anyhow::Result<Evaluation> {
        let ws = crate::workspace::Workspace::at(dir);
        let source = crate::source::WorkTree { ws: &ws };
        let mut scored = score(&source, &self.policy, artifacts, today)?;
        let reports: Vec<&Path> = artifacts.junit.iter().map(|p| p.as_path()).collect();
        scored.findings.extend(self.old_test_findings(&reports)?);
        Ok(scored)
    }

    /// Whether any put-back file's tests must be seen in the reports of the run.
    pub fn has_old_tests(&self) -> bool {
        self.put_back
            .iter()
            .any(|p| p.test_file && p.base.is_some())
    }

    /// Each base test of a put-back module must have a record in `reports`, and none may
    /// fail or error, nor be skipped unless the base's test is marked to skip.
    pub fn old_test_findings(&self, reports: &[&Path]) -> anyhow::Result<Vec<Finding>> {
        let mut findings = Vec::new();
        // The base's tests of each put-back module, by the name its runner gives them.
        let files: Vec<(&PutBack, Module, Vec<test_source::TestFunction>)> = self
            .put_back
            .iter()
            .filter(|p| p.test_file)
            .filter_map(|p| {
                let base = p.base.as_ref()?;
                let tests = test_source::parse_with(&p.path, &base.bytes, &self.python)?.functions;
                Some((p, Module::new(&p.path, p.spliced), tests))
            })
            .collect();
        // (file index, qualified test name) -> worst outcome (a skip counts worse than a
        // pass here: a pass in one report must not hide a skip in another).
        let mut seen: BTreeMap<(usize, String), Seen> = BTreeMap::new();
        for report in reports {
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
                    let slot = seen
                        .entry((i, test))
                        .or_insert((case.outcome, case.message.clone()));
                    if worse(slot.0, case.outcome) != slot.0 {
                        *slot = (case.outcome, case.message.clone());
                    }
                }
            })?;
        }
        for (i, (put, _, tests)) in files.iter().enumerate() {
            let by = put.by.join(", ");
            let help = format!(
                "the agent's code fails the humans' test: fix the code, not the test; if the behaviour is meant to change, a human changes {} in a commit of their own (not an agent's), and that version is the one run",
                put.path
            );
            let how = if put.spliced {
                "its tests spliced into the range's code"
            } else {
                "put back over the change"
            };
            for test in tests {
                let record = seen.get(&(i, test.name.clone()));
                let what = match record.map(|(o, _)| *o) {
                    None => "did not run (no record in the reports)",
                    Some(Outcome::Passed | Outcome::Flaky) => continue,
                    Some(Outcome::Skipped) if !test.skips.is_empty() => continue,
                    Some(Outcome::Failed) => "fails",
                    Some(Outcome::Errored) => "errors",
                    Some(Outcome::Skipped) => "is skipped",
                };
                let said = record
                    .and_then(|(_, m)| m.as_deref())
                    .filter(|m| !m.is_empty())
                    .map(|m| format!(": {m}"))
                    .unwrap_or_default();
                findings.push(
                    Finding::new(
                        Code::OldTestFails,
                        format!(
                            "the base's test {}::{} {what} against the range's code ({} as {} has it, {how}; changed by {by}){said}",
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
        Ok(findings)
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
    /// For a Rust source file's unit tests: the module path its file gives them
    /// (`calc::` for `src/calc.rs`, empty for `src/lib.rs`), which starts the names nextest
    /// and libtest give them in the crate's own binary.
    unit_prefix: Option<String>,
}

impl Module {
    fn new(path: &str, unit_tests: bool) -> Module {
        Module {
            matcher: PathMatcher::new(path),
            dotted: path.trim_end_matches(".py").replace('/', "."),
            path: path.to_string(),
            unit_prefix: unit_tests.then(|| rust_module_prefix(path)),
        }
    }

    /// The record's test as the base file names its tests (`TestX::test_y`, `it_works`,
    /// `tests::it_works`), when the record is of this module.
    fn test_of(&self, classname: &str, file: Option<&str>, name: &str) -> Option<String> {
        if let Some(prefix) = &self.unit_prefix {
            // The crate's own binary is the record's classname (`calc`, `calc::bin/calc`);
            // an integration test binary (`calc::decoy`) holds no unit test of a source
            // file, whatever its tests are named.
            if classname.contains("::") && !classname.contains("::bin/") {
                return None;
            }
            return name.strip_prefix(prefix.as_str()).map(str::to_string);
        }
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

/// The module path a Rust source file gives its items, with a trailing `::` (empty for a
/// crate root): `src/calc.rs` and `src/calc/mod.rs` are `calc::`, `member/src/a/b.rs` is
/// `a::b::`, `src/lib.rs`, `src/main.rs` and `src/bin/x.rs` are crate roots.
fn rust_module_prefix(path: &str) -> String {
    let in_src = path
        .strip_prefix("src/")
        .or_else(|| path.rsplit_once("/src/").map(|(_, rest)| rest))
        .unwrap_or(path);
    let in_src = in_src.trim_end_matches(".rs");
    if matches!(in_src, "lib" | "main") || in_src.starts_with("bin/") {
        return String::new();
    }
    let mut parts: Vec<&str> = in_src.split('/').collect();
    if parts.last() == Some(&"mod") {
        parts.pop();
    }
    let mut prefix = parts.join("::");
    if !prefix.is_empty() {
        prefix.push_str("::");
    }
    prefix
}

/// A put-back test's worst record so far: its outcome and failure message.
type Seen = (Outcome, Option<Box<str>>);

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

/// Removes every `__pycache__` directory and `.pyc`/`.pyo` file under `dir`: bytecode in the
/// tree is no one's source, and Python may run it instead of the source put back.
fn remove_bytecode(dir: &Path) -> std::io::Result<()> {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if kind.is_dir() {
                if name == "__pycache__" {
                    std::fs::remove_dir_all(entry.path())?;
                } else if name != ".git" {
                    stack.push(entry.path());
                }
            } else if name.ends_with(".pyc") || name.ends_with(".pyo") {
                std::fs::remove_file(entry.path())?;
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn items(text: &str) -> TestItems {
        test_source::rust_test_items(text.as_bytes()).expect("parses")
    }

    #[test]
    fn test_items_are_cfg_test_items_and_test_functions_with_their_attributes() {
        let text = "use std::fmt;\n\npub fn f() {}\n\n// about the tests\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {}\n}\n\n#[test]\nfn top() {}\n\n#[cfg(test)]\nuse helper::x;\n";
        let TestItems::Items(ranges) = items(text) else {
            panic!("not a whole-file test module");
        };
        let cut: Vec<&str> = ranges.iter().map(|r| &text[r.clone()]).collect();
        assert_eq!(
            cut,
            [
                "// about the tests\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {}\n}",
                "#[test]\nfn top() {}",
                "#[cfg(test)]\nuse helper::x;",
            ]
        );
        assert_eq!(items("#![cfg(test)]\nfn helper() {}\n"), TestItems::Whole);
        // `cfg(not(test))` is the code's, not the tests'.
        assert_eq!(
            items("#[cfg(not(test))]\nmod real {}\n"),
            TestItems::Items(vec![])
        );
        assert!(test_source::rust_test_items(b"fn broken( {").is_none());
    }

    #[test]
    fn splice_puts_the_bases_tests_where_the_tips_stood() {
        let base = "pub fn f() -> i32 { 1 }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn one() { assert_eq!(super::f(), 1); }\n}\n";
        let tip = "pub fn f() -> i32 { 2 }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn one() { assert_eq!(super::f(), 2); }\n}\n\npub fn g() {}\n";
        let out = splice(base.as_bytes(), &items(base), tip.as_bytes(), &items(tip));
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "pub fn f() -> i32 { 2 }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn one() { assert_eq!(super::f(), 1); }\n}\n\n\n\npub fn g() {}\n"
        );
        // The tip dropped its tests: the base's are appended.
        let bare = "pub fn f() -> i32 { 2 }";
        let out = splice(base.as_bytes(), &items(base), bare.as_bytes(), &items(bare));
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "pub fn f() -> i32 { 2 }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn one() { assert_eq!(super::f(), 1); }\n}\n\n"
        );
    }

    #[test]
    fn what_python_loads_unasked_and_what_builds_cargo_tests() {
        for path in [
            "tests/conftest.py",
            "pkg/__init__.py",
            "sitecustomize.py",
            "tests/pytest.ini",
            "tests/setup.cfg",
            "tests/sub/pyproject.toml",
            "tests/__pycache__/helpers.cpython-311.pyc",
            "tests/helpers.pyc",
            "tests/_speedups.so",
            "src/pluggy.py",
            "iniconfig.py",
            "_pytest/main.py",
        ] {
            assert!(loaded_unasked(path), "{path}");
        }
        for path in [
            "tests/test_calc.py",
            "tests/helpers.py",
            "docs/pytest.md",
            "lib/pluggy.py",
        ] {
            assert!(!loaded_unasked(path), "{path}");
        }
        for path in [
            "build.rs",
            "member/build.rs",
            ".cargo/config.toml",
            "member/.cargo/config",
        ] {
            assert!(cargo_build_file(path), "{path}");
        }
        for path in ["src/build.rs", "member/src/build.rs", "Cargo.toml"] {
            assert!(!cargo_build_file(path), "{path}");
        }
    }

    #[test]
    fn a_unit_test_record_must_come_from_the_crates_own_binary() {
        let module = Module::new("src/calc.rs", true);
        assert_eq!(
            module.test_of("calc", None, "calc::tests::adds").as_deref(),
            Some("tests::adds")
        );
        assert_eq!(
            module
                .test_of("calc::bin/calc", None, "calc::tests::adds")
                .as_deref(),
            Some("tests::adds")
        );
        // An integration test binary naming a test like it is a decoy.
        assert_eq!(
            module.test_of("calc::decoy", None, "calc::tests::adds"),
            None
        );
        assert_eq!(module.test_of("calc", None, "other::tests::adds"), None);
    }

    #[test]
    fn a_source_files_module_path_prefixes_its_unit_tests() {
        for (path, prefix) in [
            ("src/lib.rs", ""),
            ("src/main.rs", ""),
            ("src/bin/tool.rs", ""),
            ("src/calc.rs", "calc::"),
            ("src/calc/mod.rs", "calc::"),
            ("src/a/b.rs", "a::b::"),
            ("member/src/a/b.rs", "a::b::"),
        ] {
            assert_eq!(rust_module_prefix(path), prefix, "{path}");
        }
    }
}
