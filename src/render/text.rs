//! The text report people read: one `error[code]:` block per finding, the judged range, the
//! figures and the decision line.

use std::fmt::Write as _;

use crate::render::{one_line, place};
use crate::report::{Decision, Finding, Kind, Report};
use crate::wording::count;

/// `report` as text.
pub fn report(report: &Report) -> String {
    match report.kind {
        Kind::Gate => gate(report),
        Kind::Lint => lint(report),
    }
}

fn gate(report: &Report) -> String {
    let mut out = String::new();
    for f in &report.findings {
        finding(&mut out, f);
    }
    for w in &report.warnings {
        labelled(&mut out, "warning", w);
    }
    if let Some(h) = &report.history {
        for fc in &h.policy_changes {
            let _ = writeln!(out, "change: {} {}:", fc.commit, fc.path);
            for c in &fc.changes {
                let _ = writeln!(out, "  {c}");
            }
            for line in &fc.excerpt {
                let _ = writeln!(out, "    {line}");
            }
        }
        // Counted over the commits that change protected paths, which every report
        // describes (the text report does not read the other commit objects).
        let protected: Vec<_> = h
            .commits
            .iter()
            .filter(|c| !c.protected_changes.is_empty())
            .collect();
        let agents = protected.iter().filter(|c| c.agent.is_some()).count();
        let _ = writeln!(
            out,
            "range: {} ({}; protected paths changed in {}, {agents} of them by agents)",
            h.range,
            count(h.judged, "commit"),
            count(protected.len(), "commit"),
        );
    }
    if let Some(e) = &report.unjudged {
        let _ = writeln!(out, "error: {e}");
    }
    let s = &report.stats;
    let _ = writeln!(
        out,
        "policy: {}",
        report
            .policy
            .as_ref()
            .map_or("-".to_string(), |p| p.describe())
    );
    if let Some(runner) = &report.runner {
        let _ = writeln!(
            out,
            "runner: `{}` {}",
            runner.command_line(),
            runner.describe()
        );
    }
    match &s.junit {
        // `check` scores tests only when given reports: say so when it was not.
        Some(j) if j.files == 0 && report.history.is_some() => {
            let _ = writeln!(out, "tests: no test evidence scored (pass --junit)");
        }
        Some(j) => {
            let _ = writeln!(
                out,
                "junit: {}, {}, {} ({} passed, {} failed, {}, {} skipped)",
                count(j.files, "file"),
                count(j.cases, "case"),
                count(j.tests, "test"),
                j.passed,
                j.failed,
                count(j.errors, "error"),
                j.skipped
            );
        }
        None => {
            let _ = writeln!(
                out,
                "tests: not scored (the input above could not be judged)"
            );
        }
    }
    let coverage = s
        .proven_coverage_percent
        .map_or("-".to_string(), |p| format!("{p:.2}%"));
    let floor = s
        .min_proven_coverage_percent
        .map_or("-".to_string(), |p| format!("{p}%"));
    let _ = writeln!(
        out,
        "collected: {}; leases: {} active, {} expired; properties failed or not run: {}; fixtures changed: {}; proven coverage: {coverage} (floor {floor})",
        figure(s.collected_tests),
        figure(s.active_leases),
        figure(s.expired_leases),
        figure(s.property_failures),
        figure(s.fixture_digest_delta),
    );
    let findings = count(report.findings.len(), "finding");
    let _ = match report.decision() {
        Some(decision) => writeln!(
            out,
            "decision: {}{} (score {}, {findings}, today {} UTC)",
            decision.as_str(),
            super::not_enforced(report),
            u8::from(decision == Decision::Merge),
            s.today_utc
        ),
        None => writeln!(
            out,
            "decision: none, cannot judge{} (no score, {findings}, today {} UTC)",
            super::not_enforced(report),
            s.today_utc
        ),
    };
    out
}

/// One block per judged commit: who made it, whether it counts as an agent's and why,
/// its signature, and the protected paths it changes.
pub fn commits(report: &Report) -> String {
    let mut out = String::new();
    let Some(h) = &report.history else { return out };
    for c in &h.commits {
        // Names, reasons and paths are the commits' own: one inert line each.
        let _ = writeln!(
            out,
            "commit {} {:?} by {}",
            c.short,
            c.subject,
            one_line(&c.author)
        );
        match &c.agent {
            Some(why) => {
                let _ = writeln!(out, "  agent: {}", one_line(why));
            }
            None => {
                let _ = writeln!(out, "  human");
            }
        }
        if let Some(sig) = &c.signature {
            let _ = writeln!(out, "  signature: {}", one_line(&sig.describe()));
        }
        for change in &c.protected_changes {
            let _ = writeln!(
                out,
                "  {} {}",
                change.kind.describe(),
                one_line(&change.path)
            );
        }
    }
    out
}

/// `error[code]: path (test): message` and a `help:` line.
pub fn finding(out: &mut String, f: &Finding) {
    labelled(out, "error", f);
}

/// A finding under `label` (`error`, or `warning` for one the ledger only shows).
fn labelled(out: &mut String, label: &str, f: &Finding) {
    let _ = write!(out, "{label}[{}]: ", f.code);
    if let Some(commit) = &f.commit {
        match &f.subject {
            Some(subject) => {
                let _ = write!(out, "{commit} {subject:?}: ");
            }
            None => {
                let _ = write!(out, "{commit}: ");
            }
        }
    }
    // Paths, test ids and messages carry text from the reports and commits under judgement: a
    // newline there would print lines that look like guard's own.
    if let Some(place) = place(f) {
        let _ = write!(out, "{}: ", one_line(&place));
    }
    let _ = writeln!(out, "{}", one_line(&f.message));
    if let Some(help) = &f.help {
        let _ = writeln!(out, "  help: {}", one_line(help));
    }
}

fn figure(value: Option<impl std::fmt::Display>) -> String {
    value.map_or("-".to_string(), |v| v.to_string())
}

/// `lint`'s text: the findings, the advice, and one summary line.
fn lint(report: &Report) -> String {
    let mut out = String::new();
    for f in &report.findings {
        finding(&mut out, f);
    }
    for a in &report.advice {
        let _ = write!(
            out,
            "warning: {}: {}\n  help: {}\n",
            a.path, a.message, a.help
        );
    }
    if let Some(e) = &report.unjudged {
        let _ = writeln!(out, "error: {e}");
    }
    let s = &report.stats;
    let _ = writeln!(
        out,
        "lint: {}{} ({}; {}, {} expired, {} in the lockfile)",
        if !report.findings.is_empty() {
            count(report.findings.len(), "problem")
        } else if report.unjudged.is_some() {
            // Nothing found is not "ok" when the policy could not be read.
            "cannot judge".to_string()
        } else {
            "ok".to_string()
        },
        match report.advice.len() {
            0 => String::new(),
            n => format!(", {}", count(n, "warning")),
        },
        report
            .policy
            .as_ref()
            .map_or("-".to_string(), |p| p.describe()),
        count(s.active_leases.unwrap_or(0), "active lease"),
        s.expired_leases.unwrap_or(0),
        count(report.fixtures.unwrap_or(0), "fixture")
    );
    out
}
