//! git's delta format as guard applies it (`git::pack`, for the trees and test files a walk
//! reads out of packs): any base and delta, no panic, no read past either, and an object of
//! exactly the size the delta declares, within the limit.
#![no_main]
use libfuzzer_sys::fuzz_target;
use merge_guard::git::pack::fuzzing::apply_delta;

fuzz_target!(|input: (&[u8], &[u8], u16)| {
    let (base, delta, limit) = input;
    let limit = usize::from(limit);
    if let Some(out) = apply_delta(base, delta, limit) {
        assert!(
            out.len() <= limit,
            "{} bytes over the limit {limit}",
            out.len()
        );
    }
});
