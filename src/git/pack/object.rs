//! Whole objects read out of git's pack files, deltas followed: the trees a history walk or a
//! hook reads, thousands of them.
//!
//! Through libgit2 each of those small objects costs a lock on the pack, a lookup of its
//! mapped window, a zlib stream set up and torn down, a buffer allocated for every delta
//! base; a push reads thousands of trees, nearly all of them deltas (BENCHMARKS.md,
//! "Measured choices", M6). Here each
//! thread has its own reader: the pack mapped whole, each zlib stream inflated in one call
//! into a buffer of the size its entry declares (`pack::inflate`), and the objects it rebuilt
//! kept by offset, so that the next delta on one of them (the same directory one commit
//! later) is one delta applied.
//!
//! Read here: an object in a pack whose index is of version 2, stored whole or as a delta on
//! an object of the same pack (by offset, or by id), in a pack of at most [`MAPPED_UP_TO`]
//! bytes (all the packs a reader maps, together). As git and libgit2 do when they open a pack,
//! the pack must be the one its index describes (its checksum and object count). The entry
//! asked for must match the CRC-32 its index holds for it (a damaged pack or index is left to
//! libgit2); every zlib stream must end, its Adler-32 checksum right, exactly at the size its
//! header declares; every delta must be for a base of the size it says and make exactly the
//! size it says. The bases of a delta are held to those checks, not to their CRC-32: git and
//! libgit2 check no CRC when they read. One read applies at most [`CHAIN_BYTES_UP_TO`] bytes
//! of deltas and holds one at a time.

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::inflate::Inflater;
use git2::{ObjectType, Oid};
use memmap2::Mmap;

use super::{
    Index, OBJ_BLOB, OBJ_COMMIT, OBJ_OFS_DELTA, OBJ_REF_DELTA, OBJ_TAG, OBJ_TREE, PACK_HEADER,
    be32, delta, entry_header, is_pack_header, pack_indexes,
};

/// How many bytes of pack one reader maps, at most (the packs it maps, whole, together). Pages
/// read stay resident while mapped, so this bounds what a reader adds to guard's memory; a
/// larger pack is read through libgit2, which maps windows of it (`git::PACK_MAPPED_LIMIT`).
const MAPPED_UP_TO: u64 = 64 << 20;

/// The largest object read here. Trees and commits are far smaller; a larger object is read
/// through libgit2.
const OBJECT_UP_TO: usize = 16 << 20;

/// How many bytes of rebuilt objects a reader keeps, and the largest it keeps.
const KEPT_BYTES: usize = 16 << 20;
const KEPT_UP_TO: usize = 1 << 20;

/// The longest chain of deltas followed. git writes chains of at most 4,095
/// (`pack-objects --depth`); a longer one, or a loop of deltas by id, is left to libgit2.
const CHAIN_UP_TO: usize = 10_000;

/// The most delta bytes one read inflates and applies, over its whole chain: deltas that copy
/// a large base again and again compress a thousandfold, so a pack under [`MAPPED_UP_TO`] could
/// otherwise ask for gigabytes of work. Past it the object is left to libgit2.
const CHAIN_BYTES_UP_TO: usize = 64 << 20;

/// What one reader reads at most.
#[derive(Clone, Copy)]
struct Limits {
    /// Bytes of pack mapped, all packs together.
    mapped: u64,
    /// The deltas of one chain, inflated, together.
    chain_bytes: usize,
}

const LIMITS: Limits = Limits {
    mapped: MAPPED_UP_TO,
    chain_bytes: CHAIN_BYTES_UP_TO,
};

/// Objects read out of the packs of some object directories. One per thread: reads share no
/// state.
pub struct PackObjects {
    packs: Vec<Pack>,
    /// Bytes of pack that may still be mapped ([`MAPPED_UP_TO`] at first).
    room: u64,
    chain_bytes: usize,
    inflater: Inflater,
    kept: Kept,
    scratch: Scratch,
}

