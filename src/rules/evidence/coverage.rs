//! Proven coverage: the coverage of a run with frozen tests deselected must meet the floor.

use crate::evidence::coverage::Coverage;
use crate::report::finding::{Code, Finding};

pub fn judge(
    coverage: Option<&Coverage>,
    path: Option<&str>,
    floor: f64,
    required: bool,
) -> Vec<Finding> {
    match coverage {
        None if required => vec![
            Finding::new(Code::CoverageMissing, "the ledger requires a coverage report and none was given")
                .help("pass --coverage with the report of the run that deselected frozen tests (see `guard deselect`)"),
        ],
        None => Vec::new(),
        Some(c) if c.percent < floor => {
            let mut f = Finding::new(
                Code::ProvenCoverage,
                format!("proven coverage {:.2}% is below the floor of {floor}%", c.percent),
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
        }
    }

    #[test]
    fn below_floor_rejects_at_floor_holds() {
        assert_eq!(
            judge(Some(&cov(69.99)), None, 70.0, false)[0].code,
            Code::ProvenCoverage
        );
        assert!(judge(Some(&cov(70.0)), None, 70.0, false).is_empty());
    }

    #[test]
    fn missing_report_rejects_only_when_required() {
        assert_eq!(judge(None, None, 70.0, true)[0].code, Code::CoverageMissing);
        assert!(judge(None, None, 70.0, false).is_empty());
    }
}
