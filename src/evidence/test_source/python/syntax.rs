//! What every part of the Python reader reads the tree with: the statements whose blocks
//! hold definitions, a call's callee and arguments, an expression without its brackets.

use tree_sitter::Node;

use crate::evidence::test_source::Source;

/// Statements whose blocks may hold definitions that pytest still collects.
pub(crate) const COMPOUND: &[&str] = &[
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

/// The normalised text of a call's callee (`self.assertEqual`, `pytest.raises`). A callee
/// longer than `LONG_CALLEE` bytes (`x.f().f()...g`, each call of a chain naming all the
/// calls before it) is `….g`: no name guard matches is that long, and reading the whole
/// text for each call of a chain of thousands made a crafted file cost minutes.
pub(crate) fn callee(src: &Source, call: Node) -> String {
    let Some(function) = call.child_by_field_name("function") else {
        return String::new();
    };
    if function.byte_range().len() > LONG_CALLEE {
        let last = function
            .child_by_field_name("attribute")
            .map(|a| src.normal(a))
            .unwrap_or_default();
        return format!("….{last}");
    }
    src.normal(function)
}

/// The longest callee read whole, in bytes.
const LONG_CALLEE: usize = 256;

/// `node` without the brackets around it; `None` for empty brackets.
pub(crate) fn unparenthesized(mut node: Node) -> Option<Node> {
    while node.kind() == "parenthesized_expression" {
        node = first_named(node)?;
    }
    Some(node)
}

/// The first named child of `node` that is not a comment (one may stand first in brackets:
/// `(  # why` on the line before the expression).
pub(crate) fn first_named(node: Node) -> Option<Node> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .find(|child| child.kind() != "comment")
}

/// The positional arguments and the keyword arguments (name, value) of a call.
pub(crate) fn arguments<'t>(
    src: &Source,
    call: Node<'t>,
) -> (Vec<Node<'t>>, Vec<(String, Node<'t>)>) {
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
