//! Python test files as pytest and unittest read them: `test*` functions at module level
//! and `test*` methods of classes (also inside module-level `if`/`try` blocks), their
//! decorators, their class's decorators and `pytestmark`, and the module's.

use std::collections::HashMap;

use tree_sitter::Node;

use super::{
    Assertion, Call, Draft, Looser, Site, Source, Strength, TestFile, TestFunction, Tolerance,
    descendants, finish, line, normal_text, number,
};

/// Statements whose blocks may hold definitions that pytest still collects.
const COMPOUND: &[&str] = &[
    "block",
    "if_statement",
    "elif_clause",
    "else_clause",
    "try_statement",
    "except_clause",
    "except_group_clause",
    "finally_clause",
    "with_statement",
];

/// Decorators (pytest marks, unittest decorators) that skip or expect failure.
const SKIP_MARKS: &[&str] = &["mark.skip", "mark.skipif", "mark.xfail"];
const UNITTEST_SKIPS: &[&str] = &["skip", "skipIf", "skipUnless", "expectedFailure"];
/// Calls that skip or expect failure from where they stand.
/// Calls that end a test without a failure: skipped, expected to fail, or the whole session
/// ended (`pytest.exit(returncode=0)` leaves every later test unrun).
const SKIP_CALLS: &[&str] = &[
    "pytest.skip",
    "pytest.xfail",
    "pytest.importorskip",
    "pytest.exit",
];

/// The source encoding the first two lines of Python `text` declare (PEP 263's
/// `# -*- coding: NAME -*-`), with its 1-based line, when it is one guard does not read as
/// Python does. Python decodes the whole file from it before reading it, and guard reads
/// UTF-8: in UTF-7 `+AAo-` is a line feed, in Shift JIS `\x83\x5c` is one character whose
/// second byte is a backslash, so a `return` or a string's end that Python reads is not
/// where guard reads one. UTF-8, ASCII and the ASCII-compatible single-byte encodings
/// (Latin-1, ISO 8859, Windows' code pages) read the same. Both lines are looked at
/// whatever the first holds: a declaration Python would not take refuses nothing it reads.
pub(super) fn unread_encoding(text: &[u8]) -> Option<(String, usize)> {
    static DECLARATION: std::sync::OnceLock<regex::bytes::Regex> = std::sync::OnceLock::new();
    static READ_ALIKE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    // Compiled when a line names a coding at all: most test files declare none, and
    // compiling the two patterns costs more than judging a push of a hundred files.
    let declaration = || {
        DECLARATION.get_or_init(|| {
            regex::bytes::Regex::new(r"^[ \t\x0c]*#.*?coding[:=][ \t]*([-_.a-zA-Z0-9]+)")
                .expect("PEP 263's pattern compiles")
        })
    };
    let read_alike = || {
        READ_ALIKE.get_or_init(|| {
            regex::Regex::new(
                r"^(utf-?8(-.*)?|(us-)?ascii|646|latin-?[0-9]+|l[0-9]+|iso-?8859-[0-9]+|iso-latin-[0-9]+|cp(819|125[0-8])|windows-125[0-8])$",
            )
            .expect("the pattern compiles")
        })
    };
    let mut start = 0;
    for number in 1..=2 {
        let rest = text.get(start..)?;
        let len = memchr::memchr2(b'\n', b'\r', rest).unwrap_or(rest.len());
        let line = &rest[..len];
        let names_coding = memchr::memmem::find(line, b"coding").is_some();
        if let Some(name) = names_coding
            .then(|| declaration().captures(line))
            .flatten()
            .and_then(|c| c.get(1))
        {
            let name = String::from_utf8_lossy(name.as_bytes()).to_ascii_lowercase();
            let normal = name.replace('_', "-");
            return (!read_alike().is_match(&normal)).then_some((name, number));
        }
        start += len
            + if rest[len..].starts_with(b"\r\n") {
                2
            } else {
                1
            };
    }
    None
}

/// How many times `parse` parses with fewer lines read as blank before it parses the text
/// as it is.
const MASK_ROUNDS: usize = 4;

/// Parses Python `text`, its comment-only lines read as blank ones (they are, to Python's
/// tokenizer, and no comment is read here). tree-sitter-python's scanner looks past every
/// comment line that follows a line end, to the next line of code, to decide whether the
/// block ends there; it does so at each of them, so a run of comment lines cost its length
/// squared: 5,000 commented-out lines inside a test took 4 s, 10,000 after one 19 s.
///
/// A line is taken for a comment only if it still is in the parse: a line that starts with
/// `#` may be inside a triple-quoted string. The lines read as blank are the same length,
/// so every node spans the same bytes of `text` (and the same lines) as it would in the
/// text itself. The parse is kept when it has no error and none of those lines lies inside
/// a string: then, read from the start, the first such line begins outside any string in
/// the text itself too (the text before it is the same), so it is a comment there, which
/// Python reads as a blank line, and so on for the next. Lines found inside strings are
/// read as they are and the text parsed again; after `MASK_ROUNDS`, or on a parse error,
/// the text is parsed as it is.
///
/// Below `MASK_FROM_LINES` comment lines the text is parsed as it is: they cost little.
/// Either way a line that ends in a carriage return alone ends there (`lf_line_ends`).
pub(super) fn parse(parser: &mut tree_sitter::Parser, text: &[u8]) -> Option<tree_sitter::Tree> {
    parse_masked(parser, text, MASK_FROM_LINES)
}

/// Comment lines a Python file has before `parse` reads them as blank: a run of 64 lines of
/// 40 characters costs the scanner about 80,000 steps (a fraction of a millisecond).
const MASK_FROM_LINES: usize = 64;

/// `parse`, reading comment lines as blank from `from_lines` of them.
fn parse_masked(
    parser: &mut tree_sitter::Parser,
    text: &[u8],
    from_lines: usize,
) -> Option<tree_sitter::Tree> {
    let text = &lf_line_ends(text);
    let mut blank = comment_lines(text);
    if blank.len() < from_lines {
        blank.clear();
    }
    for _ in 0..MASK_ROUNDS {
        if blank.is_empty() {
            break;
        }
        let mut masked = text.to_vec();
        for line in &blank {
            masked[line.clone()].fill(b' ');
        }
        let tree = parser.parse(&masked, None)?;
        let root = tree.root_node();
        if root.has_error() {
            break;
        }
        let before = blank.len();
        blank.retain(|line| !inside_string(root, line.start));
        if blank.len() == before {
            return Some(tree);
        }
    }
    parser.parse(text, None)
}

/// `text` with each carriage return that ends a line alone (the old Macintosh line end, which
/// Python reads as one, and tree-sitter's grammar does not) made a line feed: the same
/// length, so every node spans the same bytes of `text`. Python reads a carriage return
/// inside a string as a line feed too.
fn lf_line_ends(text: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    let lone = |at: usize| text.get(at + 1) != Some(&b'\n');
    if !memchr::memchr_iter(b'\r', text).any(lone) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut lf = text.to_vec();
    for at in memchr::memchr_iter(b'\r', text).filter(|&at| lone(at)) {
        lf[at] = b'\n';
    }
    std::borrow::Cow::Owned(lf)
}

/// The byte ranges of the comments that fill a line of `text` (from the `#` to the line's
/// end, without `\r`), past its indentation; not on a line that a backslash continues.
fn comment_lines(text: &[u8]) -> Vec<std::ops::Range<usize>> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut continued = false;
    while start < text.len() {
        let end = memchr::memchr(b'\n', &text[start..]).map_or(text.len(), |at| start + at);
        let line = &text[start..end];
        let content = line.strip_suffix(b"\r").unwrap_or(line);
        let indent = content
            .iter()
            .take_while(|b| matches!(b, b' ' | b'\t' | b'\x0c'))
            .count();
        if !continued && content.get(indent) == Some(&b'#') {
            lines.push(start + indent..start + content.len());
        }
        continued = content.ends_with(b"\\");
        start = end + 1;
    }
    lines
}

/// Whether the byte at `at` lies inside a string literal of the tree under `root`.
fn inside_string(root: Node, at: usize) -> bool {
    let mut node = root.descendant_for_byte_range(at, at + 1);
    while let Some(n) = node {
        if n.kind() == "string" {
            return true;
        }
        node = n.parent();
    }
    false
}

