//! The one judge of a ref update, which both hooks call: the server's `pre-receive` and the
//! developer's `pre-push`. The hooks gather plain facts (the ids git wrote, the default
//! branch, the policy in force, what the audit log remembers, where CI left its reports);
//! what a ref update means for the gate is decided here, once: replace refs, unprotected
//! refs, deletions, re-created refs, commits the default branch already holds, missing
//! artifacts, who pushes, and the commits the update brings.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use jiff::civil::Date;

use crate::engine::adoption;
use crate::engine::audit::{self, CheckOptions, Describe, Judged, policy_at, rewind_findings};
use crate::engine::score::Artifacts;
use crate::git::refs::{self, NotACommit, is_replace_ref};
use crate::git::{self, ObjectId, Repository, range};
use crate::policy::ledger::Policy;
use crate::report::push::{Hook, RefVerdict};
use crate::report::{Finding, Report};
use crate::rules::push::{self, ArtifactsPlace, Deleted};

/// What every ref update of one push is judged by, as the hook found it.
pub struct PushFacts<'a> {
    pub hook: Hook,
    /// The default branch's ref name (server) and tip (the server's, or where the pushing
    /// clone last saw the remote's): new refs are judged from it.
    pub default_ref: Option<&'a str>,
    pub default_tip: Option<ObjectId>,
    /// `guard.policyRef`, when it names another ref than the default branch.
    pub policy_ref: Option<&'a str>,
    pub policy: PolicyInForce<'a>,
    /// The ledger's path inside each revision, when not the default.
    pub ledger: Option<&'a str>,
    pub deletions: DeletionMemory,
    /// Per ref name, the tip it had when the audit log last saw it deleted.
    pub deleted: &'a HashMap<String, String>,
    /// The ids break-glass made ref tips (they never passed the gate); `None` when the audit
    /// log cannot be read, which withdraws trust from every base.
    pub bypassed: Option<&'a HashSet<String>>,
    /// Pushed ids (other than of the default branch and the policy ref) whose commits the
    /// default branch already holds: judged when they landed there.
    pub landed: &'a HashMap<String, ObjectId>,
    /// Who the server says pushes (forge user names, signed-push keys); an agent's name among
    /// them makes the push an agent's.
    pub identities: &'a [String],
    /// The server's allowed-signers file, which overrides the ledger's.
    pub allowed_signers: Option<PathBuf>,
    /// What the receiving side is known to hold when an update has no base (a clone's
    /// remote-tracking tips).
    pub known_without_base: &'a [ObjectId],
    pub now: jiff::Timestamp,
    pub today: Date,
}

/// Which ledger judges the push.
pub enum PolicyInForce<'a> {
    /// Read once for the push: the policy ref's ledger at `revision`.
    Loaded {
        policy: &'a Policy,
        revision: Option<ObjectId>,
    },
    /// Read at each update's base (a clone that never saw the remote's default branch).
    AtBase,
}

/// Whether a protected ref the ledger lets be deleted is remembered, so that making it again
/// at an old commit is judged as the rewind it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeletionMemory {
    /// The server's audit log remembers it.
    AuditLog,
    /// No audit log; `accepted`: the admin accepts deletions it cannot remember
    /// (`guard.allowDelete`).
    Unremembered { accepted: bool },
    /// A developer's clone: the server decides.
    ServerDecides,
}

/// One ref update as git wrote it.
pub struct RefFacts<'a> {
    pub name: &'a str,
    /// The ids git wrote (`None` for the zero id): a commit, or a tag of one.
    pub old: Option<&'a str>,
    pub new: Option<&'a str>,
    /// Where the pushing clone last saw the ref (`refs/remotes/REMOTE/BRANCH`).
    pub last_seen: Option<ObjectId>,
}

/// Where a hook finds the test reports CI wrote for a commit.
pub trait ArtifactSource {
    /// The reports for `commit` (and the baseline's, for `base`, where kept), and where the
    /// hook looked.
    fn gather(
        &self,
        policy: &Policy,
        commit: ObjectId,
        base: Option<ObjectId>,
    ) -> anyhow::Result<Gathered>;
}

/// What an [`ArtifactSource`] found.
pub struct Gathered {
    pub artifacts: Artifacts,
    pub looked_in: LookedIn,
}

/// Where a hook looked for reports, for the finding when the ledger requires some.
pub enum LookedIn {
    /// The server has no `guard.artifacts` directory.
    NotConfigured,
    /// The server's directory for the pushed commit.
    ServerDir(String),
    /// The developer's work tree.
    WorkTree,
}

