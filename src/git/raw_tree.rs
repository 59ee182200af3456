//! Tree objects read raw from the object database and parsed here. The history walks read
//! tens of thousands of trees and look at every entry of the busy ones; through libgit2's
//! `Tree` each entry costs calls across the FFI (its name is found with `strlen` every time)
//! and each tree a parse into libgit2's own entry list. Here a tree is one buffer and an index
//! of where each entry's name, mode and id sit (what those calls cost: BENCHMARKS.md,
//! "Measured choices", M5).
//!
//! The parse is git's (`decode_tree_entry`): an octal mode, a space, a name up to a NUL, an
//! id as long as the tree's own (20 bytes in a SHA-1 repository, 32 in a SHA-256 one). Stricter than libgit2, which also takes a sign or leading blanks before the
//! mode: a tree git itself cannot read is an error here, never read one way by guard and
//! another by git.

use std::cmp::Ordering;
use std::ops::Range;

use git2::{ObjectType, Odb, Oid};

use crate::git::path_variants::{self, EntryName};

/// A SHA-1 id's length, the one the unit tests build trees with.
#[cfg(test)]
const HASH_LEN: usize = 20;
const S_IFMT: i32 = 0o170000;
const S_IFDIR: i32 = 0o040000;
const S_IFLNK: i32 = 0o120000;
const S_IFGITLINK: i32 = 0o160000;

/// One tree object: its bytes and where each entry sits in them.
pub struct RawTree {
    id: Oid,
    data: std::rc::Rc<[u8]>,
    entries: Vec<Slot>,
    /// How long its entries' ids are: as long as its own (a repository has one format).
    hash_len: usize,
    /// Whether its entries are in git's order, each name once (`in_git_order`), once asked.
    in_order: std::cell::OnceCell<bool>,
}

/// Where one entry's name and id start in the tree's bytes, and its mode as written.
#[derive(Clone, Copy)]
struct Slot {
    name: u32,
    name_len: u32,
    mode: i32,
    /// `path_variants::is_plain` of the name: the walks compare every name of a busy
    /// directory with a few protected ones, and a plain name of another length is no match.
    plain: bool,
}

/// One entry of a [`RawTree`].
#[derive(Clone, Copy)]
pub struct RawEntry<'t> {
    name: &'t [u8],
    id: &'t [u8],
    mode: i32,
    plain: bool,
}

impl RawTree {
    /// Reads and parses the tree `id` from `odb`. An object that is not a tree, or a tree
    /// git could not read, is an error that names it.
    pub fn read(odb: &Odb, id: Oid) -> Result<RawTree, git2::Error> {
        let object = odb.read(id)?;
        if object.kind() != ObjectType::Tree {
            return Err(git2::Error::from_str(&format!(
                "object {id} is a {}, not a tree",
                object.kind()
            )));
        }
        RawTree::from_bytes(id, object.data().into())
    }

    /// Parses `data` as the content of tree `id` (read by other means than libgit2's). A tree
    /// git could not read is an error that names it.
    pub fn from_bytes(id: Oid, data: std::rc::Rc<[u8]>) -> Result<RawTree, git2::Error> {
        let hash_len = id.as_bytes().len();
        let entries = parse(&data, hash_len)
            .map_err(|why| git2::Error::from_str(&format!("malformed tree {id}: {why}")))?;
        Ok(RawTree {
            id,
            data,
            entries,
            hash_len,
            in_order: std::cell::OnceCell::new(),
        })
    }

    /// A tree libgit2 has already read, re-encoded (modes as libgit2 parsed them: a
    /// zero-padded mode loses its zeros), for code that holds a `git2::Tree`.
    pub fn of(tree: &git2::Tree) -> RawTree {
        let mut data = Vec::new();
        for e in tree.iter() {
            data.extend_from_slice(format!("{:o} ", e.filemode_raw()).as_bytes());
            data.extend_from_slice(e.name_bytes());
            data.push(0);
            data.extend_from_slice(e.id().as_bytes());
        }
        let hash_len = tree.id().as_bytes().len();
        let entries = parse(&data, hash_len).expect("libgit2 parsed these entries");
        RawTree {
            id: tree.id(),
            data: data.into(),
            entries,
            hash_len,
            in_order: std::cell::OnceCell::new(),
        }
    }

