//! The commits of a range when there is no usable commit-graph, found as libgit2's revision
//! walk finds them, from commit headers read once.
//!
//! libgit2's walk (`limit_list` in its revwalk.c) takes commits newest committer date first
//! and stops once only hidden commits have been left for five commits in a row. It parses
//! each commit into its object cache, and listing the range then looked each one up again for
//! its tree. This walk is the same algorithm, step for step (the set it gives depends on the
//! order of those steps when commit dates lie), over each commit's tree, parents and
//! committer date read once from the object database.
//!
//! Only a header as git writes it is read here: `tree`, `parent` lines, one `author`, then
//! `committer`, with plain signatures. At anything else (another layout, a missing object, an
//! object that is not a commit) the walk gives up, and the caller runs libgit2's walk, so an
//! odd object gets exactly libgit2's answer or error.
//!
//! Like the commit-graph walk, it follows the parents each commit names. libgit2 applies
//! `info/grafts` and a shallow clone's `shallow` file on top, which an admin writes; in a
//! shallow clone the parents cut off are missing, so the walk gives up there and libgit2
//! walks.

use std::collections::{HashMap, VecDeque};

use git2::{ObjectType, Odb, Oid, Repository};

use super::oid_hash::OidHash;
use super::pack::PackObjects;

/// Reached before: not queued again by an interesting child.
const SEEN: u8 = 1;
/// Its parents were queued.
const ADDED: u8 = 2;
/// Reachable from a hidden commit, as far as the walk knows.
const UNINTERESTING: u8 = 4;
/// Its header was read: `tree`, `time` and its parents are known.
const PARSED: u8 = 8;

/// libgit2's `SLOP`: how many commits the walk goes on taking after only hidden commits are
/// queued, in case a commit dated earlier than its parents hides more.
const SLOP: u32 = 5;

/// The walk gave up: the caller asks libgit2.
#[derive(Debug)]
pub struct GaveUp;

struct Node {
    id: Oid,
    tree: Oid,
    /// The committer date, in seconds.
    time: i64,
    /// Its parents: `edges[start..start + len]`, once parsed.
    parents: (u32, u32),
    flags: u8,
}

/// One walk over a repository's object database.
pub struct DateWalk<'r> {
    odb: Odb<'r>,
    /// Commits read out of the pack files where it can, the rest through `odb`.
    packs: Option<PackObjects>,
    nodes: Vec<Node>,
    edges: Vec<u32>,
    by_id: HashMap<Oid, usize, OidHash>,
}

