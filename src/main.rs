//! The `guard` binary: parse arguments, run, exit with the contract's code.

use clap::Parser;

fn main() {
    let cli = merge_guard::cli::Cli::parse();
    if matches!(cli.command, merge_guard::cli::Command::Hook(_)) {
        keep_freed_memory();
    }
    std::process::exit(merge_guard::cli::run(cli));
}

/// Has glibc's allocator keep what guard frees for its next allocations rather than hand it
/// back to the kernel and ask again: a walk frees and allocates tens of MiB of trees and
/// blobs. By default glibc maps each buffer from 128 KiB (a tree set, a large blob) afresh
/// and unmaps it when freed, and grows its heaps a little at a time, each a system call and
/// page faults on zeroed pages (BENCHMARKS.md, "Measured choices", M8). Only for the hooks,
/// whose walk is bounded by the push and which exit at once: over a long `guard check` the
/// heaps kept more than they gave back, for no gain in time.
fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets the allocator's parameters; it is called before any thread
    // starts (clap's parse does not start one). A value it refuses leaves that parameter as
    // it was.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TOP_PAD, 32 << 20);
    }
}
