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

/// An exact equality that pins nothing as written but would were a name in it bound once
/// to a constant (`assert changes == expected` after `expected = [...]`): `name`, and what
/// the equality then pins (normal text).
pub(crate) struct ByName {
    name: String,
    pins: String,
}

impl ByName {
    /// The same, for an assertion that stands under a statement (`suffix`: ` [only under:
    /// ..]`).
    pub(crate) fn under(mut self, suffix: &str) -> Self {
        self.pins.push_str(suffix);
        self
    }
}

/// What `left == right` pins: the side compared with a constant, written out or in a
/// snapshot; or, for two computed sides, which side a bare name's constant would pin.
fn equality(src: &Source, left: Node, right: Node) -> (Option<String>, Vec<ByName>) {
    let fixed = |o: Node| is_constant(o) || is_snapshot_of_constant(src, o);
    let shown = |o: Node| unparenthesized(o).map(|o| src.normal(o));
    match (fixed(left), fixed(right)) {
        (false, true) => (shown(left), Vec::new()),
        (true, false) => (shown(right), Vec::new()),
        (true, true) => (None, Vec::new()),
        (false, false) => {
            let name = |o: Node| {
                unparenthesized(o)
                    .filter(|o| o.kind() == "identifier")
                    .map(|o| src.normal(o))
            };
            // `result == expected` is the more common order: tried first.
            let by_name = [(right, left), (left, right)]
                .into_iter()
                .filter_map(|(this, other)| {
                    Some(ByName {
                        name: name(this)?,
                        pins: shown(other)?,
                    })
                })
                .collect();
            (None, by_name)
        }
    }
}

/// The expressions among `operands` that are not constants (normal texts): what a
/// comparison reads.
fn reads(src: &Source, operands: &[Node]) -> Vec<String> {
    operands
        .iter()
        .filter(|o| !is_constant(**o))
        .filter_map(|o| unparenthesized(*o))
        .map(|o| src.normal(o))
        .collect()
}

