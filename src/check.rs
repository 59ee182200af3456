//! The engine behind `guard check` (and the hooks): judges the commits a range brings for
//! provenance under the policy of the range's base, then scores the range's tip (fixtures
//! from git, and artifacts when given) under the same policy.

use std::path::Path;

use anyhow::Context as _;
use git2::{Oid, Repository};
use jiff::civil::Date;
use serde::Serialize;

use crate::error::InputError;
use crate::findings::{Code, Finding};
use crate::fixtures::lockfile::Lockfile;
use crate::freeze::FreezeFile;
use crate::git;
use crate::git::protected::{Change, ChangeKind, ProtectedSet, Trees};
use crate::git::range::{self, Commits};
use crate::git::tree_source::GitTree;
use crate::ledger::{DEFAULT_LEDGER_PATH, Policy, PolicySource};
use crate::policy_diff::{self, PolicyChange};
use crate::report::Report;
use crate::rules::malformed;
use crate::rules::provenance::{self, CommitFacts, ProvenanceInput};
use crate::score::{Artifacts, Stats, load_lockfile, score};
use crate::signers::{AllowedSigners, SignatureStatus};
use crate::source::Source;

/// What to check.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// `A..B`, `A...B` or one commit; `None` for `@{upstream}..HEAD`.
    pub range: Option<String>,
    /// The ledger's path inside the base revision (default `qa/merge_ledger.toml`).
    pub ledger: Option<String>,
    /// The authenticated pusher (hooks).
    pub pusher: Option<String>,
    pub artifacts: Artifacts,
    /// An allowed-signers file from the server's config (`guard.allowedSigners`), which
    /// overrides the ledger's `[humans] allowed_signers`.
    pub allowed_signers: Option<std::path::PathBuf>,
    /// Describe every judged commit in the report (who made it, whether an agent, its
    /// signature). Otherwise only commits that change protected paths are described: the
    /// others cannot break a rule, and describing them means reading every commit object of
    /// the range, which costs more than judging it.
    pub describe_all: bool,
}

/// One judged commit, for reports.
#[derive(Debug, Clone, Serialize)]
pub struct CommitSummary {
    pub id: String,
    pub short: String,
    pub subject: String,
    pub author: String,
    /// Why the commit counts as an agent's; absent for a human's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Who signed it, when the policy asks for signatures or names allowed signers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<SignatureStatus>,
    pub protected_changes: Vec<Change>,
}

/// What one commit changed in the freeze file or lockfile.
#[derive(Debug, Clone, Serialize)]
pub struct FileChanges {
    pub commit: String,
    pub path: String,
    pub changes: Vec<PolicyChange>,
    /// A unified-diff excerpt (text reports only).
    #[serde(skip)]
    pub excerpt: Vec<String>,
}

/// The history part of a report.
#[derive(Debug, Clone, Serialize)]
pub struct History {
    pub range: String,
    pub base: Option<String>,
    pub tip: String,
    /// How many commits the range brings (all were judged).
    #[serde(skip)]
    pub judged: usize,
    /// The judged commits, oldest first: all of them with `CheckOptions::describe_all`, else
    /// those that change protected paths.
    pub commits: Vec<CommitSummary>,
    pub policy_changes: Vec<FileChanges>,
}

/// Checks a range of `repo`.
pub fn check(repo: &Repository, opts: &CheckOptions, today: Date) -> anyhow::Result<Report> {
    let range = range::resolve(repo, opts.range.as_deref())?;
    let commits = range::commits(repo, range.tip, range.base.as_slice())?;
    // An audited range's base need not have passed the gate (guard installed later, a push
    // past a disabled hook): its fixture digests are not trusted, every fixture is hashed.
    judge(
        repo,
        range.base,
        range.tip,
        &commits,
        &range.spec,
        opts,
        today,
        None,
        false,
    )
}

