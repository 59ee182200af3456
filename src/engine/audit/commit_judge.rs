//! Judging each commit of a range: who made it (its identity, signature and the ledger's
//! `[agents]`), what it changed along protected paths (a merge's own edits, as `Lineage` or
//! git's own merge of its parents tell them), what a bot may change, and what it did to the
//! freeze file and lockfile. The walk that compares the trees is `engine::walk`'s.

use std::path::Path;

use crate::changes::{Change, ChangeKind, MalformedTree};
use crate::engine::ahead::Ahead;
use crate::engine::bots;
use crate::engine::context::commit_signature;
use crate::engine::merges::{self, AgentMerge, GitMerges};
use crate::engine::walk::{Walk, walk_commits};
use crate::engine::weakened;
use crate::git::commit::{self, Commit};
use crate::git::lineage::Lineage;
use crate::git::protected::ProtectedSet;
use crate::git::range::Commits;
use crate::git::trees::Trees;
use crate::git::{self, ObjectId, Repository};
use crate::policy::agents::Identity;
use crate::policy::diff::{self, PolicyChange};
use crate::policy::freeze::FreezeFile;
use crate::policy::ledger::{Policy, PolicySource};
use crate::policy::lockfile::Lockfile;
use crate::policy::signers::{AllowedSigners, SignatureStatus};
use crate::report::finding::Finding;
use crate::report::{CommitSummary, FileChanges};
use crate::rules::history::malformed;
use crate::rules::provenance::{self, CommitFacts, ProvenanceInput};

/// A ledger changed inside the range may protect more (a new freeze file path, new
/// [protect] globs): what any ledger version in the range protects is protected for the
/// whole range, so a later commit cannot edit what an earlier one newly named. The set
/// widened by every version the range's commits wrote; `None` when none protects more.
pub(super) fn widened_by_range_ledgers(
    repo: &Repository,
    commits: &Commits,
    outcomes: &[CommitOutcome],
    protected: &ProtectedSet,
    ledger_path: &str,
) -> anyhow::Result<Option<ProtectedSet>> {
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
        let Some(text) = commit::blob_text(repo, id, ledger_path)? else {
            continue;
        };
        // A ledger that does not parse protects nothing more; the tip's own check of it
        // (and the next push, judged by it) fail closed.
        if let Ok(newer) = Policy::parse(Path::new(ledger_path), &text, PolicySource::Embedded) {
            grew |= widened.extend(ProtectedSet::new(&newer, ledger_path));
        }
    }
    Ok(grew.then_some(widened))
}

/// What judging needs beside the commit itself.
pub(super) struct CommitContext<'a> {
    pub(super) policy: &'a Policy,
    pub(super) protected: &'a ProtectedSet,
    pub(super) input: ProvenanceInput<'a>,
    pub(super) needs_proof: bool,
    pub(super) signers: Option<&'a AllowedSigners>,
    pub(super) pusher: Option<&'a str>,
    pub(super) restore_from: &'a str,
    pub(super) describe_all: bool,
    pub(super) signatures_valid_at: Option<jiff::Timestamp>,
    pub(super) two_threads: bool,
}

/// What judging one commit found.
pub(super) struct CommitOutcome {
    pub(super) findings: Vec<Finding>,
    pub(super) leases_added: usize,
    /// `None` for a commit that changes no protected path, unless every commit is described.
    pub(super) summary: Option<CommitSummary>,
    pub(super) policy_changes: Vec<FileChanges>,
}

impl CommitOutcome {
    /// A commit that changes nothing protected: no rule applies.
    fn nothing() -> CommitOutcome {
        CommitOutcome {
            findings: Vec::new(),
            leases_added: 0,
            summary: None,
            policy_changes: Vec::new(),
        }
    }
}

/// Judges `commits` and returns the outcomes oldest first. A long range's trees are compared
/// on two threads (`walk_commits`); more did not pay on two cores, where each thread's own
/// repository handle shares no caches with the others.
///
/// The trees are compared newest first. In a pack written by `git fast-import`, each version
/// of a tree is a delta against the one before, and reading newest first finds each delta's
/// base in the pack's base cache (reading oldest first inflated twice as many objects); in
/// packs written by `git repack`, which store the newest versions whole, the order makes no
/// difference. libgit2's object cache is off meanwhile: keeping every tree and commit of a
/// long range cost more time (and memory) than it saved; `Trees` keeps the few read again.
/// Which of a merge's changes are its own is then settled oldest first, from the changes
/// alone (`Lineage`), and the commits that changed protected paths are judged.
pub(super) fn commit_outcomes(
    repo: &Repository,
    commits: &Commits,
    ctx: &CommitContext,
    weakened: Option<&mut weakened::Judge>,
    ahead: Option<&Ahead>,
) -> anyhow::Result<Vec<CommitOutcome>> {
    git::without_object_cache(|| outcomes_without_object_cache(repo, commits, ctx, weakened, ahead))
}

