//! What an assertion checks: the strength of an asserted expression (`None` when it cannot
//! fail), and the assertions a call makes (unittest's, pytest's, mock's, numpy's).

use std::collections::{HashMap, HashSet};

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
    // `x is True` holds for less than `x == 1` (or `x == True`) does: an identity is not
    // implied by an equality, so it reads nothing a pin stands for. Against `None` it is:
    // whatever `x == {..}` fixes is not `None`.
    let identity = operators.iter().any(|o| o.starts_with("is"));
    if !identity || operands.iter().any(|o| o.kind() == "none") {
        a.reads = reads(src, &operands);
    }
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
/// bound more than once (`x = ..` twice, `+=`, a tuple and a loop each count; a parameter
/// counts too) pins nothing: which value it holds where is not read here.
pub(crate) struct Names<'t> {
    bound: HashMap<String, Bound>,
    /// Names used where their value may change or be shared (`expected.append(x)`,
    /// `fill(expected)`, `alias = expected`, a class's base): a constant there may not stay
    /// one, nor a comprehension's result.
    touched: HashSet<&'t [u8]>,
    /// The same, outside assertions: a value pinned whole after a use that may have changed
    /// it (`changes.clear(); assert changes == []`) no longer is the value the removed
    /// checks read.
    changed: HashSet<&'t [u8]>,
    /// The function reads its variables by name at run time (`locals()`, `eval(..)`): no
    /// name is known to keep the constant it was bound to.
    dynamic: bool,
    /// The assignments that are statements of the function's own body or of a `with` in it
    /// (not under an `if`, a loop or a `try`), by node id: only those bind a constant that
    /// pins.
    top_level: HashSet<usize>,
}

/// Calls that read a function's variables by name at run time.
const DYNAMIC: &[&str] = &[
    "locals",
    "vars",
    "globals",
    "eval",
    "exec",
    "_getframe",
    "currentframe",
    "settrace",
    "setprofile",
    "get_referrers",
];

/// Builtins a comprehension may call on its items and still compute from them alone.
const PURE: &[&str] = &[
    "len",
    "str",
    "repr",
    "int",
    "float",
    "bool",
    "type",
    "tuple",
    "list",
    "set",
    "frozenset",
    "sorted",
    "abs",
    "round",
    "min",
    "max",
    "sum",
    "bytes",
];

enum Bound {
    /// Once, to this path (normal text).
    Path(String),
    /// Once, to a constant (`expected = [...]`), by a statement of the function's own body
    /// (or of a `with` in it) starting at this byte: it pins only in assertions after it,
    /// and only when no use may have changed it (`Names::uses`).
    Constant(usize),
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

impl<'t> Names<'t> {
    /// The names of the function `def`: its parameters bound (a fixture may hold anything).
    pub(crate) fn of(src: &Source<'t>, def: Node) -> Names<'t> {
        let mut names = Names {
            bound: HashMap::new(),
            touched: HashSet::new(),
            changed: HashSet::new(),
            dynamic: false,
            top_level: HashSet::new(),
        };
        if let Some(parameters) = def.child_by_field_name("parameters") {
            names.bound(src, parameters);
        }
        // The body's own statements, and those of a `with` among them (its body always
        // runs: `with patch(..):` around a whole test).
        let mut blocks: Vec<Node> = def.child_by_field_name("body").into_iter().collect();
        while let Some(block) = blocks.pop() {
            let mut cursor = block.walk();
            for statement in block.named_children(&mut cursor) {
                match statement.kind() {
                    "expression_statement" => {
                        if let Some(assignment) =
                            first_named(statement).filter(|a| a.kind() == "assignment")
                        {
                            names.top_level.insert(assignment.id());
                        }
                    }
                    "with_statement" => blocks.extend(statement.child_by_field_name("body")),
                    _ => {}
                }
            }
        }
        names
    }

    /// Notes every name in `target` as bound to a value that is no path (a loop's target,
    /// `as x`, `x := ..`, a parameter).
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
        let top_level = self.top_level.contains(&node.id());
        for target in targets {
            let bound = match (&path, right) {
                (Some(path), _) => Bound::Path(path.clone()),
                (None, Some(r)) if top_level && is_constant(r) => {
                    Bound::Constant(node.start_byte())
                }
                (None, Some(r)) if node.kind() == "assignment" => {
                    derived(src, r).map_or(Bound::Value, Bound::Derived)
                }
                _ => Bound::Value,
            };
            self.note(src.normal(target), bound);
        }
    }

