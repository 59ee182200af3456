//! Who is an agent: the ledger's `[agents]` patterns over commit identities and trailers,
//! and the human trailers that approve protected changes. Owns matching only; reading
//! commits is the git module's job.

use globset::{Glob, GlobBuilder, GlobMatcher};

use crate::policy::caseless::{CaselessGlobSet, SetError};

/// What guard knows about who made a commit.
#[derive(Debug, Clone, Default)]
pub struct Identity {
    pub author_name: String,
    pub author_email: String,
    pub committer_name: String,
    pub committer_email: String,
    /// The message's subject (its first paragraph, on one line).
    pub subject: String,
    pub trailers: Trailers,
    /// The authenticated pusher, in hooks.
    pub pusher: Option<String>,
}

/// The trailers of a commit message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trailers {
    /// `(key, value)` pairs of the trailer block (git's rules: the last paragraph), in order.
    /// Only these count.
    pub block: Vec<(String, String)>,
    /// Every `Key: value` line of the message, the block's included. git ignores the ones
    /// outside the block; they only explain why a trailer a human wrote does not count.
    pub in_message: Vec<(String, String)>,
}

impl Trailers {
    /// Trailers from the block alone (the message has no other `Key: value` lines).
    pub fn block(block: Vec<(String, String)>) -> Trailers {
        Trailers {
            in_message: block.clone(),
            block,
        }
    }
}

/// A `Key: value-glob` pattern over trailers; the key is case-insensitive (git's rule), the
/// value glob too. Compiled with the others into a `TrailerPatterns`.
#[derive(Debug, Clone)]
pub struct TrailerPattern {
    /// Lower-case.
    pub key: String,
    /// The value glob, as written.
    pub value: String,
    pub text: String,
}

/// `[agents] trailers`: the value globs compiled into one set (one regex each cost a fifth of
/// a one-commit push's hook run), each with its key.
#[derive(Debug, Clone)]
pub struct TrailerPatterns {
    pub patterns: Vec<TrailerPattern>,
    values: CaselessGlobSet,
}

impl TrailerPatterns {
    pub fn new(patterns: Vec<TrailerPattern>) -> Result<TrailerPatterns, PatternError> {
        let values: Vec<&str> = patterns.iter().map(|p| p.value.as_str()).collect();
        let values = identity_set(&values).map_err(|(_, e)| e)?;
        Ok(TrailerPatterns { patterns, values })
    }

    /// The first pattern (in the ledger's order) matching the trailer `key: value`.
    pub fn first_match(&self, key: &str, value: &str) -> Option<&TrailerPattern> {
        self.values
            .matches(value.trim())
            .into_iter()
            .map(|i| &self.patterns[i])
            .find(|p| key.eq_ignore_ascii_case(&p.key))
    }
}

#[derive(Debug, Clone)]
pub struct AgentsPolicy {
    /// `default = "agent"`: every commit is an agent's unless proven human (strict mode).
    pub default_agent: bool,
    pub emails: PatternSet,
    pub names: PatternSet,
    pub trailers: TrailerPatterns,
    /// Globs over the commit subject (aider's `aider: ` prefix).
    pub subjects: PatternSet,
    pub pushers: PatternSet,
    /// Globs over the value of a `Co-authored-by:` trailer naming a formatting-only bot
    /// (pre-commit-ci): such a trailer is no agent marker. The bot cannot author or commit
    /// the commit this way (its own e-mail is matched as any agent's), so the trailer only
    /// says that a human's branch took the bot's formatting fixes.
    pub formatting_coauthors: PatternSet,
}

/// Case-insensitive globs with their source text, for messages.
#[derive(Debug, Clone)]
pub struct PatternSet {
    pub patterns: Vec<String>,
    pub set: CaselessGlobSet,
}

