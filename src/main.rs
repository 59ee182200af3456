//! The `guard` binary: parse arguments, run, exit with the contract's code.

use clap::Parser;

fn main() {
    let cli = merge_guard::cli::Cli::parse();
    std::process::exit(merge_guard::cli::run(cli));
}
