//! `guard hook pre-receive`: judges every ref update of a push on the server. Reads all
//! `<old> <new> <ref>` lines, opens the repository from git's environment (so quarantined
//! objects are visible), judges each protected ref's new commits under the policy of the
//! default branch's current tip (or `guard.policyRef`'s), refuses replace refs, and rejects
//! the whole push on any finding, on bad input, on an internal error, or when its own time
//! runs out. It never writes to the repository; the only file it writes is the audit log
//! (break-glass pushes, and deletions of protected refs so that re-creating one is judged as
//! the rewind it is).

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};

use anyhow::{Context as _, anyhow, bail};
use jiff::civil::Date;

use crate::engine::audit::{CheckOptions, Describe, policy_at, rewind_findings};
use crate::engine::ref_update::{self, Update};
use crate::engine::score::Artifacts;
use crate::exit;
use crate::git::commit::Commit;
use crate::git::refs::{self, NotACommit};
use crate::git::{self, Oid, Repository};
use crate::hooks::audit_log;
use crate::hooks::server::{
    ServerConfig, bypass_reason, push_identities_from_env, push_options_from_env, pusher_from_env,
};
use crate::hooks::{HookInputError, is_replace_ref, parse_id};
use crate::policy::ledger::Policy;
use crate::render::hook::Messages;
use crate::render::hook::{signer_lines, warning_line};
use crate::report::finding::Finding;
use crate::rules::push::{self, ArtifactsPlace, Deleted};
use crate::wording::count;

/// One line of pre-receive input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefUpdate {
    pub old: Option<String>,
    pub new: Option<String>,
    pub name: String,
}

/// Parses git's pre-receive (and post-receive) input. Every line must be well formed: a
/// hook that skipped a line it did not understand would let that ref through.
pub fn parse_updates(input: &mut dyn BufRead) -> Result<Vec<RefUpdate>, HookInputError> {
    let text = super::read_input(input, "pre-receive", "ref updates", "<old> <new> <ref>")?;
    let mut updates = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let fields: Vec<&str> = line.split(' ').collect();
        let [old, new, name] = fields[..] else {
            return Err(HookInputError::Fields {
                line: i + 1,
                expected: "<old-id> <new-id> <ref>",
                got: shorten(line),
            });
        };
        let id = |text| parse_id(text).map_err(|id| HookInputError::Id { line: i + 1, id });
        let old = id(old)?;
        let new = id(new)?;
        if !name.starts_with("refs/") || name.contains(char::is_control) {
            return Err(HookInputError::RefName {
                line: i + 1,
                name: shorten(name),
            });
        }
        updates.push(RefUpdate {
            old,
            new,
            name: name.to_string(),
        });
    }
    Ok(updates)
}

fn shorten(text: &str) -> String {
    text.chars().take(80).collect()
}

