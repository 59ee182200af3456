//! git's pack files read here, where libgit2 is slow, each read falling back to libgit2.
//!
//! - [`PackBlobs`] streams a fixture's blob out of a pack in pieces, for hashing.
//! - [`PackObjects`] reads whole objects (the trees of a history walk), following deltas.
//!
//! Both answer only what they can read exactly as git wrote it, and leave everything else
//! (a loose object, a version 1 index, a pack that will not open, an entry that is not what
//! the index promises) to libgit2, errors included: the caller reads through libgit2 when
//! they answer nothing. That the bytes are the object's own is git's promise: `index-pack`
//! computed every object's id from its content when it wrote the index (so on a server, for
//! every pushed object), and the index maps each id to its entry. guard trusts the object
//! database on read as git does (and as it asks libgit2 to: no hash checked again on read).
//!
//! Format: git's `Documentation/gitformat-pack.txt`. Like the commit-graph reader
//! (`graph.rs`), an index is mapped read-only: git never rewrites one in place.

mod blob;
mod delta;
mod inflate;
mod object;

use std::fs::File;
use std::path::{Path, PathBuf};

use memmap2::Mmap;

pub use blob::PackBlobs;
pub use object::PackObjects;

/// Magic and version 2 of a pack index (SHA-1 and SHA-256 repositories alike: git writes
/// version 2 with ids of the repository's length).
const IDX_HEADER: [u8; 8] = [0xff, b't', b'O', b'c', 0, 0, 0, 2];
const FANOUT: usize = 8;
const ENTRIES: usize = FANOUT + 256 * 4;
/// A pack file's header: `PACK`, the version, the object count.
const PACK_HEADER: usize = 12;

/// The types of a pack entry (bits 4-6 of its first byte).
const OBJ_COMMIT: u8 = 1;
const OBJ_TREE: u8 = 2;
const OBJ_BLOB: u8 = 3;
const OBJ_TAG: u8 = 4;
const OBJ_OFS_DELTA: u8 = 6;
const OBJ_REF_DELTA: u8 = 7;

/// The `.idx` files in the `pack/` directory of each of `dirs`, in order, each directory's
/// sorted by name. A directory that cannot be listed holds none here.
fn pack_indexes(dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut all = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir.join("pack")) else {
            continue;
        };
        let mut idxs: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "idx"))
            .collect();
        idxs.sort();
        all.extend(idxs);
    }
    all
}

/// A pack's index (version 2), mapped.
struct Index {
    idx: Mmap,
    /// The length of the ids it lists, the repository's: 20 (SHA-1) or 32 (SHA-256).
    hash_len: usize,
    count: usize,
    /// Where the 64-bit offsets start, and how many there are.
    large: usize,
    large_count: usize,
}

impl Index {
    /// Maps and checks the index at `path`, of `hash_len`-byte ids (the repository's); `None`
    /// if it is missing, of another version or malformed (libgit2 still reads its pack).
    fn open(path: &Path, hash_len: usize) -> Option<Index> {
        if hash_len != 20 && hash_len != 32 {
            return None;
        }
        let file = File::open(path).ok()?;
        // SAFETY: the map is read-only and private. git writes an index once, under a temporary
        // name, and renames it into place; it never rewrites one (git and libgit2 map them too).
        let idx = unsafe { Mmap::map(&file) }.ok()?;
        Self::from_map(idx, hash_len)
    }

    /// Checks the index mapped at `idx` (what `open` does once the file is mapped).
    fn from_map(idx: Mmap, hash_len: usize) -> Option<Index> {
        if hash_len != 20 && hash_len != 32 {
            return None;
        }
        // The pack's and the index's own checksums end an index.
        let trailer = 2 * hash_len;
        let m = &idx[..];
        if m.len() < ENTRIES + trailer || m[..8] != IDX_HEADER {
            return None;
        }
        if (1..256).any(|b| be32(m, FANOUT + (b - 1) * 4) > be32(m, FANOUT + b * 4)) {
            return None;
        }
        let count = be32(m, FANOUT + 255 * 4) as usize;
        // Ids, CRC-32s and 32-bit offsets, then the 64-bit offsets and the trailer.
        let large = count.checked_mul(hash_len + 4 + 4)?.checked_add(ENTRIES)?;
        let rest = m.len().checked_sub(large)?.checked_sub(trailer)?;
        if rest % 8 != 0 {
            return None;
        }
        Some(Index {
            idx,
            hash_len,
            count,
            large,
            large_count: rest / 8,
        })
    }

