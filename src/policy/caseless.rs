//! Case-insensitive glob sets that compile cheaply. globset compiles every case-insensitive
//! glob into a regex; for the ledger's identity and harness globs that was a third of a
//! one-commit push's hook run. Compiled case-sensitively, globset matches most of them as
//! literals, prefixes or suffixes, with no regex at all.
//!
//! The equivalence: globset's regexes are byte-oriented (`(?-u)`), so case-insensitive means
//! ASCII letters only (a test checks every character). A pattern means the same lower-cased
//! in ASCII and compiled case-sensitively over text lower-cased in ASCII, byte for byte, as
//! long as it has no character class: a range (`[A-z]`) or a negation (`[!a]`) does not
//! survive lower-casing, so patterns with one keep globset's own case-insensitive matching.

use std::borrow::Cow;

use globset::{Glob, GlobSet, GlobSetBuilder};

/// Builds the glob for `pattern`, case-insensitive or not; every other option is the
/// caller's and the same both ways. `\` must escape (`backslash_escape(true)`).
pub type Build = fn(&str, bool) -> Result<Glob, globset::Error>;

/// Why a set did not compile.
#[derive(Debug, Clone)]
pub enum SetError {
    /// The pattern at this index is no glob.
    Glob(usize, globset::Error),
    /// The patterns do not compile together (globset's size limits).
    Set(globset::Error),
}

#[derive(Debug, Clone)]
pub struct CaselessGlobSet {
    /// The patterns that can be lower-cased, lower-cased and compiled case-sensitively.
    folded: GlobSet,
    /// Each one's index among all the patterns.
    folded_at: Vec<usize>,
    /// The others, compiled case-insensitively by globset.
    rest: GlobSet,
    rest_at: Vec<usize>,
    /// `*literal` and `literal*` patterns (with `with_affixes`), matched over the folded text
    /// as suffixes and prefixes, with their indices.
    affixes: Vec<(Affix, usize)>,
}

/// A glob that is a literal after or before one `*` that matches any text; the literal is
/// lower-cased, unescaped.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Affix {
    Suffix(String),
    Prefix(String),
}

/// At most this many patterns of a set are matched as affixes, one after another; the rest
/// go to globset, whose automaton answers for all of them in one pass.
const MAX_AFFIXES: usize = 32;

impl CaselessGlobSet {
    pub fn empty() -> CaselessGlobSet {
        CaselessGlobSet {
            folded: GlobSet::empty(),
            folded_at: Vec::new(),
            rest: GlobSet::empty(),
            rest_at: Vec::new(),
            affixes: Vec::new(),
        }
    }

    /// The set of `patterns`.
    pub fn new<S: AsRef<str>>(patterns: &[S], build: Build) -> Result<CaselessGlobSet, SetError> {
        Self::compile(patterns, build, false)
    }

    /// `new` for globs whose `*` matches any text, `/` included (`literal_separator(false)`):
    /// `*literal` and `literal*` are matched as a suffix or prefix of the folded text.
    /// globset would build an Aho-Corasick automaton for them, which for the ledger's
    /// agent identities was a quarter of a one-commit push's hook run.
    pub fn with_affixes<S: AsRef<str>>(
        patterns: &[S],
        build: Build,
    ) -> Result<CaselessGlobSet, SetError> {
        Self::compile(patterns, build, true)
    }

    fn compile<S: AsRef<str>>(
        patterns: &[S],
        build: Build,
        affixes: bool,
    ) -> Result<CaselessGlobSet, SetError> {
        let (mut folded, mut rest) = (GlobSetBuilder::new(), GlobSetBuilder::new());
        let (mut folded_at, mut rest_at) = (Vec::new(), Vec::new());
        let mut found = Vec::new();
        for (i, pattern) in patterns.iter().enumerate() {
            let pattern = pattern.as_ref();
            if affixes
                && found.len() < MAX_AFFIXES
                && let Some(affix) = affix(pattern)
            {
                found.push((affix, i));
                continue;
            }
            if foldable(pattern) {
                // A bad glob is reported as the user wrote it (lower-casing changes no
                // syntax outside classes, so it fails both ways).
                let lower = build(&pattern.to_ascii_lowercase(), false)
                    .map_err(|e| SetError::Glob(i, build(pattern, true).err().unwrap_or(e)))?;
                folded.add(lower);
                folded_at.push(i);
            } else {
                rest.add(build(pattern, true).map_err(|e| SetError::Glob(i, e))?);
                rest_at.push(i);
            }
        }
        Ok(CaselessGlobSet {
            folded: folded.build().map_err(SetError::Set)?,
            folded_at,
            rest: rest.build().map_err(SetError::Set)?,
            rest_at,
            affixes: found,
        })
    }

    pub fn is_match(&self, text: &str) -> bool {
        if self.folded_at.is_empty() && self.affixes.is_empty() {
            return self.rest.is_match(text);
        }
        let folded = fold(text);
        self.affixes.iter().any(|(a, _)| a.matches(&folded))
            || (!self.folded_at.is_empty() && self.folded.is_match(folded.as_ref()))
            || self.rest.is_match(text)
    }

