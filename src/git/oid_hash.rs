//! Hashers for maps and sets keyed by libgit2's `Oid`.
//!
//! Built with SHA-256 support, libgit2's `Oid` holds 32 bytes and hashes all of them, while
//! only the first 20 of a SHA-1 id are its own: libgit2 leaves the other 12 as it found them
//! where it parses an id, so one id could hash two ways and a map would hold it twice (a walk
//! then lists a commit it should hide). Equality compares only the id's own bytes. Each
//! hasher here takes at most the first 20 bytes of every write, which ids of both formats
//! fill; a SHA-256 id's first 20 bytes spread as well as its whole.

use std::hash::{BuildHasher, BuildHasherDefault, Hasher};

/// The bytes of each write a hasher here takes: a SHA-1 id's whole length.
const SIGNIFICANT: usize = 20;

/// A fast hasher for object ids, which are uniformly distributed already, and for graph
/// positions: for the commit walks' maps.
#[derive(Default)]
pub(crate) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes[..bytes.len().min(SIGNIFICANT)].chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = self.0.rotate_left(5) ^ u64::from_le_bytes(word);
        }
    }

    fn write_u32(&mut self, n: u32) {
        // Fibonacci hashing: spreads consecutive positions over the table.
        self.0 = u64::from(n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// [`IdHasher`] for `HashMap`s.
pub(crate) type OidHash = BuildHasherDefault<IdHasher>;

/// foldhash, seeded per map, over the same bytes: for maps of objects a push brings, where an
/// unseeded hash would let a pusher choose ids that share a bucket.
#[derive(Default, Clone)]
pub(super) struct SeededOidHash(foldhash::fast::RandomState);

impl BuildHasher for SeededOidHash {
    type Hasher = Significant<foldhash::fast::FoldHasher<'static>>;

    fn build_hasher(&self) -> Self::Hasher {
        Significant(self.0.build_hasher())
    }
}

/// A hasher that passes on the first [`SIGNIFICANT`] bytes of each write.
pub(super) struct Significant<H>(H);

impl<H: Hasher> Hasher for Significant<H> {
    fn finish(&self) -> u64 {
        self.0.finish()
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0.write(&bytes[..bytes.len().min(SIGNIFICANT)]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::Hash;

    /// What an `Oid` feeds a hasher, with `tail` as the 12 bytes after a SHA-1 id.
    fn fed(id: &[u8; 20], tail: u8, hasher: &mut impl Hasher) {
        let mut raw = [tail; 32];
        raw[..20].copy_from_slice(id);
        1u8.hash(hasher);
        raw.hash(hasher);
    }

    // The commit walks' tests in `range` (a commit-graph walk against a set of ancestors) fail
    // with hashers that take every byte: libgit2 parses ids there with other bytes after them.
    #[test]
    fn what_follows_a_sha1_id_changes_no_hash() {
        let id = [0x5a; 20];
        let (mut a, mut b) = (IdHasher::default(), IdHasher::default());
        fed(&id, 0, &mut a);
        fed(&id, 0xff, &mut b);
        assert_eq!(a.finish(), b.finish());
        let seeded = SeededOidHash::default();
        let (mut a, mut b) = (seeded.build_hasher(), seeded.build_hasher());
        fed(&id, 0, &mut a);
        fed(&id, 0xff, &mut b);
        assert_eq!(a.finish(), b.finish());
        // Still a hash of the id: another id hashes otherwise.
        let mut c = seeded.build_hasher();
        fed(&[0x5b; 20], 0, &mut c);
        assert_ne!(a.finish(), c.finish());
    }
}
