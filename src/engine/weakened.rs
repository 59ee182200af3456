//! Weakened tests in the commits of a range (`check` and both hooks): for each commit an
//! agent made, the test files it changed against each parent, read before and after
//! (`evidence::test_source`) and judged by `rules::evidence::weakened`. Human commits are not
//! read: a human may weaken a test.
//!
//! Only an agent's commits are diffed. Telling who made a commit reads its object (the rest
//! of the audit reads only the commits that change protected paths); in strict mode, where
//! that takes a signature check, the commit is diffed first and checked only when it changed
//! a test file.

use std::collections::HashMap;
use std::rc::Rc;

use crate::engine::context::WhoContext;
use crate::engine::merges::GitMerges;
use crate::evidence::test_source::{self, Language, TestFile};
use crate::git::changed::{self, ChangedFile};
use crate::git::commit::Commit;
use crate::git::range::Commits;
use crate::git::trees::Trees;
use crate::git::{ObjectId, Repository};
use crate::policy::ledger::Severity;
use crate::report::finding::Finding;
use crate::rules::commit::{self as commit_rules, ChangedText, CommitRule};
use crate::rules::evidence::weakened::{self, AgentCommit, FileVersions};

/// What the range's agent commits did to tests, by what the ledger makes of it.
#[derive(Debug, Default)]
pub struct Judged {
    pub rejects: Vec<Finding>,
    pub warnings: Vec<Finding>,
}

/// The shared inputs of a `Judge`, without its repository handle.
#[derive(Clone, Copy)]
pub(super) struct JudgeParts<'a> {
    commits: &'a Commits,
    who: &'a WhoContext<'a>,
    base_name: &'a str,
    /// Compiled once: a judge is made for each block of 64 commits a thread walks, and each
    /// compiled the policy's globs again (BENCHMARKS.md, "Measured choices", M16).
    python: &'a test_source::PythonTests,
}

/// Findings by commit index, from a judge on another thread.
pub(super) struct Found(Vec<(usize, Judged)>);

/// Judges the commits of a range made by an agent, one at a time, in the order the caller
/// walks them (`audit` does it in its newest-first pass over the range's trees, so the
/// directories a commit changed are read once for both).
pub(super) struct Judge<'a> {
    repo: &'a Repository,
    commits: &'a Commits,
    who: &'a WhoContext<'a>,
    /// Names the range's base in the help (`git rebase -i BASE`).
    base_name: &'a str,
    parsed: Parsed,
    /// git's merges of an agent's merges' parents: what such a merge is judged against.
    merges: GitMerges<'a>,
    /// Findings by commit index, to be reported oldest first whatever the walk's order.
    found: Vec<(usize, Judged)>,
}

