//! The ledger's defaults: what each key a ledger leaves out gets, and the values some keys may
//! take; apart from the readers that fall back on them, so they are listed in one place.

use std::ops::RangeInclusive;

use crate::policy::levels::Severity;

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
