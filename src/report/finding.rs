//! Findings: one problem the gate found, with a stable snake_case code. The decision is a
//! pure function of the findings: any finding rejects.

use serde::Serialize;

macro_rules! codes {
    ($($variant:ident => $code:literal, $description:literal;)*) => {
        /// Every reason code guard reports. The codes are part of the command-line contract.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Code { $($variant,)* }

        impl Code {
            pub const ALL: &[Code] = &[$(Code::$variant,)*];

            pub fn as_str(self) -> &'static str {
                match self { $(Code::$variant => $code,)* }
            }

            /// One line on what the code means, for `--help` style listings and the README.
            pub fn description(self) -> &'static str {
                match self { $(Code::$variant => $description,)* }
            }
        }
    };
}

codes! {
    ExpiredLeases => "expired_leases", "a freeze lease is past its `expires` date (UTC)";
    FreezeBudget => "freeze_budget", "more active leases than `max_active_leases` allows";
    AgentAddedLease => "agent_added_lease", "an agent commit added a freeze lease";
    ProvenCoverage => "proven_coverage", "coverage from the run without frozen tests is below the floor";
    CoverageMissing => "coverage_missing", "the ledger requires a coverage report and none was given";
    FixtureDigest => "fixture_digest", "a fixture's SHA-256 differs from the lockfile";
    FixtureMissing => "fixture_missing", "a fixture listed in the lockfile does not exist";
    FixtureUnhashed => "fixture_unhashed", "a file in the fixture paths is not in the lockfile";
    PropertyHold => "property_hold", "a property test failed, or no property test ran";
    PropertyThin => "property_thin", "a property test file is too short or asserts nothing";
    PropertySeeds => "property_seeds", "the property seed corpus is missing or empty";
    FrozenTestPassed => "frozen_test_passed", "a frozen (leased) test passed: a blocker, not a win";
    FrozenTestMissing => "frozen_test_missing", "a frozen test id matches no test in the reports";
    LeaseNotCollected => "lease_not_collected", "a lease names a test that was not collected";
    TestFailures => "test_failures", "an ordinary test (neither frozen nor a property) failed, or a suite reports an error";
    JunitMissing => "junit_missing", "no JUnit report was given, so nothing proves the tests ran";
    AgentEditProtected => "agent_edit_protected", "an agent commit changes a protected path";
    ForgedHumanTrailer => "forged_human_trailer", "an agent commit carries a human trailer";
    MissingHumanTrailer => "missing_human_trailer", "a human commit changes a protected path without its trailer";
    AgentAddedProperty => "agent_added_property", "an agent commit adds a property test file";
    FrozenTestRewritten => "frozen_test_rewritten", "a frozen test passes and the range changed its test file";
    RefDeletion => "ref_deletion", "a push deletes a protected ref and the ledger forbids it";
    ArtifactsMissing => "artifacts_missing", "the ledger requires test artifacts and none were found for the pushed commit";
    UnsignedHumanCommit => "unsigned_human_commit", "a commit that must prove a human is not signed";
    BadSignature => "bad_signature", "a commit's signature does not verify (or is not an SSH signature)";
    UnknownSigner => "unknown_signer", "a commit is signed by a key that is not in the allowed signers";
    SignerNotCommitter => "signer_not_committer", "the signing key's principals do not match the committer e-mail";
    ProtectedRewind => "protected_rewind", "a non-fast-forward update undoes protected changes with no commit that carries them";
    SignatureExpired => "signature_expired", "the commit time (or, in hooks, the time of the push) is outside the signing key's validity window";
    ReplaceRef => "replace_ref", "a push creates or moves a replace ref (`refs/replace/*`), which changes what existing objects show";
    LedgerInvalid => "ledger_invalid", "the ledger (or the allowed-signers file it names) that the range leaves does not parse or compile";
    LedgerRemoved => "ledger_removed", "the range removes the ledger in force: the tip has none where the base has it";
    LockfileMissing => "lockfile_missing", "the tip has no lockfile (or not a regular file) where the ledger names it, while the base has one";
    LockfileInvalid => "lockfile_invalid", "the tip's lockfile does not parse (e.g. an entry with `..`), while the base's does";
    FreezeFileMissing => "freeze_file_missing", "the tip has no freeze file (or not a regular file) where the ledger names it, while the base has one";
    FreezeFileInvalid => "freeze_file_invalid", "the tip's freeze file does not parse, while the base's does";
    FixtureNotRegular => "fixture_not_regular", "a fixture in the tip is a symlink, a submodule or a directory: git holds no bytes of it to verify";
    MalformedTree => "malformed_tree", "a pushed tree on the way to a protected path is one git's fsck calls malformed (duplicate or unsorted entries, `.`, `..`, `.git` or a variant, a bad mode)";
    TestMissingFromReport => "test_missing_from_report", "a collected test has no record in the JUnit reports";
    ReportMismatch => "report_mismatch", "the test runner exited non-zero while its reports show no failure";
    TestVanished => "test_vanished", "a test that passed in the baseline's reports is absent from the reports now";
    TestNewlySkipped => "test_newly_skipped", "a test that passed in the baseline's reports is skipped or xfailed now";
}

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One problem, where it is, and how to fix it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    pub code: Code,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The abbreviated commit id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The commit's subject line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test: Option<String>,
    /// What a human does to clear the finding.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
}

impl Finding {
    pub fn new(code: Code, message: impl Into<String>) -> Finding {
        Finding {
            code,
            message: message.into(),
            path: None,
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
