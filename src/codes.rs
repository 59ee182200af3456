//! The reason codes: the stable snake_case names of what the gate finds, with what each
//! means and what clears it. Part of the command-line contract. A module of its own, below
//! the others: the ledger names codes (`[levels]`) as the reports do.

use serde::Serialize;

macro_rules! codes {
    ($($variant:ident => $code:literal, $description:literal, $fix:literal;)*) => {
        /// Every reason code guard reports. The codes are part of the command-line contract.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Code { $($variant,)* }

        impl Code {
            pub const ALL: &[Code] = &[$(Code::$variant,)*];

            pub fn as_str(self) -> &'static str {
                match self { $(Code::$variant => $code,)* }
            }

            /// What the code means: the README's and `docs/reason-codes.md`'s "meaning".
            pub fn description(self) -> &'static str {
                match self { $(Code::$variant => $description,)* }
            }

            /// What clears it, in general (each finding's `help` says it for its case).
            pub fn fix(self) -> &'static str {
                match self { $(Code::$variant => $fix,)* }
            }
        }
    };
}

impl Code {
    /// Findings that would leave the server unable to judge later pushes, or lose what it
    /// needs to (the default branch or policy ref deleted, a protected ref deleted, the
    /// ledger removed or made unreadable): they reject in evaluate mode too, which otherwise
    /// rejects nothing.
    pub fn keeps_the_gate(self) -> bool {
        matches!(
            self,
            Code::RefDeletion | Code::LedgerInvalid | Code::LedgerRemoved
        )
    }
}

