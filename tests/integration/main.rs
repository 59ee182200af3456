//! All integration tests build into this one binary (as cargo-nextest does): each runs the
//! real `guard` binary on projects built in temp dirs.

mod action;
mod bad_input;
mod baseline;
mod check;
mod commands;
mod completions;
mod coverage_contexts;
mod docs;
mod evidence;
mod faults;
mod formats;
mod harness;
mod hooks_artifacts;
mod hooks_install;
mod hooks_ledger;
mod hooks_merges;
mod hooks_pre_push;
mod hooks_pre_receive;
mod hooks_protected;
mod hooks_pushers;
mod hooks_refs;
mod hooks_surroundings;
mod layering;
mod pre_commit;
mod real_runners;
mod scenario;
mod score;
mod server_gitolite;
mod server_load;
mod signatures;
mod snapshots;
mod static_build;
mod support;
mod tree_names;
mod weakened;