/// Judges `commits` (oldest first) leading from `base` to `tip` under `policy`, the policy of
/// `base` (`policy_at`, which the hooks read first to learn whether the ref is protected).
/// For hooks: `base` is the ref's old tip (or the default branch), which passed the gate, so
/// with `trust_base_fixtures` the fixtures whose blob is unchanged since `base` are not hashed
/// again. A base that came in by break-glass did not pass the gate: pass `false` for it.
#[allow(clippy::too_many_arguments)]
pub fn judge_update(
    repo: &Repository,
    policy: Policy,
    base: Option<Oid>,
    tip: Oid,
    commits: &Commits,
    spec: &str,
    opts: &CheckOptions,
    today: Date,
    trust_base_fixtures: bool,
) -> anyhow::Result<Report> {
    judge(
        repo,
        base,
        tip,
        commits,
        spec,
        opts,
        today,
        Some(policy),
        trust_base_fixtures,
    )
}

#[allow(clippy::too_many_arguments)]
fn judge(
    repo: &Repository,
    base: Option<Oid>,
    tip: Oid,
    commits: &Commits,
    spec: &str,
    opts: &CheckOptions,
    today: Date,
    // The policy of `base`, when the caller has read it already.
    known_policy: Option<Policy>,
    trust_base_fixtures: bool,
) -> anyhow::Result<Report> {
    let ledger_path = opts
        .ledger
        .clone()
        .unwrap_or_else(|| DEFAULT_LEDGER_PATH.to_string());
    let base_short = base.map(|b| git::short_id(repo, b));
    let base_tree = match base {
        Some(b) => Some(GitTree::new(
            repo,
            b,
            format!("commit {}", base_short.as_deref().unwrap_or("")),
        )?),
        None => None,
    };
    let policy = match known_policy {
        Some(p) => p,
        None => load_policy(base_tree.as_ref(), &ledger_path, base_short.as_deref())?,
    };
    let protected = ProtectedSet::new(&policy, &ledger_path);
    let restore_from = base_short.clone().unwrap_or_else(|| "HEAD~".to_string());

    let mut findings = Vec::new();
    let mut summaries = Vec::new();
    let mut policy_changes = Vec::new();
    let mut agent_added_leases = 0;
    let reject_if_agent_adds_lease = match &base_tree {
        Some(t) => crate::score::load_freeze(t, &policy)
            .map(|f| f.reject_if_agent_adds_lease)
            .unwrap_or(true),
        None => true,
    };
    let input = ProvenanceInput {
        trailers: &policy.trailers,
        reject_if_agent_adds_lease,
        seeds: policy.properties.seeds.as_deref(),
        property_files: &policy.properties.files,
    };

    // Signatures are checked when the policy needs proof of a human, or names signers.
    let needs_proof = policy.humans.require_signature || policy.agents.default_agent;
    let signers = load_signers(
        base_tree.as_ref(),
        &policy,
        opts.allowed_signers.as_deref(),
        needs_proof,
    )?;

    let ctx = CommitContext {
        policy: &policy,
        protected: &protected,
        input,
        needs_proof,
        signers: signers.as_ref(),
        pusher: opts.pusher.as_deref(),
        restore_from: &restore_from,
        describe_all: opts.describe_all,
    };
    let mut outcomes = judge_commits(repo, commits, &ctx)?;
    // A ledger changed inside the range may protect more (a new freeze file path, new
    // [protect] globs): what any ledger version in the range protects is protected for the
    // whole range, so a later commit cannot edit what an earlier one newly named.
    let mut widened = protected.clone();
    let mut grew = false;
    for (outcome, &id) in outcomes.iter().zip(commits.ids()) {
        let changed_ledger = outcome.summary.as_ref().is_some_and(|summary| {
            summary
                .protected_changes
                .iter()
                .any(|c| c.path == ledger_path && c.kind != ChangeKind::Deleted)
        });
        if !changed_ledger {
            continue;
        }
        let tree = repo.find_commit(id)?.tree()?;
        let Some(text) = blob_text(repo, &tree, &ledger_path) else {
            continue;
        };
        // A ledger that does not parse protects nothing more; the tip's own check of it
        // (and the next push, judged by it) fail closed.
        if let Ok(newer) = Policy::parse(Path::new(&ledger_path), &text, PolicySource::Embedded) {
            grew |= widened.extend(ProtectedSet::new(&newer, &ledger_path));
        }
    }
    if grew {
        let ctx = CommitContext {
            protected: &widened,
            ..ctx
        };
        outcomes = judge_commits(repo, commits, &ctx)?;
    }
    for outcome in outcomes {
        findings.extend(outcome.findings);
        agent_added_leases += outcome.leases_added;
        summaries.extend(outcome.summary);
        policy_changes.extend(outcome.policy_changes);
    }

    // The tip, as it would be merged: fixtures from its tree, artifacts when given.
    let tip_short = git::short_id(repo, tip);
    let mut tip_tree = GitTree::new(repo, tip, format!("commit {tip_short}"))?;
    if let Some(base_tree) = base_tree.as_ref().filter(|_| trust_base_fixtures) {
        // The base passed the gate when it landed, so its fixtures matched its lockfile:
        // only blobs changed since then are hashed again.
        if let Ok(lock) = load_lockfile(base_tree, &policy) {
            tip_tree.trust(base_tree, &lock.entries);
        }
    }
    let mut artifacts = opts.artifacts.clone();
    artifacts.expect_evidence = artifacts.any();
    // A tip whose policy files or artifacts cannot be read cannot be judged (exit 2), but
    // what the commits did is still reported: that is what the pusher has to fix first.
    let (stats, unjudged) = match score(&tip_tree, &policy, &artifacts, today) {
        Ok(mut evaluation) => {
            if let Some(base_tree) = &base_tree {
                mark_rewritten_frozen_tests(&mut evaluation.findings, base_tree, &tip_tree)?;
            }
            findings.extend(evaluation.findings);
            (evaluation.stats, None)
        }
        Err(e) => (Stats::empty(today), Some(e)),
    };
    let mut stats = stats;
    stats.agent_added_leases = agent_added_leases;
    // The trees the tip was scored from: a malformed one (say, from before the range) is
    // read as a checkout writes it, and still refused.
    let tip_malformed = tip_tree.malformed();
    if !tip_malformed.is_empty() {
        let subject = git::summary(&repo.find_commit(tip)?);
        let more = malformed::findings(&tip_short, &subject, &tip_malformed, &findings);
        findings.extend(more);
    }

    Ok(Report {
        policy: policy.source.describe(),
        findings,
        stats,
        unjudged,
        history: Some(History {
            range: spec.to_string(),
            base: base.map(|b| b.to_string()),
            tip: tip.to_string(),
            judged: commits.len(),
            commits: summaries,
            policy_changes,
        }),
    })
}

