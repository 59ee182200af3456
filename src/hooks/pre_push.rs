//! `guard hook pre-push REMOTE URL`: the same checks on what a developer is about to push.
//! Advisory (git's `--no-verify` skips it); the server's pre-receive is the gate.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, Write as _};

use jiff::civil::Date;

use crate::engine::audit::policy_at;
use crate::engine::ref_update::{
    self, ArtifactSource, DeletionMemory, Gathered, LookedIn, PolicyInForce, PushFacts, RefFacts,
};
use crate::engine::score::Artifacts;
use crate::git::config::GitConfig;
use crate::git::refs;
use crate::git::{self, ObjectId, Repository};
use crate::hooks::push_lines::{PushLine, parse_lines};
use crate::policy::ledger::Policy;
use crate::render;
use crate::render::hook::Messages;
use crate::report::push::{Hook, PushFailure, PushReport};

/// The remote and the push lines: from pre-commit's variables when they are set (pre-commit
/// has read standard input itself), else from standard input as git writes it.
pub fn push_input(
    remote: Option<&str>,
    input: &mut dyn BufRead,
) -> Result<(String, Vec<PushLine>), String> {
    let env = |name: &str| std::env::var(name).ok();
    let resolve = |rev: &str| -> Result<String, String> {
        let repo = git::open().map_err(|e| format!("{e:#}"))?;
        git::refs::resolve_commit(&repo, rev).map(|id| id.to_string())
    };
    if let Some(pushed) = crate::hooks::pre_commit::push_from_env(&env, remote, &resolve) {
        return pushed.map(|(remote, line)| (remote, vec![line]));
    }
    let remote = remote.ok_or(
        "no remote given: git runs `guard hook pre-push REMOTE URL` with the pushed refs on \
         standard input; pre-commit's pre-push stage sets PRE_COMMIT_REMOTE_BRANCH and the rest",
    )?;
    let lines = parse_lines(input).map_err(|e| e.to_string())?;
    Ok((remote.to_string(), lines))
}

/// Runs the hook; returns the exit code (0 lets the push go on). The report goes to
/// standard error; with `json`, also to standard output as one JSON line.
pub fn run(remote: Option<&str>, input: &mut dyn BufRead, today: Date, json: bool) -> i32 {
    let report = match push_input(remote, input) {
        Ok((remote, lines)) => judge_push(&remote, &lines, today).unwrap_or_else(|e| {
            PushReport::failed(Hook::PrePush, PushFailure::Error(format!("{e:#}")))
        }),
        Err(e) => PushReport::failed(Hook::PrePush, PushFailure::Input(e)),
    };
    let _ = std::io::stderr()
        .lock()
        .write_all(render::push::text(&report, Messages { gitlab: false }).as_bytes());
    if json {
        let _ = std::io::stdout()
            .lock()
            .write_all(render::push::json(&report).as_bytes());
    }
    report.exit_code()
}

