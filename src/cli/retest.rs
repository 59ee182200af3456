//! `guard retest [RANGE] [--junit PATH]... -- COMMAND...`: copies the range's tip into a
//! temporary directory, puts back the base's version of every test and harness file whose
//! version at the tip no human commit wrote (`engine::retest`), runs the test command there
//! and scores the reports it wrote, relative to that copy. The copy is removed afterwards,
//! also when the command fails or is interrupted; the work tree, index and HEAD are never
//! touched.

use std::ffi::OsString;

use anyhow::Context as _;

use crate::cli::Progress;
use crate::cli::args::{ArtifactArgs, RetestArgs};
use crate::cli::print_report;
use crate::cli::run::{check_written, run_command, stamp};
use crate::cli::score::artifacts;
use crate::engine::retest;
use crate::engine::score::{Artifacts, floor};
use crate::git;
use crate::policy::freeze::today_utc;
use crate::report::Report;
use crate::report::finding::{Code, Finding};
use crate::runner::TestRunner;
use crate::source::WorkTree;
use crate::workspace::Workspace;

pub fn run(args: &RetestArgs, progress: &mut Progress) -> anyhow::Result<i32> {
    let repo = git::open()?;
    let plan = retest::plan(&repo, args.range.as_deref(), Some(&args.ledger))?;
    progress.policy = Some(plan.policy.source.clone());
    progress.evaluate = plan.policy.evaluate;

    // Nothing put back: the run would be the range's own, which its ordinary test run
    // scores already; nothing is copied or run.
    if plan.put_back.is_empty() {
        eprintln!(
            "guard: nothing to retest in {}: no agent commit changed a test or harness file that no human commit approved since",
            plan.spec
        );
        let report = Report::judged(
            &plan.policy,
            Vec::new(),
            Vec::new(),
            crate::report::Stats::unknown(today_utc(), None),
        );
        print_report(&report, args.format.into());
        return Ok(report.exit_code());
    }

    announce(&plan);

    let copy = tempfile::Builder::new()
        .prefix("guard-retest-")
        .tempdir()
        .context("cannot make a temporary directory for the copy of the range's tip")?;
    let dir = copy.path();
    plan.materialize(&repo, dir)?;

    let mut artifacts = artifacts_in_copy(&args.artifacts, dir)?;
    progress.floor = Some(floor(&plan.policy, &artifacts));

    let (command, env) = command_in_copy(&args.command, &plan.test_files(), dir);
    let before: Vec<_> = artifacts.junit.iter().map(|p| stamp(p)).collect();
    let example = TestRunner::detect(&WorkTree {
        ws: &Workspace::at(dir),
    });
    // Ctrl-C stops the command (it gets the signal too); guard stays to remove the copy.
    let runner = {
        let _caught = CatchInterrupt::new();
        run_command(&command, example, Some(dir), &env)?
    };
    progress.runner = Some(runner.clone());
    for (path, before) in artifacts.junit.iter().zip(before) {
        check_written(path, before, &runner)?;
    }
    artifacts.runner = Some(runner.clone());

    let evaluation = plan.judge(dir, &artifacts, today_utc())?;
    let mut warnings = evaluation.warnings;
    for (path, why) in &plan.not_put_back {
        warnings.push(Finding::new(Code::OldTestFails, format!("not put back: {why}")).path(path));
    }
    let mut report = Report::judged(
        &plan.policy,
        evaluation.findings,
        warnings,
        evaluation.stats,
    );
    report.runner = Some(runner);
    print_report(&report, args.format.into());
    if let Err(e) = copy.close() {
        eprintln!("warning: guard: cannot remove the copy it ran the tests in: {e}");
    }
    Ok(report.exit_code())
}

/// Says on standard error which files the copy takes from the base, and which it leaves out.
fn announce(plan: &retest::Plan) {
    let put: Vec<String> = plan
        .put_back
        .iter()
        .filter(|p| p.base.is_some())
        .map(|p| p.path.clone())
        .collect();
    let removed: Vec<&str> = plan
        .put_back
        .iter()
        .filter(|p| p.base.is_none() && p.remove_if_new)
        .map(|p| p.path.as_str())
        .collect();
    if !removed.is_empty() {
        eprintln!(
            "guard: removed from the copy, as the base has none and pytest or Python would load them unasked: {}",
            removed.join(", ")
        );
    }
    eprintln!(
        "guard: {} of {} as {} has {}: {}",
        crate::wording::count(put.len(), "file"),
        plan.spec,
        plan.base_short,
        if put.len() == 1 { "it" } else { "them" },
        if put.is_empty() {
            "none".to_string()
        } else {
            put.join(", ")
        }
    );
}