    /// The indices of the patterns matching `text`, ascending.
    pub fn matches(&self, text: &str) -> Vec<usize> {
        let mut out: Vec<usize> = Vec::new();
        if !self.folded_at.is_empty() || !self.affixes.is_empty() {
            let folded = fold(text);
            out.extend(
                self.affixes
                    .iter()
                    .filter(|(a, _)| a.matches(&folded))
                    .map(|&(_, i)| i),
            );
            if !self.folded_at.is_empty() {
                out.extend(
                    self.folded
                        .matches(folded.as_ref())
                        .into_iter()
                        .map(|i| self.folded_at[i]),
                );
            }
        }
        out.extend(self.rest.matches(text).into_iter().map(|i| self.rest_at[i]));
        out.sort_unstable();
        out
    }
}

impl Affix {
    fn matches(&self, folded: &str) -> bool {
        match self {
            Affix::Suffix(s) => folded.ends_with(s.as_str()),
            Affix::Prefix(p) => folded.starts_with(p.as_str()),
        }
    }
}

/// `pattern` as an affix: one `*` first or last, and otherwise literal characters (a
/// backslash makes the next character literal); `None` for any other glob, which globset
/// then compiles (and refuses, if it is no glob: a trailing backslash).
fn affix(pattern: &str) -> Option<Affix> {
    let (literal, suffix) = match (pattern.strip_prefix('*'), pattern.strip_suffix('*')) {
        (Some(rest), _) => (rest, true),
        (None, Some(rest)) => (rest, false),
        (None, None) => return None,
    };
    let mut out = String::with_capacity(literal.len());
    let mut chars = literal.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push(chars.next()?),
            '*' | '?' | '[' | ']' | '{' | '}' => return None,
            c => out.push(c),
        }
    }
    out.make_ascii_lowercase();
    Some(if suffix {
        Affix::Suffix(out)
    } else {
        Affix::Prefix(out)
    })
}

/// Whether `pattern` means the same lower-cased: no character class (a `[` that a backslash
/// does not escape).
fn foldable(pattern: &str) -> bool {
    let mut bytes = pattern.bytes();
    while let Some(b) = bytes.next() {
        match b {
            b'\\' => {
                bytes.next();
            }
            b'[' => return false,
            _ => {}
        }
    }
    true
}

