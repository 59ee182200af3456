//! pre-commit's pre-push stage (`.pre-commit-hooks.yaml`): pre-commit reads git's pre-push
//! lines itself and hands its hooks one pushed ref as `PRE_COMMIT_*` variables instead. Owns
//! turning those variables back into the push line git would have written; judging it is
//! `pre_push`'s.
//!
//! What pre-commit (3.2 to 4.x, `commands/hook_impl.py` and `commands/run.py`) exports:
//! - `PRE_COMMIT_REMOTE_NAME`, `PRE_COMMIT_REMOTE_URL`: git's two hook arguments.
//! - `PRE_COMMIT_REMOTE_BRANCH`, `PRE_COMMIT_LOCAL_BRANCH`: the line's remote and local ref.
//! - `PRE_COMMIT_FROM_REF`, `PRE_COMMIT_TO_REF`: the remote's old id (when this clone has it;
//!   else the parent of the first pushed commit that no remote-tracking ref holds) and the
//!   local id. Both are left out when that ref's whole history is new to the remote.
//!
//! pre-commit passes only the first line that sends anything: deletions, the other refs of a
//! multi-ref push, and a ref whose commits the remote-tracking refs already hold never reach
//! its hooks. The server's pre-receive judges those; `install.sh --hooks` judges every line.

use crate::hooks::parse_id;
use crate::hooks::push_lines::PushLine;

pub const REMOTE_NAME: &str = "PRE_COMMIT_REMOTE_NAME";
pub const REMOTE_BRANCH: &str = "PRE_COMMIT_REMOTE_BRANCH";
pub const LOCAL_BRANCH: &str = "PRE_COMMIT_LOCAL_BRANCH";
pub const FROM_REF: &str = "PRE_COMMIT_FROM_REF";
pub const TO_REF: &str = "PRE_COMMIT_TO_REF";

/// The remote and the push line pre-commit's variables describe; `None` when none of the
/// ref variables is set (git ran the hook, and the lines are on standard input).
///
/// `env` reads a variable (empty counts as unset); `resolve` turns a revision that is not an
/// object id (`pre-commit run --from-ref HEAD~1` by hand, `PRE_COMMIT_LOCAL_BRANCH`) into
/// the id of the commit it names. `remote_arg` is the hook's own argument, used when
/// `PRE_COMMIT_REMOTE_NAME` is not set.
pub fn push_from_env(
    env: &dyn Fn(&str) -> Option<String>,
    remote_arg: Option<&str>,
    resolve: &dyn Fn(&str) -> Result<String, String>,
) -> Option<Result<(String, PushLine), String>> {
    let var = |name: &str| env(name).filter(|v| !v.is_empty());
    let (from, to, local_branch) = (var(FROM_REF), var(TO_REF), var(LOCAL_BRANCH));
    let remote_branch = var(REMOTE_BRANCH);
    if from.is_none() && to.is_none() && local_branch.is_none() && remote_branch.is_none() {
        return None;
    }
    Some(line_from(
        (from, to),
        local_branch,
        remote_branch,
        var(REMOTE_NAME).or(remote_arg.map(str::to_string)),
        resolve,
    ))
}

