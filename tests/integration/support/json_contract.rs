//! Every JSON report the suite sees is checked against `docs/report.schema.json`, the
//! published contract: a run with `--format json` whose stdout does not validate fails the
//! test that made it.

use std::sync::OnceLock;

fn validator() -> &'static jsonschema::Validator {
    static VALIDATOR: OnceLock<jsonschema::Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/report.schema.json");
        let text = std::fs::read_to_string(path).expect("docs/report.schema.json");
        let schema: serde_json::Value = serde_json::from_str(&text).expect("the schema is JSON");
        jsonschema::validator_for(&schema).expect("the schema compiles")
    })
}

/// Panics, naming what is wrong, when `stdout` is not one JSON report of the contract.
#[track_caller]
pub fn check(stdout: &str) {
    let value: serde_json::Value = serde_json::from_str(stdout).unwrap_or_else(|e| {
        panic!("--format json printed something that is not JSON ({e}):\n{stdout}")
    });
    let errors: Vec<String> = validator()
        .iter_errors(&value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "the JSON report does not match docs/report.schema.json:\n{}\n{stdout}",
        errors.join("\n")
    );
}

/// Checks `stdout` when `args` ask for JSON.
#[track_caller]
pub fn check_if_json(args: &[&str], stdout: &str) {
    if args.windows(2).any(|w| w == ["--format", "json"]) || args.contains(&"--format=json") {
        check(stdout);
    }
}
