//! All integration tests build into this one binary (as cargo-nextest does): each runs the
//! real `guard` binary on projects built in temp dirs.

mod action;
mod bad_input;
mod baseline;
mod check;
mod commands;
mod completions;
mod evidence;
mod harness;
mod hooks;
mod pre_commit;
mod real_runners;
mod scenario;
mod score;
mod signatures;
mod snapshots;
mod static_build;
mod support;
mod tree_names;