    pub fn id(&self) -> Oid {
        self.id
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entry at `index`, in the order the tree lists them.
    pub fn get(&self, index: usize) -> Option<RawEntry<'_>> {
        self.entries.get(index).map(|&slot| self.entry(slot))
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = RawEntry<'_>> + '_ {
        self.entries.iter().map(|&slot| self.entry(slot))
    }

    /// Where the entry in `slot` ends: after its name, the NUL and the id.
    fn slot_end(&self, slot: Slot) -> usize {
        slot.name as usize + slot.name_len as usize + 1 + self.hash_len
    }

    fn entry(&self, slot: Slot) -> RawEntry<'_> {
        let data = &self.data;
        let name = slot.name as usize;
        let end = name + slot.name_len as usize;
        RawEntry {
            name: &data[name..end],
            id: &data[end + 1..end + 1 + self.hash_len],
            mode: slot.mode,
            plain: slot.plain,
        }
    }

    /// The entries in which this tree and `other` differ: ranges of each tree's entries such
    /// that every entry before them is the same entry (mode, name and id, byte for byte) at the
    /// same index in both trees, and every entry after them the same at the same distance from
    /// the end. A name no entry in either range has is therefore listed the same way, the same
    /// number of times, in both. Found from the trees' bytes compared from each end, not entry
    /// by entry: in a busy directory where a commit changed one file, that is one entry each.
    /// Holds for malformed trees too (entries out of order, a name twice): nothing here
    /// depends on the entries' order.
    pub fn differing(&self, other: &RawTree) -> (Range<usize>, Range<usize>) {
        let (a, b) = (&self.data[..], &other.data[..]);
        let prefix = common_prefix(a, b);
        // Entries that end within the common prefix were parsed from the same bytes at the
        // same offsets in both trees.
        let head = self
            .entries
            .partition_point(|&slot| self.slot_end(slot) <= prefix);
        let suffix = common_suffix(a, b);
        // `k` entries from the end are the same in both when the k-th from the end starts at
        // the same distance from the end in both and within the common suffix: both trees
        // parse the same bytes from there. If that holds for `k`, it holds for every smaller
        // `k`, so the largest is found by bisection.
        let same_tail = |k: usize| {
            let from_end = |tree: &RawTree| tree.data.len() - tree.start(tree.entries.len() - k);
            let distance = from_end(self);
            distance == from_end(other) && distance <= suffix
        };
        let (mut lo, mut hi) = (0, self.entries.len().min(other.entries.len()) - head);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if same_tail(mid) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        (
            head..self.entries.len() - lo,
            head..other.entries.len() - lo,
        )
    }

    /// Whether the entries are in git's order (`git_order`), each strictly after the one before
    /// it, and no file shares a directory's name (`a` sorts apart from `a/`, so order alone
    /// allows both), as git writes every tree: then no name is listed twice, and an entry is
    /// found by binary search. Worked out once per tree, when first asked.
    pub fn in_git_order(&self) -> bool {
        *self.in_order.get_or_init(|| {
            let at = |i: usize| self.get(i).expect("an index of the tree");
            for i in 1..self.len() {
                let (last, next) = (at(i - 1), at(i));
                if git_order(&last, &next) != Ordering::Less {
                    return false;
                }
                if !next.is_dir() {
                    continue;
                }
                // A file named like this directory sorts before it, and every entry between
                // the two begins with the name: look back while they do.
                let name = next.name_bytes();
                for j in (0..i).rev() {
                    let before = at(j);
                    if !before.name_bytes().starts_with(name) {
                        break;
                    }
                    if before.name_bytes().len() == name.len() && !before.is_dir() {
                        return false;
                    }
                }
            }
            true
        })
    }

    /// The indices of the entries of this tree and of `other` that can differ, by
    /// `differing`'s promise: a name none of them has is listed alike in both trees. Where
    /// both ranges hold as many entries (files changed, none added or removed: the usual
    /// commit to a busy directory, where changes far apart leave a wide range between them),
    /// the ranges are compared entry by entry and only entries that differ from their
    /// counterpart at the same index are kept; otherwise every entry of both ranges.
    pub fn differing_indices(&self, other: &RawTree) -> (Vec<usize>, Vec<usize>) {
        let (a, b) = self.differing(other);
        if a.len() != b.len() {
            return (a.collect(), b.collect());
        }
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        let (mut at, mut other_at) = (self.start(a.start), other.start(b.start));
        for (i, j) in a.zip(b) {
            let (end, other_end) = (
                self.slot_end(self.entries[i]),
                other.slot_end(other.entries[j]),
            );
            if !same_bytes(&self.data[at..end], &other.data[other_at..other_end]) {
                ours.push(i);
                theirs.push(j);
            }
            (at, other_at) = (end, other_end);
        }
        (ours, theirs)
    }

