//! The outcome of a `guard` run, as data: the findings, the figures, the judged history and
//! what could not be judged. Every command and hook builds one `Report`; `render` turns it
//! into text, JSON or hook lines. Nothing here prints.

pub mod figures;
pub mod finding;
pub mod history;
pub mod push;

use crate::error::ErrorReport;
use crate::exit;
use crate::policy::ledger::{Policy, PolicySource, Severity};
pub use figures::{JunitStats, RunnerExit, Stats};
pub use finding::{Code, Decision, Finding};
pub use history::{CommitSummary, FileChanges, History};

/// Which command made the report: it decides which keys the JSON object has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `score`, `check`, `run` and the hooks: the decision of the contract.
    Gate,
    /// `lint`: the policy alone.
    Lint,
}

/// A valid policy that may not mean what its author meant (`lint`): shown, never rejects.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Advice {
    pub path: String,
    pub message: String,
    pub help: String,
}

/// The outcome of one `guard` run that judged something (or tried to).
#[derive(Debug, Clone)]
pub struct Report {
    pub kind: Kind,
    /// Where the policy in force came from; `None` when it could not be read.
    pub policy: Option<PolicySource>,
    pub findings: Vec<Finding>,
    pub stats: Stats,
    /// Why part of the input could not be judged. With no finding the decision is unknown
    /// (exit 2); with findings it is REJECT (exit 1), and this still says what was not judged.
    pub unjudged: Option<ErrorReport>,
    /// The judged commits, for `check` and the hooks.
    pub history: Option<History>,
    /// How the test command ended, for `run`.
    pub runner: Option<RunnerExit>,
    /// Findings the ledger asks to show without rejecting.
    pub warnings: Vec<Finding>,
    /// `lint`: what may not be meant in a valid policy.
    pub advice: Vec<Advice>,
    /// `lint`: the lockfile's entries.
    pub fixtures: Option<usize>,
    /// False in evaluate mode (the ledger's `mode = "evaluate"`, or the server's
    /// `guard.mode`): the decision is shown as what it would be, and nothing is rejected.
    pub enforced: bool,
}

impl Report {
    /// The gate report of `findings` and `warnings` under `policy`: each finding at the level
    /// `[levels]` gives its code (a `warn` one moves to the warnings, an `off` one, warning
    /// or not, is dropped), and nothing enforced in evaluate mode. The one place levels apply.
    pub fn judged(
        policy: &Policy,
        findings: Vec<Finding>,
        warnings: Vec<Finding>,
        stats: Stats,
    ) -> Report {
        let mut report = Report::gate(policy.source.clone(), Vec::new(), stats);
        report.enforced = !policy.evaluate;
        for finding in findings {
            match policy.levels.of(finding.code) {
                Severity::Reject => report.findings.push(finding),
                Severity::Warn => report.warnings.push(finding),
                Severity::Off => {}
            }
        }
        report.warnings.extend(
            warnings
                .into_iter()
                .filter(|w| policy.levels.of(w.code) != Severity::Off),
        );
        report
    }

    /// A gate report (`score`, `check`, `run`, a hook) of `findings` under `policy`.
    pub fn gate(policy: PolicySource, findings: Vec<Finding>, stats: Stats) -> Report {
        Report {
            kind: Kind::Gate,
            policy: Some(policy),
            findings,
            stats,
            unjudged: None,
            history: None,
            runner: None,
            warnings: Vec::new(),
            advice: Vec::new(),
            fixtures: None,
            enforced: true,
        }
    }

    /// A run of a `kind` command that stopped at `error` before judging anything: no
    /// decision, no findings, only the figures in `stats` that are known.
    pub fn cannot_judge(
        kind: Kind,
        policy: Option<PolicySource>,
        stats: Stats,
        error: ErrorReport,
    ) -> Report {
        Report {
            kind,
            policy,
            findings: Vec::new(),
            stats,
            unjudged: Some(error),
            history: None,
            runner: None,
            warnings: Vec::new(),
            advice: Vec::new(),
            fixtures: None,
            enforced: true,
        }
    }

    /// Any finding rejects; with none, input that could not be judged leaves no decision
    /// (`None`, exit 2).
    pub fn decision(&self) -> Option<Decision> {
        if self.findings.is_empty() && self.unjudged.is_some() {
            return None;
        }
        Some(Decision::from_findings(&self.findings))
    }

    /// The exit code agrees with the decision: any finding rejects (1), even beside input
    /// that could not be judged; with no finding, such input leaves no decision (2).
    pub fn exit_code(&self) -> i32 {
        // Evaluate mode rejects nothing but what would leave the gate unable to judge (a
        // removed or unreadable ledger): the would-be decision is in the report.
        if !self.enforced && !self.findings.iter().any(|f| f.code.keeps_the_gate()) {
            return exit::MERGE;
        }
        match self.decision() {
            Some(Decision::Merge) => exit::MERGE,
            Some(Decision::Reject) => exit::REJECT,
            None => exit::CANNOT_JUDGE,
        }
    }
}
