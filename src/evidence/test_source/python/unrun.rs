//! Which parts of a statement may leave an assertion in them unrun, or swallow its failure
//! (`if`, loops, `try`, comprehensions, a `with` whose context manager may suppress one).

use tree_sitter::Node;

use super::syntax::{callee, unparenthesized};
use crate::evidence::test_source::Source;

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
