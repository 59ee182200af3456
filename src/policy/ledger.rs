//! The merge ledger (`qa/merge_ledger.toml`): parsed from TOML into a raw form, table by
//! table, then validated into a `Policy` the rules read, one step per table. Every step notes
//! what is wrong and goes on, so a ledger with three mistakes names all three, in file order
//! (`InputErrors`). Owns the defaults (named below) and the embedded starter ledger; owns no
//! rule.

use std::collections::BTreeMap;
use std::ops::{Range, RangeInclusive};
use std::path::{Path, PathBuf};

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::Deserialize;
use serde::de::Error as _;
use toml::Spanned;
use toml::de::{DeTable, DeValue, ValueDeserializer};

use crate::codes::Code;
use crate::error::{InputError, InputErrors, Location, line_column};
use crate::policy::agents::{
    AgentsPolicy, HumanTrailer, PatternSet, TrailerPatterns, trailer_pattern,
};
use crate::policy::bots::{self, BotsPolicy};
use crate::policy::caseless::{CaselessGlobSet, SetError};
use crate::policy::harness::{Format, Scope};
pub use crate::policy::levels::Severity;
use crate::policy::levels::{self, Levels};
use crate::workspace::{Workspace, check_relative, normalize_rel};

/// The ledger path used when `--ledger` is not given.
pub const DEFAULT_LEDGER_PATH: &str = "qa/merge_ledger.toml";

/// The starter ledger, embedded so guard works in a repository that has none yet.
pub const EMBEDDED_LEDGER: &str = include_str!("../../policy/merge_ledger.toml");

// Defaults: what a ledger that leaves a key out gets. The README's ledger reference and the
// starter ledger (`policy/merge_ledger.toml`) say the same.

/// The ledger `version` this guard reads.
pub const LEDGER_VERSION: i64 = 1;
/// `properties.paths`.
pub const DEFAULT_PROPERTY_PATHS: &[&str] = &["tests/properties"];
/// `properties.required`.
pub const DEFAULT_PROPERTIES_REQUIRED: bool = true;
/// `properties.min_lines`, and the values it may take.
pub const DEFAULT_MIN_LINES: usize = 8;
pub const MIN_LINES_RANGE: RangeInclusive<i64> = 1..=10_000;
/// `properties.files`: globs on the file name.
pub const DEFAULT_PROPERTY_FILES: &[&str] = &["test_*.py", "*_test.py", "*.rs"];
/// `fixtures.lockfile`.
pub const DEFAULT_LOCKFILE: &str = "qa/fixtures.lock.json";
/// `fixtures.paths`.
pub const DEFAULT_FIXTURE_PATHS: &[&str] = &["tests/fixtures"];
/// `fixtures.allow_unhashed_new`.
pub const DEFAULT_ALLOW_UNHASHED_NEW: bool = false;
/// `freeze.file`.
pub const DEFAULT_FREEZE_FILE: &str = "qa/freeze.toml";
/// `freeze.passing_frozen_is_error`.
pub const DEFAULT_PASSING_FROZEN_IS_ERROR: bool = true;
/// `coverage.min_proven` (a percentage), and the values it may take.
pub const DEFAULT_MIN_PROVEN: f64 = 70.0;
pub const MIN_PROVEN_RANGE: RangeInclusive<f64> = 0.0..=100.0;
/// `coverage.required`.
pub const DEFAULT_COVERAGE_REQUIRED: bool = false;
/// `tests.failures_reject`.
pub const DEFAULT_FAILURES_REJECT: bool = true;
/// `tests.paths`: the test files whose tests agent commits may not weaken (Rust files
/// anywhere that hold `#[test]` functions count too).
pub const DEFAULT_TEST_PATHS: &[&str] = &["tests/**", "**/test_*.py", "**/*_test.py"];
/// `tests.weakened`.
pub const DEFAULT_WEAKENED_SEVERITY: Severity = Severity::Reject;
/// `agents.default = "human"`: a commit that matches no agent pattern is a human's.
pub const DEFAULT_UNMATCHED_IS_AGENT: bool = false;
/// `agents.pushers`: no push account makes its commits an agent's.
pub const DEFAULT_AGENT_PUSHERS: &[&str] = &[];
/// `agents.formatting_coauthors`: bots whose `Co-authored-by:` trailer alone does not make a
/// human's commit an agent's (pre-commit-ci's fixes squashed into a human's pull request).
pub const DEFAULT_FORMATTING_COAUTHORS: &[&str] =
    &[r"pre-commit-ci\[bot\] <66853113+pre-commit-ci\[bot\]@users.noreply.github.com>"];
/// `[trailers]`: the human trailer each protected class needs.
pub const DEFAULT_TRAILER_FIXTURES: &str = "Fixture-Lock: human";
pub const DEFAULT_TRAILER_FREEZE: &str = "Freeze-Lease: human";
pub const DEFAULT_TRAILER_PROPERTIES: &str = "Property-Seeds: human";
pub const DEFAULT_TRAILER_LEDGER: &str = "Ledger-Change: human";
pub const DEFAULT_TRAILER_HARNESS: &str = "Test-Harness: human";
pub const DEFAULT_TRAILER_TEST_REMOVAL: &str = "Test-Removal: human";
/// `refs.protected`.
pub const DEFAULT_PROTECTED_REFS: &[&str] = &["refs/heads/*", "refs/tags/*"];
/// `refs.allow_delete`.
pub const DEFAULT_ALLOW_DELETE: bool = true;
/// `artifacts.required`.
pub const DEFAULT_ARTIFACTS_REQUIRED: bool = false;
/// `artifacts.junit`.
pub const DEFAULT_JUNIT_ARTIFACTS: &[&str] = &["junit.xml"];
/// `artifacts.retest_junit`.
pub const DEFAULT_RETEST_JUNIT_ARTIFACTS: &[&str] = &["retest-junit.xml"];
/// `humans.require_signature`.
pub const DEFAULT_REQUIRE_SIGNATURE: bool = false;
/// `baseline.vanished` and `baseline.newly_skipped`.
pub const DEFAULT_BASELINE_SEVERITY: Severity = Severity::Reject;

/// The files that decide how tests run and what they report, wherever they are: pytest's
/// own files (`pytest.ini`, and pytest 9's `pytest.toml`, hidden or not), `conftest.py`
/// plugins, tox and nox sessions, coverage settings, cargo-nextest's profile, Cargo's config
/// (a target `runner` wraps every test binary, `[env]` sets the tests' environment),
/// `setup.py` (its entry points), and the submodules a checkout brings in (a submodule's
/// `conftest.py` is collected like any other).
pub const DEFAULT_HARNESS_PATHS: &[&str] = &[
    "**/conftest.py",
    "**/pytest.ini",
    "**/.pytest.ini",
    "**/pytest.toml",
    "**/.pytest.toml",
    "**/tox.ini",
    "**/noxfile.py",
    "**/.coveragerc",
    "**/.config/nextest.toml",
    "**/.cargo/config.toml",
    "**/.cargo/config",
    // Its entry points can register a pytest plugin, and guard cannot run it to read them.
    "**/setup.py",
    ".gitmodules",
];

/// Shared files whose harness sections only count: Cargo's build profiles and targets, npm's
/// scripts,
/// pytest and coverage options, tox's table, pytest plugins registered by entry point (PEP
/// 621's table, and Poetry's), and `[DEFAULT]`, whose values Python's `configparser`
/// (coverage, setuptools) reads into every section.
pub const DEFAULT_HARNESS_SECTIONS: &[(&str, &[&str])] = &[
    // How Cargo builds the tests (`cargo test` builds the `test` profile on `dev`: a
    // `debug-assertions = false` turns `debug_assert!` off) and which files build as tests.
    (
        "**/Cargo.toml",
        &[
            "profile",
            "lib",
            "bin",
            "test",
            "package.build",
            "package.autotests",
            "package.autobins",
            "package.autolib",
        ],
    ),
    // npm's scripts: `npm test` and `npm run ...` run what they say.
    ("**/package.json", &["scripts"]),
    (
        "**/pyproject.toml",
        &[
            "tool.pytest",
            "tool.coverage",
            "tool.tox",
            "project.entry-points.pytest11",
            "tool.poetry.plugins.pytest11",
        ],
    ),
    (
        "**/setup.cfg",
        &[
            "tool:pytest",
            "coverage:*",
            "options.entry_points",
            "DEFAULT",
        ],
    ),
];