impl<'r> DateWalk<'r> {
    pub fn new(repo: &'r Repository) -> Result<DateWalk<'r>, git2::Error> {
        Ok(DateWalk {
            odb: repo.odb()?,
            packs: super::env_object_dirs(repo)
                .map(|dirs| PackObjects::open(&dirs, super::hash_len(repo))),
            nodes: Vec::new(),
            edges: Vec::new(),
            by_id: HashMap::default(),
        })
    }

    /// The commits reachable from `tip` and from none of `hide`, oldest first, in the order
    /// libgit2's `TOPOLOGICAL | REVERSE` walk gives after `push(tip)` and `hide(h)` for each
    /// of `hide` in turn.
    #[cfg(test)]
    pub fn range(&mut self, tip: Oid, hide: &[Oid]) -> Result<Vec<Oid>, GaveUp> {
        self.range_watched(tip, hide, &mut |_| {})
    }

    /// `range`, telling `watch` of each commit as the walk takes it, while it is still
    /// listing (newest first, as far as dates go). A commit told of may turn out hidden
    /// later, and the walk may still give up.
    pub fn range_watched(
        &mut self,
        tip: Oid,
        hide: &[Oid],
        watch: &mut dyn FnMut(Taken),
    ) -> Result<Vec<Oid>, GaveUp> {
        let listed = self.limit(&[tip], hide, watch)?;
        let order =
            super::walk_order::topological(&listed, self.nodes.len(), |i| self.parents_of(i));
        Ok(order
            .into_iter()
            .filter(|&i| self.nodes[i].flags & UNINTERESTING == 0)
            .map(|i| self.nodes[i].id)
            .collect())
    }

    /// The commits reachable from any of `tips` and from none of `hide`, in no particular
    /// order (libgit2's unsorted walk after pushing `tips` and hiding `hide`).
    pub fn reachable(&mut self, tips: &[Oid], hide: &[Oid]) -> Result<Vec<Oid>, GaveUp> {
        let listed = self.limit(tips, hide, &mut |_| {})?;
        Ok(listed
            .into_iter()
            .filter(|&i| self.nodes[i].flags & UNINTERESTING == 0)
            .map(|i| self.nodes[i].id)
            .collect())
    }

    /// The tree and parents of a commit the walk read.
    pub fn header(&self, id: Oid) -> Option<(Oid, impl Iterator<Item = Oid> + '_)> {
        let &i = self.by_id.get(&id)?;
        (self.nodes[i].flags & PARSED != 0).then(|| {
            let parents = self
                .parents_of(i)
                .iter()
                .map(|&p| self.nodes[p as usize].id);
            (self.nodes[i].tree, parents)
        })
    }

    fn parents_of(&self, i: usize) -> &[u32] {
        let (start, len) = self.nodes[i].parents;
        &self.edges[start as usize..(start + len) as usize]
    }

    fn node(&mut self, id: Oid) -> usize {
        if let Some(&i) = self.by_id.get(&id) {
            return i;
        }
        self.nodes.push(Node {
            id,
            tree: Oid::ZERO_SHA1,
            time: 0,
            parents: (0, 0),
            flags: 0,
        });
        let i = self.nodes.len() - 1;
        self.by_id.insert(id, i);
        i
    }

    /// Reads node `i`'s header, once (`git_commit_list_parse`).
    fn parse(&mut self, i: usize) -> Result<(), GaveUp> {
        if self.nodes[i].flags & PARSED != 0 {
            return Ok(());
        }
        let id = self.nodes[i].id;
        let header = match self
            .packs
            .as_mut()
            .and_then(|p| p.read(id, ObjectType::Commit))
        {
            Some(data) => Header::parse(&data, id.as_bytes().len()).ok_or(GaveUp)?,
            None => {
                let object = self.odb.read(id).map_err(|_| GaveUp)?;
                if object.kind() != ObjectType::Commit {
                    return Err(GaveUp);
                }
                Header::parse(object.data(), id.as_bytes().len()).ok_or(GaveUp)?
            }
        };
        // libgit2 keeps a commit's parent count in 16 bits and refuses more.
        if header.parents.len() > usize::from(u16::MAX) {
            return Err(GaveUp);
        }
        let start = self.edges.len();
        for p in header.parents {
            let p = self.node(p);
            self.edges.push(p as u32);
        }
        let node = &mut self.nodes[i];
        node.tree = header.tree;
        node.time = header.time;
        node.parents = (start as u32, (self.edges.len() - start) as u32);
        node.flags |= PARSED;
        Ok(())
    }

    /// `limit_list` after `prepare_walk`: the commits taken while interesting, in the order
    /// taken. Some may turn out hidden afterwards; the callers drop those.
    fn limit(
        &mut self,
        tips: &[Oid],
        hide: &[Oid],
        watch: &mut dyn FnMut(Taken),
    ) -> Result<Vec<usize>, GaveUp> {
        // `git_revwalk_push` and `_hide` put each commit in front of the ones before (here
        // reversed once at the end: a push can hide thousands of refs), and ignore a commit
        // hidden already.
        let mut input: Vec<usize> = Vec::new();
        let mut pushed = false;
        for (id, hidden) in tips
            .iter()
            .map(|&t| (t, false))
            .chain(hide.iter().map(|&h| (h, true)))
        {
            let i = self.node(id);
            if self.nodes[i].flags & UNINTERESTING != 0 {
                continue;
            }
            if hidden {
                self.nodes[i].flags |= UNINTERESTING;
            } else {
                pushed = true;
            }
            input.push(i);
        }
        input.reverse();
        if !pushed {
            return Ok(Vec::new());
        }
        let mut list: VecDeque<usize> = VecDeque::new();
        for i in input {
            self.parse(i)?;
            if self.nodes[i].flags & UNINTERESTING != 0 {
                self.mark_parents_uninteresting(i);
            }
            if self.nodes[i].flags & SEEN == 0 {
                self.nodes[i].flags |= SEEN;
                list.push_back(i);
            }
        }
        let mut slop = SLOP;
        let mut time = i64::MAX;
        let mut taken = Vec::new();
        let mut parent_trees = Vec::new();
        while let Some(i) = list.pop_front() {
            self.add_parents(i, &mut list)?;
            if self.nodes[i].flags & UNINTERESTING != 0 {
                self.mark_parents_uninteresting(i);
                slop = self.still_interesting(&list, time, slop);
                if slop > 0 {
                    continue;
                }
                break;
            }
            time = self.nodes[i].time;
            taken.push(i);
            // Its parents were read just now (`add_parents`).
            let node = &self.nodes[i];
            parent_trees.clear();
            parent_trees.extend(
                self.parents_of(i)
                    .iter()
                    .map(|&p| self.nodes[p as usize].tree),
            );
            watch(Taken {
                id: node.id,
                tree: node.tree,
                parent_trees: &parent_trees,
            });
        }
        Ok(taken)
    }

    /// `add_parents_to_list`: queues `i`'s parents by date, once per commit. A hidden
    /// commit's parents are hidden too, and queued even when queued before.
    fn add_parents(&mut self, i: usize, list: &mut VecDeque<usize>) -> Result<(), GaveUp> {
        if self.nodes[i].flags & ADDED != 0 {
            return Ok(());
        }
        self.nodes[i].flags |= ADDED;
        let (start, len) = self.nodes[i].parents;
        let hidden = self.nodes[i].flags & UNINTERESTING != 0;
        for k in start..start + len {
            let p = self.edges[k as usize] as usize;
            if hidden {
                self.nodes[p].flags |= UNINTERESTING;
                self.parse(p)?;
                self.mark_parents_uninteresting(p);
                self.nodes[p].flags |= SEEN;
                self.insert_by_date(p, list);
            } else {
                self.parse(p)?;
                if self.nodes[p].flags & SEEN == 0 {
                    self.nodes[p].flags |= SEEN;
                    self.insert_by_date(p, list);
                }
            }
        }
        Ok(())
    }

    /// `git_commit_list_insert_by_date`: before the first commit dated earlier.
    fn insert_by_date(&self, i: usize, list: &mut VecDeque<usize>) {
        let time = self.nodes[i].time;
        let at = list
            .iter()
            .position(|&q| self.nodes[q].time < time)
            .unwrap_or(list.len());
        list.insert(at, i);
    }

    /// `mark_parents_uninteresting`: hides every commit reachable from `i`'s parents through
    /// commits read and not hidden yet.
    fn mark_parents_uninteresting(&mut self, i: usize) {
        let mut stack: Vec<u32> = self.parents_of(i).to_vec();
        while let Some(p) = stack.pop() {
            let node = &mut self.nodes[p as usize];
            if node.flags & UNINTERESTING != 0 {
                continue;
            }
            node.flags |= UNINTERESTING;
            if node.flags & PARSED != 0 {
                let (start, len) = node.parents;
                stack.extend_from_slice(&self.edges[start as usize..(start + len) as usize]);
            }
        }
    }

    /// `still_interesting`: `SLOP` while the queue holds an interesting commit or one dated
    /// after the last commit taken, else one less than `slop`; 0 for an empty queue.
    fn still_interesting(&self, list: &VecDeque<usize>, time: i64, slop: u32) -> u32 {
        let Some(&first) = list.front() else {
            return 0;
        };
        if time <= self.nodes[first].time {
            return SLOP;
        }
        if list.iter().any(|&q| {
            let node = &self.nodes[q];
            node.flags & UNINTERESTING == 0 || node.time > time
        }) {
            return SLOP;
        }
        slop - 1
    }
}

/// A commit the walk took while listing: its id, its tree and its parents' trees, in order.
pub(super) struct Taken<'a> {
    pub id: Oid,
    pub tree: Oid,
    pub parent_trees: &'a [Oid],
}

