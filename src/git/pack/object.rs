//! Whole objects read out of git's pack files, deltas followed: the trees a history walk or a
//! hook reads, thousands of them.
//!
//! Through libgit2 each of those small objects cost 10-20 µs: a lock on the pack, a lookup of
//! its mapped window, a zlib stream set up and torn down, a buffer allocated for every delta
//! base. A push of 1,000 commits reads 11,000 trees, nearly all of them deltas. Here each
//! thread has its own reader: the pack mapped whole, one zlib stream reset between entries,
//! and the objects it rebuilt kept by offset, so that the next delta on one of them (the same
//! directory one commit later) is one delta applied.
//!
//! Read here: an object in a pack whose index is of version 2, stored whole or as a delta on
//! an object of the same pack (by offset, or by id), in a pack of at most [`MAPPED_UP_TO`]
//! bytes (all the packs a reader maps, together). The entry asked for must match the CRC-32
//! its index holds for it (a damaged pack or index is left to libgit2), every zlib stream must
//! end, its Adler-32 checksum right, exactly at the size its header declares, and every delta
//! must be for a base of the size it says and make exactly the size it says.

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use flate2::{Decompress, FlushDecompress, Status};
use git2::{ObjectType, Oid};
use memmap2::Mmap;

use super::{
    HASH_LEN, Index, OBJ_BLOB, OBJ_COMMIT, OBJ_OFS_DELTA, OBJ_REF_DELTA, OBJ_TAG, OBJ_TREE,
    PACK_HEADER, delta, entry_header, is_pack_header, pack_indexes,
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

/// Objects read out of the packs of some object directories. One per thread: reads share no
/// state.
pub struct PackObjects {
    packs: Vec<Pack>,
    /// Bytes of pack that may still be mapped ([`MAPPED_UP_TO`] at first).
    room: u64,
    zlib: Decompress,
    kept: Kept,
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
    by_entry: HashMap<(usize, u64), KeptObject, foldhash::fast::FixedState>,
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
    /// newest pack to the oldest, as git looks. A pack whose index is missing, not of version
    /// 2 or malformed is left out (libgit2 still reads it).
    pub fn open(dirs: &[PathBuf]) -> PackObjects {
        PackObjects::within(dirs, MAPPED_UP_TO)
    }

    /// `open`, mapping at most `room` bytes of pack.
    fn within(dirs: &[PathBuf], room: u64) -> PackObjects {
        let mut packs = Vec::new();
        for dir in dirs.iter().rev() {
            // A pack too large to map is left out: its objects are read through libgit2.
            let mut idxs: Vec<(std::time::SystemTime, PathBuf)> =
                pack_indexes(std::slice::from_ref(dir))
                    .into_iter()
                    .filter_map(|idx| {
                        let meta = std::fs::metadata(idx.with_extension("pack")).ok()?;
                        (meta.len() <= room).then_some((meta.modified().ok()?, idx))
                    })
                    .collect();
            idxs.sort_by(|a, b| b.cmp(a));
            packs.extend(idxs.iter().filter_map(|(_, idx)| Pack::open(idx)));
        }
        PackObjects {
            packs,
            room,
            zlib: Decompress::new(true),
            kept: Kept::default(),
        }
    }

    /// The content of object `id`, if it is of type `kind` and a pack here holds it as
    /// described in the module's documentation. `None` leaves it to libgit2: the object may
    /// be loose, in another pack, of another type, or missing.
    pub fn read(&mut self, id: Oid, kind: ObjectType) -> Option<Rc<[u8]>> {
        let key = <&[u8; HASH_LEN]>::try_from(id.as_bytes()).ok()?;
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
            packs, zlib, kept, ..
        } = self;
        let pack = &packs[p];
        let map = pack.map.as_ref()?.as_ref()?;
        let offset = pack.index.offset(nth)?;
        let crc = pack.index.crc(nth);
        let (kind, data) = resolve(pack, p, map, offset, Some(crc), zlib, kept)?;
        (kind == want).then_some(data)
    }

    /// Maps pack `p` when first read, if there is room for it.
    fn map(&mut self, p: usize) -> Option<()> {
        let pack = &mut self.packs[p];
        if pack.map.is_none() {
            let map = map_pack(&pack.path, self.room);
            if let Some(map) = &map {
                self.room -= map.len() as u64;
            }
            pack.map = Some(map);
        }
        pack.map.as_ref()?.as_ref().map(|_| ())
    }
}

