//! The command line, as typed arguments (clap). Resolving them into settings is the
//! commands' job.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "guard",
    version,
    about = "Stop AI coding agents from buying a green merge",
    long_about = "guard scores test evidence (JUnit, coverage, collected ids) against a human-owned \
merge ledger: properties hold, fixtures match their hashes, no frozen flaky test passes, \
leases are valid and in budget, proven coverage meets the floor. Any failure rejects.\n\n\
Exit codes: 0 MERGE, 1 REJECT, 2 the input could not be judged (`guard run` too: its exit \
code is guard's decision, never the test command's)."
)]
pub struct Cli {
    /// Run as if guard was started in DIR (like `git -C`).
    #[arg(short = 'C', global = true, value_name = "DIR")]
    pub dir: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Audit the commits of a range for agent edits to protected files, then score the tip.
    Check(CheckArgs),
    /// Score test artifacts against the ledger in the working tree.
    Score(ScoreArgs),
    /// Run the test command, then score the reports it was told to write against its exit
    /// status and the ledger.
    Run(RunArgs),
    /// Run the base's versions of the tests agent commits changed against the range's code.
    ///
    /// guard copies the range's tip into a temporary directory (the work tree, index and HEAD
    /// stay as they are), puts back the base's version of every test file and harness file
    /// whose version at the tip no human commit of the range wrote (Rust unit tests spliced
    /// into the tip's source file), runs COMMAND there and scores its reports as `guard run`
    /// does; a put-back test that fails, errors, is skipped or did not run is
    /// `old_test_fails`. With nothing to put back, nothing runs.
    Retest(RetestArgs),
    /// Print runner arguments that leave active frozen tests out of a run.
    Deselect(DeselectArgs),
    /// Rebuild the fixture lockfile from the fixture paths (a human's command).
    Lock(LockArgs),
    /// Validate the ledger, freeze leases, property files and seed corpus.
    Lint(LintArgs),
    /// Write a starter ledger, freeze file and lockfile into the repository, fitted to its
    /// test layout (pytest's and Cargo's configuration, property tests, fixtures, CI files).
    Init(InitArgs),
    /// Run as a git hook (reads the hook's standard input as git writes it).
    #[command(subcommand)]
    Hook(HookCommand),
    /// Print a shell completion script: `source <(guard completions bash)`.
    Completions(CompletionsArgs),
    /// Print the manual page (roff): `guard man | man -l -`.
    ///
    /// With `--out-dir DIR`, write guard.1 and a page per command into DIR instead.
    Man(ManArgs),
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Print what guard init found and the ledger it would write; write nothing.
    #[arg(long)]
    pub check: bool,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write guard.1 and a page per command (guard-check.1, ...) into DIR instead.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Subcommand)]
pub enum HookCommand {
    /// Server side: judge every ref update of a push; any finding rejects the whole push.
    PreReceive {
        #[command(flatten)]
        report: HookReportArgs,
    },
    /// Client side: the same checks on what `git push` is about to send (advisory).
    ///
    /// Under pre-commit's pre-push stage (`.pre-commit-hooks.yaml`), the pushed ref comes
    /// from pre-commit's `PRE_COMMIT_*` variables instead of standard input.
    PrePush {
        /// The remote's name (or URL when pushing to a URL) [default under pre-commit:
        /// PRE_COMMIT_REMOTE_NAME].
        remote: Option<String>,
        /// The remote's URL.
        url: Option<String>,
        #[command(flatten)]
        report: HookReportArgs,
    },
}

#[derive(Debug, Args)]
pub struct HookReportArgs {
    /// Also write the push report to standard output: `json` is one JSON object on one line,
    /// for a wrapper that logs pushes. The pusher's lines stay on standard error.
    #[arg(long, value_enum, default_value_t = HookFormat::Text, value_name = "FORMAT")]
    pub format: HookFormat,
}

/// What a hook writes on standard output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HookFormat {
    /// Nothing: the report is on standard error, as git shows it to the pusher.
    Text,
    /// The push report as one JSON line.
    Json,
}

#[derive(Debug, Args)]
pub struct PolicyArgs {
    /// The ledger to use [default: qa/merge_ledger.toml, else the embedded default].
    #[arg(long, value_name = "PATH")]
    pub ledger: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ScoreArgs {
    #[command(flatten)]
    pub policy: PolicyArgs,

    #[command(flatten)]
    pub artifacts: ArtifactArgs,

    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Text)]
    pub format: FormatArg,
}

/// Test artifacts to score.
#[derive(Debug, Args)]
pub struct ArtifactArgs {
    /// A JUnit XML report (repeatable).
    #[arg(long, value_name = "PATH")]
    pub junit: Vec<PathBuf>,

    /// A JUnit report of the base revision (repeatable): a test that passed there and is
    /// absent or skipped now is a finding (`[baseline]` in the ledger).
    #[arg(long, value_name = "PATH")]
    pub baseline_junit: Vec<PathBuf>,

