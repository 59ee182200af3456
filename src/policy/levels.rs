//! `[levels]`: what a finding of each reason code does: `reject` (the default), `warn`
//! (shown as a warning, the decision unchanged) or `off` (not shown). The codes that keep
//! the gate itself honest (who may change its files, its history, its proofs) cannot be
//! lowered.

use std::collections::BTreeMap;

use crate::codes::Code;

/// What a finding of a code does: the level `[levels]` (or an older key) sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Reject,
    /// Reported as a warning; the decision does not change.
    Warn,
    /// Not computed, or not shown.
    Off,
}

/// Codes no ledger may lower: what an agent may not change, the gate's own files and the
/// history they are judged by, and what proves a human. Lowering one would let an agent's
/// change through the gate it changed.
pub const FIXED: &[Code] = &[
    Code::AgentEditProtected,
    Code::ForgedHumanTrailer,
    Code::AgentAddedLease,
    Code::AgentAddedProperty,
    Code::ProtectedRewind,
    Code::ReplaceRef,
    Code::RefDeletion,
    Code::LedgerInvalid,
    Code::LedgerRemoved,
    Code::MalformedTree,
    Code::LockfileMissing,
    Code::LockfileInvalid,
    Code::FreezeFileMissing,
    Code::FreezeFileInvalid,
    Code::FixtureNotRegular,
    Code::ReportMismatch,
    Code::BadSignature,
    Code::SignerNotCommitter,
    Code::SignatureExpired,
];

/// The level of each code the ledger names; every other code rejects.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Levels {
    by_code: BTreeMap<Code, Severity>,
}

impl Levels {
    pub fn of(&self, code: Code) -> Severity {
        self.by_code.get(&code).copied().unwrap_or(Severity::Reject)
    }

    /// Whether the ledger named `code`.
    pub fn names(&self, code: Code) -> bool {
        self.by_code.contains_key(&code)
    }

    pub fn set(&mut self, code: Code, level: Severity) {
        self.by_code.insert(code, level);
    }
}

/// The code named `name` (`weakened_test`).
pub fn code_named(name: &str) -> Option<Code> {
    Code::ALL.iter().copied().find(|c| c.as_str() == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_named_by_its_own_name_and_unnamed_codes_reject() {
        for &code in Code::ALL {
            assert_eq!(code_named(code.as_str()), Some(code));
        }
        assert_eq!(code_named("weakened tests"), None);
        let mut levels = Levels::default();
        levels.set(Code::FrozenTestPassed, Severity::Warn);
        assert_eq!(levels.of(Code::FrozenTestPassed), Severity::Warn);
        assert_eq!(levels.of(Code::TestFailures), Severity::Reject);
    }
}
