//! Reading the policy files the ledger names (the freeze file, the lockfile) from a `Source`:
//! a working tree or a commit's tree. An absent file is allowed only under the embedded
//! ledger; what a file a range broke means is the engine's business (`engine::score`).

use std::path::Path;

use crate::error::InputError;
use crate::policy::freeze::FreezeFile;
use crate::policy::ledger::Policy;
use crate::policy::lockfile::{LockFormat, Lockfile};
use crate::source::Source;

pub fn parse_freeze(policy: &Policy, bytes: &[u8]) -> Result<FreezeFile, InputError> {
    FreezeFile::parse(Path::new(&policy.freeze.file), bytes)
}

pub fn parse_lockfile(policy: &Policy, bytes: &[u8]) -> Result<Lockfile, InputError> {
    Lockfile::parse(Path::new(&policy.fixtures.lockfile), bytes)
}

/// No freeze file under the embedded policy: no leases.
pub fn no_freeze(_: &Policy) -> FreezeFile {
    FreezeFile::empty()
}

/// No lockfile under the embedded policy: an empty one, in the form its name suggests.
pub fn no_lockfile(policy: &Policy) -> Lockfile {
    Lockfile::new(if policy.fixtures.lockfile.ends_with(".json") {
        LockFormat::Json
    } else {
        LockFormat::Sha256sum
    })
}

/// Names the ledger key in an error about the file it names.
pub fn in_ledger(policy: &Policy, key: &str, e: InputError) -> InputError {
    InputError {
        message: format!("{} (`{key}` in {})", e.message, policy.source.describe()),
        ..e
    }
}

/// The error for a policy file the ledger names that `source` does not have.
pub fn not_found(source: &dyn Source, policy: &Policy, rel: &str, key: &str) -> InputError {
    InputError::new(rel, format!("file not found in the {}", source.describe())).with_hint(format!(
        "the ledger ({}) names this file as `{key}`; restore it from the base branch, or fix the ledger (in a new project, `guard init` writes starters)",
        policy.source.describe()
    ))
}

/// Reads a policy file named by the ledger. `Ok(None)` when it does not exist and the policy
/// allows that (the embedded default).
pub fn read_policy_file(
    source: &dyn Source,
    policy: &Policy,
    rel: &str,
    key: &str,
) -> Result<Option<Vec<u8>>, InputError> {
    match source.read(rel).map_err(|e| in_ledger(policy, key, e))? {
        Some(bytes) => Ok(Some(bytes)),
        None if policy.files_optional() => Ok(None),
        None => Err(not_found(source, policy, rel, key)),
    }
}

/// The freeze file named by the policy, or an empty one when the embedded policy is in force
/// and there is none.
pub fn load_freeze(source: &dyn Source, policy: &Policy) -> Result<FreezeFile, InputError> {
    match read_policy_file(source, policy, &policy.freeze.file, "freeze.file")? {
        Some(bytes) => parse_freeze(policy, &bytes),
        None => Ok(no_freeze(policy)),
    }
}

/// The lockfile named by the policy. A missing lockfile under the embedded policy is empty,
/// in the form its file name suggests.
pub fn load_lockfile(source: &dyn Source, policy: &Policy) -> Result<Lockfile, InputError> {
    match read_policy_file(
        source,
        policy,
        &policy.fixtures.lockfile,
        "fixtures.lockfile",
    )? {
        Some(bytes) => parse_lockfile(policy, &bytes),
        None => Ok(no_lockfile(policy)),
    }
}