/// Runs the hook; returns the exit code (0 accepts the push).
pub fn run(input: &mut dyn BufRead, today: Date) -> i32 {
    let msg = Messages::from_env();
    let mut err = std::io::stderr().lock();
    let updates = match parse_updates(input) {
        Ok(u) => u,
        Err(e) => {
            let _ = err.write_all(msg.error(&format!("guard: {e}")).as_bytes());
            let _ = err.write_all(
                msg.hint("guard reads git's pre-receive input; run it from a hook")
                    .as_bytes(),
            );
            return exit::CANNOT_JUDGE;
        }
    };
    // git trusts the repository it runs the hook in; libgit2 would refuse one owned by
    // another user (common on servers), so owner validation is off for the hook.
    // SAFETY: set before any repository is opened, from the only thread running.
    unsafe {
        git::trust_repositories_of_other_owners();
    }
    let setup = (|| -> anyhow::Result<(Repository, ServerConfig)> {
        let repo = git::open()?;
        let config = ServerConfig::read(&repo)?;
        Ok((repo, config))
    })();
    let (repo, config) = match setup {
        Ok(s) => s,
        Err(e) => {
            let _ = err.write_all(msg.error(&format!("guard: {e:#}")).as_bytes());
            return exit::CANNOT_JUDGE;
        }
    };
    if !config.fsck_objects {
        let _ = err.write_all(
            msg.warning("guard: receive.fsckObjects is off, so git does not check the pushed objects (malformed trees, bad ids); a server admin sets `git config receive.fsckObjects true`")
                .as_bytes(),
        );
    }
    let pusher = pusher_from_env();
    let identities = push_identities_from_env();
    let options = push_options_from_env();

    if let Some(reason) = bypass_reason(&options) {
        match break_glass(&config, pusher.as_deref(), &reason, &updates) {
            Ok(()) => {
                let who = pusher.as_deref().unwrap_or("?");
                let _ = err.write_all(
                    msg.warning(&format!("guard: break-glass by {who}: push accepted without checks, logged (reason: {reason})"))
                        .as_bytes(),
                );
                return exit::MERGE;
            }
            Err(e) => {
                let _ = err.write_all(
                    msg.warning(&format!(
                        "guard: break-glass refused: {e:#}; checking the push as usual"
                    ))
                    .as_bytes(),
                );
            }
        }
    }
    // git has no hook timeout: guard keeps its own and fails closed when it runs out.
    let (tx, rx) = mpsc::channel();
    let worker_updates = updates.clone();
    let worker_config = config.clone();
    let started = std::time::Instant::now();
    let log_pusher = pusher.clone();
    // Evaluate mode (`guard.mode`, or the ledger's `mode` once the worker read it) rejects
    // nothing, whatever happens: a late or failed judgement included.
    let evaluate = Arc::new(AtomicBool::new(config.evaluate));
    let worker_evaluate = Arc::clone(&evaluate);
    // The repository opened for the configuration is the one judged: opening it again read
    // its config files, packs and commit-graph a second time.
    std::thread::spawn(move || {
        let result = judge_push(
            repo,
            &worker_updates,
            &worker_config,
            &identities,
            today,
            &worker_evaluate,
        );
        let _ = tx.send(result);
    });
    // A push that deletes refs is not accepted blind (a late or failed judgement): the audit
    // log must learn of a deletion, and the default branch must not go.
    let deletes = updates.iter().any(|u| u.new.is_none());
    let accepted_anyway = |err: &mut dyn Write| {
        let _ = err.write_all(
            msg.warning("guard: evaluate mode (guard.mode, or the ledger's mode): this push would be rejected; it is accepted")
                .as_bytes(),
        );
        exit::MERGE
    };
    let received = in_time(
        rx.recv_timeout(config.timeout),
        started.elapsed(),
        config.timeout,
    );
    let outcome = match received {
        Ok(outcome) => outcome,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            if evaluate.load(Ordering::SeqCst) && !deletes {
                let _ = err.write_all(
                    msg.warning(&format!(
                        "guard: checking the push took longer than {:?} (guard.timeout)",
                        config.timeout
                    ))
                    .as_bytes(),
                );
                return accepted_anyway(&mut err);
            }
            let _ = err.write_all(
                msg.error(&format!(
                    "guard: checking the push took longer than {:?} (guard.timeout); push rejected",
                    config.timeout
                ))
                .as_bytes(),
            );
            let _ = err.write_all(
                msg.hint(
                    "retry; if it keeps happening, ask the server admin to raise guard.timeout",
                )
                .as_bytes(),
            );
            return exit::REJECT;
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            if evaluate.load(Ordering::SeqCst) && !deletes {
                let _ = err.write_all(
                    msg.warning("guard: internal error while checking the push")
                        .as_bytes(),
                );
                return accepted_anyway(&mut err);
            }
            let _ = err.write_all(
                msg.error("guard: internal error while checking the push; push rejected")
                    .as_bytes(),
            );
            return exit::CANNOT_JUDGE;
        }
    };
    let evaluate = evaluate.load(Ordering::SeqCst);
    match outcome {
        Err(e) if evaluate && !deletes => {
            let _ = err.write_all(msg.warning(&format!("guard: {e:#}")).as_bytes());
            accepted_anyway(&mut err)
        }
        Err(e) => {
            let _ = err.write_all(msg.error(&format!("guard: {e:#}")).as_bytes());
            let _ = err.write_all(
                msg.hint("the push could not be judged, so it is rejected")
                    .as_bytes(),
            );
            exit::CANNOT_JUDGE
        }
        Ok(results) => {
            let mut rejected = false;
            let mut unjudged = false;
            let mut keeps_the_gate = false;
            let mut judged = 0;
            for r in &results {
                judged += r.commits;
                for line in &r.signers {
                    let _ = writeln!(err, "guard: {}: {line}", r.name);
                }
                for line in &r.warnings {
                    let _ = err.write_all(msg.warning(&format!("{}: {line}", r.name)).as_bytes());
                }
                for f in &r.findings {
                    rejected = true;
                    keeps_the_gate |= f.code.keeps_the_gate();
                    let enforced = !evaluate || f.code.keeps_the_gate();
                    let _ = err.write_all(msg.finding_in(&r.name, f, enforced).as_bytes());
                }
                if let Some(e) = &r.unjudged {
                    unjudged = true;
                    let line = format!("{}: cannot judge: {e}", r.name);
                    let line = match evaluate {
                        true => msg.warning(&line),
                        false => msg.error(&line),
                    };
                    let _ = err.write_all(line.as_bytes());
                }
            }
            if evaluate && (rejected || unjudged) && !keeps_the_gate {
                accepted_anyway(&mut err);
                rejected = false;
                unjudged = false;
            }
            // Any finding rejects (exit 1), whatever else could not be judged.
            if rejected {
                let _ = err.write_all(
                    msg.error("guard: push rejected by the merge ledger")
                        .as_bytes(),
                );
                exit::REJECT
            } else if unjudged {
                let _ = err.write_all(
                    msg.error("guard: push rejected: part of it could not be judged")
                        .as_bytes(),
                );
                exit::CANNOT_JUDGE
            } else {
                if let Err(e) = remember_deletions(&config, log_pusher.as_deref(), &results) {
                    let _ = err.write_all(msg.error(&format!("guard: {e:#}")).as_bytes());
                    let _ = err.write_all(
                        msg.hint("guard must remember a deleted protected ref, so that re-creating it is judged; ask a server admin to fix guard.auditLog")
                            .as_bytes(),
                    );
                    return exit::CANNOT_JUDGE;
                }
                if config.audit_log.is_none() {
                    for r in results.iter().filter(|r| r.deleted.is_some()) {
                        let _ = err.write_all(
                            msg.warning(&format!("{}: deleted; the server has no guard.auditLog, so guard cannot remember it, and the ref made again later is judged as a new ref, not as the rewind it may be", r.name))
                                .as_bytes(),
                        );
                    }
                }
                let _ = writeln!(
                    err,
                    "guard: {} accepted, {} judged",
                    count(results.len(), "ref update"),
                    count(judged, "commit")
                );
                exit::MERGE
            }
        }
    }
}

