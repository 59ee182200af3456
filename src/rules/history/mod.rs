//! History: what a range does to the policy as a whole, beyond who changed which protected
//! path (`provenance`): removing the ledger in force, leaving a ledger (or allowed-signers
//! file) that no later push could be judged by, and rewinding a ref past protected changes
//! with no commit that carries them. The audit gathers the facts from git; this file words
//! the findings.

pub mod malformed;

use crate::changes::Change;
use crate::report::{Code, Finding};

/// `ledger_removed`: the base (`base_label`) holds the ledger at `path`, the tip does not
/// (`why` says how: missing, or not a regular file).
pub fn ledger_removed(path: &str, why: &str, base_label: &str) -> Finding {
    Finding::new(
        Code::LedgerRemoved,
        format!(
            "{why}, while the base ({base_label}) has it: once merged, pushes would be judged by the embedded default ledger"
        ),
    )
    .path(path)
    .help(format!(
        "restore {path} from the base; a human changes the policy by editing the ledger (with its trailer), not by removing it"
    ))
}

/// `ledger_invalid`: the file at `path` (the ledger, or the allowed-signers file it names)
/// that the range leaves at its tip commit (`short`, `subject`) has `problem`.
pub fn ledger_invalid(path: &str, problem: String, (short, subject): (String, String)) -> Finding {
    Finding::new(Code::LedgerInvalid, problem)
        .path(path)
        .commit(short, subject)
        .help(format!(
            "fix {path} in a new commit (or amend this one) until `guard lint` accepts it; as it is, no later push could be judged"
        ))
}

/// `protected_rewind`: an update that rewinds past `old_short` undoes `change`, and no commit
/// the update brings carries it.
pub fn protected_rewind(old_short: &str, change: &Change) -> Finding {
    Finding::new(
        Code::ProtectedRewind,
        format!(
            "the update rewinds past {old_short} and so {} {} ({}) with no commit that carries the change",
            change.kind.describe(),
            change.path,
            change.class.describe()
        ),
    )
    .path(&change.path)
    .help("undo protected changes with a revert commit (it needs its human trailer), not a force push")
}

/// A `protected_rewind` of a ref made again after the audit log saw it deleted at
/// `deleted_short`: the deletion and the re-creation together rewind it.
pub fn recreated_rewind(mut rewind: Finding, deleted_short: &str) -> Finding {
    rewind.message = format!(
        "re-created after it was deleted at {deleted_short} (guard.auditLog): {}",
        rewind.message
    );
    rewind.help = Some(format!(
        "make the ref again at {deleted_short} (or a commit after it), and undo protected changes with a revert commit (it needs its human trailer)"
    ));
    rewind
}

/// A policy file (`lockfile_missing`, `lockfile_invalid`, `freeze_file_missing`,
/// `freeze_file_invalid`) that the range broke at `path`, which the ledger names as `key`:
/// `why` says how and what follows. `base_label` names the base that holds it intact; with no
/// base the range made everything.
pub fn policy_file_broken(
    code: Code,
    why: &str,
    path: &str,
    key: &str,
    base_label: Option<&str>,
) -> Finding {
    let help = match base_label {
        Some(base) => format!(
            "restore {path} as the base ({base}) has it; a human who means to move or drop it changes the ledger's `{key}` first"
        ),
        None => format!(
            "restore {path}; a human who means to drop it changes the ledger's `{key}` first"
        ),
    };
    Finding::new(code, why).path(path).help(help)
}
