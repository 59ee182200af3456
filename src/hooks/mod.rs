//! The git hook protocols: `pre-receive` on a server and `pre-push` on a developer's
//! machine. Owns reading hook input exactly as git writes it, the server's settings, the
//! pusher's identity, break-glass, and hook messages; the judging is `check`'s.

pub mod audit_log;
pub mod pre_commit;
pub mod pre_push;
pub mod pre_receive;
pub mod push_lines;
pub mod server;

/// The artifacts the ledger's `[artifacts]` names that exist in `dir` (the server's artifact
/// directory, or a clone's work tree). Nothing there is a report not yet published; something
/// there that is not a readable file (`dir` itself a file, a dangling symlink, a report that
/// is a directory or a FIFO) is an error: the evidence is there and cannot be read, which
/// must not pass for "no evidence" (fail closed).
pub fn artifacts_in(
    dir: &std::path::Path,
    names: &crate::policy::ledger::ArtifactsPolicy,
) -> anyhow::Result<crate::engine::score::Artifacts> {
    if what_is_there(dir)?.is_some_and(|m| !m.is_dir()) {
        anyhow::bail!(
            "the artifact directory {} is not a directory; a server admin checks guard.artifacts and what CI wrote there",
            dir.display()
        );
    }
    let existing = |name: &str| -> anyhow::Result<Option<std::path::PathBuf>> {
        let p = dir.join(name);
        match what_is_there(&p)? {
            None => Ok(None),
            Some(m) if m.is_file() => Ok(Some(p)),
            Some(_) => anyhow::bail!(
                "the report {} is not a regular file; CI writes its reports as files",
                p.display()
            ),
        }
    };
    Ok(crate::engine::score::Artifacts {
        junit: names
            .junit
            .iter()
            .filter_map(|n| existing(n).transpose())
            .collect::<anyhow::Result<_>>()?,
        coverage: names
            .coverage
            .as_deref()
            .map(existing)
            .transpose()?
            .flatten(),
        collected: names
            .collected
            .as_deref()
            .map(existing)
            .transpose()?
            .flatten(),
        retest_junit: names
            .retest_junit
            .iter()
            .filter_map(|n| existing(n).transpose())
            .collect::<anyhow::Result<_>>()?,
        retest_required: names.required,
        ..Default::default()
    })
}

/// What `path` is, following symlinks; `None` when nothing is there at all. A symlink to
/// nothing is an error.
fn what_is_there(path: &std::path::Path) -> anyhow::Result<Option<std::fs::Metadata>> {
    use anyhow::Context as _;
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        Ok(_) => {}
    }
    std::fs::metadata(path).map(Some).with_context(|| {
        format!(
            "cannot read {} (a symbolic link to nothing?)",
            path.display()
        )
    })
}

/// What is wrong with the lines git wrote on a hook's standard input. The hook prints it
/// after `guard: `; the I/O error is part of the message, not a source, so that printing a
/// chain of errors does not repeat it.
#[derive(Debug, thiserror::Error)]
pub enum HookInputError {
    /// Standard input could not be read; `what` names what the hook reads there.
    #[error("cannot read the {what} on standard input: {error}")]
    Read {
        what: &'static str,
        error: std::io::Error,
    },
    #[error("standard input is larger than 64 MiB; this is not git's {hook} input")]
    TooLarge { hook: &'static str },
    #[error("standard input is not text: expected `{expected}` lines")]
    NotText { expected: &'static str },
    /// A line without the fields the hook expects (`expected` shows them); `got` is the line,
    /// cut to 80 characters.
    #[error("line {line}: expected `{expected}`, got {got:?}")]
    Fields {
        line: usize,
        expected: &'static str,
        got: String,
    },
    #[error("line {line}: {id}")]
    Id { line: usize, id: NotAnId },
    /// `name` is cut to 80 characters.
    #[error("line {line}: {name:?} is not a ref name")]
    RefName { line: usize, name: String },
}

/// Longest stdin a hook reads: far beyond any real push (about 150 bytes a ref).
const MAX_INPUT: u64 = 64 << 20;

/// A hook's whole standard input as text. More than [`MAX_INPUT`] is refused whole, never
/// cut: a hook that judged only the first 64 MiB would let the refs after them through.
/// `hook` names the hook, `what` what git writes there, `expected` one line's fields.
pub(crate) fn read_input(
    input: &mut dyn std::io::BufRead,
    hook: &'static str,
    what: &'static str,
    expected: &'static str,
) -> Result<String, HookInputError> {
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(input, MAX_INPUT + 1), &mut bytes)
        .map_err(|error| HookInputError::Read { what, error })?;
    if bytes.len() as u64 > MAX_INPUT {
        return Err(HookInputError::TooLarge { hook });
    }
    String::from_utf8(bytes).map_err(|_| HookInputError::NotText { expected })
}

/// Text where git writes an object id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not an object id")]
pub struct NotAnId(pub String);

/// A 40-hex (SHA-1) or 64-hex (SHA-256) object id as git writes it; `None` for the zero id
/// (a ref created or deleted).
pub fn parse_id(text: &str) -> Result<Option<String>, NotAnId> {
    let ok_len = text.len() == 40 || text.len() == 64;
    if !ok_len || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(NotAnId(text.to_string()));
    }
    if text.bytes().all(|b| b == b'0') {
        return Ok(None);
    }
    Ok(Some(text.to_ascii_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_zero_ids() {
        assert_eq!(parse_id(&"0".repeat(40)), Ok(None));
        assert_eq!(parse_id(&"0".repeat(64)), Ok(None));
        assert_eq!(parse_id(&"A".repeat(40)), Ok(Some("a".repeat(40))));
        assert!(parse_id("xyz").is_err());
        assert!(parse_id(&"g".repeat(40)).is_err());
        assert!(parse_id(&"a".repeat(41)).is_err());
    }

    #[test]
    fn hook_input_messages() {
        let a = "a".repeat(40);
        let receive = |text: &str| {
            crate::hooks::pre_receive::parse_updates(&mut text.as_bytes())
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            receive("hello\n"),
            "line 1: expected `<old-id> <new-id> <ref>`, got \"hello\""
        );
        assert_eq!(
            receive(&format!("{a} {a} refs/heads/x\n{a} nothex refs/heads/x\n")),
            "line 2: \"nothex\" is not an object id"
        );
        assert_eq!(
            receive(&format!("{a} {a} HEAD\n")),
            "line 1: \"HEAD\" is not a ref name"
        );
        let long = "x".repeat(100);
        assert_eq!(
            receive(&long),
            format!(
                "line 1: expected `<old-id> <new-id> <ref>`, got {:?}",
                "x".repeat(80)
            )
        );
        assert_eq!(
            crate::hooks::pre_receive::parse_updates(&mut &b"\xff\xfe"[..])
                .unwrap_err()
                .to_string(),
            "standard input is not text: expected `<old> <new> <ref>` lines"
        );
        let push = |text: &str| {
            crate::hooks::push_lines::parse_lines(&mut text.as_bytes())
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            push("refs/heads/x abc\n"),
            "line 1: expected `<local ref> <local id> <remote ref> <remote id>`, got \"refs/heads/x abc\""
        );
        assert_eq!(
            push(&format!("refs/heads/x {a} refs/heads/x zz\n")),
            "line 1: \"zz\" is not an object id"
        );
    }
}