impl<'a> Judge<'a> {
    pub(super) fn new(
        repo: &'a Repository,
        commits: &'a Commits,
        who: &'a WhoContext<'a>,
        base_name: &'a str,
    ) -> Judge<'a> {
        let python = test_source::PythonTests::new(&who.policy.tests.python_functions)
            .with_classes(&who.policy.tests.python_classes)
            .with_files(&who.policy.tests.python_files);
        Judge::with_python(repo, commits, who, base_name, python)
    }

    /// What a judge of the same commits on another thread needs, with a repository handle
    /// of its own (`from_parts`).
    pub(super) fn parts(&self) -> JudgeParts<'_> {
        JudgeParts {
            commits: self.commits,
            who: self.who,
            base_name: self.base_name,
            python: &self.parsed.python,
        }
    }

    pub(super) fn from_parts(repo: &'a Repository, parts: JudgeParts<'a>) -> Judge<'a> {
        let python = parts.python.clone();
        Judge::with_python(repo, parts.commits, parts.who, parts.base_name, python)
    }

    fn with_python(
        repo: &'a Repository,
        commits: &'a Commits,
        who: &'a WhoContext<'a>,
        base_name: &'a str,
        python: test_source::PythonTests,
    ) -> Judge<'a> {
        Judge {
            repo,
            commits,
            who,
            base_name,
            parsed: Parsed {
                python,
                files: HashMap::default(),
            },
            merges: GitMerges::new(repo),
            found: Vec::new(),
        }
    }

    /// What this judge found, to be added to another's (`absorb`).
    pub(super) fn into_found(self) -> Found {
        Found(self.found)
    }

    pub(super) fn absorb(&mut self, found: Found) {
        self.found.extend(found.0);
    }

    /// What the walk found, oldest commit first.
    pub(super) fn finish(mut self) -> Judged {
        self.found.sort_by_key(|(k, _)| *k);
        let mut judged = Judged::default();
        for (_, one) in self.found {
            judged.rejects.extend(one.rejects);
            judged.warnings.extend(one.warnings);
        }
        judged
    }

    /// Judges commit `k` of the range, its trees read through `trees`.
    pub(super) fn commit(&mut self, k: usize, trees: &Trees) -> anyhow::Result<()> {
        let (repo, who) = (self.repo, self.who);
        let policy = who.policy;
        let weakened_on = policy.tests.weakened != Severity::Off;
        let rules: Vec<&dyn CommitRule> = commit_rules::RULES
            .iter()
            .copied()
            .filter(|r| policy.levels.of(r.code()) != Severity::Off)
            .collect();
        if !weakened_on && rules.is_empty() {
            return Ok(());
        }
        let trailer = &policy.trailers.test_removal;
        let commit = Commit::find(repo, self.commits.ids()[k])?;
        let identity = commit.identity(who.pusher);
        let by_pattern = policy.agents.matched_agent(&identity);
        if by_pattern.is_none() && !who.needs_proof {
            return Ok(());
        }
        let (tree, parents) = self.commits.trees(k);
        let sides: Vec<Option<ObjectId>> = if parents.is_empty() {
            vec![None]
        } else {
            parents.iter().copied().map(Some).collect()
        };
        // One diff per parent for both: the test files, and the files a commit rule reads.
        let is_test = |path: &str| may_hold_tests(&policy.tests, path);
        let ruled = |path: &str| rules.iter().any(|r| r.reads(path));
        let wanted = |path: &str| (weakened_on && is_test(path)) || ruled(path);
        let changed: Vec<Vec<ChangedFile>> = sides
            .iter()
            .map(|&parent| changed::changed_files(trees, tree, parent, &wanted))
            .collect::<Result<_, _>>()?;
        let per_parent: anyhow::Result<Vec<Vec<FileVersions>>> = changed
            .iter()
            .map(|files| {
                let files = files.iter().filter(|f| weakened_on && is_test(&f.path));
                test_files_in(trees, files.cloned().collect(), who, &mut self.parsed)
            })
            .collect();
        let ruled_changed = changed.iter().flatten().any(|f| ruled(&f.path));
        // A test file that cannot be read (an encoding guard does not read) stops the check
        // for an agent's commit only: a human's is not judged here.
        if !ruled_changed
            && per_parent
                .as_ref()
                .is_ok_and(|p| p.iter().all(Vec::is_empty))
        {
            return Ok(());
        }
        let Some(agent) = by_pattern.or_else(|| who.agent(&commit)) else {
            return Ok(());
        };
        let mut one = Judged::default();
        if ruled_changed {
            let may_find = |new: &str| rules.iter().any(|r| r.may_find_in(new));
            let files = rule_files(trees, &changed, &ruled, &may_find)?;
            let view = commit_rules::AgentCommit {
                short: &commit.short_id(),
                subject: &commit.summary(),
                agent: &agent,
                files: &files,
                base: self.base_name,
            };
            for rule in &rules {
                one.rejects.extend(rule.judge(&view));
            }
        }
        let per_parent = per_parent
            .map_err(|e| e.context(format!("commit {} by an agent", commit.short_id())))?;
        let found = if !weakened_on || per_parent.iter().all(Vec::is_empty) {
            Vec::new()
        } else if per_parent.len() == 1 {
            weakened::weakenings(&per_parent[0])
        } else {
            self.merge_weakenings(k, per_parent)
                .map_err(|e| e.context(format!("merge {} by an agent", commit.short_id())))?
        };
        if found.is_empty() {
            if !one.rejects.is_empty() {
                self.found.push((k, one));
            }
            return Ok(());
        }
        let facts = AgentCommit {
            short: commit.short_id(),
            subject: commit.summary(),
            agent,
            has_trailer: trailer.present_in(&identity.trailers.block),
        };
        let findings = weakened::findings(found, &facts, trailer, self.base_name);
        match policy.tests.weakened {
            Severity::Warn => one.warnings.extend(findings),
            _ => one.rejects.extend(findings),
        }
        self.found.push((k, one));
        Ok(())
    }
}

