//! What refs and object ids name: a ref's commit, the branch HEAD points at, whether the
//! repository has any ref, the remote-tracking tips of a clone, the commit an id names (a
//! tag peeled), and which pushed ids a branch's history already holds.

use std::collections::HashMap;

use git2::{ObjectType, Oid, Repository};

use super::id::{from_git2, to_git2};
use super::{ObjectId, range};

/// The commit the ref `name` points at (a tag peeled to its commit); `None` when there is no
/// such ref. A ref that names no commit is an error.
pub fn tip(repo: &Repository, name: &str) -> Result<Option<ObjectId>, git2::Error> {
    match repo.find_reference(name) {
        Ok(r) => Ok(Some(from_git2(r.peel_to_commit()?.id())?)),
        Err(_) => Ok(None),
    }
}

/// The full name of the ref HEAD points at (`refs/heads/main`); `None` when HEAD is missing
/// or detached.
pub fn head_target(repo: &Repository) -> Option<String> {
    repo.find_reference("HEAD")
        .ok()
        .and_then(|h| h.symbolic_target().ok().flatten().map(|s| s.to_string()))
}

/// Whether the repository has any ref at all (a new repository has none).
pub fn any_ref(repo: &Repository) -> Result<bool, git2::Error> {
    Ok(repo.references()?.flatten().next().is_some())
}

/// The commit a revision (`HEAD`, a branch, an id) names, or libgit2's message why none.
pub fn resolve_commit(repo: &Repository, rev: &str) -> Result<ObjectId, String> {
    let commit = repo
        .revparse_single(rev)
        .and_then(|o| o.peel_to_commit())
        .map_err(|e| e.message().to_string())?;
    from_git2(commit.id()).map_err(|e| e.to_string())
}

/// The commits the refs `refs/remotes/REMOTE/*` point at: what a clone knows the remote has.
pub fn remote_tracking_tips(repo: &Repository, remote: &str) -> Vec<ObjectId> {
    let Ok(refs) = repo.references_glob(&format!("refs/remotes/{remote}/*")) else {
        return Vec::new();
    };
    refs.filter_map(|r| from_git2(r.ok()?.peel_to_commit().ok()?.id()).ok())
        .collect()
}

/// Why an object id does not lead to a commit; each holds libgit2's error.
#[derive(Debug)]
pub enum NotACommit {
    /// The text is not an object id this repository can hold.
    BadId(git2::Error),
    /// No object has the id.
    Missing(git2::Error),
    /// The object is there but cannot be parsed (a malformed commit or tag, which git's fsck
    /// refuses when `receive.fsckObjects` is on).
    Malformed(git2::Error),
    /// The object is neither a commit nor a tag of one.
    Other(git2::Error),
}

/// The commit the object id `id` (hex) names: the commit itself, or what a tag of it peels
/// to.
pub fn peel_to_commit(repo: &Repository, id: &str) -> Result<ObjectId, NotACommit> {
    from_git2(peel(repo, id)?).map_err(|e| NotACommit::Other(e.into()))
}

/// [`peel_to_commit`], as libgit2's id.
fn peel(repo: &Repository, id: &str) -> Result<Oid, NotACommit> {
    let oid = super::parse_id(repo, id).map_err(NotACommit::BadId)?;
    let object = repo.find_object(oid, None).map_err(|e| {
        if e.code() == git2::ErrorCode::NotFound {
            NotACommit::Missing(e)
        } else {
            NotACommit::Malformed(e)
        }
    })?;
    let commit = object.peel_to_commit().map_err(NotACommit::Other)?;
    Ok(commit.id())
}

/// Of the object ids `ids` (hex, as pushed), those whose commit `tip`'s history holds, each
/// with that commit: the id itself, or the commit a tag of it peels to. Found in one walk
/// (`range::reachable_from`); ids that do not name a commit are left out.
pub fn held_by<'a>(
    repo: &Repository,
    tip: ObjectId,
    ids: impl IntoIterator<Item = &'a str>,
) -> anyhow::Result<HashMap<String, ObjectId>> {
    // A lightweight tag or a branch names its commit: the object's header says so, without
    // inflating it. Anything else is peeled.
    let odb = repo.odb()?;
    let mut commit_of: HashMap<String, Oid> = HashMap::new();
    for text in ids {
        if commit_of.contains_key(text) {
            continue;
        }
        let Ok(id) = super::parse_id(repo, text) else {
            continue;
        };
        let commit = match odb.read_header(id) {
            Ok((_, ObjectType::Commit)) => id,
            _ => match peel(repo, text) {
                Ok(c) => c,
                Err(_) => continue,
            },
        };
        commit_of.insert(text.to_string(), commit);
    }
    let candidates: Vec<Oid> = commit_of.values().copied().collect();
    let reachable = range::reachable_from(repo, to_git2(tip)?, &candidates)?;
    commit_of.retain(|_, commit| reachable.contains(commit));
    commit_of
        .into_iter()
        .map(|(text, commit)| Ok((text, from_git2(commit)?)))
        .collect()
}

/// Whether a push to `name` changes what existing objects show rather than adding any: a
/// replace ref (`refs/replace/<id>`) makes git show another object wherever `<id>` is read
/// (`git show`, `git archive`, checkouts, and CI clones that fetch replace refs) while the
/// history looks untouched. guard itself reads the real objects: libgit2 has no replace-ref
/// support (a test in `tests/integration/check.rs` holds it to that).
///
/// No other ref namespace does this. Notes (`refs/notes/*`) annotate commits; they change no
/// object and guard never reads them, so they pass. Grafts and shallow roots do change the
/// parents git (and libgit2) see, but they are files in the repository, not refs: a push
/// cannot write `info/grafts`, and writes `shallow` only where an admin set
/// `receive.shallowUpdate`. git's `GIT_REPLACE_REF_BASE` can name another namespace, but only
/// for the process it is set for, never for the server's readers by default.
///
/// The prefix is compared ignoring case: on a case-insensitive file system `refs/Replace/`
/// is the directory git reads replace refs from.
pub fn is_replace_ref(name: &str) -> bool {
    const PREFIX: &str = "refs/replace/";
    name.get(..PREFIX.len())
        .is_some_and(|p| p.eq_ignore_ascii_case(PREFIX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replace_refs_in_any_case() {
        assert!(is_replace_ref("refs/replace/0123456789abcdef"));
        assert!(is_replace_ref("refs/Replace/0123"));
        assert!(!is_replace_ref("refs/replaced/0123"));
        assert!(!is_replace_ref("refs/notes/commits"));
        assert!(!is_replace_ref("refs/heads/refs/replace/x"));
        assert!(!is_replace_ref("refs/rép"));
    }
}