/// The worker's verdict, unless judging took longer than `timeout`. The time runs from the
/// start of the judging, not from when the waiting thread gets to wait: on a busy machine it
/// may get there only after a late verdict has arrived, which `recv_timeout` then returns.
fn in_time<T>(
    received: Result<T, mpsc::RecvTimeoutError>,
    elapsed: std::time::Duration,
    timeout: std::time::Duration,
) -> Result<T, mpsc::RecvTimeoutError> {
    match received {
        Ok(_) if elapsed > timeout => Err(mpsc::RecvTimeoutError::Timeout),
        r => r,
    }
}

/// The verdict on one ref update.
pub struct RefVerdict {
    pub name: String,
    pub findings: Vec<Finding>,
    /// Commits judged.
    pub commits: usize,
    /// Why the update's tip could not be judged, if so.
    pub unjudged: Option<String>,
    /// `<short id> <who signed>` per judged commit, when signatures were checked.
    pub signers: Vec<String>,
    /// What the pusher should know that does not reject the update.
    pub warnings: Vec<String>,
    /// The old tip, when the update deletes a protected ref.
    pub deleted: Option<String>,
}

/// What every update of one push is judged by.
struct PushContext<'a> {
    config: &'a ServerConfig,
    /// The default branch: its ref name and tip.
    default: (Option<String>, Option<Oid>),
    /// The policy ref (`guard.policyRef`, else the default branch): its name and tip.
    policy_ref: (Option<String>, Option<Oid>),
    /// The ledger at the policy ref's tip: in force for every ref.
    policy: Policy,
    /// Per ref name, the tip it had when the audit log last saw it deleted (read when the
    /// push creates a ref).
    deleted: HashMap<String, String>,
    /// The ids break-glass pushes made ref tips (they never passed the gate); `None` when the
    /// audit log exists but cannot be read, which withdraws trust from every base.
    bypassed: Option<HashSet<String>>,
    /// The new ids of judged updates whose commits the default branch already holds (judged
    /// when they landed there): the id as pushed (a commit or a tag), to the commit.
    landed: HashMap<String, Oid>,
    identities: &'a [String],
    today: Date,
    now: jiff::Timestamp,
}

