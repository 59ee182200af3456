//! Freeze leases: expiry, budget, frozen tests that pass or are absent, and leases naming
//! tests that were not collected.

use jiff::civil::Date;

use crate::evidence::record::Outcome;
use crate::policy::freeze::{FreezeFile, Lease};
use crate::report::finding::{Code, Finding};
use crate::wording::count;

/// What the freeze rules look at.
pub struct FreezeInput<'a> {
    pub freeze_path: &'a str,
    pub file: &'a FreezeFile,
    pub ledger_budget: Option<u32>,
    pub today: Date,
    pub passing_frozen_is_error: bool,
    /// Merged outcome of each active lease's test, in `active` order; `None` when no JUnit
    /// report was given at all (then only the leases themselves are judged).
    pub outcomes: Option<&'a [Option<Outcome>]>,
    /// For each active lease, whether the collected ids contain it; `None` without
    /// `--collected`.
    pub collected: Option<&'a [bool]>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FreezeStats {
    pub active: usize,
    pub expired: usize,
}

/// Leases that are frozen today: unexpired ones (expired leases stop freezing their test).
pub fn active_leases(file: &FreezeFile, today: Date) -> Vec<&Lease> {
    file.classify(today).0
}

pub fn judge(input: &FreezeInput) -> (Vec<Finding>, FreezeStats) {
    let mut findings = Vec::new();
    let (active, expired) = input.file.classify(input.today);
    let stats = FreezeStats {
        active: active.len(),
        expired: expired.len(),
    };

    if input.file.reject_if_expired {
        for lease in &expired {
            let expires = lease.expires.map(|d| d.to_string()).unwrap_or_default();
            findings.push(
                Finding::new(
                    Code::ExpiredLeases,
                    format!("lease for {} expired on {expires} (today is {} UTC)", lease.nodeid, input.today),
                )
                .path(input.freeze_path)
                .line(lease.line)
                .test(&lease.nodeid)
                .help("fix the test and remove the lease, or have its owner renew it with a new `expires` in a human commit"),
            );
        }
    }

    if let Some(budget) = input
        .file
        .budget(input.ledger_budget)
        .filter(|&b| active.len() as u64 > u64::from(b))
    {
        findings.push(
            Finding::new(Code::FreezeBudget, format!("{}, budget is {budget}", count(active.len(), "active lease")))
                .path(input.freeze_path)
                .help("fix flaky tests and drop their leases; the stricter of the freeze file's `max_active_leases` and the ledger's `[freeze] max_active_leases` applies; do not raise a budget to land a patch"),
        );
    }

    for (i, lease) in active.iter().enumerate() {
        if let Some(collected) = input.collected
            && !collected[i]
        {
            findings.push(
                Finding::new(
                    Code::LeaseNotCollected,
                    format!(
                        "lease names {}, which the collected test ids do not contain",
                        lease.nodeid
                    ),
                )
                .path(input.freeze_path)
                .line(lease.line)
                .test(&lease.nodeid)
                .help("correct the lease's id to a collected node id, or remove the lease"),
            );
        }
        let Some(outcomes) = input.outcomes else {
            continue;
        };
        match outcomes[i] {
            None => findings.push(
                Finding::new(
                    Code::FrozenTestMissing,
                    format!("frozen test {} matches no test in the JUnit reports", lease.nodeid),
                )
                .path(input.freeze_path)
                .line(lease.line)
                .test(&lease.nodeid)
                .help("run the frozen test too (deselect it only for the coverage run), or correct the id in the freeze file"),
            ),
            Some(Outcome::Passed) if input.passing_frozen_is_error => findings.push(
                Finding::new(
                    Code::FrozenTestPassed,
                    format!("frozen test {} passed: a frozen test that turns green is a blocker, not a win", lease.nodeid),
                )
                .path(input.freeze_path)
                .line(lease.line)
                .test(&lease.nodeid)
                .help("if the patch changed the test, drop that change from the branch; else rerun it on main without the patch, and only a human removes the lease"),
            ),
            // Failing, erroring, flaky or skipped: still frozen, still not evidence.
            Some(_) => {}
        }
    }
    (findings, stats)
}

/// A frozen test that passes while the range changed the file it lives in (`file`, as it
/// differs between the range's base and tip): a rewrite, not a fix (the first article's
/// "frozen test now passes, test file changed: revert the test rewrite"). Its own rule, not a
/// kind of `frozen_test_passed`: a ledger that lets frozen tests pass
/// (`passing_frozen_is_error = false`) still does not let the patch rewrite them.
/// It replaces the test's `frozen_test_passed` finding in `findings`, if the ledger made one.
pub fn mark_rewritten(
    findings: &mut Vec<Finding>,
    freeze_path: &str,
    lease: &Lease,
    file: &str,
    base: &str,
) {
    findings.retain(|f| {
        !(f.code == Code::FrozenTestPassed && f.test.as_deref() == Some(&lease.nodeid))
    });
    findings.push(rewritten(freeze_path, lease, file, base));
}

