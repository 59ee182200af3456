//! `guard hook pre-push REMOTE URL`: the same checks on what a developer is about to push.
//! Advisory (git's `--no-verify` skips it); the server's pre-receive is the gate.

use std::io::{BufRead, Write as _};

use jiff::civil::Date;

use crate::engine::audit::{CheckOptions, Describe, policy_at};
use crate::engine::ref_update::{self, Update};
use crate::engine::score::Artifacts;
use crate::exit;
use crate::git::config::GitConfig;
use crate::git::refs::{self, NotACommit};
use crate::git::{self, Oid, Repository};
use crate::hooks::{HookInputError, is_replace_ref, parse_id};
use crate::render::hook::Messages;
use crate::render::hook::{signer_lines, warning_line};
use crate::report::finding::Finding;
use crate::rules::push::{self, ArtifactsPlace, Deleted};

/// One line of pre-push input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushLine {
    pub local_ref: String,
    /// `None` when the push deletes the remote ref (`(delete)`).
    pub local: Option<String>,
    pub remote_ref: String,
    /// `None` when the remote ref does not exist yet.
    pub remote: Option<String>,
}

/// Parses git's pre-push input: `<local ref> <local oid> <remote ref> <remote oid>` lines.
pub fn parse_lines(input: &mut dyn BufRead) -> Result<Vec<PushLine>, HookInputError> {
    let text = super::read_input(
        input,
        "pre-push",
        "pre-push lines",
        "<local ref> <local id> <remote ref> <remote id>",
    )?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let fields: Vec<&str> = line.split(' ').collect();
        let [local_ref, local, remote_ref, remote] = fields[..] else {
            return Err(HookInputError::Fields {
                line: i + 1,
                expected: "<local ref> <local id> <remote ref> <remote id>",
                got: line.chars().take(80).collect::<String>(),
            });
        };
        let id = |text| parse_id(text).map_err(|id| HookInputError::Id { line: i + 1, id });
        out.push(PushLine {
            local_ref: local_ref.to_string(),
            local: id(local)?,
            remote_ref: remote_ref.to_string(),
            remote: id(remote)?,
        });
    }
    Ok(out)
}

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

/// Runs the hook; returns the exit code (0 lets the push go on).
pub fn run(remote: Option<&str>, input: &mut dyn BufRead, today: Date) -> i32 {
    let msg = Messages { gitlab: false };
    let mut err = std::io::stderr().lock();
    let (remote, lines) = match push_input(remote, input) {
        Ok(pushed) => pushed,
        Err(e) => {
            let _ = err.write_all(msg.error(&format!("guard: {e}")).as_bytes());
            return exit::CANNOT_JUDGE;
        }
    };
    match judge_push(&remote, &lines, today) {
        Err(e) => {
            let _ = err.write_all(msg.error(&format!("guard: {e:#}")).as_bytes());
            exit::CANNOT_JUDGE
        }
        Ok((results, evaluate)) => {
            let mut rejected = false;
            let mut unjudged = false;
            let mut keeps_the_gate = false;
            for (name, findings, error) in &results {
                for f in findings {
                    rejected = true;
                    keeps_the_gate |= f.code.keeps_the_gate();
                    let enforced = !evaluate || f.code.keeps_the_gate();
                    let _ = err.write_all(msg.finding_in(name, f, enforced).as_bytes());
                }
                if let Some(e) = error {
                    unjudged = true;
                    let line = format!("{name}: cannot judge: {e}");
                    let line = match evaluate {
                        true => msg.warning(&line),
                        false => msg.error(&line),
                    };
                    let _ = err.write_all(line.as_bytes());
                }
            }
            // The ledger's evaluate mode rejects nothing: a trial before enforcing.
            if evaluate && (rejected || unjudged) && !keeps_the_gate {
                let _ = err.write_all(
                    msg.warning("guard: evaluate mode (the ledger's mode): the server would reject this push; it goes on")
                        .as_bytes(),
                );
                return exit::MERGE;
            }
            // Any finding rejects (exit 1), whatever else could not be judged.
            if rejected {
                let _ = err.write_all(
                    msg.error("guard: the server's merge ledger would reject this push")
                        .as_bytes(),
                );
                let _ = err.write_all(msg.hint("fix the findings above; `git push --no-verify` skips this local check, not the server's").as_bytes());
                exit::REJECT
            } else if unjudged {
                exit::CANNOT_JUDGE
            } else {
                exit::MERGE
            }
        }
    }
}

