//! Proven coverage: the coverage of a run with frozen tests deselected must meet the floor.
//! From one run whose report records which test ran each line (coverage.py contexts), a
//! line counts when a context other than a frozen test ran it: code run outside any test
//! (at import, context `""`) counts, a frozen test's setup and teardown do not.

use crate::evidence::coverage::{Contexts, Coverage};
use crate::report::finding::{Code, Finding};

/// The lines a run proves without its frozen tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Proven {
    /// Executed lines some context other than a frozen test ran.
    pub covered: u64,
    /// Statements measured.
    pub total: u64,
    /// Executed lines only frozen tests ran.
    pub frozen_only: u64,
}

impl Proven {
    pub fn percent(&self) -> f64 {
        match self.total {
            0 => 100.0,
            total => 100.0 * self.covered as f64 / total as f64,
        }
    }
}

/// What `contexts` prove when the contexts `frozen` marks (by index into `contexts.names`)
/// are frozen tests. An executed line the report names no context for proves nothing.
pub fn proven_lines(contexts: &Contexts, frozen: &[bool]) -> Proven {
    let mut proven = Proven {
        covered: 0,
        total: contexts.statements,
        frozen_only: 0,
    };
    for line in &contexts.lines {
        if line
            .iter()
            .any(|&c| !frozen.get(c as usize).copied().unwrap_or(false))
        {
            proven.covered += 1;
        } else if !line.is_empty() {
            proven.frozen_only += 1;
        }
    }
    proven
}

/// `proven_coverage` (and `coverage_missing`). `frozen_only`: with a one-run figure, how
/// many executed lines it leaves out because only frozen tests ran them.
pub fn judge(
    coverage: Option<&Coverage>,
    path: Option<&str>,
    floor: f64,
    required: bool,
    frozen_only: Option<u64>,
) -> Vec<Finding> {
    match coverage {
        None if required => vec![
            Finding::new(Code::CoverageMissing, "the ledger requires a coverage report and none was given")
                .help("pass --coverage with the report of the run that deselected frozen tests (see `guard deselect`)"),
        ],
        None => Vec::new(),
        Some(c) if c.percent < floor => {
            let left_out = match frozen_only {
                Some(n) if n > 0 => format!(
                    " ({n} executed {} only frozen tests ran, which do not count)",
                    if n == 1 { "line" } else { "lines" }
                ),
                _ => String::new(),
            };
            let mut f = Finding::new(
                Code::ProvenCoverage,
                format!(
                    "proven coverage {:.2}% is below the floor of {floor}%{left_out}",
                    c.percent
                ),
            )
            .help("add tests that cover the change; frozen tests do not count");
            if let Some(path) = path {
                f = f.path(path);
            }
            vec![f]
        }
        Some(_) => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::coverage::CoverageFormat;

    fn cov(percent: f64) -> Coverage {
        Coverage {
            format: CoverageFormat::Lcov,
            percent,
            covered: None,
            total: None,
            contexts: None,
        }
    }

    #[test]
    fn below_floor_rejects_at_floor_holds() {
        assert_eq!(
            judge(Some(&cov(69.99)), None, 70.0, false, None)[0].code,
            Code::ProvenCoverage
        );
        assert!(judge(Some(&cov(70.0)), None, 70.0, false, None).is_empty());
    }

    #[test]
    fn the_lines_only_frozen_tests_ran_are_counted_in_the_message() {
        let message = |frozen_only| {
            judge(Some(&cov(50.0)), None, 70.0, false, frozen_only)[0]
                .message
                .clone()
        };
        let plain = "proven coverage 50.00% is below the floor of 70%";
        assert_eq!(message(None), plain);
        assert_eq!(message(Some(0)), plain);
        assert_eq!(
            message(Some(1)),
            format!("{plain} (1 executed line only frozen tests ran, which do not count)")
        );
        assert_eq!(
            message(Some(12)),
            format!("{plain} (12 executed lines only frozen tests ran, which do not count)")
        );
    }

    #[test]
    fn missing_report_rejects_only_when_required() {
        assert_eq!(
            judge(None, None, 70.0, true, None)[0].code,
            Code::CoverageMissing
        );
        assert!(judge(None, None, 70.0, false, None).is_empty());
    }

    #[test]
    fn a_line_is_proven_by_any_context_but_a_frozen_test() {
        // Contexts: 0 "" (import), 1 the frozen test, 2 its setup, 3 another test.
        let contexts = Contexts {
            names: vec![
                String::new(),
                "t.py::test_frozen|run".into(),
                "t.py::test_frozen|setup".into(),
                "t.py::test_other|run".into(),
            ],
            lines: vec![vec![0], vec![1], vec![1, 2], vec![1, 3], vec![3], vec![]],
            statements: 8,
            branches: 0,
        };
        let proven = proven_lines(&contexts, &[false, true, true, false]);
        assert_eq!(
            proven,
            Proven {
                covered: 3,
                total: 8,
                frozen_only: 2
            }
        );
        assert_eq!(proven.percent(), 37.5);
        let f = judge(Some(&cov(37.5)), None, 70.0, false, Some(2));
        assert!(
            f[0].message
                .ends_with("(2 executed lines only frozen tests ran, which do not count)"),
            "{}",
            f[0].message
        );
    }
}
