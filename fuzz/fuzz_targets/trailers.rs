//! Commit messages: the trailer block and human trailers read from it.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (&[u8], &str)| {
    let (message, trailer) = input;
    let block = merge_guard::git::trailers(message);
    let _ = merge_guard::git::trailer_lines(message);
    if let Ok(t) = merge_guard::policy::agents::HumanTrailer::parse(trailer) {
        let _ = t.present_in(&block);
    }
});