/// Decides every update of a push, in order. An update that cannot be judged (a tag of a
/// tree, a missing object) leaves the others judged.
pub fn decide_all(
    repo: &Repository,
    push: &PushFacts,
    updates: &[RefFacts],
    artifacts: &dyn ArtifactSource,
) -> Vec<RefVerdict> {
    updates
        .iter()
        .map(|u| {
            decide(repo, push, u, artifacts).unwrap_or_else(|e| RefVerdict::unjudged(u.name, &e))
        })
        .collect()
}

/// Whether `name` is judged at all: a protected ref, the default branch or the policy ref.
pub fn is_judged(push: &PushFacts, policy: &Policy, name: &str) -> bool {
    policy.refs.protected.set.is_match(name) || carries_the_policy(push, name)
}

fn carries_the_policy(push: &PushFacts, name: &str) -> bool {
    push.default_ref == Some(name) || push.policy_ref == Some(name)
}

/// The verdict on one update.
pub fn decide(
    repo: &Repository,
    push: &PushFacts,
    update: &RefFacts,
    source: &dyn ArtifactSource,
) -> anyhow::Result<RefVerdict> {
    let name = update.name;
    let mut verdict = RefVerdict::passed(name);
    // Whatever `[refs] protected` says: the ref is not a commit to judge, and it changes
    // what the commits already judged show.
    if update.new.is_some() && is_replace_ref(name) {
        verdict.findings.push(push::replace_ref(name));
        return Ok(verdict);
    }
    // The remote's old tip, as far as this side has it: a clone may not hold it.
    let old = match (push.hook, update.old) {
        (_, None) => None,
        (Hook::PrePush, Some(id)) => refs::peel_to_commit(repo, id).ok(),
        (Hook::PreReceive, Some(_)) => None,
    };
    let at_base;
    let (policy, revision) = match &push.policy {
        PolicyInForce::Loaded { policy, revision } => (*policy, *revision),
        PolicyInForce::AtBase => {
            let base = old.or(update.last_seen).or(push.default_tip);
            at_base = policy_at(repo, base, push.ledger)?;
            (&at_base, base)
        }
    };
    if !is_judged(push, policy, name) {
        return Ok(verdict);
    }
    let Some(new_id) = update.new else {
        deleted(push, policy, update, &mut verdict);
        return Ok(verdict);
    };
    // Peeled only now: a deletion needs no commit (the ref may hold a blob or tree).
    let old = match (push.hook, update.old) {
        (Hook::PreReceive, Some(id)) => Some(peel_commit(repo, push.hook, id, "old")?),
        _ => old,
    };
    let ledger = push.ledger;
    let recreated = match old {
        None => push.deleted.get(name),
        Some(_) => None,
    };
    let landed = push
        .landed
        .get(new_id)
        .filter(|_| !carries_the_policy(push, name));
    if let Some(&new) = landed {
        // The default branch holds the new commit, so every commit the update brings was
        // judged when it landed there. What is left is whether the update undoes a
        // protected change the ref held.
        verdict.findings = match (old, recreated) {
            (Some(old), _) => rewind_findings(repo, policy, (old, new), ledger, None)?,
            (None, Some(deleted)) => recreation(repo, policy, deleted, new, ledger, &mut verdict)?,
            (None, None) => Vec::new(),
        };
        return Ok(verdict);
    }
    let new = peel_commit(repo, push.hook, new_id, "new")?;
    let base = old.or(update.last_seen).or(push.default_tip);
    let mut prior = match recreated {
        Some(deleted) => recreation(repo, policy, deleted, new, ledger, &mut verdict)?,
        None => Vec::new(),
    };
    let gathered = source.gather(policy, new, base)?;
    if policy.artifacts.required && gathered.artifacts.junit.is_empty() {
        let place = match &gathered.looked_in {
            LookedIn::NotConfigured => ArtifactsPlace::NotConfigured,
            LookedIn::ServerDir(dir) => ArtifactsPlace::ServerDir(dir),
            LookedIn::WorkTree => ArtifactsPlace::WorkTree,
        };
        prior.push(push::artifacts_missing(place, &policy.artifacts.junit));
    }
    let options = check_options(push, policy, base, revision, gathered.artifacts);
    let known = match base {
        Some(b) => vec![b],
        None => push.known_without_base.to_vec(),
    };
    let report = judge(
        repo,
        Update {
            name,
            old,
            base,
            known,
            new,
            policy,
            prior,
            options,
            today: push.today,
        },
    )?;
    verdict.commits = report.history.as_ref().map_or(0, |h| h.judged);
    verdict.signers = report
        .history
        .as_ref()
        .map(|h| h.signer_lines())
        .unwrap_or_default();
    verdict.findings = report.findings;
    verdict.warnings = report.warnings;
    verdict.unjudged = report.unjudged.map(|e| e.to_string());
    Ok(verdict)
}