    /// A coverage report of the run with frozen tests deselected (coverage.py JSON, LCOV or
    /// Cobertura XML).
    #[arg(long, value_name = "PATH")]
    pub coverage: Option<PathBuf>,

    /// Collected test ids (`pytest --collect-only -q`, `cargo nextest list`, one per line).
    #[arg(long, value_name = "PATH")]
    pub collected: Option<PathBuf>,

    /// The proven-coverage floor in percent [default: the ledger's coverage.min_proven].
    #[arg(long, value_name = "PERCENT", value_parser = parse_percent)]
    pub min_proven: Option<f64>,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub policy: PolicyArgs,

    /// The reports the command writes (`--junit` as `guard score` takes them).
    #[command(flatten)]
    pub artifacts: ArtifactArgs,

    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Text)]
    pub format: FormatArg,

    /// The test command and its arguments, after `--`: `guard run --junit junit.xml --
    /// python3 -m pytest --junitxml=junit.xml`. Its output goes to standard error.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
}

#[derive(Debug, Args)]
pub struct RetestArgs {
    /// The commits whose agent-changed tests are put back: `A..B`, `A...B` or one commit
    /// [default: @{upstream}..HEAD]. The policy comes from the range's base.
    #[arg(value_name = "RANGE")]
    pub range: Option<String>,

    /// The ledger's path inside the base revision.
    #[arg(long, value_name = "PATH", default_value = "qa/merge_ledger.toml")]
    pub ledger: String,

    /// The reports the command writes, relative to the copy it runs in.
    #[command(flatten)]
    pub artifacts: ArtifactArgs,

    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Text)]
    pub format: FormatArg,

    /// The test command, after `--`, run in a copy of the range's tip with the base's tests
    /// put back; an argument `{files}` becomes the put-back test files: `guard retest --junit
    /// junit.xml -- python3 -m pytest --junitxml=junit.xml {files}`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The commits to audit: `A..B`, `A...B` (B's commits since the merge base) or one
    /// commit [default: @{upstream}..HEAD]. The policy comes from the range's base.
    #[arg(value_name = "RANGE")]
    pub range: Option<String>,

    /// The ledger's path inside the base revision.
    #[arg(long, value_name = "PATH", default_value = "qa/merge_ledger.toml")]
    pub ledger: String,

    /// List every judged commit with its author, agent status and signature (text format).
    #[arg(short, long)]
    pub verbose: bool,

    #[command(flatten)]
    pub artifacts: ArtifactArgs,

    /// A JUnit report of `guard retest`'s run (repeatable): each test file an agent commit
    /// of the range changed is held, as the base has it, to these (`old_test_fails`). A
    /// report that is absent while the range put a test back is a finding.
    #[arg(long, value_name = "PATH")]
    pub retest_junit: Vec<PathBuf>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Text)]
    pub format: FormatArg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Runner {
    /// `--deselect=NODEID` per line (usable as a pytest @argsfile).
    Pytest,
    /// `-E` and a nextest filterset that excludes the frozen tests.
    Nextest,
    /// `--exact` and `--skip NAME` pairs for `cargo test -- ...`.
    Cargo,
}

#[derive(Debug, Args)]
pub struct DeselectArgs {
    #[command(flatten)]
    pub policy: PolicyArgs,

    /// Collected test ids; every active lease must name one of them.
    #[arg(long, value_name = "PATH")]
    pub collected: PathBuf,

    /// The runner to print arguments for.
    #[arg(long, value_enum, default_value_t = Runner::Pytest)]
    pub runner: Runner,
}

#[derive(Debug, Args)]
pub struct LockArgs {
    #[command(flatten)]
    pub policy: PolicyArgs,

    /// Report drift without writing; exit 1 when the lockfile is out of date.
    #[arg(long)]
    pub check: bool,
}

#[derive(Debug, Args)]
pub struct LintArgs {
    #[command(flatten)]
    pub policy: PolicyArgs,

    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Text)]
    pub format: FormatArg,
}

fn parse_percent(s: &str) -> Result<f64, String> {
    let value: f64 = s.parse().map_err(|_| format!("{s:?} is not a number"))?;
    if (0.0..=100.0).contains(&value) {
        Ok(value)
    } else {
        Err(format!("{value} is not a percentage (0 to 100)"))
    }
}

/// `--format`: how the report is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatArg {
    Text,
    Json,
    // GitHub Actions annotations, SARIF 2.1.0, GitLab Code Quality (plain comments: a doc
    // comment here would turn `--help` into its long form).
    Github,
    Sarif,
    Gitlab,
}

impl From<FormatArg> for crate::render::Format {
    fn from(arg: FormatArg) -> Self {
        match arg {
            FormatArg::Text => crate::render::Format::Text,
            FormatArg::Json => crate::render::Format::Json,
            FormatArg::Github => crate::render::Format::Github,
            FormatArg::Sarif => crate::render::Format::Sarif,
            FormatArg::Gitlab => crate::render::Format::Gitlab,
        }
    }
}
