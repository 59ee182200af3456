//! The files a commit changed against one parent, and their blobs: what the weakened-test
//! rule reads. Identical subtrees are skipped by id, so the cost follows what the commit
//! changed, not the size of the repository. Only regular files have content here: a side
//! that is a symlink, a submodule or a directory counts as absent (a test file turned into a
//! symlink holds no tests guard can read).

use std::collections::HashMap;
use std::rc::Rc;

use git2::Oid;

use crate::git::ObjectId;
use crate::git::id::{from_git2, to_git2};
use crate::git::raw_tree::RawTree;
use crate::git::trees::Trees;

/// A file that differs between two trees: its regular-file blob on each side, if it is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedFile {
    pub path: String,
    pub old: Option<ObjectId>,
    pub new: Option<ObjectId>,
}

const TREE_MODE: i32 = 0o040000;

/// A directory on one side of the comparison; `None` when absent there.
type Side = Option<Rc<RawTree>>;

/// A tree entry: object id, file mode.
type Entry = (Oid, i32);

/// The paths under which `new` and `old` (`None`: the empty tree of a root commit) differ,
/// among those `wanted` accepts, in no set order. Trees are read through `trees` (a walk
/// that compares the same commits for other reasons has them at hand).
pub fn changed_files(
    trees: &Trees,
    new: ObjectId,
    old: Option<ObjectId>,
    wanted: &dyn Fn(&str) -> bool,
) -> Result<Vec<ChangedFile>, git2::Error> {
    let mut out = Vec::new();
    if old == Some(new) {
        return Ok(out);
    }
    let tree = |id: Option<ObjectId>| id.map(|i| trees.get(to_git2(i)?)).transpose();
    // Directories to compare, without recursion.
    let mut stack: Vec<(String, Side, Side)> = vec![(String::new(), tree(Some(new))?, tree(old)?)];
    while let Some((prefix, new, old)) = stack.pop() {
        // Of a name listed twice (a malformed tree), the last entry: the one a checkout writes.
        // foldhash: SipHash over every name of a busy directory, for each commit an agent
        // made, was a tenth of a 1,000-commit push's hook. Randomly seeded: a pusher chooses
        // the names.
        let mut before: HashMap<&[u8], Entry, foldhash::fast::RandomState> = old
            .iter()
            .flat_map(|t| t.iter())
            .map(|e| (e.name_bytes(), (e.id(), e.filemode())))
            .collect();
        let mut pairs: Vec<(&[u8], Option<Entry>, Option<Entry>)> = new
            .iter()
            .flat_map(|t| t.iter())
            .map(|e| {
                let b = before.remove(e.name_bytes());
                (e.name_bytes(), Some((e.id(), e.filemode())), b)
            })
            .collect();
        pairs.extend(before.into_iter().map(|(n, b)| (n, None, Some(b))));
        for (name, a, b) in pairs {
            if a == b {
                continue;
            }
            let path = super::path_in(&prefix, name);
            let sub = |e: Option<Entry>| match e {
                Some((id, TREE_MODE)) => trees.get(id).map(Some),
                _ => Ok(None),
            };
            let (new_sub, old_sub) = (sub(a)?, sub(b)?);
            if new_sub.is_some() || old_sub.is_some() {
                stack.push((path.clone(), new_sub, old_sub));
            }
            let blob = |e: Option<Entry>| match e {
                Some((id, 0o100644 | 0o100755)) => Some(id),
                _ => None,
            };
            let (new_blob, old_blob) = (blob(a), blob(b));
            if new_blob != old_blob && wanted(&path) {
                out.push(ChangedFile {
                    path,
                    old: old_blob.map(from_git2).transpose()?,
                    new: new_blob.map(from_git2).transpose()?,
                });
            }
        }
    }
    Ok(out)
}
