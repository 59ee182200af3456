//! The tolerances a test's checks allow (`approx`'s `rel`, `assertAlmostEqual`'s `places`,
//! hypothesis' `max_examples`, a timeout, an asserted bound), with the libraries' defaults.

use tree_sitter::Node;

use super::syntax::{arguments, callee};
use crate::evidence::test_source::{Looser, Source, Tolerance, line, normal_text, number};

/// Library defaults of tolerance arguments: an argument left out counts with its default.
pub(crate) fn defaults(name: &str) -> &'static [(&'static str, f64, Looser)] {
    let last = name.rsplit('.').next().unwrap_or(name);
    match last {
        "approx" => &[
            ("rel", 1e-6, Looser::Larger),
            ("abs", 1e-12, Looser::Larger),
        ],
        "isclose" if name == "math.isclose" || name == "isclose" => &[
            ("rel_tol", 1e-9, Looser::Larger),
            ("abs_tol", 0.0, Looser::Larger),
        ],
        "isclose" | "allclose" => &[
            ("rtol", 1e-5, Looser::Larger),
            ("atol", 1e-8, Looser::Larger),
        ],
        "assert_allclose" => &[
            ("rtol", 1e-7, Looser::Larger),
            ("atol", 0.0, Looser::Larger),
        ],
        "assertAlmostEqual" => &[
            ("places", 7.0, Looser::Smaller),
            ("delta", 0.0, Looser::Larger),
        ],
        "assert_almost_equal" => &[("decimal", 7.0, Looser::Smaller)],
        "assert_array_almost_equal" => &[("decimal", 6.0, Looser::Smaller)],
        // hypothesis: fewer examples, the same examples every run, or fewer phases search
        // less (`phases` counts the phases listed; hypothesis has six).
        "settings" if name == "settings" || name == "hypothesis.settings" => &[
            ("max_examples", 100.0, Looser::Smaller),
            ("derandomize", 0.0, Looser::Larger),
            ("phases", 6.0, Looser::Smaller),
        ],
        _ => &[],
    }
}

/// The tolerance parameters a call takes by position, after the values it compares
/// (`approx(expected, rel, abs)`, numpy's `isclose(a, b, rtol, atol)`), by index.
fn positional_tolerances(name: &str) -> &'static [(usize, &'static str, Looser)] {
    let last = name.rsplit('.').next().unwrap_or(name);
    match last {
        "approx" => &[(1, "rel", Looser::Larger), (2, "abs", Looser::Larger)],
        "isclose" if name == "math.isclose" || name == "isclose" => &[],
        "isclose" | "allclose" | "assert_allclose" => {
            &[(2, "rtol", Looser::Larger), (3, "atol", Looser::Larger)]
        }
        "assertAlmostEqual" => &[(2, "places", Looser::Smaller)],
        "assert_almost_equal" | "assert_array_almost_equal" => &[(2, "decimal", Looser::Smaller)],
        _ => &[],
    }
}

/// A tolerance's value as written: a number, `True`/`False` (`derandomize`), or the length
/// of a list or tuple (`phases=[Phase.explicit]`).
fn tolerance_value(src: &Source, param: &str, node: Node) -> Option<f64> {
    let text = src.normal(node);
    match (param, text.as_str()) {
        (_, "True") => Some(1.0),
        (_, "False") => Some(0.0),
        ("phases", _) if matches!(node.kind(), "list" | "tuple") => {
            let mut cursor = node.walk();
            Some(node.named_children(&mut cursor).count() as f64)
        }
        _ => number(&text),
    }
}

/// Keyword arguments that bound a check, and which way each is looser.
fn tolerance_keyword(key: &str) -> Option<Looser> {
    match key {
        "rel" | "abs" | "rel_tol" | "abs_tol" | "rtol" | "atol" | "delta" | "tolerance" | "tol"
        | "epsilon" | "eps" | "timeout" => Some(Looser::Larger),
        "places" | "decimal" | "max_examples" | "phases" => Some(Looser::Smaller),
        "derandomize" => Some(Looser::Larger),
        _ => None,
    }
}

