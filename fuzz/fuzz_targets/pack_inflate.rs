//! zlib streams as guard inflates the trees, commits and deltas it reads out of packs
//! (libdeflate, whole, to a size known beforehand: `git::pack::inflate`) against zlib
//! (flate2), as git's index-pack inflates every object of a pack it takes: a stream zlib
//! inflates to `size` bytes, libdeflate must inflate to the same bytes, taking as much of the
//! input. libdeflate is the more lenient of the two, and that is allowed: it inflates a
//! fixed-Huffman block that uses the literal/length codes 286 and 287, which zlib refuses
//! (`invalid literal/length code`; found by this target). No stream guard inflates can be
//! one zlib refuses: guard reads only packs that git indexed (index-pack inflated every
//! entry with zlib, and guard requires the pack's checksum to be the one the index
//! recorded) and checks the CRC-32 of each entry it is asked for; a pack changed on disk
//! after git indexed it is out of reach of a pusher.
#![no_main]
use libfuzzer_sys::fuzz_target;
use merge_guard::git::pack::fuzzing::{inflate_whole, inflate_zlib};

fuzz_target!(|input: (u16, &[u8])| {
    let (size, stream) = input;
    let size = usize::from(size);
    if let Some(zlib) = inflate_zlib(stream, size) {
        assert_eq!(
            inflate_whole(stream, size),
            Some(zlib),
            "{size} {stream:02x?}"
        );
    }
});
