//! Findings: one problem the gate found, with a stable snake_case code. The decision is a
//! pure function of the findings: any finding rejects.

use serde::Serialize;

pub use crate::codes::Code;

/// One problem, where it is, and how to fix it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    pub code: Code,
    pub message: String,
    pub path: Option<String>,
    /// The 1-based line in `path`, where the finding has one.
    pub line: Option<u64>,
    /// The 1-based column on `line`, where the finding has one.
    pub column: Option<u64>,
    /// The abbreviated commit id.
    pub commit: Option<String>,
    /// The commit's subject line.
    pub subject: Option<String>,
    pub test: Option<String>,
    /// What a human does to clear the finding.
    pub help: Option<String>,
}

impl Finding {
    pub fn new(code: Code, message: impl Into<String>) -> Finding {
        Finding {
            code,
            message: message.into(),
            path: None,
            line: None,
            column: None,
            commit: None,
            subject: None,
            test: None,
            help: None,
        }
    }

    pub fn path(mut self, path: impl Into<String>) -> Finding {
        self.path = Some(path.into());
        self
    }

    pub fn line(mut self, line: u64) -> Finding {
        self.line = Some(line);
        self
    }

    pub fn column(mut self, column: u64) -> Finding {
        self.column = Some(column);
        self
    }

    pub fn commit(mut self, short_id: impl Into<String>, subject: impl Into<String>) -> Finding {
        self.commit = Some(short_id.into());
        self.subject = Some(subject.into());
        self
    }

    pub fn test(mut self, test: impl Into<String>) -> Finding {
        self.test = Some(test.into());
        self
    }

    pub fn help(mut self, help: impl Into<String>) -> Finding {
        self.help = Some(help.into());
        self
    }
}

/// The merge decision: the AND of every column. Never averaged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Decision {
    Merge,
    Reject,
}

impl Decision {
    pub fn from_findings(findings: &[Finding]) -> Decision {
        if findings.is_empty() {
            Decision::Merge
        } else {
            Decision::Reject
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Merge => "MERGE",
            Decision::Reject => "REJECT",
        }
    }
}

/// Sorted, de-duplicated reason codes of `findings`.
pub fn reasons(findings: &[Finding]) -> Vec<Code> {
    let mut codes: Vec<Code> = findings.iter().map(|f| f.code).collect();
    codes.sort_by_key(|c| c.as_str());
    codes.dedup();
    codes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_snake_case() {
        let mut seen = std::collections::HashSet::new();
        for code in Code::ALL {
            let s = code.as_str();
            assert!(seen.insert(s), "duplicate code {s}");
            assert!(s.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{s}");
        }
    }

    #[test]
    fn any_finding_rejects() {
        assert_eq!(Decision::from_findings(&[]), Decision::Merge);
        let one = [Finding::new(Code::PropertyHold, "x")];
        assert_eq!(Decision::from_findings(&one), Decision::Reject);
    }

    #[test]
    fn reasons_are_sorted_and_unique() {
        let f = |c| Finding::new(c, "m");
        let got = reasons(&[
            f(Code::TestFailures),
            f(Code::ExpiredLeases),
            f(Code::TestFailures),
        ]);
        assert_eq!(got, vec![Code::ExpiredLeases, Code::TestFailures]);
    }
}
