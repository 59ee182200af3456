//! git's delta format: an object rebuilt from a base by copying ranges of the base and
//! inserting bytes (git's `patch_delta`, `Documentation/gitformat-pack.txt`).

/// The object `delta` makes of `base`, at most `limit` bytes; `None` if the delta is not for
/// a base of this size, asks for bytes the base lacks, uses the reserved instruction, or does
/// not make exactly the size it declares.
pub(super) fn apply(base: &[u8], delta: &[u8], limit: usize) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    apply_into(base, delta, limit, &mut out).map(|()| out)
}

/// [`apply`], into `out` (cleared first): a reader rebuilding thousands of small trees keeps
/// one buffer rather than allocating and freeing one per delta.
pub(super) fn apply_into(base: &[u8], delta: &[u8], limit: usize, out: &mut Vec<u8>) -> Option<()> {
    out.clear();
    // git's `DELTA_SIZE_MIN`: the two sizes and an instruction.
    if delta.len() < 4 {
        return None;
    }
    let (base_size, rest) = size(delta)?;
    if base_size != base.len() as u64 {
        return None;
    }
    let (out_size, mut ops) = size(rest)?;
    let out_size = usize::try_from(out_size).ok().filter(|&n| n <= limit)?;
    out.reserve(out_size);
    while let Some((&op, rest)) = ops.split_first() {
        ops = rest;
        if op & 0x80 != 0 {
            // Copy: bits 0-3 say which bytes of the offset follow, bits 4-6 which of the size
            // (little-endian, absent bytes zero); a size of zero means 64 KiB.
            let mut offset = 0usize;
            let mut len = 0usize;
            for (bit, shift) in [(0x01, 0), (0x02, 8), (0x04, 16), (0x08, 24)] {
                if op & bit != 0 {
                    let (&b, rest) = ops.split_first()?;
                    offset |= usize::from(b) << shift;
                    ops = rest;
                }
            }
            for (bit, shift) in [(0x10, 0), (0x20, 8), (0x40, 16)] {
                if op & bit != 0 {
                    let (&b, rest) = ops.split_first()?;
                    len |= usize::from(b) << shift;
                    ops = rest;
                }
            }
            if len == 0 {
                len = 0x10000;
            }
            let end = offset.checked_add(len)?;
            if end > base.len() || len > out_size - out.len() {
                return None;
            }
            out.extend_from_slice(&base[offset..end]);
        } else if op != 0 {
            // Insert the next `op` bytes.
            let len = usize::from(op);
            if len > ops.len() || len > out_size - out.len() {
                return None;
            }
            out.extend_from_slice(&ops[..len]);
            ops = &ops[len..];
        } else {
            // Reserved: git refuses the delta.
            return None;
        }
    }
    (out.len() == out_size).then_some(())
}

/// A size at the start of a delta: seven bits a byte, least significant first, while the
/// top bit is set. The size and what follows it.
fn size(bytes: &[u8]) -> Option<(u64, &[u8])> {
    let mut value = 0u64;
    let mut shift = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if shift > 63 {
            return None;
        }
        value |= u64::from(b & 0x7f) << shift;
        shift += 7;
        if b & 0x80 == 0 {
            return Some((value, &bytes[i + 1..]));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: usize = 1 << 20;

    /// A size as a delta writes it.
    fn varint(mut n: usize) -> Vec<u8> {
        let mut out = Vec::new();
        loop {
            let b = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(b);
                return out;
            }
            out.push(b | 0x80);
        }
    }

    fn delta(base: usize, out: usize, ops: &[u8]) -> Vec<u8> {
        [varint(base), varint(out), ops.to_vec()].concat()
    }

    #[test]
    fn copies_and_inserts_make_the_object() {
        let base = b"the quick brown fox";
        // copy 4 bytes at 10 ("brow"), insert "ser ", copy 3 at 16 ("fox")
        let ops = [
            &[0x80 | 0x01 | 0x10, 10, 4][..],
            &[4],
            b"ser ",
            &[0x80 | 0x01 | 0x10, 16, 3],
        ]
        .concat();
        assert_eq!(
            apply(base, &delta(base.len(), 11, &ops), LIMIT).as_deref(),
            Some(&b"browser fox"[..])
        );
        // No offset bytes: offset 0.
        let ops = [0x80 | 0x10, 3];
        assert_eq!(
            apply(base, &delta(base.len(), 3, &ops), LIMIT).as_deref(),
            Some(&b"the"[..])
        );
        // Shorter than git's smallest delta (two sizes and an instruction): refused, as git
        // refuses it, even where it would make an empty object.
        assert_eq!(apply(base, &delta(base.len(), 0, &[]), LIMIT), None);
    }

    #[test]
    fn a_copy_of_size_zero_copies_64_kib_and_offsets_use_every_byte() {
        let base: Vec<u8> = (0..0x30000u32).map(|i| (i % 251) as u8).collect();
        // offset 0x010203 in three bytes (bits 0-2), no size bytes: 0x10000
        let ops = [0x80 | 0x07, 0x03, 0x02, 0x01];
        let got = apply(&base, &delta(base.len(), 0x10000, &ops), LIMIT).unwrap();
        assert_eq!(got, &base[0x010203..0x010203 + 0x10000]);
        // The offset's fourth byte (0x01000005 is past the base) and the size's second alone.
        let ops = [0x80 | 0x01 | 0x08 | 0x20, 0x05, 0x01, 0x01];
        assert_eq!(apply(&base, &delta(base.len(), 0x100, &ops), LIMIT), None);
        let ops = [0x80 | 0x01 | 0x20, 0x05, 0x01];
        let got = apply(&base, &delta(base.len(), 0x100, &ops), LIMIT).unwrap();
        assert_eq!(got, &base[5..5 + 0x100]);
    }

    #[test]
    fn deltas_that_do_not_fit_are_refused() {
        let base = b"0123456789";
        let copy_all = [0x80 | 0x10, 10];
        assert!(apply(base, &delta(10, 10, &copy_all), LIMIT).is_some());
        // For a base of another size.
        assert_eq!(apply(base, &delta(11, 10, &copy_all), LIMIT), None);
        // Declaring another size than it makes, either way.
        assert_eq!(apply(base, &delta(10, 11, &copy_all), LIMIT), None);
        assert_eq!(apply(base, &delta(10, 9, &copy_all), LIMIT), None);
        // Copying past the base's end, or from an offset that overflows.
        assert_eq!(apply(base, &delta(10, 3, &[0x91, 8, 3]), LIMIT), None);
        let far = [0x80 | 0x0f | 0x10, 0xff, 0xff, 0xff, 0xff, 3];
        assert_eq!(apply(base, &delta(10, 3, &far), LIMIT), None);
        // Inserting more than follows, the reserved instruction, a cut instruction.
        assert_eq!(apply(base, &delta(10, 4, &[4, b'a', b'b']), LIMIT), None);
        assert_eq!(apply(base, &delta(10, 0, &[0]), LIMIT), None);
        assert_eq!(apply(base, &delta(10, 3, &[0x91, 8]), LIMIT), None);
        // Over the limit, and sizes cut short or past 64 bits.
        assert_eq!(apply(base, &delta(10, 10, &copy_all), 9), None);
        assert_eq!(apply(base, &[0x8a], LIMIT), None);
        assert_eq!(apply(base, &[0x80; 11], LIMIT), None);
    }
}
