//! Property-style checks over a fixed seed list (no dependencies).

use nextest_sample::{escape_html, parse_duration_ms};

const SEEDS: &[&str] = &["", "plain", "<tag>", "a & b", "ünïcødé", "&&<<>>"];

#[test]
fn escaped_text_has_no_raw_markup() {
    for seed in SEEDS {
        let escaped = escape_html(seed);
        assert!(!escaped.contains('<') && !escaped.contains('>'), "{seed:?}");
    }
}

#[test]
fn escaping_never_shrinks() {
    for seed in SEEDS {
        assert!(escape_html(seed).len() >= seed.len());
    }
}

#[test]
fn milliseconds_round_trip() {
    for ms in [0_u64, 1, 999, 60_000, 123_456] {
        assert_eq!(parse_duration_ms(&format!("{ms}ms")), Some(ms));
    }
}