/// The verdict on deleting a protected ref: refused (`deletion`), or allowed and remembered
/// (the old tip goes to the audit log), with a note when nothing can remember it.
fn deleted(push: &PushFacts, policy: &Policy, update: &RefFacts, verdict: &mut RefVerdict) {
    match deletion(push, policy, update.name) {
        Some(deleted) => verdict
            .findings
            .push(push::ref_deletion(deleted, push.hook == Hook::PreReceive)),
        None => {
            verdict.deleted = update.old.map(str::to_string);
            if push.deletions == (DeletionMemory::Unremembered { accepted: true }) {
                verdict.notes.push("deleted; the server has no guard.auditLog, so guard cannot remember it, and the ref made again later is judged as a new ref, not as the rewind it may be".to_string());
            }
        }
    }
}

/// How an update's commits are judged: who pushes, which signers count and when, whether
/// the base's fixtures are trusted.
fn check_options(
    push: &PushFacts,
    policy: &Policy,
    base: Option<ObjectId>,
    revision: Option<ObjectId>,
    artifacts: Artifacts,
) -> CheckOptions {
    // A push is an agent's when any identity the server names for it is: that one is
    // matched (and named in the findings), else the first (the authenticated pusher).
    let pusher = push
        .identities
        .iter()
        .find(|id| policy.agents.pushers.first_match(id).is_some())
        .or(push.identities.first());
    // A base that came in by break-glass never passed the gate: hash its fixtures again.
    let trust_base_fixtures = !base.is_some_and(|b| {
        push.bypassed
            .is_none_or(|ids| ids.contains("*") || ids.contains(&b.to_string()))
    });
    // A push brings few commits: each is described, so that the pusher learns who signed it.
    CheckOptions {
        range: None,
        ledger: push.ledger.map(str::to_string),
        pusher: pusher.cloned(),
        artifacts,
        allowed_signers: push.allowed_signers.clone(),
        describe: Describe::AllWhenSigned,
        two_threads: true,
        policy_revision: revision,
        // A key retired before the push signs nothing new, whatever date a commit claims.
        signatures_valid_at: Some(push.now),
        trust_base_fixtures,
    }
}

/// Why deleting `name` is refused, if it is. The default branch and the policy ref carry the
/// policy every push is judged by: never deleted by a push (deleting and re-creating one
/// would judge pushes under the embedded policy).
fn deletion(push: &PushFacts, policy: &Policy, name: &str) -> Option<Deleted> {
    if push.default_ref == Some(name) {
        Some(Deleted::DefaultBranch)
    } else if push.policy_ref == Some(name) {
        Some(Deleted::PolicyRef)
    } else if !policy.refs.allow_delete {
        Some(Deleted::Protected)
    } else if push.deletions == (DeletionMemory::Unremembered { accepted: false }) {
        Some(Deleted::Unlogged)
    } else {
        None
    }
}

/// The commit the pushed id `id` names; `what` says which id of the update it is.
fn peel_commit(repo: &Repository, hook: Hook, id: &str, what: &str) -> anyhow::Result<ObjectId> {
    refs::peel_to_commit(repo, id).map_err(|e| match e {
        NotACommit::BadId(e) => anyhow::Error::new(e).context(format!("{what} id {id}")),
        NotACommit::Missing(e) => {
            anyhow::Error::new(e).context(format!("{what} object {id} is not in the repository"))
        }
        NotACommit::Malformed(e) => anyhow::Error::new(e).context(match hook {
            Hook::PreReceive => format!(
                "{what} object {id} is malformed (with receive.fsckObjects on, git refuses such objects before guard runs)"
            ),
            Hook::PrePush => format!("{what} object {id} is malformed (git fsck shows it)"),
        }),
        NotACommit::Other(_) => {
            anyhow::anyhow!("{what} {id} is not a commit (or a tag of one); guard cannot judge it")
        }
    })
}

