//! Markdown: the reference tables that the README and `docs/` hold, generated from the code
//! so that they cannot drift from it (a test compares them).

use std::fmt::Write as _;

use crate::report::Code;

/// The reason-code table: `| code | meaning | fix |`, one row per code in `Code::ALL` order.
pub fn reason_code_table() -> String {
    let mut out = String::from("| code | meaning | fix |\n|---|---|---|\n");
    for code in Code::ALL {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} |",
            code.as_str(),
            code.description(),
            code.fix()
        );
    }
    out
}

/// `docs/reason-codes.md`: the table, then one section per code (a stable anchor to link a
/// finding to).
pub fn reason_codes_page() -> String {
    let mut out = String::from(
        "# Reason codes\n\n\
         <!-- generated from src/report/finding.rs by `GUARD_REGENERATE_DOCS=1 cargo test --test integration docs`; do not edit -->\n\n\
         Every finding has one of these codes (JSON `findings[].code`, `reasons`). Any finding \
         rejects: the decision is REJECT and the exit code 1. The codes are part of the \
         command-line contract: they are never renamed.\n\n",
    );
    out.push_str(&reason_code_table());
    for code in Code::ALL {
        let _ = write!(
            out,
            "\n## `{}`\n\n{}.\n\nFix: {}.\n",
            code.as_str(),
            capitalise(code.description()),
            code.fix()
        );
    }
    out
}

fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
