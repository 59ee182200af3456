//! Which parts of a statement may leave an assertion in them unrun, or swallow its failure
//! (`if`, loops, `try`, comprehensions, a `with` whose context manager may suppress one).

use std::collections::{HashMap, HashSet};

use tree_sitter::Node;

use super::syntax::{callee, unparenthesized};
use crate::evidence::test_source::{Source, descendants};

/// Whether `child` of `node` may not run, or may have its failure swallowed, when `node`
/// runs: an assertion moved there (`if False:`, `for _ in []:`, `try: .. except
/// AssertionError: pass`, `with suppress(AssertionError):`, `[self.assertTrue(x) for _ in
/// ()]`, `ok or self.fail()`) checks less than one the test always runs. The parts that
/// always run (conditions, what a loop iterates, a `with`'s context managers, `finally`, the
/// left of `and` and `or`) are not. Nested functions and lambdas are marked whole (below):
/// their body runs only if they are called.
pub(crate) fn may_skip(src: &Source, node: Node, child: Node) -> bool {
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

/// Context managers whose exit never suppresses an exception, by the dotted path their name
/// resolves to through the module's imports (`from unittest.mock import patch` makes
/// `patch.dict` `unittest.mock.patch.dict`): an assertion in their body fails the test as
/// one outside it does. Any other (`suppress`, `pytest.raises`, `ExitStack`, the project's
/// own, or one of these names bound to something else: `from contextlib import suppress as
/// patch`) may swallow a failure.
const NEVER_SWALLOW: &[&str] = &[
    "unittest.mock.patch",
    "unittest.mock.patch.object",
    "unittest.mock.patch.dict",
    "unittest.mock.patch.multiple",
    "mock.patch",
    "mock.patch.object",
    "mock.patch.dict",
    "mock.patch.multiple",
    "builtins.open",
    "io.open",
    "tempfile.TemporaryDirectory",
    "tempfile.NamedTemporaryFile",
    "starlette.testclient.TestClient",
    "fastapi.testclient.TestClient",
    "pytest.warns",
    "warnings.catch_warnings",
    "contextlib.nullcontext",
    "contextlib.chdir",
    "contextlib.redirect_stdout",
    "contextlib.redirect_stderr",
    "freezegun.freeze_time",
    "django.test.override_settings",
    "django.test.utils.override_settings",
];

/// pytest's own fixtures whose context managers never swallow, used through the test's
/// parameter of that name.
const NEVER_SWALLOW_FIXTURES: &[&str] = &[
    "monkeypatch.context",
    "caplog.at_level",
    "capsys.disabled",
    "capfd.disabled",
    "subtests.test",
];

/// Methods of the test's own class (unittest's `subTest`, Django's `settings`) that never
/// swallow, unless the module defines a function or method of that name.
const NEVER_SWALLOW_METHODS: &[&str] = &["subTest", "settings"];

/// Whether every context manager of the `with` statement `with` is one that never swallows
/// a failure ([`NEVER_SWALLOW`] and the rest), called.
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
            value.kind() == "call" && never_swallowing(&src.bindings, &callee(src, value))
        })
}

/// Whether the context manager called as `name` never swallows a failure, as the module's
/// `bindings` resolve it.
fn never_swallowing(bindings: &Bindings, name: &str) -> bool {
    let (first, rest) = name.split_once('.').unwrap_or((name, ""));
    if bindings.assigned.contains(first) {
        return false;
    }
    if first == "self" {
        return NEVER_SWALLOW_METHODS.contains(&rest) && !bindings.assigned.contains(rest);
    }
    if bindings.parameters.contains(first) {
        // A fixture of that name, whatever the module imports.
        return NEVER_SWALLOW_FIXTURES.contains(&name);
    }
    if let Some(origin) = bindings.imported.get(first) {
        let resolved = match rest {
            "" => origin.clone(),
            rest => format!("{origin}.{rest}"),
        };
        return NEVER_SWALLOW.contains(&resolved.as_str());
    }
    // Not bound in the module: a builtin, unless a star import may have bound it.
    !bindings.star_import && (name == "open" || NEVER_SWALLOW_FIXTURES.contains(&name))
}

