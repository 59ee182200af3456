//! zlib streams of a size known beforehand, inflated whole by libdeflate.
//!
//! A pack entry's header gives the size of what its stream makes, so the output buffer is
//! made once at that size and the stream inflated in one call. Nearly every stream a walk
//! reads is a small tree or delta of a few hundred bytes with Huffman tables of its own:
//! there the cost is building those tables, which libdeflate does in about half the time
//! zlib-rs takes through flate2's streaming interface (BENCHMARKS.md, "Measured choices",
//! M7). Streams too large to hold whole (fixture blobs)
//! are still inflated in pieces by flate2 (`pack::blob`).

use std::ptr::NonNull;

use libdeflate_sys::{
    libdeflate_alloc_decompressor, libdeflate_decompressor, libdeflate_free_decompressor,
    libdeflate_result_LIBDEFLATE_SUCCESS, libdeflate_zlib_decompress_ex,
};

/// One libdeflate decompressor (its tables, about 11 KiB). One per reader: a decompressor is
/// not shared between threads.
pub(super) struct Inflater(NonNull<libdeflate_decompressor>);

impl Inflater {
    pub(super) fn new() -> Inflater {
        // SAFETY: libdeflate_alloc_decompressor takes nothing and returns an owned pointer, or
        // null when out of memory (where Rust's own allocations abort too).
        let decompressor = unsafe { libdeflate_alloc_decompressor() };
        Inflater(NonNull::new(decompressor).unwrap_or_else(|| {
            std::alloc::handle_alloc_error(std::alloc::Layout::new::<[u8; 11 << 10]>())
        }))
    }

    /// Inflates the zlib stream at the start of `input`, which must make exactly `size` bytes
    /// and end there, its Adler-32 checksum right: the bytes and how much of `input` the
    /// stream took (through its checksum). Bytes after the stream are not consumed.
    pub(super) fn zlib(&mut self, input: &[u8], size: usize) -> Option<(Vec<u8>, usize)> {
        let mut out = Vec::new();
        self.zlib_into(input, size, &mut out)
            .map(|used| (out, used))
    }

    /// [`Inflater::zlib`], into `out` (cleared first; what the stream made, or nothing):
    /// how much of `input` the stream took.
    pub(super) fn zlib_into(
        &mut self,
        input: &[u8],
        size: usize,
        out: &mut Vec<u8>,
    ) -> Option<usize> {
        out.clear();
        out.reserve(size);
        let mut used = 0usize;
        // SAFETY: `input` is readable for `input.len()` bytes and `out` writable for `size`
        // (`reserve` made room). Given no pointer for the size made, libdeflate succeeds only when
        // the stream made exactly `size` bytes, and writes none past them.
        let result = unsafe {
            libdeflate_zlib_decompress_ex(
                self.0.as_ptr(),
                input.as_ptr().cast(),
                input.len(),
                out.as_mut_ptr().cast(),
                size,
                &mut used,
                std::ptr::null_mut(),
            )
        };
        if result != libdeflate_result_LIBDEFLATE_SUCCESS || used > input.len() {
            return None;
        }
        // SAFETY: on success libdeflate wrote all `size` bytes.
        unsafe { out.set_len(size) };
        Some(used)
    }
}

impl Drop for Inflater {
    fn drop(&mut self) {
        // SAFETY: the pointer came from libdeflate_alloc_decompressor and is freed once, here.
        unsafe { libdeflate_free_decompressor(self.0.as_ptr()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn zlib(bytes: &[u8]) -> Vec<u8> {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(bytes).unwrap();
        z.finish().unwrap()
    }

    #[test]
    fn a_stream_makes_exactly_its_size_and_says_where_it_ends() {
        let text: Vec<u8> = (0..5000u32).flat_map(|i| (i % 251).to_le_bytes()).collect();
        let stream = zlib(&text);
        let mut inflater = Inflater::new();
        // Whether the bytes made are `text`, and how much of the input the stream took: a
        // failure names those, not 20,000 bytes.
        let mut read = |input: &[u8], size: usize| {
            inflater
                .zlib(input, size)
                .map(|(made, used)| (made == text, used))
        };
        // The next entry's bytes follow the stream in a pack: they are not read.
        let mut input = stream.clone();
        input.extend_from_slice(b"\x78\x9cnext entry");
        assert_eq!(read(&input, text.len()), Some((true, stream.len())));
        // A size other than what the stream makes is refused, either way.
        assert_eq!(read(&stream, text.len() - 1), None);
        assert_eq!(read(&stream, text.len() + 1), None);
        // Cut short, or its checksum wrong: refused.
        assert_eq!(read(&stream[..stream.len() - 1], text.len()), None);
        let mut bad_sum = stream.clone();
        *bad_sum.last_mut().unwrap() ^= 1;
        assert_eq!(read(&bad_sum, text.len()), None);
        // Not zlib at all, and nothing: refused.
        assert_eq!(read(b"not zlib", 3), None);
        assert_eq!(read(b"", 0), None);
        // The same decompressor reads on after a refusal.
        assert_eq!(read(&stream, text.len()), Some((true, stream.len())));
        // An empty object (git's empty blob) is a stream of its own.
        assert_eq!(inflater.zlib(&zlib(b""), 0), Some((Vec::new(), 8)));
    }
}
