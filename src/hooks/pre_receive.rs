//! `guard hook pre-receive`: judges every ref update of a push on the server. Reads all
//! `<old> <new> <ref>` lines, opens the repository from git's environment (so quarantined
//! objects are visible), judges each protected ref's new commits under the policy of its old
//! tip (a new ref: the default branch), and rejects the whole push on any finding, on bad
//! input, on an internal error, or when its own time runs out. It never writes to the
//! repository; the only file it writes is the break-glass audit log.

use std::io::{BufRead, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use anyhow::{Context as _, anyhow, bail};
use git2::{Oid, Repository};
use jiff::civil::Date;

use crate::check::{CheckOptions, judge_update, policy_at, rewind_findings};
use crate::exit;
use crate::findings::{Code, Finding};
use crate::git::{self, range};
use crate::hooks::server::{ServerConfig, bypass_reason, push_options_from_env, pusher_from_env};
use crate::hooks::{Messages, parse_id};
use crate::ledger::Policy;
use crate::score::Artifacts;

/// One line of pre-receive input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefUpdate {
    pub old: Option<String>,
    pub new: Option<String>,
    pub name: String,
}

/// Longest stdin guard reads: far beyond any real push (about 150 bytes a ref).
const MAX_INPUT: u64 = 64 << 20;

/// Parses git's pre-receive (and post-receive) input. Every line must be well formed: a
/// hook that skipped a line it did not understand would let that ref through.
pub fn parse_updates(input: &mut dyn BufRead) -> Result<Vec<RefUpdate>, String> {
    let mut bytes = Vec::new();
    std::io::Read::take(input, MAX_INPUT + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read the ref updates on standard input: {e}"))?;
    if bytes.len() as u64 > MAX_INPUT {
        return Err(
            "standard input is larger than 64 MiB; this is not git's pre-receive input".into(),
        );
    }
    let text = String::from_utf8(bytes).map_err(|_| {
        "standard input is not text: expected `<old> <new> <ref>` lines".to_string()
    })?;
    let mut updates = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let fields: Vec<&str> = line.split(' ').collect();
        let [old, new, name] = fields[..] else {
            return Err(format!(
                "line {}: expected `<old-id> <new-id> <ref>`, got {:?}",
                i + 1,
                shorten(line)
            ));
        };
        let old = parse_id(old).map_err(|e| format!("line {}: {e}", i + 1))?;
        let new = parse_id(new).map_err(|e| format!("line {}: {e}", i + 1))?;
        if !name.starts_with("refs/") || name.contains(char::is_control) {
            return Err(format!(
                "line {}: {:?} is not a ref name",
                i + 1,
                shorten(name)
            ));
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
        let _ = git2::opts::set_verify_owner_validation(false);
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
    let pusher = pusher_from_env();
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
                        "guard: break-glass refused: {e}; checking the push as usual"
                    ))
                    .as_bytes(),
                );
            }
        }
    }
    drop(repo);

    // git has no hook timeout: guard keeps its own and fails closed when it runs out.
    let (tx, rx) = mpsc::channel();
    let worker_updates = updates.clone();
    let worker_config = config.clone();
    let started = std::time::Instant::now();
    std::thread::spawn(move || {
        let result = judge_push(&worker_updates, &worker_config, pusher.as_deref(), today);
        let _ = tx.send(result);
    });
    // The time runs from the start of the judging, not from when this thread gets to wait:
    // on a busy machine it may get there only after a late result has arrived.
    let received = match rx.recv_timeout(config.timeout) {
        Ok(_) if started.elapsed() > config.timeout => Err(mpsc::RecvTimeoutError::Timeout),
        r => r,
    };
    let outcome = match received {
        Ok(outcome) => outcome,
        Err(mpsc::RecvTimeoutError::Timeout) => {
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
            let _ = err.write_all(
                msg.error("guard: internal error while checking the push; push rejected")
                    .as_bytes(),
            );
            return exit::CANNOT_JUDGE;
        }
    };
    match outcome {
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
            let mut judged = 0;
            for r in &results {
                judged += r.commits;
                for line in &r.signers {
                    let _ = writeln!(err, "guard: {}: {line}", r.name);
                }
                for f in &r.findings {
                    rejected = true;
                    let _ = err.write_all(msg.finding(&r.name, f).as_bytes());
                }
                if let Some(e) = &r.unjudged {
                    unjudged = true;
                    let _ = err.write_all(
                        msg.error(&format!("{}: cannot judge: {e}", r.name))
                            .as_bytes(),
                    );
                }
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
                let _ = writeln!(
                    err,
                    "guard: {} ref update(s) accepted, {judged} commit(s) judged",
                    results.len()
                );
                exit::MERGE
            }
        }
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
}

