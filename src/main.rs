//! The `guard` binary: parse arguments, run, exit with the contract's code.

use clap::Parser;

fn main() {
    keep_freed_memory();
    let cli = merge_guard::cli::Cli::parse();
    std::process::exit(merge_guard::cli::run(cli));
}

/// Has glibc's allocator keep what guard frees for its next allocations rather than hand it
/// back to the kernel and ask again: a walk frees and allocates tens of MiB of trees and
/// blobs. By default glibc maps each buffer from 128 KiB (a tree set, a large blob) afresh
/// and unmaps it when freed, and grows its heaps a little at a time, each a system call and
/// page faults on zeroed pages: on a push of 1,000 commits that was 13% of the hook's CPU
/// time. Heaps are still trimmed as usual (down to the 32 MiB pad), so a long walk holds no
/// more freed memory than that per heap.
fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets the allocator's parameters; it is called before any thread
    // starts. A value it refuses leaves that parameter as it was.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TOP_PAD, 32 << 20);
    }
}