/// The tolerances of one call: its tolerance keywords (and the defaults of those left out),
/// `places` given by position to `assertAlmostEqual`, the seconds of a `sleep` or a
/// `mark.timeout`, and the bound of `assertLess`-style calls.
pub(crate) fn call_tolerances(src: &Source, call: Node) -> Vec<Tolerance> {
    let name = callee(src, call);
    let last = name.rsplit('.').next().unwrap_or(&name).to_string();
    let (positional, keywords) = arguments(src, call);
    let first = positional
        .first()
        .map(|p| src.normal(*p))
        .unwrap_or_default();
    let key = |param: &str| format!("{last}({first}).{param}");
    let mut out = Vec::new();
    let literal = |node: Node| number(&src.normal(node));
    for (k, v) in &keywords {
        if let (Some(looser), Some(value)) = (tolerance_keyword(k), tolerance_value(src, k, *v)) {
            out.push(Tolerance {
                line: line(*v),
                key: key(k),
                value,
                looser,
                text: format!("{k}={}", src.shown(*v)),
            });
        }
    }
    for (index, param, looser) in positional_tolerances(&name) {
        if let Some(value) = positional.get(*index).and_then(|p| literal(*p)) {
            let at = positional[*index];
            out.push(Tolerance {
                line: line(at),
                key: key(param),
                value,
                looser: *looser,
                text: format!("{param}={}", src.shown(at)),
            });
        }
    }
    for (param, default, looser) in defaults(&name) {
        if !out.iter().any(|t| t.key == key(param)) {
            out.push(Tolerance {
                line: line(call),
                key: key(param),
                value: *default,
                looser: *looser,
                text: format!("{param} (default {default})"),
            });
        }
    }
    let seconds = last == "sleep" || name.ends_with("mark.timeout");
    if let (true, Some(p)) = (seconds, positional.first())
        && let Some(value) = literal(*p)
    {
        out.push(Tolerance {
            line: line(call),
            key: last.clone(),
            value,
            looser: Looser::Larger,
            text: src.shown(call),
        });
    }
    let bound = match last.as_str() {
        "assertLess" | "assertLessEqual" => Some(("<", Looser::Larger)),
        "assertGreater" | "assertGreaterEqual" => Some((">", Looser::Smaller)),
        _ => None,
    };
    if let (Some((direction, looser)), Some(p)) = (bound, positional.get(1))
        && let Some(value) = literal(*p)
    {
        out.push(Tolerance {
            line: line(call),
            key: format!("{first} {direction}"),
            value,
            looser,
            text: src.shown(call),
        });
    }
    out
}

/// The numeric bound of an asserted comparison (`elapsed < 0.5`, `0.5 > elapsed`).
pub(crate) fn bound(src: &Source, comparison: Node) -> Option<Tolerance> {
    let mut cursor = comparison.walk();
    let operands: Vec<Node> = comparison.named_children(&mut cursor).collect();
    let [left, right] = operands[..] else {
        return None;
    };
    let operator = {
        let mut cursor = comparison.walk();
        let ops: Vec<String> = comparison
            .children(&mut cursor)
            .filter(|c| !c.is_named())
            .map(|c| src.text(c))
            .collect();
        ops.join(" ")
    };
    let less = match operator.as_str() {
        "<" | "<=" => true,
        ">" | ">=" => false,
        _ => return None,
    };
    let literal = |n: Node| number(&src.normal(n));
    // Written with the bound on the right, or turned around.
    let (other, value, less) = match (literal(left), literal(right)) {
        (None, Some(v)) => (left, v, less),
        (Some(v), None) => (right, v, !less),
        _ => return None,
    };
    Some(Tolerance {
        line: line(comparison),
        key: format!(
            "{} {}",
            normal_text(&src.text(other)),
            if less { "<" } else { ">" }
        ),
        value,
        looser: if less {
            Looser::Larger
        } else {
            Looser::Smaller
        },
        text: src.shown(comparison),
    })
}