/// Agent identities seen in the wild (DESIGN.md, issue 10), used where a ledger has no
/// `[agents]`; `policy/merge_ledger.toml` lists the same (a test compares them). E-mails and
/// trailer keys only: a display name alone is anyone's to type.
pub const DEFAULT_AGENT_EMAILS: &[&str] = &[
    r"*\[bot\]@users.noreply.github.com",
    // Copilot coding agent; Copilot CLI/SDK; Copilot in VS Code.
    "198982749+Copilot@users.noreply.github.com",
    "223556219+Copilot@users.noreply.github.com",
    "copilot@github.com",
    "cursoragent@cursor.com",
    "noreply@aider.chat",
    "aider@aider.chat",
    "noreply@anthropic.com",
    "codex@openai.com",
    "noreply@openai.com",
    "noreply@aider.dev",
    "openhands@all-hands.dev",
    "amp@ampcode.com",
    "noreply@opencode.ai",
    "agent@replit.com",
    "noreply@continue.dev",
    "noreply@cline.bot",
    "noreply@codeium.com",
    "gemini-cli-agent@google.com",
];
pub const DEFAULT_AGENT_NAMES: &[&str] = &["* (aider)"];
pub const DEFAULT_AGENT_TRAILERS: &[&str] = &[
    "Co-authored-by: *<noreply@anthropic.com>",
    "Co-authored-by: *<codex@openai.com>",
    "Co-authored-by: *<noreply@openai.com>",
    "Co-authored-by: *<223556219+Copilot@users.noreply.github.com>",
    "Co-authored-by: *<copilot@github.com>",
    "Co-authored-by: *<noreply@aider.chat>",
    "Co-authored-by: *<aider@aider.chat>",
    "Co-authored-by: *<cursoragent@cursor.com>",
    "Co-authored-by: *<noreply@aider.dev>",
    "Co-authored-by: *<openhands@all-hands.dev>",
    "Co-authored-by: *<amp@ampcode.com>",
    "Co-authored-by: *<noreply@opencode.ai>",
    "Co-authored-by: *<agent@replit.com>",
    "Co-authored-by: *<noreply@continue.dev>",
    "Co-authored-by: *<noreply@cline.bot>",
    "Co-authored-by: *<noreply@codeium.com>",
    "Co-authored-by: *<gemini-cli-agent@google.com>",
    // Devin's, Jules', Factory's co-author lines, and any other [bot] account's.
    r"Co-authored-by: *\[bot\]@users.noreply.github.com>",
    "Made-with: Cursor*",
    "Agent-Logs-Url: *",
    "Claude-Session: *",
    "Assisted-by: *",
    "Generated-by: *",
    "Replit-Commit-Author: Agent",
    "Replit-Commit-Session-Id: *",
    "Amp-Thread-ID: *",
];
/// aider writes its commit messages with this prefix.
pub const DEFAULT_AGENT_SUBJECTS: &[&str] = &["aider: *"];

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

impl Policy {
    /// True when the policy files it names may be absent (the embedded default: a repository
    /// that has not run `guard init` has no freeze file or lockfile yet).
    pub fn files_optional(&self) -> bool {
        self.source == PolicySource::Embedded
    }

    /// The embedded default policy.
    pub fn embedded() -> Policy {
        Policy::parse(
            Path::new("<embedded ledger>"),
            EMBEDDED_LEDGER,
            PolicySource::Embedded,
        )
        .expect("the embedded ledger is valid (tested)")
    }

    /// Loads the policy for `ws`: `explicit` (relative to the current directory, must
    /// exist), else `qa/merge_ledger.toml` under the root if it exists, else the embedded one.
    pub fn load(ws: &Workspace, explicit: Option<&Path>) -> Result<Policy, InputErrors> {
        // `shown` is what messages and reports call the ledger: as the user named it, or
        // relative to the repository root.
        let (path, shown) = match explicit {
            Some(path) => (path.to_path_buf(), path.to_path_buf()),
            None => {
                let path = ws.root.join(DEFAULT_LEDGER_PATH);
                match std::fs::symlink_metadata(&path) {
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        return Ok(Policy::embedded());
                    }
                    _ => (path, PathBuf::from(DEFAULT_LEDGER_PATH)),
                }
            }
        };
        let bytes = std::fs::read(&path).map_err(|e| {
            InputError::io(&shown, &e)
                .with_hint("pass an existing ledger with --ledger, or run `guard init`")
        })?;
        let text = String::from_utf8(bytes).map_err(|e| {
            InputError::new(
                &shown,
                format!(
                    "ledger is not UTF-8 (byte {})",
                    e.utf8_error().valid_up_to()
                ),
            )
        })?;
        Policy::parse(&shown, &text, PolicySource::File(shown.clone()))
    }

    /// Parses and validates ledger text. `path` is only used in messages. A TOML syntax
    /// error stops there; past it, every table is read and checked, and every problem found
    /// is returned, in file order.
    pub fn parse(path: &Path, text: &str, source: PolicySource) -> Result<Policy, InputErrors> {
        let doc = DeTable::parse(text).map_err(|e| toml_error(path, text, &e))?;
        let mut c = Checker {
            path,
            text,
            problems: Vec::new(),
        };
        let raw = read_tables(doc.into_inner(), &mut c);
        check_version(&raw.version, &mut c);
        let policy = Policy {
            source,
            evaluate: evaluate_mode(&raw.mode, &mut c),
            properties: properties(&raw.properties, &mut c),
            fixtures: fixtures(&raw.fixtures, &mut c),
            freeze: freeze(&raw.freeze, &mut c),
            coverage: coverage(&raw.coverage, &mut c),
            tests: tests(&raw.tests, &mut c),
            agents: agents(&raw.agents, &mut c),
            trailers: trailers(&raw.trailers, &mut c),
            protect: protect(&raw.protect, &mut c),
            refs: refs(&raw.refs, &mut c),
            artifacts: artifacts(&raw.artifacts, &mut c),
            humans: humans(&raw.humans, &mut c),
            harness: harness(&raw.harness, &mut c),
            baseline: baseline(&raw.baseline, &mut c),
            bots: bots(&raw.bots, &mut c),
            levels: Levels::default(),
        };
        let policy = levels(&raw, policy, &mut c);
        c.finish(policy)
    }
}

/// The validation of one ledger: the steps below (one per table) note each problem where it
/// stands and go on. A value found wrong is replaced by a fallback so its step can finish;
/// a policy with any problem noted is never returned.
struct Checker<'a> {
    path: &'a Path,
    text: &'a str,
    problems: Vec<InputError>,
}

impl<'a> Checker<'a> {
    /// An error at `span` of the ledger text.
    fn error(&self, span: Range<usize>, message: String) -> InputError {
        let (l, c) = line_column(self.text.as_bytes(), span.start);
        InputError::new(self.path, message).at(Location::LineColumn(l, c))
    }

    fn note(&mut self, error: InputError) {
        self.problems.push(error);
    }

    /// Notes a problem at `span`.
    fn invalid(&mut self, span: Range<usize>, message: String) {
        let error = self.error(span, message);
        self.note(error);
    }

    /// The value of `result`, or `fallback` once its error is noted.
    fn or<T>(&mut self, result: Result<T, InputError>, fallback: T) -> T {
        result.unwrap_or_else(|e| {
            self.note(e);
            fallback
        })
    }

    /// A top-level value of the ledger read as `T`; `None` once its TOML error is noted.
    fn table<T: Deserialize<'a>>(&mut self, value: Spanned<DeValue<'a>>) -> Option<T> {
        match T::deserialize(ValueDeserializer::from(value)) {
            Ok(table) => Some(table),
            Err(e) => {
                self.note(toml_error(self.path, self.text, &e));
                None
            }
        }
    }

    /// A repository path as git writes tree paths: `a/./b` and `a//b` are written `a/b`;
    /// what cannot be (a backslash, the root itself) is refused where it stands.
    fn rel(&self, value: &Spanned<String>, key: &str) -> Result<String, InputError> {
        let refuse = |why: String| {
            self.error(
                value.span(),
                format!("`{key}` = {:?}: {why}", value.get_ref()),
            )
        };
        check_relative(value.get_ref()).map_err(|e| refuse(e.to_string()))?;
        if value.get_ref().contains('\\') {
            return Err(refuse(
                "write paths with `/`; a backslash is part of a file name in git".into(),
            ));
        }
        let normal = normalize_rel(value.get_ref());
        if normal.is_empty() {
            return Err(refuse(
                "names the repository root; name a file or directory inside it".into(),
            ));
        }
        Ok(normal)
    }

    /// An optional path: `None` when absent, or wrong (noted).
    fn rel_opt(&mut self, value: &Option<Spanned<String>>, key: &str) -> Option<String> {
        let checked = self.rel(value.as_ref()?, key);
        self.or(checked.map(Some), None)
    }

    /// A list of paths, `default` when absent; each wrong entry is noted and left out.
    fn rel_list(
        &mut self,
        values: &Option<Vec<Spanned<String>>>,
        key: &str,
        default: &[&str],
    ) -> Vec<String> {
        match values {
            None => default.iter().map(|s| normalize_rel(s)).collect(),
            Some(values) => values
                .iter()
                .filter_map(|v| {
                    let checked = self.rel(v, key);
                    self.or(checked.map(Some), None)
                })
                .collect(),
        }
    }

    /// `policy` when nothing was noted; else every problem, in file order.
    fn finish(self, policy: Policy) -> Result<Policy, InputErrors> {
        let mut problems = self.problems;
        // Where two are at one place, the order the steps found them in.
        problems.sort_by_key(|e| match e.location {
            Some(Location::LineColumn(l, c)) => (l, c),
            Some(Location::Line(l)) => (l, 0),
            Some(Location::Byte(_)) | None => (u64::MAX, 0),
        });
        match InputErrors::from_vec(problems) {
            None => Ok(policy),
            Some(errors) => Err(errors),
        }
    }
}