fn rewritten(freeze_path: &str, lease: &Lease, file: &str, base: &str) -> Finding {
    Finding::new(
        Code::FrozenTestRewritten,
        format!(
            "frozen test {} passes and this range changed its file {file}: a rewritten test is not a fix",
            lease.nodeid
        ),
    )
    .path(freeze_path)
    .line(lease.line)
    .test(&lease.nodeid)
    .help(format!(
        "restore {file} as it is in {base}: drop or rewrite the commits that changed it (`git rebase -i {base}`); the lease stays until an agent-free rerun on main is boring"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn file(budget: &str, leases: &[(&str, &str)]) -> FreezeFile {
        let mut text = format!("version = 1\n{budget}\n");
        for (id, expires) in leases {
            text.push_str(&format!(
                "[[leases]]\nnodeid = \"{id}\"\nowner = \"o\"\nreason = \"r\"\nexpires = \"{expires}\"\n"
            ));
        }
        FreezeFile::parse(Path::new("qa/freeze.toml"), text.as_bytes()).unwrap()
    }

    fn run(
        f: &FreezeFile,
        outcomes: Option<&[Option<Outcome>]>,
        collected: Option<&[bool]>,
    ) -> Vec<Code> {
        let input = FreezeInput {
            freeze_path: "qa/freeze.toml",
            file: f,
            ledger_budget: None,
            today: jiff::civil::date(2026, 11, 29),
            passing_frozen_is_error: true,
            outcomes,
            collected,
        };
        judge(&input).0.into_iter().map(|f| f.code).collect()
    }

    #[test]
    fn expired_lease_rejects() {
        let f = file("max_active_leases = 5", &[("a::b", "2026-11-28")]);
        assert_eq!(run(&f, None, None), vec![Code::ExpiredLeases]);
        let f = file("max_active_leases = 5", &[("a::b", "2026-11-29")]);
        assert_eq!(run(&f, None, None), vec![]);
    }

    #[test]
    fn budget_counts_active_leases_only() {
        let f = file(
            "max_active_leases = 1",
            &[("a::b", "2030-01-01"), ("a::c", "2030-01-01")],
        );
        assert_eq!(run(&f, None, None), vec![Code::FreezeBudget]);
        let f = file("", &[("a::b", "2030-01-01")]);
        assert_eq!(
            run(&f, None, None),
            vec![Code::FreezeBudget],
            "omitted budget is 0"
        );
        let f = file(
            "max_active_leases = 1\nreject_if_expired = false",
            &[("a::b", "2030-01-01"), ("a::c", "2000-01-01")],
        );
        assert_eq!(run(&f, None, None), vec![]);
    }

    #[test]
    fn plain_list_has_no_budget_unless_the_ledger_sets_one() {
        let list =
            FreezeFile::parse(Path::new("qa/flake_freeze.txt"), b"a::b\na::c\na::d\n").unwrap();
        let judge_with = |ledger_budget| {
            let input = FreezeInput {
                freeze_path: "qa/flake_freeze.txt",
                file: &list,
                ledger_budget,
                today: jiff::civil::date(2026, 11, 29),
                passing_frozen_is_error: true,
                outcomes: None,
                collected: None,
            };
            judge(&input)
                .0
                .into_iter()
                .map(|f| f.code)
                .collect::<Vec<_>>()
        };
        assert_eq!(judge_with(None), vec![], "the first article's list");
        assert_eq!(judge_with(Some(3)), vec![]);
        assert_eq!(judge_with(Some(2)), vec![Code::FreezeBudget]);
        assert_eq!(judge_with(Some(0)), vec![Code::FreezeBudget]);
    }

    #[test]
    fn frozen_pass_and_absence_reject_failure_and_skip_do_not() {
        let f = file(
            "max_active_leases = 9",
            &[
                ("p", "2030-01-01"),
                ("m", "2030-01-01"),
                ("f", "2030-01-01"),
                ("s", "2030-01-01"),
                ("k", "2030-01-01"),
            ],
        );
        let outcomes = [
            Some(Outcome::Passed),
            None,
            Some(Outcome::Failed),
            Some(Outcome::Skipped),
            Some(Outcome::Flaky),
        ];
        assert_eq!(
            run(&f, Some(&outcomes), None),
            vec![Code::FrozenTestPassed, Code::FrozenTestMissing]
        );
    }

    #[test]
    fn passing_frozen_allowed_when_ledger_says_so() {
        let f = file("max_active_leases = 9", &[("p", "2030-01-01")]);
        let input = FreezeInput {
            freeze_path: "qa/freeze.toml",
            file: &f,
            ledger_budget: None,
            today: jiff::civil::date(2026, 11, 29),
            passing_frozen_is_error: false,
            outcomes: Some(&[Some(Outcome::Passed)]),
            collected: None,
        };
        assert!(judge(&input).0.is_empty());
    }

    #[test]
    fn uncollected_lease_rejects() {
        let f = file(
            "max_active_leases = 9",
            &[("a", "2030-01-01"), ("b", "2030-01-01")],
        );
        assert_eq!(
            run(&f, None, Some(&[true, false])),
            vec![Code::LeaseNotCollected]
        );
        // The finding names the lease that was not collected, not the one that was.
        let input = FreezeInput {
            freeze_path: "qa/freeze.toml",
            file: &f,
            ledger_budget: None,
            today: jiff::civil::date(2026, 11, 29),
            passing_frozen_is_error: true,
            outcomes: None,
            collected: Some(&[true, false]),
        };
        let found = judge(&input).0;
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].test.as_deref(), Some("b"));
        // `file` writes each lease in five lines after the two of the header.
        assert_eq!(
            (found[0].path.as_deref(), found[0].line),
            (Some("qa/freeze.toml"), Some(8))
        );
        assert_eq!(run(&f, None, Some(&[true, true])), vec![]);
        assert_eq!(
            run(&f, None, Some(&[false, false])),
            vec![Code::LeaseNotCollected, Code::LeaseNotCollected]
        );
    }
}
