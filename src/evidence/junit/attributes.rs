//! Attributes of JUnit elements: a `<testcase>`'s `classname`, `name` and `file` read into a
//! reused record (duplicates refused, values normalised as XML 1.0 does), and single
//! attributes of other elements for messages.

use quick_xml::XmlVersion;
use quick_xml::errors::Error as XmlError;
use quick_xml::escape::EscapeError;
use quick_xml::events::BytesStart;

use super::errors::{Bad, Failure, HINT_MALFORMED};
use crate::evidence::record::{Outcome, TestCase};

/// Whether an attribute value has nothing XML normalisation would change: no reference and
/// no control character. Whole 16-byte blocks first, without early exit inside a block, so
/// the compiler can vectorise.
fn is_plain(value: &[u8]) -> bool {
    let special = |b: u8| (b == b'&') | (b < b' ');
    let mut blocks = value.chunks_exact(16);
    for block in &mut blocks {
        if block.iter().fold(false, |hit, &b| hit | special(b)) {
            return false;
        }
    }
    !blocks.remainder().iter().any(|&b| special(b))
}

/// The value of attribute `key` of `e`, for messages: `None` when it is absent or malformed.
pub(super) fn attribute(e: &BytesStart<'_>, key: &str) -> Option<String> {
    let attribute = e.try_get_attribute(key).ok().flatten()?;
    let value = attribute.normalized_value(XmlVersion::Implicit1_0).ok()?;
    Some(value.into_owned())
}

/// Reads `classname`, `name` and `file` of a `<testcase>` starting at `start` into `case`,
/// reusing its strings.
pub(super) fn read_case_attributes(
    e: &BytesStart<'_>,
    start: u64,
    case: &mut TestCase,
) -> Result<(), Failure> {
    let mut have = [false; 3]; // classname, name, file
    // quick-xml's own duplicate check keeps a heap list per element; a record has a handful
    // of attributes, so a list on the stack does (a longer one spills to the heap).
    let mut keys: [&str; 8] = [""; 8];
    let mut more_keys: Vec<&str> = Vec::new();
    for (count, attribute) in e.attributes().with_checks(false).enumerate() {
        let attribute = attribute.map_err(|err| {
            Bad::at(
                start,
                format!("malformed attribute in <testcase>: {err}"),
                HINT_MALFORMED,
            )
        })?;
        let key = attribute.key.into_inner();
        let seen = keys[..count.min(keys.len())].contains(&key) || more_keys.contains(&key);
        if seen {
            return Err(Bad::at(
                start,
                format!("malformed attribute in <testcase>: `{key}` is given twice"),
                HINT_MALFORMED,
            ));
        }
        if count < keys.len() {
            keys[count] = key;
        } else {
            more_keys.push(key);
        }
        let slot = match key {
            "classname" => 0,
            "name" => 1,
            "file" => 2,
            _ => continue,
        };
        // XML 1.0 normalisation: entities and character references resolved, literal
        // newlines and tabs turned into spaces (escaped ones kept), as every XML reader does.
        // Nearly every value has nothing to normalise (no reference, no control character),
        // and is taken as it stands.
        let plain = is_plain(attribute.value.as_bytes());
        let value = if plain {
            attribute.value
        } else {
            attribute
                .normalized_value(XmlVersion::Implicit1_0)
                .map_err(|err| {
                    let why = match err {
                        XmlError::Escape(EscapeError::UnrecognizedEntity(_, entity)) => {
                            format!("undefined entity `&{entity};`")
                        }
                        other => other.to_string(),
                    };
                    Bad::at(
                        start,
                        format!("bad `{key}` attribute in <testcase>: {why}"),
                        HINT_MALFORMED,
                    )
                })?
        };
        let target = match slot {
            0 => &mut case.classname,
            1 => &mut case.name,
            _ => case.file.get_or_insert_with(String::new),
        };
        target.clear();
        target.push_str(&value);
        have[slot] = true;
    }
    if !have[1] {
        return Err(Bad::at(
            start,
            "<testcase> has no `name` attribute",
            "every JUnit writer names its test cases; was this record written by hand?",
        ));
    }
    if !have[0] {
        case.classname.clear();
    }
    if !have[2] {
        case.file = None;
    }
    case.outcome = Outcome::Passed;
    Ok(())
}
