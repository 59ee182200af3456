//! The gate's rules, grouped by family, and the only place findings are made. Rules never
//! read files, git, the clock or the environment: the engine gathers what they judge and
//! passes it as arguments; they return findings with their message and help.
//!
//! | family | what it judges |
//! |---|---|
//! | `evidence` | the run's reports: failures, cross-checks, the baseline, proven coverage |
//! | `fixtures` | fixture bytes against the lockfile |
//! | `freeze` | leases: expiry, budget, frozen tests that pass, are absent or rewritten |
//! | `properties` | property tests ran and held; thin files; the seed corpus |
//! | `provenance` | who changed protected paths, with which trailers and signatures |
//! | `commit` | what an agent commit did to the files it changed (one trait, one list) |
//! | `history` | what a range does to the policy as a whole: removed or broken policy files, rewinds, malformed trees |
//! | `push` | a ref update itself: deletions, replace refs, missing CI artifacts |
//! | `lint` | a valid policy that may not mean what was meant |

pub mod commit;
pub mod evidence;
pub mod fixtures;
pub mod freeze;
pub mod history;
pub mod lint;
pub mod properties;
pub mod provenance;
pub mod push;