/// Judges every update.
fn judge_push(
    updates: &[RefUpdate],
    config: &ServerConfig,
    pusher: Option<&str>,
    today: Date,
) -> anyhow::Result<Vec<RefVerdict>> {
    let repo = git::open()?;
    let (default_name, default_tip) = default_branch(&repo, config)?;
    let mut out = Vec::new();
    for update in updates {
        let verdict = judge_ref(
            &repo,
            config,
            update,
            (default_name.as_deref(), default_tip),
            pusher,
            today,
        )
        .with_context(|| update.name.clone())?;
        out.push(verdict);
    }
    Ok(out)
}

/// The tip of the default branch: `guard.defaultBranch`, else what HEAD points at.
/// The default branch: its ref name and tip. `guard.defaultBranch`, else what HEAD points
/// at. A repository with refs but no resolvable default branch cannot be judged: new refs
/// would otherwise be judged under the embedded policy, not the project's.
fn default_branch(
    repo: &Repository,
    config: &ServerConfig,
) -> anyhow::Result<(Option<String>, Option<Oid>)> {
    let name = match &config.default_branch {
        Some(b) if b.starts_with("refs/") => Some(b.clone()),
        Some(b) => Some(format!("refs/heads/{b}")),
        None => repo
            .find_reference("HEAD")
            .ok()
            .and_then(|h| h.symbolic_target().ok().flatten().map(|s| s.to_string())),
    };
    let tip = match name.as_deref().map(|n| repo.find_reference(n)) {
        Some(Ok(r)) => Some(
            r.peel_to_commit()
                .with_context(|| format!("default branch {}", name.as_deref().unwrap_or("")))?
                .id(),
        ),
        _ => None,
    };
    if tip.is_none() && repo.references()?.flatten().next().is_some() {
        bail!(
            "the default branch ({}) does not exist, so new refs have no policy to be judged by; a server admin sets `git config guard.defaultBranch <branch>`",
            name.as_deref().unwrap_or("HEAD")
        );
    }
    Ok((name, tip))
}

fn peel_commit(repo: &Repository, id: &str, what: &str) -> anyhow::Result<Oid> {
    let oid = Oid::from_str(id).with_context(|| format!("{what} id {id}"))?;
    let object = repo
        .find_object(oid, None)
        .with_context(|| format!("{what} object {id} is not in the repository"))?;
    let commit = object.peel_to_commit().map_err(|_| {
        anyhow!("{what} {id} is not a commit (or a tag of one); guard cannot judge it")
    })?;
    Ok(commit.id())
}

fn judge_ref(
    repo: &Repository,
    config: &ServerConfig,
    update: &RefUpdate,
    (default_name, default_tip): (Option<&str>, Option<Oid>),
    pusher: Option<&str>,
    today: Date,
) -> anyhow::Result<RefVerdict> {
    let verdict = |findings: Vec<Finding>, commits: usize, unjudged: Option<String>| RefVerdict {
        name: update.name.clone(),
        findings,
        commits,
        unjudged,
        signers: Vec::new(),
    };
    let old = match &update.old {
        Some(id) => Some(peel_commit(repo, id, "old")?),
        None => None,
    };
    // The policy in force: the old tip's, or for a new ref the default branch's.
    let base = old.or(default_tip);
    let ledger = config.ledger.as_deref();
    let policy = policy_at(repo, base, ledger)?;
    let is_default = default_name == Some(update.name.as_str());
    if !policy.refs.protected.set.is_match(&update.name) && !is_default {
        return Ok(verdict(Vec::new(), 0, None));
    }
    let Some(new_id) = &update.new else {
        // The default branch carries the policy new refs are judged by: never deleted here
        // (deleting and re-creating it would judge it under the embedded policy).
        if policy.refs.allow_delete && !is_default {
            return Ok(verdict(Vec::new(), 0, None));
        }
        if is_default {
            let f = Finding::new(
                Code::RefDeletion,
                "the push deletes the default branch, whose ledger judges new refs",
            )
            .help("ask a server admin; guard never lets a push delete the default branch");
            return Ok(verdict(vec![f], 0, None));
        }
        let f = Finding::new(Code::RefDeletion, "the push deletes a protected ref")
            .help("the ledger's [refs] allow_delete = false; ask a server admin");
        return Ok(verdict(vec![f], 0, None));
    };
    let new = peel_commit(repo, new_id, "new")?;
    let hide: Vec<Oid> = match old {
        Some(o) => vec![o],
        None => default_tip.into_iter().collect(),
    };
    let commits = range::commits(repo, new, &hide)?;

    let mut findings = Vec::new();
    if let Some(old) = old {
        findings.extend(rewind_findings(repo, &policy, old, new, ledger)?);
    }
    let artifacts = server_artifacts(repo, config, &policy, new, &mut findings)?;
    // A push brings few commits: each is described, so that the pusher learns who signed it.
    let opts = CheckOptions {
        range: None,
        ledger: ledger.map(str::to_string),
        pusher: pusher.map(str::to_string),
        artifacts,
        allowed_signers: config.allowed_signers.clone(),
        describe_all: true,
    };
    // A base that came in by break-glass never passed the gate: hash its fixtures again.
    let trust = !base.is_some_and(|b| bypassed_tip(config, b));
    let report = judge_update(
        repo,
        policy,
        base,
        new,
        &commits,
        &update.name,
        &opts,
        today,
        trust,
    )?;
    findings.extend(report.findings);
    let mut v = verdict(
        findings,
        commits.len(),
        report.unjudged.map(|e| e.to_string()),
    );
    v.signers = signer_lines(report.history.as_ref());
    Ok(v)
}