/// `text` as the folded patterns match it: lower-cased in ASCII.
fn fold(text: &str) -> Cow<'_, str> {
    if text.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(text.to_ascii_lowercase())
    } else {
        Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use globset::GlobBuilder;

    fn identity(p: &str, ci: bool) -> Result<Glob, globset::Error> {
        GlobBuilder::new(p)
            .case_insensitive(ci)
            .literal_separator(false)
            .backslash_escape(true)
            .build()
    }

    fn path(p: &str, ci: bool) -> Result<Glob, globset::Error> {
        GlobBuilder::new(p)
            .case_insensitive(ci)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
    }

    /// globset's own case-insensitive set over `patterns`, the reference.
    fn reference(patterns: &[String], build: Build) -> GlobSet {
        let mut b = GlobSetBuilder::new();
        for p in patterns {
            b.add(build(p, true).unwrap());
        }
        b.build().unwrap()
    }

    /// A pseudo-random generator (xorshift), so that every run tests the same inputs.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }

        /// Fewer than `max` pieces of `alphabet`, joined.
        fn string(&mut self, alphabet: &[&str], max: usize) -> String {
            (0..self.below(max))
                .map(|_| alphabet[self.below(alphabet.len())])
                .collect()
        }
    }

    /// `ours` and the reference `want` name the same patterns for 40 random texts over
    /// `alphabet`.
    #[track_caller]
    fn assert_agrees(
        ours: &CaselessGlobSet,
        want: &GlobSet,
        rng: &mut Rng,
        alphabet: &[&str],
        what: &str,
    ) {
        for _ in 0..40 {
            let text = rng.string(alphabet, 7);
            let what = format!("{what} over {text:?}");
            assert_eq!(ours.matches(&text), want.matches(&text), "{what}");
            assert_eq!(ours.is_match(&text), want.is_match(&text), "{what}");
        }
    }

    #[test]
    fn globsets_case_insensitivity_is_ascii_only() {
        // Every character against globset's case-insensitive `[a-z]`: those it matches are
        // exactly those `fold` turns into a lower-case ASCII letter (not KELVIN SIGN or LONG
        // S, which Unicode folds to `k` and `s`).
        let letter = identity("[a-z]", true).unwrap().compile_matcher();
        let mut buf = [0u8; 4];
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            let text: &str = c.encode_utf8(&mut buf);
            let folded = fold(text);
            let by_fold = folded.len() == 1 && folded.as_bytes()[0].is_ascii_lowercase();
            assert_eq!(letter.is_match(text), by_fold, "U+{:04X}", c as u32);
        }
    }

    #[test]
    fn which_patterns_fold() {
        assert!(foldable("*<Noreply@Anthropic.com>"));
        assert!(foldable(r"*\[bot\]@users.noreply.github.com"));
        assert!(foldable("**/{conftest.py,Tox.ini}"));
        assert!(!foldable("[A-z]*"));
        assert!(!foldable(r"\\[ab]"), "an escaped backslash, then a class");
        assert!(foldable("*é*"));
    }

    #[test]
    fn matches_like_globsets_case_insensitive_sets() {
        // Random patterns and texts over an alphabet with cases, wildcards, escapes, classes,
        // separators and the characters that fold: the indices agree with globset's own
        // case-insensitive set, for identity-style and path-style globs.
        let pattern_alphabet = [
            "a", "B", "k", "S", "/", "*", "**/", "?", r"\[", r"\*", "[a-c]", "[!k]", "[A-z]",
            "{x,Y}", ".", "é", "-",
        ];
        let text_alphabet = [
            "a", "A", "b", "B", "k", "K", "\u{212A}", "s", "S", "\u{017F}", "/", "[", "*", "x",
            "y", "Y", ".", "é", "É", "-", "c", "_",
        ];
        let mut rng = Rng(0x2545F4914F6CDD1Du64);
        for round in 0..300 {
            let patterns: Vec<String> = (0..1 + rng.below(4))
                .map(|_| {
                    let n = 1 + rng.below(5);
                    (0..n)
                        .map(|_| pattern_alphabet[rng.below(pattern_alphabet.len())])
                        .collect()
                })
                .collect();
            for build in [identity as Build, path as Build] {
                let (Ok(ours), want) = (
                    CaselessGlobSet::new(&patterns, build),
                    reference(&patterns, build),
                ) else {
                    panic!("{patterns:?} did not compile");
                };
                let what = format!("round {round}: {patterns:?}");
                assert_agrees(&ours, &want, &mut rng, &text_alphabet, &what);
            }
        }
    }

    #[test]
    fn affixes_are_a_literal_beside_one_star() {
        let suffix = |s: &str| Some(Affix::Suffix(s.to_string()));
        let prefix = |s: &str| Some(Affix::Prefix(s.to_string()));
        assert_eq!(
            affix("*<Noreply@Anthropic.com>"),
            suffix("<noreply@anthropic.com>")
        );
        assert_eq!(
            affix(r"*\[bot\]@users.noreply.github.com"),
            suffix("[bot]@users.noreply.github.com")
        );
        assert_eq!(affix("Aider: *"), prefix("aider: "));
        assert_eq!(affix("*"), suffix(""));
        assert_eq!(affix(r"a\*"), None, "an escaped star is no wildcard");
        assert_eq!(
            affix(r"*a\"),
            None,
            "a dangling backslash is globset's to refuse"
        );
        for other in ["**", "*a*", "a?*", "*[ab]", "*{a,b}", "*a]", "a", "", "a*b"] {
            assert_eq!(affix(other), None, "{other:?}");
        }
    }

    #[test]
    fn affixes_match_like_globsets_case_insensitive_sets() {
        // `*literal` and `literal*` over literals with cases, escapes, separators and the
        // characters that fold, mixed with other globs; more affixes than are matched one by
        // one, so that the rest go to globset.
        let literal_alphabet = [
            "a", "B", "k", "S", "/", r"\*", r"\[", r"\a", "é", "É", ".", " ",
        ];
        let others = ["a*b", "**", "[a-c]*", "?", "B"];
        let text_alphabet = [
            "a", "A", "b", "B", "k", "K", "\u{212A}", "s", "S", "\u{017F}", "/", "[", "*", "é",
            "É", ".", " ",
        ];
        let mut rng = Rng(0x9E3779B97F4A7C15u64);
        for round in 0..200 {
            let count = if round % 10 == 0 {
                MAX_AFFIXES + 8
            } else {
                1 + rng.below(6)
            };
            let patterns: Vec<String> = (0..count)
                .map(|_| {
                    let literal = rng.string(&literal_alphabet, 4);
                    match rng.below(5) {
                        0 | 1 => format!("*{literal}"),
                        2 | 3 => format!("{literal}*"),
                        _ => others[rng.below(others.len())].to_string(),
                    }
                })
                .collect();
            let ours = CaselessGlobSet::with_affixes(&patterns, identity).unwrap();
            let want = reference(&patterns, identity);
            let what = format!("round {round}: {patterns:?}");
            assert_agrees(&ours, &want, &mut rng, &text_alphabet, &what);
        }
    }

    #[test]
    fn a_bad_glob_is_named_by_its_index() {
        let err = CaselessGlobSet::new(&["ok", "A{B"], identity).unwrap_err();
        let SetError::Glob(1, e) = err else {
            panic!("{err:?}")
        };
        assert_eq!(e.glob(), Some("A{B"), "as written, not lower-cased");
        assert!(CaselessGlobSet::empty().matches("x").is_empty());
    }
}