    /// Where the entry at `index` starts in the tree's bytes.
    fn start(&self, index: usize) -> usize {
        index
            .checked_sub(1)
            .map_or(0, |i| self.slot_end(self.entries[i]))
    }

    /// The entry named `name`, found as libgit2's `git_tree_entry_byname` finds it: a binary
    /// search on the names' common prefix, then a look forwards and backwards among the
    /// entries sharing it (`tree_key_search`). In a well-formed tree that is the entry of that
    /// name; in an unsorted one it can miss an entry a checkout writes (callers that must read
    /// a malformed tree as a checkout does search it linearly).
    pub fn get_name_bytes(&self, name: &[u8]) -> Option<RawEntry<'_>> {
        let homing = |e: &RawEntry| {
            let n = name.len().min(e.name.len());
            name[..n].cmp(&e.name[..n])
        };
        // libgit2's `git_array_search`, step for step.
        let (mut base, mut lim) = (0usize, self.entries.len());
        let mut found = false;
        while lim != 0 {
            let part = base + (lim >> 1);
            match homing(&self.entry(self.entries[part])) {
                Ordering::Equal => {
                    base = part;
                    found = true;
                    break;
                }
                Ordering::Greater => {
                    base = part + 1;
                    lim -= 1;
                }
                Ordering::Less => {}
            }
            lim >>= 1;
        }
        if !found {
            return None;
        }
        for e in self.entries[base..].iter().map(|&s| self.entry(s)) {
            if homing(&e) == Ordering::Less {
                break;
            }
            if e.name == name {
                return Some(e);
            }
        }
        for e in self.entries[..base].iter().rev().map(|&s| self.entry(s)) {
            if homing(&e) == Ordering::Greater {
                break;
            }
            if e.name == name {
                return Some(e);
            }
        }
        None
    }
}

impl<'t> RawEntry<'t> {
    pub fn name_bytes(&self) -> &'t [u8] {
        self.name
    }

    /// `path_variants::is_plain` of the name, worked out when the tree was parsed.
    pub fn is_plain(&self) -> bool {
        self.plain
    }

    /// The name, classified for `path_variants::match_name`.
    pub fn entry_name(&self) -> EntryName<'t> {
        EntryName::classified(self.name, self.plain)
    }

    /// The object id's bytes (comparing these needs no call into libgit2).
    pub fn id_bytes(&self) -> &'t [u8] {
        self.id
    }

    pub fn id(&self) -> Oid {
        Oid::from_bytes(self.id).expect("a tree entry's id is as long as its tree's")
    }

    /// The mode as the tree writes it.
    pub fn filemode_raw(&self) -> i32 {
        self.mode
    }

    /// The mode as libgit2 reports it (`git_tree_entry_filemode`): normalised to one of
    /// git's five.
    pub fn filemode(&self) -> i32 {
        let mode = self.mode;
        if mode & S_IFMT == S_IFDIR {
            S_IFDIR
        } else if mode & 0o111 != 0 {
            0o100755
        } else if mode & S_IFMT == S_IFGITLINK {
            S_IFGITLINK
        } else if mode & S_IFMT == S_IFLNK {
            S_IFLNK
        } else {
            0o100644
        }
    }

    /// The kind of object the entry names, as libgit2's `git_tree_entry_type` tells it.
    pub fn kind(&self) -> Option<ObjectType> {
        Some(if self.mode & S_IFMT == S_IFGITLINK {
            ObjectType::Commit
        } else if self.is_dir() {
            ObjectType::Tree
        } else {
            ObjectType::Blob
        })
    }

    pub fn is_dir(&self) -> bool {
        self.mode & S_IFMT == S_IFDIR
    }
}

/// Whether `a` and `b` are the same bytes: a tree entry's few dozen, compared eight at a time
/// in line (a `memcmp` call for each entry of a busy directory cost more than the compare).
#[inline]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (a_words, b_words) = (a.chunks_exact(8), b.chunks_exact(8));
    let tails_equal = a_words.remainder() == b_words.remainder();
    let word = |w: &[u8]| u64::from_ne_bytes(w.try_into().expect("8 bytes"));
    tails_equal && a_words.zip(b_words).all(|(x, y)| word(x) == word(y))
}

