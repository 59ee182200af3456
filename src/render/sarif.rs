//! SARIF 2.1.0 for code scanning (GitHub's `upload-sarif`, Azure DevOps, IDEs): one `rule` per
//! reason code with its meaning and fix, one `result` per finding with its rule, level,
//! message, place and a `partialFingerprints` entry that stays the same across runs (no
//! line number in it) so that code scanning tracks a finding instead of opening a new one.
//! A run that could not be judged is a failed invocation with the error as its
//! notification. Validated with Microsoft's SARIF Multitool in the tests.

use serde_json::{Value, json};

use crate::render::{ADVICE, CANNOT_JUDGE, Entry, Severity, entries, fingerprint};
use crate::report::{Code, Report};

/// Where the rules are documented, per code (`#code` is the code's section).
const HELP_URI: &str = "https://github.com/merge-guard/merge-guard/blob/main/docs/reason-codes.md";

/// `report` as one SARIF log.
pub fn report(report: &Report) -> String {
    let mut rules: Vec<Value> = Code::ALL
        .iter()
        .map(|code| {
            rule(
                code.as_str(),
                code.description(),
                code.fix(),
                "error",
                &format!("{HELP_URI}#{}", code.as_str()),
            )
        })
        .collect();
    rules.push(rule(
        ADVICE,
        "lint: a valid policy that may not mean what its author meant",
        "read the advice; it does not reject",
        "warning",
        HELP_URI,
    ));
    let rule_index = |id: &str| rules.iter().position(|r| r["id"] == id);

    let mut results = Vec::new();
    let mut notifications = Vec::new();
    for entry in entries(report) {
        if entry.severity == Severity::CannotJudge {
            notifications.push(json!({
                "level": "error",
                "message": { "text": text_of(&entry) },
                "locations": [location(&entry)],
                "descriptor": { "id": CANNOT_JUDGE },
            }));
            continue;
        }
        let index = rule_index(entry.code).expect("every entry's code has a rule");
        results.push(json!({
            "ruleId": entry.code,
            "ruleIndex": index,
            "level": if entry.severity == Severity::Error { "error" } else { "warning" },
            "message": { "text": text_of(&entry) },
            "locations": [location(&entry)],
            "partialFingerprints": { "guardFinding/v1": fingerprint(&entry.identity) },
        }));
    }
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": "merge-guard",
                    "semanticVersion": env!("CARGO_PKG_VERSION"),
                    "informationUri": "https://github.com/merge-guard/merge-guard",
                    "rules": rules,
                }
            },
            "invocations": [{
                "executionSuccessful": report.unjudged.is_none(),
                "toolExecutionNotifications": notifications,
            }],
            "originalUriBaseIds": {
                "SRCROOT": { "description": { "text": "the repository's top level" } }
            },
            "results": results,
        }]
    });
    let mut out = crate::render::pretty_json(&log);
    out.push('\n');
    out
}

fn rule(id: &str, description: &str, fix: &str, level: &str, help_uri: &str) -> Value {
    json!({
        "id": id,
        "name": pascal_case(id),
        "shortDescription": { "text": sentence(description) },
        "fullDescription": { "text": sentence(description) },
        "help": { "text": format!("Fix: {}", sentence(fix)) },
        "helpUri": help_uri,
        "defaultConfiguration": { "level": level },
    })
}

/// The message with its help, as one text.
fn text_of(entry: &Entry) -> String {
    match entry.help {
        Some(help) => format!("{} (help: {help})", sentence(&entry.message)),
        None => sentence(&entry.message),
    }
}

fn location(entry: &Entry) -> Value {
    let mut physical = json!({ "artifactLocation": artifact(&entry.path) });
    if let Some(line) = entry.line {
        let mut region = json!({ "startLine": line });
        if let Some(column) = entry.column {
            region["startColumn"] = json!(column);
        }
        physical["region"] = region;
    }
    json!({ "physicalLocation": physical })
}

/// A path as a SARIF artifact location: relative to the repository (`SRCROOT`), or a
/// `file://` URI for an absolute path (an artifact directory on a server).
fn artifact(path: &str) -> Value {
    use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
    // What a URI path may not hold as is (RFC 3986), `/` kept as the separator.
    const PATH: &AsciiSet = &CONTROLS
        .add(b' ')
        .add(b'"')
        .add(b'#')
        .add(b'%')
        .add(b'<')
        .add(b'>')
        .add(b'?')
        .add(b'[')
        .add(b'\\')
        .add(b']')
        .add(b'^')
        .add(b'`')
        .add(b'{')
        .add(b'|')
        .add(b'}');
    let encoded = utf8_percent_encode(path, PATH).to_string();
    if path.starts_with('/') {
        json!({ "uri": format!("file://{encoded}") })
    } else {
        json!({ "uri": encoded, "uriBaseId": "SRCROOT" })
    }
}

/// SARIF messages are sentences: a capital is not required, a full stop is.
fn sentence(text: &str) -> String {
    let text = text.trim_end();
    if text.ends_with(['.', '!', '?']) {
        text.to_string()
    } else {
        format!("{text}.")
    }
}

/// `agent_edit_protected` as `AgentEditProtected` (a rule's `name`).
fn pascal_case(id: &str) -> String {
    id.split('_')
        .map(|word| {
            let mut chars = word.chars();
            match chars.next() {
                Some(first) => first.to_uppercase().chain(chars).collect::<String>(),
                None => String::new(),
            }
        })
        .collect()
}
