//! Blobs streamed straight out of git's pack files, for hashing fixtures.
//!
//! Hashing a gigabyte of fixtures from git through libgit2 costs about as much again as the
//! hashing: libgit2 zeroes a buffer the size of each blob, inflates the blob into it with the
//! system's zlib (whose Adler-32 check is not vectorised) and maps the pack in windows it
//! unmaps again. Here a blob is inflated in pieces of [`CHUNK`] bytes, each handed to the
//! caller while it is still in the CPU's cache, by zlib-rs.
//!
//! Only what hashing needs is read: a blob stored whole (not as a delta) in a pack whose index
//! is of version 2, in a repository of SHA-1 ids. Anything else is left to libgit2 by the
//! caller, and so is every error: an entry is taken only if it is a blob of the size libgit2
//! gives for the id and its zlib stream ends, with its Adler-32 checksum right, exactly at
//! that size.

use std::cell::OnceCell;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use flate2::{Decompress, FlushDecompress, Status};
use git2::Oid;

use super::{Index, OBJ_BLOB, PACK_HEADER, be32, entry_header, is_pack_header, pack_indexes};

/// Bytes read from a pack and inflated at a time: the output stays in the core's cache until
/// the caller has hashed it.
const CHUNK: usize = 256 * 1024;

/// The packs of some object directories, with buffers for streaming out of them. One per
/// thread: reads share no state.
pub struct PackBlobs {
    packs: Vec<Pack>,
    input: Vec<u8>,
    output: Vec<u8>,
}

struct Pack {
    index: Index,
    /// The pack file, opened when first read: a repository may have hundreds of packs, and
    /// each thread holding a descriptor for every one could run out of them (the index's
    /// map needs none).
    path: PathBuf,
    pack: OnceCell<Option<File>>,
}

impl PackBlobs {
    /// The packs in `pack/` of each of `dirs`, in order. A pack whose index is missing, not of
    /// version 2 or malformed is left out (libgit2 still reads it).
    /// `hash_len` is the length of the repository's ids (20 or 32).
    pub fn open(dirs: &[PathBuf], hash_len: usize) -> PackBlobs {
        PackBlobs {
            packs: pack_indexes(dirs)
                .iter()
                .filter_map(|idx| Pack::open(idx, hash_len))
                .collect(),
            input: Vec::new(),
            output: Vec::new(),
        }
    }

    /// Whether no pack index was opened.
    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.packs.is_empty()
    }

    /// Hands the content of blob `id`, which has `size` bytes, to `sink` in order, in pieces.
    /// True when the whole content was handed over from a pack; false when no pack here holds
    /// it whole, or the entry is not as promised (then `sink` may have had part of it, and the
    /// caller reads the blob through libgit2).
    pub fn stream(&mut self, id: Oid, size: u64, mut sink: impl FnMut(&[u8])) -> bool {
        let key = id.as_bytes();
        if self.input.is_empty() {
            self.input = vec![0; CHUNK];
            self.output = vec![0; CHUNK];
        }
        for pack in &self.packs {
            let Some(offset) = pack.index.find(key).and_then(|nth| pack.index.offset(nth)) else {
                continue;
            };
            match pack.stream_blob(offset, size, &mut self.input, &mut self.output, &mut sink) {
                Ok(true) => return true,
                // Another pack may hold the same object whole.
                Ok(false) | Err(_) => continue,
            }
        }
        false
    }
}

impl Pack {
    /// Maps and checks one index (its pack is opened when first read).
    fn open(idx_path: &Path, hash_len: usize) -> Option<Pack> {
        Some(Pack {
            index: Index::open(idx_path, hash_len)?,
            path: idx_path.with_extension("pack"),
            pack: OnceCell::new(),
        })
    }

    /// The pack file, if it opens, its header is a pack's (version 2 or 3), and it is the
    /// pack its index describes (its object count and checksum), as git requires.
    fn file(&self) -> Option<&File> {
        self.pack
            .get_or_init(|| {
                let mut file = File::open(&self.path).ok()?;
                let mut header = [0u8; PACK_HEADER];
                io::Read::read_exact(&mut file, &mut header).ok()?;
                let len = file.metadata().ok()?.len();
                let n = self.index.hash_len;
                let mut checksum = vec![0u8; n];
                let at = len.checked_sub(n as u64)?;
                (read_at(&file, &mut checksum, at).ok()? == n).then_some(())?;
                let listed = be32(&header, 8) as usize;
                (is_pack_header(&header)
                    && listed == self.index.count
                    && checksum[..] == *self.index.pack_checksum())
                .then_some(file)
            })
            .as_ref()
    }