/// What is wrong with an identity pattern or a trailer of `[agents]` or `[trailers]`; the
/// caller says where it stands. globset's reason is part of the message, not a source, so
/// that printing a chain of errors does not repeat it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    #[error("{pattern:?} is not a valid glob: {error}")]
    Glob {
        pattern: String,
        error: globset::Error,
    },
    /// The patterns do not compile together.
    #[error("{0}")]
    Set(globset::Error),
    #[error("{0:?} is not a trailer pattern; write `Key: value-glob`")]
    NoColon(String),
    #[error("{0:?}: a trailer key is one word, such as `Co-authored-by`")]
    KeyNotOneWord(String),
    #[error("{0:?} is not a trailer; write `Key: value`")]
    NotATrailer(String),
}

impl PatternSet {
    /// The set of `patterns`; an error names the index of the pattern that is wrong (0 when
    /// they only fail together).
    pub fn new(patterns: &[String]) -> Result<PatternSet, (usize, PatternError)> {
        let set = identity_set(patterns)?;
        Ok(PatternSet {
            patterns: patterns.to_vec(),
            set,
        })
    }

    /// The first pattern matching `text`.
    pub fn first_match(&self, text: &str) -> Option<&str> {
        self.set
            .matches(text)
            .first()
            .map(|&i| self.patterns[i].as_str())
    }
}

/// A case-insensitive glob where `*` also crosses `/` (identities are not paths).
pub fn glob(pattern: &str) -> Result<GlobMatcher, PatternError> {
    identity_glob(pattern).map(|g| g.compile_matcher())
}

/// `glob`, not compiled: a set compiles its globs together (compiling each alone too was
/// most of the cost of reading a ledger).
fn identity_glob(pattern: &str) -> Result<Glob, PatternError> {
    identity_glob_cased(pattern, true).map_err(|error| PatternError::Glob {
        pattern: pattern.to_string(),
        error,
    })
}

fn identity_glob_cased(pattern: &str, case_insensitive: bool) -> Result<Glob, globset::Error> {
    GlobBuilder::new(pattern)
        .case_insensitive(case_insensitive)
        .literal_separator(false)
        .backslash_escape(true)
        .build()
}

/// `patterns` as identity globs, compiled together; an error names the index of the pattern
/// that is wrong (0 when they only fail together).
fn identity_set<S: AsRef<str>>(patterns: &[S]) -> Result<CaselessGlobSet, (usize, PatternError)> {
    CaselessGlobSet::with_affixes(patterns, identity_glob_cased).map_err(|e| match e {
        SetError::Glob(i, error) => (
            i,
            PatternError::Glob {
                pattern: patterns[i].as_ref().to_string(),
                error,
            },
        ),
        SetError::Set(e) => (0, PatternError::Set(e)),
    })
}

/// Parses `Key: value-glob`.
pub fn trailer_pattern(text: &str) -> Result<TrailerPattern, PatternError> {
    let (key, value) = text
        .split_once(':')
        .ok_or_else(|| PatternError::NoColon(text.to_string()))?;
    let key = key.trim();
    if key.is_empty() || key.contains(char::is_whitespace) {
        return Err(PatternError::KeyNotOneWord(text.to_string()));
    }
    Ok(TrailerPattern {
        key: key.to_ascii_lowercase(),
        value: {
            let value = value.trim();
            identity_glob(value)?;
            value.to_string()
        },
        text: text.to_string(),
    })
}

/// A human trailer such as `Fixture-Lock: human`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HumanTrailer {
    pub key: String,
    pub value: String,
}

impl HumanTrailer {
    pub fn parse(text: &str) -> Result<HumanTrailer, PatternError> {
        let not_a_trailer = || PatternError::NotATrailer(text.to_string());
        let (key, value) = text.split_once(':').ok_or_else(not_a_trailer)?;
        let (key, value) = (key.trim(), value.trim());
        if key.is_empty() || key.contains(char::is_whitespace) || value.is_empty() {
            return Err(not_a_trailer());
        }
        Ok(HumanTrailer {
            key: key.to_string(),
            value: value.to_string(),
        })
    }

    /// Whether `trailers` carry this one (keys case-insensitive as in git; values compared
    /// case-insensitively after trimming).
    pub fn present_in(&self, trailers: &[(String, String)]) -> bool {
        trailers.iter().any(|(k, v)| {
            k.eq_ignore_ascii_case(&self.key) && v.trim().eq_ignore_ascii_case(&self.value)
        })
    }
}