/// The keys a ledger may have at its top level, in the order an unknown one's message lists
/// them.
const LEDGER_KEYS: &[&str] = &[
    "version",
    "mode",
    "properties",
    "fixtures",
    "freeze",
    "coverage",
    "tests",
    "agents",
    "trailers",
    "protect",
    "refs",
    "artifacts",
    "humans",
    "harness",
    "baseline",
    "bots",
    "levels",
];

/// The ledger's top-level values, each read on its own so that a mistake in one leaves the
/// others to be checked. A table with a TOML error (a wrong type, an unknown key) is noted
/// and then read as if absent.
fn read_tables<'a>(doc: DeTable<'a>, c: &mut Checker<'a>) -> RawLedger {
    let mut raw = RawLedger::default();
    for (key, value) in doc {
        match key.get_ref().as_ref() {
            "version" => raw.version = c.table(value).flatten(),
            "mode" => raw.mode = c.table(value).flatten(),
            "properties" => raw.properties = c.table(value).unwrap_or_default(),
            "fixtures" => raw.fixtures = c.table(value).unwrap_or_default(),
            "freeze" => raw.freeze = c.table(value).unwrap_or_default(),
            "coverage" => raw.coverage = c.table(value).unwrap_or_default(),
            "tests" => raw.tests = c.table(value).unwrap_or_default(),
            "agents" => raw.agents = c.table(value).unwrap_or_default(),
            "trailers" => raw.trailers = c.table(value).unwrap_or_default(),
            "protect" => raw.protect = c.table(value).unwrap_or_default(),
            "refs" => raw.refs = c.table(value).unwrap_or_default(),
            "artifacts" => raw.artifacts = c.table(value).unwrap_or_default(),
            "humans" => raw.humans = c.table(value).unwrap_or_default(),
            "harness" => raw.harness = c.table(value).unwrap_or_default(),
            "baseline" => raw.baseline = c.table(value).unwrap_or_default(),
            "bots" => raw.bots = c.table(value).unwrap_or_default(),
            "levels" => raw.levels = c.table(value).unwrap_or_default(),
            // Worded as serde words an unknown field (the tables' own unknown keys are).
            other => c.invalid(
                key.span(),
                toml::de::Error::unknown_field(other, LEDGER_KEYS)
                    .message()
                    .to_string(),
            ),
        }
    }
    raw
}

/// `version`: absent, or the one this guard reads.
fn check_version(version: &Option<Spanned<i64>>, c: &mut Checker) {
    if let Some(version) = version
        && *version.get_ref() != LEDGER_VERSION
    {
        c.invalid(
            version.span(),
            format!(
                "unsupported ledger version {}; this guard reads version {LEDGER_VERSION}",
                version.get_ref()
            ),
        );
    }
}

/// `mode`: `"enforce"` (the default) or `"evaluate"`.
fn evaluate_mode(mode: &Option<Spanned<String>>, c: &mut Checker) -> bool {
    match mode.as_ref().map(|m| (m.get_ref().as_str(), m.span())) {
        None | Some(("enforce", _)) => false,
        Some(("evaluate", _)) => true,
        Some((other, span)) => {
            c.invalid(
                span,
                format!("`mode` must be \"enforce\" or \"evaluate\", not {other:?}"),
            );
            false
        }
    }
}

/// `[properties]`.
fn properties(p: &RawProperties, c: &mut Checker) -> PropertiesPolicy {
    let min_lines = match &p.min_lines {
        None => DEFAULT_MIN_LINES,
        Some(v) if MIN_LINES_RANGE.contains(v.get_ref()) => *v.get_ref() as usize,
        Some(v) => {
            c.invalid(
                v.span(),
                format!(
                    "`properties.min_lines` must be {}..={}, not {}",
                    MIN_LINES_RANGE.start(),
                    MIN_LINES_RANGE.end(),
                    v.get_ref()
                ),
            );
            DEFAULT_MIN_LINES
        }
    };
    let file_patterns: Vec<String> = match &p.files {
        None => DEFAULT_PROPERTY_FILES
            .iter()
            .map(|s| s.to_string())
            .collect(),
        Some(list) => list.iter().map(|s| s.get_ref().clone()).collect(),
    };
    let mut globs = GlobSetBuilder::new();
    let mut each_compiles = true;
    for (i, pattern) in file_patterns.iter().enumerate() {
        match Glob::new(pattern) {
            Ok(glob) => {
                globs.add(glob);
            }
            Err(e) => {
                each_compiles = false;
                let span = p.files.as_ref().map(|l| l[i].span()).unwrap_or(0..0);
                c.invalid(
                    span,
                    format!("`properties.files` pattern {pattern:?} is not a valid glob: {e}"),
                );
            }
        }
    }
    // The set is compiled only when each glob did: one bad glob is one problem.
    let files = if each_compiles {
        globs.build().unwrap_or_else(|e| {
            let error = InputError::new(c.path, format!("`properties.files`: {e}"));
            c.note(error);
            GlobSet::empty()
        })
    } else {
        GlobSet::empty()
    };
    PropertiesPolicy {
        paths: c.rel_list(&p.paths, "properties.paths", DEFAULT_PROPERTY_PATHS),
        required: p.required.unwrap_or(DEFAULT_PROPERTIES_REQUIRED),
        seeds: c.rel_opt(&p.seeds, "properties.seeds"),
        min_lines,
        file_patterns,
        files,
    }
}

/// `[fixtures]`.
fn fixtures(f: &RawFixtures, c: &mut Checker) -> FixturesPolicy {
    FixturesPolicy {
        lockfile: c
            .rel_opt(&f.lockfile, "fixtures.lockfile")
            .unwrap_or_else(|| DEFAULT_LOCKFILE.to_string()),
        paths: c.rel_list(&f.paths, "fixtures.paths", DEFAULT_FIXTURE_PATHS),
        allow_unhashed_new: f.allow_unhashed_new.unwrap_or(DEFAULT_ALLOW_UNHASHED_NEW),
    }
}

/// `[freeze]`.
fn freeze(z: &RawFreeze, c: &mut Checker) -> FreezePolicy {
    let max_active_leases = z.max_active_leases.as_ref().and_then(|v| {
        let checked = u32::try_from(*v.get_ref()).map_err(|_| {
            c.error(
                v.span(),
                format!(
                    "`freeze.max_active_leases` must be 0 or more, not {}",
                    v.get_ref()
                ),
            )
        });
        c.or(checked.map(Some), None)
    });
    FreezePolicy {
        file: c
            .rel_opt(&z.file, "freeze.file")
            .unwrap_or_else(|| DEFAULT_FREEZE_FILE.to_string()),
        passing_frozen_is_error: z
            .passing_frozen_is_error
            .unwrap_or(DEFAULT_PASSING_FROZEN_IS_ERROR),
        max_active_leases,
    }
}

/// `[coverage]`.
fn coverage(raw: &RawCoverage, c: &mut Checker) -> CoveragePolicy {
    let min_proven = match &raw.min_proven {
        None => DEFAULT_MIN_PROVEN,
        Some(v) if MIN_PROVEN_RANGE.contains(v.get_ref()) => *v.get_ref(),
        Some(v) => {
            c.invalid(
                v.span(),
                format!(
                    "`coverage.min_proven` must be {}..={}, not {}",
                    MIN_PROVEN_RANGE.start(),
                    MIN_PROVEN_RANGE.end(),
                    v.get_ref()
                ),
            );
            DEFAULT_MIN_PROVEN
        }
    };
    CoveragePolicy {
        min_proven,
        required: raw.required.unwrap_or(DEFAULT_COVERAGE_REQUIRED),
    }
}

