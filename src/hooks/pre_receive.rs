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

use crate::engine::audit::policy_at;
use crate::engine::ref_update::{
    self, ArtifactSource, DeletionMemory, Gathered, LookedIn, PolicyInForce, PushFacts, RefFacts,
};
use crate::engine::score::Artifacts;
use crate::git::commit::Commit;
use crate::git::refs;
use crate::git::{self, ObjectId, Repository};
use crate::hooks::audit_log;
use crate::hooks::server::{
    ServerConfig, bypass_reason, push_identities_from_env, push_options_from_env, pusher_from_env,
};
use crate::hooks::{HookInputError, parse_id};
use crate::policy::ledger::Policy;
use crate::render;
use crate::render::hook::Messages;
use crate::report::push::{Hook, PushFailure, PushOutcome, PushReport, RefVerdict};

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

/// Runs the hook; returns the exit code (0 accepts the push). The pusher reads the push
/// report on standard error; with `json`, a server's wrapper also gets it as one JSON line
/// on standard output.
pub fn run(input: &mut dyn BufRead, today: Date, json: bool) -> i32 {
    let msg = Messages::from_env();
    let report = push_report(input, today, msg);
    let _ = std::io::stderr()
        .lock()
        .write_all(render::push::text(&report, msg).as_bytes());
    if json {
        let _ = std::io::stdout()
            .lock()
            .write_all(render::push::json(&report).as_bytes());
    }
    report.exit_code()
}