/// Judges every update.
fn judge_push(
    repo: Repository,
    updates: &[RefUpdate],
    config: &ServerConfig,
    identities: &[String],
    today: Date,
    evaluate: &AtomicBool,
) -> anyhow::Result<Vec<RefVerdict>> {
    let default = default_branch(&repo, config)?;
    let policy_ref = match &config.policy_ref {
        None => default.clone(),
        Some(name) => {
            let name = full_ref_name(name);
            let tip = ref_tip(&repo, &name, "the policy ref")?;
            (Some(name), tip)
        }
    };
    if policy_ref.1.is_none() && refs::any_ref(&repo)? {
        bail!(
            "the policy ref ({}) does not exist, so no push has a policy to be judged by; a server admin creates it or unsets `guard.policyRef`",
            policy_ref.0.as_deref().unwrap_or("HEAD")
        );
    }
    // The policy in force is never older than the policy ref's current ledger: a ref made at
    // an old commit (or left behind) does not bring an old ledger back. A push that edits the
    // ledger on the policy ref itself is judged by the ledger it replaces: its old tip.
    let policy = policy_at(&repo, policy_ref.1, config.ledger.as_deref())?;
    if policy.evaluate {
        evaluate.store(true, Ordering::SeqCst);
    }
    let creates = updates.iter().any(|u| u.old.is_none() && u.new.is_some());
    // The audit log is read once per push, however many refs it updates.
    let log_text = match &config.audit_log {
        None => Ok(String::new()),
        Some(log) => match audit_log::read(log) {
            Ok(text) => Ok(text.unwrap_or_default()),
            Err(e) => Err((log.clone(), e)),
        },
    };
    let deleted = match (&log_text, &config.audit_log) {
        (_, _) if !creates => HashMap::new(),
        (Ok(text), Some(log)) => deleted_tips(text).map_err(|line| {
            anyhow!(
                "the audit log {} has a line that is not JSON (line {line}), so which refs were deleted cannot be told; a server admin repairs the log",
                log.display()
            )
        })?,
        (Ok(_), None) => HashMap::new(),
        (Err((log, e)), _) => bail!(
            "cannot read the audit log {} ({e}), which says which refs were deleted",
            log.display()
        ),
    };
    let bypassed = log_text.ok().map(|text| bypassed_tips(&text));
    let mut ctx = PushContext {
        config,
        default,
        policy_ref,
        policy,
        deleted,
        bypassed,
        landed: HashMap::new(),
        identities,
        today,
        now: jiff::Timestamp::now(),
    };
    ctx.landed = landed_commits(&repo, &ctx, updates)?;
    let mut out = Vec::new();
    for update in updates {
        // A ref that cannot be judged (a tag of a tree, a missing object) leaves the others
        // judged: a finding on any of them rejects with exit 1 and is shown.
        let verdict = judge_ref(&repo, &ctx, update).unwrap_or_else(|e| RefVerdict {
            name: update.name.clone(),
            findings: Vec::new(),
            commits: 0,
            unjudged: Some(format!("{e:#}")),
            signers: Vec::new(),
            warnings: Vec::new(),
            deleted: None,
        });
        out.push(verdict);
    }
    Ok(out)
}

/// Whether `update` goes through [`judge_ref`]'s judging at all: a new commit for a protected
/// ref (replace refs are refused before this, unprotected refs pass).
fn judged_ref(ctx: &PushContext, update: &RefUpdate) -> bool {
    update.new.is_some()
        && !is_replace_ref(&update.name)
        && (ctx.policy.refs.protected.set.is_match(&update.name)
            || is_default_or_policy(ctx, &update.name))
}

fn is_default_or_policy(ctx: &PushContext, name: &str) -> bool {
    ctx.default.0.as_deref() == Some(name) || ctx.policy_ref.0.as_deref() == Some(name)
}

/// The new ids of the judged updates (other than of the default branch and the policy ref)
/// whose commits the default branch's current tip already holds, with those commits, found
/// in one walk. A mirror or a tag import pushes thousands of refs at such commits: each is
/// then settled by a lookup, where judging it alone would walk and score it once per ref.
/// An id that names no commit is left to `judge_ref` to report.
fn landed_commits(
    repo: &Repository,
    ctx: &PushContext,
    updates: &[RefUpdate],
) -> anyhow::Result<HashMap<String, Oid>> {
    let Some(default_tip) = ctx.default.1 else {
        return Ok(HashMap::new());
    };
    let pushed = updates
        .iter()
        .filter(|u| judged_ref(ctx, u) && !is_default_or_policy(ctx, &u.name))
        .filter_map(|u| u.new.as_deref());
    refs::held_by(repo, default_tip, pushed)
}

/// `main` is `refs/heads/main`; a name starting `refs/` is taken as it is.
fn full_ref_name(name: &str) -> String {
    if name.starts_with("refs/") {
        name.to_string()
    } else {
        format!("refs/heads/{name}")
    }
}

