//! Malformed trees: a pushed tree on the way to a protected path that git's fsck would refuse
//! (duplicate or unsorted entries, `.`, `..`, `.git` and its variants, bad modes) is refused,
//! whoever made it and whatever `receive.fsckObjects` says. Such trees are read differently
//! by different readers (a checkout writes the last of two same-named entries), so what guard
//! judged need not be what CI runs.

use crate::changes::MalformedTree;
use crate::report::finding::{Code, Finding};

/// One finding per malformed tree and problem that the commit `short` (`subject`) brings.
/// Trees already reported (same path) in `reported` are left out.
pub fn findings(
    short: &str,
    subject: &str,
    malformed: &[MalformedTree],
    reported: &[Finding],
) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    for m in malformed {
        let already = |f: &Finding| {
            f.code == Code::MalformedTree && f.path.as_deref() == Some(m.path.as_str())
        };
        if reported.iter().any(already) || out.iter().any(already) {
            continue;
        }
        let tree = if m.tree.is_empty() {
            "the root tree".to_string()
        } else {
            format!("the tree {}", m.tree)
        };
        out.push(
            Finding::new(
                Code::MalformedTree,
                format!(
                    "malformed tree: {tree} {} (git fsck: {})",
                    m.describe(),
                    m.problem.fsck_id()
                ),
            )
            .path(&m.path)
            .commit(short, subject)
            .help(
                "the tree was written by hand (`git mktree`, `hash-object --literally`): drop or rewrite the commit with `git rebase -i`, making it with a normal `git commit`",
            ),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::changes::Problem;

    fn tree(dir: &str, path: &str, problem: Problem, mode: i32) -> MalformedTree {
        MalformedTree {
            tree: dir.into(),
            entry: path.rsplit('/').next().unwrap().into(),
            path: path.into(),
            problem,
            mode,
        }
    }

    #[test]
    fn one_finding_per_path_naming_commit_tree_and_problem() {
        let found = findings(
            "1a2b3c4",
            "Speed up",
            &[
                tree(
                    "tests/properties",
                    "tests/properties/test_x.py",
                    Problem::DuplicateEntries,
                    0o100644,
                ),
                tree("", "odd", Problem::BadFilemode, 0o100664),
                tree("", "odd", Problem::NotSorted, 0o100664),
            ],
            &[],
        );
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].code, Code::MalformedTree);
        assert_eq!(found[0].path.as_deref(), Some("tests/properties/test_x.py"));
        assert_eq!(found[0].commit.as_deref(), Some("1a2b3c4"));
        assert_eq!(
            found[0].message,
            "malformed tree: the tree tests/properties lists `test_x.py` twice: a checkout writes the last entry, a lookup by name may find another (git fsck: duplicateEntries)"
        );
        assert!(
            found[1]
                .message
                .starts_with("malformed tree: the root tree holds `odd` with mode 100664,")
        );
        assert!(found[0].help.as_deref().unwrap().contains("git rebase -i"));

        let again = findings(
            "9f8e7d6",
            "Tip",
            &[tree("", "odd", Problem::NotSorted, 0)],
            &found,
        );
        assert!(again.is_empty());
    }
}
