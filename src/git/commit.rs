//! What guard reads of a commit: its abbreviated id, subject, who made it (with its
//! trailers), its signature and what it signs, its tree and the files in it; and whether one
//! commit descends from another. The engine asks these by commit id and gets plain values.

use std::path::Path;

use git2::Repository;

use super::ObjectId;
use super::id::{from_git2, to_git2};

use crate::policy::agents::{Identity, Trailers};

/// A commit read from the repository, so that every question asked of it reads the object
/// once.
pub struct Commit<'r> {
    repo: &'r Repository,
    commit: git2::Commit<'r>,
}

/// A commit's signature (git's `gpgsig` header), as stored.
pub enum Signature {
    Unsigned,
    /// The commit object could not be read for it: libgit2's reason.
    Unreadable(String),
    /// The armored signature and the bytes it signs (the commit without the header).
    Signed {
        armored: Vec<u8>,
        payload: Vec<u8>,
    },
}

impl<'r> Commit<'r> {
    /// The commit `id`.
    pub fn find(repo: &'r Repository, id: ObjectId) -> Result<Commit<'r>, git2::Error> {
        Ok(Commit {
            repo,
            commit: repo.find_commit(to_git2(id)?)?,
        })
    }

    /// The abbreviated id git would show, at least 7 hex digits.
    pub fn short_id(&self) -> String {
        super::object_short_id(self.commit.as_object())
    }

    /// The commit's first line, lossily decoded (messages may be in any encoding).
    pub fn summary(&self) -> String {
        let bytes = self.commit.summary_bytes().unwrap_or_default();
        String::from_utf8_lossy(bytes).into_owned()
    }

    /// Who made the commit, with its trailers. `pusher` is the authenticated pusher in hooks.
    pub fn identity(&self, pusher: Option<&str>) -> Identity {
        let commit = &self.commit;
        let author = commit.author();
        let committer = commit.committer();
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        Identity {
            author_name: text(author.name_bytes()),
            author_email: text(author.email_bytes()),
            committer_name: text(committer.name_bytes()),
            committer_email: text(committer.email_bytes()),
            subject: self.summary(),
            trailers: Trailers {
                block: super::trailers(commit.message_bytes()),
                in_message: super::trailer_lines(commit.message_bytes()),
            },
            pusher: pusher.map(str::to_string),
        }
    }

    /// The committer's e-mail address, lossily decoded.
    pub fn committer_email(&self) -> String {
        String::from_utf8_lossy(self.commit.committer().email_bytes()).into_owned()
    }

    /// The committer date (which the committer writes); the epoch when it is out of range.
    pub fn committer_time(&self) -> jiff::Timestamp {
        jiff::Timestamp::from_second(self.commit.committer().when().seconds())
            .unwrap_or(jiff::Timestamp::UNIX_EPOCH)
    }

    /// The id of the commit's tree.
    pub fn tree_id(&self) -> Result<ObjectId, git2::Error> {
        Ok(from_git2(self.commit.tree_id())?)
    }

    /// The commit's signature and what it signs. A SHA-256 repository's commits carry it in
    /// `gpgsig-sha256` (git names the header after the repository's hash), a SHA-1
    /// repository's in `gpgsig`; a signature under the other name is not read, as git does not.
    pub fn signature(&self) -> Signature {
        let field = match self.repo.object_format() {
            git2::ObjectFormat::Sha1 => "gpgsig",
            git2::ObjectFormat::Sha256 => "gpgsig-sha256",
        };
        match self.repo.extract_signature(&self.commit.id(), Some(field)) {
            Err(e) if e.code() == git2::ErrorCode::NotFound => Signature::Unsigned,
            Err(e) => Signature::Unreadable(e.message().to_string()),
            Ok((armored, payload)) => Signature::Signed {
                armored: armored.to_vec(),
                payload: payload.to_vec(),
            },
        }
    }
}

/// The text (lossily decoded) of the file at `path` in commit `commit`'s tree; `None` when
/// nothing is there or it is not a blob. An unreadable commit or tree is an error.
pub fn blob_text(
    repo: &Repository,
    commit: ObjectId,
    path: &str,
) -> Result<Option<String>, git2::Error> {
    let tree = repo.find_commit(to_git2(commit)?)?.tree()?;
    tree_blob_text(repo, &tree, path)
}

/// The text (lossily decoded) of the blob at `path` in `tree`, if there is one. A blob
/// larger than [`super::MAX_TEXT_BLOB`] is an error.
pub(super) fn tree_blob_text(
    repo: &Repository,
    tree: &git2::Tree,
    path: &str,
) -> Result<Option<String>, git2::Error> {
    let Ok(entry) = tree.get_path(Path::new(path)) else {
        return Ok(None);
    };
    if entry.kind() != Some(git2::ObjectType::Blob) {
        return Ok(None);
    }
    let blob = super::text_blob(repo, entry.id(), path)?;
    Ok(Some(String::from_utf8_lossy(blob.content()).into_owned()))
}

/// The id of the entry at `path` in the tree `tree` (libgit2's lookup by path); `None` when
/// there is none. An unreadable tree is an error.
pub fn entry_id(
    repo: &Repository,
    tree: ObjectId,
    path: &str,
) -> Result<Option<ObjectId>, git2::Error> {
    let tree = repo.find_tree(to_git2(tree)?)?;
    Ok(tree
        .get_path(Path::new(path))
        .ok()
        .map(|e| from_git2(e.id()))
        .transpose()?)
}

/// The paths whose content differs between the trees of `old` (`None`: the empty tree) and
/// `new`, as they are in `new` (paths `new` deletes are left out). One libgit2 diff: for the
/// few commits of a push, not for a history.
pub fn paths_changed(
    repo: &Repository,
    old: Option<ObjectId>,
    new: ObjectId,
) -> Result<Vec<String>, git2::Error> {
    let new_tree = repo.find_commit(to_git2(new)?)?.tree()?;
    let old_tree = old
        .map(|o| repo.find_commit(to_git2(o)?)?.tree())
        .transpose()?;
    let diff = repo.diff_tree_to_tree(old_tree.as_ref(), Some(&new_tree), None)?;
    Ok(diff
        .deltas()
        .filter_map(|d| d.new_file().path().and_then(|p| p.to_str()))
        .filter(|p| new_tree.get_path(Path::new(p)).is_ok())
        .map(str::to_string)
        .collect())
}

/// Whether `commit`'s tree holds a blob at `path`.
pub fn holds_blob(repo: &Repository, commit: ObjectId, path: &str) -> Result<bool, git2::Error> {
    commit_holds_blob(&repo.find_commit(to_git2(commit)?)?, path)
}

/// Whether `commit`'s tree holds a blob at `path`.
fn commit_holds_blob(commit: &git2::Commit, path: &str) -> Result<bool, git2::Error> {
    let tree = commit.tree()?;
    Ok(tree
        .get_path(Path::new(path))
        .is_ok_and(|e| e.kind() == Some(git2::ObjectType::Blob)))
}

/// The commit on `tip`'s first-parent line that added the blob at `path`, and its parent:
/// the first-parent line is followed back while each commit holds the blob, to the one whose
/// first parent does not. `None` when `tip` holds no such blob, when the line holds it back
/// to a root commit (there is nothing before), when the commit that brings it is a merge (a
/// merge takes the file from a side branch: no single commit added it on this line), or when
/// an older commit of the line held it too (it was deleted and added again: this is not the
/// first time, so nothing before it is from before the file).
pub fn first_parent_adding(
    repo: &Repository,
    tip: ObjectId,
    path: &str,
) -> Result<Option<(ObjectId, ObjectId)>, git2::Error> {
    let mut at = repo.find_commit(to_git2(tip)?)?;
    if !commit_holds_blob(&at, path)? {
        return Ok(None);
    }
    loop {
        let Ok(parent) = at.parent(0) else {
            return Ok(None);
        };
        if !commit_holds_blob(&parent, path)? {
            if at.parent_count() != 1 {
                return Ok(None);
            }
            let added = (from_git2(at.id())?, from_git2(parent.id())?);
            // Older than the addition, the line must never have held the file.
            let mut older = parent;
            loop {
                if commit_holds_blob(&older, path)? {
                    return Ok(None);
                }
                match older.parent(0) {
                    Ok(p) => older = p,
                    Err(_) => return Ok(Some(added)),
                }
            }
        }
        at = parent;
    }
}

/// Whether `commit` descends from `ancestor` (a commit is not its own descendant).
pub fn descends_from(
    repo: &Repository,
    commit: ObjectId,
    ancestor: ObjectId,
) -> Result<bool, git2::Error> {
    repo.graph_descendant_of(to_git2(commit)?, to_git2(ancestor)?)
}
