//! What an assertion checks: the strength of an asserted expression (`None` when it cannot
//! fail), and the assertions a call makes (unittest's, pytest's, mock's, numpy's).

use tree_sitter::Node;

use super::syntax::{arguments, callee, first_named, unparenthesized};
use crate::evidence::test_source::{Assertion, Source, Strength, descendants, line, number};

pub(crate) fn assertion(src: &Source, node: Node, strength: Strength) -> Assertion {
    Assertion {
        line: line(node),
        text: src.shown(node),
        strength,
        pins: None,
        reads: Vec::new(),
    }
}

/// An `assert` statement's assertion, with what its expression `expr` pins and reads
/// (`Assertion::pins`, `Assertion::reads`).
pub(crate) fn assert_statement(
    src: &Source,
    statement: Node,
    expr: Node,
    strength: Strength,
) -> Assertion {
    let mut a = assertion(src, statement, strength);
    let Some(expr) = unparenthesized(expr) else {
        return a;
    };
    if expr.kind() != "comparison_operator" {
        return a;
    }
    let mut cursor = expr.walk();
    let operands: Vec<Node> = expr
        .named_children(&mut cursor)
        .filter(|o| o.kind() != "comment")
        .collect();
    let mut cursor = expr.walk();
    let operators: Vec<String> = expr
        .children(&mut cursor)
        .filter(|c| !c.is_named())
        .map(|c| src.text(c))
        .collect();
    a.reads = operands
        .iter()
        .filter(|o| !is_constant(**o))
        .filter_map(|o| unparenthesized(*o))
        .map(|o| src.normal(o))
        .collect();
    if let ([left, right], [op]) = (operands.as_slice(), operators.as_slice()) {
        let fixed = |o: Node| is_constant(o) || is_snapshot_of_constant(src, o);
        if op == "==" {
            a.pins = match (fixed(*left), fixed(*right)) {
                (false, true) => unparenthesized(*left).map(|o| src.normal(o)),
                (true, false) => unparenthesized(*right).map(|o| src.normal(o)),
                _ => None,
            };
        }
    }
    a
}

/// `snapshot(<constant>)`: inline-snapshot's recorded value, written out in the test. An
/// empty `snapshot()` is filled in by the run itself, so it pins nothing.
fn is_snapshot_of_constant(src: &Source, node: Node) -> bool {
    let Some(node) = unparenthesized(node) else {
        return false;
    };
    if node.kind() != "call" || callee(src, node).rsplit('.').next() != Some("snapshot") {
        return false;
    }
    let (positional, keywords) = arguments(src, node);
    matches!((positional.as_slice(), keywords.as_slice()), ([only], []) if is_constant(*only))
}

/// How strong an asserted expression is; `None` when it cannot be false (a truthy literal,
/// `x == x`).
pub(crate) fn strength(src: &Source, node: Node) -> Option<Strength> {
    strength_within(src, node, 0)
}

/// How deep `not`, `and` and `or` are followed: a condition nested deeper (written to make
/// guard recurse) is read as weak.
const MAX_CONDITION_DEPTH: usize = 32;

