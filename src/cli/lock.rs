//! `guard lock`: rebuild the fixture lockfile from the fixture paths, in the lockfile's own
//! form, atomically. `--check` reports drift without writing. A human's command: the
//! lockfile change still needs a `Fixture-Lock: human` commit.

use std::collections::BTreeMap;

use anyhow::Context as _;

use crate::cli::args::LockArgs;
use crate::error::InputError;
use crate::evidence::fixtures::FixtureState;
use crate::evidence::fixtures::list_files;
use crate::exit;
use crate::fsutil::write_atomic;
use crate::policy::ledger::Policy;
use crate::policy::lockfile::{LockFormat, Lockfile};
use crate::source::{Source, WorkTree};
use crate::workspace::Workspace;

pub fn run(ws: &Workspace, args: &LockArgs) -> anyhow::Result<i32> {
    let policy = Policy::load(ws, args.policy.ledger.as_deref())?;
    let rel = &policy.fixtures.lockfile;
    let path = ws
        .resolve(rel)
        .map_err(|e| InputError::new(rel, format!("`fixtures.lockfile`: {e}")))?;
    let old = match std::fs::read(&path) {
        Ok(bytes) => Some(Lockfile::parse(std::path::Path::new(rel), &bytes)?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(InputError::io(rel, &e).into()),
    };

    // The corpus, plus entries outside the fixture paths that still exist (a lockfile may
    // list single fixtures elsewhere).
    let mut rels = list_files(ws, &policy.fixtures.paths)?;
    if let Some(old) = &old {
        rels.extend(old.entries.keys().cloned());
    }
    rels.sort();
    rels.dedup();
    let states = WorkTree { ws }.hash_files(rel, &rels)?;
    let entries: BTreeMap<String, String> = states
        .into_iter()
        .filter_map(|(p, s)| match s {
            FixtureState::Digest(d) => Some((p, d)),
            FixtureState::Missing | FixtureState::NotRegular(_) => None,
        })
        .collect();

    let format = match &old {
        Some(old) => old.format,
        None if rel.ends_with(".json") => LockFormat::Json,
        None => LockFormat::Sha256sum,
    };
    let new = Lockfile { format, entries };
    let empty = BTreeMap::new();
    let before = old.as_ref().map_or(&empty, |o| &o.entries);
    let mut changes = Vec::new();
    for (p, d) in &new.entries {
        match before.get(p) {
            None => changes.push(format!("added    {p}")),
            Some(old_digest) if old_digest != d => changes.push(format!("changed  {p}")),
            Some(_) => {}
        }
    }
    for p in before.keys().filter(|p| !new.entries.contains_key(*p)) {
        changes.push(format!("removed  {p}"));
    }

    if args.check {
        if changes.is_empty() && old.is_some() {
            outln!("{rel}: up to date ({} fixtures)", new.entries.len());
            return Ok(exit::MERGE);
        }
        if old.is_none() {
            outln!("{rel}: does not exist");
        }
        for c in &changes {
            outln!("{c}");
        }
        outln!(
            "{rel}: out of date; a human runs `guard lock` and commits it with `Fixture-Lock: human`"
        );
        return Ok(exit::REJECT);
    }

    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    write_atomic(&path, &new.render()).with_context(|| format!("cannot write {rel}"))?;
    for c in &changes {
        outln!("{c}");
    }
    outln!(
        "wrote {rel}: {} fixtures, {} change{}",
        new.entries.len(),
        changes.len(),
        if changes.len() == 1 { "" } else { "s" }
    );
    Ok(exit::MERGE)
}
