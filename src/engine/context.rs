//! What judging a range needs besides its commits: the policy in force at its base (the
//! ledger there, widened by what pytest and the CI files at the same revision say), the
//! allowed signers, and who counts as an agent. Shared by `audit`, `retest` and `weakened`.

use std::path::Path;

use anyhow::Context as _;

use crate::error::InputError;
use crate::git::commit::{Commit, Signature};
use crate::git::tree_source::GitTree;
use crate::git::{self, ObjectId, Repository};
use crate::policy::ledger::{Policy, PolicySource};
use crate::policy::signers::{AllowedSigners, SignatureStatus};
use crate::source::Source;

/// A range's base: its short id and its tree.
pub(super) fn base_of(
    repo: &Repository,
    base: Option<ObjectId>,
) -> anyhow::Result<(Option<String>, Option<GitTree<'_>>)> {
    let Some(b) = base else {
        return Ok((None, None));
    };
    let short = git::short_id(repo, b);
    let tree = GitTree::new(repo, b, format!("commit {short}"))?;
    Ok((Some(short), Some(tree)))
}

/// The allowed signers in force: the server's file, else the one the policy names in the
/// base revision (so a push cannot bring its own key). `None` when signatures play no part.
pub(super) fn load_signers(
    base: Option<&GitTree>,
    policy: &Policy,
    server_file: Option<&Path>,
    needs_proof: bool,
) -> anyhow::Result<Option<AllowedSigners>> {
    let (text, shown) = if let Some(path) = server_file {
        let text = std::fs::read_to_string(path).map_err(|e| {
            InputError::io(path, &e).with_hint("fix the server's git config guard.allowedSigners")
        })?;
        (text, path.display().to_string())
    } else if let Some(rel) = &policy.humans.allowed_signers {
        let Some(base) = base else {
            // No base revision (a first push): nothing is trusted yet.
            return Ok(Some(AllowedSigners::default()));
        };
        let shown = format!("{rel} in {}", base.describe());
        let bytes = base.read(rel)?.ok_or_else(|| {
            InputError::new(
                &shown,
                "the allowed-signers file the ledger names does not exist",
            )
            .with_hint(
                "a human adds it (with `Ledger-Change: human`) before commits are judged by it",
            )
        })?;
        (String::from_utf8_lossy(&bytes).into_owned(), shown)
    } else if needs_proof {
        return Ok(Some(AllowedSigners::default()));
    } else {
        return Ok(None);
    };
    let signers = AllowedSigners::parse(&text).map_err(|(line, e)| {
        InputError::new(&shown, e.to_string()).at(crate::error::Location::Line(line))
    })?;
    Ok(Some(signers))
}

/// What `commit`'s signature proves, checked at its committer date (as git does) and, when
/// given, at `also_at` (the time of a push: a retired key signs nothing new, whatever date the
/// commit claims).
pub(super) fn commit_signature(
    commit: &Commit,
    signers: &AllowedSigners,
    also_at: Option<jiff::Timestamp>,
) -> SignatureStatus {
    match commit.signature() {
        Signature::Unsigned => SignatureStatus::Unsigned,
        Signature::Unreadable(reason) => SignatureStatus::Bad { reason },
        Signature::Signed { armored, payload } => {
            let times: Vec<jiff::Timestamp> = std::iter::once(commit.committer_time())
                .chain(also_at)
                .collect();
            signers.verify_at(&armored, &payload, &commit.committer_email(), &times)
        }
    }
}

/// The policy in force: the ledger in the base revision, else the embedded default.
pub(super) fn load_policy(
    base: Option<&GitTree>,
    ledger_path: &str,
    base_short: Option<&str>,
) -> anyhow::Result<Policy> {
    let Some(base) = base else {
        return Ok(Policy::embedded());
    };
    let shown = format!("{ledger_path} at {}", base_short.unwrap_or("base"));
    let mut policy = match base.read(ledger_path)? {
        None => Policy::embedded(),
        Some(bytes) => {
            let text = String::from_utf8(bytes)
                .map_err(|_| InputError::new(&shown, "ledger is not UTF-8"))?;
            let source = PolicySource::Revision {
                path: ledger_path.to_string(),
                commit: base_short.unwrap_or("base").to_string(),
            };
            Policy::parse(Path::new(&shown), &text, source)
                .context("the policy in force could not be read")?
        }
    };
    // What pytest collects at the same revision is a test file too (pytest's own
    // repository collects testing/python/*.py whatever the ledger's globs say). Only a
    // settings file widens the set; one that does not parse adds nothing (it is a harness
    // file, judged as such).
    // The task runners and scripts the CI files at the same revision run (a Makefile's
    // `test` target) decide how the tests run: harness.
    policy
        .harness
        .add_files(&crate::project::ci::task_runner_files(base));
    if let Ok(pytest) = crate::project::PytestConfig::read(base)
        && pytest.file.is_some()
    {
        policy.tests.add_paths(&pytest.test_globs());
        // pytest still collects unittest's `test*` methods whatever python_functions
        // says, and reading more functions only widens the check.
        let mut names = pytest.python_functions;
        if !names.iter().any(|n| n == "test") {
            names.push("test".to_string());
        }
        policy.tests.python_functions = names;
        policy.tests.python_classes = pytest.python_classes;
        policy.tests.python_files = pytest.python_files;
    }
    Ok(policy)
}

/// What deciding whether a commit is an agent's needs.
pub(super) struct WhoContext<'a> {
    pub(super) policy: &'a Policy,
    pub(super) needs_proof: bool,
    pub(super) signers: Option<&'a AllowedSigners>,
    pub(super) pusher: Option<&'a str>,
    pub(super) signatures_valid_at: Option<jiff::Timestamp>,
}

impl WhoContext<'_> {
    /// Why `commit` counts as an agent's (`None`: a human's), as `judge_commit` decides it.
    pub(super) fn agent(&self, commit: &Commit) -> Option<String> {
        let who = commit.identity(self.pusher);
        if let Some(why) = self.policy.agents.matched_agent(&who) {
            return Some(why);
        }
        let verified = self
            .signers
            .is_some_and(|s| commit_signature(commit, s, self.signatures_valid_at).is_verified());
        (self.needs_proof && !verified).then(|| "not proven human".to_string())
    }
}