/// The commit `name` points at, if the ref exists.
fn ref_tip(repo: &Repository, name: &str, what: &str) -> anyhow::Result<Option<Oid>> {
    refs::tip(repo, name).with_context(|| format!("{what} {name}"))
}

/// The default branch: its ref name and tip. `guard.defaultBranch`, else what HEAD points
/// at. A repository with refs but no resolvable default branch cannot be judged: new refs
/// would otherwise be judged under the embedded policy, not the project's.
fn default_branch(
    repo: &Repository,
    config: &ServerConfig,
) -> anyhow::Result<(Option<String>, Option<Oid>)> {
    let name = match &config.default_branch {
        Some(b) => Some(full_ref_name(b)),
        None => refs::head_target(repo),
    };
    let tip = match name.as_deref() {
        Some(n) => ref_tip(repo, n, "default branch")?,
        None => None,
    };
    if tip.is_none() && refs::any_ref(repo)? {
        bail!(
            "the default branch ({}) does not exist, so new refs have no policy to be judged by; a server admin sets `git config guard.defaultBranch <branch>`",
            name.as_deref().unwrap_or("HEAD")
        );
    }
    Ok((name, tip))
}

/// The commit the pushed id `id` names; `what` says which id of the update it is.
fn peel_commit(repo: &Repository, id: &str, what: &str) -> anyhow::Result<Oid> {
    refs::peel_to_commit(repo, id).map_err(|e| match e {
        NotACommit::BadId(e) => anyhow::Error::new(e).context(format!("{what} id {id}")),
        NotACommit::Missing(e) => {
            anyhow::Error::new(e).context(format!("{what} object {id} is not in the repository"))
        }
        NotACommit::Malformed(e) => anyhow::Error::new(e).context(format!(
            "{what} object {id} is malformed (with receive.fsckObjects on, git refuses such objects before guard runs)"
        )),
        NotACommit::Other(_) => {
            anyhow!("{what} {id} is not a commit (or a tag of one); guard cannot judge it")
        }
    })
}

