//! merge-guard: a gate that scores test evidence and git history so that an AI coding agent
//! cannot buy a green merge. The binary `guard` is a thin shell over this library.

pub mod agents;
pub mod check;
pub mod cli;
pub mod commands;
pub mod distinct_tests;
pub mod error;
pub mod evidence;
pub mod exit;
pub mod findings;
pub mod fixtures;
pub mod freeze;
pub mod fsutil;
pub mod git;
pub mod harness;
pub mod hooks;
pub mod ledger;
pub mod policy_diff;
pub mod report;
pub mod rules;
pub mod runner;
pub mod score;
pub mod signers;
pub mod source;
pub mod testid;
pub mod workspace;