impl Pack {
    fn open(idx_path: &Path) -> Option<Pack> {
        Some(Pack {
            index: Index::open(idx_path)?,
            path: idx_path.with_extension("pack"),
            map: None,
        })
    }
}

/// The pack file at `path` mapped, if it is at most `room` bytes and starts as a pack does.
fn map_pack(path: &Path, room: u64) -> Option<Mmap> {
    let file = File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    if len > room || len < (PACK_HEADER + HASH_LEN) as u64 {
        return None;
    }
    // SAFETY: the map is read-only and private. git writes a pack once, under a temporary name,
    // and renames it into place; it never rewrites one (git and libgit2 map them too). A pack
    // deleted meanwhile (`git gc`) stays readable through the map.
    let map = unsafe { Mmap::map(&file) }.ok()?;
    is_pack_header(&map).then_some(map)
}

/// The object at `offset` of pack `p` (mapped as `map`): its type and content, deltas
/// followed back to a whole object or one kept. With `crc`, the entry at `offset` must match
/// it. Each object rebuilt on the way is kept.
fn resolve(
    pack: &Pack,
    p: usize,
    map: &Mmap,
    offset: u64,
    crc: Option<u32>,
    zlib: &mut Decompress,
    kept: &mut Kept,
) -> Option<(u8, Rc<[u8]>)> {
    // Entries lie between the pack's header and its trailing checksum.
    let entries = map.get(..map.len().checked_sub(HASH_LEN)?)?;
    let entry_at = |at: u64| {
        usize::try_from(at)
            .ok()
            .filter(|&at| at >= PACK_HEADER)
            .and_then(|at| entries.get(at..))
            .filter(|entry| !entry.is_empty())
    };
    // The deltas from `offset` back to the base: where each lies, its content, its length.
    let mut chain: Vec<(u64, Vec<u8>, usize)> = Vec::new();
    let mut at = offset;
    let mut crc = crc;
    let (kind, mut data) = loop {
        if let Some(found) = kept.get(p, at) {
            if let Some(crc) = crc {
                let entry = entry_at(at)?.get(..found.entry_len)?;
                if crc32fast::hash(entry) != crc {
                    return None;
                }
            }
            break (found.kind, found.data);
        }
        let entry = entry_at(at)?;
        let header = entry_header(entry)?;
        let mut body = header.len;
        let base = match header.kind {
            OBJ_OFS_DELTA => {
                // The base's distance back: seven bits a byte, most significant first, each
                // byte after the first adding one (so that no distance has two spellings).
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
                let id = entry.get(body..body + HASH_LEN)?;
                body += HASH_LEN;
                let nth = pack.index.find(id.try_into().ok()?)?;
                Some(pack.index.offset(nth)?)
            }
            OBJ_COMMIT | OBJ_TREE | OBJ_BLOB | OBJ_TAG => None,
            _ => return None,
        };
        let size = usize::try_from(header.size)
            .ok()
            .filter(|&n| n <= OBJECT_UP_TO)?;
        let (content, used) = inflate(zlib, entry.get(body..)?, size)?;
        let entry_len = body + used;
        if let Some(crc) = crc.take() {
            if crc32fast::hash(&entry[..entry_len]) != crc {
                return None;
            }
        }
        match base {
            Some(base) => {
                if chain.len() == CHAIN_UP_TO {
                    return None;
                }
                chain.push((at, content, entry_len));
                at = base;
            }
            None => {
                let data: Rc<[u8]> = content.into();
                kept.put(p, at, header.kind, &data, entry_len);
                break (header.kind, data);
            }
        }
    };
    for (at, delta, entry_len) in chain.iter().rev() {
        data = delta::apply(&data, delta, OBJECT_UP_TO)?.into();
        kept.put(p, *at, kind, &data, *entry_len);
    }
    Some((kind, data))
}

