//! Ordinary tests (neither frozen nor property tests): in a hook the report is the only
//! evidence, so a failing one rejects unless the ledger hands that job to CI.

use std::collections::BTreeMap;

use crate::evidence::junit::Outcome;
use crate::findings::{Code, Finding};

/// `failures` maps a test's display id to its merged outcome (only tests that did not pass).
pub fn judge(failures: &BTreeMap<String, Outcome>, failures_reject: bool) -> Vec<Finding> {
    if !failures_reject {
        return Vec::new();
    }
    failures
        .iter()
        .filter_map(|(id, outcome)| {
            let what = match outcome {
                Outcome::Failed => "failed",
                Outcome::Errored => "errored",
                Outcome::Flaky => "failed, then passed on a rerun (a rerun pass is not evidence)",
                Outcome::Passed | Outcome::Skipped => return None,
            };
            Some(
                Finding::new(Code::TestFailures, format!("test {id} {what}"))
                    .test(id)
                    .help("fix the code or the test; a known flake needs a lease in the freeze file from a human"),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_reject_unless_switched_off() {
        let mut failures = BTreeMap::new();
        failures.insert("t::a".to_string(), Outcome::Failed);
        failures.insert("t::b".to_string(), Outcome::Errored);
        failures.insert("t::c".to_string(), Outcome::Flaky);
        let found = judge(&failures, true);
        assert_eq!(found.len(), 3);
        assert!(found.iter().all(|f| f.code == Code::TestFailures));
        assert_eq!(found[0].test.as_deref(), Some("t::a"));
        assert!(judge(&failures, false).is_empty());
    }
}