/// A list of identity globs (`agents.*`, `refs.protected`), `default` when absent; the first
/// wrong entry of the list is noted.
fn pattern_set(
    c: &mut Checker,
    values: &Option<Vec<Spanned<String>>>,
    key: &str,
    default: &[&str],
) -> PatternSet {
    let texts: Vec<String> = match values {
        None => default.iter().map(|s| s.to_string()).collect(),
        Some(list) => list.iter().map(|v| v.get_ref().clone()).collect(),
    };
    PatternSet::new(&texts).unwrap_or_else(|(i, e)| {
        let span = values
            .as_ref()
            .and_then(|l| l.get(i))
            .map(|v| v.span())
            .unwrap_or(0..0);
        c.invalid(span, format!("`{key}`: {e}"));
        PatternSet {
            patterns: Vec::new(),
            set: CaselessGlobSet::empty(),
        }
    })
}

/// `[agents]`.
fn agents(raw: &RawAgents, c: &mut Checker) -> AgentsPolicy {
    let default_agent = match &raw.default {
        None => DEFAULT_UNMATCHED_IS_AGENT,
        Some(v) => match v.get_ref().as_str() {
            "human" => false,
            "agent" => true,
            other => {
                c.invalid(
                    v.span(),
                    format!("`agents.default` must be \"human\" or \"agent\", not {other:?}"),
                );
                DEFAULT_UNMATCHED_IS_AGENT
            }
        },
    };
    let trailers = match &raw.trailers {
        None => DEFAULT_AGENT_TRAILERS
            .iter()
            .map(|t| trailer_pattern(t).expect("default patterns parse"))
            .collect(),
        Some(list) => list
            .iter()
            .filter_map(|v| match trailer_pattern(v.get_ref()) {
                Ok(pattern) => Some(pattern),
                Err(e) => {
                    c.invalid(v.span(), format!("`agents.trailers`: {e}"));
                    None
                }
            })
            .collect(),
    };
    let trailers = TrailerPatterns::new(trailers).unwrap_or_else(|e| {
        let first = raw.trailers.as_ref().and_then(|l| l.first());
        c.invalid(
            first.map_or(0..0, |v| v.span()),
            format!("`agents.trailers`: {e}"),
        );
        TrailerPatterns::new(Vec::new()).expect("an empty set compiles")
    });
    AgentsPolicy {
        default_agent,
        emails: pattern_set(c, &raw.emails, "agents.emails", DEFAULT_AGENT_EMAILS),
        names: pattern_set(c, &raw.names, "agents.names", DEFAULT_AGENT_NAMES),
        trailers,
        subjects: pattern_set(c, &raw.subjects, "agents.subjects", DEFAULT_AGENT_SUBJECTS),
        pushers: pattern_set(c, &raw.pushers, "agents.pushers", DEFAULT_AGENT_PUSHERS),
        formatting_coauthors: pattern_set(
            c,
            &raw.formatting_coauthors,
            "agents.formatting_coauthors",
            DEFAULT_FORMATTING_COAUTHORS,
        ),
    }
}

/// `[trailers]`.
fn trailers(t: &RawTrailers, c: &mut Checker) -> TrailerPolicy {
    let mut trailer = |value: &Option<Spanned<String>>, key: &str, default: &str| {
        let default = HumanTrailer::parse(default).expect("default trailers parse");
        match value {
            None => default,
            Some(v) => {
                let checked = HumanTrailer::parse(v.get_ref())
                    .map_err(|e| c.error(v.span(), format!("`trailers.{key}`: {e}")));
                c.or(checked, default)
            }
        }
    };
    TrailerPolicy {
        fixtures: trailer(&t.fixtures, "fixtures", DEFAULT_TRAILER_FIXTURES),
        freeze: trailer(&t.freeze, "freeze", DEFAULT_TRAILER_FREEZE),
        properties: trailer(&t.properties, "properties", DEFAULT_TRAILER_PROPERTIES),
        ledger: trailer(&t.ledger, "ledger", DEFAULT_TRAILER_LEDGER),
        harness: trailer(&t.harness, "harness", DEFAULT_TRAILER_HARNESS),
        test_removal: trailer(
            &t.test_removal,
            "test_removal",
            DEFAULT_TRAILER_TEST_REMOVAL,
        ),
    }
}

/// The most `[protect] paths` a ledger may list. Each is a rule that every judged commit's
/// changes are compared against, so thousands make every push slow; globset's own limit used
/// to refuse somewhat more than this, with a less helpful message.
pub const MAX_PROTECT_PATTERNS: usize = 4096;

/// `[protect]`.
fn protect(raw: &RawProtect, c: &mut Checker) -> ProtectPolicy {
    let entries = raw.paths.as_deref().unwrap_or_default();
    if entries.len() > MAX_PROTECT_PATTERNS {
        c.invalid(
            entries[0].span(),
            format!(
                "`protect.paths` has {} patterns, more than guard judges ({MAX_PROTECT_PATTERNS}): each is a rule every judged commit is compared against; use fewer, broader globs",
                entries.len()
            ),
        );
        return ProtectPolicy {
            paths: Vec::new(),
            set: CaselessGlobSet::empty(),
        };
    }
    // Each entry's globs, compiled into the set at once: a glob is parsed once on the way
    // (every push reads the ledger). Only when something is wrong is each one parsed alone,
    // so that every bad entry gets its own error.
    let mut patterns = Vec::new();
    let mut from = Vec::new();
    let mut each_normal = true;
    for (k, p) in entries.iter().enumerate() {
        match normalize_protect_pattern(p.get_ref()) {
            Ok(normal) => {
                for pattern in expand_protect_pattern(&normal) {
                    patterns.push(pattern);
                    from.push(k);
                }
            }
            Err(why) => {
                each_normal = false;
                c.invalid(
                    p.span(),
                    format!("`protect.paths` pattern {:?}: {why}", p.get_ref()),
                );
            }
        }
    }
    let compiled = each_normal.then(|| CaselessGlobSet::new(&patterns, protect_glob_cased));
    let set = match compiled {
        Some(Ok(set)) => set,
        // Each glob compiled alone; together they exceed the engine's size limit.
        Some(Err(SetError::Set(e))) => {
            let first = entries.first().map_or(0..0, |p| p.span());
            c.invalid(
                first,
                format!(
                    "`protect.paths`: its {} patterns do not compile into one set ({e}); use fewer, broader globs",
                    entries.len(),
                ),
            );
            CaselessGlobSet::empty()
        }
        // A glob that is no glob, or an entry that did not normalize: name each bad glob.
        Some(Err(SetError::Glob(..))) | None => {
            let mut named = vec![false; entries.len()];
            for (pattern, &k) in patterns.iter().zip(&from) {
                if named[k] {
                    continue;
                }
                if let Err(e) = protect_glob(pattern) {
                    named[k] = true;
                    let p = &entries[k];
                    c.invalid(
                        p.span(),
                        format!("`protect.paths` pattern {:?}: {e}", p.get_ref()),
                    );
                }
            }
            CaselessGlobSet::empty()
        }
    };
    ProtectPolicy {
        paths: patterns,
        set,
    }
}

/// `[refs]`.
fn refs(r: &RawRefs, c: &mut Checker) -> RefsPolicy {
    RefsPolicy {
        protected: pattern_set(c, &r.protected, "refs.protected", DEFAULT_PROTECTED_REFS),
        allow_delete: r.allow_delete.unwrap_or(DEFAULT_ALLOW_DELETE),
    }
}

/// `[artifacts]`: file names in the artifact directory.
fn artifacts(a: &RawArtifacts, c: &mut Checker) -> ArtifactsPolicy {
    fn name(c: &mut Checker, v: &Spanned<String>, key: &str) -> Option<String> {
        match check_relative(v.get_ref()) {
            Ok(_) => Some(normalize_rel(v.get_ref())),
            Err(e) => {
                c.invalid(
                    v.span(),
                    format!("`artifacts.{key}` = {:?}: {e}", v.get_ref()),
                );
                None
            }
        }
    }
    ArtifactsPolicy {
        required: a.required.unwrap_or(DEFAULT_ARTIFACTS_REQUIRED),
        junit: match &a.junit {
            None => DEFAULT_JUNIT_ARTIFACTS
                .iter()
                .map(|s| s.to_string())
                .collect(),
            Some(list) => list.iter().filter_map(|v| name(c, v, "junit")).collect(),
        },
        coverage: a.coverage.as_ref().and_then(|v| name(c, v, "coverage")),
        collected: a.collected.as_ref().and_then(|v| name(c, v, "collected")),
        retest_junit: match &a.retest_junit {
            None => DEFAULT_RETEST_JUNIT_ARTIFACTS
                .iter()
                .map(|s| s.to_string())
                .collect(),
            Some(list) => list
                .iter()
                .filter_map(|v| name(c, v, "retest_junit"))
                .collect(),
        },
    }
}