fn outcomes_without_object_cache(
    repo: &Repository,
    commits: &Commits,
    ctx: &CommitContext,
    weakened: Option<&mut weakened::Judge>,
    ahead: Option<&Ahead>,
) -> anyhow::Result<Vec<CommitOutcome>> {
    let trees = Trees::new(repo)?;
    let how = Walk {
        fsck: true,
        threads: if ctx.two_threads { 2 } else { 1 },
        ahead,
    };
    let walked = walk_commits(&trees, commits, ctx.protected, weakened, how)?;
    // A merge's changes against any parent, for an agent's merge to be judged against git's
    // own merge of its parents (`merges`).
    let against_parents: Vec<Vec<Change>> = walked
        .against_parents
        .iter()
        .enumerate()
        .map(|(k, lists)| match commits.parents(k).len() {
            0 | 1 => Vec::new(),
            _ => merges::union_of(lists),
        })
        .collect();
    let (lineage, own) = Lineage::resolve(repo, commits, walked.against_parents)?;
    let mut origins = Origins {
        lineage,
        merges: GitMerges::new(repo),
    };
    let mut judged = own
        .into_iter()
        .zip(walked.malformed)
        .zip(against_parents)
        .enumerate()
        .rev()
        .map(|(k, ((changes, malformed), against_parents))| {
            let brought = Brought {
                changes,
                malformed,
                against_parents,
            };
            judge_commit(repo, &trees, &mut origins, commits, k, brought, ctx)
        })
        .collect::<anyhow::Result<Vec<CommitOutcome>>>()?;
    judged.reverse();
    Ok(judged)
}

/// What one commit brought along protected paths.
struct Brought {
    /// Its own protected changes (a merge's: its own edits, as `Lineage` tells them).
    changes: Vec<Change>,
    /// The malformed trees it brought.
    malformed: Vec<MalformedTree>,
    /// A merge's changes against any of its parents, one per path (empty for others).
    against_parents: Vec<Change>,
}

/// Where a merge's content comes from: the range's own commits (`Lineage`), and for an
/// agent's merge, git's own merge of its parents.
struct Origins<'r> {
    lineage: Lineage<'r>,
    merges: GitMerges<'r>,
}

/// Who made a commit, as far as the gate can tell.
struct Provenance {
    /// Its signature, when signatures are checked.
    signature: Option<SignatureStatus>,
    verified: bool,
    /// Why the ledger's `[agents]` patterns name it an agent's.
    pattern_agent: Option<String>,
    /// Why it counts as an agent's: a pattern, or no proof of a human where the ledger asks.
    agent: Option<String>,
}

fn provenance_of(commit: &Commit, who: &Identity, ctx: &CommitContext) -> Provenance {
    let signature = ctx
        .signers
        .map(|s| commit_signature(commit, s, ctx.signatures_valid_at));
    let verified = signature.as_ref().is_some_and(SignatureStatus::is_verified);
    let pattern_agent = ctx.policy.agents.matched_agent(who);
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
    Provenance {
        signature,
        verified,
        pattern_agent,
        agent,
    }
}

