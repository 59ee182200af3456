//! git's pre-push input: one `<local ref> <local id> <remote ref> <remote id>` line per
//! pushed ref. Read here for `pre_push` and built from pre-commit's variables by
//! `pre_commit`, which both use this type.

use std::io::BufRead;

use crate::hooks::{HookInputError, parse_id};

/// One line of pre-push input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushLine {
    pub local_ref: String,
    /// `None` when the push deletes the remote ref (`(delete)`).
    pub local: Option<String>,
    pub remote_ref: String,
    /// `None` when the remote ref does not exist yet.
    pub remote: Option<String>,
}

/// Parses git's pre-push input: `<local ref> <local oid> <remote ref> <remote oid>` lines.
pub fn parse_lines(input: &mut dyn BufRead) -> Result<Vec<PushLine>, HookInputError> {
    let text = super::read_input(
        input,
        "pre-push",
        "pre-push lines",
        "<local ref> <local id> <remote ref> <remote id>",
    )?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let fields: Vec<&str> = line.split(' ').collect();
        let [local_ref, local, remote_ref, remote] = fields[..] else {
            return Err(HookInputError::Fields {
                line: i + 1,
                expected: "<local ref> <local id> <remote ref> <remote id>",
                got: line.chars().take(80).collect::<String>(),
            });
        };
        let id = |text| parse_id(text).map_err(|id| HookInputError::Id { line: i + 1, id });
        out.push(PushLine {
            local_ref: local_ref.to_string(),
            local: id(local)?,
            remote_ref: remote_ref.to_string(),
            remote: id(remote)?,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_deletes_and_new_refs() {
        let zero = "0".repeat(40);
        let a = "a".repeat(40);
        let text =
            format!("refs/heads/x {a} refs/heads/x {zero}\n(delete) {zero} refs/heads/y {a}\n");
        let lines = parse_lines(&mut text.as_bytes()).unwrap();
        assert_eq!(lines[0].remote, None);
        assert_eq!(lines[1].local, None);
        assert_eq!(lines[1].local_ref, "(delete)");
        assert!(parse_lines(&mut "refs/heads/x abc\n".as_bytes()).is_err());
    }

    #[test]
    fn bad_lines_are_named_by_number() {
        let zero = "0".repeat(40);
        let a = "a".repeat(40);
        let good = format!("refs/heads/x {a} refs/heads/x {zero}\n");
        let message = |text: String| parse_lines(&mut text.as_bytes()).unwrap_err().to_string();
        assert!(
            message(format!("{good}{good}refs/heads/x {a} refs/heads/x\n")).starts_with("line 3: "),
        );
        assert!(
            message(format!("{good}refs/heads/x {a} refs/heads/x nope\n"))
                .starts_with("line 2: \"nope\" is not an object id")
        );
        assert!(
            message(format!("refs/heads/x nope refs/heads/x {zero}\n")).starts_with("line 1: ")
        );
        assert!(message(format!("{good}\n")).starts_with("line 2: "));
    }

    #[test]
    fn input_over_64_mib_is_refused_whole() {
        // git never writes that much. Reading only the first 64 MiB would judge the refs
        // there and push the ones after them unjudged.
        let zero = "0".repeat(40);
        let a = "a".repeat(40);
        let line = format!("refs/heads/x {a} refs/heads/x {zero}\n");
        const LIMIT: usize = 64 << 20;
        let mut text = line.repeat(LIMIT / line.len() - 1);
        let pad = "y".repeat(LIMIT - text.len() - line.len());
        text.push_str(&format!("refs/heads/x{pad} {a} refs/heads/x {zero}\n"));
        assert_eq!(text.len(), LIMIT);
        assert_eq!(
            parse_lines(&mut text.as_bytes()).unwrap().len(),
            LIMIT / line.len()
        );
        text.push_str(&line);
        assert_eq!(
            parse_lines(&mut text.as_bytes()).unwrap_err().to_string(),
            "standard input is larger than 64 MiB; this is not git's pre-push input"
        );
        let not_text = parse_lines(&mut &b"refs/heads/x \xff\n"[..]).unwrap_err();
        assert!(
            matches!(not_text, HookInputError::NotText { .. }),
            "{not_text}"
        );
    }
}