/// `[humans]`.
fn humans(h: &RawHumans, c: &mut Checker) -> HumansPolicy {
    HumansPolicy {
        allowed_signers: c.rel_opt(&h.allowed_signers, "humans.allowed_signers"),
        require_signature: h.require_signature.unwrap_or(DEFAULT_REQUIRE_SIGNATURE),
    }
}

/// `[harness]`: path globs like `[protect]`'s, and per file glob the section selectors
/// (dotted table names for `*.toml` files, section-name globs for INI files).
fn harness(raw: &RawHarness, c: &mut Checker) -> HarnessPolicy {
    // Spelled as `[protect]` entries are (`a/./b`, `a//b` normalised; `..`, absolute paths and
    // Windows separators refused): a spelling that matches no tree path protects nothing.
    fn glob(c: &mut Checker, value: &Spanned<String>, key: &str) -> Option<String> {
        let text = value.get_ref();
        let checked = normalize_protect_pattern(text).and_then(|normal| {
            protect_glob(&normal)
                .map(|_| normal)
                .map_err(|e| e.to_string())
        });
        match checked {
            Ok(normal) => Some(normal),
            Err(e) => {
                c.invalid(value.span(), format!("`{key}` glob {text:?}: {e}"));
                None
            }
        }
    }
    let paths = match &raw.paths {
        None => DEFAULT_HARNESS_PATHS
            .iter()
            .flat_map(|p| expand_protect_pattern(p))
            .collect(),
        Some(list) => list
            .iter()
            .filter_map(|value| glob(c, value, "harness.paths"))
            .flat_map(|normal| expand_protect_pattern(&normal))
            .collect(),
    };
    let sections = match &raw.sections {
        None => DEFAULT_HARNESS_SECTIONS
            .iter()
            .map(|(file, selectors)| {
                let selectors: Vec<String> = selectors.iter().map(|s| s.to_string()).collect();
                HarnessSections {
                    file: file.to_string(),
                    scope: Scope::parse(Format::of(file), &selectors)
                        .expect("default harness sections parse"),
                }
            })
            .collect(),
        Some(table) => {
            let mut out = Vec::new();
            for (file, selectors) in table {
                let normal = glob(c, file, "harness.sections");
                let texts: Vec<String> = selectors.iter().map(|s| s.get_ref().clone()).collect();
                let scope = match Scope::parse(Format::of(file.get_ref()), &texts) {
                    Ok(scope) => Some(scope),
                    Err((i, e)) => {
                        let span = selectors.get(i).map_or(0..0, |s| s.span());
                        c.invalid(
                            span,
                            format!("`harness.sections` for {:?}: {e}", file.get_ref()),
                        );
                        None
                    }
                };
                if let (Some(file), Some(scope)) = (normal, scope) {
                    out.push(HarnessSections { file, scope });
                }
            }
            out
        }
    };
    HarnessPolicy { paths, sections }
}

/// `[tests]`.
fn tests(raw: &RawTests, c: &mut Checker) -> TestsPolicy {
    let weakened = match &raw.weakened {
        None => DEFAULT_WEAKENED_SEVERITY,
        Some(v) => severity(c, v, "tests.weakened").unwrap_or(DEFAULT_WEAKENED_SEVERITY),
    };
    let (paths, set) = path_globs(c, &raw.paths, "tests.paths", DEFAULT_TEST_PATHS);
    TestsPolicy {
        failures_reject: raw.failures_reject.unwrap_or(DEFAULT_FAILURES_REJECT),
        paths,
        set,
        weakened,
        python_functions: vec!["test".to_string()],
        python_classes: vec!["Test".to_string()],
        python_files: vec!["test_*.py".to_string(), "*_test.py".to_string()],
    }
}

/// `"reject"`, `"warn"` or `"off"`; `None` once a wrong value is noted.
fn severity(c: &mut Checker, v: &Spanned<String>, key: &str) -> Option<Severity> {
    match v.get_ref().as_str() {
        "reject" => Some(Severity::Reject),
        "warn" => Some(Severity::Warn),
        "off" => Some(Severity::Off),
        other => {
            c.invalid(
                v.span(),
                format!("`{key}` must be \"reject\", \"warn\" or \"off\", not {other:?}"),
            );
            None
        }
    }
}

/// A list of path globs written as `[protect]` entries are (normalised, a directory covering
/// what is under it), `default` when absent, and the set they compile into. Each wrong entry
/// is noted; the set is compiled only when each glob did.
fn path_globs(
    c: &mut Checker,
    values: &Option<Vec<Spanned<String>>>,
    key: &str,
    default: &[&str],
) -> (Vec<String>, CaselessGlobSet) {
    let written: Vec<(String, Range<usize>)> = match values {
        None => default.iter().map(|p| (p.to_string(), 0..0)).collect(),
        Some(list) => list
            .iter()
            .map(|v| (v.get_ref().clone(), v.span()))
            .collect(),
    };
    let mut patterns = Vec::new();
    let mut each_compiles = true;
    for (text, span) in written {
        let checked = normalize_protect_pattern(&text).and_then(|normal| {
            protect_glob(&normal)
                .map(|_| normal)
                .map_err(|e| e.to_string())
        });
        match checked {
            Ok(normal) => {
                for pattern in expand_protect_pattern(&normal) {
                    if protect_glob(&pattern).is_ok() {
                        patterns.push(pattern);
                    }
                }
            }
            Err(e) => {
                each_compiles = false;
                c.invalid(span, format!("`{key}` glob {text:?}: {e}"));
            }
        }
    }
    let set = if each_compiles {
        CaselessGlobSet::new(&patterns, protect_glob_cased).unwrap_or_else(|e| {
            let error = InputError::new(c.path, format!("`{key}`: {}", set_error(e)));
            c.note(error);
            CaselessGlobSet::empty()
        })
    } else {
        CaselessGlobSet::empty()
    };
    (patterns, set)
}

/// globset's reason a checked set did not compile (each glob did alone).
fn set_error(e: SetError) -> globset::Error {
    match e {
        SetError::Glob(_, e) | SetError::Set(e) => e,
    }
}

/// `[baseline]`.
/// `[levels]`: each key a reason code, each value `reject`, `warn` or `off`; a code in
/// `levels::FIXED` only `reject`. The older keys for three codes (`tests.weakened`,
/// `baseline.vanished`, `baseline.newly_skipped`) are the same setting: set in both places,
/// they must agree; set in one, both read it.
fn levels(raw: &RawLedger, mut policy: Policy, c: &mut Checker) -> Policy {
    let mut levels = Levels::default();
    for (key, value) in &raw.levels {
        let Some(code) = levels::code_named(key.get_ref()) else {
            c.invalid(
                key.span(),
                format!(
                    "`levels.{}`: not a reason code guard reports (README, \"Reason codes\", lists them; e.g. `frozen_test_passed`, `weakened_test`)",
                    key.get_ref()
                ),
            );
            continue;
        };
        let Some(level) = severity(c, value, &format!("levels.{}", key.get_ref())) else {
            continue;
        };
        if level != Severity::Reject && levels::FIXED.contains(&code) {
            c.invalid(
                value.span(),
                format!(
                    "`levels.{code}` cannot be lowered: it guards the gate itself (who may change its files, its history, what proves a human); only \"reject\""
                ),
            );
            continue;
        }
        levels.set(code, level);
    }
    let aliases = [
        (
            Code::WeakenedTest,
            raw.tests.weakened.as_ref(),
            &mut policy.tests.weakened,
        ),
        (
            Code::TestVanished,
            raw.baseline.vanished.as_ref(),
            &mut policy.baseline.vanished,
        ),
        (
            Code::TestNewlySkipped,
            raw.baseline.newly_skipped.as_ref(),
            &mut policy.baseline.newly_skipped,
        ),
    ];
    for (code, old_key, old_level) in aliases {
        match (levels.names(code), old_key) {
            (true, Some(old)) if levels.of(code) != *old_level => c.invalid(
                old.span(),
                format!("`[levels] {code}` and this key set one thing two ways, differently: keep `[levels] {code}`"),
            ),
            (true, _) => *old_level = levels.of(code),
            (false, _) => levels.set(code, *old_level),
        }
    }
    policy.levels = levels;
    policy
}