    /// The position of `id` in the index; `None` also for an id of another length.
    fn find(&self, id: &[u8]) -> Option<usize> {
        let (m, n) = (&self.idx[..], self.hash_len);
        if id.len() != n {
            return None;
        }
        let first = id[0] as usize;
        let mut lo = match first {
            0 => 0,
            _ => be32(m, FANOUT + (first - 1) * 4) as usize,
        };
        let mut hi = be32(m, FANOUT + first * 4) as usize;
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let at = ENTRIES + mid * n;
            match m[at..at + n].cmp(id) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    /// The pack offset of the `nth` object of the index.
    fn offset(&self, nth: usize) -> Option<u64> {
        let m = &self.idx[..];
        let small = be32(m, ENTRIES + self.count * (self.hash_len + 4) + nth * 4);
        if small & 0x8000_0000 == 0 {
            return Some(u64::from(small));
        }
        let k = (small & 0x7fff_ffff) as usize;
        if k >= self.large_count {
            return None;
        }
        let at = self.large + k * 8;
        Some(u64::from_be_bytes(m[at..at + 8].try_into().ok()?))
    }

    /// The checksum of the pack this index describes (the pack file's last `hash_len` bytes).
    fn pack_checksum(&self) -> &[u8] {
        let end = self.idx.len() - self.hash_len;
        &self.idx[end - self.hash_len..end]
    }

    /// The CRC-32 of the `nth` object's whole entry in the pack (header and zlib stream), as
    /// `index-pack` computed it.
    fn crc(&self, nth: usize) -> u32 {
        be32(&self.idx, ENTRIES + self.count * self.hash_len + nth * 4)
    }
}

/// The header of a pack entry: its type, its size (inflated; a delta's is the delta's own)
/// and how many bytes the header takes.
#[derive(Debug, PartialEq)]
struct EntryHeader {
    kind: u8,
    size: u64,
    len: usize,
}

/// Reads the entry header at the start of `bytes`: the type in bits 4-6 of the first byte,
/// the size in its low four bits and seven more in each byte that follows while the top bit
/// is set. `None` if it runs past `bytes` or past 64 bits.
fn entry_header(bytes: &[u8]) -> Option<EntryHeader> {
    let mut byte = *bytes.first()?;
    let kind = (byte >> 4) & 7;
    let mut size = u64::from(byte & 0x0f);
    let mut len = 1;
    let mut shift = 4;
    while byte & 0x80 != 0 {
        if shift > 57 {
            return None;
        }
        byte = *bytes.get(len)?;
        size |= u64::from(byte & 0x7f) << shift;
        shift += 7;
        len += 1;
    }
    Some(EntryHeader { kind, size, len })
}

/// Whether a pack file starts as one of version 2 or 3 does.
fn is_pack_header(header: &[u8]) -> bool {
    header.len() >= PACK_HEADER && &header[..4] == b"PACK" && matches!(be32(header, 4), 2 | 3)
}

fn be32(m: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([m[at], m[at + 1], m[at + 2], m[at + 3]])
}

/// Damages the repository at `dir`'s one pack `rounds` times, a few random bits of its index
/// (even rounds) or its pack file (odd rounds), each round from the good files; calls `each`
/// with the round number while the damaged files are in place.
#[cfg(test)]
fn with_damaged_pack(dir: &Path, rounds: usize, mut each: impl FnMut(usize)) {
    use std::os::unix::fs::PermissionsExt;
    let idx = pack_indexes(&[dir.join(".git/objects")]).remove(0);
    let pack = idx.with_extension("pack");
    let (good_idx, good_pack) = (std::fs::read(&idx).unwrap(), std::fs::read(&pack).unwrap());
    for path in [&idx, &pack] {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = |below: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % below as u64) as usize
    };
    for round in 0..rounds {
        let (mut i, mut p) = (good_idx.clone(), good_pack.clone());
        let target = if round % 2 == 0 { &mut i } else { &mut p };
        for _ in 0..1 + next(3) {
            let at = next(target.len());
            target[at] ^= 1 << next(8);
        }
        std::fs::write(&idx, &i).unwrap();
        std::fs::write(&pack, &p).unwrap();
        each(round);
    }
}