codes! {
    ExpiredLeases => "expired_leases", "a freeze lease is past its `expires` date (UTC)",
        "fix the test and drop the lease, or its owner renews it";
    FreezeBudget => "freeze_budget", "more active leases than `max_active_leases` allows",
        "fix flaky tests; do not raise the budget to land a patch";
    AgentAddedLease => "agent_added_lease", "an agent commit added a freeze lease",
        "agents cannot freeze tests; a human adds leases with `Freeze-Lease: human`";
    ProvenCoverage => "proven_coverage", "coverage without frozen tests is below the floor: the figure of a run that deselected them, or of one run whose coverage.py contexts tell which lines only frozen tests ran",
        "add tests that cover the change";
    CoverageMissing => "coverage_missing", "the ledger requires a coverage report and none was given",
        "pass `--coverage`";
    FixtureDigest => "fixture_digest", "a fixture's SHA-256 differs from the lockfile",
        "revert the fixture, or a human runs `guard lock` and commits with `Fixture-Lock: human`";
    FixtureMissing => "fixture_missing", "a fixture listed in the lockfile does not exist",
        "restore it, or a human removes it from the lockfile";
    FixtureUnhashed => "fixture_unhashed", "a file in the fixture paths is not in the lockfile",
        "remove it, or a human adds it with `guard lock`";
    PropertyHold => "property_hold", "a property test failed, errored, was skipped or flaky; no property test ran; or a property file has no test in the reports (it was deselected)",
        "reject the patch; never edit the property to pass";
    PropertyThin => "property_thin", "a property test file is too short or asserts nothing",
        "restore the human-written file";
    PropertySeeds => "property_seeds", "the property seed corpus is missing or empty",
        "restore the seeds from the base branch";
    FrozenTestPassed => "frozen_test_passed", "a frozen (leased) test passed: a blocker, not a win",
        "revert a test rewrite; else rerun on main without the patch, and only a human removes the lease";
    FrozenTestMissing => "frozen_test_missing", "a frozen test id matches no test in the reports",
        "run frozen tests in the JUnit run, or fix the id";
    LeaseNotCollected => "lease_not_collected", "a lease names a test that was not collected",
        "correct the id or remove the lease";
    TestFailures => "test_failures", "an ordinary test (neither frozen nor a property) failed, errored, or passed only on a rerun; or a suite reports a `<failure>`/`<error>` outside any test (a collection or setup error: the finding's `line` and `column` give its place in the report)",
        "fix it, or a human freezes it with a lease";
    JunitMissing => "junit_missing", "no JUnit report was given, so nothing proves the tests ran",
        "pass `--junit`";
    AgentEditProtected => "agent_edit_protected", "an agent commit changes a protected path (ledger, freeze file, lockfile, fixtures, property tests, seeds, `[protect]` paths, the test harness; for `pyproject.toml` and `setup.cfg`, a harness section)",
        "drop or rewrite the commit (`git rebase -i BASE`); a human makes the change with the class's trailer";
    ForgedHumanTrailer => "forged_human_trailer", "an agent commit carries a human trailer",
        "drop the commit; a human makes the change in a commit of their own";
    MissingHumanTrailer => "missing_human_trailer", "a human commit changes a protected path without its trailer in the trailer block (the message's last paragraph)",
        "reword the message to end with the trailer (e.g. `Fixture-Lock: human`), or drop the change from the branch";
    AgentAddedProperty => "agent_added_property", "an agent commit adds a property test file",
        "move it out of the property paths, or a human rewrites it as an invariant";
    FrozenTestRewritten => "frozen_test_rewritten", "a frozen test passes and the range changed its test file (also with `passing_frozen_is_error = false`)",
        "restore the test file: drop or rewrite the commits that changed it (`git rebase -i BASE`); the lease stays";
    RefDeletion => "ref_deletion", "a push deletes a protected ref and the ledger's `[refs] allow_delete` is false",
        "ask a server admin";
    ArtifactsMissing => "artifacts_missing", "the ledger requires test artifacts (`[artifacts] required`) and none were found for the pushed commit",
        "let CI publish the reports, then push again";
    UnsignedHumanCommit => "unsigned_human_commit", "a commit that must prove a human (`[humans] require_signature`, or strict mode) changes protected paths unsigned",
        "sign it with SSH: `git -c gpg.format=ssh -c user.signingkey=KEY commit --amend -S --no-edit`";
    BadSignature => "bad_signature", "its signature does not verify (the commit changed after signing), or is OpenPGP/X.509, which guard does not verify",
        "re-sign with an SSH key";
    UnknownSigner => "unknown_signer", "the signing key is not in the allowed signers of the base revision (or the server's `guard.allowedSigners`)",
        "a human adds the key in an earlier, separately landed commit";
    SignerNotCommitter => "signer_not_committer", "the key's principals do not match the committer e-mail",
        "commit with the e-mail the allowed-signers line names";
    ProtectedRewind => "protected_rewind", "a non-fast-forward push drops commits that changed protected paths, undoing them with no commit that carries the change; or a protected ref deleted and made again undoes them against the tip it was deleted at",
        "revert with a new commit (with its trailer) instead of force-pushing";
    SignatureExpired => "signature_expired", "the committer date (or, in hooks, the time of the push) is outside the key's `valid-after`/`valid-before`",
        "re-sign with a current key";
    ReplaceRef => "replace_ref", "a push creates or moves a replace ref (`refs/replace/*`), which changes what existing objects show",
        "change files with a commit; a replace ref lands only by break-glass";
    LedgerInvalid => "ledger_invalid", "the ledger (or the allowed-signers file it names) that the range leaves does not parse or compile, so no later push could be judged",
        "fix it in a new commit (or amend) until `guard lint` accepts it";
    LedgerRemoved => "ledger_removed", "the range removes the ledger in force: the tip has none (or not a regular file) where the base has it, so pushes after it would be judged by the embedded default",
        "restore the ledger; a human changes the policy by editing it with `Ledger-Change: human`";
    LockfileMissing => "lockfile_missing", "the tip has no lockfile where the ledger names it (deleted, renamed, a symlink) while the base has one; no fixture is verified",
        "restore it from the base; to move it, a human changes `fixtures.lockfile` in the ledger first";
    LockfileInvalid => "lockfile_invalid", "the tip's lockfile does not parse (e.g. an entry with `..` or an absolute path; the message gives the line) while the base's does",
        "fix or restore it; a human rebuilds it with `guard lock`";
    FreezeFileMissing => "freeze_file_missing", "the tip has no freeze file where the ledger names it while the base has one; no lease applies",
        "restore it from the base; to move it, a human changes `freeze.file` in the ledger first";
    FreezeFileInvalid => "freeze_file_invalid", "the tip's freeze file does not parse (the message gives the line) while the base's does",
        "fix or restore it";
    FixtureNotRegular => "fixture_not_regular", "a fixture in the tip (a lockfile entry or a file under the fixture paths) is a symlink, a submodule or a directory: git holds no bytes of it to verify",
        "replace it with the file's bytes, or a human removes it from the lockfile";
    MalformedTree => "malformed_tree", "a pushed tree on the way to a protected path is malformed by git's fsck rules (duplicate or unsorted entries, `.`, `..`, `.git` or an HFS+/NTFS variant, an empty name or one with `/`, a bad mode)",
        "the tree was written by hand: redo the commit with a normal `git commit` (`git rebase -i`)";
    TestMissingFromReport => "test_missing_from_report", "with `--collected`: a collected test has no record in the JUnit reports (a frozen one is `frozen_test_missing` instead)",
        "score the report of a run of the collected tests as the runner wrote it; collect with the same paths and options as the run";
    ReportMismatch => "report_mismatch", "`guard run`: the test command exited non-zero (or was killed) while its reports show no failing record and no suite-level error",
        "find out why the run failed (a crash after the report was written, an option that fails the run such as `--cov-fail-under`, code under test that rewrote its report), fix it and run again";
    BeforeAdoption => "before_adoption", "a warning, never a rejection: a range or push whose base holds no ledger brings commits from before the commit that adds the ledger on its first-parent line (where the gate starts); they are counted, not judged",
        "nothing: history from before adoption has no trailers to judge; the ledger's commit and everything after it are judged";
    OldTestFails => "old_test_fails", "`guard retest`, and `check` and the hooks given its reports (`--retest-junit`, `retest-junit.xml` in `guard.artifacts`): a test of a file an agent commit changed, run as the base has it against the range's code, fails, errors, is skipped or has no record (the agent changed behaviour and the test that would have said so); or the retest's report is missing while an agent changed a test",
        "fix the code, not the test; a human who means the behaviour to change changes the test in a commit of their own, whose version is the one run";
    TestVanished => "test_vanished", "with a baseline (`--baseline-junit`, or in hooks the base's reports in `guard.artifacts`): a test that passed in the baseline has no record now (deleted, renamed, deselected, no longer collected). `check` names the commit of the range that changed the test's file",
        "restore the test; a human who means to remove it does so in a commit with `Test-Removal: human` (`guard check` waives it then); ids that come and go go in `[baseline] ignore`";
    TestNewlySkipped => "test_newly_skipped", "with a baseline: a test that passed in the baseline is skipped or xfailed now. `check` names the commit that changed its file",
        "remove the skip or xfail marker; a human who means it marks it in a commit with `Test-Removal: human`";
    CoverageExcluded => "coverage_excluded", "`check` and the hooks: an agent commit adds a coverage exclusion to code (`# pragma: no cover`, `# pragma: no branch`, `#[coverage(off)]`, `#[cfg(not(tarpaulin_include))]`): the lines it marks stop counting, so they may go untested without lowering proven coverage",
        "drop the exclusion and cover the code with a test; a human who means it adds it in a commit of their own";
    WeakenedTest => "weakened_test", "`check` and the hooks: an agent commit weakens a test in a test file (`[tests] paths`, or a Rust file with `#[test]` functions): removes or loosens an assertion (`assert x == y` made `assert x`, `assert_eq!` made `assert!(true)`), adds a skip or expected failure (`@pytest.mark.skip`, `xfail`, `pytest.skip(`, `@unittest.skip`, `#[ignore]`), returns before its assertions, widens a tolerance (`pytest.approx` `rel`/`abs`, `abs_tol`, `timeout=`, a `sleep`, a numeric bound in an asserted comparison) or deletes a test function. The finding gives the file, line and the lines before and after",
        "drop or rewrite the commit (`git rebase -i BASE`) and restore the test; a human who means the change makes it in a commit of their own (with `Test-Removal: human`, which the baseline rules honour)";
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
