//! `guard run [score options] -- COMMAND...`: runs the test command itself, keeps its exit
//! status, then scores the reports it was told to write (as `guard score` does) and holds them
//! against that status: a run that failed must show a failure. The JUnit reports must be
//! written by this run; `--coverage` and `--collected` usually come from runs of their own (the
//! deselected coverage run, `--collect-only`) and are scored as given.
//!
//! The command's standard output goes to guard's standard error, so that standard output
//! holds guard's report alone (`--format json` stays one object). guard's exit code is its
//! own decision (0, 1, 2), never the command's.

use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::SystemTime;

use anyhow::anyhow;

use crate::cli::Progress;
use crate::cli::args::RunArgs;
use crate::cli::print_report;
use crate::cli::score::artifacts;
use crate::engine::score::{floor, score};
use crate::error::InputError;
use crate::policy::freeze::today_utc;
use crate::policy::ledger::Policy;
use crate::report::Report;
use crate::report::RunnerExit;
use crate::runner::TestRunner;
use crate::source::WorkTree;
use crate::workspace::Workspace;

pub fn run(ws: &Workspace, args: &RunArgs, progress: &mut Progress) -> anyhow::Result<i32> {
    // A ledger that cannot be read stops guard before the tests spend any time.
    let policy = Policy::load(ws, args.policy.ledger.as_deref())?;
    let mut artifacts = artifacts(&args.artifacts, true);
    progress.policy = Some(policy.source.clone());
    progress.evaluate = policy.evaluate;
    progress.floor = Some(floor(&policy, &artifacts));

    let before: Vec<Option<Stamp>> = artifacts.junit.iter().map(|p| stamp(p)).collect();
    let runner = run_command(
        &args.command,
        TestRunner::detect(&WorkTree { ws }),
        None,
        &[],
    )?;
    progress.runner = Some(runner.clone());
    for (path, before) in artifacts.junit.iter().zip(before) {
        check_written(path, before, &runner)?;
    }

    artifacts.runner = Some(runner.clone());
    let evaluation = score(&WorkTree { ws }, &policy, &artifacts, today_utc())?;
    let mut report = Report::judged(
        &policy,
        evaluation.findings,
        evaluation.warnings,
        evaluation.stats,
    );
    report.runner = Some(runner);
    print_report(&report, args.format.into());
    Ok(report.exit_code())
}

/// Runs `command` (program and arguments) to its end, its output on guard's standard error.
/// `example` names the runner the repository seems to use, for the hint.
pub(super) fn run_command(
    command: &[OsString],
    example: TestRunner,
    dir: Option<&Path>,
    env: &[(&str, std::ffi::OsString)],
) -> anyhow::Result<RunnerExit> {
    let shown: Vec<String> = command
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let (program, rest) = command
        .split_first()
        .ok_or_else(|| anyhow!("no test command given after `--`"))?;
    let mut runner = RunnerExit {
        command: shown,
        exit_code: None,
        signal: None,
    };
    let mut cmd = Command::new(program);
    cmd.args(rest)
        .stdout(std::io::stderr())
        .stderr(Stdio::inherit());
    if let Some(dir) = dir {
        cmd.current_dir(dir);
    }
    for (key, value) in env {
        cmd.env(key, value);
    }
    let status = cmd.status().map_err(|e| {
        anyhow!(
            "cannot run `{}`: {e}\n  help: give the test command after `--` as you would \
                 run it in this directory (`guard run --junit {} -- {}`)",
            runner.command_line(),
            example.junit_path(),
            example.run_command()
        )
    })?;
    runner.exit_code = status.code();
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        runner.signal = status.signal();
    }
    Ok(runner)
}

/// What tells a file written since: a new file, or one whose time, size or identity changed.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Stamp {
    modified: Option<SystemTime>,
    len: u64,
    /// Device and inode: a file replaced by another.
    #[cfg(unix)]
    id: (u64, u64),
}

pub(super) fn stamp(path: &Path) -> Option<Stamp> {
    let meta = std::fs::metadata(path).ok()?;
    Some(Stamp {
        modified: meta.modified().ok(),
        len: meta.len(),
        #[cfg(unix)]
        id: {
            use std::os::unix::fs::MetadataExt;
            (meta.dev(), meta.ino())
        },
    })
}

/// A report the run did not write is no evidence of it (one left by an earlier run would pass
/// for this run's).
pub(super) fn check_written(
    path: &Path,
    before: Option<Stamp>,
    runner: &RunnerExit,
) -> Result<(), InputError> {
    const HINT: &str = "guard scores only the JUnit reports the test command writes: check the \
         path it writes to (`--junitxml=PATH` for pytest, `[profile.ci.junit] path` in \
         .config/nextest.toml for nextest)";
    let after = stamp(path);
    let cmd = runner.command_line();
    let how = runner.describe();
    let message = match (&before, &after) {
        (_, None) => format!("the run wrote no report here: `{cmd}` {how}"),
        (Some(before), Some(after)) if before == after => format!(
            "not written by the run: the file is as it was before `{cmd}` started (it {how})"
        ),
        _ => return Ok(()),
    };
    Err(InputError::new(path, message).with_hint(HINT))
}
