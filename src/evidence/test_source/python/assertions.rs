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

/// The names a test function binds, for what its assertions pin and read: `s =
/// schema['properties']; assert s['a'] == 1` reads `schema['properties']['a']`, a part of a
/// pin on `schema`. Only names bound once to such a path (names, attributes, subscripts)
/// are read through; a name bound once to anything else stands for itself, and a name
/// bound more than once (`x = ..` twice, `+=`, a tuple and a loop each count) pins nothing:
/// which value it holds where is not read here.
#[derive(Default)]
pub(crate) struct Names {
    bound: std::collections::HashMap<String, Bound>,
}

enum Bound {
    /// Once, to this path (normal text).
    Path(String),
    /// Once, to a value that is no path.
    Value,
    /// More than once.
    Again,
}

impl Names {
    /// Notes every name in `target` as bound to a value that is no path (a loop's target,
    /// `as x`, `x := ..`).
    pub(crate) fn bound(&mut self, src: &Source, target: Node) {
        for name in descendants(target).filter(|n| n.kind() == "identifier") {
            self.note(src.normal(name), Bound::Value);
        }
    }

    /// Notes the assignment `node` (`x = expr`, `x += expr`, `a, b = ..`).
    pub(crate) fn assigned(&mut self, src: &Source, node: Node) {
        let Some(left) = node.child_by_field_name("left") else {
            return;
        };
        let single = node.kind() == "assignment" && left.kind() == "identifier";
        let targets: Vec<Node> = match single {
            true => vec![left],
            false => descendants(left)
                .filter(|n| n.kind() == "identifier")
                .collect(),
        };
        let value = node
            .child_by_field_name("right")
            .map(|r| src.normal(r))
            .filter(|v| single && is_path(v));
        for target in targets {
            let bound = match &value {
                Some(path) => Bound::Path(path.clone()),
                None => Bound::Value,
            };
            self.note(src.normal(target), bound);
        }
    }

    /// `name` bound to `bound`, or `Again` when it was bound before.
    fn note(&mut self, name: String, bound: Bound) {
        self.bound
            .entry(name)
            .and_modify(|b| *b = Bound::Again)
            .or_insert(bound);
    }

    /// `a`'s pin and reads with each name bound once read through to its expression; a pin
    /// on a name bound more than once, or never to an expression, is dropped.
    pub(crate) fn resolve(&self, a: &mut Assertion) {
        if let Some(pin) = a.pins.take() {
            a.pins = self.through(&pin);
        }
        for read in &mut a.reads {
            if let Some(expanded) = self.through(read) {
                *read = expanded;
            }
        }
    }

    /// `expr` with each name in it bound once read through to its expression (a few levels
    /// deep: `s = schema['p']` after `schema = make()`); `None` when a name in it is bound
    /// more than once. Attribute names (`.x`) and string contents are left as they are.
    fn through(&self, expr: &str) -> Option<String> {
        let mut expr = expr.to_string();
        for _ in 0..4 {
            let mut out = String::with_capacity(expr.len());
            let mut changed = false;
            let mut quote: Option<char> = None;
            let mut chars = expr.char_indices().peekable();
            let mut previous: Option<char> = None;
            while let Some((start, c)) = chars.next() {
                if let Some(q) = quote {
                    out.push(c);
                    if c == q && previous != Some('\\') {
                        quote = None;
                    }
                    previous = Some(c);
                    continue;
                }
                if c == '\'' || c == '"' {
                    quote = Some(c);
                    out.push(c);
                    previous = Some(c);
                    continue;
                }
                let starts_name = (c.is_alphabetic() || c == '_')
                    && !previous.is_some_and(|p| p.is_alphanumeric() || p == '_' || p == '.');
                if !starts_name {
                    out.push(c);
                    previous = Some(c);
                    continue;
                }
                let mut end = start + c.len_utf8();
                while let Some(&(k, n)) = chars.peek() {
                    if !(n.is_alphanumeric() || n == '_') {
                        break;
                    }
                    end = k + n.len_utf8();
                    chars.next();
                }
                let name = &expr[start..end];
                match self.bound.get(name) {
                    Some(Bound::Path(path)) => {
                        out.push_str(path);
                        changed = true;
                    }
                    Some(Bound::Again) => return None,
                    Some(Bound::Value) | None => out.push_str(name),
                }
                previous = name.chars().last();
            }
            expr = out;
            if !changed {
                break;
            }
        }
        Some(expr)
    }
}

/// Whether `expr` (normal text) reads a value by names, attributes and subscripts only
/// (`tool.schema['properties']`): no call, operator or space outside a string.
fn is_path(expr: &str) -> bool {
    let mut quote: Option<char> = None;
    expr.starts_with(|c: char| c.is_alphabetic() || c == '_')
        && expr.chars().all(|c| match quote {
            Some(q) => {
                if c == q {
                    quote = None;
                }
                true
            }
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                true
            }
            None => c.is_alphanumeric() || matches!(c, '_' | '.' | '[' | ']' | '-'),
        })
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
