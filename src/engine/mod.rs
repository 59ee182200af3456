//! Running the rules: `score` over a run's artifacts, `audit` over the commits of a range.
//! The engine gathers policy, evidence and git facts, hands them to `rules`, and returns a
//! report; it prints nothing.

pub mod adoption;
mod ahead;
pub mod audit;
mod bots;
mod commit_trees;
mod context;
pub mod lint;
mod merges;
pub mod ref_update;
pub mod retest;
pub mod score;
mod tip_tests;
mod walk;
pub mod weakened;
