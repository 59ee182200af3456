//! merge-guard: a gate that scores test evidence and git history so that an AI coding agent
//! cannot buy a green merge. The binary `guard` is a thin shell over this library.

pub mod error;
pub mod evidence;
pub mod findings;
pub mod fixtures;
pub mod fsutil;
pub mod testid;
pub mod workspace;
