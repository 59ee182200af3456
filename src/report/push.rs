//! The outcome of a push, as data, for both hooks: one verdict per ref update, what stopped
//! the push from being judged at all, and the one mapping from both to an exit code. The
//! hooks gather facts, `engine::ref_update` decides each ref, `render::push` prints this.

use std::time::Duration;

use serde::Serialize;

use crate::exit;
use crate::report::{Decision, Finding};

/// Which hook judged the push: what it may say (a server rejects; a developer's clone
/// predicts) and where its facts came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Hook {
    PreReceive,
    PrePush,
}

/// The verdict on one ref update.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RefVerdict {
    /// The ref's full name (the remote's, for pre-push).
    #[serde(rename = "ref")]
    pub name: String,
    /// Commits judged.
    pub commits: usize,
    /// Each rejects the push (unless the ledger's or server's evaluate mode holds).
    pub findings: Vec<Finding>,
    /// Findings the ledger shows without rejecting (a level set to "warn", history before
    /// adoption).
    pub warnings: Vec<Finding>,
    /// What the pusher should know about the ref update itself (a re-created ref whose old
    /// tip is gone, a deletion nothing remembers).
    pub notes: Vec<String>,
    /// `<short id> <who signed>` per judged commit, when signatures were checked.
    pub signers: Vec<String>,
    /// Why the update could not be judged, if so.
    #[serde(rename = "cannot_judge")]
    pub unjudged: Option<String>,
    /// The old tip, when the update deletes a protected ref the server must remember.
    pub deleted: Option<String>,
}

impl RefVerdict {
    /// A ref update with nothing to say: unprotected, or allowed.
    pub fn passed(name: &str) -> RefVerdict {
        RefVerdict {
            name: name.to_string(),
            ..RefVerdict::default()
        }
    }

    /// A ref update that could not be judged, and why.
    pub fn unjudged(name: &str, error: &anyhow::Error) -> RefVerdict {
        RefVerdict {
            unjudged: Some(format!("{error:#}")),
            ..RefVerdict::passed(name)
        }
    }
}

/// Why a push was not judged ref by ref, or could not be accepted after it was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "detail", rename_all = "snake_case")]
pub enum PushFailure {
    /// The hook's standard input is not what git writes there.
    Input(String),
    /// The repository, its settings or the policy could not be read.
    Error(String),
    /// Judging took longer than the server's `guard.timeout`.
    Timeout(#[serde(serialize_with = "seconds")] Duration),
    /// The judging thread stopped without an answer.
    Internal,
    /// The push was accepted, and a deletion it makes could not be written to the audit log.
    AuditLog(String),
}

fn seconds<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// What the hook tells git.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PushOutcome {
    Accepted,
    /// Evaluate mode: the push would have been rejected (or not judged) and goes on.
    AcceptedInEvaluateMode,
    Rejected,
    CannotJudge,
}

/// The outcome of one push through a hook.
#[derive(Debug, Clone, Serialize)]
pub struct PushReport {
    pub hook: Hook,
    pub refs: Vec<RefVerdict>,
    /// The server's `guard.mode` or the ledger's `mode` is "evaluate": nothing is rejected
    /// but what would break the gate itself.
    pub evaluate: bool,
    /// The push deletes a ref: evaluate mode never accepts such a push unjudged (the audit
    /// log must learn of a deletion, and the default branch must not go).
    pub deletes: bool,
    pub failure: Option<PushFailure>,
}

impl PushReport {
    pub fn new(hook: Hook) -> PushReport {
        PushReport {
            hook,
            refs: Vec::new(),
            evaluate: false,
            deletes: false,
            failure: None,
        }
    }

    /// A push that was not judged ref by ref.
    pub fn failed(hook: Hook, failure: PushFailure) -> PushReport {
        PushReport {
            failure: Some(failure),
            ..PushReport::new(hook)
        }
    }

    /// Commits judged over every ref.
    pub fn commits(&self) -> usize {
        self.refs.iter().map(|r| r.commits).sum()
    }

    /// Whether a finding of the push is one evaluate mode does not waive.
    fn keeps_the_gate(&self) -> bool {
        self.refs
            .iter()
            .flat_map(|r| &r.findings)
            .any(|f| f.code.keeps_the_gate())
    }

    /// Whether `finding` rejects the push (or only would, in evaluate mode).
    pub fn enforced(&self, finding: &Finding) -> bool {
        !self.evaluate || finding.code.keeps_the_gate()
    }

