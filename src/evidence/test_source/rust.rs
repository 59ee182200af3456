//! Rust test files: functions with a test attribute (`#[test]`, `#[tokio::test]`,
//! `#[rstest]`, ...) in any module of the file (`#[cfg(test)] mod tests`), their `#[ignore]`
//! and `#[cfg_attr(.., ignore)]`, and the assertion macros in their bodies. A macro's
//! arguments are a token tree to tree-sitter (macros are expanded by the compiler), so the
//! assertion macros are read token by token.

use tree_sitter::Node;

use super::{
    Assertion, Call, Draft, Looser, Site, Source, Strength, TestFile, TestFunction, Tolerance,
    descendants, finish, line, normal_text, number,
};

pub(super) fn read(src: &Source, root: Node) -> TestFile {
    let (mut tests, mut helpers) = (Vec::new(), Vec::new());
    // (a list of items, the module path it is in, the build conditions of its modules)
    let mut stack: Vec<(Node, Vec<String>, Vec<Site>)> = vec![(root, Vec::new(), Vec::new())];
    while let Some((items, path, mut conditions)) = stack.pop() {
        let mut attributes: Vec<Node> = Vec::new();
        let mut cursor = items.walk();
        for item in items.named_children(&mut cursor) {
            match item.kind() {
                "attribute_item" => {
                    attributes.push(item);
                    continue;
                }
                // `#![cfg(any())]` first in a file or module (inner attributes come before
                // its items) leaves every test in it out of the build.
                "inner_attribute_item" => {
                    if is_build_condition(src, item) {
                        conditions.push(src.site(item));
                    }
                    continue;
                }
                "line_comment" | "block_comment" => continue,
                "mod_item" => {
                    if let (Some(body), Some(name)) = (
                        item.child_by_field_name("body"),
                        item.child_by_field_name("name"),
                    ) {
                        let mut inner = path.clone();
                        inner.push(src.text(name));
                        let mut within = conditions.clone();
                        within.extend(sites_of(src, &attributes, is_build_condition));
                        stack.push((body, inner, within));
                    }
                }
                "impl_item" | "trait_item" => {
                    if let Some(body) = item.child_by_field_name("body") {
                        stack.push((body, path.clone(), conditions.clone()));
                    }
                }
                "function_item" => {
                    let name = item
                        .child_by_field_name("name")
                        .map(|n| src.text(n))
                        .unwrap_or_default();
                    if attributes.iter().any(|a| is_test_attribute(src, *a)) {
                        let mut qualified = path.join("::");
                        if !qualified.is_empty() {
                            qualified.push_str("::");
                        }
                        qualified.push_str(&name);
                        tests.push(function(src, item, &attributes, qualified, &conditions));
                    } else {
                        helpers.push((String::new(), function(src, item, &[], name, &[])));
                    }
                }
                _ => {}
            }
            attributes.clear();
        }
    }
    let mut file = finish(tests, helpers);
    file.functions.sort_by_key(|f| f.line);
    file
}

/// Where a source file's tests are: the whole file (an inner `#![cfg(test)]`), or the byte
/// ranges of its top-level test items (each with its attributes and the comments just
/// above): a module, function, `use` or `impl` under `#[cfg(test)]`, and a function with a
/// test attribute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TestItems {
    Whole,
    Items(Vec<std::ops::Range<usize>>),
}

pub(super) fn test_items(src: &Source, root: Node) -> TestItems {
    let cfg_test = |item: Node| {
        attribute_path(src, item).as_deref() == Some("cfg")
            && src.tokens(item).split_whitespace().collect::<String>() == "#[cfg(test)]"
    };
    let mut ranges = Vec::new();
    let mut start: Option<usize> = None;
    let mut attributes: Vec<Node> = Vec::new();
    let mut cursor = root.walk();
    for item in root.named_children(&mut cursor) {
        match item.kind() {
            "inner_attribute_item" => {
                if src.tokens(item).split_whitespace().collect::<String>() == "#![cfg(test)]" {
                    return TestItems::Whole;
                }
                continue;
            }
            "attribute_item" => {
                start.get_or_insert(item.start_byte());
                attributes.push(item);
                continue;
            }
            "line_comment" | "block_comment" => {
                start.get_or_insert(item.start_byte());
                continue;
            }
            _ => {}
        }
        let test = attributes.iter().any(|a| cfg_test(*a))
            || (item.kind() == "function_item"
                && attributes.iter().any(|a| is_test_attribute(src, *a)));
        if test {
            ranges.push(start.unwrap_or(item.start_byte())..item.end_byte());
        }
        start = None;
        attributes.clear();
    }
    TestItems::Items(ranges)
}