/// Per pushed ref: its findings, and why its tip could not be judged, if so.
type Verdicts = Vec<(String, Vec<Finding>, Option<String>)>;

/// The verdicts, and whether the remote default branch's ledger asks for evaluate mode.
fn judge_push(remote: &str, lines: &[PushLine], today: Date) -> anyhow::Result<(Verdicts, bool)> {
    let repo = git::open()?;
    // Where the project keeps its ledger, when not at qa/merge_ledger.toml.
    let ledger = GitConfig::read(&repo)
        .ok()
        .and_then(|c| c.string("guard.ledger"));
    let tracking = refs::remote_tracking_tips(&repo, remote);
    let remote_default = ["HEAD", "main", "master"]
        .iter()
        .find_map(|b| remote_tip(&repo, remote, b));
    let mut out = Vec::new();
    for line in lines {
        // A ref that cannot be judged leaves the others judged: a finding on any rejects.
        let (findings, unjudged) = judge_line(
            &repo,
            remote,
            line,
            &tracking,
            (remote_default, ledger.as_deref()),
            today,
        )
        .unwrap_or_else(|e| (Vec::new(), Some(format!("{e:#}"))));
        out.push((line.remote_ref.clone(), findings, unjudged));
    }
    let evaluate = policy_at(&repo, remote_default, ledger.as_deref()).is_ok_and(|p| p.evaluate);
    Ok((out, evaluate))
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
fn remote_tip(repo: &Repository, remote: &str, branch: &str) -> Option<Oid> {
    refs::tip(repo, &format!("refs/remotes/{remote}/{branch}"))
        .ok()
        .flatten()
}

fn judge_line(
    repo: &Repository,
    remote: &str,
    line: &PushLine,
    tracking: &[Oid],
    (remote_default, ledger): (Option<Oid>, Option<&str>),
    today: Date,
) -> anyhow::Result<(Vec<Finding>, Option<String>)> {
    if line.local.is_some() && is_replace_ref(&line.remote_ref) {
        return Ok((vec![push::replace_ref(&line.remote_ref)], None));
    }
    // The remote's old tip, when this clone has it.
    let remote_old = line
        .remote
        .as_deref()
        .and_then(|id| refs::peel_to_commit(repo, id).ok());
    // Like the server: from the remote's old tip, else where this clone last saw the ref,
    // else the remote's default branch. Not from every remote-tracking ref: an agent commit
    // on another remote branch is judged again for this ref, and the server rejects it.
    let last_seen = line
        .remote
        .as_ref()
        .and_then(|_| line.remote_ref.strip_prefix("refs/heads/"))
        .and_then(|b| remote_tip(repo, remote, b));
    let base = remote_old.or(last_seen).or(remote_default);
    // Like the server: the remote default branch's ledger is in force for every ref, so a
    // branch made at an old commit does not bring an old ledger back.
    let policy_revision = remote_default.or(base);
    let policy = policy_at(repo, policy_revision, ledger)?;
    if !policy.refs.protected.set.is_match(&line.remote_ref) {
        return Ok((Vec::new(), None));
    }
    let Some(local) = &line.local else {
        if policy.refs.allow_delete {
            return Ok((Vec::new(), None));
        }
        let f = push::ref_deletion(Deleted::Protected, false);
        return Ok((vec![f], None));
    };
    let tip = refs::peel_to_commit(repo, local).map_err(|e| match e {
        NotACommit::BadId(e) | NotACommit::Missing(e) | NotACommit::Malformed(e) => {
            anyhow::Error::new(e)
        }
        NotACommit::Other(e) => {
            anyhow::Error::new(e).context(format!("{} is not a commit", line.local_ref))
        }
    })?;
    let known: Vec<Oid> = match base {
        Some(o) => vec![o],
        None => tracking.to_vec(),
    };
    let mut artifacts = Artifacts::default();
    let mut prior = Vec::new();
    if let Some(workdir) = git::work_tree(repo) {
        artifacts = crate::hooks::artifacts_in(workdir, &policy.artifacts)?;
        // A report written before the last edit of a file the push changes is an earlier
        // run's, of other code: scored, it rejected the push that adds a ledger for what an
        // old run lacked ("no property test ran"), and dropped, the push would go on with no
        // evidence. Neither: the push cannot be judged until the tests run again. (Edited,
        // tested, committed, pushed: the report is newer than the edits, and scored.)
        let changed = git::commit::paths_changed(repo, base, tip)?;
        let last_edit = changed
            .iter()
            .filter_map(|p| modified_at(&workdir.join(p)).map(|t| (t, p)))
            .max();
        for report in &artifacts.junit {
            if let (Some(written), Some((edited, path))) = (modified_at(report), &last_edit) {
                if written < *edited {
                    anyhow::bail!(
                        "{} was written before {path} was last edited, so it is an earlier run's, not this push's: run the tests again (or push with --no-verify: the server judges the push anyway)",
                        report.strip_prefix(workdir).unwrap_or(report).display(),
                    );
                }
            }
        }
    }
    if policy.artifacts.required && artifacts.junit.is_empty() {
        prior.push(push::artifacts_missing(
            ArtifactsPlace::WorkTree,
            &policy.artifacts.junit,
        ));
    }
    // A push brings few commits: each is described, so that the pusher learns who signed it.
    let options = CheckOptions {
        range: None,
        ledger: ledger.map(str::to_string),
        pusher: None,
        artifacts,
        allowed_signers: None,
        describe: Describe::AllWhenSigned,
        two_threads: true,
        policy_revision,
        signatures_valid_at: Some(jiff::Timestamp::now()),
        trust_base_fixtures: true,
    };
    let report = ref_update::judge(
        repo,
        Update {
            name: &line.remote_ref,
            old: remote_old,
            base,
            known,
            new: tip,
            policy: &policy,
            prior,
            options,
            today,
        },
    )?;
    for signer in signer_lines(report.history.as_ref()) {
        eprintln!("guard: {}: {signer}", line.remote_ref);
    }
    // What the ledger shows without rejecting (a baseline rule set to "warn", a weakened test
    // under `weakened = "warn"`, history before adoption) reaches the developer too.
    for w in &report.warnings {
        eprint!(
            "{}",
            Messages { gitlab: false }.warning(&format!(
                "{}: {}",
                line.remote_ref,
                warning_line(w)
            ))
        );
    }
    Ok((report.findings, report.unjudged.map(|e| e.to_string())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_deletes_and_new_refs() {
        let zero = "0".repeat(40);
        let a = "a".repeat(40);
        let text =
            format!("refs/heads/x {a} refs/heads/x {zero}\n(delete) {zero} refs/heads/y {a}\n");
        let lines = parse_lines(&mut text.as_bytes()).unwrap();
        assert_eq!(lines[0].remote, None);
        assert_eq!(lines[1].local, None);
        assert_eq!(lines[1].local_ref, "(delete)");
        assert!(parse_lines(&mut "refs/heads/x abc\n".as_bytes()).is_err());
    }

    #[test]
    fn bad_lines_are_named_by_number() {
        let zero = "0".repeat(40);
        let a = "a".repeat(40);
        let good = format!("refs/heads/x {a} refs/heads/x {zero}\n");
        let message = |text: String| parse_lines(&mut text.as_bytes()).unwrap_err().to_string();
        assert!(
            message(format!("{good}{good}refs/heads/x {a} refs/heads/x\n")).starts_with("line 3: "),
        );
        assert!(
            message(format!("{good}refs/heads/x {a} refs/heads/x nope\n"))
                .starts_with("line 2: \"nope\" is not an object id")
        );
        assert!(
            message(format!("refs/heads/x nope refs/heads/x {zero}\n")).starts_with("line 1: ")
        );
        assert!(message(format!("{good}\n")).starts_with("line 2: "));
    }

    #[test]
    fn input_over_64_mib_is_refused_whole() {
        // git never writes that much. Reading only the first 64 MiB would judge the refs
        // there and push the ones after them unjudged.
        let zero = "0".repeat(40);
        let a = "a".repeat(40);
        let line = format!("refs/heads/x {a} refs/heads/x {zero}\n");
        const LIMIT: usize = 64 << 20;
        let mut text = line.repeat(LIMIT / line.len() - 1);
        let pad = "y".repeat(LIMIT - text.len() - line.len());
        text.push_str(&format!("refs/heads/x{pad} {a} refs/heads/x {zero}\n"));
        assert_eq!(text.len(), LIMIT);
        assert_eq!(
            parse_lines(&mut text.as_bytes()).unwrap().len(),
            LIMIT / line.len()
        );
        text.push_str(&line);
        assert_eq!(
            parse_lines(&mut text.as_bytes()).unwrap_err().to_string(),
            "standard input is larger than 64 MiB; this is not git's pre-push input"
        );
        let not_text = parse_lines(&mut &b"refs/heads/x \xff\n"[..]).unwrap_err();
        assert!(
            matches!(not_text, HookInputError::NotText { .. }),
            "{not_text}"
        );
    }
}
