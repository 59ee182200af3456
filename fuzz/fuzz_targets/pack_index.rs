//! Pack indexes (`git::pack`'s `Index`, version 2, through which the pack readers find
//! trees, commits and test files): any bytes as an `.idx` file, SHA-1 or SHA-256 (the first
//! byte: even 20-byte ids, odd 32). No panic, no read past the file; and an index that opens
//! answers for every object it lists: an offset (or none, for a 64-bit offset past the
//! table), a CRC, the pack's checksum, and `find` of each listed id a position with that
//! id: its own when the ids are listed strictly ascending under the fanout that counts them
//! (as git writes them; an unsorted list, which the open does not check, as neither git's
//! nor libgit2's does, only makes `find` miss, and the reader then asks libgit2).
#![no_main]
use libfuzzer_sys::fuzz_target;
use merge_guard::git::pack::fuzzing::Index;

/// Objects checked per input.
const CHECKED: usize = 4_096;

fuzz_target!(|data: &[u8]| {
    let Some((&format, file)) = data.split_first() else {
        return;
    };
    let hash_len = if format % 2 == 0 { 20 } else { 32 };
    let Some(index) = Index::open(file, hash_len) else {
        return;
    };
    let count = index.count();
    assert_eq!(index.pack_checksum().len(), hash_len);
    let ids: Vec<&[u8]> = (0..count.min(CHECKED))
        .map(|nth| index.id(nth).expect("an id for every object listed"))
        .collect();
    let sorted = ids.windows(2).all(|w| w[0] < w[1]) && fanout_counts(file, &ids, count);
    for (nth, &id) in ids.iter().enumerate() {
        assert_eq!(id.len(), hash_len);
        let _ = index.offset(nth);
        let _ = index.crc(nth);
        match index.find(id) {
            Some(at) => assert_eq!(index.id(at), Some(id), "find at {nth} gave {at}"),
            None => assert!(!sorted, "find misses object {nth}"),
        }
        if sorted {
            assert_eq!(index.find(id), Some(nth));
        }
        // An id of the other length is never found.
        let other = if hash_len == 20 { 32 } else { 20 };
        let mut longer = id.to_vec();
        longer.resize(other, 0);
        assert_eq!(index.find(&longer), None);
    }
    assert_eq!(index.id(count), None);
    assert_eq!(index.find(&[]), None);
});

/// Whether the fanout table counts `ids` (all of the index's, sorted) as git writes it:
/// entry `b` is the number of ids whose first byte is at most `b`.
fn fanout_counts(file: &[u8], ids: &[&[u8]], count: usize) -> bool {
    if ids.len() != count {
        return false; // more than were checked: not worth proving
    }
    let mut below = [0u32; 256];
    for id in ids {
        below[usize::from(id[0])] += 1;
    }
    let mut seen = 0;
    (0..256).all(|b| {
        seen += below[b];
        file[8 + b * 4..8 + b * 4 + 4] == seen.to_be_bytes()
    })
}