/// The path an attribute names (`test`, `tokio::test`, `cfg_attr`).
fn attribute_path(src: &Source, item: Node) -> Option<String> {
    let attribute = item.named_child(0).filter(|a| a.kind() == "attribute")?;
    attribute.named_child(0).map(|p| src.normal(p))
}

/// `#[test]` and the attributes of test frameworks that stand for it.
fn is_test_attribute(src: &Source, item: Node) -> bool {
    attribute_path(src, item).is_some_and(|p| {
        p == "test"
            || p.ends_with("::test")
            || matches!(
                p.as_str(),
                "rstest" | "test_case" | "wasm_bindgen_test" | "quickcheck"
            )
    })
}

/// `#[ignore]`, `#[ignore = "..."]`, `#[should_panic]` (a failing assertion then passes),
/// `#[cfg_attr(cond, ignore)]` and the like, and a `#[cfg(..)]` that may leave the test out
/// of the build (any but `cfg(test)`).
fn is_skip_attribute(src: &Source, item: Node) -> bool {
    match attribute_path(src, item).as_deref() {
        Some("ignore" | "should_panic") => true,
        Some("cfg_attr") => descendants(item).any(|n| {
            n.kind() == "identifier" && matches!(src.text(n).as_str(), "ignore" | "should_panic")
        }),
        Some("cfg") => is_build_condition(src, item),
        _ => false,
    }
}

/// The sites of the attributes `keep` picks.
fn sites_of<'a>(
    src: &'a Source,
    attributes: &'a [Node],
    keep: fn(&Source, Node) -> bool,
) -> impl Iterator<Item = Site> + 'a {
    attributes
        .iter()
        .filter(move |a| keep(src, **a))
        .map(|a| src.site(*a))
}

/// A `#[cfg(..)]` (or `#![cfg(..)]`) other than `cfg(test)`: what it names may be left out
/// of the build.
fn is_build_condition(src: &Source, item: Node) -> bool {
    attribute_path(src, item).as_deref() == Some("cfg")
        && !matches!(
            src.tokens(item)
                .split_whitespace()
                .collect::<String>()
                .as_str(),
            "#[cfg(test)]" | "#![cfg(test)]"
        )
}

/// Whether `child` of `node` may not run when `node` runs: an assertion moved there (`if
/// false { .. }`, `for _ in [] { .. }`, `ok || { assert!(..); true }`) checks less than one
/// the test always runs. Conditions, what a loop iterates and the left of `&&` and `||`
/// always run. Closures and nested functions are marked whole (below): their body runs only
/// if they are called.
fn may_skip(node: Node, child: Node) -> bool {
    let field_is = |name| node.child_by_field_name(name) == Some(child);
    match node.kind() {
        "if_expression" | "while_expression" => !field_is("condition"),
        "for_expression" | "match_expression" => field_is("body"),
        "binary_expression" => {
            let operator = node.child_by_field_name("operator").map(|o| o.kind());
            field_is("right") && matches!(operator, Some("&&" | "||"))
        }
        _ => false,
    }
}