/// What judging needs beside the commit itself.
struct CommitContext<'a> {
    policy: &'a Policy,
    protected: &'a ProtectedSet,
    input: ProvenanceInput<'a>,
    needs_proof: bool,
    signers: Option<&'a AllowedSigners>,
    pusher: Option<&'a str>,
    restore_from: &'a str,
    describe_all: bool,
}

/// What judging one commit found.
struct CommitOutcome {
    findings: Vec<Finding>,
    leases_added: usize,
    /// `None` for a commit that changes no protected path, unless every commit is described.
    summary: Option<CommitSummary>,
    policy_changes: Vec<FileChanges>,
}

/// Judges `commits`, on one thread, and returns the outcomes oldest first. Judging on all
/// cores did not pay: each thread needs its own repository handle, so the threads share no
/// caches and contend for the pack file's locks.
///
/// The commits are judged newest first. In a pack written by `git fast-import`, each version
/// of a tree is a delta against the one before, and reading newest first finds each delta's
/// base in the pack's base cache (reading oldest first inflated twice as many objects); in
/// packs written by `git repack`, which store the newest versions whole, the order makes no
/// difference. libgit2's object cache is off meanwhile: keeping every tree and commit of a
/// long range cost more time (and memory) than it saved; `Trees` keeps the few read again.
fn judge_commits(
    repo: &Repository,
    commits: &Commits,
    ctx: &CommitContext,
) -> anyhow::Result<Vec<CommitOutcome>> {
    git2::opts::enable_caching(false);
    let trees = Trees::new(repo);
    let judged: anyhow::Result<Vec<CommitOutcome>> = (0..commits.len())
        .rev()
        .map(|k| {
            let (tree, parent_trees) = commits.trees(k);
            judge_commit(repo, &trees, commits.ids()[k], tree, parent_trees, ctx)
        })
        .collect();
    git2::opts::enable_caching(true);
    let mut judged = judged?;
    judged.reverse();
    Ok(judged)
}