/// Buffers a reader reuses for each delta it inflates and each object it rebuilds, before the
/// object is copied into the `Rc` it is kept and handed out in: a walk rebuilds hundreds of
/// thousands of small trees (BENCHMARKS.md, "Measured choices", M11).
#[derive(Default)]
struct Scratch {
    delta: Vec<u8>,
    object: Vec<u8>,
}

impl Scratch {
    /// Lets go of a buffer a large object grew (a blob of up to [`OBJECT_UP_TO`]): what is
    /// kept between reads stays the size of what [`Kept`] keeps.
    fn trim(&mut self) {
        for buffer in [&mut self.delta, &mut self.object] {
            if buffer.capacity() > KEPT_UP_TO {
                *buffer = Vec::new();
            }
        }
    }
}

struct Pack {
    index: Index,
    path: PathBuf,
    /// The pack file, mapped whole when first read; `None` once it would not open or map.
    map: Option<Option<Mmap>>,
}

/// Objects rebuilt from the packs, by pack and offset, the oldest dropped first.
#[derive(Default)]
struct Kept {
    /// Randomly seeded: a pusher chooses the offsets.
    by_entry: HashMap<(usize, u64), KeptObject, foldhash::fast::RandomState>,
    order: VecDeque<(usize, u64)>,
    bytes: usize,
}

/// An object kept: its type, its content, and how many bytes its entry takes in the pack
/// (to check the entry's CRC-32 when it is asked for by id).
#[derive(Clone)]
struct KeptObject {
    kind: u8,
    data: Rc<[u8]>,
    entry_len: usize,
}

impl PackObjects {
    /// A reader of the packs in `pack/` of each of `dirs`, looked in from the last directory
    /// to the first (the object directory git's environment names comes last: in a hook, the
    /// push's quarantine, which holds what the push brought), and in each directory from the
    /// newest pack to the oldest, as git looks. Packs are taken in that order while they fit
    /// in [`MAPPED_UP_TO`] together; the rest, and a pack whose index is missing, not of
    /// version 2 or malformed, are left out (libgit2 still reads them).
    /// `hash_len` is the length of the repository's ids (20 or 32).
    pub fn open(dirs: &[PathBuf], hash_len: usize) -> PackObjects {
        PackObjects::within(dirs, hash_len, LIMITS)
    }

    /// `open`, within `limits`.
    fn within(dirs: &[PathBuf], hash_len: usize, limits: Limits) -> PackObjects {
        let mut packs = Vec::new();
        let mut room = limits.mapped;
        for dir in dirs.iter().rev() {
            let mut idxs: Vec<(std::time::SystemTime, u64, PathBuf)> =
                pack_indexes(std::slice::from_ref(dir))
                    .into_iter()
                    .filter_map(|idx| {
                        let meta = std::fs::metadata(idx.with_extension("pack")).ok()?;
                        Some((meta.modified().ok()?, meta.len(), idx))
                    })
                    .collect();
            idxs.sort_by(|a, b| b.cmp(a));
            for (_, len, idx) in idxs {
                if len <= room
                    && let Some(pack) = Pack::open(&idx, hash_len)
                {
                    room -= len;
                    packs.push(pack);
                }
            }
        }
        PackObjects {
            packs,
            room: limits.mapped,
            chain_bytes: limits.chain_bytes,
            inflater: Inflater::new(),
            kept: Kept::default(),
            scratch: Scratch::default(),
        }
    }

