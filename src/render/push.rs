//! A push report as the pusher reads it (`error:`, `hint:` and `warning:` lines, one per
//! line, the same for both hooks but for what each can say: a server rejects, a developer's
//! clone predicts), and as one JSON line for a server that logs it.

use serde::Serialize;

use crate::render::hook::{Messages, warning_line};
use crate::report::Decision;
use crate::report::push::{Hook, PushFailure, PushOutcome, PushReport};
use crate::wording::count;

/// The lines the hook writes on standard error.
pub fn text(report: &PushReport, msg: Messages) -> String {
    let mut out = String::new();
    for r in &report.refs {
        for line in &r.signers {
            out.push_str(&format!("guard: {}: {line}\n", r.name));
        }
        for note in &r.notes {
            out.push_str(&msg.warning(&format!("{}: {note}", r.name)));
        }
        for w in &r.warnings {
            out.push_str(&msg.warning(&format!("{}: {}", r.name, warning_line(w))));
        }
        for f in &r.findings {
            out.push_str(&msg.finding_in(&r.name, f, report.enforced(f)));
        }
        if let Some(e) = &r.unjudged {
            let line = format!("{}: cannot judge: {e}", r.name);
            out.push_str(&match report.evaluate {
                true => msg.warning(&line),
                false => msg.error(&line),
            });
        }
    }
    let outcome = report.outcome();
    let waived = outcome == PushOutcome::AcceptedInEvaluateMode;
    let server = report.hook == Hook::PreReceive;
    // What stopped the push from being judged ref by ref: a warning when evaluate mode
    // accepts it anyway.
    let say = |text: &str| match waived {
        true => msg.warning(text),
        false => msg.error(text),
    };
    match &report.failure {
        Some(PushFailure::Input(e)) => {
            out.push_str(&msg.error(&format!("guard: {e}")));
            if server {
                out.push_str(&msg.hint("guard reads git's pre-receive input; run it from a hook"));
            }
        }
        Some(PushFailure::Timeout(limit)) => {
            let text =
                format!("guard: checking the push took longer than {limit:?} (guard.timeout)");
            match waived {
                true => out.push_str(&msg.warning(&text)),
                false => {
                    out.push_str(&msg.error(&format!("{text}; push rejected")));
                    out.push_str(&msg.hint(
                        "retry; if it keeps happening, ask the server admin to raise guard.timeout",
                    ));
                }
            }
        }
        Some(PushFailure::Internal) => out.push_str(&match waived {
            true => msg.warning("guard: internal error while checking the push"),
            false => msg.error("guard: internal error while checking the push; push rejected"),
        }),
        Some(PushFailure::Error(e)) => {
            out.push_str(&say(&format!("guard: {e}")));
            if !waived && server {
                out.push_str(&msg.hint("the push could not be judged, so it is rejected"));
            }
        }
        Some(PushFailure::AuditLog(e)) => {
            out.push_str(&msg.error(&format!("guard: {e}")));
            out.push_str(&msg.hint("guard must remember a deleted protected ref, so that re-creating it is judged; ask a server admin to fix guard.auditLog"));
        }
        None => {}
    }
    match (outcome, server) {
        (PushOutcome::AcceptedInEvaluateMode, true) => out.push_str(&msg.warning(
            "guard: evaluate mode (guard.mode, or the ledger's mode): this push would be rejected; it is accepted",
        )),
        (PushOutcome::AcceptedInEvaluateMode, false) => out.push_str(&msg.warning(
            "guard: evaluate mode (the ledger's mode): the server would reject this push; it goes on",
        )),
        (PushOutcome::Rejected, _) if report.failure.is_some() => {}
        (PushOutcome::Rejected, true) => {
            out.push_str(&msg.error("guard: push rejected by the merge ledger"))
        }
        (PushOutcome::Rejected, false) => {
            out.push_str(&msg.error("guard: the server's merge ledger would reject this push"));
            out.push_str(&msg.hint("fix the findings above; `git push --no-verify` skips this local check, not the server's"));
        }
        (PushOutcome::CannotJudge, _) if report.failure.is_some() => {}
        (PushOutcome::CannotJudge, true) => {
            out.push_str(&msg.error("guard: push rejected: part of it could not be judged"))
        }
        (PushOutcome::CannotJudge, false) => out.push_str(&msg.error(
            "guard: part of this push could not be judged; the server judges it too",
        )),
        (PushOutcome::Accepted, _) => {}
    }
    // Every push that goes on says what was judged (in evaluate mode too: it is accepted).
    if report.failure.is_none()
        && matches!(
            outcome,
            PushOutcome::Accepted | PushOutcome::AcceptedInEvaluateMode
        )
    {
        let verb = match server {
            true => "accepted",
            false => "pass",
        };
        out.push_str(&format!(
            "guard: {} {verb}, {} judged\n",
            count(report.refs.len(), "ref update"),
            count(report.commits(), "commit")
        ));
    }
    out
}

/// The push report as one JSON object on one line (a log's line): `schema_version`, `hook`,
/// `outcome`, `decision` (what it would be under enforcement; `null` when it could not be
/// judged), `enforced`, `exit_code`, `refs` (each: `ref`, `commits`, `findings`, `warnings`
/// as in `guard check --format json`, `notes`, `signers`, `cannot_judge`, `deleted`) and
/// `failure` (`null`, or `kind` and `detail`).
pub fn json(report: &PushReport) -> String {
    #[derive(Serialize)]
    struct PushJson<'a> {
        schema_version: u32,
        hook: Hook,
        outcome: PushOutcome,
        decision: Option<Decision>,
        enforced: bool,
        exit_code: i32,
        refs: &'a [crate::report::push::RefVerdict],
        failure: &'a Option<PushFailure>,
    }
    let value = PushJson {
        schema_version: crate::render::json::SCHEMA_VERSION,
        hook: report.hook,
        outcome: report.outcome(),
        decision: report.decision(),
        enforced: !report.evaluate,
        exit_code: report.exit_code(),
        refs: &report.refs,
        failure: &report.failure,
    };
    let mut line = crate::render::one_line_json(&value);
    line.push('\n');
    line
}