/// Inflates the zlib stream at the start of `input`, which must make exactly `size` bytes
/// and end there: the bytes and how much of `input` the stream took.
fn inflate(zlib: &mut Decompress, input: &[u8], size: usize) -> Option<(Vec<u8>, usize)> {
    zlib.reset(true);
    // One byte of room more than the size: a stream that makes more does not end in it.
    let mut out = Vec::with_capacity(size + 1);
    let status = zlib
        .decompress_vec(input, &mut out, FlushDecompress::Finish)
        .ok()?;
    (status == Status::StreamEnd && out.len() == size).then(|| (out, zlib.total_in() as usize))
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
                let id = Oid::from_str(f.first()?).ok()?;
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
        let mut objects = PackObjects::open(&[dir.path().join(".git/objects")]);
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
        let mut objects = PackObjects::open(&[dir.path().join(".git/objects")]);
        let deltas = reads_as_libgit2(dir.path(), &mut objects);
        assert!(deltas > 50, "{deltas} deltas");
        // The deltas are by id: a REF_DELTA entry header somewhere in the pack.
        let idx = Index::open(&idx).unwrap();
        let at = idx.offset(idx.find(first.0.as_bytes().try_into().unwrap()).unwrap());
        let header = entry_header(&pack[at.unwrap() as usize..]).unwrap();
        assert_eq!(header.kind, OBJ_REF_DELTA);
    }

    #[test]
    fn sixty_four_bit_offsets_are_followed() {
        let dir = tempfile::tempdir().unwrap();
        history(dir.path());
        git(dir.path(), &["repack", "-adfq"]);
        let idx = super::super::index_with_large_offsets(dir.path());
        assert!(Index::open(&idx).unwrap().large_count > 100);
        let mut objects = PackObjects::open(&[dir.path().join(".git/objects")]);
        let deltas = reads_as_libgit2(dir.path(), &mut objects);
        assert!(deltas > 50, "{deltas} deltas");
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
        let mut objects = PackObjects::open(&dirs);
        assert!(objects.read(tree, ObjectType::Tree).is_some());
        assert_eq!(objects.read(loose, ObjectType::Blob), None);
        let missing = Oid::from_str(&"ab".repeat(20)).unwrap();
        assert_eq!(objects.read(missing, ObjectType::Tree), None);
        // A pack larger than the room left is not mapped.
        let pack_len = std::fs::metadata(pack_indexes(&dirs)[0].with_extension("pack"))
            .unwrap()
            .len();
        assert_eq!(
            PackObjects::within(&dirs, pack_len - 1).read(tree, ObjectType::Tree),
            None
        );
        assert!(
            PackObjects::within(&dirs, pack_len)
                .read(tree, ObjectType::Tree)
                .is_some()
        );
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
        let mut objects = PackObjects::open(&dirs);
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
        let index = Index::open(&idx_path).unwrap();
        let nth = |id: Oid| index.find(id.as_bytes().try_into().unwrap()).unwrap();
        let slot = |n: usize| super::super::ENTRIES + index.count * (HASH_LEN + 4) + n * 4;
        let (sa, sb) = (slot(nth(a)), slot(nth(b)));
        drop(index);
        let mut bytes = std::fs::read(&idx_path).unwrap();
        for k in 0..4 {
            bytes.swap(sa + k, sb + k);
        }
        std::fs::set_permissions(&idx_path, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::write(&idx_path, &bytes).unwrap();
        let mut objects = PackObjects::open(&[dir.path().join(".git/objects")]);
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
            let mut reader = PackObjects::open(&[dir.path().join(".git/objects")]);
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