pub(super) fn read(src: &Source, root: Node, names: &super::PythonTests) -> TestFile {
    let src = &Source {
        text: src.text,
        skip_aliases: skip_aliases(src, root),
    };
    let (mut tests, mut helpers) = (Vec::new(), Vec::new());
    let unbound = unbound_later(src, root);
    let module_skips = scope_skips(src, root);
    // (statement, enclosing classes, the skips they and the module apply)
    let mut stack: Vec<(Node, Vec<String>, Vec<Site>)> = Vec::new();
    push_statements(&mut stack, root, &[], &module_skips);
    while let Some((node, classes, skips)) = stack.pop() {
        let (def, decorators): (Option<Node>, Vec<Node>) = if node.kind() == "decorated_definition"
        {
            let mut cursor = node.walk();
            let decorators = node
                .named_children(&mut cursor)
                .filter(|n| n.kind() == "decorator")
                .collect();
            (node.child_by_field_name("definition"), decorators)
        } else {
            (Some(node), Vec::new())
        };
        let Some(def) = def else { continue };
        let name = def
            .child_by_field_name("name")
            .map(|n| src.text(n))
            .unwrap_or_default();
        match def.kind() {
            "class_definition" => {
                let mut inner = skips.clone();
                for d in &decorators {
                    inner.extend(decorator_skips(src, *d));
                }
                let Some(body) = def.child_by_field_name("body") else {
                    continue;
                };
                inner.extend(scope_skips(src, body));
                inner.extend(not_collected(src, def, &name, body, names));
                let mut path = classes.clone();
                path.push(name);
                push_statements(&mut stack, body, &path, &inner);
            }
            "function_definition" if names.is_test(&name) => {
                let mut qualified = classes.join("::");
                if !qualified.is_empty() {
                    qualified.push_str("::");
                }
                qualified.push_str(&name);
                let mut skips = skips;
                skips.extend(unbound.get(&def.id()).into_iter().flatten().cloned());
                tests.push(function(src, def, &decorators, qualified, &skips));
            }
            "function_definition" => helpers.push(function(src, def, &[], name, &[])),
            kind if COMPOUND.contains(&kind) => {
                // A test defined in the body of an `if` or a `try` may not be defined at all
                // (`if False:`): as good as skipped, named by the statement's first line.
                let under = matches!(kind, "if_statement" | "try_statement").then(|| {
                    let first = src.first_line(def);
                    Site {
                        line: line(def),
                        text: format!("defined only under: {first}"),
                        key: first,
                    }
                });
                let mut cursor = def.walk();
                let children: Vec<Node> = def.named_children(&mut cursor).collect();
                for child in children.into_iter().rev() {
                    let mut inner = skips.clone();
                    if child.kind() != "finally_clause" {
                        inner.extend(under.clone());
                    }
                    stack.push((child, classes.clone(), inner));
                }
            }
            _ => {}
        }
    }
    finish(tests, helpers)
}

/// What keeps each test function of the file from being collected though it is written: the
/// statements of its module or class, after it, that bind its name again (another `def
/// test_x`, `test_x = None`, `test_x = pytest.mark.skip(test_x)`, `del test_x`), that set
/// `test_x.__test__`, and a `__test__ = ...` of its module or class. pytest collects what the
/// name holds when the module has run. By the id of each function's node.
fn unbound_later(src: &Source, root: Node) -> HashMap<usize, Vec<Site>> {
    let mut out: HashMap<usize, Vec<Site>> = HashMap::new();
    // (a module or class body, the `__test__` settings of the scopes around it)
    let mut scopes: Vec<(Node, Vec<Site>)> = vec![(root, Vec::new())];
    while let Some((scope, around)) = scopes.pop() {
        // (name bound, where, the function defined there)
        let mut bindings: Vec<(String, usize, Site, Option<usize>)> = Vec::new();
        let mut disabled = around.clone();
        let mut classes = Vec::new();
        let mut statements = vec![scope];
        while let Some(node) = statements.pop() {
            let mut cursor = node.walk();
            let children: Vec<Node> = node.named_children(&mut cursor).collect();
            for child in children {
                let def = match child.kind() {
                    "decorated_definition" => child.child_by_field_name("definition"),
                    _ => Some(child),
                };
                let Some(def) = def else { continue };
                match def.kind() {
                    "function_definition" | "class_definition" => {
                        let name = def.child_by_field_name("name").map(|n| src.text(n));
                        // Named by its first line alone: what follows may change freely.
                        let first = src.first_line(def);
                        let site = Site {
                            line: line(def),
                            text: first.clone(),
                            key: first,
                        };
                        let id = (def.kind() == "function_definition").then(|| def.id());
                        bindings.extend(name.map(|n| (n, child.start_byte(), site, id)));
                        if def.kind() == "class_definition" {
                            classes.extend(def.child_by_field_name("body"));
                        }
                    }
                    "expression_statement" | "delete_statement" => {
                        for (name, test_attribute) in bound_names(src, child) {
                            let site = src.site(child);
                            if name == "__test__" && !test_attribute {
                                disabled.push(site);
                            } else {
                                bindings.push((name, child.start_byte(), site, None));
                            }
                        }
                    }
                    kind if COMPOUND.contains(&kind) => statements.push(child),
                    _ => {}
                }
            }
        }
        // Each name's bindings together: a module of thousands of tests is not read once for
        // each of them.
        let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, (name, ..)) in bindings.iter().enumerate() {
            by_name.entry(name.as_str()).or_default().push(i);
        }
        for (name, at, _, id) in &bindings {
            let Some(id) = id else { continue };
            let later = by_name[name.as_str()]
                .iter()
                .map(|&i| &bindings[i])
                .filter(|(_, after, _, _)| after > at)
                .map(|(_, _, site, _)| Site {
                    text: format!("unbound later: {}", site.text),
                    ..site.clone()
                });
            let sites: Vec<Site> = disabled.iter().cloned().chain(later).collect();
            if !sites.is_empty() {
                out.insert(*id, sites);
            }
        }
        scopes.extend(classes.into_iter().map(|body| (body, disabled.clone())));
    }
    out
}

