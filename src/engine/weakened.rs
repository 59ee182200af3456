//! Weakened tests in the commits of a range (`check` and both hooks): for each commit an
//! agent made, the test files it changed against each parent, read before and after
//! (`evidence::test_source`) and judged by `rules::evidence::weakened`. Human commits are not
//! read: a human may weaken a test.
//!
//! Only an agent's commits are diffed. Telling who made a commit reads its object (the rest
//! of the audit reads only the commits that change protected paths); in strict mode, where
//! that takes a signature check, the commit is diffed first and checked only when it changed
//! a test file.

use crate::engine::audit::WhoContext;
use crate::evidence::test_source::{self, Language};
use crate::git::changed::{self, ChangedFile};
use crate::git::commit::Commit;
use crate::git::range::Commits;
use crate::git::{Oid, Repository};
use crate::policy::ledger::Severity;
use crate::report::finding::Finding;
use crate::rules::evidence::weakened::{self, AgentCommit, FileVersions};

/// What the range's agent commits did to tests, by what the ledger makes of it.
#[derive(Debug, Default)]
pub struct Judged {
    pub rejects: Vec<Finding>,
    pub warnings: Vec<Finding>,
}

/// Judges every commit of `commits` made by an agent. `base_name` names the range's base in
/// the help (`git rebase -i BASE`).
pub(super) fn judge(
    repo: &Repository,
    commits: &Commits,
    who: &WhoContext,
    base_name: &str,
) -> anyhow::Result<Judged> {
    let policy = who.policy;
    let mut judged = Judged::default();
    if policy.tests.weakened == Severity::Off {
        return Ok(judged);
    }
    let trailer = &policy.trailers.test_removal;
    for (k, &id) in commits.ids().iter().enumerate() {
        let commit = Commit::find(repo, id)?;
        let identity = commit.identity(who.pusher);
        let by_pattern = policy.agents.matched_agent(&identity);
        if by_pattern.is_none() && !who.needs_proof {
            continue;
        }
        let (tree, parents) = commits.trees(k);
        let sides: Vec<Option<Oid>> = if parents.is_empty() {
            vec![None]
        } else {
            parents.iter().copied().map(Some).collect()
        };
        let mut per_parent = Vec::with_capacity(sides.len());
        for parent in sides {
            per_parent.push(test_files(repo, tree, parent, who)?);
        }
        if per_parent.iter().all(Vec::is_empty) {
            continue;
        }
        let Some(agent) = by_pattern.or_else(|| who.agent(&commit)) else {
            continue;
        };
        let found = if per_parent.len() == 1 {
            weakened::weakenings(&per_parent[0])
        } else {
            weakened::in_every_parent(per_parent.iter().map(|f| weakened::weakenings(f)).collect())
        };
        if found.is_empty() {
            continue;
        }
        let facts = AgentCommit {
            short: commit.short_id(),
            subject: commit.summary(),
            agent,
            has_trailer: trailer.present_in(&identity.trailers.block),
        };
        let findings = weakened::findings(found, &facts, trailer, base_name);
        match policy.tests.weakened {
            Severity::Warn => judged.warnings.extend(findings),
            _ => judged.rejects.extend(findings),
        }
    }
    Ok(judged)
}

/// The test files `tree` changed against `parent`, read on both sides: files the ledger's
/// `[tests] paths` name, and Rust files anywhere that hold test functions on either side.
fn test_files(
    repo: &Repository,
    tree: Oid,
    parent: Option<Oid>,
    who: &WhoContext,
) -> anyhow::Result<Vec<FileVersions>> {
    let tests = &who.policy.tests;
    let wanted = |path: &str| match Language::of(path) {
        Some(Language::Python) => tests.is_test_file(path),
        Some(Language::Rust) => true,
        None => false,
    };
    let mut files = Vec::new();
    for ChangedFile { path, old, new } in changed::changed_files(repo, tree, parent, &wanted)? {
        let read = |id: Option<Oid>| -> anyhow::Result<Option<Vec<u8>>> {
            Ok(id.map(|id| changed::blob(repo, id)).transpose()?)
        };
        let (old, new) = (read(old)?, read(new)?);
        let listed = tests.is_test_file(&path);
        // A Rust file outside the test paths is read only when it may hold a test (the
        // parse costs more than the look).
        let may_test = |b: &Option<Vec<u8>>| {
            b.as_deref()
                .is_some_and(|b| memchr::memmem::find(b, b"test").is_some())
        };
        if !listed && !may_test(&old) && !may_test(&new) {
            continue;
        }
        let parse = |b: &Option<Vec<u8>>| b.as_deref().and_then(|b| test_source::parse(&path, b));
        let (old, new) = (parse(&old), parse(&new));
        let has_tests =
            |f: &Option<test_source::TestFile>| f.as_ref().is_some_and(|f| !f.functions.is_empty());
        if !listed && !has_tests(&old) && !has_tests(&new) {
            continue;
        }
        files.push(FileVersions { path, old, new });
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}