/// Who signed each judged commit, for the pusher, when signatures were checked.
pub fn signer_lines(history: Option<&crate::check::History>) -> Vec<String> {
    history
        .map(|h| {
            h.commits
                .iter()
                .filter_map(|c| {
                    c.signature
                        .as_ref()
                        .map(|s| format!("{} {}", c.short, s.describe()))
                })
                .collect()
        })
        .unwrap_or_default()
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
            findings.push(
                Finding::new(Code::ArtifactsMissing, "the ledger requires test artifacts and the server has no guard.artifacts directory")
                    .help("a server admin sets `git config guard.artifacts /srv/ci/{commit}` where CI stores JUnit reports"),
            );
        }
        return Ok(artifacts);
    };
    let tree = repo.find_commit(commit)?.tree_id();
    let dir = template
        .replace("{commit}", &commit.to_string())
        .replace("{tree}", &tree.to_string());
    let dir = if Path::new(&dir).is_absolute() {
        PathBuf::from(dir)
    } else {
        repo.path().join(dir)
    };
    artifacts = crate::hooks::artifacts_in(&dir, &policy.artifacts);
    if policy.artifacts.required && artifacts.junit.is_empty() {
        findings.push(
            Finding::new(
                Code::ArtifactsMissing,
                format!(
                    "no JUnit report ({}) for this commit in {}",
                    policy.artifacts.junit.join(", "),
                    dir.display()
                ),
            )
            .path(dir.display().to_string())
            .help("wait for CI to publish the test reports for this commit, then push again"),
        );
    }
    Ok(artifacts)
}

/// Whether `id` became a ref's tip by break-glass (the audit log names it as a new id). An
/// audit log that cannot be read counts as yes: trust is what it would withdraw.
fn bypassed_tip(config: &ServerConfig, id: Oid) -> bool {
    let Some(log) = &config.audit_log else {
        return false;
    };
    let text = match std::fs::read_to_string(log) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return false,
        Err(_) => return true,
    };
    let id = id.to_string();
    text.lines().any(|line| {
        serde_json::from_str::<serde_json::Value>(line).map_or(true, |entry| {
            entry["refs"]
                .as_array()
                .is_some_and(|refs| refs.iter().any(|r| r["new"].as_str() == Some(id.as_str())))
        })
    })
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
    let line = serde_json::json!({
        "time_utc": jiff::Timestamp::now().to_string(),
        "event": "guard.bypass",
        "pusher": pusher,
        "reason": reason,
        "refs": refs,
    });
    let mut text = line.to_string();
    text.push('\n');
    // One write of one line in append mode: concurrent pushes do not interleave lines.
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .with_context(|| format!("cannot open the audit log {}", log.display()))?;
    file.write_all(text.as_bytes())
        .with_context(|| format!("cannot write the audit log {}", log.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<RefUpdate>, String> {
        parse_updates(&mut text.as_bytes())
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