/// `[[bots]]`: each entry's e-mail exact, its paths repository globs, its change a known kind.
fn bots(raw: &[RawBot], c: &mut Checker) -> BotsPolicy {
    let mut allowances = Vec::new();
    for bot in raw {
        let who = match bots::check_who(bot.who.get_ref()) {
            Ok(who) => who,
            Err(why) => {
                c.invalid(
                    bot.who.span(),
                    format!("`bots.who` = {:?}: {why}", bot.who.get_ref()),
                );
                continue;
            }
        };
        let Some(change) = bots::BotChange::parse(bot.change.get_ref()) else {
            c.invalid(
                bot.change.span(),
                format!(
                    "`bots.change` = {:?}: not a kind of change guard judges; one of {}",
                    bot.change.get_ref(),
                    bots::KINDS.join(", ")
                ),
            );
            continue;
        };
        if bot.paths.is_empty() {
            c.invalid(
                bot.who.span(),
                "`bots.paths` is empty: name the protected paths the bot may change".into(),
            );
            continue;
        }
        let mut paths = Vec::new();
        for path in &bot.paths {
            match normalize_protect_pattern(path.get_ref()) {
                Ok(normal) => paths.push(normal),
                Err(why) => c.invalid(
                    path.span(),
                    format!("`bots.paths` pattern {:?}: {why}", path.get_ref()),
                ),
            }
        }
        if paths.len() != bot.paths.len() {
            continue;
        }
        match bots::path_set(&paths) {
            Ok(set) => allowances.push(bots::BotAllowance {
                who,
                paths,
                set,
                change,
            }),
            Err(e) => c.invalid(bot.paths[0].span(), format!("`bots.paths`: {e}")),
        }
    }
    BotsPolicy { allowances }
}

fn baseline(raw: &RawBaseline, c: &mut Checker) -> BaselinePolicy {
    let mut read = |v: &Option<Spanned<String>>, key: &str| match v {
        None => DEFAULT_BASELINE_SEVERITY,
        Some(v) => severity(c, v, &format!("baseline.{key}")).unwrap_or(DEFAULT_BASELINE_SEVERITY),
    };
    let vanished = read(&raw.vanished, "vanished");
    let newly_skipped = read(&raw.newly_skipped, "newly_skipped");
    let entries = raw.ignore.as_deref().unwrap_or_default();
    let mut set = GlobSetBuilder::new();
    let mut ignore = Vec::new();
    let mut each_compiles = true;
    for v in entries {
        match crate::testid::id_glob(v.get_ref()) {
            Ok(glob) => {
                set.add(glob);
                ignore.push(v.get_ref().clone());
            }
            Err(e) => {
                each_compiles = false;
                c.invalid(
                    v.span(),
                    format!("`baseline.ignore` pattern {:?}: {e}", v.get_ref()),
                );
            }
        }
    }
    let ignore_set = if each_compiles {
        set.build().unwrap_or_else(|e| {
            let first = entries.first().map_or(0..0, |p| p.span());
            c.invalid(first, format!("`baseline.ignore`: {e}"));
            GlobSet::empty()
        })
    } else {
        GlobSet::empty()
    };
    BaselinePolicy {
        vanished,
        newly_skipped,
        ignore,
        ignore_set,
    }
}

/// A `[protect]` entry as the tree paths it is matched against are written: `.` components
/// and empty ones (`a//b`) dropped, a trailing `/` kept (it means a directory). Refused: an
/// absolute path, `..`, a backslash that escapes nothing special to globs (a Windows
/// separator, which would match nothing), and an entry that names the root.
pub fn normalize_protect_pattern(raw: &str) -> Result<String, String> {
    let p = raw.trim();
    if p.starts_with('/') {
        return Err("must be relative to the repository root".into());
    }
    let mut chars = p.chars();
    while let Some(c) = chars.next() {
        if c == '\\' && !chars.next().is_some_and(|n| "*?[]{}\\,!-^".contains(n)) {
            return Err("write paths with `/`; `\\` only escapes a glob character".into());
        }
    }
    let parts: Vec<&str> = p
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    if parts.contains(&"..") {
        return Err("must not contain `..`".into());
    }
    if parts.is_empty() {
        return Err("names the repository root; name files or directories inside it".into());
    }
    let mut normal = parts.join("/");
    if p.ends_with('/') {
        normal.push('/');
    }
    Ok(normal)
}

/// What a `[protect]` entry covers: `./` dropped; a directory (`hooks/`, or a plain name
/// without glob characters such as `ci`) covers itself and everything under it.
pub fn expand_protect_pattern(raw: &str) -> Vec<String> {
    let mut p = raw.trim();
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    if let Some(dir) = p.strip_suffix('/') {
        let dir = dir.trim_end_matches('/');
        return vec![dir.to_string(), format!("{dir}/**")];
    }
    if p.contains(['*', '?', '[', '{']) {
        vec![p.to_string()]
    } else {
        vec![p.to_string(), format!("{p}/**")]
    }
}

/// A `[protect]` glob: over repository-relative paths, `*` within one directory, `**`
/// across, case-insensitive (a case variant replaces the file on some checkouts).
pub fn protect_glob(pattern: &str) -> Result<globset::Glob, globset::Error> {
    protect_glob_cased(pattern, true)
}

/// `protect_glob`, case-insensitive or not (for `CaselessGlobSet`).
pub fn protect_glob_cased(
    pattern: &str,
    case_insensitive: bool,
) -> Result<globset::Glob, globset::Error> {
    globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .case_insensitive(case_insensitive)
        .backslash_escape(true)
        .build()
}

/// A TOML parse error as `path:line:col: message`.
pub fn toml_error(path: &Path, text: &str, err: &toml::de::Error) -> InputError {
    let mut e = InputError::new(path, err.message().trim().to_string());
    if let Some(span) = err.span() {
        let (l, c) = line_column(text.as_bytes(), span.start);
        e = e.at(Location::LineColumn(l, c));
    }
    e
}

