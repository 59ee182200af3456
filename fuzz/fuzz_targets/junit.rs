//! JUnit XML from a runner (or an attacker): any bytes read as a report must give records or
//! a clean error, never a panic, a hang or unbounded memory.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("junit.xml");
    std::fs::write(&path, data).unwrap();
    let mut records = 0u64;
    if let Ok(file) = merge_guard::evidence::junit::read_junit(&path, &mut |_| records += 1) {
        // Every record the sink saw is counted under its outcome; `cases` counts every
        // element as written, a rerun's attempts included.
        let c = file.counts;
        assert_eq!(c.passed + c.failed + c.errors + c.skipped, records);
        assert!(records <= c.cases);
    }
});