impl std::fmt::Display for HumanTrailer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.key, self.value)
    }
}

impl AgentsPolicy {
    /// Why `who` matches an agent pattern (pusher, e-mail, name, trailer), or `None`. Strict
    /// mode (`default_agent`) is the caller's: only it knows whether a verified signature
    /// proves a human.
    pub fn matched_agent(&self, who: &Identity) -> Option<String> {
        if let Some(pusher) = &who.pusher
            && let Some(p) = self.pushers.first_match(pusher)
        {
            return Some(format!("pushed by {pusher} (matches agents.pushers {p:?})"));
        }
        for (role, email) in [
            ("author", &who.author_email),
            ("committer", &who.committer_email),
        ] {
            if let Some(p) = self.emails.first_match(email) {
                return Some(format!("{role} e-mail {email} matches agents.emails {p:?}"));
            }
        }
        for (role, name) in [
            ("author", &who.author_name),
            ("committer", &who.committer_name),
        ] {
            if let Some(p) = self.names.first_match(name) {
                return Some(format!("{role} name {name:?} matches agents.names {p:?}"));
            }
        }
        for (key, value) in &who.trailers.block {
            if key.eq_ignore_ascii_case("co-authored-by")
                && self.formatting_coauthors.first_match(value).is_some()
            {
                continue;
            }
            if let Some(pattern) = self.trailers.first_match(key, value) {
                return Some(format!(
                    "trailer \"{key}: {value}\" matches agents.trailers {:?}",
                    pattern.text
                ));
            }
        }
        if let Some(p) = self.subjects.first_match(&who.subject) {
            return Some(format!(
                "subject {:?} matches agents.subjects {p:?}",
                who.subject
            ));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::ledger::Policy;

    fn who(name: &str, email: &str, trailers: &[(&str, &str)]) -> Identity {
        Identity {
            author_name: name.into(),
            author_email: email.into(),
            committer_name: "Human Dev".into(),
            committer_email: "dev@example.com".into(),
            subject: "Tune".into(),
            trailers: Trailers::block(
                trailers
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            pusher: None,
        }
    }

    #[test]
    fn a_formatting_bots_co_author_trailer_alone_is_no_agent_marker() {
        // As in pytest's history: a human's pull request squash-merged with pre-commit-ci's
        // formatting fixes.
        const PRE_COMMIT_CI: &str =
            "pre-commit-ci[bot] <66853113+pre-commit-ci[bot]@users.noreply.github.com>";
        for policy in [Policy::embedded(), bare_policy()] {
            let agents = &policy.agents;
            let human = who(
                "Florian Bruhin",
                "me@the-compiler.org",
                &[("Co-authored-by", PRE_COMMIT_CI)],
            );
            assert_eq!(agents.matched_agent(&human), None);
            // Any other [bot] co-author still marks an agent, and so does the bot's own
            // authorship, and another agent trailer beside the bot's.
            let devin = who(
                "Florian Bruhin",
                "me@the-compiler.org",
                &[(
                    "co-authored-by",
                    "devin-ai-integration[bot] <158243242+devin-ai-integration[bot]@users.noreply.github.com>",
                )],
            );
            assert!(agents.matched_agent(&devin).is_some());
            let bot = who(
                "pre-commit-ci[bot]",
                "66853113+pre-commit-ci[bot]@users.noreply.github.com",
                &[],
            );
            assert!(agents.matched_agent(&bot).is_some());
            let both = who(
                "Florian Bruhin",
                "me@the-compiler.org",
                &[
                    ("Co-authored-by", PRE_COMMIT_CI),
                    ("Co-authored-by", "Claude <noreply@anthropic.com>"),
                ],
            );
            assert!(agents.matched_agent(&both).is_some());
            // The whole identity, not an ending: an agent's co-author line that ends like the
            // bot's is the agent's (found in review).
            let smuggled = who(
                "Florian Bruhin",
                "me@the-compiler.org",
                &[(
                    "Co-authored-by",
                    "Claude <noreply@anthropic.com> <66853113+pre-commit-ci[bot]@users.noreply.github.com>",
                )],
            );
            assert!(agents.matched_agent(&smuggled).is_some());
            // The exemption is for the co-author trailer only, not another key.
            let other_key = who(
                "Florian Bruhin",
                "me@the-compiler.org",
                &[("Generated-by", PRE_COMMIT_CI)],
            );
            assert!(agents.matched_agent(&other_key).is_some());
        }
        // A ledger that lists none takes the exemption away.
        let none = Policy::parse(
            std::path::Path::new("l.toml"),
            "[agents]\nformatting_coauthors = []\n",
            crate::policy::ledger::PolicySource::Embedded,
        )
        .unwrap();
        let human = who(
            "Florian Bruhin",
            "me@the-compiler.org",
            &[("Co-authored-by", PRE_COMMIT_CI)],
        );
        assert!(none.agents.matched_agent(&human).is_some());
    }

    fn bare_policy() -> Policy {
        Policy::parse(
            std::path::Path::new("l.toml"),
            "[freeze]\nfile = \"f.txt\"\n",
            crate::policy::ledger::PolicySource::Embedded,
        )
        .unwrap()
    }

    #[test]
    fn default_policy_knows_agents_seen_in_the_wild() {
        // The starter ledger's [agents] and the built-in defaults of a ledger without one.
        let bare = Policy::parse(
            std::path::Path::new("l.toml"),
            "[freeze]\nfile = \"f.txt\"\n",
            crate::policy::ledger::PolicySource::Embedded,
        )
        .unwrap();
        for agents in [Policy::embedded().agents, bare.agents] {
            check_known_agents(&agents);
        }
    }

    fn check_known_agents(agents: &AgentsPolicy) {
        let agent_cases = [
            who(
                "Dev",
                "dev@example.com",
                &[("Co-Authored-By", "Claude <noreply@anthropic.com>")],
            ),
            who(
                "Dev",
                "dev@example.com",
                &[("co-authored-by", "Codex <codex@openai.com>")],
            ),
            who(
                "copilot-swe-agent[bot]",
                "198982749+Copilot@users.noreply.github.com",
                &[],
            ),
            who(
                "devin-ai-integration[bot]",
                "158243242+devin-ai-integration[bot]@users.noreply.github.com",
                &[],
            ),
            who("Cursor Agent", "cursoragent@cursor.com", &[]),
            who("Dev (aider)", "dev@example.com", &[]),
            who(
                "Dev",
                "dev@example.com",
                &[("Co-authored-by", "aider (gpt-4o) <noreply@aider.chat>")],
            ),
            who(
                "Dev",
                "dev@example.com",
                &[("Replit-Commit-Author", "Agent")],
            ),
            who("Dev", "dev@example.com", &[("Generated-by", "some tool")]),
            // The agents of 2026, each in the shape its own source or its real commits
            // show (README, "Agent identities").
            who("openhands", "openhands@all-hands.dev", &[]),
            who(
                "Dev",
                "dev@example.com",
                &[("Co-authored-by", "openhands <openhands@all-hands.dev>")],
            ),
            who(
                "Dev",
                "dev@example.com",
                &[("Co-authored-by", "Amp <amp@ampcode.com>")],
            ),
            who(
                "Dev",
                "dev@example.com",
                &[(
                    "Amp-Thread-ID",
                    "https://ampcode.com/threads/T-019cb9fe-1234-4abc-9def-0123456789ab",
                )],
            ),
            who(
                "Dev",
                "dev@example.com",
                &[("Co-Authored-By", "opencode <noreply@opencode.ai>")],
            ),
            who(
                "opencode-agent[bot]",
                "opencode-agent[bot]@users.noreply.github.com",
                &[],
            ),
            who(
                "google-labs-jules[bot]",
                "161369871+google-labs-jules[bot]@users.noreply.github.com",
                &[],
            ),
            who(
                "gemini-cli[bot]",
                "gemini-cli[bot]@users.noreply.github.com",
                &[],
            ),
            who(
                "Dev",
                "dev@example.com",
                &[(
                    "Co-authored-by",
                    "factory-droid[bot] <138933559+factory-droid[bot]@users.noreply.github.com>",
                )],
            ),
            who("Replit Agent", "agent@replit.com", &[]),
            who(
                "Dev",
                "dev@example.com",
                &[(
                    "Replit-Commit-Session-Id",
                    "7c1d2e3f-0000-4000-8000-000000000000",
                )],
            ),
            who(
                "Dev",
                "dev@example.com",
                &[("Co-Authored-By", "Continue <noreply@continue.dev>")],
            ),
            who(
                "Dev",
                "dev@example.com",
                &[("Co-authored-by", "aider (gpt-4o) <aider@aider.chat>")],
            ),
            who(
                "Dev",
                "dev@example.com",
                &[("Co-authored-by", "aider <noreply@aider.dev>")],
            ),
            who(
                "claude[bot]",
                "209825114+claude[bot]@users.noreply.github.com",
                &[],
            ),
            who(
                "cursor[bot]",
                "206951365+cursor[bot]@users.noreply.github.com",
                &[],
            ),
            who(
                "Dev",
                "dev@example.com",
                &[("Co-authored-by", "Cline <noreply@cline.bot>")],
            ),
            who(
                "Dev",
                "dev@example.com",
                &[("Co-authored-by", "Windsurf <noreply@codeium.com>")],
            ),
            who(
                "Dev",
                "dev@example.com",
                &[(
                    "Co-authored-by",
                    "Gemini CLI Agent <gemini-cli-agent@google.com>",
                )],
            ),
            // Issue 10: what agents write on commits today.
            who(
                "Dev",
                "dev@example.com",
                &[("Co-authored-by", "Codex <noreply@openai.com>")],
            ),
            who(
                "Dev",
                "dev@example.com",
                &[(
                    "Co-authored-by",
                    "Copilot <223556219+Copilot@users.noreply.github.com>",
                )],
            ),
            who("Copilot", "223556219+Copilot@users.noreply.github.com", &[]),
            who(
                "Dev",
                "dev@example.com",
                &[("Co-authored-by", "Copilot <copilot@github.com>")],
            ),
            who("Dev", "dev@example.com", &[("Made-with", "Cursor")]),
            who(
                "Dev",
                "dev@example.com",
                &[("Agent-Logs-Url", "https://github.com/o/r/sessions/1")],
            ),
            who("Dev", "dev@example.com", &[("Claude-Session", "abc")]),
            who(
                "Dev",
                "dev@example.com",
                &[(
                    "Co-Authored-By",
                    "Devin <158243242+devin-ai-integration[bot]@users.noreply.github.com>",
                )],
            ),
            who("Dev", "dev@example.com", &[("Assisted-by", "gpt-5")]),
            who("Dev", "copilot@github.com", &[]),
            who("Codex", "noreply@openai.com", &[]),
            who("aider", "aider@aider.chat", &[]),
            who(
                "Dev",
                "dev@example.com",
                &[(
                    "Co-authored-by",
                    "aider (openai/gpt-4.1) <aider@aider.chat>",
                )],
            ),
            who(
                "renovate[bot]",
                "29139614+renovate[bot]@users.noreply.github.com",
                &[],
            ),
        ];
        for case in &agent_cases {
            assert!(
                agents.matched_agent(case).is_some(),
                "{case:?} should be an agent"
            );
        }
        let mut aider = who("Dev", "dev@example.com", &[]);
        aider.subject = "AIDER: fix the parser".into();
        assert!(
            agents
                .matched_agent(&aider)
                .unwrap()
                .contains("agents.subjects")
        );
        let humans = [
            who("Claude Shannon", "claude@example.com", &[]),
            who("Dev", "robot@users.noreply.github.com", &[]),
            who("Dev", "12345+botanist@users.noreply.github.com", &[]),
            who(
                "Dev",
                "dev@example.com",
                &[("Co-authored-by", "Pair <pair@example.com>")],
            ),
            who("Dev", "dev@example.com", &[("Fixture-Lock", "human")]),
            // A display name alone proves nothing.
            who("Copilot", "copilot-fan@example.com", &[]),
            who(
                "Dev",
                "dev@example.com",
                &[("Co-authored-by", "Codex Fan <codex-fan@example.com>")],
            ),
            who("Devin Smith", "devin@example.com", &[]),
        ];
        for case in &humans {
            assert_eq!(
                agents.matched_agent(case),
                None,
                "{case:?} should be a human"
            );
        }
        let mut mention = who("Dev", "dev@example.com", &[]);
        mention.subject = "Document the aider: prefix".into();
        assert_eq!(agents.matched_agent(&mention), None);
    }

    #[test]
    fn pusher_globs_apply() {
        let mut agents = Policy::embedded().agents;
        agents.pushers = PatternSet::new(&["ci-agent-*".to_string()]).unwrap();
        let mut w = who("Dev", "dev@example.com", &[]);
        w.pusher = Some("ci-agent-7".into());
        assert!(
            agents
                .matched_agent(&w)
                .unwrap()
                .contains("pushed by ci-agent-7")
        );
    }

    #[test]
    fn human_trailer_matching() {
        let t = HumanTrailer::parse("Fixture-Lock: human").unwrap();
        assert!(t.present_in(&[("fixture-lock".into(), " Human ".into())]));
        assert!(!t.present_in(&[("Fixture-Lock".into(), "agent".into())]));
        assert!(!t.present_in(&[("Freeze-Lease".into(), "human".into())]));
        assert!(HumanTrailer::parse("no colon").is_err());
        assert!(trailer_pattern("Two words: x").is_err());
    }

    #[test]
    fn trailer_patterns_match_key_and_value_together_in_the_ledgers_order() {
        let set = TrailerPatterns::new(
            [
                "Reviewed-by: *",
                "Co-authored-by: *<bot@example.com>",
                "Co-Authored-By: *",
            ]
            .iter()
            .map(|t| trailer_pattern(t).unwrap())
            .collect(),
        )
        .unwrap();
        let first = |k: &str, v: &str| set.first_match(k, v).map(|p| p.text.as_str());
        // The first pattern matches the value but not the key: the next whose key matches.
        assert_eq!(
            first("co-authored-by", " A <BOT@example.com> "),
            Some("Co-authored-by: *<bot@example.com>")
        );
        assert_eq!(
            first("Co-authored-by", "A <a@b>"),
            Some("Co-Authored-By: *")
        );
        assert_eq!(first("Signed-off-by", "A <bot@example.com>"), None);
        let none = TrailerPatterns::new(Vec::new()).unwrap();
        assert!(none.first_match("Reviewed-by", "x").is_none());
    }

    #[test]
    fn pattern_and_trailer_messages() {
        let err = |r: Result<TrailerPattern, PatternError>| r.unwrap_err().to_string();
        assert_eq!(
            err(trailer_pattern("Two words: x")),
            "\"Two words: x\": a trailer key is one word, such as `Co-authored-by`"
        );
        assert_eq!(
            err(trailer_pattern("no colon")),
            "\"no colon\" is not a trailer pattern; write `Key: value-glob`"
        );
        let bad_glob = err(trailer_pattern("Co-authored-by: a[b"));
        assert!(
            bad_glob.starts_with("\"a[b\" is not a valid glob: "),
            "{bad_glob}"
        );
        for text in ["no colon", "Key:", "two words: human"] {
            assert_eq!(
                HumanTrailer::parse(text).unwrap_err().to_string(),
                format!("{text:?} is not a trailer; write `Key: value`")
            );
        }
        let (i, e) = PatternSet::new(&["ok*".to_string(), "{a".to_string()]).unwrap_err();
        assert_eq!(i, 1);
        assert!(
            e.to_string().starts_with("\"{a\" is not a valid glob: "),
            "{e}"
        );
    }
}