/// Judges commit `k` of `commits`, given what it `brought`: who made it, its signature, and
/// what it did to the freeze file and lockfile.
fn judge_commit(
    repo: &Repository,
    trees: &Trees,
    origins: &mut Origins,
    commits: &Commits,
    k: usize,
    brought: Brought,
    ctx: &CommitContext,
) -> anyhow::Result<CommitOutcome> {
    let (tree, parent_trees) = commits.trees(k);
    let Brought {
        mut changes,
        malformed,
        against_parents,
    } = brought;
    if changes.is_empty() && malformed.is_empty() && against_parents.is_empty() && !ctx.describe_all
    {
        // Nothing protected changed: no rule applies, and the commit object is not read.
        return Ok(CommitOutcome::nothing());
    }
    let id = commits.ids()[k];
    let commit = Commit::find(repo, id)?;
    let short = commit.short_id();
    let subject = commit.summary();
    let who = commit.identity(ctx.pusher);
    let Provenance {
        signature,
        verified,
        pattern_agent,
        agent,
    } = provenance_of(&commit, &who, ctx);

    // An agent's merge: what it holds that git's own merge of its parents does not give is
    // its own edit, and nothing else is (`Lineage`'s answer stands for the others).
    let agent_merge = match agent.is_some() && !against_parents.is_empty() {
        true => Some(merges::own_protected_edits(
            &mut origins.merges,
            commits,
            k,
            ctx.protected,
            &against_parents,
        )?),
        false => None,
    };
    if let Some(merge) = &agent_merge {
        changes = merge.own.clone();
    }
    if changes.is_empty() && malformed.is_empty() && !ctx.describe_all {
        return Ok(CommitOutcome::nothing());
    }

    // A bot's commit: the one kind of change the ledger allows it on its paths is not an
    // edit to judge (`[[bots]]`); in strict mode only when its signature proves who made it.
    let allowed = match parent_trees {
        [parent] if !ctx.needs_proof || verified => {
            let (policy, protected) = (ctx.policy, ctx.protected);
            bots::allowed_changes(
                trees,
                policy,
                protected,
                &who.author_email,
                *parent,
                tree,
                &changes,
            )?
        }
        _ => Vec::new(),
    };
    let judged_changes: Vec<Change> = changes
        .iter()
        .filter(|c| !allowed.contains(&c.path))
        .cloned()
        .collect();

    let (leases_added, policy_changes) = policy_file_changes(
        trees,
        &mut origins.lineage,
        agent_merge.as_ref(),
        commits,
        k,
        &changes,
        &short,
        ctx,
    )?;

    let facts = CommitFacts {
        short: short.clone(),
        subject: subject.clone(),
        agent: agent.clone(),
        trailers: who.trailers.clone(),
        changes: judged_changes,
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

/// What commit `k` did to the freeze file and the lockfile, each described against the
/// version it replaced (for an agent's merge, git's merge of its parents): the leases it adds
/// that no other current parent has, and each file's changes.
#[allow(clippy::too_many_arguments)]
fn policy_file_changes(
    trees: &Trees,
    lineage: &mut Lineage,
    agent_merge: Option<&AgentMerge>,
    commits: &Commits,
    k: usize,
    changes: &[Change],
    short: &str,
    ctx: &CommitContext,
) -> anyhow::Result<(Vec<String>, Vec<FileChanges>)> {
    let (tree, parent_trees) = commits.trees(k);
    let mut leases_added = Vec::new();
    let mut policy_changes = Vec::new();
    for path in [&ctx.policy.freeze.file, &ctx.policy.fixtures.lockfile] {
        if !changes.iter().any(|c| &c.path == path) {
            continue;
        }
        // An agent's merge is described against git's merge of its parents where that is
        // clean: every lease it has that the merged file lacks, it adds.
        let merged = match agent_merge {
            Some(merge) => merge.merged_text(path)?,
            None => None,
        };
        // A merge's edit is described against the parents whose content no other parent had
        // moved past (the first of them): what it adds that none of them has, it adds itself.
        // Any other parent's content is older, and taking it back is an addition too.
        let current = if merged.is_some() {
            Vec::new()
        } else if parent_trees.len() > 1 {
            let versions: Vec<Option<ObjectId>> = parent_trees
                .iter()
                .map(|&t| trees.entry_id(t, path))
                .collect::<Result<_, _>>()?;
            lineage.current_parents(k, path, &versions)?
        } else {
            (0..parent_trees.len()).collect()
        };
        let old = match (merged, current.first()) {
            (Some(merged), _) => merged,
            (None, Some(&i)) => trees.blob_text(parent_trees[i], path)?,
            (None, None) => None,
        };
        let new = trees.blob_text(tree, path)?;
        let described = if path == &ctx.policy.freeze.file {
            let parse = |t: &Option<String>| {
                t.as_ref()
                    .and_then(|t| FreezeFile::parse(Path::new(path), t.as_bytes()).ok())
            };
            let list = diff::diff_freeze(parse(&old).as_ref(), parse(&new).as_ref());
            let others: Vec<FreezeFile> = current
                .iter()
                .skip(1)
                .map(|&i| trees.blob_text(parent_trees[i], path))
                .collect::<Result<Vec<_>, _>>()?
                .iter()
                .filter_map(parse)
                .collect();
            let in_others = |id: &str| {
                others
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
            diff::diff_lockfile(parse(&old).as_ref(), parse(&new).as_ref())
        };
        policy_changes.push(FileChanges {
            commit: short.to_string(),
            path: path.clone(),
            changes: described,
            excerpt: diff::excerpt(
                old.as_deref().unwrap_or(""),
                new.as_deref().unwrap_or(""),
                12,
            ),
        });
    }

    Ok((leases_added, policy_changes))
}
