//! Tree entry names that a checkout on another file system writes over a protected path, and
//! git's own `.git` name checks. It owns the folding of names only; the walkers decide which
//! names to compare.
//!
//! git stores names as bytes, but file systems compare them loosely. A name is a variant of a
//! protected name when the two are equal after what some file system does on the way to disk:
//!
//! - full Unicode case folding, with canonical (NFD) normalisation on both sides (Windows and
//!   macOS are case-insensitive; APFS and HFS+ ignore the NFC/NFD difference): `teſts` (long
//!   s), `locK` (Kelvin sign), `cafe` + U+0301;
//! - dropping the code points HFS+ ignores (git's `next_hfs_char` list: zero-width joiners,
//!   direction marks, U+FEFF);
//! - NTFS: trailing dots and spaces are trimmed, `name:stream` (e.g. `name::$DATA`) names a
//!   stream of `name`, and a backslash separates directories, so the single entry
//!   `qa\freeze.toml` is `qa/freeze.toml`.
//!
//! The fold is the union of these rules, so it may call a name a variant that no single file
//! system would confuse; for protected paths that errs on the side of the gate. Plain names
//! (ASCII, none of `\ : /`, no trailing dot or space) fold to their ASCII lower case, which is
//! compared without allocating: only other names take the slow path.

use caseless::Caseless as _;
use unicode_normalization::UnicodeNormalization as _;

/// One component of a protected path, with the key its variants fold to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Component {
    name: String,
    /// The folded name; for a plain name, its ASCII lower case.
    key: String,
}

impl Component {
    pub fn new(name: &str) -> Component {
        let key = if is_plain(name.as_bytes()) {
            name.to_ascii_lowercase()
        } else {
            // A component that folds to several (a backslash in a ledger path) or to none
            // matches only itself: its key holds a '/', which no folded entry name does.
            fold(name.as_bytes()).join("/")
        };
        Component {
            name: name.to_string(),
            key,
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }
}

/// How an entry name relates to a protected path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Match {
    /// Not the path, nor a variant of its first components.
    No,
    /// The first component, byte for byte.
    Exact,
    /// A variant standing for this many leading components of the path (more than one when
    /// the name holds backslashes). An entry standing for more components than the path has
    /// is something under the path: it counts as the whole path.
    Variant(usize),
}

/// A tree entry's name, read once to be matched against many protected components.
#[derive(Debug, Clone, Copy)]
pub struct EntryName<'a> {
    bytes: &'a [u8],
    plain: bool,
}

