//! Python test files as pytest and unittest read them: `test*` functions at module level
//! and `test*` methods of classes (also inside module-level `if`/`try` blocks), their
//! decorators, their class's decorators and `pytestmark`, and the module's.

mod assertions;
mod collection;
mod parsing;
mod skips;
mod syntax;
mod tolerances;
mod unrun;

use std::collections::{HashMap, HashSet};

use tree_sitter::Node;

use self::assertions::{ByName, assert_statement, assertion_call, strength};
use self::collection::{bound_names, not_collected, unbound_later};
pub(super) use self::parsing::{parse, unread_encoding};
use self::skips::{
    decorator_skips, is_skip_call, mark_sites, raises_skip, scope_skips, skip_aliases, skip_site,
};
use self::syntax::{COMPOUND, callee, first_named};
use self::tolerances::{bound, call_tolerances, defaults};
pub(crate) use self::unrun::Bindings;
use self::unrun::may_skip;
use super::{
    Assertion, Call, Draft, Site, Source, TestFile, TestFunction, Tolerance, descendants, finish,
    line,
};

pub(super) fn read(src: &Source, root: Node, names: &super::PythonTests) -> TestFile {
    let bindings = Bindings::of(src, root);
    let src = &Source {
        text: src.text,
        skip_aliases: skip_aliases(&bindings),
        bindings,
    };
    let (mut tests, mut helpers) = (Vec::new(), Vec::new());
    let unbound = unbound_later(src, root);
    let module_skips = scope_skips(src, root);
    // (statement, enclosing classes, the skips they and the module apply)
    let mut stack: Vec<(Node, Vec<String>, Vec<Site>)> = Vec::new();
    // The classes in source order, for the tests they inherit.
    let mut seen: Vec<Class> = Vec::new();
    // Whether each class seen so far may be a `unittest.TestCase`, by its scope and name.
    let mut test_cases: HashMap<(Vec<String>, String), bool> = HashMap::new();
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
                let by_base = Class::may_be_test_case(src, def, &classes, &test_cases);
                inner.extend(not_collected(src, def, &name, body, names, by_base));
                test_cases.insert((classes.clone(), name.clone()), by_base);
                let mut path = classes.clone();
                path.push(name);
                seen.push(Class::of(
                    src,
                    (def, body),
                    path.clone(),
                    &inner[skips.len()..],
                ));
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
            "function_definition" => {
                helpers.push((classes.join("."), function(src, def, &[], name, &[])))
            }
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
    inherit(&mut tests, &seen);
    finish(tests, helpers)
}

/// A class of the file: where it is, the names of its bases, the skips it adds to its
/// tests (its decorators, its `pytestmark`, not being collected), the names it binds itself
/// (its functions, and names assigned: `test_x = None` hides an inherited `test_x`).
struct Class {
    path: Vec<String>,
    bases: Vec<String>,
    skips: Vec<Site>,
    defines: HashSet<String>,
}

impl Class {
    fn of(src: &Source, (def, body): (Node, Node), path: Vec<String>, skips: &[Site]) -> Class {
        let bases = base_names(src, def)
            .into_iter()
            .filter(|b| !b.contains('.'))
            .collect();
        let mut defines = HashSet::new();
        let mut cursor = body.walk();
        for statement in body.named_children(&mut cursor) {
            let def = match statement.kind() {
                "decorated_definition" => statement.child_by_field_name("definition"),
                _ => Some(statement),
            };
            match def.map(|d| (d, d.kind())) {
                Some((d, "function_definition" | "class_definition")) => {
                    defines.extend(d.child_by_field_name("name").map(|n| src.text(n)));
                }
                Some((_, "expression_statement" | "delete_statement")) => {
                    defines.extend(
                        bound_names(src, statement)
                            .into_iter()
                            .filter(|(_, attribute)| !attribute)
                            .map(|(name, _)| name),
                    );
                }
                _ => {}
            }
        }
        Class {
            path,
            bases,
            skips: skips.to_vec(),
            defines,
        }
    }

    /// Whether the class `def` in the body of `scope` may be a `unittest.TestCase` (which
    /// pytest collects whatever its name) by its bases: it has a base that is not a class
    /// of the file (`TestCase`, `unittest.TestCase`, a base imported from a helper module)
    /// other than `object` and `ABC`, or one of the file's that may be. `class
    /// HttpSuite(_Suite)` with `class _Suite:` is not, so pytest skips it as it would
    /// without the base.
    fn may_be_test_case(
        src: &Source,
        def: Node,
        scope: &[String],
        seen: &HashMap<(Vec<String>, String), bool>,
    ) -> bool {
        base_names(src, def).into_iter().any(|base| {
            let local = seen
                .get(&(scope.to_vec(), base.clone()))
                .or_else(|| seen.get(&(Vec::new(), base.clone())));
            match local {
                Some(test_case) => *test_case,
                None => !matches!(base.as_str(), "object" | "ABC" | "abc.ABC"),
            }
        })
    }
}

