//! The freeze file, in both forms (a plain list, TOML leases).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for name in ["qa/flake_freeze.txt", "qa/freeze.toml"] {
        let _ = merge_guard::policy::freeze::FreezeFile::parse(std::path::Path::new(name), data);
    }
});
