//! The validated policy the rules read: `Policy`, one struct per ledger table, and where it
//! came from. Apart from the reading that builds it (`Policy::parse` in `ledger.rs`, the
//! per-table readers in `tables.rs`), which all name these types.

use std::path::PathBuf;

use globset::GlobSet;

use super::patterns::{
    expand_protect_pattern, normalize_protect_pattern, protect_glob, protect_glob_cased,
};
use crate::policy::agents::{AgentsPolicy, HumanTrailer, PatternSet};
use crate::policy::bots::BotsPolicy;
use crate::policy::caseless::CaselessGlobSet;
use crate::policy::levels::{Levels, Severity};

/// Where the policy in force came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicySource {
    /// The ledger embedded in the binary (no ledger file exists).
    Embedded,
    /// A ledger file, as the user named it or relative to the workspace root.
    File(PathBuf),
    /// A ledger read from a git revision (the base of a range or push).
    Revision { path: String, commit: String },
}

impl PolicySource {
    pub fn describe(&self) -> String {
        match self {
            PolicySource::Embedded => "embedded default ledger".to_string(),
            PolicySource::File(path) => path.display().to_string(),
            PolicySource::Revision { path, commit } => format!("{path} at {commit}"),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Policy {
    pub source: PolicySource,
    /// `mode = "evaluate"`: report everything, reject nothing (a trial before enforcing).
    pub evaluate: bool,
    pub properties: PropertiesPolicy,
    pub fixtures: FixturesPolicy,
    pub freeze: FreezePolicy,
    pub coverage: CoveragePolicy,
    pub tests: TestsPolicy,
    pub agents: AgentsPolicy,
    pub trailers: TrailerPolicy,
    pub protect: ProtectPolicy,
    pub refs: RefsPolicy,
    pub artifacts: ArtifactsPolicy,
    pub humans: HumansPolicy,
    pub harness: HarnessPolicy,
    pub baseline: BaselinePolicy,
    /// `[[bots]]`: the one kind of change each named bot may make.
    pub bots: BotsPolicy,
    /// `[levels]`: what a finding of each code does (`tests.weakened`, `baseline.vanished`
    /// and `baseline.newly_skipped` are the same for their codes).
    pub levels: Levels,
}

/// `[baseline]`: the evidence compared with the base revision's.
#[derive(Debug, Clone)]
pub struct BaselinePolicy {
    pub vanished: Severity,
    pub newly_skipped: Severity,
    /// Test ids that may come and go, as written (for messages).
    pub ignore: Vec<String>,
    /// `ignore`, normalised like freeze entries and compiled.
    pub ignore_set: GlobSet,
}

/// The test harness: files that decide how tests run and what they report.
#[derive(Debug, Clone)]
pub struct HarnessPolicy {
    /// Whole files, as globs over repository-relative paths (expanded like `[protect]`).
    pub paths: Vec<String>,
    /// Shared files of which only some sections are harness.
    pub sections: Vec<HarnessSections>,
}

impl HarnessPolicy {
    /// Adds whole harness files found elsewhere than the ledger (the task runners the CI
    /// files run, read from the same revision), by their exact paths.
    pub fn add_files(&mut self, paths: &[String]) {
        for path in paths {
            let pattern = globset::escape(path);
            if protect_glob(&pattern).is_ok() && !self.paths.contains(&pattern) {
                self.paths.push(pattern);
            }
        }
    }
}

/// Files matching `file` (a glob like `**/pyproject.toml`) count as harness changes only when
/// the sections of `scope` differ.
#[derive(Debug, Clone)]
pub struct HarnessSections {
    pub file: String,
    pub scope: crate::policy::harness::Scope,
}

/// What proves a commit human.
#[derive(Debug, Clone)]
pub struct HumansPolicy {
    /// An allowed-signers file (git's `gpg.ssh.allowedSignersFile` format), read from the
    /// same revision as the ledger; the server's `guard.allowedSigners` overrides it.
    pub allowed_signers: Option<String>,
    /// A commit counts as human only when its SSH signature verifies against it.
    pub require_signature: bool,
}

/// Which refs the hooks judge, and whether protected refs may be deleted.
#[derive(Debug, Clone)]
pub struct RefsPolicy {
    pub protected: PatternSet,
    pub allow_delete: bool,
}

/// The test artifacts a hook scores, by file name: in the server's artifact directory
/// (`guard.artifacts`) for pre-receive, relative to the repository root for pre-push.
#[derive(Debug, Clone)]
pub struct ArtifactsPolicy {
    /// Reject a push when no JUnit report is found.
    pub required: bool,
    pub junit: Vec<String>,
    pub coverage: Option<String>,
    pub collected: Option<String>,
    /// `guard retest`'s JUnit reports: the humans' tests run against the pushed code.
    pub retest_junit: Vec<String>,
}

/// The human trailer each protected class needs.
#[derive(Debug, Clone)]
pub struct TrailerPolicy {
    pub fixtures: HumanTrailer,
    pub freeze: HumanTrailer,
    pub properties: HumanTrailer,
    pub ledger: HumanTrailer,
    pub harness: HumanTrailer,
    pub test_removal: HumanTrailer,
}

/// Extra protected paths, as globs over repository-relative paths.
#[derive(Debug, Clone)]
pub struct ProtectPolicy {
    pub paths: Vec<String>,
    pub set: CaselessGlobSet,
}

#[derive(Debug, Clone)]
pub struct PropertiesPolicy {
    /// Repository-relative directories (or files), without trailing slashes.
    pub paths: Vec<String>,
    pub required: bool,
    pub seeds: Option<String>,
    pub min_lines: usize,
    pub file_patterns: Vec<String>,
    pub files: GlobSet,
}

#[derive(Debug, Clone)]
pub struct FixturesPolicy {
    pub lockfile: String,
    pub paths: Vec<String>,
    pub allow_unhashed_new: bool,
}

#[derive(Debug, Clone)]
pub struct FreezePolicy {
    pub file: String,
    pub passing_frozen_is_error: bool,
    /// A budget set in the ledger; the stricter of this and the freeze file's applies.
    pub max_active_leases: Option<u32>,
}

#[derive(Debug, Clone)]
pub struct CoveragePolicy {
    pub min_proven: f64,
    pub required: bool,
}

#[derive(Debug, Clone)]
pub struct TestsPolicy {
    pub failures_reject: bool,
    /// Test files, as globs over repository-relative paths (expanded like `[protect]`).
    pub paths: Vec<String>,
    /// `paths`, compiled.
    pub set: CaselessGlobSet,
    /// What a weakened test in an agent commit does (`weakened_test`).
    pub weakened: Severity,
    /// Which Python functions are tests: pytest's `python_functions`, read from its settings
    /// at the same revision (not a ledger key); `test` by default.
    pub python_functions: Vec<String>,
    /// Which Python classes pytest collects: `python_classes`, from the same settings;
    /// `Test` by default.
    pub python_classes: Vec<String>,
    /// Which Python modules pytest collects: `python_files`, from the same settings;
    /// `test_*.py` and `*_test.py` by default.
    pub python_files: Vec<String>,
}

impl TestsPolicy {
    /// Whether `path` is a test file by `paths` (Rust files with `#[test]` functions count
    /// wherever they are; the engine tells those by their content).
    pub fn is_test_file(&self, path: &str) -> bool {
        self.set.is_match(path)
    }

    /// Adds test-file globs that come from elsewhere than the ledger (the test runner's own
    /// settings, read from the same revision): they only widen what is read. A glob that
    /// does not compile is left out.
    pub fn add_paths(&mut self, globs: &[String]) {
        let before = self.paths.len();
        for glob in globs {
            let Ok(normal) = normalize_protect_pattern(glob) else {
                continue;
            };
            for pattern in expand_protect_pattern(&normal) {
                if protect_glob(&pattern).is_ok() && !self.paths.contains(&pattern) {
                    self.paths.push(pattern);
                }
            }
        }
        if self.paths.len() > before {
            if let Ok(set) = CaselessGlobSet::new(&self.paths, protect_glob_cased) {
                self.set = set;
            } else {
                self.paths.truncate(before);
            }
        }
    }
}
