//! The reference documentation is generated from the code, or compared with it whole: the
//! README's reason-code table and `docs/reason-codes.md` cannot drift from `Code`, and the
//! JSON Schema the suite validates reports against can refuse a report.

use std::path::Path;

use merge_guard::render::markdown;

fn repo_file(rel: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Writes `text` to `rel` when `GUARD_REGENERATE_DOCS=1`, else asserts it is already there.
fn generated(rel: &str, text: &str) {
    if std::env::var_os("GUARD_REGENERATE_DOCS").is_some_and(|v| v == "1") {
        std::fs::write(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel), text).unwrap();
        return;
    }
    assert!(
        repo_file(rel) == text,
        "{rel} is not what the code generates; run `GUARD_REGENERATE_DOCS=1 cargo test --test integration docs` and review the diff"
    );
}

#[test]
fn readme_reason_code_table_is_the_codes_whole() {
    let readme = repo_file("README.md");
    let marker = "<!-- reason-codes: this table is checked against the code by a test -->\n";
    let start = readme
        .find(marker)
        .expect("README has the reason-code marker")
        + marker.len();
    let end = readme[start..]
        .find("\n\n")
        .map_or(readme.len(), |i| start + i + 1);
    let table = &readme[start..end];
    let want = markdown::reason_code_table();
    if std::env::var_os("GUARD_REGENERATE_DOCS").is_some_and(|v| v == "1") {
        let text = format!("{}{want}{}", &readme[..start], &readme[end..]);
        std::fs::write(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"),
            text,
        )
        .unwrap();
        return;
    }
    if table != want {
        // Name the first row that differs, to say what to change.
        let row = table
            .lines()
            .zip(want.lines())
            .find(|(a, b)| a != b)
            .map(|(a, b)| format!("README: {a}\ncode:   {b}"))
            .unwrap_or_else(|| "the tables differ in length".to_string());
        panic!(
            "the README's reason-code table is not the codes' (meaning and fix from src/report/finding.rs):\n{row}"
        );
    }
}

#[test]
fn reason_codes_page_is_generated_from_the_codes() {
    generated("docs/reason-codes.md", &markdown::reason_codes_page());
}

#[test]
fn every_code_has_a_meaning_and_a_fix() {
    for code in merge_guard::report::Code::ALL {
        assert!(!code.description().is_empty(), "{code}");
        assert!(!code.fix().is_empty(), "{code}");
        assert!(
            !code.description().ends_with('.') && !code.fix().ends_with('.'),
            "{code}: the page adds the full stop"
        );
    }
}

/// The schema the suite validates against can fail: a report with a key left out, a finding
/// with a wrong field, or a decision that disagrees with the findings is refused.
#[test]
fn the_report_schema_refuses_what_breaks_the_contract() {
    let p = crate::scenario::clean();
    let run = p.guard(&["score", "--junit", "junit.xml", "--format", "json"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let good: serde_json::Value = run.json();
    crate::support::json_contract::check(&good.to_string());
    let refused = |bad: serde_json::Value, why: &str| {
        let text = bad.to_string();
        let caught = std::panic::catch_unwind(|| crate::support::json_contract::check(&text));
        assert!(
            caught.is_err(),
            "the schema accepts a report where {why}: {text}"
        );
    };
    let mut omitted = good.clone();
    omitted.as_object_mut().unwrap().remove("error");
    refused(omitted, "`error` is omitted instead of null");
    let mut merge_with_findings = good.clone();
    merge_with_findings["findings"] = serde_json::json!([{
        "code": "fixture_digest", "message": "m", "path": null, "line": null, "column": null,
        "commit": null, "subject": null, "test": null, "help": null
    }]);
    refused(merge_with_findings, "MERGE has a finding");
    let mut placeholder = good.clone();
    placeholder["policy"] = serde_json::json!("qa/merge_ledger.toml");
    refused(placeholder, "`policy` is display text");
    let mut version = good;
    version["schema_version"] = serde_json::json!(2);
    refused(version, "the version is not 1");
}
