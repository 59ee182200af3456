//! A small, complete project that `guard score` merges, which each test breaks one way.

use crate::support::{Project, sha256sum};

pub const LEDGER: &str = r#"# qa/merge_ledger.toml (the first article's ledger, plus seeds and a lease budget)
[properties]
paths = ["tests/properties/"]
required = true
seeds = "tests/properties/seeds"

[fixtures]
lockfile = "qa/fixtures.lock.json"
allow_unhashed_new = false

[freeze]
file = "qa/flake_freeze.txt"
passing_frozen_is_error = true
max_active_leases = 2
"#;

pub const PROPERTY_FILE: &str = r#"import json
from pathlib import Path

SEEDS = Path(__file__).parent / "seeds"


def test_roundtrip_on_seeds():
    paths = sorted(SEEDS.glob("*.json"))
    assert paths, "property seed corpus is empty"
    for path in paths:
        payload = json.loads(path.read_text())
        assert json.loads(json.dumps(payload)) == payload
"#;

pub const INVOICE: &str = "{\"net\": 100, \"tax\": 19}\n";
pub const BATCH: &str = "";

/// One `<testcase>`: classname, name, and the child element (`""` for a pass).
pub type Case<'a> = (&'a str, &'a str, &'a str);

pub const PASS: &str = "";
pub const FAIL: &str = r#"<failure message="assert 1 == 2">AssertionError</failure>"#;
pub const ERROR: &str = r#"<error message="fixture failed">boom</error>"#;
pub const SKIP: &str = r#"<skipped type="pytest.skip" message="skip">skipped</skipped>"#;

/// A pytest-style (xunit2) JUnit report of `cases`.
pub fn junit(cases: &[Case]) -> String {
    let mut body = String::new();
    for (classname, name, child) in cases {
        body.push_str(&format!(
            "<testcase classname=\"{classname}\" name=\"{name}\" time=\"0.001\">{child}</testcase>"
        ));
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><testsuites name=\"pytest tests\"><testsuite name=\"pytest\" errors=\"0\" failures=\"0\" skipped=\"0\" tests=\"{}\" time=\"0.1\">{body}</testsuite></testsuites>\n",
        cases.len()
    )
}

/// The cases of a clean run: a property passes, the frozen test fails, others pass.
pub fn clean_cases() -> Vec<Case<'static>> {
    vec![
        (
            "tests.properties.test_codec_roundtrip",
            "test_roundtrip_on_seeds",
            PASS,
        ),
        ("tests.runtime.test_retry", "test_backoff_under_load", FAIL),
        ("tests.test_billing.TestInvoice", "test_total[p-1]", PASS),
        ("tests.test_billing.TestInvoice", "test_total[p-2]", PASS),
        ("tests.test_billing", "test_skipped", SKIP),
    ]
}

/// A project that merges with `score --junit junit.xml`.
pub fn clean() -> Project {
    let p = Project::git();
    p.write("qa/merge_ledger.toml", LEDGER)
        .write(
            "qa/flake_freeze.txt",
            "# known flakes\ntests.runtime.test_retry::test_backoff_under_load\n",
        )
        .write("tests/fixtures/invoice_v3.json", INVOICE)
        .write("tests/fixtures/empty_batch.ndjson", BATCH)
        .write("tests/properties/test_codec_roundtrip.py", PROPERTY_FILE)
        .write("tests/properties/seeds/invoice.json", INVOICE)
        .write("junit.xml", junit(&clean_cases()));
    p.write(
        "qa/fixtures.lock.json",
        format!(
            "{{\n  \"files\": {{\n    \"tests/fixtures/invoice_v3.json\": \"{}\",\n    \"tests/fixtures/empty_batch.ndjson\": \"{}\"\n  }}\n}}\n",
            sha256sum(INVOICE.as_bytes()),
            sha256sum(BATCH.as_bytes())
        ),
    );
    p
}

/// A freeze.toml with the given `(nodeid, expires)` leases and budget line.
pub fn freeze_toml(budget: &str, leases: &[(&str, &str)]) -> String {
    let mut text = format!("version = 1\n{budget}\nreject_if_expired = true\n");
    for (id, expires) in leases {
        text.push_str(&format!(
            "\n[[leases]]\nnodeid = \"{id}\"\nreason = \"timing-dependent under load\"\nowner = \"platform\"\nexpires = \"{expires}\"\n"
        ));
    }
    text
}

/// Switches the clean project to a `qa/freeze.toml` lease file.
pub fn use_freeze_toml(p: &Project, toml: &str) {
    let ledger = LEDGER.replace("qa/flake_freeze.txt", "qa/freeze.toml");
    p.write("qa/merge_ledger.toml", ledger)
        .write("qa/freeze.toml", toml);
}