fn judge_ref(
    repo: &Repository,
    ctx: &PushContext,
    update: &RefUpdate,
) -> anyhow::Result<RefVerdict> {
    let verdict = |findings: Vec<Finding>, commits: usize, unjudged: Option<String>| RefVerdict {
        name: update.name.clone(),
        findings,
        commits,
        unjudged,
        signers: Vec::new(),
        warnings: Vec::new(),
        deleted: None,
    };
    // Whatever `[refs] protected` says: the ref is not a commit to judge, and it changes
    // what the commits already judged show.
    if update.new.is_some() && is_replace_ref(&update.name) {
        return Ok(verdict(vec![push::replace_ref(&update.name)], 0, None));
    }
    let config = ctx.config;
    let ledger = config.ledger.as_deref();
    let policy = &ctx.policy;
    let default_tip = ctx.default.1;
    let is_default = ctx.default.0.as_deref() == Some(update.name.as_str());
    let is_policy = ctx.policy_ref.0.as_deref() == Some(update.name.as_str());
    if !policy.refs.protected.set.is_match(&update.name) && !is_default && !is_policy {
        return Ok(verdict(Vec::new(), 0, None));
    }
    let Some(new_id) = &update.new else {
        // The default branch (and the policy ref) carry the policy every push is judged by:
        // never deleted here (deleting and re-creating one would judge pushes under the
        // embedded policy).
        let deleted = if is_default {
            Deleted::DefaultBranch
        } else if is_policy {
            Deleted::PolicyRef
        } else if policy.refs.allow_delete
            && (config.audit_log.is_some() || config.allow_unlogged_delete)
        {
            let mut v = verdict(Vec::new(), 0, None);
            v.deleted = update.old.clone();
            return Ok(v);
        } else if policy.refs.allow_delete {
            Deleted::Unlogged
        } else {
            Deleted::Protected
        };
        let f = push::ref_deletion(deleted, true);
        return Ok(verdict(vec![f], 0, None));
    };
    // Peeled only now: a deletion needs no commit (the ref may hold a blob or tree).
    let old = match &update.old {
        Some(id) => Some(peel_commit(repo, id, "old")?),
        None => None,
    };
    let landed = ctx
        .landed
        .get(new_id)
        .copied()
        .filter(|_| !is_default && !is_policy);
    if let Some(new) = landed {
        // The default branch holds the new commit, so every commit the update brings was
        // judged when it landed there; the ref's new tip brings nothing the repository's
        // history does not already show. What is left is whether the update undoes a
        // protected change the ref held.
        let mut v = verdict(Vec::new(), 0, None);
        match (old, ctx.deleted.get(&update.name)) {
            (Some(old), _) => {
                v.findings = rewind_findings(repo, policy, (old, new), ledger, None)?;
            }
            (None, Some(deleted)) => {
                v.findings =
                    recreation_findings(repo, policy, deleted, new, ledger, &mut v.warnings)?;
            }
            (None, None) => {}
        }
        return Ok(v);
    }
    let new = peel_commit(repo, new_id, "new")?;
    let base = old.or(default_tip);

    let mut prior = Vec::new();
    let mut warnings = Vec::new();
    if let (None, Some(deleted)) = (old, ctx.deleted.get(&update.name)) {
        prior.extend(recreation_findings(
            repo,
            policy,
            deleted,
            new,
            ledger,
            &mut warnings,
        )?);
    }
    let mut artifacts = server_artifacts(repo, config, policy, new, &mut prior)?;
    // The base passed the gate with its own reports: they are the baseline, when CI left them.
    if let (Some(base), Some(template)) = (base, &config.artifacts) {
        let dir = artifact_dir(repo, template, base)?;
        artifacts.baseline_junit = crate::hooks::artifacts_in(&dir, &policy.artifacts)?.junit;
    }
    // A push is an agent's when any identity the server names for it is: that one is
    // matched (and named in the findings), else the authenticated pusher.
    let pusher = ctx
        .identities
        .iter()
        .find(|id| policy.agents.pushers.first_match(id).is_some())
        .or(ctx.identities.first());
    // A base that came in by break-glass never passed the gate: hash its fixtures again.
    let trust = !base.is_some_and(|b| {
        ctx.bypassed
            .as_ref()
            .is_none_or(|ids| ids.contains("*") || ids.contains(&b.to_string()))
    });
    // A push brings few commits: each is described, so that the pusher learns who signed it.
    let options = CheckOptions {
        range: None,
        ledger: ledger.map(str::to_string),
        pusher: pusher.cloned(),
        artifacts,
        allowed_signers: config.allowed_signers.clone(),
        describe: Describe::AllWhenSigned,
        two_threads: true,
        policy_revision: ctx.policy_ref.1,
        // A key retired before the push signs nothing new, whatever date a commit claims.
        signatures_valid_at: Some(ctx.now),
        trust_base_fixtures: trust,
    };
    let report = ref_update::judge(
        repo,
        Update {
            name: &update.name,
            old,
            base,
            known: base.into_iter().collect(),
            new,
            policy,
            prior,
            options,
            today: ctx.today,
        },
    )?;
    let judged = report.history.as_ref().map_or(0, |h| h.judged);
    let mut v = verdict(
        report.findings,
        judged,
        report.unjudged.map(|e| e.to_string()),
    );
    v.signers = signer_lines(report.history.as_ref());
    v.warnings = warnings;
    v.warnings.extend(report.warnings.iter().map(warning_line));
    Ok(v)
}

/// Per ref, where the audit log last saw it deleted: its tip then. A ref moved or made after
/// that (by break-glass) was not deleted since, as far as guard knows. A line that is not
/// JSON (its 1-based number is the error) may have recorded a deletion: nothing is assumed
/// (fail closed). Read once per push, however many refs it creates.
fn deleted_tips(log: &str) -> Result<HashMap<String, String>, usize> {
    let mut deleted = HashMap::new();
    for (i, line) in log.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let entry = serde_json::from_str::<serde_json::Value>(line).map_err(|_| i + 1)?;
        for r in entry["refs"].as_array().into_iter().flatten() {
            let Some(name) = r["ref"].as_str() else {
                continue;
            };
            match (r["old"].as_str(), r["new"].as_str()) {
                (Some(old), None) => deleted.insert(name.to_string(), old.to_string()),
                _ => deleted.remove(name),
            };
        }
    }
    Ok(deleted)
}