impl Judge<'_> {
    /// What agent merge `k` does to tests: against git's own merge of its parents, which
    /// brings what the parents did. Where that merge conflicts, what the merge does against
    /// each parent (`per_parent`: its test files against each), unless another parent's side
    /// did the same against the merge base (`weakened::against_sides`). A test gutted in a
    /// merge with a branch that predates it shows against the merged file, where against the
    /// old parent alone it was new.
    fn merge_weakenings(
        &mut self,
        k: usize,
        per_parent: Vec<Vec<FileVersions>>,
    ) -> anyhow::Result<Vec<weakened::Weakening>> {
        let (tree, parent_trees) = self.commits.trees(k);
        let (handle, merged) = self.merges.of_commit(self.commits, k)?;
        let trees = Trees::new(handle.repo())?;
        let against_merge =
            test_files(&trees, tree, Some(merged.tree), self.who, &mut self.parsed)?;
        let clean: Vec<FileVersions> = against_merge
            .into_iter()
            .filter(|f| !merged.conflicted.contains(&f.path))
            .collect();
        let mut found = weakened::weakenings(&clean);
        if merged.conflicted.is_empty() {
            return Ok(found);
        }
        let conflicted = |files: Vec<FileVersions>| -> Vec<weakened::Weakening> {
            let files: Vec<FileVersions> = files
                .into_iter()
                .filter(|f| merged.conflicted.contains(&f.path))
                .collect();
            weakened::weakenings(&files)
        };
        let mut sides = Vec::with_capacity(parent_trees.len());
        for &side in parent_trees {
            let files = test_files(&trees, side, merged.base, self.who, &mut self.parsed)?;
            sides.push(conflicted(files));
        }
        let per_parent = per_parent.into_iter().map(conflicted).collect();
        found.extend(weakened::against_sides(per_parent, &sides));
        Ok(found)
    }
}

/// The files of `changed` (a commit's changes against each parent) that `ruled` accepts
/// and whose new text `may_find` something in, with their text on each side; a file that is
/// not UTF-8 reads as absent, and one larger than `git::MAX_TEXT_BLOB` is an error (its size
/// is read first: it is never inflated).
fn rule_files(
    trees: &Trees,
    changed: &[Vec<ChangedFile>],
    ruled: &dyn Fn(&str) -> bool,
    may_find: &dyn Fn(&str) -> bool,
) -> anyhow::Result<Vec<ChangedText>> {
    let text = |id: Option<ObjectId>, path: &str| -> anyhow::Result<Option<String>> {
        let Some(id) = id else { return Ok(None) };
        Ok(String::from_utf8(trees.text_blob(id, path)?).ok())
    };
    let mut paths: Vec<&ChangedFile> = changed
        .iter()
        .flatten()
        .filter(|f| ruled(&f.path))
        .collect();
    paths.sort_by(|a, b| a.path.cmp(&b.path));
    paths.dedup_by(|a, b| a.path == b.path);
    let mut out = Vec::with_capacity(paths.len());
    for file in paths {
        let new = text(file.new, &file.path)?;
        if !new.as_deref().is_some_and(may_find) {
            continue;
        }
        let mut old = Vec::with_capacity(changed.len());
        for side in changed {
            // A parent the file did not change against holds what the commit holds.
            let id = match side.iter().find(|f| f.path == file.path) {
                Some(f) => f.old,
                None => file.new,
            };
            old.push(text(id, &file.path)?);
        }
        out.push(ChangedText {
            path: file.path.clone(),
            old,
            new,
        });
    }
    Ok(out)
}