    /// What the hook tells git: any finding rejects, whatever else could not be judged; a
    /// timeout rejects; evaluate mode accepts all that does not break the gate itself.
    pub fn outcome(&self) -> PushOutcome {
        let waived = self.evaluate && !self.deletes;
        match &self.failure {
            Some(PushFailure::Timeout(_)) if waived => PushOutcome::AcceptedInEvaluateMode,
            Some(PushFailure::Internal | PushFailure::Error(_)) if waived => {
                PushOutcome::AcceptedInEvaluateMode
            }
            Some(PushFailure::Timeout(_)) => PushOutcome::Rejected,
            Some(_) => PushOutcome::CannotJudge,
            None => {
                let rejected = self.refs.iter().any(|r| !r.findings.is_empty());
                let unjudged = self.refs.iter().any(|r| r.unjudged.is_some());
                if (rejected || unjudged) && self.evaluate && !self.keeps_the_gate() {
                    PushOutcome::AcceptedInEvaluateMode
                } else if rejected {
                    PushOutcome::Rejected
                } else if unjudged {
                    PushOutcome::CannotJudge
                } else {
                    PushOutcome::Accepted
                }
            }
        }
    }

    /// The decision the push would have under enforcement; `None` when it could not be
    /// judged.
    pub fn decision(&self) -> Option<Decision> {
        match (
            &self.failure,
            self.refs.iter().any(|r| !r.findings.is_empty()),
        ) {
            (Some(PushFailure::Timeout(_)), _) | (None, true) => Some(Decision::Reject),
            (Some(PushFailure::AuditLog(_)), false) | (None, false)
                if self.refs.iter().all(|r| r.unjudged.is_none()) =>
            {
                Some(Decision::Merge)
            }
            _ => None,
        }
    }

    /// The one mapping from a push's outcome to the hook's exit code.
    pub fn exit_code(&self) -> i32 {
        match self.outcome() {
            PushOutcome::Accepted | PushOutcome::AcceptedInEvaluateMode => exit::MERGE,
            PushOutcome::Rejected => exit::REJECT,
            PushOutcome::CannotJudge => exit::CANNOT_JUDGE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Code;

    fn with(findings: &[Code], unjudged: bool) -> PushReport {
        let mut r = RefVerdict::passed("refs/heads/main");
        r.findings = findings.iter().map(|&c| Finding::new(c, "x")).collect();
        r.unjudged = unjudged.then(|| "cannot read".to_string());
        PushReport {
            refs: vec![r],
            ..PushReport::new(Hook::PreReceive)
        }
    }

    #[test]
    fn any_finding_rejects_beside_what_could_not_be_judged() {
        assert_eq!(with(&[], false).exit_code(), exit::MERGE);
        assert_eq!(with(&[], true).exit_code(), exit::CANNOT_JUDGE);
        assert_eq!(
            with(&[Code::AgentEditProtected], true).exit_code(),
            exit::REJECT
        );
        assert_eq!(with(&[], true).decision(), None);
        assert_eq!(with(&[], false).decision(), Some(Decision::Merge));
    }

    #[test]
    fn evaluate_mode_waives_all_but_what_keeps_the_gate() {
        let mut r = with(&[Code::AgentEditProtected], true);
        r.evaluate = true;
        assert_eq!(r.outcome(), PushOutcome::AcceptedInEvaluateMode);
        assert_eq!(r.decision(), Some(Decision::Reject));
        let mut r = with(&[Code::RefDeletion], false);
        r.evaluate = true;
        assert_eq!(r.outcome(), PushOutcome::Rejected);
    }

    #[test]
    fn failures_map_to_one_exit_code_each() {
        let failed = |f: PushFailure, evaluate: bool, deletes: bool| PushReport {
            evaluate,
            deletes,
            ..PushReport::failed(Hook::PreReceive, f)
        };
        let timeout = PushFailure::Timeout(Duration::from_secs(4));
        assert_eq!(
            failed(timeout.clone(), false, false).exit_code(),
            exit::REJECT
        );
        assert_eq!(
            failed(timeout.clone(), true, false).exit_code(),
            exit::MERGE
        );
        // A deletion is never accepted unjudged, evaluate mode or not.
        assert_eq!(failed(timeout, true, true).exit_code(), exit::REJECT);
        let internal = failed(PushFailure::Internal, false, false);
        assert_eq!(internal.exit_code(), exit::CANNOT_JUDGE);
        assert_eq!(
            failed(PushFailure::Internal, true, false).exit_code(),
            exit::MERGE
        );
        // Bad input is never waived: evaluate mode is not known yet.
        let input = failed(PushFailure::Input("x".into()), true, false);
        assert_eq!(input.exit_code(), exit::CANNOT_JUDGE);
        let log = failed(PushFailure::AuditLog("x".into()), true, true);
        assert_eq!(log.exit_code(), exit::CANNOT_JUDGE);
    }
}
