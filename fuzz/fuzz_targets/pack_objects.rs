//! Whole objects read out of packs (`git::pack::PackObjects`, which the walks read trees,
//! commits and test files through), structure-aware: the input describes up to 12 objects
//! (commits, trees, blobs: any bytes) and deltas on earlier ones (by offset or by id, copy
//! and insert instructions), which are written as a version 2 pack with its index, SHA-1 or
//! SHA-256 (the first byte); then the input's remaining bytes flip bits of the pack. Every
//! object is asked for by its id and its type: without damage the reader gives its content
//! exactly; with damage, exactly its content or nothing (the caller then reads through
//! libgit2, which refuses a damaged pack as well), never other bytes. A pack's files go to a
//! directory under /dev/shm where there is one.
#![no_main]
use std::io::Write as _;
use std::path::PathBuf;

use git2::{ObjectFormat, ObjectType, Oid};
use libfuzzer_sys::fuzz_target;
use merge_guard::git::pack::PackObjects;

/// The bytes of the input, then zeros.
struct Bytes<'a>(std::slice::Iter<'a, u8>);

impl Bytes<'_> {
    fn next(&mut self) -> usize {
        self.0.next().copied().map_or(0, usize::from)
    }

    fn take(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// One pack entry: its type (1 commit, 2 tree, 3 blob, 6 delta by offset, 7 by id), the
/// entry it is a delta on, and what its zlib stream holds.
struct Entry {
    kind: u8,
    base: usize,
    payload: Vec<u8>,
}

const OFS_DELTA: u8 = 6;
const REF_DELTA: u8 = 7;

fn object_type(kind: u8) -> ObjectType {
    match kind {
        1 => ObjectType::Commit,
        2 => ObjectType::Tree,
        _ => ObjectType::Blob,
    }
}

/// git's size varint of a delta header.
fn size_varint(out: &mut Vec<u8>, mut n: usize) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// A delta on `base` made of the input's copy and insert instructions, and what it makes.
fn delta(base: &[u8], input: &mut Bytes) -> (Vec<u8>, Vec<u8>) {
    let mut ops = Vec::new();
    let mut target = Vec::new();
    for _ in 0..1 + input.next() % 4 {
        if input.next() % 2 == 0 && !base.is_empty() {
            // Offset and length in one byte each: both below 256.
            let offset = input.next() % base.len().min(256);
            let len = 1 + input.next() % (base.len() - offset).min(255);
            ops.extend_from_slice(&[0x80 | 0x01 | 0x10, offset as u8, len as u8]);
            target.extend_from_slice(&base[offset..offset + len]);
        } else {
            let len = 1 + input.next() % 16;
            let bytes = input.take(len);
            ops.push(bytes.len() as u8);
            ops.extend_from_slice(&bytes);
            target.extend_from_slice(&bytes);
        }
    }
    let mut payload = Vec::new();
    size_varint(&mut payload, base.len());
    size_varint(&mut payload, target.len());
    payload.extend_from_slice(&ops);
    (payload, target)
}

fn zlib(bytes: &[u8]) -> Vec<u8> {
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(bytes).unwrap();
    z.finish().unwrap()
}

fn scratch() -> tempfile::TempDir {
    let shm = std::path::Path::new("/dev/shm");
    if shm.is_dir() {
        tempfile::tempdir_in(shm).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Bytes(data.iter());
    let (format, hash_len) = if input.next() % 2 == 0 {
        (ObjectFormat::Sha1, 20)
    } else {
        (ObjectFormat::Sha256, 32)
    };
    // The objects (type, content, id) and the entries that store them, one each.
    let mut objects: Vec<(u8, Vec<u8>, Oid)> = Vec::new();
    let mut entries: Vec<Entry> = Vec::new();
    for i in 0..1 + input.next() % 12 {
        let choice = input.next();
        let (entry, kind, content) = if i > 0 && choice % 3 == 0 {
            let base = input.next() % i;
            let (kind, base_content) = (objects[base].0, objects[base].1.clone());
            let (payload, target) = delta(&base_content, &mut input);
            let delta_kind = if choice % 2 == 0 {
                OFS_DELTA
            } else {
                REF_DELTA
            };
            let entry = Entry {
                kind: delta_kind,
                base,
                payload,
            };
            (entry, kind, target)
        } else {
            let kind = 1 + (choice % 3) as u8;
            let len = input.next() % 64;
            let content = input.take(len);
            let entry = Entry {
                kind,
                base: 0,
                payload: content.clone(),
            };
            (entry, kind, content)
        };
        let id = Oid::hash_object_ext(object_type(kind), &content, format).unwrap();
        // An index lists each id once.
        if objects.iter().any(|o| o.2 == id) {
            break;
        }
        objects.push((kind, content, id));
        entries.push(entry);
    }

    // The pack, and each entry's offset and CRC-32.
    let mut pack = b"PACK".to_vec();
    pack.extend_from_slice(&2u32.to_be_bytes());
    pack.extend_from_slice(&(entries.len() as u32).to_be_bytes());
    let mut offsets = Vec::new();
    let mut crcs = Vec::new();
    for entry in &entries {
        let at = pack.len();
        offsets.push(at);
        let mut size = entry.payload.len();
        let mut byte = (entry.kind << 4) | (size & 0x0f) as u8;
        size >>= 4;
        while size > 0 {
            pack.push(byte | 0x80);
            byte = (size & 0x7f) as u8;
            size >>= 7;
        }
        pack.push(byte);
        match entry.kind {
            OFS_DELTA => {
                // git's offset varint: each further byte adds one before shifting.
                let mut back = at - offsets[entry.base];
                let mut bytes = vec![(back & 0x7f) as u8];
                back >>= 7;
                while back > 0 {
                    back -= 1;
                    bytes.push(0x80 | (back & 0x7f) as u8);
                    back >>= 7;
                }
                bytes.reverse();
                pack.extend_from_slice(&bytes);
            }
            REF_DELTA => pack.extend_from_slice(objects[entry.base].2.as_bytes()),
            _ => {}
        }
        pack.extend_from_slice(&zlib(&entry.payload));
        crcs.push(crc32fast::hash(&pack[at..]));
    }
    let checksum = Oid::hash_object_ext(ObjectType::Blob, &pack, format).unwrap();
    let body_len = pack.len();
    pack.extend_from_slice(checksum.as_bytes());
    // Damage: the rest of the input, a position and a bit at a time, in the entries only
    // (the header and the trailer stay what the index expects).
    let mut damaged = false;
    while input.0.len() >= 2 {
        let at = 12 + (input.next() << 8 | input.next()) % (body_len - 12).max(1);
        let bit = input.next() % 8;
        if at < body_len {
            pack[at] ^= 1 << bit;
            damaged = true;
        }
    }

    // The index: ids sorted, with their CRC-32s and offsets.
    let mut listed: Vec<(Vec<u8>, u32, u32)> = objects
        .iter()
        .zip(&crcs)
        .zip(&offsets)
        .map(|((o, &crc), &at)| (o.2.as_bytes().to_vec(), crc, at as u32))
        .collect();
    listed.sort();
    let mut idx = vec![0xff, b't', b'O', b'c', 0, 0, 0, 2];
    for b in 0..256usize {
        let count = listed.iter().filter(|l| usize::from(l.0[0]) <= b).count();
        idx.extend_from_slice(&(count as u32).to_be_bytes());
    }
    for l in &listed {
        idx.extend_from_slice(&l.0);
    }
    for l in &listed {
        idx.extend_from_slice(&l.1.to_be_bytes());
    }
    for l in &listed {
        idx.extend_from_slice(&l.2.to_be_bytes());
    }
    idx.extend_from_slice(checksum.as_bytes());
    idx.extend_from_slice(&vec![0u8; hash_len]);

    let dir = scratch();
    let objects_dir: PathBuf = dir.path().join("objects");
    std::fs::create_dir_all(objects_dir.join("pack")).unwrap();
    std::fs::write(objects_dir.join("pack/pack-fuzz.pack"), &pack).unwrap();
    std::fs::write(objects_dir.join("pack/pack-fuzz.idx"), &idx).unwrap();
    let mut reader = PackObjects::open(&[objects_dir], hash_len);
    for (kind, content, id) in &objects {
        let got = reader.read(*id, object_type(*kind));
        match got {
            Some(bytes) => assert_eq!(&bytes[..], &content[..], "other bytes for {id}: {data:?}"),
            None => assert!(damaged, "{id} not read from an undamaged pack: {data:?}"),
        }
    }
});
