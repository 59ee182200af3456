//! What git writes on a hook's standard input (pre-receive, pre-push), or anything else.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = merge_guard::hooks::pre_receive::parse_updates(&mut &data[..]);
    let _ = merge_guard::hooks::push_lines::parse_lines(&mut &data[..]);
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = merge_guard::hooks::parse_id(text);
    }
});