/// How many bytes `a` and `b` share from the start. Compared a block at a time (a slice
/// comparison is a `memcmp`), then byte by byte inside the block that differs.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 64;
    let n = a.len().min(b.len());
    let mut at = 0;
    while at + BLOCK <= n && a[at..at + BLOCK] == b[at..at + BLOCK] {
        at += BLOCK;
    }
    at + a[at..n]
        .iter()
        .zip(&b[at..n])
        .take_while(|(x, y)| x == y)
        .count()
}

/// How many bytes `a` and `b` share at the end.
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 64;
    let n = a.len().min(b.len());
    let (a, b) = (&a[a.len() - n..], &b[b.len() - n..]);
    let mut at = n;
    while at >= BLOCK && a[at - BLOCK..at] == b[at - BLOCK..at] {
        at -= BLOCK;
    }
    n - at
        + a[..at]
            .iter()
            .rev()
            .zip(b[..at].iter().rev())
            .take_while(|(x, y)| x == y)
            .count()
}

/// The entries of a tree object's bytes. The modes git writes are read in one load
/// (`common_mode`) and names eight bytes at a time (`name_end`): a `memchr` call for each few
/// bytes, and a second pass over the name for `is_plain`, were a fifth of the history scan.
fn parse(data: &[u8], hash_len: usize) -> Result<Vec<Slot>, &'static str> {
    // Entries are at least "0 a\0" and an id: a bound that never over-allocates much.
    let mut slots = Vec::with_capacity(data.len() / (hash_len + 8));
    let mut at = 0;
    while at < data.len() {
        let mode = match common_mode(data, at) {
            Some((mode, len)) => {
                at += len - 1;
                mode
            }
            None => {
                let rest = &data[at..];
                let space =
                    memchr::memchr(b' ', rest).ok_or("an entry's mode ends without a space")?;
                let mode =
                    parse_mode(&rest[..space]).ok_or("an entry's mode is not an octal number")?;
                at += space;
                mode
            }
        };
        let name_at = at + 1;
        let (end, plain_bytes) =
            name_end(data, name_at).ok_or("an entry's name ends without a NUL")?;
        let name = &data[name_at..end];
        if name.is_empty() {
            return Err("an entry has an empty name");
        }
        let id_at = end + 1;
        if data.len() - id_at < hash_len {
            return Err("the last entry's id is cut short");
        }
        let (Ok(name_start), Ok(name_len)) = (u32::try_from(name_at), u32::try_from(name.len()))
        else {
            return Err("the tree is larger than 4 GiB");
        };
        slots.push(Slot {
            name: name_start,
            name_len,
            mode,
            plain: plain_bytes && !matches!(name.last(), Some(b'.' | b' ')),
        });
        at = id_at + hash_len;
    }
    Ok(slots)
}

/// The mode at `at` when it is one of the modes git writes, with its space, and the length of
/// both: nearly every entry, read with one load instead of a digit at a time.
fn common_mode(data: &[u8], at: usize) -> Option<(i32, usize)> {
    const MODES: [(&[u8], i32); 5] = [
        (b"100644 ", 0o100644),
        (b"40000 ", 0o040000),
        (b"100755 ", 0o100755),
        (b"120000 ", 0o120000),
        (b"160000 ", 0o160000),
    ];
    let word = u64::from_le_bytes(data.get(at..at + 8)?.try_into().expect("eight bytes"));
    MODES.iter().find_map(|&(text, mode)| {
        let mut padded = [0u8; 8];
        padded[..text.len()].copy_from_slice(text);
        let mask = u64::MAX >> (64 - 8 * text.len());
        (word & mask == u64::from_le_bytes(padded)).then_some((mode, text.len()))
    })
}

