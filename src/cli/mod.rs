//! One module per subcommand. Each resolves its arguments into settings, calls the engine,
//! prints, and returns an exit code; `run` turns errors into exit code 2.

/// `print!` that survives a reader going away (`guard score | head`): see `emit`.
macro_rules! out {
    ($($arg:tt)*) => { $crate::cli::emit(&format!($($arg)*)) };
}

/// `println!` that survives a reader going away: see `emit`.
macro_rules! outln {
    ($($arg:tt)*) => { $crate::cli::emit(&format!("{}\n", format_args!($($arg)*))) };
}

pub mod args;
use crate::error::{ErrorKind, ErrorReport};
use crate::policy::freeze::today_utc;
use crate::render::{Format, render};
use crate::report::Stats;
use crate::report::{Kind, Report};
use crate::workspace::Workspace;
pub use args::{Cli, Command, HookCommand};

mod check;
mod completions;
mod deselect;
mod init;
mod lint;
mod lock;
mod retest;
mod run;
mod score;

/// Writes to standard output. A reader that closed the pipe early is not an error (the exit
/// code still carries the decision); `print!` would panic there.
pub fn emit(text: &str) {
    use std::io::Write as _;
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        eprintln!("error: cannot write to standard output: {e}");
    }
}

/// Prints `report` in `format` on standard output and, in a GitHub Actions job
/// (`GITHUB_STEP_SUMMARY` set), appends its Markdown summary to the job's summary, whatever
/// the format.
pub fn print_report(report: &Report, format: Format) {
    emit(&render(report, format));
    append_step_summary(report);
}

/// Appends the Markdown summary of `report` to the file `GITHUB_STEP_SUMMARY` names. A
/// summary that cannot be written is said on stderr; it changes neither the report nor the
/// exit code (the annotations and the exit code carry the decision).
fn append_step_summary(report: &Report) {
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) else {
        return;
    };
    let summary = crate::render::markdown::summary(report);
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| std::io::Write::write_all(&mut file, summary.as_bytes()));
    if let Err(e) = written {
        eprintln!(
            "warning: cannot append the summary to GITHUB_STEP_SUMMARY ({}): {e}",
            std::path::Path::new(&path).display()
        );
    }
}

/// What a command learned before it failed: the JSON object it still prints shows it.
#[derive(Debug, Default)]
pub struct Progress {
    /// Where the policy came from, once the ledger was read.
    pub policy: Option<crate::policy::ledger::PolicySource>,
    /// The proven-coverage floor, once `--min-proven` or the ledger gave it.
    pub floor: Option<f64>,
    /// How the test command of `run` ended, once it did.
    pub runner: Option<crate::report::RunnerExit>,
    /// The ledger asks for evaluate mode: input that cannot be judged rejects nothing either.
    pub evaluate: bool,
}

/// Runs a parsed command line and returns the process exit code. An error is input that
/// could not be judged (exit 2): its message goes to stderr, and a command asked for JSON
/// still prints one object on stdout, with no decision and the error in it.
pub fn run(cli: Cli) -> i32 {
    // SAFETY: no repository is open yet, and guard runs on this one thread so far.
    unsafe {
        crate::git::bound_libgit2_memory();
    }
    // `--min-proven` is the floor before any ledger is read.
    let (output, floor) = match &cli.command {
        Command::Score(a) => (Some((Kind::Gate, a.format)), a.artifacts.min_proven),
        Command::Check(a) => (Some((Kind::Gate, a.format)), a.artifacts.min_proven),
        Command::Run(a) => (Some((Kind::Gate, a.format)), a.artifacts.min_proven),
        Command::Retest(a) => (Some((Kind::Gate, a.format)), a.artifacts.min_proven),
        Command::Lint(a) => (Some((Kind::Lint, a.format)), None),
        _ => (None, None),
    };
    let mut progress = Progress {
        policy: None,
        floor,
        runner: None,
        evaluate: false,
    };
    match dispatch(cli, &mut progress) {
        Ok(code) => code,
        Err(err) => {
            let err = crate::git::mark_store_failure(err);
            let kind = ErrorKind::of(&err);
            eprintln!("{}: {err:#}", kind.label());
            let error = ErrorReport::from_error(&err);
            if let Some((report_kind, format)) = output {
                let mut report = Report::cannot_judge(
                    report_kind,
                    progress.policy.take(),
                    Stats::unknown(today_utc(), progress.floor),
                    error,
                );
                report.runner = progress.runner.take();
                report.enforced = !(report_kind == Kind::Gate && progress.evaluate);
                // Every format prints its report, the text one ending in `decision: none,
                // cannot judge` (a script reading stdout sees why nothing was decided).
                print_report(&report, format.into());
                // Evaluate mode rejects nothing, input that cannot be judged included.
                if !report.enforced {
                    return crate::exit::MERGE;
                }
            }
            kind.exit_code()
        }
    }
}

fn dispatch(cli: Cli, progress: &mut Progress) -> anyhow::Result<i32> {
    if let Some(dir) = &cli.dir {
        std::env::set_current_dir(dir)
            .map_err(|e| anyhow::anyhow!("cannot change to directory {}: {e}", dir.display()))?;
    }
    // `check` reads git only (it works in a bare repository); the rest work in a workspace.
    let ws = || -> anyhow::Result<Workspace> {
        let cwd = std::env::current_dir()
            .map_err(|e| anyhow::anyhow!("cannot read the current directory: {e}"))?;
        let ws = Workspace::discover(&cwd)?;
        if ws.in_git {
            crate::git::refuse_unsafe_owner(&ws.root)?;
        }
        Ok(ws)
    };
    match cli.command {
        Command::Check(args) => check::run(&args),
        Command::Score(args) => score::run(&ws()?, &args, progress),
        Command::Run(args) => run::run(&ws()?, &args, progress),
        Command::Retest(args) => retest::run(&args, progress),
        Command::Deselect(args) => deselect::run(&ws()?, &args),
        Command::Lock(args) => lock::run(&ws()?, &args),
        Command::Lint(args) => lint::run(&ws()?, &args, progress),
        Command::Init(args) => init::run(&ws()?, args.check),
        Command::Hook(HookCommand::PreReceive { report }) => Ok(crate::hooks::pre_receive::run(
            &mut std::io::stdin().lock(),
            today_utc(),
            report.format == args::HookFormat::Json,
        )),
        Command::Hook(HookCommand::PrePush {
            remote,
            url: _,
            report,
        }) => Ok(crate::hooks::pre_push::run(
            remote.as_deref(),
            &mut std::io::stdin().lock(),
            today_utc(),
            report.format == args::HookFormat::Json,
        )),
        Command::Completions(args) => completions::completions(&args),
        Command::Man(args) => completions::man(&args),
    }
}
