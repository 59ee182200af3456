//! merge-guard: a gate that scores test evidence and git history so that an AI coding agent
//! cannot buy a green merge. The binary `guard` is a thin shell over this library.
//!
//! Data flows one way (see ARCHITECTURE.md): `policy` and `evidence` read what is judged,
//! `git` reads history, `rules` turn them into findings, `engine` runs the rules for a
//! command or a push, `report` holds the outcome and `render` prints it. `cli` and `hooks`
//! are the edges that read arguments, standard input and the environment.

pub mod changes;
pub mod cli;
pub mod codes;
pub mod engine;
pub mod error;
pub mod evidence;
pub mod exit;
pub mod fsutil;
pub mod git;
pub mod hooks;
pub mod parallel;
pub mod policy;
pub mod project;
pub mod render;
pub mod report;
pub mod rules;
pub mod runner;
pub mod source;
pub mod testid;
pub mod wording;
pub mod workspace;
