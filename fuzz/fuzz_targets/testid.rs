//! Test ids as users and runners write them, and freeze-id globs.
#![no_main]
use libfuzzer_sys::fuzz_target;
use merge_guard::testid;

fuzz_target!(|input: (&str, &str)| {
    let (a, b) = input;
    let key = testid::id_key(a);
    // A key is a fixed point: normalising it again changes nothing.
    assert_eq!(testid::id_key(&key), key);
    let _ = testid::record_keys(a, b);
    let _ = testid::collected_keys(a);
    let _ = testid::id_glob(a);
});
