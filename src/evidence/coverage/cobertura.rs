//! Cobertura XML: the root `<coverage>` element's totals, checked against the `<line>`
//! records of every `<class>` they are computed from.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

use super::{Coverage, CoverageFormat, PRODUCE_HINT, lcov_count, no_lines, shorten};
use crate::error::{InputError, Location};
use crate::evidence::position::locate;

/// What the root `<coverage>` element claims, checked for form but not yet against the lines.
struct CoberturaClaims {
    /// `lines-covered` and `lines-valid`, when both are given.
    counts: Option<(u64, u64)>,
    line_rate: Option<f64>,
    /// The attributes as written, for messages.
    attrs: HashMap<String, String>,
}

/// How far a `line-rate` may stray from the rate of the counts it rounds: coverage.py writes
/// four significant digits, istanbul and gcovr four decimals.
const RATE_SLACK: f64 = 5e-4;

const COBERTURA_FORGED: &str = "Cobertura writers compute the root's totals from the <line> \
     records of the same file, so they always agree: regenerate the report rather than editing it";

/// Which element of a Cobertura report is open, as far as counting lines goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum CoberturaTag {
    Class,
    Lines,
    Other,
}

/// Reads Cobertura XML from `input` (the file after its byte order mark, `bom` bytes long):
/// the root `<coverage>` element's totals, then the `<line>` records of every `<class>` (not
/// the copies under its `<methods>`). The figure is computed from the lines, and the totals
/// must agree with them. quick-xml never expands DTD entities, and a DOCTYPE is refused.
pub(super) fn read_cobertura(
    path: &Path,
    bom: u64,
    input: impl BufRead,
) -> Result<Coverage, InputError> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_reader(input);
    let mut buf = Vec::new();
    // quick-xml counts offsets from after a byte order mark.
    let at = |offset: u64, message: String| {
        let location = locate(path, &[offset + bom])[0];
        InputError::new(path, message).at(location)
    };
    let mut root_at = None;
    let mut claims = None;
    let mut stack: Vec<CoberturaTag> = Vec::new();
    let mut files: HashMap<String, u32> = HashMap::new();
    let mut file = 0u32;
    // (file, line number) to whether any record of the line hit it.
    let mut lines: HashMap<(u32, u64), bool> = HashMap::new();
    loop {
        buf.clear();
        // Whitespace between prolog items arrives as text events, so this is where the next
        // markup starts.
        let start = reader.buffer_position();
        let event = match reader.read_event_into(&mut buf) {
            Ok(event) => event,
            Err(e) => {
                return Err(at(reader.error_position(), format!("malformed XML: {e}")));
            }
        };
        let (element, empty) = match event {
            Event::Start(e) => (e, false),
            Event::Empty(e) => (e, true),
            Event::End(_) => {
                stack.pop();
                continue;
            }
            Event::DocType(_) => {
                return Err(at(
                    start,
                    "XML with a DOCTYPE is refused: coverage reports need no DTD or entities"
                        .to_string(),
                ));
            }
            Event::Eof => break,
            _ => continue,
        };
        let name = element.name();
        let name = name.as_ref();
        let Some(_) = claims else {
            if name != "coverage" {
                return Err(at(
                    start,
                    format!(
                        "not a coverage report: the XML root is <{}>, not Cobertura's <coverage>",
                        shorten(name)
                    ),
                )
                .with_hint(PRODUCE_HINT));
            }
            root_at = Some(start);
            claims = Some(
                cobertura_claims(path, &element)
                    .map_err(|e| e.at(locate(path, &[start + bom])[0]))?,
            );
            if !empty {
                stack.push(CoberturaTag::Other);
            }
            continue;
        };
        let tag = match name {
            "class" => {
                let filename = cobertura_attr(&element, "filename")
                    .or_else(|| cobertura_attr(&element, "name"))
                    .unwrap_or_default();
                let next = files.len() as u32;
                file = *files.entry(filename).or_insert(next);
                CoberturaTag::Class
            }
            "lines" => CoberturaTag::Lines,
            "line" => {
                let in_class = matches!(
                    stack.as_slice(),
                    [.., CoberturaTag::Class, CoberturaTag::Lines]
                );
                if in_class {
                    let field = |key: &str| {
                        let value = cobertura_attr(&element, key)
                            .ok_or_else(|| at(start, format!("<line> has no `{key}`")))?;
                        lcov_count("count", &value).map_err(|m| {
                            at(start, format!("<line {key}=\"{}\">: {m}", shorten(&value)))
                        })
                    };
                    let number = field("number")?;
                    let hits = field("hits")?;
                    *lines.entry((file, number)).or_default() |= hits > 0;
                }
                CoberturaTag::Other
            }
            _ => CoberturaTag::Other,
        };
        if !empty {
            stack.push(tag);
        }
    }
    let (Some(claims), Some(root_at)) = (claims, root_at) else {
        return Err(InputError::new(path, "XML without a root element").with_hint(PRODUCE_HINT));
    };
    let root = locate(path, &[root_at + bom])[0];
    coverage_from_lines(path, root, &claims, &lines)
}

