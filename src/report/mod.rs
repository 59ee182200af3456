//! What users see: the decision and findings as text for people or one JSON object for
//! merge queues. Owns formatting only.

use std::fmt::Write as _;

use serde::Serialize;

use crate::engine::audit::History;
use crate::error::ErrorReport;
pub mod finding;

use crate::engine::score::{RunnerExit, Stats};
use crate::report::finding::{Code, Decision, Finding, reasons};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// The outcome of one `guard` run that judged something.
#[derive(Debug, Clone)]
pub struct Report {
    /// Where the policy in force came from (a path, or a revision and path).
    pub policy: String,
    pub findings: Vec<Finding>,
    pub stats: Stats,
    /// Why part of the input could not be judged. With no finding the decision is unknown
    /// (exit 2); with findings it is REJECT (exit 1), and this still says what was not judged.
    pub unjudged: Option<ErrorReport>,
    /// The judged commits, for `check` and the hooks.
    pub history: Option<History>,
    /// How the test command ended, for `run`.
    pub runner: Option<RunnerExit>,
    /// Findings the ledger asks to show without rejecting.
    pub warnings: Vec<Finding>,
}

#[derive(Serialize)]
struct JsonReport<'a> {
    /// `null` when nothing rejects and something could not be judged (exit 2).
    decision: Option<Decision>,
    score: Option<u8>,
    reasons: Vec<Code>,
    findings: &'a [Finding],
    /// Findings shown without rejecting (a `[baseline]` rule set to "warn"); only when any.
    #[serde(skip_serializing_if = "<[Finding]>::is_empty")]
    warnings: &'a [Finding],
    /// Where the policy came from: `check` and the hooks only (`score`'s keys are exactly
    /// the contract's plus `junit`).
    #[serde(skip_serializing_if = "Option::is_none")]
    policy: Option<&'a str>,
    /// Whether test outcomes were judged (a JUnit report was scored): `check` only, where
    /// reports are optional.
    #[serde(skip_serializing_if = "Option::is_none")]
    tests_scored: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a ErrorReport>,
    /// The test command `run` ran and how it ended: `run` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    runner: Option<&'a RunnerExit>,
    #[serde(flatten)]
    stats: &'a Stats,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    history: Option<&'a History>,
}

/// The JSON object of a `score`, `check` or `run` that stopped at `error` before judging
/// anything: no decision, no findings, and only the figures in `stats` that are known (and,
/// for `run`, how the runner ended, once it did).
pub fn render_failure_json(
    stats: &Stats,
    error: &ErrorReport,
    runner: Option<&RunnerExit>,
) -> String {
    pretty(&JsonReport {
        decision: None,
        score: None,
        reasons: Vec::new(),
        findings: &[],
        warnings: &[],
        policy: None,
        tests_scored: None,
        error: Some(error),
        runner,
        stats,
        history: None,
    })
}

fn pretty(json: &impl Serialize) -> String {
    let mut out = serde_json::to_string_pretty(json).expect("report serializes");
    out.push('\n');
    out
}

/// An optional figure as text: `-` when it was not computed.
/// `n` and the noun in the right number: `count(1, "file")` is "1 file", `count(2, "file")`
/// "2 files" (every noun guard counts takes a plain `s`).
pub fn count<N: TryInto<u64> + std::fmt::Display + Copy>(n: N, noun: &str) -> String {
    if n.try_into().ok() == Some(1) {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

fn figure(value: Option<impl std::fmt::Display>) -> String {
    value.map_or("-".to_string(), |v| v.to_string())
}

impl Report {
    /// Any finding rejects; with none, input that could not be judged leaves no decision
    /// (`None`, exit 2).
    pub fn decision(&self) -> Option<Decision> {
        if self.findings.is_empty() && self.unjudged.is_some() {
            return None;
        }
        Some(Decision::from_findings(&self.findings))
    }

    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Text => self.render_text(),
            Format::Json => self.render_json(),
        }
    }

    pub fn render_json(&self) -> String {
        let decision = self.decision();
        pretty(&JsonReport {
            decision,
            score: decision.map(|d| u8::from(d == Decision::Merge)),
            reasons: reasons(&self.findings),
            findings: &self.findings,
            warnings: &self.warnings,
            policy: self.history.as_ref().map(|_| self.policy.as_str()),
            tests_scored: self.history.as_ref().map(|_| self.stats.tests_scored()),
            error: self.unjudged.as_ref(),
            runner: self.runner.as_ref(),
            stats: &self.stats,
            history: self.history.as_ref(),
        })
    }

    /// One block per judged commit: who made it, whether it counts as an agent's and why,
    /// its signature, and the protected paths it changes.
    pub fn render_commits(&self) -> String {
        let mut out = String::new();
        let Some(h) = &self.history else { return out };
        for c in &h.commits {
            let _ = writeln!(out, "commit {} {:?} by {}", c.short, c.subject, c.author);
            match &c.agent {
                Some(why) => {
                    let _ = writeln!(out, "  agent: {why}");
                }
                None => {
                    let _ = writeln!(out, "  human");
                }
            }
            if let Some(sig) = &c.signature {
                let _ = writeln!(out, "  signature: {}", sig.describe());
            }
            for change in &c.protected_changes {
                let _ = writeln!(out, "  {} {}", change.kind.describe(), change.path);
            }
        }
        out
    }

    pub fn render_text(&self) -> String {
        let mut out = String::new();
        for f in &self.findings {
            render_finding(&mut out, f);
        }
        for w in &self.warnings {
            let mut line = String::new();
            render_finding(&mut line, w);
            out.push_str(&line.replacen("error[", "warning[", 1));
        }
        if let Some(h) = &self.history {
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
        if let Some(e) = &self.unjudged {
            let _ = writeln!(out, "error: {e}");
        }
        let s = &self.stats;
        let _ = writeln!(out, "policy: {}", self.policy);
        if let Some(runner) = &self.runner {
            let _ = writeln!(
                out,
                "runner: `{}` {}",
                runner.command_line(),
                runner.describe()
            );
        }
        match &s.junit {
            // `check` scores tests only when given reports: say so when it was not.
            Some(j) if j.files == 0 && self.history.is_some() => {
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
        let findings = count(self.findings.len(), "finding");
        let _ = match self.decision() {
            Some(decision) => writeln!(
                out,
                "decision: {} (score {}, {findings}, today {} UTC)",
                decision.as_str(),
                u8::from(decision == Decision::Merge),
                s.today_utc
            ),
            None => writeln!(
                out,
                "decision: none, cannot judge (no score, {findings}, today {} UTC)",
                s.today_utc
            ),
        };
        out
    }
}

/// `error[code]: path (test): message` and a `help:` line.
pub fn render_finding(out: &mut String, f: &Finding) {
    let _ = write!(out, "error[{}]: ", f.code);
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
    if let Some(path) = &f.path {
        let _ = write!(out, "{}: ", one_line(path));
    }
    let _ = writeln!(out, "{}", one_line(&f.message));
    if let Some(help) = &f.help {
        let _ = writeln!(out, "  help: {}", one_line(help));
    }
}

/// `text` with control characters (newlines, colour codes) turned into spaces: what a report or
/// commit under judgement wrote never reaches a terminal as more than one line of text.
pub fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::count;

    #[test]
    fn counts_take_the_singular_only_for_one() {
        assert_eq!(count(0usize, "file"), "0 files");
        assert_eq!(count(1usize, "file"), "1 file");
        assert_eq!(count(2u64, "active lease"), "2 active leases");
        assert_eq!(count(1u64, "ref update"), "1 ref update");
    }
}
