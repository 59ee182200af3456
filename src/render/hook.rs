//! What a git hook prints: short `error:`, `hint:` and `warning:` lines on standard error, one
//! line each (git shows them to the pusher prefixed with `remote:`), and for GitLab's web UI
//! prefixed with `GL-HOOK-ERR:`.

use std::fmt::Write as _;

use crate::render::{one_line, place};
use crate::report::Finding;

/// How hook messages are written: `error:` lines, prefixed for GitLab's web UI.
#[derive(Debug, Clone, Copy)]
pub struct Messages {
    /// `GL_ID` is set: GitLab shows lines starting with `GL-HOOK-ERR:` in its UI too.
    pub gitlab: bool,
}

impl Messages {
    pub fn from_env() -> Messages {
        Messages {
            gitlab: std::env::var_os("GL_ID").is_some(),
        }
    }

    fn prefix(&self) -> &'static str {
        if self.gitlab { "GL-HOOK-ERR: " } else { "" }
    }

    /// One `error:` line (no colour, one line).
    pub fn error(&self, text: &str) -> String {
        format!("{}error: {}\n", self.prefix(), one_line(text))
    }

    /// A `hint:` line saying how to fix the error before it.
    pub fn hint(&self, text: &str) -> String {
        format!("{}hint: {}\n", self.prefix(), one_line(text))
    }

    /// A `warning:` line.
    pub fn warning(&self, text: &str) -> String {
        format!("{}warning: {}\n", self.prefix(), one_line(text))
    }

    /// A finding as an `error:` line and a `hint:` line, naming the ref; in evaluate mode
    /// (`enforced` false) a `warning:` line, since it rejects nothing.
    pub fn finding_in(&self, refname: &str, f: &Finding, enforced: bool) -> String {
        let out = self.finding(refname, f);
        if enforced {
            return out;
        }
        let error = format!("{}error: ", self.prefix());
        let warning = format!("{}warning: ", self.prefix());
        out.replacen(&error, &warning, 1)
    }

    /// A finding as an `error:` line and a `hint:` line, naming the ref.
    pub fn finding(&self, refname: &str, f: &Finding) -> String {
        let mut line = format!("{refname}: [{}] ", f.code);
        if let Some(commit) = &f.commit {
            let _ = write!(line, "{commit} ");
            if let Some(subject) = &f.subject {
                let _ = write!(line, "{subject:?} ");
            }
        }
        if let Some(place) = place(f) {
            let _ = write!(line, "{place}: ");
        }
        line.push_str(&f.message);
        let mut out = self.error(&line);
        if let Some(help) = &f.help {
            out.push_str(&self.hint(help));
        }
        out
    }
}

/// A finding the ledger only shows (a `[baseline]` rule set to "warn"), as a hook's
/// `warning:` line text: `[code] commit: message`.
pub fn warning_line(w: &Finding) -> String {
    let at = w
        .commit
        .as_deref()
        .map(|c| format!("{c}: "))
        .unwrap_or_default();
    format!("[{}] {at}{}", w.code, w.message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Code;

    #[test]
    fn messages_are_single_lines_prefixed_for_gitlab() {
        let f = Finding::new(Code::AgentEditProtected, "agent\x1b[31m edit\nsecond")
            .path("qa/freeze.toml")
            .help("revert it");
        let plain = Messages { gitlab: false }.finding("refs/heads/main", &f);
        assert_eq!(
            plain,
            "error: refs/heads/main: [agent_edit_protected] qa/freeze.toml: agent [31m edit second\nhint: revert it\n"
        );
        let gl = Messages { gitlab: true }.finding("refs/heads/main", &f);
        assert!(gl.lines().all(|l| l.starts_with("GL-HOOK-ERR: ")), "{gl}");
    }
}