    /// The content of object `id`, if it is of type `kind` and a pack here holds it as
    /// described in the module's documentation. `None` leaves it to libgit2: the object may
    /// be loose, in another pack, of another type, or missing.
    pub fn read(&mut self, id: Oid, kind: ObjectType) -> Option<Rc<[u8]>> {
        let key = id.as_bytes();
        let want = match kind {
            ObjectType::Commit => OBJ_COMMIT,
            ObjectType::Tree => OBJ_TREE,
            ObjectType::Blob => OBJ_BLOB,
            ObjectType::Tag => OBJ_TAG,
            _ => return None,
        };
        // Always in the same order: a pack's deltas are followed through objects this reader
        // rebuilt from that pack before.
        for p in 0..self.packs.len() {
            let Some(nth) = self.packs[p].index.find(key) else {
                continue;
            };
            // Another pack may hold the same object as it should be.
            if let Some(data) = self.read_entry(p, nth, want) {
                return Some(data);
            }
        }
        None
    }

    /// The `nth` object of pack `p`'s index, if it reads as an object of type `want`.
    fn read_entry(&mut self, p: usize, nth: usize, want: u8) -> Option<Rc<[u8]>> {
        self.map(p)?;
        let PackObjects {
            packs,
            inflater,
            kept,
            chain_bytes,
            scratch,
            ..
        } = self;
        let pack = &packs[p];
        let map = pack.map.as_ref()?.as_ref()?;
        let offset = pack.index.offset(nth)?;
        let crc = pack.index.crc(nth);
        let read = Read {
            pack,
            p,
            map,
            chain_bytes: *chain_bytes,
        };
        let read = read.resolve(offset, Some(crc), inflater, kept, scratch);
        scratch.trim();
        let (kind, data) = read?;
        (kind == want).then_some(data)
    }

    /// Maps pack `p` when first read, if there is room for it.
    fn map(&mut self, p: usize) -> Option<()> {
        let pack = &mut self.packs[p];
        if pack.map.is_none() {
            let map = map_pack(&pack.path, &pack.index, self.room);
            if let Some(map) = &map {
                self.room = self.room.checked_sub(map.len() as u64)?;
            }
            pack.map = Some(map);
        }
        pack.map.as_ref()?.as_ref().map(|_| ())
    }
}

impl Pack {
    fn open(idx_path: &Path, hash_len: usize) -> Option<Pack> {
        Some(Pack {
            index: Index::open(idx_path, hash_len)?,
            path: idx_path.with_extension("pack"),
            map: None,
        })
    }
}

/// The pack file at `path` mapped, if it is at most `room` bytes and is the pack `index`
/// describes, as git and libgit2 require when they open one: a pack's header, as many objects
/// as the index lists, and the pack's own checksum (its last 20 or 32 bytes, the length of
/// the repository's ids) the one the index records.
fn map_pack(path: &Path, index: &Index, room: u64) -> Option<Mmap> {
    let file = File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    if len > room || len < (PACK_HEADER + index.hash_len) as u64 {
        return None;
    }
    // SAFETY: the map is read-only and private. git writes a pack once, under a temporary name,
    // and renames it into place; it never rewrites one (git and libgit2 map them too). A pack
    // deleted meanwhile (`git gc`) stays readable through the map.
    let map = unsafe {
        memmap2::MmapOptions::new()
            .len(usize::try_from(len).ok()?)
            .map(&file)
    }
    .ok()?;
    let checksum = &map[map.len() - index.hash_len..];
    let listed = be32(&map, 8) as usize;
    (is_pack_header(&map) && listed == index.count && checksum == index.pack_checksum())
        .then_some(map)
}

/// One pack read from: the pack (`p`, mapped as `map`) and how many delta bytes a read of
/// it may apply.
struct Read<'a> {
    pack: &'a Pack,
    p: usize,
    map: &'a Mmap,
    chain_bytes: usize,
}

