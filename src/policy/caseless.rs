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
}

impl CaselessGlobSet {
    pub fn empty() -> CaselessGlobSet {
        CaselessGlobSet {
            folded: GlobSet::empty(),
            folded_at: Vec::new(),
            rest: GlobSet::empty(),
            rest_at: Vec::new(),
        }
    }

    /// The set of `patterns`.
    pub fn new<S: AsRef<str>>(patterns: &[S], build: Build) -> Result<CaselessGlobSet, SetError> {
        let (mut folded, mut rest) = (GlobSetBuilder::new(), GlobSetBuilder::new());
        let (mut folded_at, mut rest_at) = (Vec::new(), Vec::new());
        for (i, pattern) in patterns.iter().enumerate() {
            let pattern = pattern.as_ref();
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
        })
    }

    pub fn is_match(&self, text: &str) -> bool {
        (!self.folded_at.is_empty() && self.folded.is_match(fold(text).as_ref()))
            || self.rest.is_match(text)
    }

    /// The indices of the patterns matching `text`, ascending.
    pub fn matches(&self, text: &str) -> Vec<usize> {
        let mut out: Vec<usize> = Vec::new();
        if !self.folded_at.is_empty() {
            let folded = fold(text);
            out.extend(
                self.folded
                    .matches(folded.as_ref())
                    .into_iter()
                    .map(|i| self.folded_at[i]),
            );
        }
        out.extend(self.rest.matches(text).into_iter().map(|i| self.rest_at[i]));
        out.sort_unstable();
        out
    }
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
        let mut seed = 0x2545F4914F6CDD1Du64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for round in 0..300 {
            let patterns: Vec<String> = (0..1 + next(4))
                .map(|_| {
                    (0..1 + next(5))
                        .map(|_| pattern_alphabet[next(pattern_alphabet.len())])
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
                for _ in 0..40 {
                    let text: String = (0..next(7))
                        .map(|_| text_alphabet[next(text_alphabet.len())])
                        .collect();
                    assert_eq!(
                        ours.matches(&text),
                        want.matches(&text),
                        "round {round}: {patterns:?} over {text:?}"
                    );
                    assert_eq!(ours.is_match(&text), want.is_match(&text));
                }
            }
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
