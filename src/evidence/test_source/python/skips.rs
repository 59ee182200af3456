//! The skips and expected failures of Python tests: pytest marks, unittest decorators,
//! `pytestmark`, skipping calls and raises, and the names they go by in a module.

use tree_sitter::Node;

use super::syntax::{COMPOUND, callee};
use super::unrun::Bindings;
use crate::evidence::test_source::{Site, Source, descendants};

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

/// The skips a module or class body applies to every test in it: `pytestmark = ...` with a
/// skip or xfail mark, and skipping calls at its own level (`pytest.skip(...,
/// allow_module_level=True)`, `np = pytest.importorskip("numpy")`, `raise SkipTest`).
pub(crate) fn scope_skips(src: &Source, scope: Node) -> Vec<Site> {
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
                                if target.as_deref() == Some("pytestmark")
                                    && let Some(right) = n.child_by_field_name("right")
                                {
                                    out.extend(mark_sites(src, right));
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
pub(crate) fn mark_sites(src: &Source, node: Node) -> Vec<Site> {
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
pub(crate) fn decorator_skips(src: &Source, decorator: Node) -> Vec<Site> {
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
pub(crate) fn skip_site(src: &Source, node: Node) -> Site {
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

pub(crate) fn is_skip_call(src: &Source, callee: &str) -> bool {
    SKIP_CALLS.contains(&callee)
        || callee.ends_with(".skipTest")
        || callee == "skipTest"
        || src.skip_aliases.iter().any(|a| a == callee)
}

/// The other names pytest's skipping calls go by in this module, from its imports
/// (`Bindings`): `from pytest import skip as later` (`later`), `from pytest import xfail`
/// (`xfail`), `import pytest as pt` (`pt.skip`, ...), at any level of the module.
pub(crate) fn skip_aliases(bindings: &Bindings) -> Vec<String> {
    let mut aliases = Vec::new();
    for (bound, path) in bindings.imports() {
        if path == "pytest" && bound != "pytest" {
            aliases.extend(
                SKIP_CALLS
                    .iter()
                    .map(|call| call.replacen("pytest", bound, 1)),
            );
            continue;
        }
        let imported = path
            .strip_prefix("pytest.")
            .or_else(|| path.strip_prefix("_pytest.outcomes."));
        if imported.is_some_and(|name| SKIP_CALLS.contains(&format!("pytest.{name}").as_str())) {
            aliases.push(bound.to_string());
        }
    }
    aliases
}

/// `raise SkipTest(...)`, `raise unittest.SkipTest`, `raise pytest.skip.Exception`, pytest's
/// own outcomes raised by name (`raise Skipped(..)`, `XFailed`, `Exit`).
pub(crate) fn raises_skip(src: &Source, raise: Node) -> bool {
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