/// Reads the push and judges it. What the server's settings say before any judging (git
/// does not check the objects; a break-glass push) goes to standard error at once.
fn push_report(input: &mut dyn BufRead, today: Date, msg: Messages) -> PushReport {
    let failed = |f| PushReport::failed(Hook::PreReceive, f);
    let mut err = std::io::stderr().lock();
    let updates = match parse_updates(input) {
        Ok(u) => u,
        Err(e) => return failed(PushFailure::Input(e.to_string())),
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
        Err(e) => return failed(PushFailure::Error(format!("{e:#}"))),
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
                return PushReport {
                    refs: updates
                        .iter()
                        .map(|u| RefVerdict::passed(&u.name))
                        .collect(),
                    ..PushReport::new(Hook::PreReceive)
                };
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
    drop(err);
    // git has no hook timeout: guard keeps its own and fails closed when it runs out.
    let (tx, rx) = mpsc::channel();
    let worker_updates = updates.clone();
    let worker_config = config.clone();
    let started = std::time::Instant::now();
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
    let received = in_time(
        rx.recv_timeout(config.timeout),
        started.elapsed(),
        config.timeout,
    );
    let mut report = match received {
        Ok(Ok(refs)) => PushReport {
            refs,
            ..PushReport::new(Hook::PreReceive)
        },
        Ok(Err(e)) => failed(PushFailure::Error(format!("{e:#}"))),
        Err(mpsc::RecvTimeoutError::Timeout) => failed(PushFailure::Timeout(config.timeout)),
        Err(mpsc::RecvTimeoutError::Disconnected) => failed(PushFailure::Internal),
    };
    report.evaluate = evaluate.load(Ordering::SeqCst);
    report.deletes = updates.iter().any(|u| u.new.is_none());
    let accepted = matches!(
        report.outcome(),
        PushOutcome::Accepted | PushOutcome::AcceptedInEvaluateMode
    );
    if accepted
        && report.failure.is_none()
        && let Err(e) = remember_deletions(&config, pusher.as_deref(), &report.refs)
    {
        report.failure = Some(PushFailure::AuditLog(format!("{e:#}")));
    }
    report
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

/// Judges every update: gathers the facts a push is judged by (the default branch, the
/// policy ref and its ledger, what the audit log remembers, the commits the default branch
/// already holds) and leaves each decision to `engine::ref_update`.
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
    let deletions = match (&config.audit_log, config.allow_unlogged_delete) {
        (Some(_), _) => DeletionMemory::AuditLog,
        (None, accepted) => DeletionMemory::Unremembered { accepted },
    };
    let mut facts = PushFacts {
        hook: Hook::PreReceive,
        default_ref: default.0.as_deref(),
        default_tip: default.1,
        policy_ref: policy_ref.0.as_deref(),
        policy: PolicyInForce::Loaded {
            policy: &policy,
            revision: policy_ref.1,
        },
        ledger: config.ledger.as_deref(),
        deletions,
        deleted: &deleted,
        bypassed: bypassed.as_ref(),
        landed: &HashMap::new(),
        identities,
        allowed_signers: config.allowed_signers.clone(),
        known_without_base: &[],
        now: jiff::Timestamp::now(),
        today,
    };
    let landed = landed_commits(&repo, &facts, &policy, updates)?;
    facts.landed = &landed;
    let refs: Vec<RefFacts> = updates
        .iter()
        .map(|u| RefFacts {
            name: &u.name,
            old: u.old.as_deref(),
            new: u.new.as_deref(),
            last_seen: None,
        })
        .collect();
    let source = ServerArtifacts {
        repo: &repo,
        config,
    };
    Ok(ref_update::decide_all(&repo, &facts, &refs, &source))
}

/// The new ids of the judged updates (other than of the default branch and the policy ref)
/// whose commits the default branch's current tip already holds, with those commits, found
/// in one walk. A mirror or a tag import pushes thousands of refs at such commits: each is
/// then settled by a lookup, where judging it alone would walk and score it once per ref.
/// An id that names no commit is left to `ref_update` to report.
fn landed_commits(
    repo: &Repository,
    facts: &PushFacts,
    policy: &Policy,
    updates: &[RefUpdate],
) -> anyhow::Result<HashMap<String, ObjectId>> {
    let Some(default_tip) = facts.default_tip else {
        return Ok(HashMap::new());
    };
    let carries_the_policy =
        |name: &str| facts.default_ref == Some(name) || facts.policy_ref == Some(name);
    let pushed = updates
        .iter()
        .filter(|u| u.new.is_some() && !refs::is_replace_ref(&u.name))
        .filter(|u| ref_update::is_judged(facts, policy, &u.name) && !carries_the_policy(&u.name))
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
fn ref_tip(repo: &Repository, name: &str, what: &str) -> anyhow::Result<Option<ObjectId>> {
    refs::tip(repo, name).with_context(|| format!("{what} {name}"))
}

/// The default branch: its ref name and tip. `guard.defaultBranch`, else what HEAD points
/// at. A repository with refs but no resolvable default branch cannot be judged: new refs
/// would otherwise be judged under the embedded policy, not the project's.
fn default_branch(
    repo: &Repository,
    config: &ServerConfig,
) -> anyhow::Result<(Option<String>, Option<ObjectId>)> {
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

/// The reports CI left in the directory `guard.artifacts` names for a commit.
struct ServerArtifacts<'a> {
    repo: &'a Repository,
    config: &'a ServerConfig,
}

impl ArtifactSource for ServerArtifacts<'_> {
    fn gather(
        &self,
        policy: &Policy,
        commit: ObjectId,
        base: Option<ObjectId>,
    ) -> anyhow::Result<Gathered> {
        let Some(template) = &self.config.artifacts else {
            return Ok(Gathered {
                artifacts: Artifacts::default(),
                looked_in: LookedIn::NotConfigured,
            });
        };
        let dir = artifact_dir(self.repo, template, commit)?;
        let mut artifacts = crate::hooks::artifacts_in(&dir, &policy.artifacts)?;
        // The base passed the gate with its own reports: they are the baseline, when CI
        // left them.
        if let Some(base) = base {
            let dir = artifact_dir(self.repo, template, base)?;
            artifacts.baseline_junit = crate::hooks::artifacts_in(&dir, &policy.artifacts)?.junit;
        }
        Ok(Gathered {
            artifacts,
            looked_in: LookedIn::ServerDir(dir.display().to_string()),
        })
    }
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

/// The directory `guard.artifacts` (`template`) names for `commit`.
fn artifact_dir(repo: &Repository, template: &str, commit: ObjectId) -> anyhow::Result<PathBuf> {
    let tree = Commit::find(repo, commit)?.tree_id()?;
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