    /// Notes the uses of names among `node`'s named `children` (each with its field;
    /// `asserted`: `node` stands inside an assertion; `callee`: what `node` calls, if a
    /// call). A read (compared, shown, tested, looped over, `x.a`, `x[k]`), an argument of
    /// unittest's own assertion methods or of a read-only builtin, or the name's own binding
    /// leaves its value as it was and unshared; any other use (a method called on it, an
    /// argument of another call, an alias, a class's base) may change it. A call's
    /// arguments are read at the call, which knows what it calls (a node's parent is not
    /// asked for: tree-sitter finds it from the root).
    pub(crate) fn uses(
        &mut self,
        src: &Source<'t>,
        node: Node,
        children: &[(Node, Option<&'static str>)],
        asserted: bool,
        callee: Option<&str>,
    ) {
        let kind = node.kind();
        let mut changed: Vec<Node> = Vec::new();
        if kind != "argument_list" {
            for &(child, field) in children {
                if child.kind() == "identifier" {
                    let harmless = match kind {
                        // Read: compared, shown, tested, computed with, looped over; `x.a`
                        // and `x[k]` (a method called on `x` is noted at the call).
                        "comparison_operator"
                        | "interpolation"
                        | "not_operator"
                        | "boolean_operator"
                        | "binary_operator"
                        | "unary_operator"
                        | "conditional_expression"
                        | "attribute"
                        | "subscript"
                        | "expression_statement"
                        | "return_statement" => true,
                        "if_statement" | "elif_clause" | "while_statement" => {
                            field == Some("condition")
                        }
                        // Bound (the binding is read by `assigned` and `bound`) or looped
                        // over.
                        "pattern_list" | "tuple_pattern" | "list_pattern" | "as_pattern_target"
                        | "for_statement" | "for_in_clause" => true,
                        "assignment" | "augmented_assignment" => field == Some("left"),
                        "named_expression" => field == Some("name"),
                        "keyword_argument" => field == Some("name"),
                        "call" => field == Some("function"),
                        _ => false,
                    };
                    if !harmless {
                        changed.push(child);
                    }
                }
            }
        }
        let arguments = |field: &str| {
            node.child_by_field_name(field)
                .filter(|a| a.kind() == "argument_list")
        };
        match kind {
            "call" => {
                let function = node.child_by_field_name("function");
                // `x.append(..)`, `x[0].update(..)`, `x.a.clear()`: a method of `x` or of
                // a part of it.
                if let Some(f) = function.filter(|f| f.kind() == "attribute") {
                    let mut object = f.child_by_field_name("object");
                    while let Some(o) = object {
                        match o.kind() {
                            "identifier" => {
                                changed.push(o);
                                break;
                            }
                            "attribute" | "subscript" => {
                                let field = match o.kind() {
                                    "attribute" => "object",
                                    _ => "value",
                                };
                                object = o.child_by_field_name(field);
                            }
                            _ => break,
                        }
                    }
                }
                // Only the name called is read: the text of a long chain (`x.f().f()..`)
                // is not copied for each call in it.
                let last = function.and_then(|f| match f.kind() {
                    "identifier" => Some(f),
                    "attribute" => f.child_by_field_name("attribute"),
                    _ => None,
                });
                if last.is_some_and(|l| DYNAMIC.contains(&src.text(l).as_str())) {
                    self.dynamic = true;
                }
                if let Some(args) = arguments("arguments") {
                    let mut cursor = args.walk();
                    let bare: Vec<Node> = args
                        .named_children(&mut cursor)
                        .filter(|a| a.kind() == "identifier")
                        .collect();
                    if !bare.is_empty() && !callee.is_some_and(|c| reads_only(src, c)) {
                        changed.extend(bare);
                    }
                }
            }
            "class_definition" => {
                if let Some(bases) = arguments("superclasses") {
                    changed.extend(descendants(bases).filter(|n| n.kind() == "identifier"));
                }
            }
            // `x.f_locals`, read without a call.
            "attribute"
                if node
                    .child_by_field_name("attribute")
                    .is_some_and(|a| src.text(a) == "f_locals") =>
            {
                self.dynamic = true
            }
            _ => {}
        }
        // An identifier's text is its name: kept as the slice of the file, not copied.
        for name in changed {
            let name = src.text.get(name.byte_range()).unwrap_or_default();
            if !asserted {
                self.changed.insert(name);
            }
            self.touched.insert(name);
        }
    }

    /// Whether `name` is bound once, by a statement of the function's own body before
    /// `at`, to a constant that no use may have changed.
    fn constant(&self, name: &str, at: usize) -> bool {
        matches!(self.bound.get(name), Some(Bound::Constant(bound)) if *bound < at)
            && !self.touched.contains(name.as_bytes())
            && !self.dynamic
    }

    /// `a` (at byte `at`) with its pin through a name bound to a constant, when it has none
    /// of its own: the first of `by_name` whose name is.
    pub(crate) fn pin_by_name(&self, a: &mut Assertion, at: usize, by_name: Vec<ByName>) {
        if a.pins.is_none() {
            a.pins = by_name
                .into_iter()
                .find(|b| self.constant(&b.name, at))
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
    /// on a name bound more than once, or never to an expression, is dropped, and so is a
    /// pin on a value a use outside assertions may have changed.
    pub(crate) fn resolve(&self, a: &mut Assertion) {
        if let Some(pin) = a.pins.take() {
            // Not a value the run computes: one a use may have changed, or a constant the
            // test wrote itself (`changes = [..]; assert changes == expected`).
            let value = pin.split(" [only under: ").next().unwrap_or(&pin);
            let kept = !names_in(value).any(|n| {
                (self.changed.contains(n.as_bytes()) && !is_self(n))
                    || matches!(self.bound.get(n), Some(Bound::Constant(_)))
            });
            a.pins = self.through(&pin).filter(|_| kept);
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
            let mut last = 0;
            for (start, name) in name_spans(&expr) {
                out.push_str(&expr[last..start]);
                last = start + name.len();
                match self.bound.get(name) {
                    Some(Bound::Path(path)) => {
                        out.push_str(path);
                        changed = true;
                    }
                    // A comprehension's result changed after it was made is not derived.
                    Some(Bound::Derived(path)) if !self.touched.contains(name.as_bytes()) => {
                        out.push_str(path);
                        changed = true;
                    }
                    Some(Bound::Again) => return None,
                    Some(_) | None => out.push_str(name),
                }
            }
            out.push_str(&expr[last..]);
            expr = out;
            if !changed {
                break;
            }
        }
        Some(expr)
    }
}

/// The names in `expr` (normal text), as (start, name): not attribute names (`.x`), not
/// inside strings.
fn name_spans(expr: &str) -> Vec<(usize, &str)> {
    let mut spans = Vec::new();
    let mut quote: Option<char> = None;
    let mut chars = expr.char_indices().peekable();
    let mut previous: Option<char> = None;
    while let Some((start, c)) = chars.next() {
        if let Some(q) = quote {
            if c == q && previous != Some('\\') {
                quote = None;
            }
            previous = Some(c);
            continue;
        }
        if c == '\'' || c == '"' {
            quote = Some(c);
            previous = Some(c);
            continue;
        }
        let starts_name = (c.is_alphabetic() || c == '_')
            && !previous.is_some_and(|p| p.is_alphanumeric() || p == '_' || p == '.');
        if !starts_name {
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
        spans.push((start, &expr[start..end]));
        previous = expr[start..end].chars().last();
    }
    spans
}

/// `self` or `cls`: the test's own object, whose helper methods it calls throughout; a
/// value read from it is not taken as changed by them.
fn is_self(name: &str) -> bool {
    matches!(name, "self" | "cls")
}

/// The names `expr` (normal text) reads.
fn names_in(expr: &str) -> impl Iterator<Item = &str> {
    name_spans(expr).into_iter().map(|(_, name)| name)
}

/// What a comprehension computed from one path alone is read as (`changes[*1234]`, the
/// number naming the comprehension); `None` for anything else. Alone: every name in it is
/// its own loop variable, an attribute or keyword name, or a builtin it calls on them
/// (`[type(c) for c in x]`); `[c - base for c in x]` also depends on `base`, and
/// `[render(c) for c in x]` or `[c.render() for c in x]` on what the call does.
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
    let own: HashSet<String> = descendants(target)
        .filter(|n| n.kind() == "identifier")
        .map(|n| src.normal(n))
        .collect();
    // Every name under the comprehension but the iterable, read with the field it stands
    // in: one pass, no parent asked for.
    let mut stack = vec![node];
    while let Some(parent) = stack.pop() {
        let mut cursor = parent.walk();
        let mut more = cursor.goto_first_child();
        while more {
            let child = cursor.node();
            let field = cursor.field_name();
            more = cursor.goto_next_sibling();
            if child.id() == iterable.id() {
                continue;
            }
            match child.kind() {
                "identifier" => {
                    let fine = match (parent.kind(), field) {
                        ("attribute", Some("attribute")) | ("keyword_argument", Some("name")) => {
                            true
                        }
                        ("call", Some("function")) => PURE.contains(&src.text(child).as_str()),
                        _ => own.contains(&src.normal(child)),
                    };
                    if !fine {
                        return None;
                    }
                }
                // A method call computes what its object's class says.
                "attribute" if parent.kind() == "call" && field == Some("function") => {
                    return None;
                }
                _ => stack.push(child),
            }
        }
    }
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    src.normal(node).hash(&mut hasher);
    Some(format!("{path}[*{}]", hasher.finish()))
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
        .map(|s| compared(src, assertion(src, call, s), name, &positional))
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
/// constant is pinned whole, as by `assert x == {...}`. (Not `assertSequenceEqual`, which
/// holds for a string and the list of its characters.)
const EQUALS: &[&str] = &[
    "assertEqual",
    "assertEquals",
    "failUnlessEqual",
    "assertDictEqual",
    "assertListEqual",
    "assertTupleEqual",
    "assertMultiLineEqual",
];

/// unittest's other assertions that compare their first two arguments (`assertIn(k, x)`
/// reads `x`, as `assert k in x` does).
const COMPARES_TWO: &[&str] = &[
    "assertNotEqual",
    "assertNotEquals",
    "assertIn",
    "assertNotIn",
    "assertGreater",
    "assertGreaterEqual",
    "assertLess",
    "assertLessEqual",
    "assertCountEqual",
    "assertSetEqual",
    "assertSequenceEqual",
];

/// unittest's assertion that compares its first argument with a value of its own
/// (`assertIsNotNone(x)`: any value an equality with a constant other than `None` fixes
/// passes it).
const COMPARES_FIRST: &[&str] = &["assertIsNotNone"];

/// unittest's other assertion methods: they read their arguments and change none.
const OTHER_UNITTEST: &[&str] = &[
    "assertTrue",
    "assertFalse",
    "assertIs",
    "assertIsNot",
    "assertIsNone",
    "assertIsInstance",
    "assertNotIsInstance",
    "assertAlmostEqual",
    "assertNotAlmostEqual",
    "assertRegex",
    "assertNotRegex",
];

/// Whether a call of `callee` only reads its arguments: unittest's own assertion methods, and
/// builtins that print or compute from a value (`print(x)`, `len(x)`, `isinstance(x, T)`).
fn reads_only(src: &Source, callee: &str) -> bool {
    unittest_method(src, callee).is_some()
        || ((PURE.contains(&callee) || matches!(callee, "print" | "isinstance"))
            && !src.bindings.binds(callee))
}

/// The unittest assertion method a call makes (`self.assertIn(..)` is `assertIn`): called
/// on `self`, and not defined or bound again in the file (a test class may define its own
/// `assertEqual` that checks nothing).
fn unittest_method<'a>(src: &Source, callee: &'a str) -> Option<&'a str> {
    let method = callee.strip_prefix("self.")?;
    let known = [EQUALS, COMPARES_TWO, COMPARES_FIRST, OTHER_UNITTEST]
        .iter()
        .any(|list| list.contains(&method));
    (known && !src.bindings.binds(method)).then_some(method)
}

/// Assertion `a`, the call `callee(positional..)`, with what it pins and reads when it is
/// one of unittest's comparisons.
fn compared(
    src: &Source,
    mut a: Assertion,
    callee: &str,
    positional: &[Node],
) -> (Assertion, Vec<ByName>) {
    let mut by_name = Vec::new();
    let Some(method) = unittest_method(src, callee) else {
        return (a, by_name);
    };
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