impl Read<'_> {
    /// The object at `offset`: its type and content, deltas followed back to a whole object or
    /// one kept. With `crc`, the entry at `offset` must match it. Each object rebuilt on the
    /// way is kept. Deltas are inflated one at a time as they are applied, so that a read
    /// holds a base, a delta and what it makes, never the whole chain.
    fn resolve(
        &self,
        offset: u64,
        crc: Option<u32>,
        inflater: &mut Inflater,
        kept: &mut Kept,
        scratch: &mut Scratch,
    ) -> Option<(u8, Rc<[u8]>)> {
        let crc_holds = |len: usize| {
            crc.is_none_or(|crc| {
                self.entry_at(offset)
                    .and_then(|entry| entry.get(..len))
                    .is_some_and(|entry| crc32fast::hash(entry) == crc)
            })
        };
        // The deltas from `offset` back to the base: where each entry lies, where its zlib
        // stream starts in it, and the delta's size.
        let mut chain: Vec<(u64, usize, usize)> = Vec::new();
        let mut chain_bytes = 0usize;
        let mut at = offset;
        let (kind, mut data) = loop {
            if let Some(found) = kept.get(self.p, at) {
                if at == offset && !crc_holds(found.entry_len) {
                    return None;
                }
                break (found.kind, found.data);
            }
            let entry = self.entry_at(at)?;
            let header = entry_header(entry)?;
            let mut body = header.len;
            let base = match header.kind {
                OBJ_OFS_DELTA => {
                    // The base's distance back: seven bits a byte, most significant first,
                    // each byte after the first adding one (so no distance has two spellings).
                    let mut byte = *entry.get(body)?;
                    let mut back = u64::from(byte & 0x7f);
                    body += 1;
                    while byte & 0x80 != 0 {
                        if back >= 1 << 56 {
                            return None;
                        }
                        byte = *entry.get(body)?;
                        back = ((back + 1) << 7) | u64::from(byte & 0x7f);
                        body += 1;
                    }
                    Some(at.checked_sub(back).filter(|_| back > 0)?)
                }
                OBJ_REF_DELTA => {
                    let n = self.pack.index.hash_len;
                    let id = entry.get(body..body + n)?;
                    body += n;
                    let nth = self.pack.index.find(id)?;
                    Some(self.pack.index.offset(nth)?)
                }
                OBJ_COMMIT | OBJ_TREE | OBJ_BLOB | OBJ_TAG => None,
                _ => return None,
            };
            let size = usize::try_from(header.size)
                .ok()
                .filter(|&n| n <= OBJECT_UP_TO)?;
            match base {
                Some(base) => {
                    chain_bytes = chain_bytes.checked_add(size)?;
                    if chain.len() == CHAIN_UP_TO || chain_bytes > self.chain_bytes {
                        return None;
                    }
                    chain.push((at, body, size));
                    at = base;
                }
                None => {
                    let used = inflater.zlib_into(entry.get(body..)?, size, &mut scratch.object)?;
                    if at == offset && !crc_holds(body + used) {
                        return None;
                    }
                    let data: Rc<[u8]> = Rc::from(scratch.object.as_slice());
                    kept.put(self.p, at, header.kind, &data, body + used);
                    break (header.kind, data);
                }
            }
        };
        for &(at, body, size) in chain.iter().rev() {
            let entry = self.entry_at(at)?.get(body..)?;
            let used = inflater.zlib_into(entry, size, &mut scratch.delta)?;
            if at == offset && !crc_holds(body + used) {
                return None;
            }
            delta::apply_into(&data, &scratch.delta, OBJECT_UP_TO, &mut scratch.object)?;
            data = Rc::from(scratch.object.as_slice());
            kept.put(self.p, at, kind, &data, body + used);
        }
        Some((kind, data))
    }

    /// The bytes from `at` to the pack's trailing checksum, if an entry can start there.
    fn entry_at(&self, at: u64) -> Option<&[u8]> {
        let entries = self
            .map
            .get(..self.map.len().checked_sub(self.pack.index.hash_len)?)?;
        usize::try_from(at)
            .ok()
            .filter(|&at| at >= PACK_HEADER)
            .and_then(|at| entries.get(at..))
            .filter(|entry| !entry.is_empty())
    }
}

impl Kept {
    fn get(&self, p: usize, at: u64) -> Option<KeptObject> {
        self.by_entry.get(&(p, at)).cloned()
    }

