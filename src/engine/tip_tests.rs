//! The tip's test findings tied to the commits of the range that made them: a passing
//! frozen test whose file the range rewrote, and a vanished or newly skipped test named by
//! the commit that changed its file (or waived by a human's trailer).

use crate::engine::context::WhoContext;
use crate::git::Repository;
use crate::git::commit::{self, Commit};
use crate::git::range::Commits;
use crate::git::tree_source::GitTree;
use crate::report::finding::{Code, Finding};
use crate::rules;
use crate::source::Source;

/// `frozen_test_rewritten`: each passing frozen test (`passing`) whose test file differs
/// between `base` and `tip`. Its `frozen_test_passed` finding, if the ledger makes one, is
/// replaced: the rewrite is the finding. Computed whatever `passing_frozen_is_error` says.
pub(super) fn mark_rewritten_frozen_tests(
    findings: &mut Vec<Finding>,
    passing: &[crate::policy::freeze::Lease],
    freeze_path: &str,
    base: &GitTree,
    tip: &GitTree,
    base_name: &str,
) {
    for lease in passing {
        // The first candidate that exists on either side is the test's file.
        let changed = test_file_candidates(&lease.nodeid)
            .into_iter()
            .find_map(|file| {
                // A side that cannot be read (a symlink, a directory, a read error) counts as
                // present and changed: an unreadable test file must not pass as untouched.
                let (old, new) = (base.read(&file), tip.read(&file));
                let present = !matches!(old, Ok(None)) || !matches!(new, Ok(None));
                let changed = match (old, new) {
                    (Ok(a), Ok(b)) => a != b,
                    _ => true,
                };
                present.then_some((file, changed))
            });
        let Some((file, true)) = changed else {
            continue;
        };
        rules::freeze::mark_rewritten(findings, freeze_path, lease, &file, base_name);
    }
}

/// `test_vanished` and `test_newly_skipped` in `findings`: the commits of the range that
/// changed the test's file (merges aside: the commits they bring are in the range). A human
/// commit with the `trailers.test_removal` trailer among them, and no agent commit, waives the
/// finding; otherwise it names the last agent commit (or the last commit) that changed it.
pub(super) fn attribute_baseline_findings(
    repo: &Repository,
    commits: &Commits,
    who: &WhoContext,
    base: Option<&GitTree>,
    tip: &GitTree,
    base_name: &str,
    findings: &mut Vec<Finding>,
) -> anyhow::Result<()> {
    let trailer = &who.policy.trailers.test_removal;
    let mut kept = Vec::with_capacity(findings.len());
    for finding in std::mem::take(findings) {
        if !matches!(finding.code, Code::TestVanished | Code::TestNewlySkipped) {
            kept.push(finding);
            continue;
        }
        let candidates = match &finding.path {
            Some(file) => vec![file.clone()],
            None => test_file_candidates(finding.test.as_deref().unwrap_or_default()),
        };
        // The first candidate that exists on either side is the test's file.
        // A side that cannot be read (a symlink, a directory, a read error) counts as
        // present: an unreadable test file must not go unattributed.
        let present = |t: &GitTree, file: &str| !matches!(t.read(file), Ok(None));
        let file = candidates
            .into_iter()
            .find(|file| base.is_some_and(|b| present(b, file)) || present(tip, file));
        let Some(file) = file else {
            kept.push(finding);
            continue;
        };
        let mut changing = Vec::new();
        for (k, &id) in commits.ids().iter().enumerate() {
            let (tree, parents) = commits.trees(k);
            if parents.len() > 1 {
                continue;
            }
            let before = match parents.first() {
                Some(&p) => commit::entry_id(repo, p, &file)?,
                None => None,
            };
            if commit::entry_id(repo, tree, &file)? != before {
                changing.push(Commit::find(repo, id)?);
            }
        }
        let changing: Vec<rules::evidence::baseline::Changer> = changing
            .iter()
            .map(|c| rules::evidence::baseline::Changer {
                short: c.short_id(),
                subject: c.summary(),
                agent: who.agent(c),
                has_trailer: trailer.present_in(&c.identity(who.pusher).trailers.block),
            })
            .collect();
        kept.extend(rules::evidence::baseline::attribute(
            finding, file, &changing, trailer, base_name,
        ));
    }
    *findings = kept;
    Ok(())
}

/// Files a test id may live in: the file of a pytest node id, or the modules a dotted
/// `classname::name` may name (the class part is unknown, so each prefix is tried).
fn test_file_candidates(id: &str) -> Vec<String> {
    let head = id.split("::").next().unwrap_or(id);
    if head.ends_with(".py") {
        return vec![head.to_string()];
    }
    if head.contains(' ') || head.contains('/') {
        return Vec::new();
    }
    let parts: Vec<&str> = head.split('.').collect();
    (1..=parts.len())
        .rev()
        .map(|n| format!("{}.py", parts[..n].join("/")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_files_of_ids() {
        assert_eq!(
            test_file_candidates("tests/test_a.py::TestB::test_c[1]"),
            vec!["tests/test_a.py"]
        );
        assert_eq!(
            test_file_candidates("tests.test_a.TestB::test_c"),
            vec!["tests/test_a/TestB.py", "tests/test_a.py", "tests.py"]
        );
        assert!(test_file_candidates("crate tests::x").is_empty());
    }
}