/// What the walk needs of a commit object.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Header {
    pub tree: Oid,
    pub parents: Vec<Oid>,
    pub time: i64,
}

impl Header {
    /// The header of a commit as git writes it; `None` for anything else (libgit2 then
    /// judges it). For what is read, libgit2's parse gives the same tree, parents and date.
    /// `hash_len` is the length of the repository's ids (20 for SHA-1, 32 for SHA-256).
    pub(super) fn parse(data: &[u8], hash_len: usize) -> Option<Header> {
        let mut rest = data;
        let tree = id_line(&mut rest, b"tree ", hash_len)?;
        let mut parents = Vec::new();
        while rest.starts_with(b"parent ") {
            parents.push(id_line(&mut rest, b"parent ", hash_len)?);
        }
        signature_line(&mut rest, b"author ")?;
        let time = signature_line(&mut rest, b"committer ")?;
        Some(Header {
            tree,
            parents,
            time,
        })
    }
}

/// `<field>` then an id of `hash_len` bytes in lowercase hex, and a newline.
fn id_line(rest: &mut &[u8], field: &[u8], hash_len: usize) -> Option<Oid> {
    let line = rest.strip_prefix(field)?;
    let (hex, after) = (line.get(..2 * hash_len)?, line.get(2 * hash_len..)?);
    if after.first() != Some(&b'\n') || !hex.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    {
        return None;
    }
    *rest = &after[1..];
    let mut raw = [0u8; 32];
    let raw = raw.get_mut(..hash_len)?;
    hex::decode_to_slice(hex, raw).ok()?;
    Oid::from_bytes(raw).ok()
}

