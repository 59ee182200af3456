//! Coverage reports (coverage.py JSON, LCOV, Cobertura): a figure in range or a clean error.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("coverage");
    std::fs::write(&path, data).unwrap();
    if let Ok(c) = merge_guard::evidence::coverage::read_coverage(&path) {
        assert!(
            c.percent.is_finite() && (0.0..=100.0).contains(&c.percent),
            "{}",
            c.percent
        );
    }
});