fn line_from(
    (from, to): (Option<String>, Option<String>),
    local_branch: Option<String>,
    remote_branch: Option<String>,
    remote: Option<String>,
    resolve: &dyn Fn(&str) -> Result<String, String>,
) -> Result<(String, PushLine), String> {
    const BY_HAND: &str = "pre-commit 3.2 or later sets them for its pre-push stage; by hand, \
         `pre-commit run --hook-stage pre-push --remote-name origin --remote-url URL \
         --remote-branch refs/heads/main --local-branch main --from-ref A --to-ref B`";
    let remote_ref = remote_branch.ok_or_else(|| {
        format!(
            "pre-commit did not say which ref is pushed ({REMOTE_BRANCH} is not set): {BY_HAND}"
        )
    })?;
    let remote = remote.ok_or_else(|| {
        format!(
            "pre-commit did not say which remote is pushed to ({REMOTE_NAME} is not set): {BY_HAND}"
        )
    })?;
    let id = |name: &str, text: &str| -> Result<Option<String>, String> {
        match parse_id(text) {
            Ok(id) => Ok(id),
            Err(_) => resolve(text)
                .map(Some)
                .map_err(|e| format!("{name}={text:?} is not a commit here: {e}")),
        }
    };
    let line = match (from, to) {
        (Some(from), Some(to)) => PushLine {
            local_ref: local_branch.unwrap_or_else(|| to.clone()),
            local: id(TO_REF, &to)?,
            remote_ref,
            remote: id(FROM_REF, &from)?,
        },
        // The ref's whole history is new to the remote: judged as a new ref.
        (None, None) => {
            let local_ref = local_branch.ok_or_else(|| {
                format!("pre-commit set neither {TO_REF} nor {LOCAL_BRANCH}: {BY_HAND}")
            })?;
            PushLine {
                local: id(LOCAL_BRANCH, &local_ref)?,
                local_ref,
                remote_ref,
                remote: None,
            }
        }
        (Some(_), None) | (None, Some(_)) => {
            return Err(format!(
                "pre-commit set only one of {FROM_REF} and {TO_REF}: {BY_HAND}"
            ));
        }
    };
    Ok((remote, line))
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

    fn from(
        vars: &[(&str, &str)],
        arg: Option<&str>,
    ) -> Option<Result<(String, PushLine), String>> {
        let env = |name: &str| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        };
        let resolve = |rev: &str| match rev {
            "refs/heads/main" => Ok(B.to_string()),
            _ => Err(format!("no revision {rev}")),
        };
        push_from_env(&env, arg, &resolve)
    }

    #[test]
    fn no_variables_means_git_ran_the_hook() {
        assert_eq!(from(&[], Some("origin")), None);
        // pre-commit's own marker and the remote alone say nothing about a pushed ref.
        assert_eq!(
            from(&[("PRE_COMMIT", "1"), (REMOTE_NAME, "origin")], None),
            None
        );
        assert_eq!(from(&[(TO_REF, "")], None), None);
    }

    #[test]
    fn a_range_is_the_line_git_wrote() {
        let vars = [
            (REMOTE_NAME, "origin"),
            (REMOTE_BRANCH, "refs/heads/main"),
            (LOCAL_BRANCH, "refs/heads/topic"),
            (FROM_REF, A),
            (TO_REF, B),
        ];
        let (remote, line) = from(&vars, None).unwrap().unwrap();
        assert_eq!(remote, "origin");
        assert_eq!(
            line,
            PushLine {
                local_ref: "refs/heads/topic".into(),
                local: Some(B.into()),
                remote_ref: "refs/heads/main".into(),
                remote: Some(A.into()),
            }
        );
    }

    #[test]
    fn a_history_new_to_the_remote_is_a_new_ref() {
        let vars = [
            (REMOTE_NAME, "origin"),
            (REMOTE_BRANCH, "refs/heads/main"),
            (LOCAL_BRANCH, "refs/heads/main"),
        ];
        let (_, line) = from(&vars, None).unwrap().unwrap();
        assert_eq!(line.local.as_deref(), Some(B));
        assert_eq!(line.remote, None);
    }

    #[test]
    fn revisions_typed_by_hand_are_resolved_and_the_argument_names_the_remote() {
        let vars = [
            (REMOTE_BRANCH, "refs/heads/main"),
            (FROM_REF, A),
            (TO_REF, "refs/heads/main"),
        ];
        let (remote, line) = from(&vars, Some("upstream")).unwrap().unwrap();
        assert_eq!(remote, "upstream");
        assert_eq!(line.local.as_deref(), Some(B));
        assert_eq!(line.local_ref, "refs/heads/main");
        let bad = [
            (REMOTE_BRANCH, "refs/heads/main"),
            (FROM_REF, A),
            (TO_REF, "nope"),
        ];
        let err = from(&bad, Some("origin")).unwrap().unwrap_err();
        assert!(
            err.contains("PRE_COMMIT_TO_REF=\"nope\" is not a commit"),
            "{err}"
        );
    }

    /// Variables, the hook's remote argument, and what the error must name.
    type Case<'a> = (&'a [(&'a str, &'a str)], Option<&'a str>, &'a str);

    #[test]
    fn missing_pieces_are_errors_not_a_pass() {
        let cases: &[Case] = &[
            (&[(FROM_REF, A), (TO_REF, B)], Some("origin"), REMOTE_BRANCH),
            (
                &[
                    (REMOTE_BRANCH, "refs/heads/main"),
                    (FROM_REF, A),
                    (TO_REF, B),
                ],
                None,
                REMOTE_NAME,
            ),
            (
                &[(REMOTE_BRANCH, "refs/heads/main"), (TO_REF, B)],
                Some("origin"),
                "only one of",
            ),
            (
                &[(REMOTE_BRANCH, "refs/heads/main")],
                Some("origin"),
                "neither",
            ),
        ];
        for (vars, arg, expected) in cases {
            let err = from(vars, *arg).unwrap().unwrap_err();
            assert!(err.contains(expected), "{vars:?}: {err}");
        }
    }
}