/// Test files read, by blob, by whether the path was in `[tests] paths` and by the language
/// its path names (the same blob at `a.rs` and at `test_a.py` reads differently: a decoy
/// copy at a Rust path, read first, must not stand for the Python file). Along a range each
/// commit's new version of a file is the next commit's old one: it is parsed once.
/// Bounded: emptied when full.
#[derive(Default)]
struct Parsed {
    files: HashMap<ParsedKey, Option<Rc<TestFile>>, foldhash::fast::RandomState>,
    /// Which Python functions are tests (pytest's `python_functions` at the policy's
    /// revision).
    python: test_source::PythonTests,
}

/// What a parsed version is held by: its blob, whether its path is listed, its language,
/// and whether pytest collects a module of its name (the same blob moved to a name
/// `python_files` misses runs no test).
type ParsedKey = (ObjectId, bool, Option<Language>, bool);

fn parsed_key(
    id: ObjectId,
    path: &str,
    listed: bool,
    python: &test_source::PythonTests,
) -> ParsedKey {
    (id, listed, Language::of(path), python.collects_module(path))
}

/// Versions of test files held at once, at most.
const PARSED_HELD: usize = 256;

/// Test file text read ahead for parsing on every core at once, at most (about).
const READ_AHEAD_BYTES: usize = 32 << 20;

/// Test file text read ahead is parsed on every core from this much on, and on the calling
/// thread below it.
const PARALLEL_FROM_BYTES: usize = 256 << 10;

impl Parsed {
    /// The test functions of the blob `id` at `path`. A file outside the test paths (Rust
    /// only) whose text cannot hold a test is not parsed: it holds none.
    fn get(
        &mut self,
        trees: &Trees,
        path: &str,
        id: ObjectId,
        listed: bool,
    ) -> anyhow::Result<Option<Rc<TestFile>>> {
        let key = parsed_key(id, path, listed, &self.python);
        if let Some(known) = self.files.get(&key) {
            return Ok(known.clone());
        }
        let bytes = trees.text_blob(id, path)?;
        let file = read_test_file(path, &bytes, listed, &self.python)?.map(Rc::new);
        self.hold(key, file.clone());
        Ok(file)
    }

    fn hold(&mut self, key: ParsedKey, file: Option<Rc<TestFile>>) {
        if self.files.len() >= PARSED_HELD {
            self.files.clear();
        }
        self.files.insert(key, file);
    }

    /// Parses the versions `wanted` (blob, path, listed) not held yet on up to every core,
    /// when there are several: a commit that reformats many test files (a bot's, on a real
    /// history) then costs about its files' parsing divided by the cores, not their sum.
    /// What is not parsed here, `get` parses as before.
    fn read_ahead(
        &mut self,
        trees: &Trees,
        wanted: &[(ObjectId, &str, bool)],
    ) -> anyhow::Result<()> {
        let mut todo: Vec<(ParsedKey, &str)> = Vec::new();
        for &(id, path, listed) in wanted {
            let key = parsed_key(id, path, listed, &self.python);
            if !self.files.contains_key(&key) && !todo.iter().any(|(k, _)| *k == key) {
                todo.push((key, path));
            }
        }
        // No more than the cache holds, nor more text at once than `READ_AHEAD_BYTES` (a
        // commit of many huge files is not held in memory whole): the rest `get` parses one
        // at a time.
        todo.truncate(PARSED_HELD);
        if todo.len() < 2 {
            return Ok(());
        }
        let (mut texts, mut held): (Vec<Vec<u8>>, usize) = (Vec::new(), 0);
        for &((id, _, _, _), path) in &todo {
            if held >= READ_AHEAD_BYTES {
                break;
            }
            let text = trees.text_blob(id, path)?;
            held += text.len();
            texts.push(text);
        }
        todo.truncate(texts.len());
        // Starting threads costs more than parsing a few small files (a commit's usual
        // share): those are parsed here.
        let threads = if held >= PARALLEL_FROM_BYTES {
            crate::parallel::cores()
        } else {
            1
        };
        let python = &self.python;
        let parsed = crate::parallel::each(
            todo.len(),
            threads,
            || Some(()),
            |(), i| {
                let ((_, listed, _, _), path) = todo[i];
                read_test_file(path, &texts[i], listed, python)
            },
        );
        let mut read = Vec::with_capacity(parsed.len());
        for (i, file) in parsed.into_iter().enumerate() {
            let Some(file) = file else {
                anyhow::bail!(
                    "reading the test files a commit changed failed: a parser thread panicked"
                );
            };
            read.push((i, file?));
        }
        if self.files.len() + read.len() > PARSED_HELD {
            self.files.clear();
        }
        for (i, file) in read {
            self.files.insert(todo[i].0, file.map(Rc::new));
        }
        Ok(())
    }
}