/// Where the name starting at `at` ends (its NUL), and whether it holds no byte that makes a
/// name not plain (`path_variants::NOT_PLAIN`). Eight bytes at a time: a byte is zero, or
/// equal to one of the three plain-breaking ASCII bytes, where `zero_bytes` of the word (or
/// of the word XOR that byte in every lane) has its lane's top bit set. Those tests can also
/// set the bit of a lane after a lane that truly matches, never before one, so below the first
/// NUL they are exact.
fn name_end(data: &[u8], mut at: usize) -> Option<(usize, bool)> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero_bytes = |w: u64| w.wrapping_sub(ONES) & !w & HIGHS;
    let mut plain = true;
    while let Some(chunk) = data.get(at..at + 8) {
        let word = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        let special = (word & HIGHS)
            | zero_bytes(word ^ (ONES * u64::from(b'\\')))
            | zero_bytes(word ^ (ONES * u64::from(b':')))
            | zero_bytes(word ^ (ONES * u64::from(b'/')));
        let zeros = zero_bytes(word);
        if zeros == 0 {
            plain &= special == 0;
            at += 8;
            continue;
        }
        let nul = (zeros.trailing_zeros() / 8) as usize;
        let before_nul = (1u64 << (nul * 8)) - 1;
        return Some((at + nul, plain && special & before_nul == 0));
    }
    for (i, &b) in data[at..].iter().enumerate() {
        if b == 0 {
            return Some((at + i, plain));
        }
        plain &= !path_variants::NOT_PLAIN[b as usize];
    }
    None
}

/// An octal mode as git reads it: one or more octal digits (leading zeros allowed).
fn parse_mode(digits: &[u8]) -> Option<i32> {
    if digits.is_empty() || digits.len() > 10 {
        return None;
    }
    let mut mode: i32 = 0;
    for &d in digits {
        if !(b'0'..=b'7').contains(&d) {
            return None;
        }
        mode = mode.checked_mul(8)?.checked_add(i32::from(d - b'0'))?;
    }
    Some(mode)
}

/// The bytes of a tree object of exactly `entries` (mode, name as written), each naming the
/// object `id`: for tests that need trees git would never write.
#[cfg(test)]
pub fn encode(entries: &[(&str, &[u8])], id: &[u8]) -> Vec<u8> {
    let mut raw = Vec::new();
    for (mode, name) in entries {
        raw.extend_from_slice(mode.as_bytes());
        raw.push(b' ');
        raw.extend_from_slice(name);
        raw.push(0);
        raw.extend_from_slice(id);
    }
    raw
}

/// How git orders tree entries: by name, a directory's name as if it ended in `/`.
pub(crate) fn git_order(a: &RawEntry, b: &RawEntry) -> Ordering {
    let key = |e: &RawEntry| (e.filemode() & 0o170000) == 0o040000;
    git_order_of(a.name_bytes(), key(a), b.name_bytes(), key(b))
}

