//! What keeps a test that is written from being collected: its name bound again later, a
//! `__test__` set false, a class pytest does not collect (read as skips of those tests).

use std::collections::HashMap;

use tree_sitter::Node;

use super::syntax::COMPOUND;
use crate::evidence::test_source::{PythonTests, Site, Source, line};

/// What keeps each test function of the file from being collected though it is written: the
/// statements of its module or class, after it, that bind its name again (another `def
/// test_x`, `test_x = None`, `test_x = pytest.mark.skip(test_x)`, `del test_x`), that set
/// `test_x.__test__`, and a `__test__ = ...` of its module or class. pytest collects what the
/// name holds when the module has run. By the id of each function's node.
pub(crate) fn unbound_later(src: &Source, root: Node) -> HashMap<usize, Vec<Site>> {
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
pub(crate) fn bound_names(src: &Source, statement: Node) -> Vec<(String, bool)> {
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
                if attribute.as_deref() == Some("__test__")
                    && let Some(object) = object.filter(|o| o.kind() == "identifier")
                {
                    out.push((src.text(object), true));
                }
            }
            _ => {}
        }
    }
    out
}

/// Why pytest does not collect the tests of a class, if it does not: a class with no base
/// (so not a `unittest.TestCase`), or only bases of its file that are none (`by_base`
/// false), whose name `python_classes` does not match, or that defines `__init__` (pytest
/// warns and skips it). As good as a skip of each of its tests.
pub(crate) fn not_collected(
    src: &Source,
    class: Node,
    name: &str,
    body: Node,
    names: &PythonTests,
    by_base: bool,
) -> Option<Site> {
    let bases = class
        .child_by_field_name("superclasses")
        .map(|b| src.normal(b))
        .unwrap_or_default();
    if by_base && !matches!(bases.as_str(), "" | "()" | "(object)") {
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