/// A ref made again after a deletion: judged as a force push from the tip it was deleted at,
/// or deleting it and making it again at an old commit would rewind it in two pushes.
///
/// Only a deletion guard remembers counts. A ref made for the first time at an old commit
/// is not a rewind: maintenance branches and tags on old releases are made that way, and no
/// ref of that name held newer protected content. The older content reaches the default
/// branch only by a merge (judged: taking an ancestor's protected content back is the merge's
/// own edit) or a fast-forward of it (a rewind, judged as one).
fn recreation(
    repo: &Repository,
    policy: &Policy,
    deleted: &str,
    new: ObjectId,
    ledger: Option<&str>,
    verdict: &mut RefVerdict,
) -> anyhow::Result<Vec<Finding>> {
    let Ok(old) = refs::peel_to_commit(repo, deleted) else {
        // Pruned since: unreachable for weeks (git gc's grace period), so no ref kept what
        // it held; there is nothing left to compare with.
        verdict.notes.push(format!(
            "re-created; the tip it was deleted at ({deleted}) is gone from the repository, so it is judged as a new ref"
        ));
        return Ok(Vec::new());
    };
    let short = git::short_id(repo, old);
    Ok(rewind_findings(repo, policy, (old, new), ledger, None)?
        .into_iter()
        .map(|f| crate::rules::history::recreated_rewind(f, &short))
        .collect())
}

/// One ref update's commits to judge, once the facts are settled.
pub struct Update<'a> {
    /// The ref's full name, as reports show it.
    pub name: &'a str,
    /// The tip the receiving side holds now: a non-fast-forward update is checked against it
    /// for protected changes it undoes.
    pub old: Option<ObjectId>,
    /// Where the judged range starts: its policy files and fixtures are the base (the old
    /// tip, else the default branch, or what the pushing clone last saw of the remote).
    pub base: Option<ObjectId>,
    /// What the receiving side already has: commits reachable from these are not judged.
    pub known: Vec<ObjectId>,
    /// The new tip (a commit).
    pub new: ObjectId,
    /// The policy in force (the default branch's, or `guard.policyRef`'s).
    pub policy: &'a Policy,
    /// Findings about the update made before its commits are judged (a re-created ref,
    /// missing CI artifacts); reported after a rewind's and before the commits'.
    pub prior: Vec<Finding>,
    /// How the commits and the tip are judged (`CheckOptions::range` is unused here).
    pub options: CheckOptions,
    pub today: Date,
}

/// Judges `update`: the protected changes a rewind undoes, then the commits it brings and
/// its tip. The report's history says how many commits were judged.
pub fn judge(repo: &Repository, update: Update) -> anyhow::Result<Report> {
    let ledger = update.options.ledger.as_deref();
    // A push of history the receiving side never had, from before its ledger's first
    // commit (a project adopting guard, pushed into a new guarded repository), is judged
    // from that commit on (`adoption`).
    let ledger_path = ledger.unwrap_or(crate::policy::ledger::DEFAULT_LEDGER_PATH);
    let mut known = update.known.clone();
    // Only where no ledger is in force yet (the policy ref holds none): once the receiving
    // side has adopted guard, every commit a push brings is judged, also on a branch made
    // from history older than the adoption (an agent's commits there, topped by a copy of
    // the ledger's commit, would otherwise be history "before adoption").
    let adopting = update.policy.files_optional();
    let start = match adopting {
        true => adoption::start(repo, update.base, update.new, ledger_path, None)?,
        false => None,
    };
    let before_adoption = match start {
        Some(a) => {
            let skipped = range::commits(repo, a.parent, &known)?.len();
            known.push(a.parent);
            (skipped > 0).then(|| adoption::warning(repo, a, ledger_path, skipped))
        }
        None => None,
    };
    let commits = range::commits(repo, update.new, &known)?;
    let mut findings = match update.old {
        Some(old) => rewind_findings(
            repo,
            update.policy,
            (old, update.new),
            ledger,
            Some(&commits),
        )?,
        None => Vec::new(),
    };
    findings.extend(update.prior);
    let judged = Judged {
        base: update.base,
        tip: update.new,
        commits: &commits,
        spec: update.name,
    };
    let mut report = audit::judge(
        repo,
        &judged,
        &update.options,
        update.today,
        Some(update.policy.clone()),
    )?;
    findings.append(&mut report.findings);
    report.findings = findings;
    report.warnings.extend(before_adoption);
    Ok(report)
}