/// Judges one commit: its protected changes against every parent, who made it, its
/// signature, and what it did to the freeze file and lockfile.
fn judge_commit(
    repo: &Repository,
    trees: &Trees,
    id: Oid,
    tree: Oid,
    parent_trees: &[Oid],
    ctx: &CommitContext,
) -> anyhow::Result<CommitOutcome> {
    let changes = if parent_trees.len() < 2 {
        ctx.protected
            .changes(trees, tree, parent_trees.first().copied())?
    } else {
        merge_changes(repo, trees, id, tree, parent_trees, ctx.protected)?
    };
    let malformed = ctx.protected.malformed_trees(trees, tree, parent_trees)?;
    if changes.is_empty() && malformed.is_empty() && !ctx.describe_all {
        // Nothing protected changed: no rule applies, and the commit object is not read.
        return Ok(CommitOutcome {
            findings: Vec::new(),
            leases_added: 0,
            summary: None,
            policy_changes: Vec::new(),
        });
    }
    let commit = repo.find_commit(id)?;
    let short = git::object_short_id(commit.as_object());
    let subject = git::summary(&commit);
    let who = git::identity(&commit, ctx.pusher);
    let signature = ctx.signers.map(|s| commit_signature(repo, &commit, s));
    let verified = signature.as_ref().is_some_and(SignatureStatus::is_verified);
    let pattern_agent = ctx.policy.agents.matched_agent(&who);
    let agent = pattern_agent.clone().or_else(|| {
        (ctx.needs_proof && !verified).then(|| {
            let why = signature
                .as_ref()
                .map_or("not signed".to_string(), SignatureStatus::describe);
            format!(
                "not proven human ({why}); the ledger asks for a signature by an allowed signer"
            )
        })
    });

    let mut leases_added = Vec::new();
    let mut policy_changes = Vec::new();
    for path in [&ctx.policy.freeze.file, &ctx.policy.fixtures.lockfile] {
        if !changes.iter().any(|c| &c.path == path) {
            continue;
        }
        let tree = trees.get(tree)?;
        let parents: Vec<git2::Tree> = parent_trees
            .iter()
            .map(|&t| trees.get(t))
            .collect::<Result<_, _>>()?;
        let first_parent = parents.first();
        let old = match first_parent {
            Some(t) => blob_text(repo, t, path),
            None => None,
        };
        let new = blob_text(repo, &tree, path);
        let described = if path == &ctx.policy.freeze.file {
            let parse = |t: &Option<String>| {
                t.as_ref()
                    .and_then(|t| FreezeFile::parse(Path::new(path), t.as_bytes()).ok())
            };
            let list = policy_diff::diff_freeze(parse(&old).as_ref(), parse(&new).as_ref());
            // A merge adds a lease only if no side added it: one that another parent has and
            // the merge base lacks was added (and counted) by that side's own commit.
            let others: Vec<FreezeFile> = parents
                .iter()
                .skip(1)
                .filter_map(|t| parse(&blob_text(repo, t, path)))
                .collect();
            let merge_base: Option<FreezeFile> = if parents.len() > 1 {
                let ids: Vec<Oid> = commit.parent_ids().collect();
                repo.merge_base_many(&ids)
                    .ok()
                    .and_then(|b| repo.find_commit(b).ok())
                    .and_then(|c| c.tree().ok())
                    .and_then(|t| parse(&blob_text(repo, &t, path)))
            } else {
                None
            };
            let in_base = |id: &str| {
                merge_base
                    .as_ref()
                    .is_some_and(|f| f.leases.iter().any(|l| l.nodeid == id))
            };
            let in_others = |id: &str| {
                !in_base(id)
                    && others
                        .iter()
                        .any(|f| f.leases.iter().any(|l| l.nodeid == id))
            };
            leases_added.extend(list.iter().filter_map(|c| match c {
                PolicyChange::LeaseAdded { nodeid, .. } if !in_others(nodeid) => {
                    Some(nodeid.clone())
                }
                _ => None,
            }));
            list
        } else {
            let parse = |t: &Option<String>| {
                t.as_ref()
                    .and_then(|t| Lockfile::parse(Path::new(path), t.as_bytes()).ok())
            };
            policy_diff::diff_lockfile(parse(&old).as_ref(), parse(&new).as_ref())
        };
        policy_changes.push(FileChanges {
            commit: short.clone(),
            path: path.clone(),
            changes: described,
            excerpt: policy_diff::excerpt(
                old.as_deref().unwrap_or(""),
                new.as_deref().unwrap_or(""),
                12,
            ),
        });
    }

    let facts = CommitFacts {
        short: short.clone(),
        subject: subject.clone(),
        agent: agent.clone(),
        trailers: who.trailers.clone(),
        changes: changes.clone(),
        leases_added,
        base: ctx.restore_from.to_string(),
        signature: (ctx.needs_proof && pattern_agent.is_none())
            .then(|| signature.clone())
            .flatten(),
    };
    let (mut findings, leases_added) = provenance::judge(&facts, &ctx.input);
    findings.extend(malformed::findings(&short, &subject, &malformed, &[]));
    let summary = Some(CommitSummary {
        id: id.to_string(),
        short,
        subject,
        author: format!("{} <{}>", who.author_name, who.author_email),
        agent,
        signature,
        protected_changes: changes,
    });
    Ok(CommitOutcome {
        findings,
        leases_added,
        summary,
        policy_changes,
    })
}