impl<'a> EntryName<'a> {
    pub fn new(bytes: &'a [u8]) -> EntryName<'a> {
        EntryName {
            bytes,
            plain: is_plain(bytes),
        }
    }

    /// A name whose `is_plain` is known already (`RawTree` works it out as it parses).
    pub fn classified(bytes: &'a [u8], plain: bool) -> EntryName<'a> {
        debug_assert_eq!(plain, is_plain(bytes));
        EntryName { bytes, plain }
    }
}

/// How the entry name `entry` relates to `path` (at least one component). No allocation
/// unless `entry` is not plain; for most names, one length comparison.
pub fn match_entry(entry: &[u8], path: &[Component]) -> Match {
    match_name(EntryName::new(entry), path)
}

/// `match_entry` for a name already classified.
#[inline]
pub fn match_name(entry: EntryName, path: &[Component]) -> Match {
    let Some(first) = path.first() else {
        return Match::No;
    };
    let (bytes, name, key) = (entry.bytes, first.name.as_bytes(), first.key.as_bytes());
    if entry.plain {
        // A plain name folds to its ASCII lower case, so it matches only a key of its length
        // (and is the name itself only when the name is plain too).
        if bytes.len() != key.len()
            || !bytes
                .iter()
                .zip(key)
                .all(|(a, b)| a.to_ascii_lowercase() == *b)
        {
            return Match::No;
        }
        return if bytes == name {
            Match::Exact
        } else {
            Match::Variant(1)
        };
    }
    match_folded(bytes, path)
}

/// The slow path of `match_name`, for names that are not plain (rare: kept out of line so
/// the fast path stays small).
#[cold]
#[inline(never)]
fn match_folded(bytes: &[u8], path: &[Component]) -> Match {
    if path
        .first()
        .is_some_and(|first| bytes == first.name.as_bytes())
    {
        return Match::Exact;
    }
    let folded = fold(bytes);
    if folded.is_empty() || folded.iter().zip(path).any(|(f, c)| *f != c.key) {
        return Match::No;
    }
    Match::Variant(folded.len().min(path.len()))
}

/// True for names compared by ASCII case alone: ASCII, no `\`, `:` or `/`, and not ending in
/// a dot or space.
pub fn is_plain(name: &[u8]) -> bool {
    !matches!(name.last(), Some(b'.' | b' ')) && !name.iter().any(|&b| NOT_PLAIN[b as usize])
}

/// The bytes that make a name not plain: non-ASCII, `\`, `:` and `/`.
pub static NOT_PLAIN: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0x80;
    while b < 256 {
        table[b] = true;
        b += 1;
    }
    table[b'\\' as usize] = true;
    table[b':' as usize] = true;
    table[b'/' as usize] = true;
    table
};

/// The components `name` (one entry name, or a path) stands for on disk, each folded: HFS+
/// ignorables dropped, split at `/` and `\`, each cut at its first `:` and trimmed of trailing
/// dots and spaces (NTFS), then NFD, full case folding, NFD (Unicode's canonical caseless
/// match). Empty components (`.`, `..`, doubled separators) are dropped. Bytes that are not
/// UTF-8 become U+FFFD, which no protected name holds.
pub fn fold(name: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(name);
    let kept: String = text.chars().filter(|&c| !is_hfs_ignorable(c)).collect();
    kept.split(['/', '\\'])
        .map(|part| {
            let part = part.split(':').next().unwrap_or("");
            part.trim_end_matches(['.', ' '])
        })
        .filter(|part| !part.is_empty())
        .map(|part| part.chars().nfd().default_case_fold().nfd().collect())
        .collect()
}

/// `path` as the folded components joined by `/`, recomposed (NFC): for matching globs, which
/// are written in NFC and compared ignoring case.
pub fn folded_path(path: &str) -> String {
    fold(path.as_bytes()).join("/").nfc().collect()
}

/// The code points HFS+ ignores in names (git's `next_hfs_char`).
fn is_hfs_ignorable(c: char) -> bool {
    matches!(
        c,
        '\u{200c}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{206a}'..='\u{206f}' | '\u{feff}'
    )
}

/// git's `is_hfs_dotgit`: `name` is `.git` on HFS+ (ASCII case ignored, ignorable code points
/// dropped), alone or followed by a separator.
pub fn is_hfs_dotgit(name: &[u8]) -> bool {
    // As in git, bytes that are not UTF-8 end the name: they cannot spell `.git`, but after
    // it they count as its end.
    let text = match std::str::from_utf8(name) {
        Ok(text) => text,
        Err(e) => std::str::from_utf8(&name[..e.valid_up_to()]).unwrap_or(""),
    };
    let mut chars = text.chars().filter(|&c| !is_hfs_ignorable(c));
    if chars.next() != Some('.') {
        return false;
    }
    for want in ['g', 'i', 't'] {
        match chars.next() {
            Some(c) if c.is_ascii() && c.to_ascii_lowercase() == want => {}
            _ => return false,
        }
    }
    matches!(chars.next(), None | Some('/'))
}

/// git's `is_ntfs_dotgit`: `name` is `.git` or its 8.3 short name `git~1` on NTFS, followed
/// only by dots and spaces, or by a `:` stream or a separator (`/` or `\`).
pub fn is_ntfs_dotgit(name: &[u8]) -> bool {
    let rest = if let Some(rest) = name.strip_prefix(b".") {
        match rest.get(..3) {
            Some(git) if git.eq_ignore_ascii_case(b"git") => &rest[3..],
            _ => return false,
        }
    } else {
        match name.get(..5) {
            Some(short) if short[..3].eq_ignore_ascii_case(b"git") && &short[3..] == b"~1" => {
                &name[5..]
            }
            _ => return false,
        }
    };
    for &b in rest {
        match b {
            b'/' | b'\\' | b':' => return true,
            b'.' | b' ' => {}
            _ => return false,
        }
    }
    true
}

/// git's fsck test for `.git` in one entry name: HFS+ or NTFS spellings, and on NTFS also
/// after any backslash (`a\.git` is a `.git` directory there).
pub fn is_dotgit_entry(name: &[u8]) -> bool {
    is_hfs_dotgit(name)
        || is_ntfs_dotgit(name)
        || name
            .iter()
            .enumerate()
            .any(|(i, &b)| b == b'\\' && is_ntfs_dotgit(&name[i + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(p: &str) -> Vec<Component> {
        p.split('/').map(Component::new).collect()
    }

    fn variant_of(entry: &str, protected: &str) -> Match {
        match_entry(entry.as_bytes(), &path(protected))
    }

    #[test]
    fn the_name_itself_is_exact_and_plain_names_fold_by_ascii_case() {
        assert_eq!(variant_of("qa", "qa/freeze.toml"), Match::Exact);
        assert_eq!(variant_of("QA", "qa/freeze.toml"), Match::Variant(1));
        assert_eq!(variant_of("Freeze.TOML", "freeze.toml"), Match::Variant(1));
        assert_eq!(variant_of("freeze.tom", "freeze.toml"), Match::No);
        assert_eq!(variant_of("freeze.toml.bak", "freeze.toml"), Match::No);
        assert_eq!(variant_of("qb", "qa"), Match::No);
    }

    #[test]
    fn full_case_folding_catches_long_s_and_the_kelvin_sign() {
        assert_eq!(
            variant_of("te\u{17f}ts", "tests/properties"),
            Match::Variant(1)
        );
        assert_eq!(
            variant_of("fixtures.loc\u{212a}.json", "fixtures.lock.json"),
            Match::Variant(1)
        );
        // Capital sharp s folds to "ss" (full folding, not simple).
        assert_eq!(variant_of("gro\u{1e9e}", "gross"), Match::Variant(1));
        // A protected name that is not plain matches plain spellings of its fold.
        assert_eq!(variant_of("STRASSE", "stra\u{df}e"), Match::Variant(1));
        assert_eq!(variant_of("te\u{17f}t", "tests"), Match::No);
    }

    #[test]
    fn nfd_and_nfc_spellings_are_one_name() {
        let nfc = "caf\u{e9}.md";
        let nfd = "cafe\u{301}.md";
        assert_eq!(variant_of(nfd, nfc), Match::Variant(1));
        assert_eq!(variant_of(nfc, nfd), Match::Variant(1));
        assert_eq!(variant_of("CAFE\u{301}.MD", nfc), Match::Variant(1));
        assert_eq!(variant_of("cafe.md", nfc), Match::No);
        assert_eq!(variant_of(nfc, nfc), Match::Exact);
    }

    #[test]
    fn hfs_ignorable_code_points_are_dropped() {
        for ignorable in [
            '\u{200c}', '\u{200d}', '\u{200e}', '\u{202e}', '\u{206a}', '\u{feff}',
        ] {
            let entry = format!(".git{ignorable}attributes");
            assert_eq!(
                variant_of(&entry, ".gitattributes"),
                Match::Variant(1),
                "{ignorable:?}"
            );
            let entry = format!("{ignorable}freeze.toml{ignorable}");
            assert_eq!(variant_of(&entry, "freeze.toml"), Match::Variant(1));
        }
        // A zero-width space (U+200B) is not on HFS+'s list.
        assert_eq!(variant_of("free\u{200b}ze.toml", "freeze.toml"), Match::No);
    }

    #[test]
    fn ntfs_trailing_dots_spaces_and_streams() {
        for entry in [
            "freeze.toml.",
            "freeze.toml ",
            "freeze.toml. . ",
            "freeze.toml::$DATA",
            "freeze.toml:hidden",
            "FREEZE.TOML::$DATA",
        ] {
            assert_eq!(
                variant_of(entry, "freeze.toml"),
                Match::Variant(1),
                "{entry}"
            );
        }
        assert_eq!(variant_of(".freeze.toml", "freeze.toml"), Match::No);
        assert_eq!(variant_of(" freeze.toml", "freeze.toml"), Match::No);
    }

    #[test]
    fn backslashes_separate_directories() {
        assert_eq!(
            variant_of("qa\\freeze.toml", "qa/freeze.toml"),
            Match::Variant(2)
        );
        assert_eq!(
            variant_of("QA\\Freeze.toml.", "qa/freeze.toml"),
            Match::Variant(2)
        );
        // A directory on the way, and something below the protected path.
        assert_eq!(
            variant_of("tests\\properties", "tests/properties/x.py"),
            Match::Variant(2)
        );
        assert_eq!(
            variant_of("tests\\fixtures\\a.json", "tests/fixtures"),
            Match::Variant(2)
        );
        assert_eq!(variant_of("\\qa", "qa/freeze.toml"), Match::Variant(1));
        assert_eq!(
            variant_of("qa\\\\freeze.toml", "qa/freeze.toml"),
            Match::Variant(2)
        );
        assert_eq!(variant_of("qa\\lock.json", "qa/freeze.toml"), Match::No);
        assert_eq!(variant_of("qb\\freeze.toml", "qa/freeze.toml"), Match::No);
    }

    #[test]
    fn names_that_fold_to_nothing_match_nothing() {
        for entry in [".", "..", "...", "\u{200c}", " ", "\\", ":x"] {
            assert_eq!(variant_of(entry, "qa"), Match::No, "{entry:?}");
        }
        assert_eq!(match_entry(b"caf\xe9", &path("caf\u{e9}")), Match::No);
    }

    #[test]
    fn plain_names_are_the_fast_path() {
        assert!(is_plain(b"freeze.toml"));
        assert!(is_plain(b".gitattributes"));
        for name in ["caf\u{e9}", "a\\b", "a:b", "a/b", "name.", "name ", ".."] {
            assert!(!is_plain(name.as_bytes()), "{name:?}");
        }
    }

    #[test]
    fn folded_paths_recompose_for_globs() {
        assert_eq!(folded_path("Docs/Cafe\u{301}.md."), "docs/caf\u{e9}.md");
        assert_eq!(folded_path("qa\\freeze.toml::$DATA"), "qa/freeze.toml");
    }

    #[test]
    fn dotgit_on_hfs() {
        for name in [
            ".git",
            ".GIT",
            ".g\u{200c}it",
            "\u{feff}.Git",
            ".git\u{200d}",
            ".git/x",
        ] {
            assert!(is_hfs_dotgit(name.as_bytes()), "{name:?}");
        }
        for name in [".gitx", "git", ".gi", ".g\u{200b}it", "..git", ".git\\x"] {
            assert!(!is_hfs_dotgit(name.as_bytes()), "{name:?}");
        }
        assert!(!is_hfs_dotgit(b"\xff.git"));
        assert!(!is_hfs_dotgit(b".g\xffit"));
        // git reads bytes that are not UTF-8 as the end of the name.
        assert!(is_hfs_dotgit(b".git\xff"));
    }

    #[test]
    fn dotgit_on_ntfs() {
        for name in [
            ".git",
            ".GIT",
            ".git.",
            ".git . .",
            ".git::$INDEX_ALLOCATION",
            "git~1",
            "GIT~1",
            "git~1.",
            ".git\\hooks",
        ] {
            assert!(is_ntfs_dotgit(name.as_bytes()), "{name:?}");
        }
        for name in [".gitx", "git~2", "git~1x", ".gi", "git", ".git-x", "g"] {
            assert!(!is_ntfs_dotgit(name.as_bytes()), "{name:?}");
        }
        assert!(is_dotgit_entry(b"a\\.git"));
        assert!(is_dotgit_entry(b"a\\git~1\\config"));
        assert!(!is_dotgit_entry(b"a\\.gitignore"));
        assert!(!is_dotgit_entry(b".gitattributes"));
    }
}