/// A ref made again after a deletion: judged as a force push from the tip it was deleted at,
/// or deleting it and making it again at an old commit would rewind it in two pushes.
///
/// Only a deletion guard remembers counts. A ref made for the first time at an old commit
/// is not a rewind: maintenance branches and tags on old releases are made that way, and no
/// ref of that name held newer protected content. The older content reaches the default
/// branch only by a merge (judged: taking an ancestor's protected content back is the merge's
/// own edit) or a fast-forward of it (a rewind, judged as one).
fn recreation_findings(
    repo: &Repository,
    policy: &Policy,
    deleted: &str,
    new: Oid,
    ledger: Option<&str>,
    warnings: &mut Vec<String>,
) -> anyhow::Result<Vec<Finding>> {
    let Ok(old) = refs::peel_to_commit(repo, deleted) else {
        // Pruned since: unreachable for weeks (git gc's grace period), so no ref kept what
        // it held; there is nothing left to compare with.
        warnings.push(format!(
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

/// Appends the deletions of protected refs this push makes to the audit log, so that making
/// one of them again is judged against the tip it had. Written only once the whole push is
/// accepted; a deletion git then fails to apply leaves an entry naming a tip the ref really
/// had, which is harmless.
fn remember_deletions(
    config: &ServerConfig,
    pusher: Option<&str>,
    results: &[RefVerdict],
) -> anyhow::Result<()> {
    let Some(log) = &config.audit_log else {
        return Ok(());
    };
    let refs: Vec<serde_json::Value> = results
        .iter()
        .filter_map(|r| {
            r.deleted
                .as_ref()
                .map(|old| serde_json::json!({"ref": r.name, "old": old, "new": null}))
        })
        .collect();
    if refs.is_empty() {
        return Ok(());
    }
    audit_log::append(
        log,
        &serde_json::json!({
            "time_utc": jiff::Timestamp::now().to_string(),
            "event": "guard.delete",
            "pusher": pusher,
            "refs": refs,
        }),
        config.timeout,
    )
}

/// The artifacts CI left for `commit` in the directory `guard.artifacts` names.
fn server_artifacts(
    repo: &Repository,
    config: &ServerConfig,
    policy: &Policy,
    commit: Oid,
    findings: &mut Vec<Finding>,
) -> anyhow::Result<Artifacts> {
    let mut artifacts = Artifacts::default();
    let Some(template) = &config.artifacts else {
        if policy.artifacts.required {
            findings.push(push::artifacts_missing(
                ArtifactsPlace::NotConfigured,
                &policy.artifacts.junit,
            ));
        }
        return Ok(artifacts);
    };
    let dir = artifact_dir(repo, template, commit)?;
    artifacts = crate::hooks::artifacts_in(&dir, &policy.artifacts)?;
    if policy.artifacts.required && artifacts.junit.is_empty() {
        findings.push(push::artifacts_missing(
            ArtifactsPlace::ServerDir(&dir.display().to_string()),
            &policy.artifacts.junit,
        ));
    }
    Ok(artifacts)
}

/// The directory `guard.artifacts` (`template`) names for `commit`.
fn artifact_dir(repo: &Repository, template: &str, commit: Oid) -> anyhow::Result<PathBuf> {
    let tree = Commit::find(repo, commit)?.tree_id();
    let dir = template
        .replace("{commit}", &commit.to_string())
        .replace("{tree}", &tree.to_string());
    Ok(if Path::new(&dir).is_absolute() {
        PathBuf::from(dir)
    } else {
        git::git_dir(repo).join(dir)
    })
}

/// The ids that became ref tips by break-glass (the audit log names them as new ids). A line
/// that is not JSON withdraws trust from everything: `"*"` stands for every id.
fn bypassed_tips(log: &str) -> HashSet<String> {
    let mut ids = HashSet::new();
    for line in log.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(entry) = serde_json::from_str::<serde_json::Value>(line) else {
            return HashSet::from(["*".to_string()]);
        };
        for r in entry["refs"].as_array().into_iter().flatten() {
            if let Some(new) = r["new"].as_str() {
                ids.insert(new.to_string());
            }
        }
    }
    ids
}

/// Honours `git push -o guard.bypass=REASON` for a pusher on the server's allowlist, and
/// logs it. Push options are unauthenticated, so the pusher must come from the forge.
fn break_glass(
    config: &ServerConfig,
    pusher: Option<&str>,
    reason: &str,
    updates: &[RefUpdate],
) -> anyhow::Result<()> {
    let Some(pusher) = pusher else {
        bail!(
            "the server does not say who is pushing (no GL_USERNAME, GITHUB_USER_LOGIN, GITEA_PUSHER_NAME, signed push or REMOTE_USER)"
        );
    };
    if !config.bypass.iter().any(|allowed| allowed == pusher) {
        bail!("{pusher} is not in the server's guard.bypass list");
    }
    if reason.is_empty() {
        bail!("give a reason: git push -o guard.bypass=\"why\"");
    }
    let Some(log) = &config.audit_log else {
        bail!("the server has no guard.auditLog, and a bypass must be logged");
    };
    let refs: Vec<serde_json::Value> = updates
        .iter()
        .map(|u| serde_json::json!({"ref": u.name, "old": u.old, "new": u.new}))
        .collect();
    audit_log::append(
        log,
        &serde_json::json!({
            "time_utc": jiff::Timestamp::now().to_string(),
            "event": "guard.bypass",
            "pusher": pusher,
            "reason": reason,
            "refs": refs,
        }),
        config.timeout,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<RefUpdate>, String> {
        parse_updates(&mut text.as_bytes()).map_err(|e| e.to_string())
    }

    #[test]
    fn a_verdict_that_arrives_after_the_timeout_is_a_timeout() {
        // The race itself cannot be staged from outside (the waiting thread would have to be
        // descheduled between the start and the wait), so the decision is tested here.
        use mpsc::RecvTimeoutError::{Disconnected, Timeout};
        use std::time::Duration;
        let timeout = Duration::from_secs(4);
        assert_eq!(in_time(Ok(7), Duration::from_secs(3), timeout), Ok(7));
        assert_eq!(in_time(Ok(7), timeout, timeout), Ok(7));
        assert_eq!(
            in_time(Ok(7), Duration::from_millis(4001), timeout),
            Err(Timeout)
        );
        assert_eq!(
            in_time::<u8>(Err(Disconnected), Duration::from_secs(1), timeout),
            Err(Disconnected)
        );
        assert_eq!(
            in_time::<u8>(Err(Timeout), Duration::from_secs(4), timeout),
            Err(Timeout)
        );
    }

    #[test]
    fn reads_every_line_with_zero_ids() {
        let zero = "0".repeat(40);
        let a = "a".repeat(40);
        let text = format!("{zero} {a} refs/heads/new\n{a} {zero} refs/heads/gone\n");
        let updates = parse(&text).unwrap();
        assert_eq!(updates.len(), 2);
        assert_eq!(updates[0].old, None);
        assert_eq!(updates[0].new.as_deref(), Some(a.as_str()));
        assert_eq!(updates[1].new, None);
    }

    #[test]
    fn the_last_deletion_of_a_ref_in_the_audit_log() {
        let (a, b) = ("a".repeat(40), "b".repeat(40));
        let deleted = |r: &str, old: &str| {
            format!(
                "{{\"event\":\"guard.delete\",\"refs\":[{{\"ref\":\"{r}\",\"old\":\"{old}\",\"new\":null}}]}}\n"
            )
        };
        let moved = |r: &str, new: &str| {
            format!(
                "{{\"event\":\"guard.bypass\",\"refs\":[{{\"ref\":\"{r}\",\"old\":null,\"new\":\"{new}\"}}]}}\n"
            )
        };
        // A line that is not JSON may have recorded a deletion: the log cannot be read.
        let broken = format!(
            "{}not json\n{}",
            deleted("refs/heads/x", &a),
            deleted("refs/heads/y", &b)
        );
        assert_eq!(deleted_tips(&broken), Err(2));
        let log = format!(
            "{}\n{}",
            deleted("refs/heads/x", &a),
            deleted("refs/heads/y", &b)
        );
        let tip = |log: &str, name: &str| deleted_tips(log).unwrap().get(name).cloned();
        assert_eq!(tip(&log, "refs/heads/x"), Some(a.clone()));
        assert_eq!(tip(&log, "refs/heads/y"), Some(b.clone()));
        assert_eq!(tip(&log, "refs/heads/z"), None);
        // Deleted again later: that tip counts.
        let log = format!("{log}{}", deleted("refs/heads/x", &b));
        assert_eq!(tip(&log, "refs/heads/x"), Some(b.clone()));
        // Made again by break-glass after the deletion: no deletion since.
        let log = format!("{log}{}", moved("refs/heads/x", &a));
        assert_eq!(tip(&log, "refs/heads/x"), None);
        assert_eq!(tip(&log, "refs/heads/y"), Some(b.clone()));
    }

    #[test]
    fn garbage_is_refused_with_its_line() {
        let a = "a".repeat(40);
        for bad in [
            "hello\n".to_string(),
            format!("{a} {a}\n"),
            format!("{a} {a} refs/heads/x extra\n"),
            format!("{a} nothex refs/heads/x\n"),
            format!("{a} {a} HEAD\n"),
        ] {
            let e = parse(&bad).unwrap_err();
            assert!(e.starts_with("line 1:"), "{bad:?}: {e}");
        }
        assert!(parse_updates(&mut &b"\xff\xfe"[..]).is_err());
        assert_eq!(parse("").unwrap(), vec![]);
    }
}
