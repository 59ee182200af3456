//! What lies between elements: text and CDATA inside skipped elements (captured output) are
//! consumed without being copied or decoded, and entity references anywhere are checked
//! against the five XML predefines.

use std::io::{self, BufRead};

use super::errors::{Bad, Failure, HINT_MALFORMED};

/// Consumes the text and CDATA sections at the front of `input`, stopping at the next element,
/// comment or reference. Used inside skipped elements (`system-out` and the like), where
/// captured output can run to many megabytes: quick-xml would copy each text or CDATA node into
/// memory whole. Skipped bytes are not decoded, so stray non-UTF-8 output there is tolerated.
pub(super) fn skip_content(input: &mut impl BufRead) -> io::Result<()> {
    const CDATA_OPEN: &[u8] = b"<![CDATA[";
    loop {
        let available = input.fill_buf()?;
        let Some(at) = find_markup(available) else {
            let all = available.len();
            if all == 0 {
                return Ok(());
            }
            input.consume(all);
            continue;
        };
        // A CDATA opener split across reads is left to quick-xml, which handles it correctly.
        let is_cdata = available[at..].starts_with(CDATA_OPEN);
        input.consume(at);
        if !is_cdata {
            return Ok(());
        }
        input.consume(CDATA_OPEN.len());
        skip_cdata_body(input)?;
    }
}

/// Consumes the XML whitespace at the front of `input`.
pub(super) fn skip_whitespace(input: &mut impl BufRead) -> io::Result<()> {
    loop {
        let available = input.fill_buf()?;
        let blank = available
            .iter()
            .take_while(|&&b| matches!(b, b' ' | b'\n' | b'\t' | b'\r'))
            .count();
        let all = available.len();
        input.consume(blank);
        if blank < all || all == 0 {
            return Ok(());
        }
    }
}

/// Consumes through the `]]>` that ends a CDATA section (or to the end of input, which the
/// caller then reports as an unclosed element).
fn skip_cdata_body(input: &mut impl BufRead) -> io::Result<()> {
    // How many bytes of `]]>` the previous read ended with.
    let mut matched = 0;
    loop {
        let available = input.fill_buf()?;
        if available.is_empty() {
            return Ok(());
        }
        for (i, &b) in available.iter().enumerate() {
            matched = match (matched, b) {
                (2, b'>') => {
                    input.consume(i + 1);
                    return Ok(());
                }
                (2, b']') => 2,
                (_, b']') => matched + 1,
                _ => 0,
            };
        }
        let all = available.len();
        input.consume(all);
    }
}

/// The first `<` or `&` in `bytes`.
pub(super) fn find_markup(bytes: &[u8]) -> Option<usize> {
    memchr::memchr2(b'<', b'&', bytes)
}

/// Only the five predefined entities and character references exist: with DTDs refused, any
/// other `&name;` is undefined (and would be an entity-expansion attack if it were defined).
pub(super) fn check_reference(reference: &str, start: u64) -> Result<(), Failure> {
    let known = match reference.strip_prefix('#') {
        Some(number) => parse_char_ref(number).is_some(),
        None => matches!(reference, "lt" | "gt" | "amp" | "apos" | "quot"),
    };
    if known {
        Ok(())
    } else {
        Err(Bad::at(
            start,
            format!("undefined entity or bad character reference `&{reference};`"),
            HINT_MALFORMED,
        ))
    }
}

fn parse_char_ref(number: &str) -> Option<char> {
    let code = match number.strip_prefix('x') {
        Some(hex) => u32::from_str_radix(hex, 16).ok()?,
        None => number.parse().ok()?,
    };
    char::from_u32(code).filter(|&c| c != '\0')
}
