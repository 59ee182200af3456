//! What both of guard's commit walks share (the commit-graph walk in `range` and the walk
//! that reads commit objects in `date_walk`): a hasher for object ids and graph positions,
//! and libgit2's topological order, which both must give.

use std::hash::{BuildHasherDefault, Hasher};

/// A hasher for object ids, which are uniformly distributed already, and for graph positions.
#[derive(Default)]
pub(super) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
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

pub(super) type OidHash = BuildHasherDefault<IdHasher>;

/// `found` (commits as indices below `nodes`, tips in the order the walk found them) in the
/// order libgit2's `TOPOLOGICAL | REVERSE` walk gives: from the tip, depth first with a
/// stack, a commit after all of its children in `found` and the last parent's line first,
/// reversed.
pub(super) fn topological<'a>(
    found: &[usize],
    nodes: usize,
    parents_of: impl Fn(usize) -> &'a [u32],
) -> Vec<usize> {
    // 1 + the number of children in the range; 0 outside the range or once emitted.
    let mut in_degree = vec![0usize; nodes];
    for &i in found {
        in_degree[i] = 1;
    }
    for &i in found {
        for &p in parents_of(i) {
            if in_degree[p as usize] > 0 {
                in_degree[p as usize] += 1;
            }
        }
    }
    // The tips, in the order the walk found them; popped from the end, so reversed.
    let mut stack: Vec<usize> = found
        .iter()
        .copied()
        .filter(|&i| in_degree[i] == 1)
        .collect();
    stack.reverse();
    let mut out = Vec::with_capacity(found.len());
    while let Some(i) = stack.pop() {
        for &p in parents_of(i) {
            let p = p as usize;
            if in_degree[p] == 0 {
                continue;
            }
            in_degree[p] -= 1;
            if in_degree[p] == 1 {
                stack.push(p);
            }
        }
        in_degree[i] = 0;
        out.push(i);
    }
    out.reverse();
    out
}