/// The bases a class statement names, as written (`TestCase`, `unittest.TestCase`);
/// keyword arguments (`metaclass=..`) left out.
fn base_names(src: &Source, def: Node) -> Vec<String> {
    let Some(list) = def.child_by_field_name("superclasses") else {
        return Vec::new();
    };
    let mut cursor = list.walk();
    list.named_children(&mut cursor)
        .filter(|b| b.kind() != "keyword_argument" && b.kind() != "comment")
        .map(|b| src.normal(b))
        .collect()
}

/// The tests each class inherits from bases of the file (`class TestHTTPStore(TestCase,
/// _StorageTest)`): pytest collects each as the subclass's own (`TestHTTPStore::test_list`),
/// so deleting the subclass deletes them. A method the class defines itself overrides, and
/// of several bases the first that has a name gives it, as Python looks names up. At most
/// `MAX_INHERITED` copies a file: a chain of classes each inheriting hundreds of tests
/// would otherwise cost its length times theirs. The cap falls at the same class in both
/// versions of a file whose classes keep their order, and a test past it in one version
/// only is deleted there, which fails closed.
fn inherit(tests: &mut Vec<Draft>, classes: &[Class]) {
    // Each class's own tests and those it inherited, by its path, and the classes seen so
    // far by scope and name: a class statement's bases are the classes defined before it.
    let mut by_class: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, test) in tests.iter().enumerate() {
        if let Some((class, _)) = test.function.name.rsplit_once("::") {
            by_class.entry(class.to_string()).or_default().push(i);
        }
    }
    let mut defined: HashMap<(&[String], &str), &Class> = HashMap::new();
    let mut copies = 0usize;
    for class in classes {
        let Some((name, scope)) = class.path.split_last() else {
            continue;
        };
        let path = class.path.join("::");
        // The names each base seen so far defines hide the same names in later bases.
        let mut hidden: Vec<&HashSet<String>> = vec![&class.defines];
        let mut inherited_names: HashSet<&str> = HashSet::new();
        let mut inherited = Vec::new();
        let mut bases_seen: HashSet<&str> = HashSet::new();
        for base in &class.bases {
            // In the same body, else in the module; a base named twice is read once.
            if copies == MAX_INHERITED || !bases_seen.insert(base.as_str()) {
                continue;
            }
            let Some(base) = defined
                .get(&(scope, base.as_str()))
                .or_else(|| defined.get(&(&[][..], base.as_str())))
            else {
                continue;
            };
            for &t in by_class.get(&base.path.join("::")).into_iter().flatten() {
                if copies == MAX_INHERITED {
                    break;
                }
                let test = &tests[t];
                let method = test.function.name.rsplit("::").next().unwrap_or_default();
                if hidden.iter().any(|names| names.contains(method))
                    || !inherited_names.insert(method)
                {
                    continue;
                }
                let mut copy = test.clone();
                copy.function.name = format!("{path}::{method}");
                // Whether the base is collected is the base's own matter: the class's says.
                copy.function
                    .skips
                    .retain(|s| !s.key.starts_with("not collected: "));
                copy.function.skips.extend(class.skips.iter().cloned());
                inherited.push(copy);
                copies += 1;
            }
            hidden.push(&base.defines);
        }
        let from = tests.len();
        tests.extend(inherited);
        by_class.entry(path).or_default().extend(from..tests.len());
        defined.insert((scope, name.as_str()), class);
    }
}

/// Inherited tests copied in one file, at most (`inherit`).
const MAX_INHERITED: usize = 10_000;

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

