//! Test files as `weakened_test` reads them: any two versions of a Python or a Rust test
//! file parse and compare without a panic, and a version compared with itself weakens
//! nothing (pairing, inherited tests, helpers and skips all line up with themselves).
#![no_main]
use std::rc::Rc;

use libfuzzer_sys::fuzz_target;
use merge_guard::evidence::test_source::parse;
use merge_guard::rules::evidence::weakened::{FileVersions, weakenings};

fuzz_target!(|input: (&[u8], &[u8])| {
    let (old, new) = input;
    for path in ["tests/test_x.py", "tests/x.rs"] {
        let (old, new) = (parse(path, old).map(Rc::new), parse(path, new).map(Rc::new));
        let versions = |old: &Option<Rc<_>>, new: &Option<Rc<_>>| FileVersions {
            path: path.to_string(),
            old: old.clone(),
            new: new.clone(),
        };
        let _ = weakenings(&[versions(&old, &new)]);
        let same = weakenings(&[versions(&old, &old)]);
        assert!(same.is_empty(), "{path} compared with itself: {same:?}");
    }
});