/// `<field>NAME <EMAIL> SECONDS +HHMM` and a newline, with one `<` and one `>`, the date in
/// at most 18 digits: the date, in seconds.
fn signature_line(rest: &mut &[u8], field: &[u8]) -> Option<i64> {
    let line = rest.strip_prefix(field)?;
    let end = memchr::memchr(b'\n', line)?;
    let (line, after) = (&line[..end], &line[end + 1..]);
    let lt = memchr::memchr(b'<', line)?;
    let gt = memchr::memchr(b'>', line)?;
    if gt < lt || memchr::memrchr(b'<', line) != Some(lt) || memchr::memrchr(b'>', line) != Some(gt)
    {
        return None;
    }
    let date = line[gt + 1..].strip_prefix(b" ")?;
    let space = memchr::memchr(b' ', date)?;
    let (seconds, zone) = (&date[..space], &date[space + 1..]);
    let zone_ok = zone.len() == 5
        && matches!(zone[0], b'+' | b'-')
        && zone[1..].iter().all(u8::is_ascii_digit);
    if seconds.is_empty()
        || seconds.len() > 18
        || !seconds.iter().all(u8::is_ascii_digit)
        || !zone_ok
    {
        return None;
    }
    *rest = after;
    std::str::from_utf8(seconds).ok()?.parse().ok()
}

/// The commit-header reader, for the fuzz targets (`fuzz/`), not for other code.
#[doc(hidden)]
pub mod fuzzing {
    use git2::Oid;