/// The figure computed from the `<line>` records (`lines`: per file and line number, whether
/// any record hit it), checked against what the root element (at `root`) claims.
fn coverage_from_lines(
    path: &Path,
    root: Location,
    claims: &CoberturaClaims,
    lines: &HashMap<(u32, u64), bool>,
) -> Result<Coverage, InputError> {
    let valid = lines.len() as u64;
    let hit = lines.values().filter(|&&hit| hit).count() as u64;
    let contradiction = |message: String| {
        InputError::new(path, message)
            .at(root)
            .with_hint(COBERTURA_FORGED)
    };
    let claimed = |keys: &[&str]| {
        keys.iter()
            .filter_map(|k| {
                claims
                    .attrs
                    .get(*k)
                    .map(|v| format!("{k}=\"{}\"", shorten(v)))
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    if valid == 0 {
        if claims.counts.is_some_and(|(_, valid)| valid == 0) {
            return Err(no_lines(path));
        }
        return Err(contradiction(format!(
            "<coverage {}> but the report holds no <line> records to compute it from",
            claimed(&["lines-covered", "lines-valid", "line-rate"])
        )));
    }
    if claims.counts.is_some_and(|counts| counts != (hit, valid)) {
        return Err(contradiction(format!(
            "<coverage {}> contradicts its <line> records: {hit} of {valid} lines hit",
            claimed(&["lines-covered", "lines-valid"])
        )));
    }
    let rate = hit as f64 / valid as f64;
    if claims
        .line_rate
        .is_some_and(|claimed| (claimed - rate).abs() > RATE_SLACK)
    {
        return Err(contradiction(format!(
            "<coverage {}> contradicts its <line> records: {hit} of {valid} lines hit ({rate:.4})",
            claimed(&["line-rate"])
        )));
    }
    Ok(Coverage {
        format: CoverageFormat::Cobertura,
        percent: 100.0 * rate,
        covered: Some(hit),
        total: Some(valid),
        contexts: None,
    })
}

/// Attribute `key` of `element`, unescaped; `None` when absent or malformed.
fn cobertura_attr(element: &quick_xml::events::BytesStart<'_>, key: &str) -> Option<String> {
    let attribute = element.try_get_attribute(key).ok().flatten()?;
    let value = attribute
        .normalized_value(quick_xml::XmlVersion::Implicit1_0)
        .ok()?;
    Some(value.trim().to_string())
}

/// The root's totals, checked for form: numbers, a rate in 0..=1, covered within valid, and at
/// least one of the two.
fn cobertura_claims(
    path: &Path,
    root: &quick_xml::events::BytesStart<'_>,
) -> Result<CoberturaClaims, InputError> {
    let mut attrs: HashMap<String, String> = HashMap::new();
    for attr in root.attributes() {
        let attr =
            attr.map_err(|e| InputError::new(path, format!("malformed XML attribute: {e}")))?;
        let key = attr.key.as_ref().to_string();
        if matches!(key.as_str(), "lines-covered" | "lines-valid" | "line-rate") {
            let value = attr
                .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                .map_err(|e| InputError::new(path, format!("<coverage {key}>: {e}")))?;
            attrs.insert(key, value.trim().to_string());
        }
    }
    let count = |key: &str| -> Result<Option<u64>, InputError> {
        match attrs.get(key) {
            None => Ok(None),
            Some(v) => lcov_count("count", v).map(Some).map_err(|m| {
                InputError::new(path, format!("<coverage {key}=\"{}\">: {m}", shorten(v)))
            }),
        }
    };
    let counts = match (count("lines-covered")?, count("lines-valid")?) {
        (Some(covered), Some(valid)) if covered > valid => {
            return Err(InputError::new(
                path,
                format!("<coverage>: lines-covered ({covered}) exceeds lines-valid ({valid})"),
            ));
        }
        (Some(covered), Some(valid)) => Some((covered, valid)),
        _ => None,
    };
    let line_rate = match attrs.get("line-rate") {
        None => None,
        Some(v) => match v.parse::<f64>() {
            Ok(rate) if rate.is_finite() && (0.0..=1.0).contains(&rate) => Some(rate),
            Ok(rate) if rate.is_finite() && rate > 1.0 => {
                return Err(InputError::new(
                    path,
                    format!("<coverage line-rate=\"{rate}\">: outside 0..=1"),
                ));
            }
            _ => {
                return Err(InputError::new(
                    path,
                    format!("<coverage line-rate=\"{}\">: not a number", shorten(v)),
                ));
            }
        },
    };
    if counts.is_none() && line_rate.is_none() {
        return Err(InputError::new(
            path,
            "<coverage> has neither lines-covered/lines-valid nor line-rate",
        )
        .with_hint(PRODUCE_HINT));
    }
    Ok(CoberturaClaims {
        counts,
        line_rate,
        attrs,
    })
}

#[cfg(test)]
mod tests {
    use crate::error::Location;
    use crate::evidence::coverage::CoverageFormat;
    use crate::evidence::coverage::tests::{read, read_text};

    // The figures of tests/data/coverage/ were checked by hand: see `coverage/tests.rs`.

    #[test]
    fn cobertura_prefers_line_counts_to_rounded_rate() {
        let c = read("coverage/cobertura.xml");
        assert_eq!(c.format, CoverageFormat::Cobertura);
        assert_eq!((c.covered, c.total), (Some(23), Some(35)));
        assert_eq!(c.percent, 100.0 * 23.0 / 35.0);
    }

    #[test]
    fn cobertura_counts_class_lines_not_their_method_copies() {
        // Java's Cobertura repeats each method's lines under <methods>, and writes conditions
        // inside a <line>; a file split into classes (inner classes) counts each line once.
        let text = r#"<?xml version="1.0"?>
<coverage lines-covered="2" lines-valid="3" line-rate="0.6667">
  <packages><package name="p"><classes>
    <class name="A" filename="A.java">
      <methods><method name="m"><lines><line number="1" hits="5"/><line number="9" hits="0"/></lines></method></methods>
      <lines>
        <line number="1" hits="5" branch="true"><conditions><condition number="0" type="jump" coverage="50%"/></conditions></line>
        <line number="2" hits="0"/>
      </lines>
    </class>
    <class name="A$Inner" filename="A.java"><lines><line number="3" hits="1"/></lines></class>
  </classes></package></packages>
</coverage>"#;
        let c = read_text(text).unwrap();
        assert_eq!((c.covered, c.total), (Some(2), Some(3)));
        // A rate within rounding of the counts is the same figure; beyond it, a contradiction.
        assert!(read_text(&text.replace("0.6667", "0.667")).is_ok());
        let err = read_text(&text.replace("0.6667", "0.6")).unwrap_err();
        assert_eq!(
            err.message,
            "<coverage line-rate=\"0.6\"> contradicts its <line> records: 2 of 3 lines hit (0.6667)"
        );
        assert_eq!(err.location, Some(Location::LineColumn(2, 1)));
        let err = read_text(&text.replace(r#"number="2" hits="0""#, r#"number="2""#)).unwrap_err();
        assert_eq!(err.message, "<line> has no `hits`");
        assert_eq!(err.location, Some(Location::LineColumn(8, 9)));
    }
}