    fn put(&mut self, p: usize, at: u64, kind: u8, data: &Rc<[u8]>, entry_len: usize) {
        if data.len() > KEPT_UP_TO || self.by_entry.contains_key(&(p, at)) {
            return;
        }
        let object = KeptObject {
            kind,
            data: Rc::clone(data),
            entry_len,
        };
        self.by_entry.insert((p, at), object);
        self.order.push_back((p, at));
        self.bytes += data.len();
        while self.bytes > KEPT_BYTES {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            if let Some(gone) = self.by_entry.remove(&oldest) {
                self.bytes -= gone.data.len();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use git2::Repository;
    use std::os::unix::fs::PermissionsExt;

    use crate::git::test_git as git;

    /// A history whose packed objects are of every kind a walk reads: commits, trees of a
    /// busy directory one file at a time (deltas on deltas), versions of a growing text file,
    /// a subdirectory, an empty file.
    fn history(dir: &Path) {
        git(dir, &["init", "-q", "-b", "main", "."]);
        std::fs::create_dir_all(dir.join("tests/unit")).unwrap();
        std::fs::write(dir.join("empty"), b"").unwrap();
        for round in 0..30 {
            for i in (0..40).filter(|i| round == 0 || i % 8 == round % 8) {
                let body: String = (0..12)
                    .map(|k| {
                        format!(
                            "def test_{i}_{k}():\n    assert {round} + {k} == {}\n",
                            round + k
                        )
                    })
                    .collect();
                std::fs::write(dir.join(format!("tests/test_{i:02}.py")), body).unwrap();
            }
            let log: String = (0..=round)
                .map(|r| format!("round {r} of the log\n"))
                .collect();
            std::fs::write(dir.join("tests/unit/log.txt"), log).unwrap();
            git(dir, &["add", "-A"]);
            git(dir, &["commit", "-qm", &format!("round {round}")]);
        }
    }

    /// Every object git lists in the repository's one pack: id, type, whether a delta.
    fn packed(dir: &Path) -> Vec<(Oid, String, bool)> {
        let idx = pack_indexes(&[dir.join(".git/objects")]);
        assert_eq!(idx.len(), 1, "{idx:?}");
        git(dir, &["verify-pack", "-v", idx[0].to_str().unwrap()])
            .lines()
            .filter_map(|line| {
                let f: Vec<&str> = line.split_whitespace().collect();
                let id = crate::git::test_oid(f.first()?)?;
                (f.len() >= 5).then(|| (id, f[1].to_string(), f.len() > 5))
            })
            .collect()
    }

    fn kind_of(name: &str) -> ObjectType {
        ObjectType::from_str(name).unwrap()
    }

    /// Reads every packed object through `objects` and checks it against libgit2: the same
    /// bytes for its own type, nothing for another.
    fn reads_as_libgit2(dir: &Path, objects: &mut PackObjects) -> usize {
        let repo = Repository::open(dir).unwrap();
        let odb = repo.odb().unwrap();
        let mut deltas = 0;
        for (id, kind, delta) in packed(dir) {
            let want = odb.read(id).unwrap();
            let got = objects.read(id, kind_of(&kind));
            assert_eq!(got.as_deref(), Some(want.data()), "{id} ({kind})");
            let other = if kind == "blob" {
                ObjectType::Tree
            } else {
                ObjectType::Blob
            };
            assert_eq!(objects.read(id, other), None, "{id} is a {kind}");
            deltas += usize::from(delta);
        }
        deltas
    }

    #[test]
    fn objects_stored_whole_or_as_deltas_read_as_libgit2_reads_them() {
        let dir = tempfile::tempdir().unwrap();
        history(dir.path());
        git(
            dir.path(),
            &["repack", "-adfq", "--depth=50", "--window=250"],
        );
        let mut objects = PackObjects::open(
            &[dir.path().join(".git/objects")],
            crate::git::test_hash_len(),
        );
        let deltas = reads_as_libgit2(dir.path(), &mut objects);
        assert!(deltas > 50, "{deltas} deltas");
        // Read again, now mostly from what the reader kept, and by a fresh reader in another
        // order (newest first, as the walks read).
        assert_eq!(reads_as_libgit2(dir.path(), &mut objects), deltas);
    }

    #[test]
    fn deltas_on_a_base_named_by_id_are_followed() {
        let dir = tempfile::tempdir().unwrap();
        history(dir.path());
        // As a pack from a server that does not offer offsets holds them.
        git(
            dir.path(),
            &["-c", "repack.useDeltaBaseOffset=false", "repack", "-adfq"],
        );
        let idx = pack_indexes(&[dir.path().join(".git/objects")]).remove(0);
        let pack = std::fs::read(idx.with_extension("pack")).unwrap();
        let first = packed(dir.path())
            .into_iter()
            .find(|(_, _, delta)| *delta)
            .unwrap();
        let mut objects = PackObjects::open(
            &[dir.path().join(".git/objects")],
            crate::git::test_hash_len(),
        );
        let deltas = reads_as_libgit2(dir.path(), &mut objects);
        assert!(deltas > 50, "{deltas} deltas");
        // The deltas are by id: a REF_DELTA entry header somewhere in the pack.
        let idx = Index::open(&idx, crate::git::test_hash_len()).unwrap();
        let at = idx.offset(idx.find(first.0.as_bytes()).unwrap());
        let header = entry_header(&pack[at.unwrap() as usize..]).unwrap();
        assert_eq!(header.kind, OBJ_REF_DELTA);
    }

    #[test]
    fn sixty_four_bit_offsets_are_followed() {
        let dir = tempfile::tempdir().unwrap();
        history(dir.path());
        git(dir.path(), &["repack", "-adfq"]);
        let idx = super::super::index_with_large_offsets(dir.path());
        assert!(
            Index::open(&idx, crate::git::test_hash_len())
                .unwrap()
                .large_count
                > 100
        );
        let mut objects = PackObjects::open(
            &[dir.path().join(".git/objects")],
            crate::git::test_hash_len(),
        );
        let deltas = reads_as_libgit2(dir.path(), &mut objects);
        assert!(deltas > 50, "{deltas} deltas");
    }

    /// The fuzz targets' index, from the file's bytes, answers as the index opened from the
    /// file (64-bit offsets included).
    #[test]
    fn an_index_read_from_bytes_reads_as_the_file() {
        let dir = tempfile::tempdir().unwrap();
        history(dir.path());
        git(dir.path(), &["repack", "-adfq"]);
        let path = super::super::index_with_large_offsets(dir.path());
        let n = crate::git::test_hash_len();
        let file = Index::open(&path, n).unwrap();
        let bytes = super::super::fuzzing::Index::open(&std::fs::read(&path).unwrap(), n).unwrap();
        assert_eq!(bytes.count(), file.count);
        assert_eq!(bytes.pack_checksum(), file.pack_checksum());
        for nth in 0..file.count {
            let id = bytes.id(nth).unwrap();
            assert_eq!(bytes.find(id), Some(nth));
            assert_eq!(file.find(id), Some(nth));
            assert_eq!(bytes.offset(nth), file.offset(nth));
            assert!(bytes.offset(nth).is_some());
            assert_eq!(bytes.crc(nth), file.crc(nth));
        }
        assert_eq!(bytes.id(file.count), None);
    }

    #[test]
    fn loose_missing_and_unmapped_objects_are_left_to_libgit2() {
        let dir = tempfile::tempdir().unwrap();
        history(dir.path());
        git(dir.path(), &["repack", "-adfq"]);
        let repo = Repository::open(dir.path()).unwrap();
        let loose = repo.blob(b"written after the repack\n").unwrap();
        let tree = repo.head().unwrap().peel_to_tree().unwrap().id();
        let dirs = [dir.path().join(".git/objects")];
        let mut objects = PackObjects::open(&dirs, crate::git::test_hash_len());
        assert!(objects.read(tree, ObjectType::Tree).is_some());
        assert_eq!(objects.read(loose, ObjectType::Blob), None);
        let missing = Oid::from_bytes(&[0xab; 32][..crate::git::test_hash_len()]).unwrap();
        assert_eq!(objects.read(missing, ObjectType::Tree), None);
        // Packs beyond the room are left out, and deltas past the bytes a chain may apply.
        let pack_len = std::fs::metadata(pack_indexes(&dirs)[0].with_extension("pack"))
            .unwrap()
            .len();
        let within = |mapped: u64, chain_bytes: usize| {
            PackObjects::within(
                &dirs,
                crate::git::test_hash_len(),
                Limits {
                    mapped,
                    chain_bytes,
                },
            )
        };
        assert_eq!(
            within(pack_len - 1, 1 << 20).read(tree, ObjectType::Tree),
            None
        );
        assert!(
            within(pack_len, 1 << 20)
                .read(tree, ObjectType::Tree)
                .is_some()
        );
        let (mut whole, mut deltas) = (0, 0);
        let mut small = within(pack_len, 1);
        for (id, kind, delta) in packed(dir.path()) {
            let got = small.read(id, kind_of(&kind));
            if delta {
                assert_eq!(got, None, "{id}: a delta of more than 1 byte");
                deltas += 1;
            } else {
                assert!(got.is_some(), "{id}");
                whole += 1;
            }
        }
        assert!(whole > 0 && deltas > 0);
    }

    #[test]
    fn a_pack_its_index_does_not_describe_is_not_mapped() {
        // The same objects packed twice (in other orders: other offsets and checksums): each
        // index describes its own pack only. git refuses a pack whose checksum or object count
        // is not its index's, and so does the reader.
        let dir = tempfile::tempdir().unwrap();
        history(dir.path());
        let keep = tempfile::tempdir().unwrap();
        git(dir.path(), &["repack", "-adfq", "--window=0"]);
        let first = pack_indexes(&[dir.path().join(".git/objects")]).remove(0);
        let (kept_idx, kept_pack) = (keep.path().join("a.idx"), keep.path().join("a.pack"));
        std::fs::copy(&first, &kept_idx).unwrap();
        std::fs::copy(first.with_extension("pack"), &kept_pack).unwrap();
        git(
            dir.path(),
            &["repack", "-adfq", "--depth=50", "--window=250"],
        );
        let second = pack_indexes(&[dir.path().join(".git/objects")]).remove(0);
        assert_ne!(first, second);
        let (one, other) = (
            Index::open(&kept_idx, crate::git::test_hash_len()).unwrap(),
            Index::open(&second, crate::git::test_hash_len()).unwrap(),
        );
        assert_eq!(one.count, other.count);
        let pack = second.with_extension("pack");
        assert!(map_pack(&pack, &other, u64::MAX).is_some());
        assert!(map_pack(&pack, &one, u64::MAX).is_none());
        assert!(map_pack(&kept_pack, &one, u64::MAX).is_some());
        assert!(map_pack(&kept_pack, &other, u64::MAX).is_none());
        // Not over the room.
        let len = std::fs::metadata(&pack).unwrap().len();
        assert!(map_pack(&pack, &other, len - 1).is_none());
    }

    #[test]
    fn packs_of_every_directory_given_are_read_the_last_first() {
        // As in a pre-receive hook: the repository's objects as an alternate, the push's
        // quarantine as the object directory.
        let main = tempfile::tempdir().unwrap();
        let pushed = tempfile::tempdir().unwrap();
        history(main.path());
        git(main.path(), &["repack", "-adfq"]);
        git(pushed.path(), &["init", "-q", "-b", "main", "."]);
        std::fs::write(pushed.path().join("new.txt"), "pushed\n").unwrap();
        git(pushed.path(), &["add", "-A"]);
        git(pushed.path(), &["commit", "-qm", "pushed"]);
        git(pushed.path(), &["repack", "-adfq"]);
        let dirs = [
            main.path().join(".git/objects"),
            pushed.path().join(".git/objects"),
        ];
        let mut objects = PackObjects::open(&dirs, crate::git::test_hash_len());
        for dir in [main.path(), pushed.path()] {
            let repo = Repository::open(dir).unwrap();
            let tree = repo.head().unwrap().peel_to_tree().unwrap();
            assert_eq!(
                objects.read(tree.id(), ObjectType::Tree).as_deref(),
                Some(repo.odb().unwrap().read(tree.id()).unwrap().data())
            );
        }
        let first = &objects.packs[0].path;
        assert!(first.starts_with(pushed.path()), "{first:?}");
    }

    #[test]
    fn an_index_that_points_an_id_at_another_entry_is_refused() {
        // Two trees' offsets swapped in the index: each id now leads to the other's entry, a
        // whole tree that parses. Only the CRC-32 the index keeps for the id tells.
        let dir = tempfile::tempdir().unwrap();
        history(dir.path());
        git(dir.path(), &["repack", "-adfq"]);
        let idx_path = pack_indexes(&[dir.path().join(".git/objects")]).remove(0);
        let trees: Vec<Oid> = packed(dir.path())
            .into_iter()
            .filter(|(_, kind, delta)| kind == "tree" && !delta)
            .map(|(id, _, _)| id)
            .collect();
        let (a, b) = (trees[0], trees[1]);
        let index = Index::open(&idx_path, crate::git::test_hash_len()).unwrap();
        let nth = |id: Oid| index.find(id.as_bytes()).unwrap();
        let slot = |n: usize| {
            super::super::ENTRIES + index.count * (crate::git::test_hash_len() + 4) + n * 4
        };
        let (sa, sb) = (slot(nth(a)), slot(nth(b)));
        drop(index);
        let mut bytes = std::fs::read(&idx_path).unwrap();
        for k in 0..4 {
            bytes.swap(sa + k, sb + k);
        }
        std::fs::set_permissions(&idx_path, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::write(&idx_path, &bytes).unwrap();
        let mut objects = PackObjects::open(
            &[dir.path().join(".git/objects")],
            crate::git::test_hash_len(),
        );
        assert_eq!(objects.read(a, ObjectType::Tree), None);
        assert_eq!(objects.read(b, ObjectType::Tree), None);
    }

    #[test]
    fn bytes_flipped_anywhere_in_pack_or_index_never_give_other_content() {
        // Whatever is damaged, an object is read as it is or left to libgit2: no panic, no
        // other bytes. The entry asked for is held to its CRC-32; the deltas to their sizes and
        // zlib's checksums.
        let dir = tempfile::tempdir().unwrap();
        history(dir.path());
        git(dir.path(), &["repack", "-adfq"]);
        let repo = Repository::open(dir.path()).unwrap();
        let odb = repo.odb().unwrap();
        let objects: Vec<(Oid, ObjectType, Vec<u8>)> = packed(dir.path())
            .into_iter()
            .map(|(id, kind, _)| (id, kind_of(&kind), odb.read(id).unwrap().data().to_vec()))
            .collect();
        let (mut read_some, mut refused_some) = (false, false);
        super::super::with_damaged_pack(dir.path(), 60, |round| {
            let mut reader = PackObjects::open(
                &[dir.path().join(".git/objects")],
                crate::git::test_hash_len(),
            );
            for (id, kind, content) in &objects {
                match reader.read(*id, *kind) {
                    Some(got) => {
                        assert_eq!(&got[..], &content[..], "round {round}: {id}");
                        read_some = true;
                    }
                    None => refused_some = true,
                }
            }
        });
        assert!(read_some && refused_some);
    }
}
