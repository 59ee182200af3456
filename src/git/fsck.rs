//! git's fsck rules for one tree object (`fsck.c`, `fsck_tree`): what makes a tree malformed,
//! whatever `receive.fsckObjects` says. It judges one tree's entries; the walkers decide which
//! trees to judge.
//!
//! A malformed tree is read differently by different readers: with a name listed twice,
//! libgit2's lookup by name finds one entry while `git checkout` writes the last; with
//! entries out of order, the lookup (a binary search) may miss an entry a checkout writes;
//! `.git` and its HFS+/NTFS spellings write into the repository itself on those systems.
//! Checked here: duplicate names (also the non-adjacent kind git finds, a file and a directory
//! of one name), order (names compare as bytes, a directory's as if it ended in `/`), the
//! names `.`, `..`, empty names, names holding `/`, `.git` and its variants (also after a
//! backslash), and modes other than 100644, 100755, 120000, 040000 and 160000 (read raw: the
//! mode libgit2 reports is normalised). Not checked: zero-padded modes (libgit2 parses them
//! away; a checkout is not misled by them), null ids and overlong names.

use crate::git::raw_tree::{RawEntry, RawTree};

pub use crate::changes::{MalformedTree, Problem};
use crate::git::path_variants;

/// One problem of a tree, at the first entry that shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub problem: Problem,
    /// The entry's name, raw.
    pub entry: Vec<u8>,
    /// The entry's raw mode (for `BadFilemode`).
    pub mode: i32,
}

/// `check`, with the problems placed at the tree's path `dir` in a commit.
pub fn malformed(tree: &RawTree, dir: &str) -> Vec<MalformedTree> {
    check(tree)
        .into_iter()
        .map(|found| {
            let entry = String::from_utf8_lossy(&found.entry).into_owned();
            MalformedTree {
                tree: dir.to_string(),
                path: if dir.is_empty() {
                    entry.clone()
                } else {
                    format!("{dir}/{entry}")
                },
                entry,
                problem: found.problem,
                mode: found.mode,
            }
        })
        .collect()
}

const S_IFMT: i32 = 0o170000;
const S_IFDIR: i32 = 0o040000;

fn is_dir(mode: i32) -> bool {
    mode & S_IFMT == S_IFDIR
}

fn good_mode(mode: i32) -> bool {
    matches!(mode, 0o100644 | 0o100755 | 0o120000 | 0o040000 | 0o160000)
}

/// The problems of `tree`, one per kind, in entry order. Empty for a well-formed tree, which
/// costs one pass over its entries and no allocation.
pub fn check(tree: &RawTree) -> Vec<Found> {
    let mut found: Vec<Found> = Vec::new();
    let mut note = |problem: Problem, entry: &RawEntry| {
        if !found.iter().any(|f| f.problem == problem) {
            found.push(Found {
                problem,
                entry: entry.name_bytes().to_vec(),
                mode: entry.filemode_raw(),
            });
        }
    };
    // Files that a later directory of the same name would duplicate (git's `name_stack`):
    // indices of entries, kept only while such a directory can still follow.
    let mut candidates: Vec<usize> = Vec::new();
    let mut previous: Option<RawEntry> = None;
    for (index, entry) in tree.iter().enumerate() {
        let name = entry.name_bytes();
        let mode = entry.filemode_raw();
        if name.is_empty() {
            note(Problem::EmptyName, &entry);
        }
        // A plain name (the parse worked it out) holds no `/`, `\\` or non-ASCII byte.
        let plain = entry.is_plain();
        if !plain && name.contains(&b'/') {
            note(Problem::FullPathname, &entry);
        }
        match name {
            b"." => note(Problem::HasDot, &entry),
            b".." => note(Problem::HasDotdot, &entry),
            _ => {}
        }
        if might_be_dotgit(name, plain) && path_variants::is_dotgit_entry(name) {
            note(Problem::HasDotgit, &entry);
        }
        if !good_mode(mode) {
            note(Problem::BadFilemode, &entry);
        }
        if let Some(prev) = &previous {
            match order(prev, &entry, index - 1, tree, &mut candidates) {
                Order::Sorted => {}
                Order::Unsorted => note(Problem::NotSorted, &entry),
                Order::Duplicate => note(Problem::DuplicateEntries, &entry),
            }
        }
        previous = Some(entry);
    }
    found
}

/// A cheap filter before the `.git` tests: those need a `.`, a `g`/`G`, a backslash, or a
/// code point HFS+ ignores (non-ASCII) at the start.
fn might_be_dotgit(name: &[u8], plain: bool) -> bool {
    matches!(name.first(), Some(b'.' | b'g' | b'G'))
        || (!plain && (!name.is_ascii() || name.contains(&b'\\')))
}

enum Order {
    Sorted,
    Unsorted,
    Duplicate,
}

fn less_than_slash(c: u8) -> bool {
    c != 0 && c < b'/'
}