/// The ledger as TOML gives it; read by `read_tables`, one key at a time.
#[derive(Debug, Default)]
struct RawLedger {
    version: Option<Spanned<i64>>,
    mode: Option<Spanned<String>>,
    properties: RawProperties,
    fixtures: RawFixtures,
    freeze: RawFreeze,
    coverage: RawCoverage,
    tests: RawTests,
    agents: RawAgents,
    trailers: RawTrailers,
    protect: RawProtect,
    refs: RawRefs,
    artifacts: RawArtifacts,
    humans: RawHumans,
    harness: RawHarness,
    baseline: RawBaseline,
    bots: Vec<RawBot>,
    levels: BTreeMap<Spanned<String>, Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBot {
    who: Spanned<String>,
    paths: Vec<Spanned<String>>,
    change: Spanned<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBaseline {
    vanished: Option<Spanned<String>>,
    newly_skipped: Option<Spanned<String>>,
    ignore: Option<Vec<Spanned<String>>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHarness {
    paths: Option<Vec<Spanned<String>>>,
    sections: Option<BTreeMap<Spanned<String>, Vec<Spanned<String>>>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHumans {
    allowed_signers: Option<Spanned<String>>,
    require_signature: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRefs {
    protected: Option<Vec<Spanned<String>>>,
    allow_delete: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawArtifacts {
    required: Option<bool>,
    junit: Option<Vec<Spanned<String>>>,
    coverage: Option<Spanned<String>>,
    collected: Option<Spanned<String>>,
    retest_junit: Option<Vec<Spanned<String>>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAgents {
    default: Option<Spanned<String>>,
    emails: Option<Vec<Spanned<String>>>,
    names: Option<Vec<Spanned<String>>>,
    trailers: Option<Vec<Spanned<String>>>,
    subjects: Option<Vec<Spanned<String>>>,
    pushers: Option<Vec<Spanned<String>>>,
    formatting_coauthors: Option<Vec<Spanned<String>>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTrailers {
    fixtures: Option<Spanned<String>>,
    freeze: Option<Spanned<String>>,
    properties: Option<Spanned<String>>,
    ledger: Option<Spanned<String>>,
    harness: Option<Spanned<String>>,
    test_removal: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProtect {
    paths: Option<Vec<Spanned<String>>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProperties {
    paths: Option<Vec<Spanned<String>>>,
    required: Option<bool>,
    seeds: Option<Spanned<String>>,
    min_lines: Option<Spanned<i64>>,
    files: Option<Vec<Spanned<String>>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFixtures {
    lockfile: Option<Spanned<String>>,
    paths: Option<Vec<Spanned<String>>>,
    allow_unhashed_new: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFreeze {
    file: Option<Spanned<String>>,
    passing_frozen_is_error: Option<bool>,
    max_active_leases: Option<Spanned<i64>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCoverage {
    min_proven: Option<Spanned<f64>>,
    required: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTests {
    failures_reject: Option<bool>,
    paths: Option<Vec<Spanned<String>>>,
    weakened: Option<Spanned<String>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Policy, InputErrors> {
        Policy::parse(
            Path::new("qa/merge_ledger.toml"),
            text,
            PolicySource::File("qa/merge_ledger.toml".into()),
        )
    }

    #[test]
    fn embedded_ledger_is_valid() {
        let p = Policy::embedded();
        assert_eq!(p.properties.paths, vec!["tests/properties"]);
        assert_eq!(p.fixtures.lockfile, "qa/fixtures.lock.json");
        assert_eq!(p.freeze.file, "qa/freeze.toml");
        assert!(p.files_optional());
    }

    #[test]
    fn embedded_ledger_lists_the_built_in_agent_identities() {
        // A repository without [agents] and one that ran `guard init` know the same agents.
        let embedded = Policy::embedded().agents;
        let built_in = parse("version = 1\n").unwrap().agents;
        assert_eq!(embedded.emails.patterns, built_in.emails.patterns);
        assert_eq!(embedded.names.patterns, built_in.names.patterns);
        assert_eq!(embedded.subjects.patterns, built_in.subjects.patterns);
        let texts = |a: &AgentsPolicy| {
            a.trailers
                .patterns
                .iter()
                .map(|t| t.text.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(texts(&embedded), texts(&built_in));
    }

    #[test]
    fn protect_lists_at_most_max_protect_patterns() {
        let ledger = |n: usize| {
            let paths: Vec<String> = (0..n).map(|i| format!("\"ops/f{i}.sh\"")).collect();
            format!(
                "version = 1\n[protect]\npaths = [\n{}\n]\n",
                paths.join(",\n")
            )
        };
        let at_most = parse(&ledger(MAX_PROTECT_PATTERNS)).unwrap();
        assert!(at_most.protect.set.is_match("ops/f4095.sh"));
        assert!(at_most.protect.set.is_match("OPS/F17.SH/x"));
        assert!(!at_most.protect.set.is_match("ops/f4096.sh"));
        let err = format!(
            "{:#}",
            parse(&ledger(MAX_PROTECT_PATTERNS + 1)).unwrap_err()
        );
        assert!(
            err.contains(":4:1: `protect.paths` has 4097 patterns, more than guard judges (4096)"),
            "{err}"
        );
    }

    #[test]
    fn first_article_ledger_works_unchanged() {
        let text = r#"
# qa/merge_ledger.toml
# Human-owned. Agent writes to this file are a score of 0.

[properties]
paths = ["tests/properties/"]
required = true

[fixtures]
lockfile = "qa/fixtures.lock.json"
allow_unhashed_new = false

[freeze]
file = "qa/flake_freeze.txt"
# A frozen name that passes under the patch fails the score.
passing_frozen_is_error = true
"#;
        let p = parse(text).unwrap();
        assert_eq!(p.freeze.file, "qa/flake_freeze.txt");
        assert!(p.freeze.passing_frozen_is_error);
        assert!(!p.fixtures.allow_unhashed_new);
        assert!(!p.files_optional());
    }

    #[test]
    fn unknown_key_names_file_and_line() {
        let err = parse("[properties]\npaths = []\nrequird = true\n").unwrap_err();
        let shown = err.to_string();
        assert!(shown.starts_with("qa/merge_ledger.toml:3:"), "{shown}");
        assert!(shown.contains("requird"), "{shown}");
    }

    #[test]
    fn wrong_type_names_line() {
        let err = parse("[freeze]\nfile = \"x\"\npassing_frozen_is_error = \"yes\"\n").unwrap_err();
        assert!(
            err.to_string().starts_with("qa/merge_ledger.toml:3:"),
            "{err}"
        );
    }

    #[test]
    fn parent_and_absolute_paths_are_refused() {
        let err = parse("[fixtures]\nlockfile = \"../outside.json\"\n").unwrap_err();
        assert!(err.to_string().contains(":2:"), "{err}");
        assert!(err.to_string().contains(".."), "{err}");
        let err = parse("[properties]\npaths = [\"tests/p\", \"/abs\"]\n").unwrap_err();
        assert!(err.to_string().contains("absolute"), "{err}");
    }

    #[test]
    fn out_of_range_values_are_refused() {
        assert!(parse("[coverage]\nmin_proven = 101.0\n").is_err());
        assert!(parse("[freeze]\nmax_active_leases = -1\n").is_err());
        assert!(parse("[properties]\nmin_lines = 0\n").is_err());
        assert!(parse("version = 2\n").is_err());
        assert!(parse("[properties]\nfiles = [\"[\"]\n").is_err());
    }

    #[test]
    fn protect_entries_cover_directories() {
        assert_eq!(expand_protect_pattern("hooks/"), vec!["hooks", "hooks/**"]);
        assert_eq!(
            expand_protect_pattern("./Makefile"),
            vec!["Makefile", "Makefile/**"]
        );
        assert_eq!(
            expand_protect_pattern(".github/workflows/**"),
            vec![".github/workflows/**"]
        );
        let p = parse("[protect]\npaths = [\"ci\", \"./Makefile\", \"hooks/\"]\n").unwrap();
        for path in [
            "ci/pipeline.yml",
            "Makefile",
            "hooks/pre-commit",
            "CI/x.yml",
        ] {
            assert!(p.protect.set.is_match(path), "{path}");
        }
        assert!(!p.protect.set.is_match("src/ci.rs"));
    }

    #[test]
    fn protect_entries_are_normalised_or_refused() {
        for (raw, normal) in [
            ("scripts/./deploy.sh", "scripts/deploy.sh"),
            ("scripts//deploy.sh", "scripts/deploy.sh"),
            ("././/ops/", "ops/"),
            (" hooks ", "hooks"),
            (r"docs/\[draft\]/**", r"docs/\[draft\]/**"),
            ("a.b/..c/*.sh", "a.b/..c/*.sh"),
        ] {
            assert_eq!(
                normalize_protect_pattern(raw).as_deref(),
                Ok(normal),
                "{raw}"
            );
        }
        for raw in [
            "/etc/x",
            "a/../b",
            "..",
            r"scripts\deploy.sh",
            r"scripts\",
            ".",
            "./",
            "//",
            "",
        ] {
            assert!(normalize_protect_pattern(raw).is_err(), "{raw}");
        }
        let p = parse("[protect]\npaths = [\"scripts/./deploy.sh\", \"tools//x/\"]\n").unwrap();
        for path in ["scripts/deploy.sh", "tools/x/run.sh"] {
            assert!(p.protect.set.is_match(path), "{path}");
        }
        let err =
            parse("[protect]\npaths = [\n  \"ci\",\n  'scripts\\deploy.sh',\n]\n").unwrap_err();
        assert!(
            err.to_string().starts_with("qa/merge_ledger.toml:4:3:"),
            "{err}"
        );
    }

    #[test]
    fn ledger_paths_are_normalised_or_refused_with_their_line() {
        let p = parse(
            "[freeze]\nfile = \"qa/./flakes//list.txt\"\n[properties]\nseeds = \"tests//seeds/\"\n",
        )
        .unwrap();
        assert_eq!(p.freeze.file, "qa/flakes/list.txt");
        assert_eq!(p.properties.seeds.as_deref(), Some("tests/seeds"));
        for (text, line) in [
            ("[freeze]\nfile = 'qa\\freeze.toml'\n", 2),
            ("[fixtures]\n\npaths = ['tests/fixtures', '.']\n", 3),
            ("[properties]\nseeds = './'\n", 2),
        ] {
            let err = parse(text).unwrap_err().to_string();
            assert!(
                err.starts_with(&format!("qa/merge_ledger.toml:{line}:")),
                "{text}: {err}"
            );
        }
    }

    #[test]
    fn harness_paths_and_section_files_are_normalised_or_refused() {
        // Spelled like `[protect]` entries: otherwise `ci//run.sh` would protect nothing.
        let p = parse(
            "[harness]\npaths = [\"ci//run.sh\", \"./tools/./t.sh\"]\n[harness.sections]\n\"./cfg//setup.cfg\" = [\"tool:pytest\"]\n",
        )
        .unwrap();
        assert_eq!(
            p.harness.paths,
            ["ci/run.sh", "ci/run.sh/**", "tools/t.sh", "tools/t.sh/**"]
        );
        assert_eq!(p.harness.sections[0].file, "cfg/setup.cfg");
        for (text, line) in [
            ("[harness]\npaths = ['ci\\run.sh']\n", 2),
            ("[harness]\n\npaths = ['a/../b']\n", 3),
            ("[harness.sections]\n'/abs/setup.cfg' = ['x']\n", 2),
        ] {
            let err = parse(text).unwrap_err().to_string();
            assert!(
                err.starts_with(&format!("qa/merge_ledger.toml:{line}:")),
                "{text}: {err}"
            );
        }
    }

    #[test]
    fn test_paths_default_to_what_the_starter_ledger_lists() {
        let (old, starter) = (parse("version = 1\n").unwrap(), Policy::embedded());
        assert_eq!(old.tests.paths, starter.tests.paths);
        assert_eq!(old.tests.weakened, Severity::Reject);
        assert_eq!(starter.tests.weakened, Severity::Reject);
        for (path, test) in [
            ("tests/test_a.py", true),
            ("tests/unit/helpers.py", true),
            ("tests/it.rs", true),
            ("src/pkg/test_codec.py", true),
            ("test_root.py", true),
            ("src/pkg/codec_test.py", true),
            ("src/pkg/codec.py", false),
            ("src/lib.rs", false),
        ] {
            assert_eq!(old.tests.is_test_file(path), test, "{path}");
        }
        // A directory covers what is under it; a bad glob is named with its place.
        let own = parse("[tests]\npaths = [\"checks/\"]\nweakened = \"warn\"\n").unwrap();
        assert_eq!(own.tests.paths, ["checks", "checks/**"]);
        assert!(
            own.tests.is_test_file("checks/verify.py") && !own.tests.is_test_file("tests/t.py")
        );
        assert_eq!(own.tests.weakened, Severity::Warn);
        let err = parse("[tests]\npaths = [\"../x\"]\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("qa/merge_ledger.toml:2:10: `tests.paths` glob \"../x\""),
            "{err}"
        );
    }

    #[test]
    fn harness_defaults_are_what_the_starter_ledger_lists() {
        // A ledger written before `[harness]` existed protects the same harness.
        let (old, starter) = (parse("version = 1\n").unwrap(), Policy::embedded());
        assert_eq!(old.harness.paths, starter.harness.paths);
        let sections = |p: &Policy| -> Vec<(String, Vec<String>)> {
            p.harness
                .sections
                .iter()
                .map(|s| {
                    let selectors = s.scope.selectors();
                    (
                        s.file.clone(),
                        selectors.iter().map(|t| t.to_string()).collect(),
                    )
                })
                .collect()
        };
        assert_eq!(sections(&old), sections(&starter));
        assert!(old.harness.paths.contains(&"**/conftest.py".to_string()));
        assert_eq!(old.trailers.harness.to_string(), "Test-Harness: human");
        // Listing paths replaces the list.
        let own = parse("[harness]\npaths = [\"ci/run-tests.sh\"]\n").unwrap();
        assert_eq!(own.harness.paths, ["ci/run-tests.sh", "ci/run-tests.sh/**"]);
        assert_eq!(sections(&own), sections(&starter));
    }

    /// Each error as `(line, column, message)`.
    fn problems(errors: &InputErrors) -> Vec<(u64, u64, String)> {
        errors
            .iter()
            .map(|e| match e.location {
                Some(Location::LineColumn(l, c)) => (l, c, e.message.clone()),
                other => panic!("no line and column: {other:?} {e}"),
            })
            .collect()
    }

    #[test]
    fn three_mistakes_in_three_tables_are_all_reported_in_file_order() {
        // Written in another order than the tables are checked in; one is a TOML type error
        // (read table by table, it hides nothing else), one an unknown table.
        let text = "[coverage]
min_proven = 101.0

[refs]
allow_delete = \"no\"

[propertes]
min_lines = 8
";
        let err = parse(text).unwrap_err();
        assert_eq!(
            problems(&err),
            [
                (2, 14, "`coverage.min_proven` must be 0..=100, not 101".to_string()),
                (
                    5,
                    16,
                    "invalid type: string \"no\", expected a boolean".to_string()
                ),
                (
                    7,
                    2,
                    "unknown field `propertes`, expected one of `version`, `mode`, `properties`, `fixtures`, `freeze`, `coverage`, `tests`, `agents`, `trailers`, `protect`, `refs`, `artifacts`, `humans`, `harness`, `baseline`, `bots`, `levels`".to_string()
                ),
            ]
        );
        // Each reads as it does alone, one after the other.
        let alone: Vec<String> = [
            "[coverage]\nmin_proven = 101.0\n",
            "\n\n\n[refs]\nallow_delete = \"no\"\n",
            "\n\n\n\n\n\n[propertes]\nmin_lines = 8\n",
        ]
        .iter()
        .map(|text| {
            let err = parse(text).unwrap_err();
            assert!(err.rest().is_empty(), "{err}");
            err.to_string()
        })
        .collect();
        assert_eq!(err.to_string(), alone.join("\nerror: "));
    }

    #[test]
    fn every_protect_glob_that_is_no_glob_is_named() {
        // Two bad globs (the set refuses the first it meets; each must still be named), and
        // a bad glob beside an entry that does not normalize.
        for (paths, bad) in [
            // `paths = [` is 9 columns: the first entry's quote is column 10.
            (r#""a/[x", "ok/", "b/{y""#, vec![("a/[x", 10), ("b/{y", 25)]),
            (r#""/etc", "a/[x""#, vec![("/etc", 10), ("a/[x", 18)]),
        ] {
            let err = parse(&format!("[protect]\npaths = [{paths}]\n")).unwrap_err();
            let got: Vec<(u64, u64)> = problems(&err).iter().map(|p| (p.0, p.1)).collect();
            let want: Vec<(u64, u64)> = bad.iter().map(|&(_, col)| (2, col)).collect();
            assert_eq!(got, want, "{err}");
            for (pattern, _) in bad {
                assert!(
                    err.to_string().contains(&format!("pattern {pattern:?}")),
                    "{err}"
                );
            }
        }
    }

    #[test]
    fn every_step_reports_its_mistakes_beside_the_others() {
        let text = concat!(
            "version = 2\n",
            "[properties]\nmin_lines = 0\nfiles = [\"[\"]\nseeds = \"../seeds\"\n",
            "[fixtures]\nlockfile = \"/abs.json\"\npaths = [\"ok\", \"a\\\\b\"]\n",
            "[freeze]\nmax_active_leases = -1\n",
            "[agents]\ndefault = \"robot\"\nemails = [\"[x\"]\ntrailers = [\"nocolon\"]\n",
            "[trailers]\nfreeze = \"nocolon\"\n",
            "[protect]\npaths = [\"/etc\", \"ok/\", \"a/../b\"]\n",
            "[refs]\nprotected = [\"[y\"]\n",
            "[artifacts]\njunit = [\"../j.xml\"]\n",
            "[humans]\nallowed_signers = \"/signers\"\n",
            "[harness]\npaths = [\"c//d/../e\"]\n",
            "[baseline]\nvanished = \"maybe\"\n",
        );
        let err = parse(text).unwrap_err();
        let lines: Vec<u64> = problems(&err).iter().map(|p| p.0).collect();
        // Line 18 holds two bad `[protect]` entries, each reported.
        assert_eq!(
            lines,
            [
                1, 3, 4, 5, 7, 8, 10, 12, 13, 14, 16, 18, 18, 20, 22, 24, 26, 28
            ],
            "{err}"
        );
        // No more than these: the `[protect]` entry that is fine is not compiled into a set
        // alone (which could fail on its own account and add a problem of its own).
        assert!(problems(&err)[11].1 < problems(&err)[12].1, "{err}");
        assert!(problems(&err)[11].2.contains("\"/etc\""), "{err}");
        assert!(problems(&err)[12].2.contains("\"a/../b\""), "{err}");
    }

    #[test]
    fn a_syntax_error_stops_the_reading() {
        let err = parse("[properties]\nmin_lines = 0\n[fixtures\n").unwrap_err();
        assert_eq!(problems(&err).len(), 1, "{err}");
        assert_eq!(problems(&err)[0].0, 3, "{err}");
    }

    #[test]
    fn malformed_toml_is_an_error_with_position() {
        let err = parse("[properties\npaths = 1").unwrap_err();
        assert!(
            err.to_string().starts_with("qa/merge_ledger.toml:1:"),
            "{err}"
        );
    }
}
