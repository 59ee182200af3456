//! git's allowed-signers file, and SSH signatures checked against it.
#![no_main]
use libfuzzer_sys::fuzz_target;
use merge_guard::policy::signers::AllowedSigners;

fuzz_target!(|input: (&str, &[u8], &[u8])| {
    let (signers, armored, payload) = input;
    let _ = AllowedSigners::parse(signers);
    let empty = AllowedSigners::parse("").expect("an empty file parses");
    let at = jiff::Timestamp::from_second(1_700_000_000).unwrap();
    // An empty list trusts no key: nothing verifies, whatever the bytes.
    assert!(
        !empty
            .verify(armored, payload, "a@example.com", at)
            .is_verified()
    );
});