/// The test functions of `text` at `path`; a file outside the test paths whose text cannot
/// hold a test (no `test` in it) holds none, unparsed. A Python file that declares a source
/// encoding guard does not read as Python does is an error: what its tests assert cannot be
/// told, and an agent's commit is not judged without it.
fn read_test_file(
    path: &str,
    text: &[u8],
    listed: bool,
    python: &test_source::PythonTests,
) -> anyhow::Result<Option<TestFile>> {
    if let Some((encoding, line)) = test_source::unread_encoding(path, text) {
        anyhow::bail!(
            "{path}:{line}: declares the source encoding {encoding:?}, which Python decodes the file from and guard does not read, so what its tests assert cannot be told; save the file as UTF-8 and drop the coding line"
        );
    }
    Ok(if listed || memchr::memmem::find(text, b"test").is_some() {
        test_source::parse_with(path, text, python)
    } else {
        Some(TestFile::default())
    })
}

/// Whether the file at `path` is read for tests: a Python file `[tests] paths` names, or any
/// Rust file (unit tests live beside the code).
fn may_hold_tests(tests: &crate::policy::ledger::TestsPolicy, path: &str) -> bool {
    match Language::of(path) {
        Some(Language::Python) => tests.is_test_file(path),
        Some(Language::Rust) => true,
        None => false,
    }
}

/// The test files `tree` changed against `parent`, read on both sides: files the ledger's
/// `[tests] paths` name, and Rust files anywhere that hold test functions on either side.
fn test_files(
    trees: &Trees,
    tree: ObjectId,
    parent: Option<ObjectId>,
    who: &WhoContext,
    parsed: &mut Parsed,
) -> anyhow::Result<Vec<FileVersions>> {
    let wanted = |path: &str| may_hold_tests(&who.policy.tests, path);
    let changed = changed::changed_files(trees, tree, parent, &wanted)?;
    test_files_in(trees, changed, who, parsed)
}

/// The test files of `changed` (a commit's changes against one parent), read on both sides.
fn test_files_in(
    trees: &Trees,
    changed: Vec<ChangedFile>,
    who: &WhoContext,
    parsed: &mut Parsed,
) -> anyhow::Result<Vec<FileVersions>> {
    let tests = &who.policy.tests;
    let versions: Vec<(ObjectId, &str, bool)> = changed
        .iter()
        .flat_map(|f| {
            let listed = tests.is_test_file(&f.path);
            [f.old, f.new]
                .into_iter()
                .flatten()
                .map(move |id| (id, f.path.as_str(), listed))
        })
        .collect();
    parsed.read_ahead(trees, &versions)?;
    let mut files = Vec::new();
    for ChangedFile { path, old, new } in changed {
        let listed = tests.is_test_file(&path);
        let mut read = |id: Option<ObjectId>| match id {
            Some(id) => parsed.get(trees, &path, id, listed),
            None => Ok(None),
        };
        let (old, new) = (read(old)?, read(new)?);
        let has_tests =
            |f: &Option<Rc<TestFile>>| f.as_ref().is_some_and(|f| !f.functions.is_empty());
        if !listed && !has_tests(&old) && !has_tests(&new) {
            continue;
        }
        files.push(FileVersions { path, old, new });
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}
