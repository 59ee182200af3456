//! Wording shared by every message guard writes: a count with its noun in the right number.

/// `n` and the noun in the right number: `count(1, "file")` is "1 file", `count(2, "file")`
/// "2 files" (every noun guard counts takes a plain `s`).
pub fn count<N: TryInto<u64> + std::fmt::Display + Copy>(n: N, noun: &str) -> String {
    if n.try_into().ok() == Some(1) {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::count;

    #[test]
    fn counts_take_the_singular_only_for_one() {
        assert_eq!(count(0usize, "file"), "0 files");
        assert_eq!(count(1usize, "file"), "1 file");
        assert_eq!(count(2u64, "active lease"), "2 active leases");
        assert_eq!(count(1u64, "ref update"), "1 ref update");
    }
}
