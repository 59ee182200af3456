//! Counting the distinct tests of a stream of JUnit records, each with the outcome its records
//! merge into (the worst winning), without holding the ids: a million-record report must stay
//! within a few tens of megabytes.
//!
//! Each record is kept as a 64-bit hash of its id (classname and name) under a key drawn at
//! random for each run, with its outcome in the low 3 bits: 8 bytes a record, where the ids
//! themselves take 60 or more. Two different ids fall together with odds of about n²/2^62 (one
//! in four million for a million tests), which would count them as one test; no report can be
//! written to make that happen, and judging never uses these figures (it merges by id).
//! A second 64 bits would cost about as much again as the hashing (a few percent of reading).
//!
//! Nearly every report has no duplicate ids at all, and sorting a million hashes would cost
//! about a tenth of reading the report. So at the end a bitmap filter over the hashes marks
//! the slots seen twice, and only the records in those slots (the duplicates, and a few
//! percent that only share a slot) are sorted and merged. Per record there is only an append:
//! touching the filter while the report streams would cost a cache miss per record (the
//! reading evicts it), about a third of the reading time; in one tight pass at the end the
//! misses overlap.

use std::hash::Hasher;

use foldhash::SharedSeed;
use foldhash::quality::FoldHasher;

use crate::evidence::record::Outcome;

/// Filter slots per record (rounded up to a power of two): about 6% of the records then share
/// a slot with another. A million records take two bitmaps of 2 MiB.
const SLOTS_PER_RECORD: usize = 16;

/// Distinct tests by merged outcome.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TestCounts {
    pub tests: u64,
    /// Passed, or passed on a rerun (flaky).
    pub passed: u64,
    pub failed: u64,
    pub errors: u64,
    pub skipped: u64,
}

pub struct DistinctTests {
    seed: SharedSeed,
    /// Per record: its id's hash with the low 3 bits replaced by its outcome's rank.
    records: Vec<u64>,
    /// Records by outcome rank.
    by_rank: [u64; 5],
}

const OUTCOME_BITS: u64 = 0b111;

fn rank(outcome: Outcome) -> u8 {
    match outcome {
        Outcome::Skipped => 0,
        Outcome::Passed => 1,
        Outcome::Flaky => 2,
        Outcome::Failed => 3,
        Outcome::Errored => 4,
    }
}

impl Default for DistinctTests {
    fn default() -> Self {
        Self::new()
    }
}

impl DistinctTests {
    pub fn new() -> DistinctTests {
        use std::hash::BuildHasher;
        // Per-run random keys, from the operating system's randomness that foldhash draws on.
        let random = foldhash::quality::RandomState::default().hash_one(0x5eed_u64);
        DistinctTests {
            seed: SharedSeed::from_u64(random),
            records: Vec::new(),
            by_rank: [0; 5],
        }
    }

    fn key(&self, classname: &str, name: &str) -> u64 {
        let mut h = FoldHasher::with_seed(0, &self.seed);
        // The classname's length goes in first, so no two (classname, name) pairs feed the
        // same bytes.
        h.write_usize(classname.len());
        h.write(classname.as_bytes());
        h.write(name.as_bytes());
        h.finish() & !OUTCOME_BITS
    }

    /// Takes one record of the test `classname`, `name`.
    pub fn add(&mut self, classname: &str, name: &str, outcome: Outcome) {
        let rank = rank(outcome);
        self.records
            .push(self.key(classname, name) | u64::from(rank));
        self.by_rank[usize::from(rank)] += 1;
    }

    /// The records whose filter slot another record shares: every duplicate among them.
    fn suspects(&self) -> Vec<u64> {
        let bits = (self.records.len() * SLOTS_PER_RECORD)
            .next_power_of_two()
            .max(64)
            .trailing_zeros();
        let slot = |key: u64| (key >> (64 - bits)) as usize;
        let mut seen = vec![0u64; (1 << bits) / 64];
        let mut twice = vec![0u64; (1 << bits) / 64];
        let mut any_twice = false;
        for &key in &self.records {
            let slot = slot(key);
            let (word, bit) = (slot / 64, 1u64 << (slot % 64));
            if seen[word] & bit != 0 {
                twice[word] |= bit;
                any_twice = true;
            } else {
                seen[word] |= bit;
            }
        }
        if !any_twice {
            return Vec::new();
        }
        self.records
            .iter()
            .copied()
            .filter(|&key| {
                let slot = slot(key);
                twice[slot / 64] & (1u64 << (slot % 64)) != 0
            })
            .collect()
    }

    /// The distinct tests, each counted once under the worst outcome of its records.
    pub fn counts(&self) -> TestCounts {
        let mut tests = self.records.len() as u64;
        let mut by_rank = self.by_rank;
        let mut suspects = self.suspects();
        if !suspects.is_empty() {
            // Sorted, the records of one test are adjacent, their worst outcome last.
            suspects.sort_unstable();
            for group in suspects.chunk_by(|a, b| a & !OUTCOME_BITS == b & !OUTCOME_BITS) {
                if let [.., worst] = group {
                    tests -= group.len() as u64 - 1;
                    for key in group {
                        by_rank[(key & OUTCOME_BITS) as usize] -= 1;
                    }
                    by_rank[(worst & OUTCOME_BITS) as usize] += 1;
                }
            }
        }
        TestCounts {
            tests,
            passed: by_rank[1] + by_rank[2],
            failed: by_rank[3],
            errors: by_rank[4],
            skipped: by_rank[0],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_merge_worst_first_and_count_once() {
        let mut d = DistinctTests::new();
        d.add("m", "a", Outcome::Passed);
        d.add("m", "b", Outcome::Skipped);
        d.add("m", "a", Outcome::Failed);
        d.add("m", "b", Outcome::Passed);
        d.add("m", "c", Outcome::Flaky);
        d.add("m", "a", Outcome::Passed);
        d.add("", "m::a", Outcome::Errored);
        assert_eq!(
            d.counts(),
            TestCounts {
                tests: 4,
                passed: 2,
                failed: 1,
                errors: 1,
                skipped: 0
            }
        );
    }

    #[test]
    fn the_parts_of_an_id_do_not_run_together() {
        let mut d = DistinctTests::new();
        d.add("ab", "c", Outcome::Passed);
        d.add("a", "bc", Outcome::Passed);
        d.add("abc", "", Outcome::Passed);
        assert_eq!(d.counts().tests, 3);
    }

    /// Enough records that many share a filter slot without being duplicates: only true
    /// duplicates merge.
    #[test]
    fn slot_sharing_is_not_duplication() {
        let mut d = DistinctTests::new();
        let n = 300_000u64;
        for i in 0..n {
            d.add("tests.module", &format!("test_{i}"), Outcome::Passed);
        }
        for i in (0..n).step_by(1000) {
            d.add("tests.module", &format!("test_{i}"), Outcome::Failed);
        }
        let suspects = d.suspects().len() as u64;
        assert!(suspects > 2 * (n / 1000), "{suspects}");
        let counts = d.counts();
        assert_eq!(counts.tests, n);
        assert_eq!(counts.failed, n / 1000);
        assert_eq!(counts.passed, n - n / 1000);
    }

    #[test]
    fn no_records_no_tests() {
        assert_eq!(DistinctTests::new().counts(), TestCounts::default());
    }
}
