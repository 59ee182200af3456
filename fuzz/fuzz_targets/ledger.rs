//! The merge ledger (TOML), pushed by whoever may edit it.
#![no_main]
use libfuzzer_sys::fuzz_target;
use merge_guard::policy::ledger::{Policy, PolicySource};

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = Policy::parse(
            std::path::Path::new("qa/merge_ledger.toml"),
            text,
            PolicySource::Embedded,
        );
    }
});
