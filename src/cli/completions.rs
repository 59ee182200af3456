//! `guard completions SHELL` and `guard man`: shell completions and manual pages, generated
//! from the clap definition in `args`, so they never drift from the command line.

use anyhow::Context as _;
use clap::CommandFactory as _;

use crate::cli::Cli;
use crate::cli::args::{CompletionsArgs, ManArgs};
use crate::exit;

/// Prints the completion script for the shell.
pub fn completions(args: &CompletionsArgs) -> anyhow::Result<i32> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "guard", &mut script);
    crate::cli::emit(&String::from_utf8_lossy(&script));
    Ok(exit::MERGE)
}

/// The command line as the manual pages describe it: no `help` subcommand (no page is
/// written for it, so guard(1) must not list one), and each synopsis as clap's usage line
/// (`guard check [OPTIONS] [RANGE]`): clap_mangen's own synopsis drops option values
/// (`guard [-C ]`), which the OPTIONS section names.
fn man_command() -> clap::Command {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    with_usage_synopsis(cmd)
}

fn with_usage_synopsis(mut cmd: clap::Command) -> clap::Command {
    let usage = cmd.render_usage().to_string();
    let usage = usage
        .strip_prefix("Usage: ")
        .unwrap_or(&usage)
        .trim()
        .to_string();
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for name in names {
        cmd = cmd.mut_subcommand(name, with_usage_synopsis);
    }
    cmd.override_usage(usage)
}

/// Prints guard(1), or writes it and a page per command into `--out-dir`.
pub fn man(args: &ManArgs) -> anyhow::Result<i32> {
    let cmd = man_command();
    match &args.out_dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            clap_mangen::generate_to(cmd, dir)
                .with_context(|| format!("cannot write the manual pages into {}", dir.display()))?;
        }
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(cmd)
                .render(&mut page)
                .context("cannot render the manual page")?;
            crate::cli::emit(&String::from_utf8_lossy(&page));
        }
    }
    Ok(exit::MERGE)
}
