//! The history part of a report: the judged range, the commits that matter and what they
//! changed in the policy files.

use serde::Serialize;

use crate::changes::Change;
use crate::policy::diff::PolicyChange;
use crate::policy::signers::SignatureStatus;

/// One judged commit, for reports.
#[derive(Debug, Clone, Serialize)]
pub struct CommitSummary {
    pub id: String,
    pub short: String,
    pub subject: String,
    pub author: String,
    /// Why the commit counts as an agent's; absent for a human's.
    pub agent: Option<String>,
    /// Who signed it, when the policy asks for signatures or names allowed signers.
    pub signature: Option<SignatureStatus>,
    pub protected_changes: Vec<Change>,
}

/// What one commit changed in the freeze file or lockfile.
#[derive(Debug, Clone, Serialize)]
pub struct FileChanges {
    pub commit: String,
    pub path: String,
    pub changes: Vec<PolicyChange>,
    /// A unified-diff excerpt (text reports only).
    #[serde(skip)]
    pub excerpt: Vec<String>,
}

/// The history part of a report.
#[derive(Debug, Clone, Serialize)]
pub struct History {
    pub range: String,
    pub base: Option<String>,
    pub tip: String,
    /// How many commits the range brings (all were judged).
    #[serde(skip)]
    pub judged: usize,
    /// The judged commits, oldest first: all of them or those that change protected paths
    /// (`CheckOptions::describe`).
    pub commits: Vec<CommitSummary>,
    pub policy_changes: Vec<FileChanges>,
}

impl History {
    /// `<short id> <who signed>` per judged commit whose signature was checked, for the
    /// pusher.
    pub fn signer_lines(&self) -> Vec<String> {
        self.commits
            .iter()
            .filter_map(|c| {
                c.signature
                    .as_ref()
                    .map(|s| format!("{} {}", c.short, s.describe()))
            })
            .collect()
    }
}