/// What `decorators` say about the function `def`: their skips (added to `skips`) and the
/// tolerances they set, with hypothesis' defaults for a `@given` test without `@settings`.
fn decorated(
    src: &Source,
    def: Node,
    decorators: &[Node],
    skips: &mut Vec<Site>,
) -> Vec<Tolerance> {
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
    tolerances
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
    let mut tolerances = decorated(src, def, decorators, &mut skips);
    let mut assertions: Vec<(usize, Assertion)> = Vec::new();
    // For each of `assertions`, what it would pin through a name bound to a constant.
    let mut by_names: Vec<Vec<ByName>> = Vec::new();
    let mut returns: Vec<(usize, Site)> = Vec::new();
    let mut calls: Vec<(usize, Call)> = Vec::new();
    let mut names = assertions::Names::of(src, def);
    let body = def.child_by_field_name("body");
    // (node, inside a nested function or class, inside an assertion, the innermost statement
    // that may leave it unrun)
    let mut stack: Vec<(Node, bool, bool, Option<Node>)> =
        body.into_iter().map(|b| (b, false, false, None)).collect();
    while let Some((node, nested, asserted, under)) = stack.pop() {
        let mut inner_nested = nested;
        let mut inner_asserted = asserted;
        let mut inner_under = under;
        let only_under = |(a, by_name): (Assertion, Vec<ByName>)| match under {
            Some(statement) => {
                let suffix = super::only_under(src, statement);
                let by_name = by_name.into_iter().map(|b| b.under(&suffix)).collect();
                (super::conditional(src, a, statement), by_name)
            }
            None => (a, by_name),
        };
        // A call's callee, read once for what the call is and for the names it uses.
        let called = (node.kind() == "call").then(|| callee(src, node));
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
                if let Some((expr, strength)) = expr.and_then(|e| strength(src, e).map(|s| (e, s)))
                {
                    let (a, by_name) = only_under(assert_statement(src, node, expr, strength));
                    assertions.push((node.start_byte(), a));
                    by_names.push(by_name);
                }
            }
            "call" => {
                let name = called.as_deref().unwrap_or_default();
                if is_skip_call(src, name) {
                    skips.push(skip_site(src, node));
                } else if name.ends_with("applymarker") || name.ends_with("add_marker") {
                    // `request.applymarker(pytest.mark.xfail)`: a mark added as the test runs.
                    skips.extend(mark_sites(src, node));
                } else {
                    let found = assertion_call(src, node, name);
                    if found.is_empty() {
                        // A function or method of the file (`check(..)`, `self.check(..)`)
                        // may be a helper that asserts: named by its last part.
                        let bare = name.rsplit('.').next().unwrap_or(name);
                        if !bare.is_empty() && !bare.contains(['(', '[', ')', ']']) {
                            calls.push((
                                node.start_byte(),
                                super::helper_call(src, node, bare.to_string(), under),
                            ));
                        }
                    } else {
                        inner_asserted = true;
                    }
                    for (a, by_name) in found.into_iter().map(only_under) {
                        assertions.push((node.start_byte(), a));
                        by_names.push(by_name);
                    }
                }
                tolerances.extend(call_tolerances(src, node));
            }
            "raise_statement" if raises_skip(src, node) => skips.push(skip_site(src, node)),
            "return_statement" if !nested => returns.push((node.start_byte(), src.site(node))),
            "comparison_operator" if asserted => tolerances.extend(bound(src, node)),
            "assignment" | "augmented_assignment" if !nested => names.assigned(src, node),
            // A loop's, a `with .. as`'s, an `except .. as`'s or a walrus's target binds too.
            "for_statement" | "as_pattern" | "named_expression" if !nested => {
                let field = match node.kind() {
                    "for_statement" => "left",
                    "as_pattern" => "alias",
                    _ => "name",
                };
                if let Some(target) = node.child_by_field_name(field) {
                    names.bound(src, target);
                }
            }
            _ => {}
        }
        // The named children with the field each stands in, read once for both the walk and
        // the names' uses.
        let mut children: Vec<(Node, Option<&'static str>)> = Vec::new();
        let mut cursor = node.walk();
        let mut more = cursor.goto_first_child();
        while more {
            let child = cursor.node();
            if child.is_named() {
                children.push((child, cursor.field_name()));
            }
            more = cursor.goto_next_sibling();
        }
        names.uses(src, node, &children, inner_asserted, called.as_deref());
        for (child, _) in children.into_iter().rev() {
            let under = match may_skip(src, node, child) {
                true => Some(node),
                false => inner_under,
            };
            stack.push((child, inner_nested, inner_asserted, under));
        }
    }
    for ((at, a), by_name) in assertions.iter_mut().zip(by_names) {
        names.pin_by_name(a, *at, by_name);
        names.resolve(a);
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

// The tests parse with a chosen threshold of comment lines (`parsing::parse_masked`).
#[cfg(test)]
use self::parsing::parse_masked;

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
            bindings: Default::default(),
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
    fn a_long_chain_of_calls_is_read_by_its_last_name() {
        // Each call of `m.f().f()...` names all the calls before it: past 256 bytes only
        // the last name is read, which a mock's assertion still is, and `raises` alone is
        // not pytest's.
        let chain = ".f()".repeat(100);
        let file = read(&format!(
            "def test_a():\n    m{chain}.assert_called_once()\n\n\ndef test_b():\n    with m{chain}.raises(ValueError):\n        go()\n"
        ));
        assert_eq!(strengths(&file, "test_a"), [Strength::Weak]);
        assert_eq!(strengths(&file, "test_b"), []);
        // Short, the same call is read whole.
        let file = read("def test_b():\n    with pytest.raises(ValueError):\n        go()\n");
        assert_eq!(strengths(&file, "test_b"), [Strength::Strong]);
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
    /// read as loosening each assertion. Names are resolved through the module's imports.
    #[test]
    fn a_with_that_never_swallows_leaves_its_assertions_unconditional() {
        let file = read(concat!(
            "import contextlib, os, tempfile\n",
            "from unittest import mock\n",
            "from unittest.mock import patch\n",
            "def test_a(x, monkeypatch):\n",
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
            "    with monkeypatch.context() as m:\n",
            "        assert x == 7\n",
        ));
        let under: Vec<(u64, bool)> = assertion_texts(&file, "test_a")
            .into_iter()
            .map(|(line, text)| (line, text.contains(" [only under: ")))
            .collect();
        assert_eq!(
            under,
            [
                (6, false),
                (8, false),
                (10, true),
                (12, true),
                (14, true),
                (16, true),
                (18, false),
            ]
        );
    }

    /// The names are the module's: `patch` imported from elsewhere, rebound, a parameter of
    /// that name (a fixture), `open` defined in the file or brought by a star import, and a
    /// module imported under another module's name, may each swallow a failure.
    #[test]
    fn a_never_swallowing_name_bound_to_something_else_may_swallow() {
        let conditional = |source: &str| {
            let file = read(source);
            let name = &file
                .functions
                .iter()
                .find(|f| f.name.ends_with("test_a"))
                .unwrap()
                .name;
            let texts = assertion_texts(&file, name);
            let asserted: Vec<&String> = texts
                .iter()
                .map(|(_, text)| text)
                .filter(|text| text.starts_with("assert x"))
                .collect();
            assert_eq!(asserted.len(), 1, "{texts:?}");
            asserted[0].contains(" [only under: ")
        };
        for source in [
            "from contextlib import suppress as patch\ndef test_a(x):\n    with patch(AssertionError):\n        assert x\n",
            "from unittest.mock import patch\npatch = contextlib.suppress\ndef test_a(x):\n    with patch(AssertionError):\n        assert x\n",
            "from unittest.mock import patch\ndef test_a(x, patch):\n    with patch(AssertionError):\n        assert x\n",
            "def open(*a):\n    return contextlib.suppress(AssertionError)\ndef test_a(x):\n    with open('f'):\n        assert x\n",
            "from helpers import *\ndef test_a(x):\n    with open('f'):\n        assert x\n",
            "import contextlib as pytest\ndef test_a(x):\n    with pytest.warns(AssertionError):\n        assert x\n",
            "import unittest\nclass T(unittest.TestCase):\n    def subTest(self, **k):\n        return contextlib.suppress(AssertionError)\n    def test_a(self, x=1):\n        with self.subTest(i=1):\n            assert x\n",
        ] {
            assert!(conditional(source), "{source}");
        }
        // The same names bound as they should be never swallow.
        for source in [
            "from unittest.mock import patch\ndef test_a(x):\n    with patch('a.b'):\n        assert x\n",
            "import pytest\ndef test_a(x):\n    with pytest.warns(UserWarning):\n        assert x\n",
            "def test_a(x):\n    with open('f'):\n        assert x\n",
        ] {
            assert!(!conditional(source), "{source}");
        }
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

    #[test]
    fn a_long_chain_of_inheriting_classes_is_read_within_a_bound() {
        // 2,000 classes, each inheriting the 100 tests of the one before: 200,000 tests
        // as pytest would collect them, read as the first 10,000.
        let mut text = String::from("class TestBase:\n");
        for i in 0..100 {
            text.push_str(&format!(
                "    def test_{i}(self):\n        assert f({i}) == {i}\n"
            ));
        }
        text.push_str("\nclass TestC0(TestBase):\n    pass\n");
        for i in 1..2000 {
            text.push_str(&format!("\nclass TestC{i}(TestC{}):\n    pass\n", i - 1));
        }
        let file = read(&text);
        assert_eq!(file.functions.len(), 100 + super::MAX_INHERITED);
        let names: Vec<&str> = file.functions.iter().map(|f| f.name.as_str()).collect();
        assert!(names.contains(&"TestC99::test_99"), "{:?}", &names[..3]);
        assert!(!names.iter().any(|n| n.starts_with("TestC100::")));

        // A base named thousands of times over is read once.
        let mut wide = String::from("class TestBase:\n");
        for i in 0..100 {
            wide.push_str(&format!(
                "    def test_{i}(self):\n        assert f({i}) == {i}\n"
            ));
        }
        wide.push_str(&format!(
            "\nclass TestWide({}):\n    pass\n",
            "TestBase, ".repeat(5000)
        ));
        assert_eq!(read(&wide).functions.len(), 200);
    }
}
