//! The fixture lockfile, in both forms (JSON, sha256sum); what parses renders and parses back
//! to the same entries.
#![no_main]
use libfuzzer_sys::fuzz_target;
use merge_guard::policy::lockfile::Lockfile;

fuzz_target!(|data: &[u8]| {
    for name in ["qa/fixtures.lock.json", "qa/fixtures.sha256"] {
        if let Ok(lock) = Lockfile::parse(std::path::Path::new(name), data) {
            let again = Lockfile::parse(std::path::Path::new(name), &lock.render())
                .expect("a rendered lockfile parses");
            assert_eq!(again.entries, lock.entries);
        }
    }
});