    /// Streams the entry at `offset` to `sink` if it is a whole blob of `size` bytes: true
    /// when all of it was handed over and its zlib stream ended there.
    fn stream_blob(
        &self,
        offset: u64,
        size: u64,
        input: &mut [u8],
        output: &mut [u8],
        sink: &mut impl FnMut(&[u8]),
    ) -> io::Result<bool> {
        let Some(pack) = self.file() else {
            return Ok(false);
        };
        let mut head = [0u8; 16];
        let got = read_at(pack, &mut head, offset)?;
        let header = entry_header(&head[..got]).ok_or_else(truncated)?;
        if header.kind != OBJ_BLOB || header.size != size {
            return Ok(false);
        }
        let used = header.len;
        let mut at = offset + used as u64;
        let mut zlib = Decompress::new(true);
        loop {
            // Stored deflate blocks (what git writes for bytes that do not compress) cost five
            // bytes in 64 KiB: reading a little past what is left is enough for most entries
            // to end within the read, without copying much of the next entry.
            let left = size - zlib.total_out();
            let want = usize::try_from(left + left / 8192 + 64).map_or(CHUNK, |n| n.min(CHUNK));
            let got = read_at(pack, &mut input[..want], at)?;
            if got == 0 {
                return Err(truncated());
            }
            at += got as u64;
            let mut fed = 0;
            loop {
                let (before_in, before_out) = (zlib.total_in(), zlib.total_out());
                let status = zlib
                    .decompress(&input[fed..got], output, FlushDecompress::None)
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                let took = (zlib.total_in() - before_in) as usize;
                let made = (zlib.total_out() - before_out) as usize;
                if zlib.total_out() > size {
                    return Ok(false);
                }
                sink(&output[..made]);
                fed += took;
                if status == Status::StreamEnd {
                    return Ok(zlib.total_out() == size);
                }
                // Read more once this input is used up and no output is pending (the output
                // buffer was not filled), or when nothing moved (it wants more than is left).
                if (fed == got && made < output.len()) || (took == 0 && made == 0) {
                    break;
                }
            }
        }
    }
}

fn truncated() -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        "pack entry runs past the file",
    )
}

/// Reads at `offset` until `buf` is full or the file ends; the bytes read.
#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    use std::os::unix::fs::FileExt;
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