/// git's `verify_ordered` for adjacent entries `a` (at `a_index`) and `b`.
fn order(
    a: &RawEntry,
    b: &RawEntry,
    a_index: usize,
    tree: &RawTree,
    candidates: &mut Vec<usize>,
) -> Order {
    let (n1, n2) = (a.name_bytes(), b.name_bytes());
    let len = n1.len().min(n2.len());
    match n1[..len].cmp(&n2[..len]) {
        std::cmp::Ordering::Less => return Order::Sorted,
        std::cmp::Ordering::Greater => return Order::Unsorted,
        std::cmp::Ordering::Equal => {}
    }
    let mut c1 = n1.get(len).copied().unwrap_or(0);
    let mut c2 = n2.get(len).copied().unwrap_or(0);
    if c1 == 0 && c2 == 0 {
        return Order::Duplicate;
    }
    if c1 == 0 && is_dir(a.filemode_raw()) {
        c1 = b'/';
    }
    if c2 == 0 && is_dir(b.filemode_raw()) {
        c2 = b'/';
    }
    // `foo`, `foo.bar`, `foo/`: the file `foo` and the directory `foo` are not adjacent.
    if c1 == 0 && less_than_slash(c2) {
        candidates.push(a_index);
    } else if c2 == b'/' && less_than_slash(c1) {
        while let Some(i) = candidates.pop() {
            let Some(file) = tree.get(i) else { continue };
            let Some(rest) = n2.strip_prefix(file.name_bytes()) else {
                continue;
            };
            if rest.is_empty() {
                return Order::Duplicate;
            }
            if less_than_slash(rest[0]) {
                candidates.push(i);
                break;
            }
        }
    }
    if c1 < c2 {
        Order::Sorted
    } else {
        Order::Unsorted
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use git2::{ObjectType, Oid, Repository};

    /// A tree of exactly `entries` (mode, name), byte for byte: libgit2's object database
    /// writes what it is given.
    fn tree(repo: &Repository, entries: &[(&str, &[u8])]) -> RawTree {
        let blob = repo.blob(b"x\n").unwrap();
        let raw = crate::git::raw_tree::encode(entries, blob.as_bytes());
        let odb = repo.odb().unwrap();
        let id: Oid = odb.write(ObjectType::Tree, &raw).unwrap();
        RawTree::read(&odb, id).unwrap()
    }

    fn problems(entries: &[(&str, &[u8])]) -> Vec<(Problem, String)> {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(dir.path()).unwrap();
        check(&tree(&repo, entries))
            .into_iter()
            .map(|f| (f.problem, String::from_utf8_lossy(&f.entry).into_owned()))
            .collect()
    }

    fn one(problem: Problem, entry: &str) -> Vec<(Problem, String)> {
        vec![(problem, entry.to_string())]
    }

    #[test]
    fn a_well_formed_tree_has_no_problems() {
        assert_eq!(
            problems(&[
                ("100644", b".gitattributes"),
                ("100644", b"a.c"),
                ("40000", b"a"),
                ("100755", b"b"),
                ("120000", b"c"),
                ("100644", b"caf\xc3\xa9"),
                ("160000", b"d"),
            ]),
            vec![]
        );
    }

    #[test]
    fn duplicates_adjacent_and_apart() {
        assert_eq!(
            problems(&[("100644", b"a.py"), ("100644", b"a.py")]),
            one(Problem::DuplicateEntries, "a.py")
        );
        // A file and a directory of one name: the directory sorts as `foo/`, after `foo.bar`.
        assert_eq!(
            problems(&[
                ("100644", b"foo"),
                ("100644", b"foo.bar"),
                ("100644", b"foo.bar.baz"),
                ("40000", b"foo.bar"),
                ("40000", b"foo"),
            ]),
            one(Problem::DuplicateEntries, "foo.bar")
        );
        assert_eq!(
            problems(&[
                ("100644", b"foo"),
                ("100644", b"foo.bar"),
                ("40000", b"foo")
            ]),
            one(Problem::DuplicateEntries, "foo")
        );
    }

    #[test]
    fn order_is_git_order() {
        assert_eq!(
            problems(&[("100644", b"b"), ("100644", b"a")]),
            one(Problem::NotSorted, "a")
        );
        // A directory `a` sorts as `a/`, after `a.c`; a file `a` before it.
        assert_eq!(
            problems(&[("40000", b"a"), ("100644", b"a.c")]),
            one(Problem::NotSorted, "a.c")
        );
        assert!(problems(&[("100644", b"a"), ("100644", b"a.c")]).is_empty());
    }

    #[test]
    fn dot_names_and_paths() {
        assert_eq!(problems(&[("40000", b".")]), one(Problem::HasDot, "."));
        assert_eq!(problems(&[("40000", b"..")]), one(Problem::HasDotdot, ".."));
        assert_eq!(
            problems(&[("100644", b"a/b")]),
            one(Problem::FullPathname, "a/b")
        );
        for name in [
            ".git",
            ".GIT",
            ".gi\u{200c}t",
            "\u{feff}.git",
            ".git.",
            ".git ",
            ".git::$INDEX_ALLOCATION",
            "git~1",
            "x\\.git",
        ] {
            assert_eq!(
                problems(&[("40000", name.as_bytes())]),
                one(Problem::HasDotgit, name),
                "{name:?}"
            );
        }
    }

    #[test]
    fn modes_are_read_raw() {
        for mode in ["100664", "100600", "104755", "100000", "140000", "0"] {
            assert_eq!(
                problems(&[(mode, b"f")]),
                one(Problem::BadFilemode, "f"),
                "{mode}"
            );
        }
    }

    #[test]
    fn each_problem_once_at_its_first_entry() {
        assert_eq!(
            problems(&[
                ("100644", b"b"),
                ("100644", b"a"),
                ("100664", b"c"),
                ("100664", b"c"),
                ("100644", b"a"),
            ]),
            vec![
                (Problem::NotSorted, "a".to_string()),
                (Problem::BadFilemode, "c".to_string()),
                (Problem::DuplicateEntries, "c".to_string()),
            ]
        );
    }
}