/// The artifacts `args` names, in the copy at `dir` (the command runs there); what the tip
/// brought along at those paths is removed first.
fn artifacts_in_copy(args: &ArtifactArgs, dir: &std::path::Path) -> anyhow::Result<Artifacts> {
    // The reports are the copy's: the command runs there.
    let mut artifacts = artifacts(args, true);
    let in_copy = |p: &std::path::Path| {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            dir.join(p)
        }
    };
    artifacts.junit = artifacts.junit.iter().map(|p| in_copy(p)).collect();
    artifacts.coverage = artifacts.coverage.as_deref().map(in_copy);
    artifacts.collected = artifacts.collected.as_deref().map(in_copy);
    // Evidence the tip brought along (a committed coverage.json) is not this run's: gone
    // before the run, whatever the run writes is read.
    for path in artifacts
        .junit
        .iter()
        .chain(&artifacts.coverage)
        .chain(&artifacts.collected)
    {
        if path.starts_with(dir) && std::fs::symlink_metadata(path).is_ok() {
            std::fs::remove_file(path).with_context(|| {
                format!(
                    "cannot remove {} from the copy before the run",
                    path.display()
                )
            })?;
        }
    }
    Ok(artifacts)
}

/// The command with `{files}` replaced by the put-back test files, and the environment it
/// runs in: Python and pytest held to the copy at `dir`.
fn command_in_copy(
    args: &[OsString],
    files: &[&str],
    dir: &std::path::Path,
) -> (Vec<OsString>, [(&'static str, OsString); 3]) {
    let command: Vec<OsString> = args
        .iter()
        .flat_map(|a| match a.to_str() {
            Some("{files}") => files.iter().map(OsString::from).collect(),
            _ => vec![a.clone()],
        })
        .collect();
    // Python imports the copy's code, not an editable install of the work tree's: its
    // `src` first (the copy's root is the command's directory; on PYTHONPATH it would also
    // run a `sitecustomize.py` there at start).
    let mut python_path = OsString::from(dir.join("src"));
    if let Some(old) = std::env::var_os("PYTHONPATH").filter(|p| !p.is_empty()) {
        python_path.push(":");
        python_path.push(old);
    }
    // pytest looks for its settings and conftest.py files in the directories above the
    // one it runs in: the copy's are the project's, nothing above it counts.
    let mut pytest_opts = OsString::from("--rootdir=");
    pytest_opts.push(dir);
    pytest_opts.push(" --confcutdir=");
    pytest_opts.push(dir);
    if let Some(old) = std::env::var_os("PYTEST_ADDOPTS").filter(|p| !p.is_empty()) {
        pytest_opts.push(" ");
        pytest_opts.push(old);
    }
    let env = [
        ("GUARD_RETEST_FILES", OsString::from(files.join("\n"))),
        ("PYTHONPATH", python_path),
        ("PYTEST_ADDOPTS", pytest_opts),
    ];
    (command, env)
}

/// Catches SIGINT (and SIGTERM) with a handler that does nothing while alive, restoring
/// what was there before: guard outlives the command to remove the copy, and the command,
/// started while the handler is set, gets the signals' default action (a caught signal is
/// reset on exec; an ignored one would stay ignored, and Ctrl-C would stop nothing).
struct CatchInterrupt {
    previous: [libc::sigaction; 2],
}

extern "C" fn do_nothing(_: libc::c_int) {}

const CAUGHT: [libc::c_int; 2] = [libc::SIGINT, libc::SIGTERM];

impl CatchInterrupt {
    fn new() -> CatchInterrupt {
        // SAFETY: sigaction with a handler that touches nothing; restored in `drop`.
        unsafe {
            let mut previous: [libc::sigaction; 2] = std::mem::zeroed();
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = do_nothing as *const () as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            for (i, signal) in CAUGHT.iter().enumerate() {
                libc::sigaction(*signal, &action, &mut previous[i]);
            }
            CatchInterrupt { previous }
        }
    }
}

impl Drop for CatchInterrupt {
    fn drop(&mut self) {
        // SAFETY: puts back the actions `new` found.
        unsafe {
            for (i, signal) in CAUGHT.iter().enumerate() {
                libc::sigaction(*signal, &self.previous[i], std::ptr::null_mut());
            }
        }
    }
}