/// How a Python module binds names, anywhere in it: what a context manager's name resolves
/// to.
#[derive(Debug, Default)]
pub(crate) struct Bindings {
    /// Names bound by `import` and `from .. import`, to the dotted path they name (`mock` to
    /// `unittest.mock` after `from unittest import mock`).
    imported: HashMap<String, String>,
    /// Names bound any other way: assigned, defined, a loop's or an `as` target.
    assigned: HashSet<String>,
    /// Names of parameters (pytest's fixtures, `self`).
    parameters: HashSet<String>,
    /// A `from M import *`, which may bind any name.
    star_import: bool,
}

impl Bindings {
    /// Each name an import binds, with the dotted path it names.
    pub(crate) fn imports(&self) -> impl Iterator<Item = (&str, &str)> {
        self.imported.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Whether the module binds `name` itself: imports, assigns or defines it (a method
    /// of a class included).
    pub(crate) fn binds(&self, name: &str) -> bool {
        self.assigned.contains(name) || self.imported.contains_key(name)
    }

    /// The bindings of the module `root`.
    pub(crate) fn of(src: &Source, root: Node) -> Bindings {
        let mut b = Bindings::default();
        for node in descendants(root) {
            match node.kind() {
                "import_statement" => {
                    let mut cursor = node.walk();
                    for name in node.children_by_field_name("name", &mut cursor) {
                        match name.kind() {
                            "aliased_import" => {
                                let path = name.child_by_field_name("name").map(|n| src.normal(n));
                                let alias =
                                    name.child_by_field_name("alias").map(|n| src.normal(n));
                                if let (Some(path), Some(alias)) = (path, alias) {
                                    b.imported.insert(alias, path);
                                }
                            }
                            _ => {
                                // `import a.b.c` binds `a`.
                                let path = src.normal(name);
                                let first = path.split('.').next().unwrap_or(&path).to_string();
                                b.imported.insert(first.clone(), first);
                            }
                        }
                    }
                }
                "import_from_statement" => {
                    let module = node
                        .child_by_field_name("module_name")
                        .map(|m| src.normal(m))
                        .unwrap_or_default();
                    let mut cursor = node.walk();
                    if node
                        .named_children(&mut cursor)
                        .any(|c| c.kind() == "wildcard_import")
                    {
                        b.star_import = true;
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
                        let bound = alias.unwrap_or_else(|| imported.clone());
                        b.imported.insert(bound, format!("{module}.{imported}"));
                    }
                }
                "function_definition" | "class_definition" => {
                    if let Some(name) = node.child_by_field_name("name") {
                        b.assigned.insert(src.normal(name));
                    }
                }
                "parameters" | "lambda_parameters" => {
                    let mut cursor = node.walk();
                    for p in node.named_children(&mut cursor) {
                        let name = match p.kind() {
                            "identifier" => Some(p),
                            "default_parameter" | "typed_default_parameter" => {
                                p.child_by_field_name("name")
                            }
                            "typed_parameter" => p.named_child(0),
                            _ => None,
                        };
                        if let Some(name) = name.filter(|n| n.kind() == "identifier") {
                            b.parameters.insert(src.normal(name));
                        }
                    }
                }
                "assignment" | "augmented_assignment" | "for_statement" | "for_in_clause" => {
                    if let Some(left) = node.child_by_field_name("left") {
                        targets(src, left, &mut b.assigned);
                    }
                }
                "as_pattern" => {
                    if let Some(alias) = node.child_by_field_name("alias") {
                        targets(src, alias, &mut b.assigned);
                    }
                }
                "named_expression" => {
                    if let Some(name) = node.child_by_field_name("name") {
                        b.assigned.insert(src.normal(name));
                    }
                }
                _ => {}
            }
        }
        b
    }
}

/// The names a binding target binds (`a`, `a, b`, `[a, *b]`), not an attribute's or a
/// subscript's.
fn targets(src: &Source, target: Node, out: &mut HashSet<String>) {
    match target.kind() {
        "identifier" => {
            out.insert(src.normal(target));
        }
        "attribute" | "subscript" => {}
        _ => {
            let mut cursor = target.walk();
            let children: Vec<Node> = target.named_children(&mut cursor).collect();
            for child in children {
                targets(src, child, out);
            }
        }
    }
}