/// `git_order` of two names, each said to be a directory's or not.
pub(crate) fn git_order_of(a: &[u8], a_dir: bool, b: &[u8], b_dir: bool) -> Ordering {
    let n = a.len().min(b.len());
    a[..n].cmp(&b[..n]).then_with(|| {
        let end = |name: &[u8], dir: bool| match name.get(n) {
            Some(&c) => Some(c),
            None if dir => Some(b'/'),
            None => None,
        };
        end(a, a_dir).cmp(&end(b, b_dir))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::path_variants::is_plain;
    use git2::Repository;

    fn raw(entries: &[(&str, &[u8])]) -> Vec<u8> {
        encode(entries, &[7u8; HASH_LEN])
    }

    fn repo() -> (tempfile::TempDir, Repository) {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(dir.path()).unwrap();
        (dir, repo)
    }

    #[test]
    fn entries_read_as_libgit2_reads_them() {
        let (_dir, repo) = repo();
        let bytes = raw(&[
            ("100644", b"a.txt"),
            ("100755", b"run"),
            ("100664", b"odd"),
            ("120000", b"link"),
            ("160000", b"sub"),
            ("40000", b"z"),
            ("0100644", b"padded"),
        ]);
        let odb = repo.odb().unwrap();
        let id = odb.write(ObjectType::Tree, &bytes).unwrap();
        let ours = RawTree::read(&odb, id).unwrap();
        let theirs = repo.find_tree(id).unwrap();
        assert_eq!(ours.len(), theirs.len());
        for (a, b) in ours.iter().zip(theirs.iter()) {
            assert_eq!(a.name_bytes(), b.name_bytes());
            assert_eq!(a.id(), b.id());
            assert_eq!(a.filemode_raw(), b.filemode_raw());
            assert_eq!(a.filemode(), b.filemode(), "{:?}", b.name());
            assert_eq!(a.kind(), b.kind(), "{:?}", b.name());
        }
        // Hand-checked against git's modes: 100664 is a plain file, 0100644 one too.
        let modes: Vec<i32> = ours.iter().map(|e| e.filemode()).collect();
        assert_eq!(
            modes,
            [
                0o100644, 0o100755, 0o100644, 0o120000, 0o160000, 0o040000, 0o100644
            ]
        );
    }

    #[test]
    fn lookup_by_name_finds_files_and_directories() {
        let (_dir, repo) = repo();
        // git's order: `a` (file), `a-b`, `a.txt`, `a` (directory, as `a/`), `a0`, `b`.
        let bytes = raw(&[
            ("100644", b"a-b"),
            ("100644", b"a.txt"),
            ("40000", b"a"),
            ("100644", b"a0"),
            ("100644", b"b"),
        ]);
        let odb = repo.odb().unwrap();
        let id = odb.write(ObjectType::Tree, &bytes).unwrap();
        let ours = RawTree::read(&odb, id).unwrap();
        let theirs = repo.find_tree(id).unwrap();
        for name in [&b"a"[..], b"a-b", b"a.txt", b"a0", b"b", b"c", b"", b"a/"] {
            assert_eq!(
                ours.get_name_bytes(name).map(|e| e.name_bytes().to_vec()),
                theirs.get_name_bytes(name).map(|e| e.name_bytes().to_vec()),
                "{}",
                String::from_utf8_lossy(name)
            );
        }
        assert!(ours.get_name_bytes(b"a").unwrap().is_dir());
    }

    #[test]
    fn lookup_by_name_matches_libgit2_on_unsorted_and_duplicated_trees() {
        // Trees git would refuse (out of order, names twice) are exactly where a lookup can
        // miss: it must miss the same entries libgit2's does, for every name and prefix.
        let (_dir, repo) = repo();
        let odb = repo.odb().unwrap();
        let alphabet: [&[u8]; 6] = [b"a", b"b", b"ab", b"a.", b"ba", b"a-"];
        let mut state = 0x2545_f491_u32;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state
        };
        let mut misses = 0;
        for _ in 0..300 {
            let n = (next() % 7) as usize;
            let entries: Vec<(&str, &[u8])> = (0..n)
                .map(|_| {
                    let mode = if next() % 3 == 0 { "40000" } else { "100644" };
                    (mode, alphabet[(next() % 6) as usize])
                })
                .collect();
            let id = odb.write(ObjectType::Tree, &raw(&entries)).unwrap();
            let ours = RawTree::read(&odb, id).unwrap();
            let theirs = repo.find_tree(id).unwrap();
            for name in alphabet.iter().chain([&&b"c"[..], &&b""[..], &&b"aab"[..]]) {
                let a = ours
                    .get_name_bytes(name)
                    .map(|e| (e.name_bytes().to_vec(), e.filemode()));
                let b = theirs
                    .get_name_bytes(name)
                    .map(|e| (e.name_bytes().to_vec(), e.filemode()));
                misses += usize::from(b.is_none() && entries.iter().any(|(_, n)| n == name));
                assert_eq!(a, b, "{entries:?}: {}", String::from_utf8_lossy(name));
            }
        }
        // The random trees did include lookups that miss a listed entry.
        assert!(misses > 0);
    }

    /// A tree of `entries` (mode, name, id), parsed here without a repository.
    fn tree(entries: &[(&str, Vec<u8>, [u8; HASH_LEN])]) -> RawTree {
        let mut data = Vec::new();
        for (mode, name, id) in entries {
            data.extend_from_slice(mode.as_bytes());
            data.push(b' ');
            data.extend_from_slice(name);
            data.push(0);
            data.extend_from_slice(id);
        }
        let entries = parse(&data, HASH_LEN).unwrap();
        RawTree {
            id: Oid::from_bytes(&[0; HASH_LEN]).unwrap(),
            data: data.into(),
            entries,
            hash_len: HASH_LEN,
            in_order: std::cell::OnceCell::new(),
        }
    }

    fn same(a: RawEntry, b: RawEntry) -> bool {
        (a.name_bytes(), a.filemode_raw(), a.id_bytes())
            == (b.name_bytes(), b.filemode_raw(), b.id_bytes())
    }

    /// What `differing` promises, checked entry by entry.
    fn assert_differing_holds(new: &RawTree, old: &RawTree) -> (usize, usize) {
        let (a, b) = new.differing(old);
        let what = || format!("{:?} {:?} of {} and {}", a, b, new.len(), old.len());
        assert!(
            a.start == b.start && a.end <= new.len() && b.end <= old.len(),
            "{}",
            what()
        );
        assert!(a.start <= a.end && b.start <= b.end, "{}", what());
        for i in 0..a.start {
            assert!(same(new.get(i).unwrap(), old.get(i).unwrap()), "{}", what());
        }
        let tail = new.len() - a.end;
        assert_eq!(tail, old.len() - b.end, "{}", what());
        for k in 1..=tail {
            let (n, o) = (new.get(new.len() - k), old.get(old.len() - k));
            assert!(same(n.unwrap(), o.unwrap()), "{}", what());
        }
        (a.len(), b.len())
    }

    #[test]
    fn differing_entries_of_a_busy_directory_are_the_few_that_changed() {
        let id = |n: usize| {
            let mut id = [0u8; HASH_LEN];
            id[..8].copy_from_slice(&(n as u64).to_be_bytes());
            id
        };
        type Entries = Vec<(&'static str, Vec<u8>, [u8; HASH_LEN])>;
        let base: Entries = (0..200)
            .map(|i| ("40000", format!("dir{i:03}").into_bytes(), id(i)))
            .collect();
        let old = tree(&base);
        assert_eq!(old.differing(&old), (200..200, 200..200));
        type Case = (&'static str, fn(&mut Entries), (usize, usize));
        let cases: [Case; 7] = [
            ("one id changed", |t| t[117].2[19] = 1, (1, 1)),
            ("the first changed", |t| t[0].2[0] = 1, (1, 1)),
            ("the last changed", |t| t[199].2[5] = 1, (1, 1)),
            (
                "one added",
                |t| t.insert(50, ("100644", b"dir050a".to_vec(), [3; 20])),
                (1, 0),
            ),
            ("one removed", |t| drop(t.remove(50)), (0, 1)),
            (
                "one renamed",
                |t| t[20].1 = b"dir020-renamed".to_vec(),
                (1, 1),
            ),
            ("a mode changed", |t| t[30].0 = "100755", (1, 1)),
        ];
        for (what, edit, want) in cases {
            let mut entries = base.clone();
            edit(&mut entries);
            let new = tree(&entries);
            assert_eq!(assert_differing_holds(&new, &old), want, "{what}");
            assert_eq!(
                assert_differing_holds(&old, &new),
                (want.1, want.0),
                "{what}"
            );
        }
        // The same bytes at the end, parsed from other offsets: `0 a` (mode 0, name `a`) is
        // the tail of `100644 0 a` (name `0 a`), with the same id.
        let mut entries = base.clone();
        entries.push(("0", b"a".to_vec(), [9; 20]));
        let ends_in_a = tree(&entries);
        entries.pop();
        entries.push(("100644", b"0 a".to_vec(), [9; 20]));
        let ends_in_0_a = tree(&entries);
        assert_eq!(assert_differing_holds(&ends_in_a, &ends_in_0_a), (1, 1));
        assert_eq!(assert_differing_holds(&ends_in_0_a, &ends_in_a), (1, 1));
    }

    #[test]
    fn differing_holds_for_any_two_trees() {
        // Ids of a few bytes that also spell modes, spaces and NULs, so that the same bytes can
        // parse into entries at other offsets; names twice and out of order.
        let names: [&[u8]; 5] = [b"a", b"b", b"0 a", b"aa", b"0"];
        let modes = ["100644", "40000", "100755", "0"];
        let mut next = crate::git::test_random(0x9e37_79b9);
        let mut shifted = 0;
        for _ in 0..3000 {
            let random_entry = |next: &mut dyn FnMut(usize) -> usize| {
                let bytes = [0u8, b' ', b'1', b'a'];
                let mut id = [b'a'; HASH_LEN];
                for b in id.iter_mut().skip(next(HASH_LEN)) {
                    *b = bytes[next(4)];
                }
                (modes[next(4)], names[next(5)].to_vec(), id)
            };
            let old: Vec<_> = (0..next(8)).map(|_| random_entry(&mut next)).collect();
            let mut new = old.clone();
            for _ in 0..next(3) {
                let at = next(new.len() + 1);
                match next(3) {
                    0 => new.insert(at, random_entry(&mut next)),
                    1 if at < new.len() => drop(new.remove(at)),
                    _ if at < new.len() => new[at].2[next(HASH_LEN)] = b' ',
                    _ => {}
                }
            }
            let (new, old) = (tree(&new), tree(&old));
            let (a, b) = assert_differing_holds(&new, &old);
            shifted += usize::from(a + b < new.len() + old.len() && a != b);
            // What callers rely on: a name in neither range is listed alike in both trees.
            let (ra, rb) = new.differing(&old);
            for name in names {
                let in_range = |t: &RawTree, r: &Range<usize>| {
                    r.clone().any(|i| t.get(i).unwrap().name_bytes() == name)
                };
                if in_range(&new, &ra) || in_range(&old, &rb) {
                    continue;
                }
                let listed = |t: &RawTree| -> Vec<(i32, Vec<u8>)> {
                    t.iter()
                        .filter(|e| e.name_bytes() == name)
                        .map(|e| (e.filemode_raw(), e.id_bytes().to_vec()))
                        .collect()
                };
                assert_eq!(listed(&new), listed(&old));
            }
        }
        // The random pairs did include insertions and removals beside shared entries.
        assert!(shifted > 100, "{shifted}");
    }

    #[test]
    fn a_parsed_name_is_plain_exactly_when_is_plain_says_so() {
        // Every byte that matters, at every place in names as long as two words, with the
        // entry at the end of the tree (no word to read past the name) and before another.
        let interesting = [
            b'a', b'.', b' ', b'\\', b':', b'/', 0x7f, 0x80, 0xc3, 0xff, b'0',
        ];
        let mut checked = 0;
        for len in 1..=17 {
            for at in 0..len {
                for &b in &interesting {
                    let mut name = vec![b'x'; len];
                    name[at] = b;
                    for followed in [false, true] {
                        // An id of bytes that are not plain, read in the same word as the
                        // name's end.
                        let mut entries = vec![("100644", name.clone(), [0xff; HASH_LEN])];
                        if followed {
                            entries.push(("100644", b"z".to_vec(), [0; HASH_LEN]));
                        }
                        let parsed = tree(&entries);
                        let entry = parsed.get(0).unwrap();
                        assert_eq!(entry.name_bytes(), &name[..]);
                        assert_eq!(entry.is_plain(), is_plain(&name), "{name:?}");
                        checked += usize::from(!is_plain(&name));
                    }
                }
            }
        }
        assert!(checked > 1000, "{checked}");
    }

    #[test]
    fn malformed_tree_bytes_are_errors() {
        let (_dir, repo) = repo();
        let odb = repo.odb().unwrap();
        let mut cut = raw(&[("100644", b"a")]);
        cut.truncate(cut.len() - 1);
        for (bytes, why) in [
            (b"100644 a".to_vec(), "without a NUL"),
            (b"100644".to_vec(), "without a space"),
            (raw(&[("10x644", b"a")]), "not an octal number"),
            (raw(&[(" 100644", b"a")]), "not an octal number"),
            (raw(&[("-100644", b"a")]), "not an octal number"),
            (raw(&[("", b"a")]), "not an octal number"),
            // Eleven digits: more than any mode (and than an i32 holds).
            (raw(&[("10000000000", b"a")]), "not an octal number"),
            (raw(&[("77777777777", b"a")]), "not an octal number"),
            (raw(&[("100644", b"")]), "empty name"),
            (cut, "cut short"),
        ] {
            let id = odb.write(ObjectType::Tree, &bytes).unwrap();
            let err = RawTree::read(&odb, id).err().expect("refused");
            assert!(
                err.message().contains(why) && err.message().contains(&id.to_string()),
                "{}: {}",
                String::from_utf8_lossy(&bytes),
                err.message()
            );
        }
        let blob = repo.blob(b"x").unwrap();
        let err = RawTree::read(&odb, blob).err().unwrap();
        assert!(err.message().contains("not a tree"), "{}", err.message());
        // Ten digits, zeros first, are read.
        let padded = odb
            .write(ObjectType::Tree, &raw(&[("0000100644", b"a")]))
            .unwrap();
        let padded = RawTree::read(&odb, padded).unwrap();
        assert_eq!(padded.get(0).unwrap().filemode_raw(), 0o100644);
        let empty = odb.write(ObjectType::Tree, b"").unwrap();
        assert_eq!(RawTree::read(&odb, empty).unwrap().len(), 0);
    }
}