#[cfg(not(unix))]
fn read_at(_: &File, _: &mut [u8], _: u64) -> io::Result<usize> {
    // No positioned reads to share a file between calls: every blob goes through libgit2.
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

#[cfg(test)]
mod tests {
    use super::*;
    use git2::Repository;
    use std::collections::HashMap;
    use std::os::unix::fs::PermissionsExt;

    use crate::git::test_git as git;

    /// Bytes that do not compress (zlib stores them), from a xorshift seeded with `seed`.
    fn noise(seed: u64, len: usize) -> Vec<u8> {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    }

    /// A repository whose blobs, packed by `git repack -adf`, are of every shape a pack holds:
    /// empty, tiny, text that compresses, noise over several chunks, and a near copy of a
    /// blob (a delta). Returns it with git's own list of its packed objects: id to (type,
    /// size, offset, whether a delta).
    fn packed_repo(dir: &Path) -> HashMap<Oid, (String, u64, u64, bool)> {
        git(dir, &["init", "-q", "-b", "main", "."]);
        let big = noise(7, 3 * CHUNK + 12_345);
        let mut near = big.clone();
        near[CHUNK] ^= 0xff;
        let text: Vec<u8> = (0..40_000)
            .flat_map(|i| format!("line {i} of a fixture that compresses\n").into_bytes())
            .collect();
        let files: [(&str, &[u8]); 5] = [
            ("empty", b""),
            ("tiny", b"abc"),
            ("text", &text),
            ("noise", &big),
            ("small-noise", &noise(8, 5000)),
        ];
        for (name, bytes) in files {
            std::fs::write(dir.join(name), bytes).unwrap();
        }
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-qm", "one"]);
        std::fs::write(dir.join("noise"), &near).unwrap();
        git(dir, &["commit", "-qam", "two"]);
        git(dir, &["repack", "-adfq"]);
        packed_objects(dir)
    }

    /// `git verify-pack -v` of the repository's one pack: id to (type, size, offset, delta).
    fn packed_objects(dir: &Path) -> HashMap<Oid, (String, u64, u64, bool)> {
        let idx = pack_indexes(dir);
        assert_eq!(idx.len(), 1, "{idx:?}");
        let listing = git(dir, &["verify-pack", "-v", idx[0].to_str().unwrap()]);
        listing
            .lines()
            .filter_map(|line| {
                let f: Vec<&str> = line.split_whitespace().collect();
                let id = crate::git::test_oid(f.first()?)?;
                (f.len() >= 5).then(|| {
                    let delta = f.len() > 5;
                    (
                        id,
                        (
                            f[1].to_string(),
                            f[2].parse().unwrap(),
                            f[4].parse().unwrap(),
                            delta,
                        ),
                    )
                })
            })
            .collect()
    }

    fn pack_indexes(dir: &Path) -> Vec<PathBuf> {
        std::fs::read_dir(dir.join(".git/objects/pack"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "idx"))
            .collect()
    }

    fn streamed(packs: &mut PackBlobs, id: Oid, size: u64) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        packs
            .stream(id, size, |piece| out.extend_from_slice(piece))
            .then_some(out)
    }

    /// Every blob git lists as stored whole streams as libgit2 reads it, every delta and
    /// every other object is left to libgit2.
    fn streams_as_libgit2_reads(dir: &Path, objects: &HashMap<Oid, (String, u64, u64, bool)>) {
        let repo = Repository::open(dir).unwrap();
        let mut packs = PackBlobs::open(&[dir.join(".git/objects")], crate::git::test_hash_len());
        let mut whole = 0;
        for (&id, (kind, size, _, delta)) in objects {
            let got = streamed(&mut packs, id, *size);
            if kind == "blob" && !delta {
                let blob = repo.find_blob(id).unwrap();
                assert_eq!(got.as_deref(), Some(blob.content()), "{id}");
                whole += 1;
            } else {
                assert_eq!(got, None, "{id} is a {kind} (delta: {delta})");
            }
        }
        // empty, tiny, text, noise, small-noise and the near copy, or its base, whole
        assert!(whole >= 5, "{objects:?}");
        assert!(
            objects
                .values()
                .any(|(kind, _, _, delta)| kind == "blob" && *delta)
        );
    }

    #[test]
    fn blobs_stored_whole_stream_as_libgit2_reads_them() {
        let dir = tempfile::tempdir().unwrap();
        let objects = packed_repo(dir.path());
        streams_as_libgit2_reads(dir.path(), &objects);
    }

    #[test]
    fn sixty_four_bit_offsets_are_followed() {
        let dir = tempfile::tempdir().unwrap();
        let objects = packed_repo(dir.path());
        // git's test option: every object past offset 100 (all but the first) gets a 64-bit
        // offset, as in a pack over 2 GiB.
        let idx = pack_indexes(dir.path()).remove(0);
        let before = std::fs::metadata(&idx).unwrap().len();
        let idx = super::super::index_with_large_offsets(dir.path());
        let after = std::fs::metadata(&idx).unwrap().len();
        let large = objects.values().filter(|(_, _, at, _)| *at > 100).count();
        assert!(large + 1 >= objects.len(), "{objects:?}");
        assert_eq!(after, before + 8 * large as u64);
        streams_as_libgit2_reads(dir.path(), &objects);
    }

    #[test]
    fn a_blob_of_another_size_loose_or_missing_is_not_streamed() {
        let dir = tempfile::tempdir().unwrap();
        let objects = packed_repo(dir.path());
        let mut packs = PackBlobs::open(
            &[dir.path().join(".git/objects")],
            crate::git::test_hash_len(),
        );
        let (&id, (_, size, _, _)) = objects
            .iter()
            .find(|(_, (kind, size, _, delta))| kind == "blob" && !delta && *size == 3)
            .unwrap();
        assert_eq!(
            streamed(&mut packs, id, *size).as_deref(),
            Some(&b"abc"[..])
        );
        assert_eq!(streamed(&mut packs, id, size + 1), None);
        assert_eq!(streamed(&mut packs, id, size - 1), None);
        let repo = Repository::open(dir.path()).unwrap();
        let loose = repo.blob(b"written after the repack\n").unwrap();
        assert!(repo.find_blob(loose).is_ok());
        assert_eq!(streamed(&mut packs, loose, 24), None);
        assert_eq!(
            streamed(
                &mut packs,
                Oid::from_bytes(&[0xab; 32][..crate::git::test_hash_len()]).unwrap(),
                3
            ),
            None
        );
    }

    #[test]
    fn a_damaged_entry_or_index_is_not_streamed() {
        let dir = tempfile::tempdir().unwrap();
        let objects = packed_repo(dir.path());
        let (&id, &(_, size, offset, _)) = objects
            .iter()
            .find(|(_, (kind, size, _, delta))| {
                kind == "blob" && !delta && *size == 3 * CHUNK as u64 + 12_345
            })
            .unwrap();
        let pack = pack_indexes(dir.path()).remove(0).with_extension("pack");
        let mut bytes = std::fs::read(&pack).unwrap();
        let good_pack = bytes.clone();
        let mut packs = PackBlobs::open(
            &[dir.path().join(".git/objects")],
            crate::git::test_hash_len(),
        );
        assert!(streamed(&mut packs, id, size).is_some());
        // One byte of the stored noise, far into the entry: only the checksum tells.
        let at = offset as usize + 2 * CHUNK;
        bytes[at] ^= 0x01;
        std::fs::set_permissions(&pack, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::write(&pack, &bytes).unwrap();
        let mut packs = PackBlobs::open(
            &[dir.path().join(".git/objects")],
            crate::git::test_hash_len(),
        );
        let mut seen = 0u64;
        assert!(!packs.stream(id, size, |piece| seen += piece.len() as u64));
        assert!(seen > 2 * CHUNK as u64, "read up to the damage: {seen}");
        // A pack file whose header is not a pack's.
        let mut unpacked = good_pack.clone();
        unpacked[..4].copy_from_slice(b"KCAP");
        std::fs::write(&pack, &unpacked).unwrap();
        let mut packs = PackBlobs::open(
            &[dir.path().join(".git/objects")],
            crate::git::test_hash_len(),
        );
        assert_eq!(streamed(&mut packs, id, size), None);
        // The pack cut short inside the entry.
        std::fs::write(&pack, &bytes[..offset as usize + CHUNK]).unwrap();
        let mut packs = PackBlobs::open(
            &[dir.path().join(".git/objects")],
            crate::git::test_hash_len(),
        );
        assert_eq!(streamed(&mut packs, id, size), None);

        // An index cut short, or of another version, is not opened.
        let idx = pack.with_extension("idx");
        let good = std::fs::read(&idx).unwrap();
        std::fs::set_permissions(&idx, std::fs::Permissions::from_mode(0o644)).unwrap();
        for bad in [
            &good[..good.len() - 1],
            &good[..100],
            &[&good[..7], &[1u8][..], &good[8..]].concat(),
        ] {
            std::fs::write(&idx, bad).unwrap();
            assert!(
                PackBlobs::open(
                    &[dir.path().join(".git/objects")],
                    crate::git::test_hash_len()
                )
                .is_empty()
            );
        }
        std::fs::write(&idx, &good).unwrap();
        assert!(
            !PackBlobs::open(
                &[dir.path().join(".git/objects")],
                crate::git::test_hash_len()
            )
            .is_empty()
        );
    }

    #[test]
    fn bytes_flipped_anywhere_in_pack_or_index_never_give_other_content() {
        // Whatever is damaged, a blob is either streamed as it is or left to libgit2: no panic,
        // no other bytes. Blob sizes here are all different, so an offset damaged into another
        // entry's is refused by the size check.
        let dir = tempfile::tempdir().unwrap();
        let objects = packed_repo(dir.path());
        let repo = Repository::open(dir.path()).unwrap();
        let blobs: Vec<(Oid, u64, Vec<u8>)> = objects
            .iter()
            .filter(|(_, (kind, _, _, _))| kind == "blob")
            .map(|(&id, (_, size, _, _))| {
                (id, *size, repo.find_blob(id).unwrap().content().to_vec())
            })
            .collect();
        let (mut streamed_some, mut refused_some) = (false, false);
        super::super::with_damaged_pack(dir.path(), 80, |round| {
            let mut packs = PackBlobs::open(
                &[dir.path().join(".git/objects")],
                crate::git::test_hash_len(),
            );
            for (id, size, content) in &blobs {
                match streamed(&mut packs, *id, *size) {
                    Some(got) => {
                        assert_eq!(&got, content, "round {round}: {id}");
                        streamed_some = true;
                    }
                    None => refused_some = true,
                }
            }
        });
        assert!(streamed_some && refused_some);
    }

    #[test]
    fn packs_of_every_directory_given_are_read() {
        // As in a pre-receive hook: the repository's objects as an alternate, the push's
        // quarantine as the object directory.
        let main = tempfile::tempdir().unwrap();
        let pushed = tempfile::tempdir().unwrap();
        let main_objects = packed_repo(main.path());
        let pushed_objects = packed_repo(pushed.path());
        let mut packs = PackBlobs::open(
            &[
                main.path().join(".git/objects"),
                pushed.path().join(".git/objects"),
            ],
            crate::git::test_hash_len(),
        );
        for objects in [&main_objects, &pushed_objects] {
            let (&id, (_, size, _, _)) = objects
                .iter()
                .find(|(_, (kind, size, _, delta))| kind == "blob" && !delta && *size > 4 * 1024)
                .unwrap();
            assert!(streamed(&mut packs, id, *size).is_some(), "{id}");
        }
    }
}