/// An `assert` statement's assertion, with what its expression `expr` pins and reads
/// (`Assertion::pins`, `Assertion::reads`), and what it would pin through a name bound to a
/// constant.
pub(crate) fn assert_statement(
    src: &Source,
    statement: Node,
    expr: Node,
    strength: Strength,
) -> (Assertion, Vec<ByName>) {
    let mut a = assertion(src, statement, strength);
    let Some(expr) = unparenthesized(expr) else {
        return (a, Vec::new());
    };
    if expr.kind() != "comparison_operator" {
        return (a, Vec::new());
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
    a.reads = reads(src, &operands);
    let mut by_name = Vec::new();
    if let ([left, right], [op]) = (operands.as_slice(), operators.as_slice())
        && op == "=="
    {
        (a.pins, by_name) = equality(src, *left, *right);
    }
    (a, by_name)
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
    /// Names used where their value may change or be shared (`expected.append(x)`,
    /// `fill(expected)`, `alias = expected`): a constant there may not stay one.
    touched: std::collections::HashSet<String>,
}

enum Bound {
    /// Once, to this path (normal text).
    Path(String),
    /// Once, to a constant (`expected = [...]`); it pins only when no use may have changed
    /// it (`Names::used`).
    Constant,
    /// Once, to a value computed from this path alone by a comprehension (`[c['path'] for c
    /// in changes]`): read as a part of the path, named by the comprehension
    /// (`changes[*1234]`), so a check on it is implied when the path is pinned whole, and a
    /// pin on it implies only checks on the same comprehension.
    Derived(String),
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
        let right = node.child_by_field_name("right").filter(|_| single);
        let path = right.map(|r| src.normal(r)).filter(|v| is_path(v));
        for target in targets {
            let bound = match (&path, right) {
                (Some(path), _) => Bound::Path(path.clone()),
                (None, Some(r)) if node.kind() == "assignment" && is_constant(r) => Bound::Constant,
                (None, Some(r)) if node.kind() == "assignment" => {
                    derived(src, r).map_or(Bound::Value, Bound::Derived)
                }
                _ => Bound::Value,
            };
            self.note(src.normal(target), bound);
        }
    }

    /// Notes the uses of names among `node`'s children. Only a comparison's operand, an
    /// f-string's part, an argument of an assertion call, a called function's name or the
    /// name's own binding leaves its value as it was and unshared; any other use (a method
    /// called on it, an argument of another call, an alias) may change it, so a constant it
    /// was bound to pins nothing. A call's arguments are read at the call, which knows what
    /// it calls (a node's parent is not asked for: tree-sitter finds it from the root).
    pub(crate) fn uses(&mut self, src: &Source, node: Node) {
        let kind = node.kind();
        if kind == "argument_list" {
            return;
        }
        let mut cursor = node.walk();
        let mut more = cursor.goto_first_child();
        while more {
            let child = cursor.node();
            if child.kind() == "identifier" {
                let field = cursor.field_name();
                let harmless = match kind {
                    "comparison_operator" | "interpolation" => true,
                    "assignment" | "augmented_assignment" => field == Some("left"),
                    "keyword_argument" => field == Some("name"),
                    "attribute" => field == Some("attribute"),
                    "call" => field == Some("function"),
                    _ => false,
                };
                if !harmless {
                    self.touched.insert(src.normal(child));
                }
            }
            more = cursor.goto_next_sibling();
        }
        if kind == "call"
            && let Some(args) = node
                .child_by_field_name("arguments")
                .filter(|a| a.kind() == "argument_list")
        {
            let name = callee(src, node);
            let asserts = name
                .rsplit('.')
                .next()
                .is_some_and(|last| last.starts_with("assert"));
            let mut cursor = args.walk();
            for arg in args.named_children(&mut cursor) {
                if arg.kind() == "identifier" && !asserts {
                    self.touched.insert(src.normal(arg));
                }
            }
        }
    }

    /// Whether `name` is bound once to a constant that no method is called on.
    fn constant(&self, name: &str) -> bool {
        matches!(self.bound.get(name), Some(Bound::Constant)) && !self.touched.contains(name)
    }

    /// `a`'s pin through a name bound to a constant, when it has none of its own: the first
    /// of `by_name` whose name is.
    pub(crate) fn pin_by_name(&self, a: &mut Assertion, by_name: Vec<ByName>) {
        if a.pins.is_none() {
            a.pins = by_name
                .into_iter()
                .find(|b| self.constant(&b.name))
                .map(|b| b.pins);
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
                    Some(Bound::Path(path) | Bound::Derived(path)) => {
                        out.push_str(path);
                        changed = true;
                    }
                    Some(Bound::Again) => return None,
                    Some(Bound::Constant | Bound::Value) | None => out.push_str(name),
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

/// What a comprehension computed from one path alone is read as (`changes[*1234]`, the
/// number naming the comprehension); `None` for anything else. Alone: every name in it is
/// its own loop variable, a part of the path it loops over, or a function it calls
/// (`[type(c) for c in x]`); `[c - base for c in x]` also depends on `base`.
fn derived(src: &Source, node: Node) -> Option<String> {
    use std::hash::{Hash, Hasher};
    let node = unparenthesized(node)?;
    if !matches!(
        node.kind(),
        "list_comprehension"
            | "set_comprehension"
            | "generator_expression"
            | "dictionary_comprehension"
    ) {
        return None;
    }
    let mut cursor = node.walk();
    let clauses: Vec<Node> = node
        .named_children(&mut cursor)
        .filter(|c| c.kind() == "for_in_clause")
        .collect();
    let [clause] = clauses.as_slice() else {
        return None;
    };
    let (target, iterable) = (
        clause.child_by_field_name("left")?,
        clause.child_by_field_name("right")?,
    );
    let path = src.normal(iterable);
    if !is_path(&path) {
        return None;
    }
    let own: Vec<String> = descendants(target)
        .filter(|n| n.kind() == "identifier")
        .map(|n| src.normal(n))
        .collect();
    let inside =
        |n: Node, of: Node| n.start_byte() >= of.start_byte() && n.end_byte() <= of.end_byte();
    let called = |n: Node| {
        n.parent()
            .filter(|p| p.kind() == "call")
            .and_then(|p| p.child_by_field_name("function"))
            .is_some_and(|f| f.id() == n.id())
    };
    let alone = descendants(node)
        .filter(|n| n.kind() == "identifier" && !inside(*n, iterable) && !called(*n))
        .all(|n| {
            let parent_is_attribute = n
                .parent()
                .filter(|p| p.kind() == "attribute")
                .and_then(|p| p.child_by_field_name("attribute"))
                .is_some_and(|a| a.id() == n.id());
            let keyword = n
                .parent()
                .filter(|p| p.kind() == "keyword_argument")
                .and_then(|p| p.child_by_field_name("name"))
                .is_some_and(|k| k.id() == n.id());
            parent_is_attribute || keyword || own.contains(&src.normal(n))
        });
    if !alone {
        return None;
    }
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    src.normal(node).hash(&mut hasher);
    Some(format!("{path}[*{}]", hasher.finish() % 1_000_000_007))
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
pub(crate) fn assertion_call(
    src: &Source,
    call: Node,
    name: &str,
) -> Vec<(Assertion, Vec<ByName>)> {
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
    let mut out: Vec<(Assertion, Vec<ByName>)> = strength
        .map(|s| compared(src, assertion(src, call, s), last, &positional))
        .into_iter()
        .collect();
    if raises {
        for (key, value) in &keywords {
            if key == "match" || key == "expected_regex" {
                let a = Assertion {
                    line: line(*value),
                    text: format!("{key}={}", src.shown(*value)),
                    strength: Strength::Strong,
                    pins: None,
                    reads: Vec::new(),
                };
                out.push((a, Vec::new()));
            }
        }
    }
    out
}

/// unittest's assertions that compare two values exactly: the value compared with a
/// constant is pinned whole, as by `assert x == {...}`.
const EQUALS: &[&str] = &[
    "assertEqual",
    "assertEquals",
    "failUnlessEqual",
    "assertDictEqual",
    "assertListEqual",
    "assertTupleEqual",
    "assertSequenceEqual",
    "assertMultiLineEqual",
];

/// unittest's other assertions that compare their first two arguments (`assertIn(k, x)`
/// reads `x`, as `assert k in x` does).
const COMPARES_TWO: &[&str] = &[
    "assertNotEqual",
    "assertNotEquals",
    "assertIn",
    "assertNotIn",
    "assertIs",
    "assertIsNot",
    "assertGreater",
    "assertGreaterEqual",
    "assertLess",
    "assertLessEqual",
    "assertCountEqual",
    "assertSetEqual",
];

/// unittest's assertions that compare their first argument with a value of their own
/// (`assertIsNone(x)` is `assert x is None`; `assertIsInstance(x, T)` reads `x`).
const COMPARES_FIRST: &[&str] = &[
    "assertIsNone",
    "assertIsNotNone",
    "assertIsInstance",
    "assertNotIsInstance",
];

/// Assertion `a`, the unittest call `method(positional..)`, with what it pins and reads.
fn compared(
    src: &Source,
    mut a: Assertion,
    method: &str,
    positional: &[Node],
) -> (Assertion, Vec<ByName>) {
    let mut by_name = Vec::new();
    if EQUALS.contains(&method) || COMPARES_TWO.contains(&method) {
        if let [left, right, ..] = positional {
            a.reads = reads(src, &[*left, *right]);
            if EQUALS.contains(&method) {
                (a.pins, by_name) = equality(src, *left, *right);
            }
        }
    } else if COMPARES_FIRST.contains(&method)
        && let Some(first) = positional.first()
    {
        a.reads = reads(src, &[*first]);
    }
    (a, by_name)
}
