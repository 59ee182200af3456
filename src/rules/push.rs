//! Push: what a hook judges about a ref update itself, before any commit: deleting a
//! protected ref, creating or moving a replace ref, and a push whose test artifacts the
//! ledger requires but CI left none of. The hooks gather the facts; this file words them.

use crate::report::{Code, Finding};

/// Which ref a deletion would remove.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deleted {
    /// The default branch: every push is judged against it.
    DefaultBranch,
    /// The ref `guard.policyRef` names: its ledger judges every push.
    PolicyRef,
    /// A ref the ledger's `[refs] protected` names, with `allow_delete = false`.
    Protected,
    /// A protected ref the ledger lets be deleted, on a server with no audit log to
    /// remember the deletion in (and no `guard.allowDelete`).
    Unlogged,
}

/// `ref_deletion`. `on_server`: the pre-receive hook, where a server admin can help.
pub fn ref_deletion(deleted: Deleted, on_server: bool) -> Finding {
    match deleted {
        Deleted::DefaultBranch => Finding::new(
            Code::RefDeletion,
            "the push deletes the default branch, which every push is judged against",
        ),
        Deleted::PolicyRef => Finding::new(
            Code::RefDeletion,
            "the push deletes the policy ref (guard.policyRef), whose ledger judges every push",
        ),
        Deleted::Protected => Finding::new(Code::RefDeletion, "the push deletes a protected ref"),
        Deleted::Unlogged => Finding::new(
            Code::RefDeletion,
            "the push deletes a protected ref, and the server has no guard.auditLog to remember it in: the ref made again later at an old commit would be judged as new, not as the rewind it is",
        ),
    }
    .help(match (deleted, on_server) {
        (Deleted::Protected, true) => {
            "the ledger's [refs] allow_delete = false; ask a server admin"
        }
        (Deleted::Protected, false) => "the ledger's [refs] allow_delete = false",
        (Deleted::Unlogged, _) => {
            "a server admin sets an audit log (git config guard.auditLog /path/in/the/repository/guard-audit.log, a file only the server's user can write; install.sh --server does), or accepts deletions it cannot remember with git config guard.allowDelete true"
        }
        _ => "ask a server admin; guard never lets a push delete the ref the policy comes from",
    })
}

/// `replace_ref`: a push that creates or moves the replace ref `name`.
pub fn replace_ref(name: &str) -> Finding {
    let replaced = name.get("refs/replace/".len()..).unwrap_or(name);
    Finding::new(
        Code::ReplaceRef,
        format!(
            "the push creates or moves a replace ref: git would show another object in place of {replaced} (git show, git archive, checkouts, clones that fetch replace refs) while history looks untouched"
        ),
    )
    .help("change files with a commit, which guard judges; a replace ref lands only by break-glass (git push -o guard.bypass=REASON by an allowed pusher)")
}

/// Where a hook looked for the test artifacts the ledger requires.
#[derive(Debug, Clone, Copy)]
pub enum ArtifactsPlace<'a> {
    /// The server has no `guard.artifacts` directory configured.
    NotConfigured,
    /// The server's artifact directory for the pushed commit.
    ServerDir(&'a str),
    /// The developer's work tree (pre-push).
    WorkTree,
}

/// `artifacts_missing`: no JUnit report (`junit_names` are the ledger's names for them) where
/// the hook looked.
pub fn artifacts_missing(place: ArtifactsPlace, junit_names: &[String]) -> Finding {
    match place {
        ArtifactsPlace::NotConfigured => Finding::new(
            Code::ArtifactsMissing,
            "the ledger requires test artifacts and the server has no guard.artifacts directory",
        )
        .help("a server admin sets `git config guard.artifacts /srv/ci/{commit}` where CI stores JUnit reports"),
        ArtifactsPlace::ServerDir(dir) => Finding::new(
            Code::ArtifactsMissing,
            format!(
                "no JUnit report ({}) for this commit in {dir}",
                junit_names.join(", ")
            ),
        )
        .path(dir)
        .help("wait for CI to publish the test reports for this commit, then push again"),
        ArtifactsPlace::WorkTree => Finding::new(
            Code::ArtifactsMissing,
            format!(
                "no JUnit report ({}) in the work tree",
                junit_names.join(", ")
            ),
        )
        .help("run the tests with JUnit output before pushing"),
    }
}
