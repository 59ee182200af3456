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
use crate::git::commit::Commit;
use crate::git::worktree_copy::{self, file_changes};
use crate::git::{Oid, Repository, range};
use crate::policy::ledger::{DEFAULT_LEDGER_PATH, Policy, protect_glob};
use crate::policy::load::load_freeze;
use crate::report::finding::{Code, Finding};
use crate::testid::{PathMatcher, id_key, record_keys};

/// A file put back as the base has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PutBack {
    pub path: String,
    /// The base's bytes; `None` when the base has no such file (an agent added it: there is
    /// nothing of the humans' to put back, and the tip's file stays).
    pub base: Option<Vec<u8>>,
    /// The agent commits that changed it, as `abc1234 "subject"`.
    pub by: Vec<String>,
    /// A test file whose tests must pass (a harness file is put back, not checked).
    pub test_file: bool,
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
}

/// The last word on a file within the range: an agent's commits since the last human change.
#[derive(Default)]
struct LastChange {
    agent: bool,
    by: Vec<String>,
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

    // Oldest first: the last commit to change a file decides whether it is put back.
    let commits = range::commits(repo, range.tip, range.base.as_slice())?;
    let mut last: BTreeMap<String, LastChange> = BTreeMap::new();
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
            for path in [change.old, change.new].into_iter().flatten() {
                let entry = last.entry(path).or_default();
                if agent {
                    entry.agent = true;
                    if !entry.by.contains(&label) {
                        entry.by.push(label.clone());
                    }
                } else {
                    *entry = LastChange::default();
                }
            }
        }
    }

    let mut put_back = Vec::new();
    let mut not_put_back = Vec::new();
    for (path, change) in last {
        if !change.agent {
            continue;
        }
        let base_bytes = match range.base {
            Some(b) => worktree_copy::file_at(repo, b, &path)?,
            None => None,
        };
        let test_file = policy.tests.is_test_file(&path);
        let is_harness = harness.is_match(&path);
        let rust_unit_tests = path.ends_with(".rs")
            && !test_file
            && base_bytes
                .as_deref()
                .is_some_and(|b| memchr::memmem::find(b, b"#[test]").is_some());
        if rust_unit_tests {
            not_put_back.push((
                path,
                "Rust unit tests inside a source file are not put back (the file is the agent's code too): they run as the tip has them".to_string(),
            ));
            continue;
        }
        if test_file || is_harness {
            put_back.push(PutBack {
                path,
                base: base_bytes,
                by: change.by,
                test_file: test_file && !is_harness,
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
    })
}

impl Plan {
    /// Writes the tip's files into `dir`, then the base's version of every put-back file.
    pub fn materialize(&self, repo: &Repository, dir: &Path) -> anyhow::Result<()> {
        worktree_copy::write_commit_to(repo, self.tip, dir)?;
        for p in &self.put_back {
            let Some(bytes) = &p.base else { continue };
            let target = dir.join(&p.path);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent)?;
            }
            // A symlink or directory the tip put there gives way to the humans' file.
            if let Ok(meta) = std::fs::symlink_metadata(&target) {
                if meta.is_dir() {
                    std::fs::remove_dir_all(&target)?;
                } else {
                    std::fs::remove_file(&target)?;
                }
            }
            std::fs::write(&target, bytes)?;
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

    /// Scores the run in `dir` as `guard run` does, then holds every put-back test file to
    /// its tests: each must have a record, and none may fail, error or be skipped.
    pub fn judge(
        &self,
        dir: &Path,
        artifacts: &Artifacts,
        today: Date,
    ) -> anyhow::Result<Evaluation> {
        let ws = crate::workspace::Workspace::at(dir);
        let source = crate::source::WorkTree { ws: &ws };
        let mut scored = score(&source, &self.policy, artifacts, today)?;
        let files: Vec<(&PutBack, PathMatcher)> = self
            .put_back
            .iter()
            .filter(|p| p.test_file && p.base.is_some())
            .map(|p| (p, PathMatcher::new(&p.path)))
            .collect();
        // (file index, test) -> worst outcome.
        let mut seen: BTreeMap<(usize, String), Outcome> = BTreeMap::new();
        for report in &artifacts.junit {
            read_junit(report, &mut |case| {
                for (i, (_, matcher)) in files.iter().enumerate() {
                    if !matcher.matches(&case.classname, case.file.as_deref()) {
                        continue;
                    }
                    let frozen = record_keys(&case.classname, &case.name)
                        .iter()
                        .any(|k| self.frozen.contains(k));
                    if frozen {
                        continue;
                    }
                    let test = if case.classname.is_empty() {
                        case.name.clone()
                    } else {
                        format!("{}::{}", case.classname, case.name)
                    };
                    let slot = seen.entry((i, test)).or_insert(case.outcome);
                    *slot = (*slot).max(case.outcome);
                }
            })?;
        }
        for (i, (put, _)) in files.iter().enumerate() {
            let by = put.by.join(", ");
            let help = format!(
                "the agent's code fails the humans' test: fix the code, not the test; if the behaviour is meant to change, a human changes {} in a commit of their own (not an agent's), and that version is the one run",
                put.path
            );
            let mut any = false;
            for ((file, test), outcome) in &seen {
                if *file != i {
                    continue;
                }
                any = true;
                let what = match outcome {
                    Outcome::Passed | Outcome::Flaky => continue,
                    Outcome::Failed => "fails",
                    Outcome::Errored => "errors",
                    Outcome::Skipped => "is skipped",
                };
                scored.findings.push(
                    Finding::new(
                        Code::OldTestFails,
                        format!(
                            "the base's test {test} {what} against the range's code ({} as {} has it, put back over the change by {by})",
                            put.path, self.base_short
                        ),
                    )
                    .path(&put.path)
                    .test(test)
                    .help(help.clone()),
                );
            }
            if !any {
                scored.findings.push(
                    Finding::new(
                        Code::OldTestFails,
                        format!(
                            "no test of {} (as {} has it, put back over the change by {by}) has a record in the reports: it did not run",
                            put.path, self.base_short
                        ),
                    )
                    .path(&put.path)
                    .help(format!(
                        "run the put-back test files into the JUnit report (`{{files}}` in the command expands to them); {help}"
                    )),
                );
            }
        }
        Ok(scored)
    }
}