/// The facts of one function: `attributes` are its own, `inherited` the skips of the
/// modules it is in.
fn function(
    src: &Source,
    def: Node,
    attributes: &[Node],
    name: String,
    inherited: &[Site],
) -> Draft {
    let mut skips = inherited.to_vec();
    skips.extend(sites_of(src, attributes, is_skip_attribute));
    let mut assertions: Vec<(usize, Assertion)> = Vec::new();
    let mut returns: Vec<(usize, Site)> = Vec::new();
    let mut tolerances = Vec::new();
    let mut calls: Vec<(usize, Call)> = Vec::new();
    let body = def.child_by_field_name("body");
    // (node, inside a closure or nested function, the innermost expression that may leave it
    // unrun)
    let mut stack: Vec<(Node, bool, Option<Node>)> =
        body.into_iter().map(|b| (b, false, None)).collect();
    while let Some((node, nested, under)) = stack.pop() {
        let mut inner_nested = nested;
        let mut inner_under = under;
        match node.kind() {
            "closure_expression" | "function_item" => {
                inner_nested = true;
                inner_under = Some(node);
            }
            "macro_invocation" => {
                let read = assertion_macro(src, node);
                let only_under = |a: Assertion| match under {
                    Some(expression) => super::conditional(src, a, expression),
                    None => a,
                };
                assertions.extend(read.assertion.map(|a| (node.start_byte(), only_under(a))));
                tolerances.extend(read.tolerances);
                continue;
            }
            "return_expression" if !nested => returns.push((node.start_byte(), src.site(node))),
            // `std::process::exit(0)` ends the test's process: a test run in a process of its
            // own (nextest) passes, whatever comes after. As early as a `return`.
            "call_expression" if !nested && exits_the_process(src, node) => {
                returns.push((node.start_byte(), src.site(node)));
            }
            "call_expression" => {
                tolerances.extend(duration(src, node));
                // A function or method of the file (`expect(&run, 0)`, `Daemon::start(..)`,
                // `self.check(..)`) may be a helper that asserts: named by its last part.
                let callee = node.child_by_field_name("function");
                let name = callee.and_then(|f| match f.kind() {
                    "identifier" => Some(f),
                    "scoped_identifier" => f.child_by_field_name("name"),
                    "field_expression" => f.child_by_field_name("field"),
                    _ => None,
                });
                if let Some(name) = name {
                    calls.push((
                        node.start_byte(),
                        super::helper_call(src, node, src.text(name), under),
                    ));
                }
            }
            _ => {}
        }
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children.into_iter().rev() {
            let under = match may_skip(node, child) {
                true => Some(node),
                false => inner_under,
            };
            stack.push((child, inner_nested, under));
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

/// A call of `std::process::exit` (`process::exit`, or `exit` imported).
fn exits_the_process(src: &Source, call: Node) -> bool {
    call.child_by_field_name("function").is_some_and(|f| {
        let callee = src.normal(f);
        callee == "exit" || callee.ends_with("process::exit")
    })
}

/// What an assertion macro asserts and the tolerances it allows.
#[derive(Default)]
struct MacroRead {
    assertion: Option<Assertion>,
    tolerances: Vec<Tolerance>,
}

/// Reads `name!(...)` when it is an assertion macro (`assert!`, `assert_eq!`,
/// `debug_assert_ne!`, `prop_assert!`, `assert_matches!`, `assert_relative_eq!`, insta's
/// `assert_snapshot!`, ...).
fn assertion_macro(src: &Source, invocation: Node) -> MacroRead {
    let path = invocation
        .child_by_field_name("macro")
        .map(|m| src.normal(m))
        .unwrap_or_default();
    let name = path.rsplit("::").next().unwrap_or(&path).to_string();
    let is_assertion = ["assert", "debug_assert", "prop_assert"]
        .iter()
        .any(|p| name.starts_with(p));
    if !is_assertion {
        return MacroRead::default();
    }
    let Some(tree) = invocation
        .named_children(&mut invocation.walk())
        .find(|n| n.kind() == "token_tree")
    else {
        return MacroRead::default();
    };
    let args = split_arguments(tree);
    let text = |tokens: &[Node]| tokens_text(src, tokens);
    let plain = matches!(name.as_str(), "assert" | "debug_assert" | "prop_assert");
    let strength = if plain {
        args.first().and_then(|first| plain_strength(src, first))
    } else if name.ends_with("_eq") && args.len() >= 2 && text(&args[0]) == text(&args[1]) {
        // `assert_eq!(x, x)` cannot fail.
        None
    } else {
        Some(Strength::Strong)
    };
    let mut read = MacroRead {
        assertion: strength.map(|strength| Assertion {
            line: line(invocation),
            text: src.shown(invocation),
            strength,
            pins: None,
            reads: Vec::new(),
        }),
        tolerances: Vec::new(),
    };
    let first = args.first().map(|a| text(a)).unwrap_or_default();
    if plain {
        read.tolerances
            .extend(args.first().and_then(|a| comparison_bound(src, a)));
    }
    let approximate = ["approx", "relative", "abs_diff", "ulps", "near", "close"]
        .iter()
        .any(|w| name.contains(w));
    for (i, arg) in args.iter().enumerate().skip(1) {
        // `epsilon = 1e-6`, `max_relative = 0.1` (the approx crate's macros).
        if let [key, eq, value @ ..] = &arg[..]
            && key.kind() == "identifier"
            && src.text(*eq) == "="
        {
            if let Some(v) = literal(src, value) {
                let key = src.text(*key);
                read.tolerances.push(Tolerance {
                    line: line(*eq),
                    key: format!("{name}({first}).{key}"),
                    value: v,
                    looser: Looser::Larger,
                    text: text(arg),
                });
            }
            continue;
        }
        // `assert_approx_eq!(a, b, 1e-6)`: a bare number is the tolerance.
        if approximate
            && i >= 2
            && let Some(v) = literal(src, arg)
        {
            read.tolerances.push(Tolerance {
                line: line(arg[0]),
                key: format!("{name}({first}).{i}"),
                value: v,
                looser: Looser::Larger,
                text: text(arg),
            });
        }
    }
    read
}

/// The tokens of a token tree's top level (delimiters and comments left out), split at
/// top-level commas.
fn split_arguments(tree: Node) -> Vec<Vec<Node>> {
    let mut cursor = tree.walk();
    let tokens: Vec<Node> = tree
        .children(&mut cursor)
        .filter(|n| !n.kind().contains("comment"))
        .collect();
    let inner = if tokens.len() >= 2 {
        &tokens[1..tokens.len() - 1]
    } else {
        &[][..]
    };
    let mut args = vec![Vec::new()];
    for t in inner {
        if !t.is_named() && t.kind() == "," {
            args.push(Vec::new());
        } else if let Some(last) = args.last_mut() {
            last.push(*t);
        }
    }
    if args.last().is_some_and(Vec::is_empty) {
        args.pop();
    }
    args
}

/// The tokens' text, normalised (`a . len ( )` and `a.len()` read the same).
fn tokens_text(src: &Source, tokens: &[Node]) -> String {
    let joined: Vec<String> = tokens.iter().map(|t| src.text(*t)).collect();
    normal_text(&joined.join(" "))
}

/// A number written as one literal token, or `-` and one.
fn literal(src: &Source, tokens: &[Node]) -> Option<f64> {
    match tokens {
        [t] if is_number(t.kind()) => number(&src.text(*t)),
        [minus, t] if src.text(*minus) == "-" && is_number(t.kind()) => {
            number(&src.text(*t)).map(|v| -v)
        }
        _ => None,
    }
}

fn is_number(kind: &str) -> bool {
    kind == "integer_literal" || kind == "float_literal"
}

const COMPARISONS: &[&str] = &["==", "!=", "<", ">", "<=", ">="];

/// The top-level comparison of `assert!`'s condition: its operator's index.
fn comparison(tokens: &[Node]) -> Option<usize> {
    tokens
        .iter()
        .position(|t| !t.is_named() && COMPARISONS.contains(&t.kind()))
}

/// How deep `!`, brackets, `&&` and `||` are followed: a condition nested deeper (written to
/// make guard recurse) is read as weak.
const MAX_CONDITION_DEPTH: usize = 32;

/// How strong `assert!(cond)` is: a comparison or `matches!` is strong, a bare condition
/// weak; `true`, both sides of a comparison the same, or `matches!(x, _)` cannot fail. `a ||
/// b` holds when the weaker holds (`x == 3 || true` cannot fail); `a && b` checks the
/// stronger too. `!` and brackets are seen through.
fn plain_strength(src: &Source, condition: &[Node]) -> Option<Strength> {
    condition_strength(src, condition, 0)
}

fn condition_strength(src: &Source, condition: &[Node], depth: usize) -> Option<Strength> {
    if depth > MAX_CONDITION_DEPTH {
        return Some(Strength::Weak);
    }
    let strength = |part: &[Node]| condition_strength(src, part, depth + 1);
    for (operator, weaker) in [("||", true), ("&&", false)] {
        let parts: Vec<&[Node]> = condition.split(|t| t.kind() == operator).collect();
        if parts.len() > 1 {
            let strengths = parts.into_iter().map(strength);
            return if weaker {
                strengths.min().flatten()
            } else {
                strengths.max().flatten()
            };
        }
    }
    let inner = match condition {
        [not, tree] if not.kind() == "!" && tree.kind() == "token_tree" => Some(*tree),
        [tree] if tree.kind() == "token_tree" => Some(*tree),
        _ => None,
    };
    if let Some(tree) = inner.filter(|t| src.text(*t).starts_with('(')) {
        return match split_arguments(tree).as_slice() {
            [only] => strength(only),
            _ => Some(Strength::Weak),
        };
    }
    if let [only] = condition
        && only.kind() == "boolean_literal"
    {
        return if src.text(*only) == "true" {
            None
        } else {
            Some(Strength::Strong)
        };
    }
    if let Some(at) = comparison(condition) {
        let (left, right) = (&condition[..at], &condition[at + 1..]);
        if tokens_text(src, left) == tokens_text(src, right) {
            return None;
        }
        return Some(Strength::Strong);
    }
    let is_matches = condition.windows(2).any(|w| {
        w[0].kind() == "identifier" && src.text(w[0]) == "matches" && src.text(w[1]) == "!"
    });
    if let [name, bang, tree] = condition
        && src.text(*name) == "matches"
        && src.text(*bang) == "!"
        && matches_anything(src, *tree)
    {
        return None;
    }
    Some(if is_matches {
        Strength::Strong
    } else {
        Strength::Weak
    })
}

/// Whether `matches!(x, pattern)`'s pattern matches anything: `_` alone, or as one of its
/// alternatives (`3 | _`), with no `if` guard.
fn matches_anything(src: &Source, tree: Node) -> bool {
    let args = split_arguments(tree);
    let Some(pattern) = args.get(1) else {
        return false;
    };
    if pattern.iter().any(|t| src.text(*t) == "if") {
        return false;
    }
    pattern
        .split(|t| t.kind() == "|")
        .any(|alternative| matches!(alternative, [only] if src.text(*only) == "_"))
}

/// The numeric bound of `assert!(x < 0.5)` (or `0.5 > x`).
fn comparison_bound(src: &Source, condition: &[Node]) -> Option<Tolerance> {
    let at = comparison(condition)?;
    let less = match condition[at].kind() {
        "<" | "<=" => true,
        ">" | ">=" => false,
        _ => return None,
    };
    let (left, right) = (&condition[..at], &condition[at + 1..]);
    let (other, value, less) = match (literal(src, left), literal(src, right)) {
        (None, Some(v)) => (left, v, less),
        (Some(v), None) => (right, v, !less),
        _ => return None,
    };
    Some(Tolerance {
        line: line(condition[at]),
        key: format!(
            "{} {}",
            tokens_text(src, other),
            if less { "<" } else { ">" }
        ),
        value,
        looser: if less {
            Looser::Larger
        } else {
            Looser::Smaller
        },
        text: tokens_text(src, condition),
    })
}

/// A `Duration::from_*` literal (a timeout, a sleep, a deadline), in seconds, keyed by the
/// call it is passed to.
fn duration(src: &Source, call: Node) -> Option<Tolerance> {
    let function = src.normal(call.child_by_field_name("function")?);
    let unit = function.rsplit("::").next()?;
    let scale = match unit {
        "from_secs" | "from_secs_f32" | "from_secs_f64" => 1.0,
        "from_millis" => 1e-3,
        "from_micros" => 1e-6,
        "from_nanos" => 1e-9,
        _ => return None,
    };
    let args = call.child_by_field_name("arguments")?;
    let value = match args.named_child_count() {
        1 => number(&src.normal(args.named_child(0)?))?,
        _ => return None,
    };
    let outer = call
        .parent()
        .filter(|p| p.kind() == "arguments")
        .and_then(|a| a.parent())
        .and_then(|c| c.child_by_field_name("function"))
        .map(|f| src.normal(f))
        .unwrap_or_else(|| "Duration".to_string());
    Some(Tolerance {
        line: line(call),
        key: format!("{outer}({unit})"),
        value: value * scale,
        looser: Looser::Larger,
        text: src.shown(call),
    })
}

#[cfg(test)]
mod tests {
    use crate::evidence::test_source::{Strength, TestFile, parse};

    fn read(text: &str) -> TestFile {
        parse("src/lib.rs", text.as_bytes()).unwrap()
    }

    /// Assertions in closures, nested functions, bodies of `if`, `for`, `while` and `match`
    /// and the right of `&&` and `||` may not run; conditions and iterables always do.
    #[test]
    fn assertions_that_may_not_run_are_named_by_what_they_stand_under() {
        let file = read(concat!(
            "#[test]\n",
            "fn t() {\n",
            "    assert_eq!(a, 1);\n",
            "    if { assert!(b); c } {\n",
            "        assert_eq!(a, 2);\n",
            "    }\n",
            "    let f = || assert_eq!(a, 3);\n",
            "    fn later() { assert_eq!(a, 4); }\n",
            "    let _ = ok || { assert_eq!(a, 5); true };\n",
            "    let _ = { assert!(d); true } && e;\n",
            "    for x in { assert!(g); v } {\n",
            "        assert_eq!(x, 6);\n",
            "    }\n",
            "}\n",
        ));
        let under: Vec<(u64, Option<String>)> = file.functions[0]
            .assertions
            .iter()
            .map(|a| {
                let under = a.text.split_once(" [only under: ").map(|(_, u)| u);
                (
                    a.line,
                    under.map(|u| u.strip_suffix(']').unwrap().to_string()),
                )
            })
            .collect();
        let under_if = Some("if { assert!(b); c } {".to_string());
        let under_for = Some("for x in { assert!(g); v } {".to_string());
        assert_eq!(
            under,
            [
                (3, None),
                (4, None),
                (5, under_if),
                (7, Some("|| assert_eq!(a, 3)".to_string())),
                (8, Some("fn later() { assert_eq!(a, 4); }".to_string())),
                (9, Some("ok || { assert_eq!(a, 5); true }".to_string())),
                (10, None),
                (11, None),
                (12, under_for),
            ]
        );
        assert!(file.functions[0].assertions[2].strength == Strength::Weak);
    }

    /// What may keep a test from failing: `ignore`, `should_panic` (also under `cfg_attr`),
    /// and a build condition other than `cfg(test)`, on the test or a module around it.
    #[test]
    fn skips_and_build_conditions_on_tests_and_their_modules() {
        let file = read(concat!(
            "#[cfg(test)]\n",
            "mod tests {\n",
            "    #[test]\n",
            "    #[cfg(test)]\n",
            "    fn plain() {}\n",
            "    #[test]\n",
            "    #[should_panic(expected = \"boom\")]\n",
            "    fn panics() {}\n",
            "    #[test]\n",
            "    #[cfg_attr(unix, should_panic)]\n",
            "    fn panics_on_unix() {}\n",
            "    #[cfg(unix)]\n",
            "    mod unix {\n",
            "        #[test]\n",
            "        #[cfg(not(miri))]\n",
            "        fn both() {}\n",
            "    }\n",
            "}\n",
        ));
        let skips = crate::evidence::test_source::skip_sites(&file);
        assert_eq!(
            skips,
            [
                ("tests::plain", vec![]),
                (
                    "tests::panics",
                    vec![(7, "#[should_panic(expected = \"boom\")]")]
                ),
                (
                    "tests::panics_on_unix",
                    vec![(10, "#[cfg_attr(unix, should_panic)]")]
                ),
                (
                    "tests::unix::both",
                    vec![(12, "#[cfg(unix)]"), (15, "#[cfg(not(miri))]")]
                ),
            ]
        );
    }

    #[test]
    fn test_functions_in_modules_with_their_attributes() {
        let file = read(
            "fn helper() { assert!(ok()); }\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    // why\n    #[ignore = \"slow\"]\n    fn it_works() {}\n\n    #[tokio::test]\n    async fn async_one() {}\n\n    #[cfg_attr(miri, ignore)]\n    #[test]\n    fn not_under_miri() {}\n\n    fn not_a_test() {}\n\n    mod inner {\n        #[rstest]\n        fn deep() {}\n    }\n}\n",
        );
        let names: Vec<(&str, u64, usize)> = file
            .functions
            .iter()
            .map(|f| (f.name.as_str(), f.line, f.skips.len()))
            .collect();
        assert_eq!(
            names,
            [
                ("tests::it_works", 10, 1),
                ("tests::async_one", 13, 0),
                ("tests::not_under_miri", 17, 1),
                ("tests::inner::deep", 23, 0),
            ]
        );
        assert_eq!(file.helper_assertions, ["assert!(ok())"]);
    }

    #[test]
    fn assertion_macros_are_graded() {
        let file = read(
            "#[test]\nfn t() {\n    assert_eq!(add(1, 2), 3, \"msg {}\", x);\n    assert!(true);\n    assert!(false);\n    assert!(r.is_ok());\n    assert!(a == b);\n    assert!(matches!(x, Some(_)));\n    assert_eq!(x, x);\n    assert!(a.len() == a . len());\n    debug_assert_ne!(a, b);\n    pretty_assertions::assert_eq!(a, b);\n    insta::assert_snapshot!(out);\n    println!(\"assert!(x)\");\n}\n",
        );
        use Strength::*;
        let got: Vec<Strength> = file.functions[0]
            .assertions
            .iter()
            .map(|a| a.strength)
            .collect();
        assert_eq!(
            got,
            [Strong, Strong, Weak, Strong, Strong, Strong, Strong, Strong]
        );
    }

    #[test]
    fn conditions_that_cannot_fail_are_seen_through_or_and_not_and_brackets() {
        let file = read(concat!(
            "#[test]\n",
            "fn t() {\n",
            "    assert!(add(1, 2) == 3 || true);\n",
            "    assert!(true || add(1, 2) == 3);\n",
            "    assert!(!(add(1, 2) != 3) || (1 == 1));\n",
            "    assert!(matches!(add(1, 2), _));\n",
            "    assert!(matches!(add(1, 2), 3 | _));\n",
            "    assert!(add(1, 2) == 3 && true);\n",
            "    assert!(add(1, 2) == 3 || ok);\n",
            "    assert!(!(add(1, 2) != 3));\n",
            "    assert!(matches!(add(1, 2), 3));\n",
            "    assert!(matches!(add(1, 2), _ if false));\n",
            "    assert!(v.iter().any(|x| x == 1 || true));\n",
            "}\n",
        ));
        use Strength::*;
        let got: Vec<(u64, Strength)> = file.functions[0]
            .assertions
            .iter()
            .map(|a| (a.line, a.strength))
            .collect();
        assert_eq!(
            got,
            [
                (8, Strong),
                (9, Weak),
                (10, Strong),
                (11, Strong),
                (12, Strong),
                (13, Weak),
            ]
        );
    }

    #[test]
    fn an_inner_cfg_leaves_every_test_of_its_file_or_module_out_but_cfg_test_does_not() {
        let file = read(concat!(
            "#![cfg(any())]\n",
            "#[test]\n",
            "fn gone() {}\n",
            "mod m {\n",
            "    #![cfg(test)]\n",
            "    #[test]\n",
            "    fn kept() {}\n",
            "}\n",
        ));
        assert_eq!(
            crate::evidence::test_source::skip_sites(&file),
            [
                ("gone", vec![(1, "#![cfg(any())]")]),
                ("m::kept", vec![(1, "#![cfg(any())]")]),
            ]
        );
        let file = read("#![cfg(test)]\n#[test]\nfn kept() {}\n");
        assert_eq!(
            crate::evidence::test_source::skip_sites(&file),
            [("kept", vec![])]
        );
    }

    #[test]
    fn exiting_the_process_is_as_early_as_a_return() {
        for exit in ["std::process::exit(0);", "process::exit(0);", "exit(0);"] {
            let file = read(&format!(
                "#[test]\nfn t() {{\n    {exit}\n    assert_eq!(f(), 1);\n}}\n"
            ));
            let early: Vec<u64> = file.functions[0]
                .early_returns
                .iter()
                .map(|s| s.line)
                .collect();
            assert_eq!(early, [3], "{exit}");
        }
        // `exit` in a closure that may never run, or after the assertion, is not early.
        let file = read(
            "#[test]\nfn t() {\n    let f = || std::process::exit(1);\n    assert_eq!(g(), 1);\n    std::process::exit(0);\n}\n",
        );
        assert!(file.functions[0].early_returns.is_empty());
    }

    #[test]
    fn returns_and_tolerances() {
        let file = read(
            "#[test]\nfn t() {\n    if skip() { return; }\n    let f = || { return 1; };\n    assert!((a - b).abs() < 1e-9);\n    assert!(-0.5 < x);\n    assert_relative_eq!(a, b, epsilon = 1e-6);\n    assert_approx_eq!(a, b, 0.01);\n    std::thread::sleep(Duration::from_millis(10));\n    return;\n}\n",
        );
        let f = &file.functions[0];
        let early: Vec<u64> = f.early_returns.iter().map(|s| s.line).collect();
        assert_eq!(early, [3]);
        let got: Vec<(String, f64)> = f
            .tolerances
            .iter()
            .map(|t| (t.key.clone(), t.value))
            .collect();
        let want: Vec<(String, f64)> = [
            ("(a-b).abs() <", 1e-9),
            ("x >", -0.5),
            ("assert_relative_eq(a).epsilon", 1e-6),
            ("assert_approx_eq(a).2", 0.01),
            ("std::thread::sleep(from_millis)", 0.01),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), *v))
        .collect();
        assert_eq!(got, want);
    }
}