/// Gathers what this clone knows of the remote (its default branch, where it last saw each
/// ref, the ledger in force there) and leaves each decision to `engine::ref_update`, as the
/// server's hook does.
fn judge_push(remote: &str, lines: &[PushLine], today: Date) -> anyhow::Result<PushReport> {
    let repo = git::open()?;
    // Where the project keeps its ledger, when not at qa/merge_ledger.toml.
    let ledger = GitConfig::read(&repo)
        .ok()
        .and_then(|c| c.string("guard.ledger"));
    let tracking = refs::remote_tracking_tips(&repo, remote);
    let remote_default = ["HEAD", "main", "master"]
        .iter()
        .find_map(|b| remote_tip(&repo, remote, b));
    // Like the server: the remote default branch's ledger is in force for every ref, so a
    // branch made at an old commit does not bring an old ledger back. A clone that never saw
    // the remote's default branch reads it at each ref's base.
    let loaded = match remote_default {
        Some(tip) => Some(policy_at(&repo, Some(tip), ledger.as_deref())?),
        None => None,
    };
    let policy = match &loaded {
        Some(policy) => PolicyInForce::Loaded {
            policy,
            revision: remote_default,
        },
        None => PolicyInForce::AtBase,
    };
    let facts = PushFacts {
        hook: Hook::PrePush,
        default_ref: None,
        default_tip: remote_default,
        policy_ref: None,
        policy,
        ledger: ledger.as_deref(),
        deletions: DeletionMemory::ServerDecides,
        deleted: &HashMap::new(),
        bypassed: Some(&HashSet::new()),
        landed: &HashMap::new(),
        identities: &[],
        allowed_signers: None,
        known_without_base: &tracking,
        now: jiff::Timestamp::now(),
        today,
    };
    let refs: Vec<RefFacts> = lines
        .iter()
        .map(|line| RefFacts {
            name: &line.remote_ref,
            old: line.remote.as_deref(),
            new: line.local.as_deref(),
            // Like the server: from the remote's old tip, else where this clone last saw the
            // ref, else the remote's default branch. Not from every remote-tracking ref: an
            // agent commit on another remote branch is judged again for this ref, and the
            // server rejects it.
            last_seen: line
                .remote
                .as_ref()
                .and_then(|_| line.remote_ref.strip_prefix("refs/heads/"))
                .and_then(|b| remote_tip(&repo, remote, b)),
        })
        .collect();
    let source = WorkTreeArtifacts { repo: &repo };
    Ok(PushReport {
        refs: ref_update::decide_all(&repo, &facts, &refs, &source),
        evaluate: loaded.as_ref().is_some_and(|p| p.evaluate),
        deletes: lines.iter().any(|l| l.local.is_none()),
        ..PushReport::new(Hook::PrePush)
    })
}

/// When the file at `path` was last modified, in nanoseconds since the Unix epoch (a report
/// written in the same second as an edit is told apart); `None` when it cannot be read.
fn modified_at(path: &std::path::Path) -> Option<u128> {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos())
}

/// Where this clone last saw `branch` of `remote` (`refs/remotes/REMOTE/BRANCH`), if it
/// names a commit.
fn remote_tip(repo: &Repository, remote: &str, branch: &str) -> Option<ObjectId> {
    refs::tip(repo, &format!("refs/remotes/{remote}/{branch}"))
        .ok()
        .flatten()
}

/// The reports the developer's last test run left in the work tree.
struct WorkTreeArtifacts<'a> {
    repo: &'a Repository,
}

impl ArtifactSource for WorkTreeArtifacts<'_> {
    fn gather(
        &self,
        policy: &Policy,
        tip: ObjectId,
        base: Option<ObjectId>,
    ) -> anyhow::Result<Gathered> {
        let looked_in = LookedIn::WorkTree;
        let Some(workdir) = git::work_tree(self.repo) else {
            return Ok(Gathered {
                artifacts: Artifacts::default(),
                looked_in,
            });
        };
        let artifacts = crate::hooks::artifacts_in(workdir, &policy.artifacts)?;
        // A report written before the last edit of a file the push changes is an earlier
        // run's, of other code: scored, it rejected the push that adds a ledger for what an
        // old run lacked ("no property test ran"), and dropped, the push would go on with no
        // evidence. Neither: the push cannot be judged until the tests run again. (Edited,
        // tested, committed, pushed: the report is newer than the edits, and scored.)
        let changed = git::commit::paths_changed(self.repo, base, tip)?;
        let last_edit = changed
            .iter()
            .filter_map(|p| modified_at(&workdir.join(p)).map(|t| (t, p)))
            .max();
        for report in &artifacts.junit {
            if let (Some(written), Some((edited, path))) = (modified_at(report), &last_edit)
                && written < *edited
            {
                anyhow::bail!(
                    "{} was written before {path} was last edited, so it is an earlier run's, not this push's: run the tests again (or push with --no-verify: the server judges the push anyway)",
                    report.strip_prefix(workdir).unwrap_or(report).display(),
                );
            }
        }
        Ok(Gathered {
            artifacts,
            looked_in,
        })
    }
}
