//! `guard deselect`: the runner arguments that leave active frozen tests out of a run, so
//! coverage is measured only by tests that prove something. Refuses, like the second
//! article's `emit-deselect`, when leases are expired, name unknown tests, or exceed the
//! budget: a deselect list built on a broken ledger would hide tests.

use std::collections::HashMap;
use std::path::Path;

use anyhow::bail;

use crate::cli::args::{DeselectArgs, Runner};
use crate::evidence::collected::read_collected;
use crate::exit;
use crate::policy::freeze::today_utc;
use crate::policy::ledger::Policy;
use crate::policy::load::load_freeze;
use crate::source::WorkTree;
use crate::testid::{collected_keys, id_key};
use crate::wording::count;
use crate::workspace::Workspace;

pub fn run(ws: &Workspace, args: &DeselectArgs) -> anyhow::Result<i32> {
    let policy = Policy::load(ws, args.policy.ledger.as_deref())?;
    let freeze = load_freeze(&WorkTree { ws }, &policy)?;
    let today = today_utc();
    let (active, expired) = freeze.classify(today);
    let freeze_path = Path::new(&policy.freeze.file);

    if freeze.reject_if_expired && !expired.is_empty() {
        let mut msg = format!(
            "{}: {} (today is {today} UTC):",
            freeze_path.display(),
            count(expired.len(), "expired lease")
        );
        for lease in &expired {
            let date = lease.expires.map(|d| d.to_string()).unwrap_or_default();
            msg.push_str(&format!(
                "\n  line {}: {} expired {date}",
                lease.line, lease.nodeid
            ));
        }
        msg.push_str(
            "\n  help: fix the tests and remove their leases, or have the owners renew them",
        );
        bail!(msg);
    }

    let collected = read_collected(&args.collected)?;
    let mut by_key: HashMap<String, &str> = HashMap::new();
    for id in &collected {
        for key in collected_keys(id) {
            by_key.entry(key).or_insert(id.as_str());
        }
    }
    let mut matched = Vec::with_capacity(active.len());
    let mut unknown = Vec::new();
    for lease in &active {
        match by_key.get(&id_key(&lease.nodeid)) {
            Some(id) => matched.push(*id),
            None => unknown.push(*lease),
        }
    }
    if !unknown.is_empty() {
        let mut msg = format!(
            "{}: {} {} tests that {} does not list:",
            freeze_path.display(),
            count(unknown.len(), "lease"),
            if unknown.len() == 1 { "names" } else { "name" },
            args.collected.display()
        );
        for lease in &unknown {
            msg.push_str(&format!("\n  line {}: {}", lease.line, lease.nodeid));
        }
        msg.push_str("\n  help: correct the ids to collected node ids, or remove the leases");
        bail!(msg);
    }
    if let Some(budget) = freeze
        .budget(policy.freeze.max_active_leases)
        .filter(|&b| active.len() as u64 > u64::from(b))
    {
        bail!(
            "{}: freeze budget exceeded: {}, budget {budget}\n  help: fix flaky tests and drop their leases",
            freeze_path.display(),
            count(active.len(), "active lease")
        );
    }

    for arg in runner_args(args.runner, &matched) {
        outln!("{arg}");
    }
    Ok(exit::MERGE)
}

/// One argument per element (print one per line: a pytest @argsfile, or `mapfile -t`).
pub fn runner_args(runner: Runner, ids: &[&str]) -> Vec<String> {
    if ids.is_empty() {
        return Vec::new();
    }
    match runner {
        Runner::Pytest => ids.iter().map(|id| format!("--deselect={id}")).collect(),
        Runner::Nextest => {
            let terms: Vec<String> = ids
                .iter()
                .map(|id| match id.split_once(' ') {
                    Some((binary, test)) => format!("(binary_id(={binary}) & test(={test}))"),
                    None => format!("test(={id})"),
                })
                .collect();
            vec!["-E".to_string(), format!("not ({})", terms.join(" | "))]
        }
        Runner::Cargo => {
            let mut out = vec!["--exact".to_string()];
            for id in ids {
                let test = id.split_once(' ').map_or(*id, |(_, t)| t);
                out.push("--skip".to_string());
                out.push(test.to_string());
            }
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runner_arguments() {
        assert_eq!(
            runner_args(Runner::Pytest, &["tests/test_a.py::test_b[1]"]),
            vec!["--deselect=tests/test_a.py::test_b[1]"]
        );
        assert_eq!(
            runner_args(Runner::Nextest, &["tiny tests::a", "tests::b"]),
            vec![
                "-E",
                "not ((binary_id(=tiny) & test(=tests::a)) | test(=tests::b))"
            ]
        );
        assert_eq!(
            runner_args(Runner::Cargo, &["tiny tests::a"]),
            vec!["--exact", "--skip", "tests::a"]
        );
        assert!(runner_args(Runner::Nextest, &[]).is_empty());
    }
}