/// What a merge commit itself changes in protected paths. It is compared with every parent;
/// a path the merge leaves as one parent has it is not the merge's change when that parent's
/// side made the change (its entry differs from the merge base): that side's commits were
/// judged. A parent whose entry is the merge base's made no change, so taking its entry
/// brings nothing: it undoes what the other side did (F1: merging a stale ancestor to bring
/// an old freeze file back), and that is the merge's own change.
fn merge_changes(
    repo: &Repository,
    trees: &Trees,
    id: Oid,
    tree: Oid,
    parent_trees: &[Oid],
    protected: &ProtectedSet,
) -> anyhow::Result<Vec<Change>> {
    let parent_ids: Vec<Oid> = repo.find_commit(id)?.parent_ids().collect();
    let base_tree = match repo.merge_base_many(&parent_ids) {
        Ok(b) => Some(repo.find_commit(b)?.tree_id()),
        Err(_) => None,
    };
    let mut vs_parent = Vec::with_capacity(parent_trees.len());
    let mut introduced = Vec::with_capacity(parent_trees.len());
    for &p in parent_trees {
        vs_parent.push(protected.changes(trees, tree, Some(p))?);
        introduced.push(protected.changes(trees, p, base_tree)?);
    }
    let mut out: Vec<Change> = Vec::new();
    for list in &vs_parent {
        for change in list {
            if out.iter().any(|c| c.path == change.path) {
                continue;
            }
            let brought_by_a_side = (0..parent_trees.len()).any(|i| {
                !vs_parent[i].iter().any(|c| c.path == change.path)
                    && introduced[i].iter().any(|c| c.path == change.path)
            });
            if !brought_by_a_side {
                out.push(change.clone());
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// The allowed signers in force: the server's file, else the one the policy names in the
/// base revision (so a push cannot bring its own key). `None` when signatures play no part.
fn load_signers(
    base: Option<&GitTree>,
    policy: &Policy,
    server_file: Option<&Path>,
    needs_proof: bool,
) -> anyhow::Result<Option<AllowedSigners>> {
    let (text, shown) = if let Some(path) = server_file {
        let text = std::fs::read_to_string(path).map_err(|e| {
            InputError::io(path, &e).with_hint("fix the server's git config guard.allowedSigners")
        })?;
        (text, path.display().to_string())
    } else if let Some(rel) = &policy.humans.allowed_signers {
        let Some(base) = base else {
            // No base revision (a first push): nothing is trusted yet.
            return Ok(Some(AllowedSigners::default()));
        };
        let shown = format!("{rel} in {}", base.describe());
        let bytes = base.read(rel)?.ok_or_else(|| {
            InputError::new(
                &shown,
                "the allowed-signers file the ledger names does not exist",
            )
            .with_hint(
                "a human adds it (with `Ledger-Change: human`) before commits are judged by it",
            )
        })?;
        (String::from_utf8_lossy(&bytes).into_owned(), shown)
    } else if needs_proof {
        return Ok(Some(AllowedSigners::default()));
    } else {
        return Ok(None);
    };
    let signers = AllowedSigners::parse(&text).map_err(|(line, msg)| {
        InputError::new(&shown, msg).at(crate::error::Location::Line(line))
    })?;
    Ok(Some(signers))
}

/// What `commit`'s signature proves, checked at its committer date (as git does).
fn commit_signature(
    repo: &Repository,
    commit: &git2::Commit,
    signers: &AllowedSigners,
) -> SignatureStatus {
    match repo.extract_signature(&commit.id(), None) {
        Err(e) if e.code() == git2::ErrorCode::NotFound => SignatureStatus::Unsigned,
        Err(e) => SignatureStatus::Bad {
            reason: e.message().to_string(),
        },
        Ok((sig, payload)) => {
            let committer = commit.committer();
            let email = String::from_utf8_lossy(committer.email_bytes()).into_owned();
            let time = jiff::Timestamp::from_second(committer.when().seconds())
                .unwrap_or(jiff::Timestamp::UNIX_EPOCH);
            signers.verify(&sig, &payload, &email, time)
        }
    }
}

/// The policy in force: the ledger in the base revision, else the embedded default.
fn load_policy(
    base: Option<&GitTree>,
    ledger_path: &str,
    base_short: Option<&str>,
) -> anyhow::Result<Policy> {
    let Some(base) = base else {
        return Ok(Policy::embedded());
    };
    let shown = format!("{ledger_path} at {}", base_short.unwrap_or("base"));
    let Some(bytes) = base.read(ledger_path)? else {
        return Ok(Policy::embedded());
    };
    let text =
        String::from_utf8(bytes).map_err(|_| InputError::new(&shown, "ledger is not UTF-8"))?;
    let source = PolicySource::Revision {
        path: ledger_path.to_string(),
        commit: base_short.unwrap_or("base").to_string(),
    };
    Policy::parse(Path::new(&shown), &text, source).context("the policy in force could not be read")
}

fn blob_text(repo: &Repository, tree: &git2::Tree, path: &str) -> Option<String> {
    let entry = tree.get_path(Path::new(path)).ok()?;
    let blob = repo.find_blob(entry.id()).ok()?;
    Some(String::from_utf8_lossy(blob.content()).into_owned())
}

/// A frozen test that passes while the range changed its test file is a rewrite, not a fix:
/// the first article's "revert the test rewrite" row.
fn mark_rewritten_frozen_tests(
    findings: &mut [Finding],
    base: &GitTree,
    tip: &GitTree,
) -> Result<(), InputError> {
    for f in findings
        .iter_mut()
        .filter(|f| f.code == Code::FrozenTestPassed)
    {
        let Some(test) = f.test.clone() else { continue };
        for file in test_file_candidates(&test) {
            let (old, new) = (
                base.read(&file).ok().flatten(),
                tip.read(&file).ok().flatten(),
            );
            if old.is_none() && new.is_none() {
                continue;
            }
            if old != new {
                f.code = Code::FrozenTestRewritten;
                f.message = format!(
                    "frozen test {test} passes and this range changed its file {file}: a rewritten test is not a fix"
                );
                f.help = Some(format!(
                    "revert the changes to {file}; the lease stays until an agent-free rerun on main is boring"
                ));
            }
            break;
        }
    }
    Ok(())
}

/// Files a test id may live in: the file of a pytest node id, or the modules a dotted
/// `classname::name` may name (the class part is unknown, so each prefix is tried).
fn test_file_candidates(id: &str) -> Vec<String> {
    let head = id.split("::").next().unwrap_or(id);
    if head.ends_with(".py") {
        return vec![head.to_string()];
    }
    if head.contains(' ') || head.contains('/') {
        return Vec::new();
    }
    let parts: Vec<&str> = head.split('.').collect();
    (1..=parts.len())
        .rev()
        .map(|n| format!("{}.py", parts[..n].join("/")))
        .collect()
}

/// A non-fast-forward update drops commits. Protected paths those commits changed, which
/// differ between the old and the new tip while no new commit changes them, are undone by
/// the rewind itself: no commit carries that change, so no trailer or signature can approve
/// it. (A rebase that re-applies a protected change is judged through its new commits.)
pub fn rewind_findings(
    repo: &Repository,
    policy: &Policy,
    old: Oid,
    new: Oid,
    ledger: Option<&str>,
) -> anyhow::Result<Vec<Finding>> {
    if old == new || repo.graph_descendant_of(new, old)? {
        return Ok(Vec::new());
    }
    let protected = ProtectedSet::new(policy, ledger.unwrap_or(DEFAULT_LEDGER_PATH));
    let trees = Trees::new(repo);
    let old_tree = repo.find_commit(old)?.tree_id();
    let new_tree = repo.find_commit(new)?.tree_id();
    let base_tree = match repo.merge_base(old, new) {
        Ok(b) => Some(repo.find_commit(b)?.tree_id()),
        Err(_) => None,
    };
    let brought: Vec<String> = protected
        .changes(&trees, new_tree, base_tree)?
        .into_iter()
        .map(|c| c.path)
        .collect();
    let old_short = git::short_id(repo, old);
    Ok(protected
        .changes(&trees, new_tree, Some(old_tree))?
        .into_iter()
        .filter(|c| !brought.contains(&c.path))
        .map(|c| {
            Finding::new(
                Code::ProtectedRewind,
                format!(
                    "the update rewinds past {old_short} and so {} {} ({}) with no commit that carries the change",
                    c.kind.describe(),
                    c.path,
                    c.class.describe()
                ),
            )
            .path(&c.path)
            .help("undo protected changes with a revert commit (it needs its human trailer), not a force push")
        })
        .collect())
}

/// The policy in force at `base` (the ledger at `ledger`, default `qa/merge_ledger.toml`, in
/// that revision), else the embedded default.
pub fn policy_at(
    repo: &Repository,
    base: Option<Oid>,
    ledger: Option<&str>,
) -> anyhow::Result<Policy> {
    let ledger_path = ledger.unwrap_or(DEFAULT_LEDGER_PATH);
    let Some(base) = base else {
        return Ok(Policy::embedded());
    };
    let short = git::short_id(repo, base);
    let tree = GitTree::new(repo, base, format!("commit {short}"))?;
    load_policy(Some(&tree), ledger_path, Some(&short))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_files_of_ids() {
        assert_eq!(
            test_file_candidates("tests/test_a.py::TestB::test_c[1]"),
            vec!["tests/test_a.py"]
        );
        assert_eq!(
            test_file_candidates("tests.test_a.TestB::test_c"),
            vec!["tests/test_a/TestB.py", "tests/test_a.py", "tests.py"]
        );
        assert!(test_file_candidates("crate tests::x").is_empty());
    }
}
