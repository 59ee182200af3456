//! Collected test ids (`pytest --collect-only -q`, `cargo nextest list`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("collected.txt");
    std::fs::write(&path, data).unwrap();
    if let Ok(ids) = merge_guard::evidence::collected::read_collected(&path) {
        assert!(ids.iter().all(|id| !id.is_empty()));
    }
});