/// The names an assignment or `del` statement binds or unbinds at its own level, each with
/// whether it is a `name.__test__ = ...` (which tells pytest whether `name` is a test).
fn bound_names(src: &Source, statement: Node) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut targets: Vec<Node> = Vec::new();
    let mut cursor = statement.walk();
    for child in statement.named_children(&mut cursor) {
        match child.kind() {
            // `a = b = c`: the right side of an assignment may be another assignment.
            "assignment" | "augmented_assignment" => {
                let mut node = Some(child);
                while let Some(n) =
                    node.filter(|n| matches!(n.kind(), "assignment" | "augmented_assignment"))
                {
                    targets.extend(n.child_by_field_name("left"));
                    node = n.child_by_field_name("right");
                }
            }
            _ if statement.kind() == "delete_statement" => targets.push(child),
            _ => {}
        }
    }
    while let Some(target) = targets.pop() {
        match target.kind() {
            "identifier" => out.push((src.text(target), false)),
            "pattern_list"
            | "tuple_pattern"
            | "list_pattern"
            | "expression_list"
            | "tuple"
            | "list"
            | "parenthesized_expression" => {
                let mut cursor = target.walk();
                targets.extend(target.named_children(&mut cursor));
            }
            "attribute" => {
                let attribute = target.child_by_field_name("attribute").map(|a| src.text(a));
                let object = target.child_by_field_name("object");
                if attribute.as_deref() == Some("__test__") {
                    if let Some(object) = object.filter(|o| o.kind() == "identifier") {
                        out.push((src.text(object), true));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Pushes the named children of `node` so that they pop in source order.
fn push_statements<'t>(
    stack: &mut Vec<(Node<'t>, Vec<String>, Vec<Site>)>,
    node: Node<'t>,
    classes: &[String],
    skips: &[Site],
) {
    let mut cursor = node.walk();
    let children: Vec<Node> = node.named_children(&mut cursor).collect();
    for child in children.into_iter().rev() {
        stack.push((child, classes.to_vec(), skips.to_vec()));
    }
}

/// The skips a module or class body applies to every test in it: `pytestmark = ...` with a
/// skip or xfail mark, and skipping calls at its own level (`pytest.skip(...,
/// allow_module_level=True)`, `np = pytest.importorskip("numpy")`, `raise SkipTest`).
fn scope_skips(src: &Source, scope: Node) -> Vec<Site> {
    let mut out = Vec::new();
    let mut stack = vec![scope];
    while let Some(node) = stack.pop() {
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            match child.kind() {
                "expression_statement" => {
                    for n in descendants(child) {
                        match n.kind() {
                            "assignment" => {
                                let target = n.child_by_field_name("left").map(|l| src.text(l));
                                if target.as_deref() == Some("pytestmark") {
                                    if let Some(right) = n.child_by_field_name("right") {
                                        out.extend(mark_sites(src, right));
                                    }
                                }
                            }
                            "call" if is_skip_call(src, &callee(src, n)) => {
                                out.push(skip_site(src, n))
                            }
                            _ => {}
                        }
                    }
                }
                "raise_statement" if raises_skip(src, child) => out.push(skip_site(src, child)),
                kind if COMPOUND.contains(&kind) => stack.push(child),
                _ => {}
            }
        }
    }
    out
}

/// The skip and xfail marks written anywhere in `node` (`pytest.mark.skip`, a mark in a
/// list, `pytest.param(..., marks=pytest.mark.xfail)`).
fn mark_sites(src: &Source, node: Node) -> Vec<Site> {
    descendants(node)
        .filter(|n| n.kind() == "attribute")
        .filter(|n| {
            let text = src.normal(*n);
            SKIP_MARKS
                .iter()
                .any(|m| text == *m || text.ends_with(&format!(".{m}")))
        })
        .map(|n| {
            // Named by the mark, told apart by its arguments too (`skipif(True)`).
            let call = n
                .parent()
                .filter(|p| p.kind() == "call" && p.child_by_field_name("function") == Some(n));
            Site {
                key: skip_key(src, call.unwrap_or(n)),
                ..src.site(n)
            }
        })
        .collect()
}

/// The skips one decorator applies: a pytest mark anywhere in it, or a unittest skip.
fn decorator_skips(src: &Source, decorator: Node) -> Vec<Site> {
    let Some(expr) = decorator.named_child(0) else {
        return Vec::new();
    };
    let target = if expr.kind() == "call" {
        expr.child_by_field_name("function").unwrap_or(expr)
    } else {
        expr
    };
    let text = src.normal(target);
    let last = text.rsplit('.').next().unwrap_or(&text);
    if UNITTEST_SKIPS.contains(&last) && (text.starts_with("unittest.") || !text.contains('.')) {
        return vec![skip_site(src, decorator)];
    }
    mark_sites(src, decorator)
        .into_iter()
        .map(|s| Site {
            line: s.line,
            text: src.shown(decorator),
            key: skip_key(src, decorator),
        })
        .collect()
}

/// A skip's site, told apart from others by what it says (`skip_key`).
fn skip_site(src: &Source, node: Node) -> Site {
    Site {
        key: skip_key(src, node),
        ..src.site(node)
    }
}

/// What a skip says, without what only explains it: rewording a reason skips nothing more,
/// but a condition made `True`, or `strict=False` added, does.
fn skip_key(src: &Source, node: Node) -> String {
    // `py.test` is pytest's old name for itself: moving off it changes no skip.
    src.tokens_without(node, |n| explains(src, n))
        .replace("py . test .", "pytest .")
}

/// Whether `node` only explains a skip: a `reason=` or `msg=` argument, the message of a
/// skip that has no condition (`pytest.skip("..")`, `pytest.xfail("..")`,
/// `self.skipTest("..")`, `@unittest.skip("..")`; not a mark's, whose first argument is its
/// condition), or the reason of `@unittest.skipIf(cond, "..")`.
fn explains(src: &Source, node: Node) -> bool {
    if node.kind() == "keyword_argument" {
        let name = node.child_by_field_name("name").map(|n| src.text(n));
        return matches!(name.as_deref(), Some("reason" | "msg"));
    }
    let Some(args) = node.parent().filter(|p| p.kind() == "argument_list") else {
        return false;
    };
    let Some(call) = args.parent().filter(|c| c.kind() == "call") else {
        return false;
    };
    let mut cursor = args.walk();
    let position = args
        .named_children(&mut cursor)
        .filter(|a| a.kind() != "keyword_argument" && !a.kind().contains("comment"))
        .position(|a| a == node);
    let name = callee(src, call);
    match name.rsplit('.').next().unwrap_or(&name) {
        "skip" | "xfail" | "skipTest" if !name.contains("mark.") => position.is_some(),
        "skipIf" | "skipUnless" => position == Some(1),
        _ => false,
    }
}

/// Why pytest does not collect the tests of a class, if it does not: a class with no base
/// (so not a `unittest.TestCase`) whose name `python_classes` does not match, or that
/// defines `__init__` (pytest warns and skips it). As good as a skip of each of its tests.
fn not_collected(
    src: &Source,
    class: Node,
    name: &str,
    body: Node,
    names: &super::PythonTests,
) -> Option<Site> {
    let bases = class
        .child_by_field_name("superclasses")
        .map(|b| src.normal(b))
        .unwrap_or_default();
    if !matches!(bases.as_str(), "" | "()" | "(object)") {
        return None;
    }
    let why = if !names.is_test_class(name) {
        format!("class {name} is not collected (python_classes)")
    } else {
        let mut cursor = body.walk();
        let init = body.named_children(&mut cursor).find(|s| {
            let def = match s.kind() {
                "decorated_definition" => s.child_by_field_name("definition"),
                _ => Some(*s),
            };
            def.is_some_and(|d| {
                d.kind() == "function_definition"
                    && d.child_by_field_name("name")
                        .map(|n| src.text(n))
                        .as_deref()
                        == Some("__init__")
            })
        })?;
        return Some(Site {
            line: line(init),
            text: format!("class {name} is not collected (it defines __init__)"),
            key: "not collected: __init__".to_string(),
        });
    };
    Some(Site {
        line: line(class),
        key: "not collected: class name".to_string(),
        text: why,
    })
}

/// The normalised text of a call's callee (`self.assertEqual`, `pytest.raises`).
fn callee(src: &Source, call: Node) -> String {
    call.child_by_field_name("function")
        .map(|f| src.normal(f))
        .unwrap_or_default()
}

fn is_skip_call(src: &Source, callee: &str) -> bool {
    SKIP_CALLS.contains(&callee)
        || callee.ends_with(".skipTest")
        || callee == "skipTest"
        || src.skip_aliases.iter().any(|a| a == callee)
}

/// The other names pytest's skipping calls go by in this module: `from pytest import skip
/// as later` (`later`), `from pytest import xfail` (`xfail`), `import pytest as pt`
/// (`pt.skip`, ...), at any level of the module.
fn skip_aliases(src: &Source, root: Node) -> Vec<String> {
    let mut aliases = Vec::new();
    for node in descendants(root) {
        match node.kind() {
            "import_from_statement" => {
                let module = node
                    .child_by_field_name("module_name")
                    .map(|m| src.normal(m))
                    .unwrap_or_default();
                if !matches!(module.as_str(), "pytest" | "_pytest.outcomes") {
                    continue;
                }
                let mut cursor = node.walk();
                for name in node.children_by_field_name("name", &mut cursor) {
                    let (imported, alias) = match name.kind() {
                        "aliased_import" => (
                            name.child_by_field_name("name").map(|n| src.normal(n)),
                            name.child_by_field_name("alias").map(|n| src.normal(n)),
                        ),
                        _ => (Some(src.normal(name)), None),
                    };
                    let Some(imported) = imported else { continue };
                    if SKIP_CALLS.contains(&format!("pytest.{imported}").as_str()) {
                        aliases.push(alias.unwrap_or(imported));
                    }
                }
            }
            "import_statement" => {
                let mut cursor = node.walk();
                for name in node.children_by_field_name("name", &mut cursor) {
                    if name.kind() != "aliased_import" {
                        continue;
                    }
                    let module = name.child_by_field_name("name").map(|n| src.normal(n));
                    let alias = name.child_by_field_name("alias").map(|n| src.normal(n));
                    if let (Some("pytest"), Some(alias)) = (module.as_deref(), alias) {
                        for call in SKIP_CALLS {
                            aliases.push(call.replacen("pytest", &alias, 1));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    aliases
}

/// `raise SkipTest(...)`, `raise unittest.SkipTest`, `raise pytest.skip.Exception`, pytest's
/// own outcomes raised by name (`raise Skipped(..)`, `XFailed`, `Exit`).
fn raises_skip(src: &Source, raise: Node) -> bool {
    let text = src.normal(raise);
    text.contains("SkipTest")
        || text.contains("skip.Exception")
        || text.contains("xfail.Exception")
        || text.contains("exit.Exception")
        || ["Skipped", "XFailed", "Exit"].iter().any(|name| {
            let raised = text.trim_start_matches("raise").trim_start();
            raised == *name
                || raised.starts_with(&format!("{name}("))
                || raised.starts_with(&format!("{name} ("))
                || raised.ends_with(&format!(".{name}"))
                || raised.contains(&format!(".{name}("))
                || raised.contains(&format!(".{name} ("))
        })
}

/// Whether `child` of `node` may not run, or may have its failure swallowed, when `node`
/// runs: an assertion moved there (`if False:`, `for _ in []:`, `try: .. except
/// AssertionError: pass`, `with suppress(AssertionError):`, `[self.assertTrue(x) for _ in
/// ()]`, `ok or self.fail()`) checks less than one the test always runs. The parts that
/// always run (conditions, what a loop iterates, a `with`'s context managers, `finally`, the
/// left of `and` and `or`) are not. Nested functions and lambdas are marked whole (below):
/// their body runs only if they are called.
fn may_skip(src: &Source, node: Node, child: Node) -> bool {
    let field_is = |name| node.child_by_field_name(name) == Some(child);
    match node.kind() {
        // A `with` whose context managers are all known never to swallow an exception
        // (`patch.dict(os.environ)`, `open(..)`) runs its body as the test does.
        "with_statement" if child.kind() != "with_clause" => !never_swallows(src, node),
        "if_statement" | "while_statement" => !field_is("condition"),
        "for_statement" => !field_is("left") && !field_is("right"),
        "match_statement" => field_is("body"),
        "try_statement" => child.kind() != "finally_clause",
        "with_statement" => child.kind() != "with_clause",
        "list_comprehension"
        | "set_comprehension"
        | "dictionary_comprehension"
        | "generator_expression" => field_is("body"),
        "conditional_expression" => node.named_child(1) != Some(child),
        "boolean_operator" => field_is("right"),
        _ => false,
    }
}

/// Context managers whose exit never suppresses an exception, by the last part or two of
/// their name (`mock.patch.dict`, `tempfile.TemporaryDirectory`): an assertion in their
/// body fails the test as one outside it does. Any other (`suppress`, `pytest.raises`,
/// `ExitStack`, the project's own) may swallow a failure.
const NEVER_SWALLOW: &[&str] = &[
    "patch",
    "patch.object",
    "patch.dict",
    "patch.multiple",
    "open",
    "TemporaryDirectory",
    "NamedTemporaryFile",
    "TestClient",
    "monkeypatch.context",
    "caplog.at_level",
    "capsys.disabled",
    "capfd.disabled",
    "pytest.warns",
    "warnings.catch_warnings",
    "self.subTest",
    "subtests.test",
    "nullcontext",
    "contextlib.chdir",
    "redirect_stdout",
    "redirect_stderr",
    "freeze_time",
    "override_settings",
    "self.settings",
];

/// Whether every context manager of the `with` statement `with` is one of
/// [`NEVER_SWALLOW`], called.
fn never_swallows(src: &Source, with: Node) -> bool {
    let Some(clause) = with.named_child(0).filter(|c| c.kind() == "with_clause") else {
        return false;
    };
    let mut cursor = clause.walk();
    let items: Vec<Node> = clause.named_children(&mut cursor).collect();
    !items.is_empty()
        && items.iter().all(|item| {
            let mut value = item.child_by_field_name("value").unwrap_or(*item);
            if value.kind() == "as_pattern" {
                value = value.named_child(0).unwrap_or(value);
            }
            let value = unparenthesized(value).unwrap_or(value);
            if value.kind() != "call" {
                return false;
            }
            let name = callee(src, value);
            NEVER_SWALLOW.iter().any(|safe| {
                name == *safe
                    || name
                        .strip_suffix(safe)
                        .is_some_and(|head| head.ends_with('.'))
            })
        })
}

/// The facts of one function: `decorators` and `inherited` skips (its class's and module's)
/// apply to it.
fn function(
    src: &Source,
    def: Node,
    decorators: &[Node],
    name: String,
    inherited: &[Site],
) -> Draft {
    let mut skips = inherited.to_vec();
    let mut tolerances = Vec::new();
    let mut given = false;
    let mut settings = false;
    for d in decorators {
        skips.extend(decorator_skips(src, *d));
        for n in descendants(*d).filter(|n| n.kind() == "call") {
            let name = callee(src, n);
            let last = name.rsplit('.').next().unwrap_or(&name);
            given |= last == "given";
            settings |= last == "settings";
            tolerances.extend(call_tolerances(src, n));
        }
    }
    // A hypothesis test without `@settings` runs with hypothesis' defaults: what a
    // `@settings(max_examples=1)` added later is compared with.
    if given && !settings {
        for (param, default, looser) in defaults("settings") {
            tolerances.push(Tolerance {
                line: line(def),
                key: format!("settings().{param}"),
                value: *default,
                looser: *looser,
                text: format!("{param} (hypothesis' default {default})"),
            });
        }
    }
    let mut assertions: Vec<(usize, Assertion)> = Vec::new();
    let mut returns: Vec<(usize, Site)> = Vec::new();
    let mut calls: Vec<(usize, Call)> = Vec::new();
    let body = def.child_by_field_name("body");
    // (node, inside a nested function or class, inside an assertion, the innermost statement
    // that may leave it unrun)
    let mut stack: Vec<(Node, bool, bool, Option<Node>)> =
        body.into_iter().map(|b| (b, false, false, None)).collect();
    while let Some((node, nested, asserted, under)) = stack.pop() {
        let mut inner_nested = nested;
        let mut inner_asserted = asserted;
        let mut inner_under = under;
        let only_under = |a: Assertion| match under {
            Some(statement) => super::conditional(src, a, statement),
            None => a,
        };
        match node.kind() {
            "function_definition" | "lambda" => {
                inner_nested = true;
                inner_under = Some(node);
            }
            // A class body runs where it stands; its methods are functions (above).
            "class_definition" => inner_nested = true,
            "assert_statement" => {
                inner_asserted = true;
                let expr = first_named(node);
                if let Some(strength) = expr.and_then(|e| strength(src, e)) {
                    assertions.push((
                        node.start_byte(),
                        only_under(assertion(src, node, strength)),
                    ));
                }
            }
            "call" => {
                let name = callee(src, node);
                if is_skip_call(src, &name) {
                    skips.push(skip_site(src, node));
                } else if name.ends_with("applymarker") || name.ends_with("add_marker") {
                    // `request.applymarker(pytest.mark.xfail)`: a mark added as the test runs.
                    skips.extend(mark_sites(src, node));
                } else {
                    let found = assertion_call(src, node, &name);
                    if found.is_empty() {
                        // A function or method of the file (`check(..)`, `self.check(..)`)
                        // may be a helper that asserts: named by its last part.
                        let bare = name.rsplit('.').next().unwrap_or(&name);
                        if !bare.is_empty() && !bare.contains(['(', '[', ')', ']']) {
                            calls.push((
                                node.start_byte(),
                                super::helper_call(src, node, bare.to_string(), under),
                            ));
                        }
                    } else {
                        inner_asserted = true;
                    }
                    assertions.extend(
                        found
                            .into_iter()
                            .map(|a| (node.start_byte(), only_under(a))),
                    );
                }
                tolerances.extend(call_tolerances(src, node));
            }
            "raise_statement" if raises_skip(src, node) => skips.push(skip_site(src, node)),
            "return_statement" if !nested => returns.push((node.start_byte(), src.site(node))),
            "comparison_operator" if asserted => tolerances.extend(bound(src, node)),
            _ => {}
        }
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children.into_iter().rev() {
            let under = match may_skip(src, node, child) {
                true => Some(node),
                false => inner_under,
            };
            stack.push((child, inner_nested, inner_asserted, under));
        }
    }
    Draft {
        function: TestFunction {
            name,
            line: line(def),
            body: body.map(|b| src.tokens(b)).unwrap_or_default(),
            assertions: assertions.iter().map(|(_, a)| a.clone()).collect(),
            calls: calls.iter().map(|(_, c)| c.clone()).collect(),
            skips,
            early_returns: Vec::new(),
            tolerances,
        },
        assertion_at: assertions.iter().map(|(at, _)| *at).collect(),
        returns,
        call_at: calls.iter().map(|(at, _)| *at).collect(),
    }
}

fn assertion(src: &Source, node: Node, strength: Strength) -> Assertion {
    Assertion {
        line: line(node),
        text: src.shown(node),
        strength,
    }
}

/// How strong an asserted expression is; `None` when it cannot be false (a truthy literal,
/// `x == x`).
fn strength(src: &Source, node: Node) -> Option<Strength> {
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

/// `node` without the brackets around it; `None` for empty brackets.
fn unparenthesized(mut node: Node) -> Option<Node> {
    while node.kind() == "parenthesized_expression" {
        node = first_named(node)?;
    }
    Some(node)
}

/// The first named child of `node` that is not a comment (one may stand first in brackets:
/// `(  # why` on the line before the expression).
fn first_named(node: Node) -> Option<Node> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .find(|child| child.kind() != "comment")
}

/// The positional arguments and the keyword arguments (name, value) of a call.
fn arguments<'t>(src: &Source, call: Node<'t>) -> (Vec<Node<'t>>, Vec<(String, Node<'t>)>) {
    let mut positional = Vec::new();
    let mut keywords = Vec::new();
    let Some(args) = call.child_by_field_name("arguments") else {
        return (positional, keywords);
    };
    if args.kind() == "generator_expression" {
        positional.push(args);
        return (positional, keywords);
    }
    let mut cursor = args.walk();
    for a in args.named_children(&mut cursor) {
        match a.kind() {
            "keyword_argument" => {
                if let (Some(k), Some(v)) = (
                    a.child_by_field_name("name"),
                    a.child_by_field_name("value"),
                ) {
                    keywords.push((src.text(k), v));
                }
            }
            "comment" => {}
            _ => positional.push(a),
        }
    }
    (positional, keywords)
}

/// The assertions a call makes: unittest's `self.assert*`, pytest's `raises`/`warns`, mock's
/// `assert_called_*`, `numpy.testing.assert_*`, `pytest.fail`; a `match=` on `raises` is an
/// assertion of its own.
fn assertion_call(src: &Source, call: Node, name: &str) -> Vec<Assertion> {
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
                });
            }
        }
    }
    out
}

/// Library defaults of tolerance arguments: an argument left out counts with its default.
fn defaults(name: &str) -> &'static [(&'static str, f64, Looser)] {
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
fn call_tolerances(src: &Source, call: Node) -> Vec<Tolerance> {
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
    if let (true, Some(p)) = (seconds, positional.first()) {
        if let Some(value) = literal(*p) {
            out.push(Tolerance {
                line: line(call),
                key: last.clone(),
                value,
                looser: Looser::Larger,
                text: src.shown(call),
            });
        }
    }
    let bound = match last.as_str() {
        "assertLess" | "assertLessEqual" => Some(("<", Looser::Larger)),
        "assertGreater" | "assertGreaterEqual" => Some((">", Looser::Smaller)),
        _ => None,
    };
    if let (Some((direction, looser)), Some(p)) = (bound, positional.get(1)) {
        if let Some(value) = literal(*p) {
            out.push(Tolerance {
                line: line(call),
                key: format!("{first} {direction}"),
                value,
                looser,
                text: src.shown(call),
            });
        }
    }
    out
}

/// The numeric bound of an asserted comparison (`elapsed < 0.5`, `0.5 > elapsed`).
fn bound(src: &Source, comparison: Node) -> Option<Tolerance> {
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

#[cfg(test)]
mod tests {
    use crate::evidence::test_source::{Strength, TestFile, parse};

    fn read(text: &str) -> TestFile {
        parse("tests/test_x.py", text.as_bytes()).unwrap()
    }

    fn strengths(file: &TestFile, name: &str) -> Vec<Strength> {
        let f = file.functions.iter().find(|f| f.name == name).unwrap();
        f.assertions.iter().map(|a| a.strength).collect()
    }

    /// The text parsed as it is, without reading comment lines as blank.
    fn read_unmasked(text: &str) -> TestFile {
        read_masked_from(text, usize::MAX)
    }

    /// The text read with its comment lines read as blank, however few.
    fn read_masked(text: &str) -> TestFile {
        read_masked_from(text, 1)
    }

    fn read_masked_from(text: &str, from_lines: usize) -> TestFile {
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&tree_sitter_python::LANGUAGE.into())
            .unwrap();
        let tree = super::parse_masked(&mut parser, text.as_bytes(), from_lines).unwrap();
        let src = crate::evidence::test_source::Source {
            text: text.as_bytes(),
            skip_aliases: Vec::new(),
        };
        super::read(
            &src,
            tree.root_node(),
            &crate::evidence::test_source::PythonTests::default(),
        )
    }

    fn assertion_texts(file: &TestFile, name: &str) -> Vec<(u64, String)> {
        let f = file.functions.iter().find(|f| f.name == name).unwrap();
        f.assertions
            .iter()
            .map(|a| (a.line, a.text.clone()))
            .collect()
    }

    /// 20,000 commented-out lines between two assertions: read as blank lines, they cost
    /// their length, not its square (parsed as they are, this takes minutes).
    #[test]
    fn a_long_run_of_comment_lines_is_read_in_one_pass() {
        let text = format!(
            "def test_a(x, y):\n    assert x == 1\n{}    assert y == 2\n\n\ndef test_b():\n    assert f() == 3\n",
            "    # assert x == 2  (the old expectation)\n".repeat(20_000)
        );
        let file = read(&text);
        assert_eq!(
            assertion_texts(&file, "test_a"),
            [
                (2, "assert x == 1".to_string()),
                (20_003, "assert y == 2".to_string())
            ]
        );
        assert_eq!(
            assertion_texts(&file, "test_b"),
            [(20_007, "assert f() == 3".to_string())]
        );
    }

    /// Comments everywhere a test file has them: the file reads the same as when parsed as
    /// it is, comments and all.
    #[test]
    fn comment_lines_read_as_blank_change_nothing_read() {
        let text = "# module comment\nimport pytest\n\n#: marks\npytestmark = pytest.mark.slow\n\n\nclass TestA:\n    # a class comment\n    def test_one(self, x):\n        # before\n        assert x == 1  # after code\n        #\n        assert f(\n            # inside a call\n            x,\n        ) == 2\n\n    # between methods\n\n    @pytest.mark.skip  # why\n    def test_two(self):\n        return\n        # commented out\n        assert g() == 3\n# dedented comment\n\ndef test_three():\r\n    # a CRLF line\r\n    assert h() == 4\r\n\tx = 1\n";
        assert_eq!(read_masked(text), read_unmasked(text));
        let file = read_masked(text);
        assert_eq!(
            file.functions
                .iter()
                .map(|f| f.name.as_str())
                .collect::<Vec<_>>(),
            ["TestA::test_one", "TestA::test_two", "test_three"]
        );
    }

    /// A line that starts with `#` inside a triple-quoted string is the string's text, also
    /// when it holds quotes or ends the string.
    #[test]
    fn lines_like_comments_inside_strings_are_read_as_written() {
        let text = "def test_report(out):\n    assert out == \"\"\"\n# header\n# \"quoted\" 'too'\n\"\"\"\n    assert out != f\"\"\"{\n# a comment in a field\nout}\"\"\"\n\n\ndef test_closing():\n    s = \"\"\"text\n# closes the string \"\"\"; assert s == 1\n    assert t == 2\n";
        assert_eq!(read_masked(text), read_unmasked(text));
        let file = read_masked(text);
        let report = assertion_texts(&file, "test_report");
        assert_eq!(report.len(), 2, "{report:?}");
        assert!(report[0].1.contains("# header"), "{report:?}");
        assert!(report[0].1.contains("\"quoted\""), "{report:?}");
        assert_eq!(
            assertion_texts(&file, "test_closing"),
            [
                (13, "assert s == 1".to_string()),
                (14, "assert t == 2".to_string())
            ]
        );

        // Read as blank, the line that ends the string would leave it open to the quotes in
        // the comment below, with the first assertion inside it; and that parses.
        let text = "def test_hidden(s, t):\n    s = \"\"\"\n# ends here \"\"\"\n    assert s == 1  # \"\"\"\n    assert t == 2\n";
        assert_eq!(read_masked(text), read_unmasked(text));
        assert_eq!(
            assertion_texts(&read_masked(text), "test_hidden"),
            [
                (4, "assert s == 1".to_string()),
                (5, "assert t == 2".to_string())
            ]
        );
    }

    /// Python reads a carriage return alone as a line end (the old Macintosh one): a file
    /// written so reads as the same file with line feeds, lines and all, masked or not
    /// (tree-sitter's grammar read it as one line, and found no test in it).
    #[test]
    fn carriage_returns_alone_end_lines() {
        let lf = "# header\ndef test_a(x):\n    assert x == 1\n    s = \"\"\"a\nb\"\"\"\n\n\ndef test_b():\r\n    assert f() == 2\r\n";
        let cr = lf
            .replace("\r\n", "\u{1}")
            .replace('\n', "\r")
            .replace('\u{1}', "\r\n");
        assert_eq!(cr.matches('\r').count(), 9);
        let expected = [(3, "assert x == 1".to_string())];
        for file in [read(&cr), read_masked(&cr), read_unmasked(&cr)] {
            assert_eq!(
                file.functions
                    .iter()
                    .map(|f| (f.name.as_str(), f.line))
                    .collect::<Vec<_>>(),
                [("test_a", 2), ("test_b", 8)]
            );
            assert_eq!(assertion_texts(&file, "test_a"), expected);
            assert_eq!(
                assertion_texts(&file, "test_b"),
                [(9, "assert f() == 2".to_string())]
            );
        }
    }

    /// PEP 263 declarations on the first two lines, as Python finds them: those of encodings
    /// that read unlike UTF-8 are named, with their line; the others are not.
    #[test]
    fn source_encodings_read_unlike_utf8_are_named() {
        use super::unread_encoding;
        let named = |text: &str| unread_encoding(text.as_bytes());
        assert_eq!(named("# coding: utf-7\n"), Some(("utf-7".into(), 1)));
        assert_eq!(
            named("#!/usr/bin/env python\n# -*- coding: Shift_JIS -*-\n"),
            Some(("shift_jis".into(), 2))
        );
        assert_eq!(
            named("#!/usr/bin/env python\r\n# vim: set fileencoding=unicode_escape :\r\n"),
            Some(("unicode_escape".into(), 2))
        );
        assert_eq!(
            named("#!python\r# coding=euc-jp\r"),
            Some(("euc-jp".into(), 2))
        );
        assert_eq!(
            named("  \x0c# coding: utf_16\n"),
            Some(("utf_16".into(), 1))
        );
        for read_alike in [
            "# -*- coding: utf-8 -*-\n",
            "# coding: UTF8\n",
            "# coding: utf-8-sig\n",
            "# coding: latin-1\n",
            "# coding: iso8859_15\n",
            "# coding: cp1252\n",
            "# coding: ascii\n",
            "import os\n\n# coding: utf-7\n",
            "x = 1  # coding: utf-7\n",
            "def test_a():\n    assert True\n",
            "",
        ] {
            assert_eq!(named(read_alike), None, "{read_alike:?}");
        }
    }

    /// Brackets and comments do not make a comparison that cannot fail into one that can.
    #[test]
    fn assertions_of_text_or_membership_that_cannot_fail_are_none() {
        let file = read(concat!(
            "def test_a(x):\n",
            "    assert f\"{x == 1}\"\n",
            "    assert f\"x: {x}\"\n",
            "    assert x in (1, x)\n",
            "    assert x in [x]\n",
            "    assert f\"{x}\"\n",
            "    assert x in (1, 2)\n",
            "    assert x not in (1, x)\n",
        ));
        assert_eq!(
            assertion_texts(&file, "test_a"),
            [
                (2, "assert f\"{x == 1}\"".to_string()),
                (6, "assert f\"{x}\"".to_string()),
                (7, "assert x in (1, 2)".to_string()),
                (8, "assert x not in (1, x)".to_string()),
            ]
        );
        assert_eq!(
            strengths(&file, "test_a"),
            [
                Strength::Weak,
                Strength::Weak,
                Strength::Strong,
                Strength::Strong
            ]
        );
    }

    #[test]
    fn comparisons_that_cannot_fail_in_brackets_are_not_assertions() {
        let file = read(
            "def test_a(x):\n    assert 1 == (1)\n    assert x == (x)\n    assert ((x)) == x\n    assert (  # c\n        1, 2) == (1, 2)\n    assert x == (  # the same\n        x\n    )\n    assert x == (y)\n",
        );
        assert_eq!(
            assertion_texts(&file, "test_a"),
            [(10, "assert x == (y)".to_string())]
        );
    }

    /// In brackets a comment may stand before the expression: the expression is graded, and
    /// a list of nothing but a comment is empty (a deliberate failure, like `assert []`).
    #[test]
    fn a_comment_first_in_brackets_is_not_the_assertion() {
        let file = read(
            "def test_a(x):\n    assert (  # the total\n        x == 1\n    )\n    assert [  # nothing\n    ]\n    assert (  # anything\n        x\n    )\n",
        );
        assert_eq!(
            strengths(&file, "test_a"),
            [Strength::Strong, Strength::Strong, Strength::Weak]
        );
    }

    #[test]
    fn test_functions_and_methods_are_found_with_their_classes() {
        let file = read(
            "import unittest\n\ndef helper():\n    assert ok()\n\ndef test_a():\n    assert 1 + 1 == 2\n\nclass TestB(unittest.TestCase):\n    def setUp(self):\n        pass\n\n    def test_c(self):\n        self.assertEqual(f(), 3)\n\n    class TestInner:\n        def test_d(self):\n            pass\n\nif True:\n    def test_e():\n        def test_nested():\n            pass\n",
        );
        let names: Vec<(&str, u64)> = file
            .functions
            .iter()
            .map(|f| (f.name.as_str(), f.line))
            .collect();
        assert_eq!(
            names,
            [
                ("test_a", 6),
                ("TestB::test_c", 13),
                ("TestB::TestInner::test_d", 17),
                ("test_e", 21),
            ]
        );
        assert_eq!(file.helper_assertions, ["assert ok()"]);
    }

    #[test]
    fn assertions_are_graded() {
        let file = read(
            "def test_a(x):\n    assert {a, b} == {a}\n    assert 1 == 1\n    assert x == 1, 'msg'\n    assert x\n    assert x is not None\n    assert x is None\n    assert True\n    assert (1, 'always true')\n    assert x == x\n    assert not x\n    assert False\n    assert all(v > 0 for v in x)\n    assert isinstance(x, int)\n    assert x == 1 or True\n",
        );
        use Strength::*;
        assert_eq!(
            strengths(&file, "test_a"),
            [
                Strong, Strong, Weak, Weak, Strong, Weak, Strong, Strong, Weak
            ]
        );
    }

    #[test]
    fn assertion_calls_are_graded() {
        let file = read(
            "class T:\n    def test_a(self):\n        self.assertEqual(a, b)\n        self.assertTrue(a)\n        self.assertTrue(a == b)\n        self.assertTrue(True)\n        self.assertIsNotNone(a)\n        self.assertEqual(a, a)\n        m.assert_called_once_with(1)\n        m.assert_called()\n        np.testing.assert_allclose(a, b)\n        with pytest.raises(ValueError, match='bad'):\n            f()\n        with pytest.raises(Exception):\n            f()\n        self.fail('no')\n        helper(a)\n",
        );
        use Strength::*;
        assert_eq!(
            strengths(&file, "T::test_a"),
            [
                Strong, Weak, Strong, Weak, Strong, Weak, Strong, Strong, Strong, Weak, Strong
            ]
        );
    }

    #[test]
    fn skips_through_aliases_run_time_marks_raised_outcomes_and_exit() {
        let file = read(concat!(
            "import pytest as pt\n",                                        // 1
            "from pytest import skip as later, xfail\n",                    // 2
            "from _pytest.outcomes import Skipped\n",                       // 3
            "\n",                                                           // 4
            "def test_alias():\n",                                          // 5
            "    later('slow')\n",                                          // 6
            "def test_imported():\n",                                       // 7
            "    xfail('flaky')\n",                                         // 8
            "def test_module_alias():\n",                                   // 9
            "    pt.skip('x')\n",                                           // 10
            "def test_marker(request):\n",                                  // 11
            "    request.applymarker(pytest.mark.xfail(reason='later'))\n", // 12
            "def test_node_marker(request):\n",                             // 13
            "    request.node.add_marker(pytest.mark.skip)\n",              // 14
            "def test_raised():\n",                                         // 15
            "    raise Skipped('later')\n",                                 // 16
            "def test_exit():\n",                                           // 17
            "    pytest.exit('done', returncode=0)\n",                      // 18
            "def test_plain():\n",                                          // 19
            "    skip_it('x')\n",                                           // 20
            "    request.applymarker(pytest.mark.slow)\n",                  // 21
            "    raise SkippedThing()\n",                                   // 22
        ));
        let skips: Vec<(&str, Vec<u64>)> = file
            .functions
            .iter()
            .map(|f| (f.name.as_str(), f.skips.iter().map(|s| s.line).collect()))
            .collect();
        assert_eq!(
            skips,
            [
                ("test_alias", vec![6]),
                ("test_imported", vec![8]),
                ("test_module_alias", vec![10]),
                ("test_marker", vec![12]),
                ("test_node_marker", vec![14]),
                ("test_raised", vec![16]),
                ("test_exit", vec![18]),
                ("test_plain", vec![]),
            ]
        );
    }

    #[test]
    fn tests_of_a_class_pytest_does_not_collect_are_skipped() {
        let file = read(concat!(
            "class TestKept:\n",                    // 1
            "    def test_a(self): pass\n",         // 2
            "class CalcChecks:\n",                  // 3
            "    def test_b(self): pass\n",         // 4
            "class TestInit:\n",                    // 5
            "    def __init__(self):\n",            // 6
            "        self.x = 1\n",                 // 7
            "    def test_c(self): pass\n",         // 8
            "class CalcCase(unittest.TestCase):\n", // 9
            "    def __init__(self, *a):\n",        // 10
            "        super().__init__(*a)\n",       // 11
            "    def test_d(self): pass\n",         // 12
        ));
        let skips: Vec<(&str, Vec<(u64, String)>)> = file
            .functions
            .iter()
            .map(|f| {
                (
                    f.name.as_str(),
                    f.skips.iter().map(|s| (s.line, s.text.clone())).collect(),
                )
            })
            .collect();
        assert_eq!(
            skips,
            [
                ("TestKept::test_a", vec![]),
                (
                    "CalcChecks::test_b",
                    vec![(
                        3,
                        "class CalcChecks is not collected (python_classes)".to_string()
                    )]
                ),
                (
                    "TestInit::test_c",
                    vec![(
                        6,
                        "class TestInit is not collected (it defines __init__)".to_string()
                    )]
                ),
                ("CalcCase::test_d", vec![]),
            ]
        );
        // pytest's `python_classes` decides: `*Checks` collects CalcChecks.
        let custom = crate::evidence::test_source::PythonTests::default()
            .with_classes(&["Test".to_string(), "*Checks".to_string()]);
        let file = crate::evidence::test_source::parse_with(
            "tests/test_x.py",
            b"class CalcChecks:\n    def test_b(self): pass\n",
            &custom,
        )
        .unwrap();
        assert!(file.functions[0].skips.is_empty());
    }

    #[test]
    fn skips_come_from_decorators_classes_modules_and_calls() {
        let file = read(
            "import pytest\npytestmark = [pytest.mark.slow, pytest.mark.skipif(X, reason='y')]\n\n@pytest.mark.skip(reason='x')\ndef test_a():\n    pass\n\n@pytest.mark.parametrize('v', [1, pytest.param(2, marks=pytest.mark.xfail)])\ndef test_b(v):\n    pass\n\n@unittest.skip('later')\nclass TestC:\n    pytestmark = pytest.mark.xfail\n    def test_d(self):\n        self.skipTest('no')\n\n@pytest.mark.parametrize('v', [1])\ndef test_e(v):\n    pytest.importorskip('numpy')\n",
        );
        let skips: Vec<(&str, Vec<u64>)> = file
            .functions
            .iter()
            .map(|f| (f.name.as_str(), f.skips.iter().map(|s| s.line).collect()))
            .collect();
        assert_eq!(
            skips,
            [
                ("test_a", vec![2, 4]),
                ("test_b", vec![2, 8]),
                ("TestC::test_d", vec![2, 12, 14, 16]),
                ("test_e", vec![2, 20]),
            ]
        );
    }

    /// Which assertions stand where they may not run, and under what: bodies of statements
    /// and of nested functions, the parts of expressions that may be skipped; not the parts
    /// that always run (conditions, iterables, context managers, `finally`, the left of
    /// `or`).
    #[test]
    fn assertions_that_may_not_run_are_named_by_what_they_stand_under() {
        let file = read(concat!(
            "def test_a(x):\n",
            "    assert x == 1\n",
            "    if self.assertTrue(x):\n",
            "        assert x == 2\n",
            "    for y in check(x):\n",
            "        assert y == 3\n",
            "    with pytest.raises(ValueError):\n",
            "        assert x == 4\n",
            "    try:\n",
            "        assert x == 5\n",
            "    finally:\n",
            "        assert x == 6\n",
            "    def later():\n",
            "        assert x == 7\n",
            "    f = lambda: self.assertEqual(x, 8)\n",
            "    [self.assertEqual(x, 9) for _ in ()]\n",
            "    self.assertTrue(x) or self.assertEqual(x, 10)\n",
            "    self.assertEqual(x, 11) if x else None\n",
            "    class Inline:\n",
            "        assert x == 12\n",
        ));
        let under: Vec<(u64, String)> = assertion_texts(&file, "test_a")
            .into_iter()
            .map(|(line, text)| {
                let under = text.split_once(" [only under: ").map(|(_, u)| u);
                let under = under.map(|u| u.strip_suffix(']').unwrap());
                (line, under.unwrap_or("").to_string())
            })
            .collect();
        assert_eq!(
            under,
            [
                (2, ""),
                (3, ""),
                (4, "if self.assertTrue(x):"),
                (6, "for y in check(x):"),
                (7, ""),
                (8, "with pytest.raises(ValueError):"),
                (10, "try:"),
                (12, ""),
                (14, "def later():"),
                (15, "lambda: self.assertEqual(x, 8)"),
                (16, "[self.assertEqual(x, 9) for _ in ()]"),
                (17, ""),
                (17, "self.assertTrue(x) or self.assertEqual(x, 10)"),
                (18, "self.assertEqual(x, 11) if x else None"),
                (20, ""),
            ]
            .map(|(line, under)| (line, under.to_string()))
        );
        let weak = strengths(&file, "test_a");
        assert_eq!(weak[2], Strength::Weak);
    }

    /// A `with` whose context managers never swallow an exception (`patch.dict`, `open`)
    /// runs its body as the test does; any other (`suppress`, `pytest.raises`, the
    /// project's own, one named but not called) may swallow the failure. Found on
    /// OpenHands' history, where wrapping a test's body in `with patch.dict(os.environ):`
    /// read as loosening each assertion.
    #[test]
    fn a_with_that_never_swallows_leaves_its_assertions_unconditional() {
        let file = read(concat!(
            "def test_a(x):\n",
            "    with patch.dict(os.environ, {}, clear=True), open('f') as f:\n",
            "        assert x == 1\n",
            "    with mock.patch.object(A, 'b') as b, tempfile.TemporaryDirectory() as d:\n",
            "        assert x == 2\n",
            "    with contextlib.suppress(AssertionError):\n",
            "        assert x == 3\n",
            "    with patch.dict(os.environ), swallow():\n",
            "        assert x == 4\n",
            "    with patch:\n",
            "        assert x == 5\n",
            "    with dispatch():\n",
            "        assert x == 6\n",
        ));
        let under: Vec<(u64, bool)> = assertion_texts(&file, "test_a")
            .into_iter()
            .map(|(line, text)| (line, text.contains(" [only under: ")))
            .collect();
        assert_eq!(
            under,
            [
                (3, false),
                (5, false),
                (7, true),
                (9, true),
                (11, true),
                (13, true)
            ]
        );
    }

    /// A test defined in the body of an `if` or a `try` (not its `finally`) may not be
    /// defined at all: as good as skipped. One in a `with` block always is.
    #[test]
    fn tests_defined_under_a_condition_are_as_good_as_skipped() {
        let file = read(concat!(
            "if False:\n",
            "    def test_a():\n",
            "        assert 1\n",
            "else:\n",
            "    class TestB:\n",
            "        def test_c(self):\n",
            "            assert 1\n",
            "try:\n",
            "    import numpy\n",
            "    def test_d():\n",
            "        assert 1\n",
            "finally:\n",
            "    def test_e():\n",
            "        assert 1\n",
            "with context():\n",
            "    def test_f():\n",
            "        assert 1\n",
        ));
        let skips = crate::evidence::test_source::skip_sites(&file);
        let under_if = vec![(1, "defined only under: if False:")];
        assert_eq!(
            skips,
            [
                ("test_a", under_if.clone()),
                ("TestB::test_c", under_if),
                ("test_d", vec![(8, "defined only under: try:")]),
                ("test_e", vec![]),
                ("test_f", vec![]),
            ]
        );
    }

    /// A skip is told apart from another by all it says (not by its text cut short, and not
    /// by how it is laid out), except what only explains it: its reason or message.
    #[test]
    fn skips_are_keyed_by_what_they_say() {
        let key = |text: &str| read(text).functions[0].skips[0].key.clone();
        let decorated = |skip: &str| format!("{skip}\ndef test_a():\n    pass\n");
        let called = |skip: &str| format!("def test_a():\n    {skip}\n");
        let long = "x".repeat(200);
        let same = [
            // reformatted
            (
                decorated("@pytest.mark.skipif(sys.platform == 'win32', reason='r')"),
                decorated("@pytest.mark.skipif(\n    sys.platform=='win32',\n    reason='r',\n)"),
            ),
            // a reason or message reworded
            (
                decorated("@pytest.mark.skipif(X, reason='posix only')"),
                decorated("@pytest.mark.skipif(X, reason='needs POSIX paths')"),
            ),
            (called("pytest.skip('a')"), called("pytest.skip(msg='b')")),
            (called("self.skipTest('a')"), called("self.skipTest('b')")),
            (
                decorated("@unittest.skipIf(X, 'a')"),
                decorated("@unittest.skipIf(X, 'b')"),
            ),
            (
                decorated("@unittest.skip('a')"),
                decorated("@unittest.skip('b')"),
            ),
            // pytest's old name for itself
            (
                decorated("@py.test.mark.xfail(reason='a')"),
                decorated("@pytest.mark.xfail(reason='a')"),
            ),
        ];
        for (a, b) in &same {
            assert_eq!(key(a), key(b), "{a} / {b}");
        }
        let other = [
            // a condition changed, also past the part of the text shown
            (
                decorated("@pytest.mark.skipif(sys.platform == 'win32', reason='r')"),
                decorated("@pytest.mark.skipif(True, reason='r')"),
            ),
            (
                decorated(&format!("@pytest.mark.skipif('{long}' == 'a')")),
                decorated(&format!("@pytest.mark.skipif('{long}' == 'b')")),
            ),
            // a mark's first argument is its condition, not a message
            (
                decorated("@pytest.mark.xfail('sys.platform == \"win32\"')"),
                decorated("@pytest.mark.xfail('True')"),
            ),
            (
                decorated("@pytest.mark.xfail(reason='r')"),
                decorated("@pytest.mark.xfail(reason='r', strict=False)"),
            ),
            (
                decorated("@unittest.skipIf(X, 'a')"),
                decorated("@unittest.skipIf(True, 'a')"),
            ),
            (
                called("pytest.importorskip('numpy')"),
                called("pytest.importorskip('numpy', minversion='99')"),
            ),
        ];
        for (a, b) in &other {
            assert_ne!(key(a), key(b), "{a} / {b}");
        }
        // pytestmark's marks are shown by the mark, and told apart by its arguments.
        let marked = |cond: &str| {
            format!("pytestmark = pytest.mark.skipif({cond})\n\ndef test_a():\n    pass\n")
        };
        assert_eq!(
            read(&marked("X")).functions[0].skips[0].text,
            "pytest.mark.skipif"
        );
        assert_ne!(key(&marked("X")), key(&marked("True")));
    }

    /// A test whose name the module or class binds again after it is not what pytest
    /// collects: as good as skipped. So is every test of a module or class that sets
    /// `__test__`.
    #[test]
    fn tests_unbound_after_their_definition_are_as_good_as_skipped() {
        let file = read(concat!(
            "def test_a():\n",
            "    assert 1\n",
            "def test_b():\n",
            "    assert 1\n",
            "def test_c():\n",
            "    assert 1\n",
            "def test_d():\n",
            "    assert 1\n",
            "def test_e():\n",
            "    assert 1\n",
            "test_a = None\n",
            "del test_b\n",
            "test_c.__test__ = False\n",
            "def test_d():\n",
            "    pass\n",
            "if True:\n",
            "    x, test_e = 1, pytest.mark.skip(test_e)\n",
            "class TestF:\n",
            "    __test__ = False\n",
            "    def test_g(self):\n",
            "        assert 1\n",
            "test_h = test_i = 1\n",
            "def test_h():\n",
            "    assert 1\n",
        ));
        assert_eq!(
            crate::evidence::test_source::skip_sites(&file),
            [
                ("test_a", vec![(11, "unbound later: test_a = None")]),
                ("test_b", vec![(12, "unbound later: del test_b")]),
                (
                    "test_c",
                    vec![(13, "unbound later: test_c.__test__ = False")]
                ),
                ("test_d", vec![(14, "unbound later: def test_d():")]),
                (
                    "test_e",
                    vec![(17, "unbound later: x, test_e = 1, pytest.mark.skip(test_e)")]
                ),
                ("test_d", vec![]),
                ("TestF::test_g", vec![(19, "__test__ = False")]),
                ("test_h", vec![]),
            ]
        );
    }

    #[test]
    fn a_return_before_an_assertion_is_early() {
        let file = read(
            "def test_a(x):\n    if x:\n        return\n    def inner():\n        return 1\n    assert inner() == 1\n    return\n\ndef test_b():\n    return\n",
        );
        let early: Vec<Vec<u64>> = file
            .functions
            .iter()
            .map(|f| f.early_returns.iter().map(|s| s.line).collect())
            .collect();
        assert_eq!(early, [vec![3], vec![]]);
    }

    #[test]
    fn tolerances_with_their_defaults() {
        let file = read(
            "def test_a(x):\n    assert x == pytest.approx(1.0, rel=1e-9)\n    assert math.isclose(x, 1.0)\n    assert elapsed < 0.5\n    assert 2 >= count\n    self.assertAlmostEqual(a, b, 3)\n    time.sleep(0.1)\n    run(cmd, timeout=5)\n    if x < 10:\n        pass\n",
        );
        let got: Vec<(String, f64)> = file.functions[0]
            .tolerances
            .iter()
            .map(|t| (t.key.clone(), t.value))
            .collect();
        let want: Vec<(String, f64)> = [
            ("approx(1.0).rel", 1e-9),
            ("approx(1.0).abs", 1e-12),
            ("isclose(x).rel_tol", 1e-9),
            ("isclose(x).abs_tol", 0.0),
            ("elapsed <", 0.5),
            ("count <", 2.0),
            ("assertAlmostEqual(a).places", 3.0),
            ("assertAlmostEqual(a).delta", 0.0),
            ("sleep", 0.1),
            ("run(cmd).timeout", 5.0),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), *v))
        .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn hostile_sources_are_read_without_recursion() {
        let deep = format!(
            "def test_a():\n    assert {}x == 1{}\n    assert {}x\n",
            "(".repeat(100_000),
            ")".repeat(100_000),
            "not ".repeat(50_000)
        );
        let file = read(&deep);
        assert_eq!(file.functions.len(), 1);
        assert_eq!(file.functions[0].assertions.len(), 2);
        let garbage: Vec<u8> = (0..200_000u32).map(|i| (i * 7919 % 251) as u8).collect();
        let _ = parse("tests/test_x.py", &garbage);
        let _ = parse("tests/x.rs", &garbage);
        let nested_rs = format!(
            "#[test]\nfn t() {{ {} assert!(x); {} }}\n",
            "{".repeat(50_000),
            "}".repeat(50_000)
        );
        assert_eq!(
            parse("tests/x.rs", nested_rs.as_bytes())
                .unwrap()
                .functions
                .len(),
            1
        );
    }

    #[test]
    fn a_reformat_keeps_the_body_tokens() {
        let a = read("def test_a():\n    assert f(1,2) == 3  # why\n");
        let b = read("def test_b():\n    assert f(\n        1,\n        2,\n    ) == 3\n");
        assert_eq!(a.functions[0].body, b.functions[0].body);
    }
}
