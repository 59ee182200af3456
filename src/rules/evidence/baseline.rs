//! The evidence compared with the base revision's (`[baseline]`): a test that passed there
//! must still have a record here, and not a skip. Deleting, renaming, deselecting or skipping
//! a test is how a red suite is made green without fixing anything.

use std::collections::BTreeMap;

use crate::evidence::record::Outcome;
use crate::policy::agents::HumanTrailer;
use crate::policy::ledger::{BaselinePolicy, Severity};
use crate::report::finding::{Code, Finding};
use crate::testid::record_matches;

/// The tests of a set of reports, by (classname, name): the `file` attribute when the runner
/// wrote one, and the merged outcome of the test's records (the worst wins).
pub type Tests = BTreeMap<(String, String), (Option<String>, Outcome)>;

/// What the comparison found, by what the ledger makes of it.
#[derive(Debug, Default)]
pub struct Judged {
    pub rejects: Vec<Finding>,
    pub warnings: Vec<Finding>,
}

/// Compares `current` with `baseline` under `policy`.
pub fn judge(baseline: &Tests, current: &Tests, policy: &BaselinePolicy) -> Judged {
    let mut judged = Judged::default();
    for ((classname, name), (file, before)) in baseline {
        // A rerun pass still passed in the end.
        if !matches!(before, Outcome::Passed | Outcome::Flaky) {
            continue;
        }
        let now = current.get(&(classname.clone(), name.clone())).map(|t| t.1);
        let (code, severity, message, help) = match now {
            None => (
                Code::TestVanished,
                policy.vanished,
                "passed in the baseline and has no record now (deleted, renamed, deselected or no longer collected)",
                "restore the test; a human who means to remove it does so in a commit with the ledger's `trailers.test_removal` trailer (`Test-Removal: human`); ids that come and go belong in `[baseline] ignore`",
            ),
            Some(Outcome::Skipped) => (
                Code::TestNewlySkipped,
                policy.newly_skipped,
                "passed in the baseline and is skipped or xfailed now",
                "remove the skip or xfail marker; a human who means it marks the test in a commit with the ledger's `trailers.test_removal` trailer (`Test-Removal: human`)",
            ),
            Some(_) => continue,
        };
        if severity == Severity::Off || record_matches(&policy.ignore_set, classname, name) {
            continue;
        }
        let id = if classname.is_empty() {
            name.clone()
        } else {
            format!("{classname}::{name}")
        };
        let mut finding = Finding::new(code, format!("test {id} {message}"))
            .test(&id)
            .help(help);
        if let Some(file) = file {
            finding = finding.path(file);
        }
        match severity {
            Severity::Warn => judged.warnings.push(finding),
            _ => judged.rejects.push(finding),
        }
    }
    judged
}

/// A commit of the range that changed a vanished or newly skipped test's file.
#[derive(Debug, Clone)]
pub struct Changer {
    pub short: String,
    pub subject: String,
    /// Why it counts as an agent's; `None` for a human's.
    pub agent: Option<String>,
    /// Whether its message carries the `trailers.test_removal` trailer.
    pub has_trailer: bool,
}

/// A `test_vanished` or `test_newly_skipped` `finding` whose test lives in `file`, given the
/// commits of the range that changed that file (oldest first). A human commit with the
/// trailer among them, and no agent commit, waives it (`None`); otherwise it names the last
/// agent commit (or the last commit) that changed the file.
pub fn attribute(
    mut finding: Finding,
    file: String,
    changing: &[Changer],
    trailer: &HumanTrailer,
    base_name: &str,
) -> Option<Finding> {
    let agent = changing.iter().rev().find(|c| c.agent.is_some());
    if agent.is_none() && changing.iter().any(|c| c.has_trailer) {
        return None;
    }
    if let Some(commit) = agent.or(changing.last()) {
        finding = finding.commit(&commit.short, &commit.subject);
        finding.help = Some(match &commit.agent {
            Some(why) => format!(
                "an agent may not remove or skip a test (the commit is an agent's: {why}); drop or rewrite the commit (`git rebase -i {base_name}`) and restore the test, or a human makes the change with `{trailer}`"
            ),
            None => format!(
                "restore the test, or reword the commit's message to end with `{trailer}` if a human means to remove or skip it"
            ),
        });
    }
    if finding.path.is_none() {
        finding.path = Some(file);
    }
    Some(finding)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::ledger::Policy;

    fn tests(list: &[(&str, &str, Outcome)]) -> Tests {
        list.iter()
            .map(|(c, n, o)| ((c.to_string(), n.to_string()), (None, *o)))
            .collect()
    }

    #[test]
    fn vanished_and_newly_skipped_tests_are_named() {
        let policy = Policy::embedded().baseline;
        let base = tests(&[
            ("t.test_a", "test_gone", Outcome::Passed),
            ("t.test_a", "test_skip", Outcome::Passed),
            ("t.test_a", "test_was_skipped", Outcome::Skipped),
            ("t.test_a", "test_fails_now", Outcome::Passed),
            ("t.test_a", "test_ok", Outcome::Passed),
        ]);
        let now = tests(&[
            ("t.test_a", "test_skip", Outcome::Skipped),
            ("t.test_a", "test_fails_now", Outcome::Failed),
            ("t.test_a", "test_ok", Outcome::Passed),
        ]);
        let judged = judge(&base, &now, &policy);
        let got: Vec<(Code, Option<&str>)> = judged
            .rejects
            .iter()
            .map(|f| (f.code, f.test.as_deref()))
            .collect();
        assert_eq!(
            got,
            vec![
                (Code::TestVanished, Some("t.test_a::test_gone")),
                (Code::TestNewlySkipped, Some("t.test_a::test_skip")),
            ]
        );
        assert!(judged.warnings.is_empty());
    }

    #[test]
    fn warn_off_and_ignore() {
        let text = "[baseline]\nvanished = \"warn\"\nnewly_skipped = \"off\"\nignore = [\"t/test_a.py::test_at[*]\"]\n";
        let policy = Policy::parse(
            std::path::Path::new("l.toml"),
            text,
            crate::policy::ledger::PolicySource::File("l.toml".into()),
        )
        .unwrap()
        .baseline;
        let base = tests(&[
            ("t.test_a", "test_gone", Outcome::Passed),
            ("t.test_a", "test_skip", Outcome::Passed),
            ("t.test_a", "test_at[1700000000]", Outcome::Passed),
        ]);
        let now = tests(&[("t.test_a", "test_skip", Outcome::Skipped)]);
        let judged = judge(&base, &now, &policy);
        assert!(judged.rejects.is_empty());
        let warned: Vec<_> = judged.warnings.iter().map(|f| f.test.as_deref()).collect();
        assert_eq!(warned, vec![Some("t.test_a::test_gone")]);
    }
}