fn strength_within(src: &Source, mut node: Node, depth: usize) -> Option<Strength> {
    if depth > MAX_CONDITION_DEPTH {
        return Some(Strength::Weak);
    }
    node = unparenthesized(node)?;
    let strength = |n: Node| strength_within(src, n, depth + 1);
    match node.kind() {
        "comparison_operator" => {
            let mut cursor = node.walk();
            let operands: Vec<Node> = node
                .named_children(&mut cursor)
                .filter(|o| o.kind() != "comment")
                .collect();
            if operands.iter().all(|o| is_constant(*o)) {
                return None;
            }
            // `x == (x)` compares a thing with itself as surely as `x == x`.
            let bare = |o: Node| unparenthesized(o).map(|o| src.normal(o));
            if operands.len() == 2 && bare(operands[0]) == bare(operands[1]) {
                return None;
            }
            let operators: String = {
                let mut cursor = node.walk();
                node.children(&mut cursor)
                    .filter(|c| !c.is_named())
                    .map(|c| src.text(c))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            // `x in (1, x)`: a thing is in a collection written to hold it.
            if operands.len() == 2 && operators == "in" {
                let holds = unparenthesized(operands[1])
                    .filter(|c| matches!(c.kind(), "tuple" | "list" | "set"));
                if let Some(collection) = holds {
                    let mut cursor = collection.walk();
                    let left = bare(operands[0]);
                    if collection
                        .named_children(&mut cursor)
                        .any(|item| bare(item) == left)
                    {
                        return None;
                    }
                }
            }
            let against_none = operands.iter().any(|o| o.kind() == "none");
            if against_none && (operators == "is not" || operators == "!=") {
                Some(Strength::Weak)
            } else {
                Some(Strength::Strong)
            }
        }
        "not_operator" => node.child_by_field_name("argument").and_then(strength),
        "boolean_operator" => {
            let left = node.child_by_field_name("left").and_then(strength);
            let right = node.child_by_field_name("right").and_then(strength);
            let op = node
                .child_by_field_name("operator")
                .map(|o| src.text(o))
                .unwrap_or_default();
            // `a or b` holds when the weaker holds; `a and b` checks the stronger too.
            if op == "or" {
                left.min(right)
            } else {
                left.max(right)
            }
        }
        "false" | "none" => Some(Strength::Strong),
        // An f-string with a part filled in checks only that the text it makes is not empty:
        // weak (`f"{x == 1}"` is "True" or "False", never empty), and nothing at all when a
        // part written out makes sure of it (`f"x: {x}"`).
        "string" | "concatenated_string"
            if descendants(node).any(|n| n.kind() == "interpolation") =>
        {
            match truthy(src, node) {
                true => None,
                false => Some(Strength::Weak),
            }
        }
        kind if is_literal(kind) => {
            if truthy(src, node) {
                None
            } else {
                // `assert False`, `assert 0`: a deliberate failure.
                Some(Strength::Strong)
            }
        }
        "call" => {
            let name = callee(src, node);
            let last = name.rsplit('.').next().unwrap_or(&name);
            match last {
                "all" | "any" => {
                    let generator = node
                        .child_by_field_name("arguments")
                        .filter(|a| a.kind() == "generator_expression")
                        .and_then(|g| g.child_by_field_name("body"));
                    match generator {
                        Some(body) => strength(body),
                        None => Some(Strength::Weak),
                    }
                }
                _ => Some(Strength::Weak),
            }
        }
        _ => Some(Strength::Weak),
    }
}

fn is_literal(kind: &str) -> bool {
    matches!(
        kind,
        "true"
            | "false"
            | "none"
            | "integer"
            | "float"
            | "string"
            | "concatenated_string"
            | "tuple"
            | "list"
            | "dictionary"
            | "set"
    )
}

/// Whether an expression is a constant: a literal whose parts are all constants (`{a, b}`
/// or an f-string is not).
fn is_constant(node: Node) -> bool {
    descendants(node).all(|n| {
        !n.is_named()
            || is_literal(n.kind())
            || matches!(
                n.kind(),
                "string_start"
                    | "string_content"
                    | "string_end"
                    | "escape_sequence"
                    | "pair"
                    | "parenthesized_expression"
                    | "comment"
            )
    })
}

/// Whether a literal is truthy, as Python reads it.
fn truthy(src: &Source, node: Node) -> bool {
    match node.kind() {
        "true" => true,
        "false" | "none" => false,
        "integer" | "float" => number(&src.text(node)).is_none_or(|v| v != 0.0),
        "string" => descendants(node).any(|n| n.kind() == "string_content"),
        "concatenated_string" => descendants(node).any(|n| n.kind() == "string_content"),
        _ => first_named(node).is_some(),
    }
}

/// The assertions a call makes: unittest's `self.assert*`, pytest's `raises`/`warns`, mock's
/// `assert_called_*`, `numpy.testing.assert_*`, `pytest.fail`; a `match=` on `raises` is an
/// assertion of its own.
pub(crate) fn assertion_call(src: &Source, call: Node, name: &str) -> Vec<Assertion> {
    let last = name.rsplit('.').next().unwrap_or(name);
    let (positional, keywords) = arguments(src, call);
    let text = |n: usize| positional.get(n).map(|p| src.normal(*p));
    let raises = matches!(
        last,
        "assertRaises"
            | "assertRaisesRegex"
            | "assertRaisesRegexp"
            | "assertWarns"
            | "assertWarnsRegex"
    ) || matches!(name, "pytest.raises" | "raises" | "pytest.warns" | "warns");
    let strength = if raises {
        // `pytest.raises(Exception)` passes whatever goes wrong.
        let broad = |t: &str| {
            t.trim_matches(['(', ')'])
                .split(',')
                .any(|e| matches!(e.trim(), "Exception" | "BaseException"))
        };
        Some(match text(0) {
            Some(t) if broad(&t) => Strength::Weak,
            _ => Strength::Strong,
        })
    } else if matches!(name, "self.fail" | "pytest.fail" | "pytest.deprecated_call") {
        Some(Strength::Strong)
    } else if !last.starts_with("assert") {
        return Vec::new();
    } else if matches!(
        last,
        "assertTrue" | "assertFalse" | "assert_" | "failUnless" | "failIf"
    ) {
        match positional.first() {
            Some(p) => strength(src, *p),
            None => Some(Strength::Weak),
        }
    } else if matches!(
        last,
        "assertIsNotNone"
            | "assert_called"
            | "assert_called_once"
            | "assert_awaited"
            | "assert_awaited_once"
    ) {
        Some(Strength::Weak)
    } else if positional.len() >= 2 && text(0) == text(1) {
        // `assertEqual(x, x)` cannot fail.
        None
    } else {
        Some(Strength::Strong)
    };
    let mut out: Vec<Assertion> = strength
        .map(|s| assertion(src, call, s))
        .into_iter()
        .collect();
    if raises {
        for (key, value) in &keywords {
            if key == "match" || key == "expected_regex" {
                out.push(Assertion {
                    line: line(*value),
                    text: format!("{key}={}", src.shown(*value)),
                    strength: Strength::Strong,
                    pins: None,
                    reads: Vec::new(),
                });
            }
        }
    }
    out
}
