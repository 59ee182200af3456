//! Per-commit rules: each judges what one agent commit did to the files it changed, through
//! one trait, and is listed once, in [`RULES`]. The walk over a range (`engine::weakened`'s
//! judge, which already reads each agent commit's changed files) reads the files some rule
//! [`CommitRule::reads`], hands them over with their text before and after, and gathers the
//! findings. A new rule is a file here, a line in `RULES` and a code in `codes.rs`.

mod coverage_excluded;

use crate::report::finding::{Code, Finding};

/// One changed file of an agent commit: its text in each parent (`None` where absent or not
/// text) and in the commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedText {
    pub path: String,
    pub old: Vec<Option<String>>,
    pub new: Option<String>,
}

/// What a rule sees of an agent commit.
#[derive(Debug, Clone, Copy)]
pub struct AgentCommit<'a> {
    pub short: &'a str,
    pub subject: &'a str,
    /// Why the commit counts as an agent's.
    pub agent: &'a str,
    /// The files it changed that some rule reads, sorted by path.
    pub files: &'a [ChangedText],
    /// The range's base, for "drop or rewrite the commit" (`git rebase -i BASE`) advice.
    pub base: &'a str,
}

/// A rule over one agent commit's changed files.
pub trait CommitRule: Sync {
    /// The code of its findings (`[levels]` may lower it; `off` skips the rule).
    fn code(&self) -> Code;
    /// Whether it reads the file at `path` (the walk reads only what some rule reads).
    fn reads(&self, path: &str) -> bool;
    /// Whether the commit's `new` text of a file it reads can hold a finding: when no rule's
    /// can, the file's older versions are not read at all.
    fn may_find_in(&self, new: &str) -> bool {
        let _ = new;
        true
    }
    /// Its findings for `commit`.
    fn judge(&self, commit: &AgentCommit) -> Vec<Finding>;
}

/// Every per-commit rule, in the order their findings are listed.
pub static RULES: &[&dyn CommitRule] = &[&coverage_excluded::CoverageExcluded];
