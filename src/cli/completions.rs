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

/// Prints guard(1), or writes it and a page per command into `--out-dir`.
pub fn man(args: &ManArgs) -> anyhow::Result<i32> {
    let cmd = Cli::command();
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