/// Indexes the repository at `dir`'s one pack again with git's test option that gives every
/// object past offset 100 a 64-bit offset, as in a pack over 2 GiB. The index's path.
#[cfg(test)]
fn index_with_large_offsets(dir: &Path) -> PathBuf {
    let idx = pack_indexes(&[dir.join(".git/objects")]).remove(0);
    std::fs::remove_file(&idx).unwrap();
    let pack = idx.with_extension("pack");
    let version = "--index-version=2,100";
    crate::git::test_git(dir, &["index-pack", version, pack.to_str().unwrap()]);
    idx
}

/// The pack readers' byte-level parts, for the fuzz targets (`fuzz/`), not for other code.
#[doc(hidden)]
pub mod fuzzing {
    /// `delta::apply`: the object `delta` makes of `base`, at most `limit` bytes.
    pub fn apply_delta(base: &[u8], delta: &[u8], limit: usize) -> Option<Vec<u8>> {
        super::delta::apply(base, delta, limit)
    }

    /// `inflate::Inflater::zlib`: libdeflate's whole-stream inflate of a zlib stream that
    /// must make exactly `size` bytes, and how much of `stream` it took.
    pub fn inflate_whole(stream: &[u8], size: usize) -> Option<(Vec<u8>, usize)> {
        super::inflate::Inflater::new().zlib(stream, size)
    }

    /// The same through zlib (flate2's streaming interface, as `pack::blob` inflates fixture
    /// blobs, and as git's index-pack inflates every pushed object): the reference.
    pub fn inflate_zlib(stream: &[u8], size: usize) -> Option<(Vec<u8>, usize)> {
        let mut zlib = flate2::Decompress::new(true);
        // One byte of room more than `size`: a stream that makes more is seen to.
        let mut out = Vec::with_capacity(size + 1);
        let status = zlib
            .decompress_vec(stream, &mut out, flate2::FlushDecompress::Finish)
            .ok()?;
        (status == flate2::Status::StreamEnd && out.len() == size)
            .then(|| (out, zlib.total_in() as usize))
    }

    /// A pack index (`Index`) read from bytes, as `Index::open` reads an `.idx` file, from an
    /// anonymous map instead of the file's.
    pub struct Index(super::Index);

    impl Index {
        /// `Index::open` on a file holding `bytes`, of `hash_len`-byte ids.
        pub fn open(bytes: &[u8], hash_len: usize) -> Option<Index> {
            let mut map = memmap2::MmapMut::map_anon(bytes.len()).ok()?;
            map.copy_from_slice(bytes);
            super::Index::from_map(map.make_read_only().ok()?, hash_len).map(Index)
        }

        /// How many objects the index lists.
        pub fn count(&self) -> usize {
            self.0.count
        }

        /// The id of the `nth` object, as the index lists it; `None` past the last.
        pub fn id(&self, nth: usize) -> Option<&[u8]> {
            let n = self.0.hash_len;
            let at = super::ENTRIES + nth.checked_mul(n)?;
            (nth < self.0.count).then(|| &self.0.idx[at..at + n])
        }

        /// `Index::find`.
        pub fn find(&self, id: &[u8]) -> Option<usize> {
            self.0.find(id)
        }

        /// `Index::offset`.
        pub fn offset(&self, nth: usize) -> Option<u64> {
            self.0.offset(nth)
        }

        /// `Index::crc`.
        pub fn crc(&self, nth: usize) -> u32 {
            self.0.crc(nth)
        }

        /// `Index::pack_checksum`.
        pub fn pack_checksum(&self) -> &[u8] {
            self.0.pack_checksum()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_headers_read_as_git_writes_them() {
        // git's encode_in_pack_object_header: a tree of 5 bytes, a blob of 300, a delta of
        // 1 << 35.
        assert_eq!(
            entry_header(&[0x25]),
            Some(EntryHeader {
                kind: OBJ_TREE,
                size: 5,
                len: 1
            })
        );
        assert_eq!(
            entry_header(&[0xbc, 0x12, 0xff]),
            Some(EntryHeader {
                kind: OBJ_BLOB,
                size: 300,
                len: 2
            })
        );
        assert_eq!(
            entry_header(&[0xe0, 0x80, 0x80, 0x80, 0x80, 0x08]),
            Some(EntryHeader {
                kind: OBJ_OFS_DELTA,
                size: 1 << 35,
                len: 6
            })
        );
        // Cut short, or longer than 64 bits.
        assert_eq!(entry_header(&[]), None);
        assert_eq!(entry_header(&[0xbc]), None);
        assert_eq!(entry_header(&[0xb0; 12]), None);
    }
}