    /// `Header::parse`: the tree, the parents and the committer date (seconds) of the commit
    /// object `data` of `hash_len`-byte ids, if it is read here.
    pub fn commit_header(data: &[u8], hash_len: usize) -> Option<(Oid, Vec<Oid>, i64)> {
        super::Header::parse(data, hash_len).map(|h| (h.tree, h.parents, h.time))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit_text(tree: &str, parents: &[&str], author: &str, committer: &str) -> String {
        let mut text = format!("tree {tree}\n");
        for p in parents {
            text.push_str(&format!("parent {p}\n"));
        }
        text.push_str(&format!(
            "author {author}\ncommitter {committer}\n\nmessage\n"
        ));
        text
    }

    const TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
    const P1: &str = "0123456789abcdef0123456789abcdef01234567";
    const P2: &str = "89abcdef0123456789abcdef0123456789abcdef";
    const SIG: &str = "A U Thor <a@example.com> 1700000000 +0100";

    #[test]
    fn a_header_as_git_writes_it_is_read() {
        let text = commit_text(TREE, &[P1, P2], SIG, "C <c@example.com> 1712345678 -0700");
        let header = Header::parse(text.as_bytes(), 20).unwrap();
        assert_eq!(header.tree, Oid::from_str(TREE).unwrap());
        assert_eq!(
            header.parents,
            vec![Oid::from_str(P1).unwrap(), Oid::from_str(P2).unwrap()]
        );
        assert_eq!(header.time, 1_712_345_678);
        let root = commit_text(TREE, &[], SIG, "C <> 0 +0000");
        assert_eq!(Header::parse(root.as_bytes(), 20).unwrap().parents, vec![]);
        // What follows the committer (a signature, an encoding, the message) is not read.
        let signed = text.replace("\n\nmessage", "\ngpgsig -----BEGIN\n x\n\nmessage");
        assert!(Header::parse(signed.as_bytes(), 20).is_some());
    }

    #[test]
    fn any_other_header_is_left_to_libgit2() {
        let good = commit_text(TREE, &[P1], SIG, SIG);
        let upper = P1.to_uppercase();
        for bad in [
            commit_text(&TREE.to_uppercase(), &[P1], SIG, SIG),
            commit_text(TREE, &[&upper], SIG, SIG),
            commit_text(&TREE[..39], &[P1], SIG, SIG),
            good.replacen("author", "author A <a> 1 +0000\nauthor", 1),
            good.replacen(&format!("author {SIG}\n"), "", 1),
            commit_text(TREE, &[P1], SIG, "C <c@example.com> 17 +01"),
            commit_text(TREE, &[P1], SIG, "C <c@example.com> 17"),
            commit_text(TREE, &[P1], SIG, "C <c@example.com>"),
            commit_text(TREE, &[P1], SIG, "C <c@example.com> -17 +0000"),
            commit_text(
                TREE,
                &[P1],
                SIG,
                "C <c@example.com> 1234567890123456789 +0000",
            ),
            commit_text(TREE, &[P1], SIG, "C <c> <d@example.com> 17 +0000"),
            commit_text(TREE, &[P1], SIG, "C <c@example.com> > 17 +0000"),
            commit_text(TREE, &[P1], SIG, "C >c@example.com< 17 +0000"),
            commit_text(TREE, &[P1], "A <a@example.com>  1 +0000", SIG),
            good.replacen("parent ", "parent  ", 1),
            good.replacen("\ncommitter", "\nfoo bar\ncommitter", 1),
            good.replace('\n', "\r\n"),
            good[..good.find("committer").unwrap() + 20].to_string(),
        ] {
            assert_eq!(Header::parse(bad.as_bytes(), 20), None, "{bad:?}");
        }
    }

    /// Every header this reads, libgit2 reads with the same tree, parents and committer date:
    /// checked on pseudo-random damage to one git writes.
    #[test]
    fn what_is_read_is_what_libgit2_reads() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(dir.path()).unwrap();
        let odb = repo.odb().unwrap();
        let good = commit_text(TREE, &[P1, P2], SIG, "C <c@example.com> 1712345678 -0700");
        let alphabet = b"<> \n+-09afAFx";
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let (mut read, mut refused) = (0, 0);
        for _ in 0..3000 {
            let mut bytes = good.clone().into_bytes();
            for _ in 0..1 + next(3) {
                let at = next(bytes.len());
                let b = alphabet[next(alphabet.len())];
                match next(3) {
                    0 => bytes[at] = b,
                    1 => bytes.insert(at, b),
                    _ => {
                        bytes.remove(at);
                    }
                }
            }
            let Some(header) = Header::parse(&bytes, 20) else {
                refused += 1;
                continue;
            };
            read += 1;
            let id = odb.write(ObjectType::Commit, &bytes).unwrap();
            let commit = repo.find_commit(id).unwrap_or_else(|e| {
                panic!("libgit2 refuses {:?}: {e}", String::from_utf8_lossy(&bytes))
            });
            assert_eq!(header.tree, commit.tree_id());
            assert_eq!(header.parents, commit.parent_ids().collect::<Vec<_>>());
            assert_eq!(header.time, commit.committer().when().seconds());
        }
        // Both ways were taken often.
        assert!(
            read > 300 && refused > 300,
            "read {read}, refused {refused}"
        );
    }
}
