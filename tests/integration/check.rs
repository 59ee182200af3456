//! `guard check RANGE`: real repositories built with the `git` command. One test per rule and
//! per indirect-edit kind. Expected values come from the git facts each test sets up (who
//! made which commit, which tree entries differ from which parent), not from guard's output.

use serde_json::{Value, json};

use crate::scenario::{PASS, PROPERTY_FILE, freeze_toml, junit};
use crate::support::{Project, Run, fixture_corpus, hermetic, sha256sum, sha256sum_lockfile};

/// The base ledger: the embedded default's layout, no `[agents]` section (so the built-in
/// agent identities apply), and a `[protect]` glob over CI config.
const LEDGER: &str = r#"version = 1

[properties]
paths = ["tests/properties/"]
seeds = "tests/properties/seeds"

[fixtures]
lockfile = "qa/fixtures.lock.json"
paths = ["tests/fixtures/"]

[freeze]
file = "qa/freeze.toml"

[protect]
paths = [".github/workflows/**"]
"#;

/// The same ledger once a human has decided nobody is an agent.
fn permissive_ledger() -> String {
    format!("{LEDGER}\n[agents]\nemails = []\nnames = []\ntrailers = []\n")
}

const BUDGET: &str = "max_active_leases = 4";
pub(crate) const LEASE: &str = "tests/test_retry.py::test_backoff";
pub(crate) const EXPIRES: &str = "2099-01-31";
const LATER: &str = "2099-06-30";
pub(crate) const NEW_LEASE: &str = "tests/test_parser.py::test_unicode";

pub(crate) const INVOICE: &str = "{\"net\": 100, \"tax\": 19}\n";
pub(crate) const INVOICE_V2: &str = "{\"net\": 100, \"tax\": 21}\n";
pub(crate) const BATCH: &str = "{\"id\": 1}\n{\"id\": 2}\n";
const RETRY_TEST: &str = "def test_backoff():\n    assert backoff(3) >= 0.4\n";

pub(crate) const HUMAN: (&str, &str) = ("Human Dev", "dev@example.com");
pub(crate) const CURSOR: (&str, &str) = ("Cursor Agent", "cursoragent@cursor.com");

/// The lockfile for `(path, contents)` pairs, hashed with coreutils `sha256sum`.
pub(crate) fn lockfile(entries: &[(&str, &str)]) -> String {
    let lines: Vec<String> = entries
        .iter()
        .map(|(path, text)| format!("    \"{path}\": \"{}\"", sha256sum(text.as_bytes())))
        .collect();
    format!("{{\n  \"files\": {{\n{}\n  }}\n}}\n", lines.join(",\n"))
}

fn base_lockfile() -> String {
    lockfile(&[
        ("tests/fixtures/batch.ndjson", BATCH),
        ("tests/fixtures/invoice.json", INVOICE),
    ])
}

/// A repository whose first commit (the base) satisfies its own ledger, and the base's id.
pub(crate) fn repo() -> (Project, String) {
    repo_in(Project::git())
}

/// [`repo`] in the git work tree `p`.
fn repo_in(p: Project) -> (Project, String) {
    p.write("qa/merge_ledger.toml", LEDGER)
        .write("qa/freeze.toml", freeze_toml(BUDGET, &[(LEASE, EXPIRES)]))
        .write("qa/fixtures.lock.json", base_lockfile())
        .write("tests/fixtures/invoice.json", INVOICE)
        .write("tests/fixtures/batch.ndjson", BATCH)
        .write("tests/properties/test_codec_roundtrip.py", PROPERTY_FILE)
        .write("tests/properties/seeds/invoice.json", INVOICE)
        .write("tests/test_retry.py", RETRY_TEST)
        .write(".github/workflows/ci.yml", "on: push\n")
        .write("src/app.py", "VERSION = 1\n");
    let base = p.commit_as(HUMAN, "Start the project\n");
    (p, base)
}

/// Writes the freeze file with `leases` (the budget unchanged).
pub(crate) fn set_leases(p: &Project, leases: &[(&str, &str)]) {
    p.write("qa/freeze.toml", freeze_toml(BUDGET, leases));
}

pub(crate) fn extend_lease(p: &Project) {
    set_leases(p, &[(LEASE, LATER)]);
}

/// An unprotected change.
pub(crate) fn unrelated(p: &Project, file: &str, subject: &str) -> String {
    p.write(file, format!("# {subject}\n"));
    p.commit_as(HUMAN, format!("{subject}\n"))
}

fn check(p: &Project, range: &str) -> Run {
    p.guard_both_walks(&["check", range, "--format", "json"])
}

pub(crate) fn since(base: &str) -> String {
    format!("{base}..HEAD")
}

/// Asserts the exit code and the exact (sorted) reasons of a JSON report.
#[track_caller]
fn expect(run: &Run, code: i32, reasons: &[&str]) {
    assert_eq!(
        run.code, code,
        "exit code\nstdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert_eq!(run.reasons(), reasons, "reasons\nstdout:\n{}", run.stdout);
}

/// The findings with `code`.
fn findings(json: &Value, code: &str) -> Vec<Value> {
    json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == code)
        .cloned()
        .collect()
}

/// The one finding with `code`.
#[track_caller]
fn only(json: &Value, code: &str) -> Value {
    let found = findings(json, code);
    assert_eq!(found.len(), 1, "one {code} finding in {json:#}");
    found.into_iter().next().unwrap()
}

/// The `protected_changes` of the judged commit `id`.
#[track_caller]
fn changes_of(json: &Value, id: &str) -> Value {
    json["commits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("commit {id} not judged: {json:#}"))["protected_changes"]
        .clone()
}

fn change(path: &str, kind: &str, class: &str) -> Value {
    json!({"path": path, "kind": kind, "class": class, "case_variant_of": null, "detail": null})
}

// ---------------------------------------------------------------------------------------
// Baseline and rule 1: agents may not edit protected paths.

#[test]
fn unrelated_human_commit_merges_under_the_base_policy() {
    let (p, base) = repo();
    let c = unrelated(&p, "src/app.py", "Bump the version");
    let run = check(&p, &since(&base));
    expect(&run, 0, &[]);
    let json = run.json();
    assert_eq!(json["decision"], "MERGE");
    assert_eq!(
        json["policy"],
        json!({"source": "commit", "path": "qa/merge_ledger.toml", "commit": p.short(&base)})
    );
    assert_eq!(
        (json["base"].as_str(), json["tip"].as_str()),
        (Some(&*base), Some(&*c))
    );
    assert_eq!(json["commits"].as_array().unwrap().len(), 1);
    assert_eq!(changes_of(&json, &c), json!([]));
    assert!(json["commits"][0]["agent"].is_null(), "{json:#}");
    assert_eq!(json["active_leases"], 1);
    assert_eq!(json["agent_added_leases"], 0);
}

#[test]
fn agent_author_adding_a_lease_is_rejected_and_counted() {
    let (p, base) = repo();
    set_leases(&p, &[(LEASE, EXPIRES), (NEW_LEASE, EXPIRES)]);
    let c = p.commit_as(CURSOR, "Freeze the flaky parser test\n");
    let run = check(&p, &since(&base));
    expect(&run, 1, &["agent_added_lease", "agent_edit_protected"]);
    let json = run.json();
    assert_eq!(json["agent_added_leases"], 1);
    let edit = only(&json, "agent_edit_protected");
    assert_eq!(edit["path"], "qa/freeze.toml");
    assert_eq!(edit["commit"], p.short(&c));
    assert_eq!(edit["subject"], "Freeze the flaky parser test");
    assert_eq!(only(&json, "agent_added_lease")["test"], NEW_LEASE);
    assert_eq!(
        changes_of(&json, &c),
        json!([change("qa/freeze.toml", "modified", "freeze")])
    );
    let why = json["commits"][0]["agent"].as_str().unwrap();
    assert!(why.contains("cursoragent@cursor.com"), "{why}");

    // Text: each finding names the rule, the commit (short id and subject), the path, the fix.
    let text = p.guard_both_walks(&["check", &since(&base)]);
    assert_eq!(text.code, 1);
    let head = format!(
        "error[agent_edit_protected]: {} \"Freeze the flaky parser test\": qa/freeze.toml: ",
        p.short(&c)
    );
    let at = text
        .stdout
        .find(&head)
        .unwrap_or_else(|| panic!("{head:?} in\n{}", text.stdout));
    let next = text.stdout[at..].lines().nth(1).unwrap();
    assert!(next.trim_start().starts_with("help: "), "{next}");
    assert!(text.stdout.contains("decision: REJECT"), "{}", text.stdout);
}

#[test]
fn coauthored_by_claude_marks_the_commit_as_an_agents() {
    let (p, base) = repo();
    extend_lease(&p);
    // The author is the human; the trailer says an agent wrote it.
    p.commit_as(
        HUMAN,
        "Extend the retry lease\n\nCo-authored-by: Claude <noreply@anthropic.com>\n",
    );
    let run = check(&p, &since(&base));
    expect(&run, 1, &["agent_edit_protected"]);
    let json = run.json();
    assert_eq!(json["agent_added_leases"], 0, "an extension adds no lease");
    let why = json["commits"][0]["agent"].as_str().unwrap();
    assert!(why.contains("noreply@anthropic.com"), "{why}");
}

#[test]
fn agent_cannot_switch_off_the_lease_rule_in_its_own_commit() {
    let (p, base) = repo();
    // The tip's freeze file says agents may add leases; the base's, which is in force, not.
    p.write(
        "qa/freeze.toml",
        freeze_toml(
            &format!("{BUDGET}\nreject_if_agent_adds_lease = false"),
            &[(LEASE, EXPIRES), (NEW_LEASE, EXPIRES)],
        ),
    );
    p.commit_as(CURSOR, "Freeze the flaky parser test\n");
    let run = check(&p, &since(&base));
    expect(&run, 1, &["agent_added_lease", "agent_edit_protected"]);
    assert_eq!(run.json()["agent_added_leases"], 1);
}

#[test]
fn agent_committer_alone_makes_the_commit_an_agents() {
    let (p, base) = repo();
    extend_lease(&p);
    p.git_cmd(&["add", "-A"]);
    // Authored by the human, committed by the agent (e.g. an agent rebasing human work).
    let status = hermetic(std::process::Command::new("git"), p.root())
        .env("GIT_COMMITTER_NAME", CURSOR.0)
        .env("GIT_COMMITTER_EMAIL", CURSOR.1)
        .args(["commit", "-q", "-m", "Extend the retry lease"])
        .current_dir(p.root())
        .status()
        .unwrap();
    assert!(status.success());
    let run = check(&p, &since(&base));
    expect(&run, 1, &["agent_edit_protected"]);
    let why = run.json()["commits"][0]["agent"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(why.starts_with("committer e-mail"), "{why}");
}

#[test]
fn human_commit_needs_the_trailer_of_every_class_it_changes() {
    let (p, base) = repo();
    p.write("tests/fixtures/invoice.json", INVOICE_V2).write(
        "qa/fixtures.lock.json",
        lockfile(&[
            ("tests/fixtures/batch.ndjson", BATCH),
            ("tests/fixtures/invoice.json", INVOICE_V2),
        ]),
    );
    extend_lease(&p);
    p.commit_as(HUMAN, "New tax rate, longer lease\n\nFixture-Lock: human\n");
    let run = check(&p, &since(&base));
    expect(&run, 1, &["missing_human_trailer"]);
    assert_eq!(
        only(&run.json(), "missing_human_trailer")["path"],
        "qa/freeze.toml"
    );
    p.git_cmd(&[
        "commit",
        "-q",
        "--amend",
        "-m",
        "New tax rate, longer lease\n\nFixture-Lock: human\nFreeze-Lease: human",
    ]);
    expect(&check(&p, &since(&base)), 0, &[]);
}

#[test]
fn strict_mode_treats_every_commit_as_an_agents() {
    let (p, _) = repo();
    p.write(
        "qa/merge_ledger.toml",
        format!("{LEDGER}\n[agents]\ndefault = \"agent\"\n"),
    );
    let strict = p.commit_as(HUMAN, "Strict mode\n\nLedger-Change: human\n");
    extend_lease(&p);
    // Without a signature nothing proves a human, so the trailer is a forgery too, and the
    // commit is named as an unsigned one.
    p.commit_as(HUMAN, "Extend the retry lease\n\nFreeze-Lease: human\n");
    let run = check(&p, &since(&strict));
    expect(
        &run,
        1,
        &[
            "agent_edit_protected",
            "forged_human_trailer",
            "unsigned_human_commit",
        ],
    );
}

// ---------------------------------------------------------------------------------------
// Rule 2: a human change to a protected path needs its class's trailer in the trailer block.

/// A human extends the lease with `message` (raw bytes) and `-c` settings; checks the range.
fn human_lease_extension(message: &[u8], config: &[&str]) -> (Project, String, Run) {
    let (p, base) = repo();
    extend_lease(&p);
    p.git_cmd(&["add", "-A"]);
    let c = p.commit_index_as(HUMAN, message, config);
    let run = check(&p, &since(&base));
    if run.code != 2 {
        // The edit was seen whatever the verdict: the trailer decides, not a missed change.
        assert_eq!(
            changes_of(&run.json(), &c),
            json!([change("qa/freeze.toml", "modified", "freeze")])
        );
    }
    (p, c, run)
}

#[test]
fn human_freeze_edit_with_its_trailer_merges() {
    let (_, _, run) = human_lease_extension(
        b"Extend the retry lease\n\nThe fix lands next sprint.\n\nFreeze-Lease: human\n",
        &[],
    );
    expect(&run, 0, &[]);
}

#[test]
fn human_freeze_edit_without_a_trailer_is_missing_one() {
    let (p, c, run) = human_lease_extension(b"Extend the retry lease\n", &[]);
    expect(&run, 1, &["missing_human_trailer"]);
    let f = only(&run.json(), "missing_human_trailer");
    assert_eq!(f["path"], "qa/freeze.toml");
    assert_eq!(f["commit"], p.short(&c));
    assert!(
        f["help"].as_str().unwrap().contains("Freeze-Lease: human"),
        "{f}"
    );
}

#[test]
fn trailer_in_the_body_is_not_in_the_trailer_block() {
    let (_, _, run) = human_lease_extension(
        b"Extend the retry lease\n\nFreeze-Lease: human\n\nThe fix lands next sprint.\n",
        &[],
    );
    expect(&run, 1, &["missing_human_trailer"]);
    // The message says the trailer was found, and why it does not count.
    let f = only(&run.json(), "missing_human_trailer");
    let message = f["message"].as_str().unwrap();
    assert!(
        message.contains("`Freeze-Lease: human` is in the message but not in its trailer block"),
        "{message}"
    );
    let help = f["help"].as_str().unwrap();
    assert!(help.contains("last paragraph"), "{help}");
}

#[test]
fn trailer_of_another_class_does_not_approve_a_freeze_edit() {
    let (_, _, run) =
        human_lease_extension(b"Extend the retry lease\n\nFixture-Lock: human\n", &[]);
    expect(&run, 1, &["missing_human_trailer"]);
}

#[test]
fn trailer_keys_are_case_insensitive() {
    let (_, _, run) =
        human_lease_extension(b"Extend the retry lease\n\nfreeze-LEASE: human\n", &[]);
    expect(&run, 0, &[]);
}

#[test]
fn crlf_message_trailer_counts_and_paragraphs_still_split() {
    let (p, _, run) = human_lease_extension(
        b"Extend the retry lease\r\n\r\nThe fix lands next sprint.\r\n\r\nFreeze-Lease: human\r\n",
        &[],
    );
    assert!(
        p.git_cmd(&["cat-file", "commit", "HEAD"])
            .contains("lease\r\n"),
        "the commit really has CRLF line ends"
    );
    expect(&run, 0, &[]);

    // A CRLF blank line still ends a paragraph: a trailer before the body is not a trailer.
    let (_, _, run) = human_lease_extension(
        b"Extend the retry lease\r\n\r\nFreeze-Lease: human\r\n\r\nThe fix lands next sprint.\r\n",
        &[],
    );
    expect(&run, 1, &["missing_human_trailer"]);
    let f = only(&run.json(), "missing_human_trailer");
    assert_eq!(
        f["subject"], "Extend the retry lease",
        "no CR in the subject"
    );
}

#[test]
fn latin1_message_trailer_counts() {
    let (p, _, run) = human_lease_extension(
        b"Verl\xe4ngere die Frist f\xfcr den Retry-Test\n\nFreeze-Lease: human\n",
        &["i18n.commitEncoding=ISO-8859-1"],
    );
    let raw = p.git_cmd(&["cat-file", "commit", "HEAD"]);
    assert!(raw.contains("\nencoding ISO-8859-1\n"), "{raw}");
    assert!(raw.contains('\u{FFFD}'), "the message is not UTF-8: {raw}");
    expect(&run, 0, &[]);
}

// ---------------------------------------------------------------------------------------
// Rule 3: an agent commit with a human trailer is a forgery.

#[test]
fn agent_commit_with_the_human_trailer_is_forged() {
    let (p, base) = repo();
    extend_lease(&p);
    let c = p.commit_as(
        CURSOR,
        "Extend the retry lease\n\nFreeze-Lease: human\nSigned-off-by: Cursor Agent <cursoragent@cursor.com>\n",
    );
    let run = check(&p, &since(&base));
    expect(&run, 1, &["agent_edit_protected", "forged_human_trailer"]);
    let forged = only(&run.json(), "forged_human_trailer");
    assert_eq!(forged["commit"], p.short(&c));
    // A single commit is judged by its first parent's policy: the same verdict.
    let single = check(&p, "HEAD");
    expect(
        &single,
        1,
        &["agent_edit_protected", "forged_human_trailer"],
    );
    assert_eq!(
        single.json()["policy"],
        json!({"source": "commit", "path": "qa/merge_ledger.toml", "commit": p.short(&base)})
    );
}

#[test]
fn agent_commit_with_another_classes_human_trailer_is_forged_too() {
    // DESIGN: "An agent commit that carries a human trailer is a forgery"; the trailer need
    // not be the one the changed path's class asks for.
    let (p, base) = repo();
    extend_lease(&p);
    p.commit_as(CURSOR, "Extend the retry lease\n\nFixture-Lock: human\n");
    let run = check(&p, &since(&base));
    expect(&run, 1, &["agent_edit_protected", "forged_human_trailer"]);
    let forged = only(&run.json(), "forged_human_trailer");
    assert!(
        forged["message"]
            .as_str()
            .unwrap()
            .contains("Fixture-Lock: human"),
        "{forged}"
    );
}

// ---------------------------------------------------------------------------------------
// Policy from the base.

#[test]
fn range_that_edits_the_ledger_is_judged_by_the_ledger_it_replaces() {
    let (p, base) = repo();
    p.write("qa/merge_ledger.toml", permissive_ledger());
    let allow = p.commit_as(HUMAN, "Nobody is an agent\n\nLedger-Change: human\n");
    extend_lease(&p);
    let c = p.commit_as(CURSOR, "Extend the retry lease\n");

    // Under the base's ledger the Cursor commit is an agent's.
    let run = check(&p, &since(&base));
    expect(&run, 1, &["agent_edit_protected"]);
    let json = run.json();
    assert_eq!(only(&json, "agent_edit_protected")["commit"], p.short(&c));
    assert_eq!(
        changes_of(&json, &allow),
        json!([change("qa/merge_ledger.toml", "modified", "ledger")]),
        "the ledger change itself is a human's with its trailer"
    );
    let text = p.guard_both_walks(&["check", &since(&base)]);
    assert_eq!(text.code, 1);
    let named = format!("policy: qa/merge_ledger.toml at {}", p.short(&base));
    assert!(text.stdout.contains(&named), "{}", text.stdout);

    // Control: under the permissive ledger the same commit is a human's without a trailer,
    // so the verdict above can only have come from the base's ledger.
    let run = check(&p, &format!("{allow}..HEAD"));
    expect(&run, 1, &["missing_human_trailer"]);
    assert_eq!(
        run.json()["policy"],
        json!({"source": "commit", "path": "qa/merge_ledger.toml", "commit": p.short(&allow)})
    );
}

#[test]
fn three_dot_range_takes_the_policy_from_the_merge_base() {
    let (p, base) = repo();
    p.git_cmd(&["checkout", "-q", "-b", "feature"]);
    extend_lease(&p);
    let c = p.commit_as(CURSOR, "Extend the retry lease\n");
    p.git_cmd(&["checkout", "-q", "main"]);
    p.write("qa/merge_ledger.toml", permissive_ledger());
    let allow = p.commit_as(HUMAN, "Nobody is an agent\n\nLedger-Change: human\n");

    // main...feature: feature's commits since the merge base (the base), under its ledger.
    let run = check(&p, "main...feature");
    expect(&run, 1, &["agent_edit_protected"]);
    let json = run.json();
    assert_eq!(json["base"], base);
    assert_eq!(json["commits"].as_array().unwrap().len(), 1);
    assert_eq!(json["commits"][0]["id"], c);

    // main..feature: the same commit, under main's (permissive) ledger.
    let run = check(&p, "main..feature");
    expect(&run, 1, &["missing_human_trailer"]);
    assert_eq!(run.json()["base"], allow);
}

// ---------------------------------------------------------------------------------------
// Merges and fast-forwards.

/// Branches `side` off HEAD, runs `on_side` there, adds an unrelated commit on main, and
/// returns the side commit made by `on_side`.
pub(crate) fn diverge(p: &Project, on_side: impl FnOnce(&Project) -> String) -> String {
    p.git_cmd(&["checkout", "-q", "-b", "side"]);
    let side = on_side(p);
    p.git_cmd(&["checkout", "-q", "main"]);
    unrelated(p, "src/app.py", "Main work");
    side
}

#[test]
fn evil_merge_that_changes_the_lockfile_needs_a_trailer() {
    let (p, base) = repo();
    diverge(&p, |p| unrelated(p, "src/side.py", "Side work"));
    p.git_cmd(&["merge", "-q", "--no-ff", "--no-commit", "side"]);
    // Same entries, other bytes: differs from both parents, made in the merge itself.
    let compact = base_lockfile().replace(['\n', ' '], "");
    p.write("qa/fixtures.lock.json", format!("{compact}\n"));
    p.git_cmd(&["add", "qa/fixtures.lock.json"]);
    p.git_cmd(&["commit", "-q", "--no-edit"]);
    let merge = p.rev("HEAD");
    assert_eq!(p.rev("HEAD^2"), p.rev("side"), "a real two-parent merge");

    let run = check(&p, &since(&base));
    expect(&run, 1, &["missing_human_trailer"]);
    let json = run.json();
    let f = only(&json, "missing_human_trailer");
    assert_eq!(f["commit"], p.short(&merge));
    assert_eq!(f["path"], "qa/fixtures.lock.json");
    assert_eq!(f["subject"], "Merge branch 'side'");
    assert_eq!(
        changes_of(&json, &merge),
        json!([change("qa/fixtures.lock.json", "modified", "fixtures")])
    );
}

#[test]
fn merge_bringing_a_trailered_side_change_merges() {
    let (p, base) = repo();
    let side = diverge(&p, |p| {
        extend_lease(p);
        p.commit_as(HUMAN, "Extend the retry lease\n\nFreeze-Lease: human\n")
    });
    p.git_cmd(&[
        "merge",
        "-q",
        "--no-ff",
        "-m",
        "Merge branch 'side'",
        "side",
    ]);
    let merge = p.rev("HEAD");

    let run = check(&p, &since(&base));
    expect(&run, 0, &[]);
    let json = run.json();
    assert_eq!(json["commits"].as_array().unwrap().len(), 3);
    assert_eq!(
        changes_of(&json, &side),
        json!([change("qa/freeze.toml", "modified", "freeze")])
    );
    // The merge differs from its first parent at qa/freeze.toml but not from the side it
    // brings the change from: not a change made in the merge.
    assert_eq!(changes_of(&json, &merge), json!([]));
}

#[test]
fn agent_edit_on_a_side_branch_is_named_not_the_merge() {
    let (p, base) = repo();
    let side = diverge(&p, |p| {
        extend_lease(p);
        p.commit_as(CURSOR, "Extend the retry lease\n")
    });
    p.git_cmd(&[
        "merge",
        "-q",
        "--no-ff",
        "-m",
        "Merge branch 'side'",
        "side",
    ]);
    let merge = p.rev("HEAD");

    let run = check(&p, &since(&base));
    expect(&run, 1, &["agent_edit_protected"]);
    let json = run.json();
    let f = only(&json, "agent_edit_protected");
    assert_eq!(f["commit"], p.short(&side));
    assert_ne!(f["commit"], p.short(&merge));
    assert_eq!(f["path"], "qa/freeze.toml");
}

#[test]
fn agent_merge_resolving_the_freeze_file_adds_no_lease_of_its_own() {
    let (p, base) = repo();
    p.git_cmd(&["checkout", "-q", "-b", "side"]);
    set_leases(&p, &[(LEASE, EXPIRES), (NEW_LEASE, EXPIRES)]);
    let side = p.commit_as(CURSOR, "Freeze the parser test\n");
    p.git_cmd(&["checkout", "-q", "main"]);
    const CACHE: &str = "tests/test_cache.py::test_eviction";
    set_leases(&p, &[(LEASE, EXPIRES), (CACHE, EXPIRES)]);
    p.commit_as(HUMAN, "Freeze the cache test\n\nFreeze-Lease: human\n");
    // The agent merges and resolves the freeze file to hold both sides' leases: a change
    // made in the merge (it differs from both parents) that adds no lease of its own.
    p.git_cmd(&["merge", "-q", "--no-commit", "-s", "ours", "side"]);
    set_leases(
        &p,
        &[(LEASE, EXPIRES), (CACHE, EXPIRES), (NEW_LEASE, EXPIRES)],
    );
    p.git_cmd(&["add", "qa/freeze.toml"]);
    p.git_as(CURSOR, &["commit", "-q", "--no-edit"]);
    let merge = p.rev("HEAD");

    let run = check(&p, &since(&base));
    expect(&run, 1, &["agent_added_lease", "agent_edit_protected"]);
    let json = run.json();
    assert_eq!(
        json["agent_added_leases"], 1,
        "{NEW_LEASE} was added once, on the side"
    );
    let added = only(&json, "agent_added_lease");
    assert_eq!(
        (&added["commit"], &added["test"]),
        (&json!(p.short(&side)), &json!(NEW_LEASE))
    );
    let edits: Vec<Value> = findings(&json, "agent_edit_protected")
        .iter()
        .map(|f| f["commit"].clone())
        .collect();
    assert_eq!(edits, vec![json!(p.short(&side)), json!(p.short(&merge))]);
}

#[test]
fn lease_added_in_an_agent_merge_is_the_merges() {
    let (p, base) = repo();
    diverge(&p, |p| unrelated(p, "src/side.py", "Side work"));
    p.git_cmd(&["merge", "-q", "--no-ff", "--no-commit", "side"]);
    set_leases(&p, &[(LEASE, EXPIRES), (NEW_LEASE, EXPIRES)]);
    p.git_cmd(&["add", "qa/freeze.toml"]);
    p.git_as(CURSOR, &["commit", "-q", "--no-edit"]);
    let merge = p.rev("HEAD");

    let run = check(&p, &since(&base));
    expect(&run, 1, &["agent_added_lease", "agent_edit_protected"]);
    let json = run.json();
    assert_eq!(json["agent_added_leases"], 1);
    assert_eq!(only(&json, "agent_added_lease")["commit"], p.short(&merge));
}

#[test]
fn agent_commit_fast_forwarded_from_a_feature_branch_is_judged_for_main() {
    let (p, base) = repo();
    p.git_cmd(&["checkout", "-q", "-b", "feature"]);
    extend_lease(&p);
    let c = p.commit_as(CURSOR, "Extend the retry lease\n");
    p.git_cmd(&["checkout", "-q", "main"]);
    p.git_cmd(&["merge", "-q", "--ff-only", "feature"]);
    assert_eq!(p.rev("main"), c, "main was fast-forwarded");

    // The commit is on `feature` too; it is judged again for main.
    let run = check(&p, &format!("{base}..main"));
    expect(&run, 1, &["agent_edit_protected"]);
    assert_eq!(
        only(&run.json(), "agent_edit_protected")["commit"],
        p.short(&c)
    );
}

// ---------------------------------------------------------------------------------------
// Indirect edits, each by an agent.

#[test]
fn agent_renames_the_lockfile() {
    let (p, base) = repo();
    p.git_cmd(&["mv", "qa/fixtures.lock.json", "qa/fixtures.lock.old"]);
    let c = p.commit_as(CURSOR, "Move the lockfile aside\n");

    // The tip has no lockfile where the base's ledger names it, and the base had one: the
    // range broke it, which is a finding (exit 1), not input guard cannot judge (exit 2).
    let run = check(&p, &since(&base));
    expect(&run, 1, &["agent_edit_protected", "lockfile_missing"]);
    let json = run.json();
    assert_eq!(json["decision"], "REJECT");
    assert!(json["error"].is_null(), "nothing unjudged: {json:#}");
    let missing = only(&json, "lockfile_missing");
    assert_eq!(missing["path"], "qa/fixtures.lock.json");
    // Without a lockfile no fixture was verified: that figure is unknown, not 0.
    assert!(json["fixture_digest_delta"].is_null(), "{json:#}");
    let text = p.guard_both_walks(&["check", &since(&base)]);
    assert_eq!(text.code, 1, "{}{}", text.stdout, text.stderr);
    assert!(
        text.stdout
            .contains("error[lockfile_missing]: qa/fixtures.lock.json: "),
        "{}",
        text.stdout
    );
    assert!(text.stdout.contains("decision: REJECT"), "{}", text.stdout);

    // Once a human moves it back, the range is judged, and the agent's rename is named.
    p.git_cmd(&["mv", "qa/fixtures.lock.old", "qa/fixtures.lock.json"]);
    p.commit_as(HUMAN, "Restore the lockfile\n\nFixture-Lock: human\n");
    let run = check(&p, &since(&base));
    expect(&run, 1, &["agent_edit_protected"]);
    let json = run.json();
    let f = only(&json, "agent_edit_protected");
    assert_eq!(f["commit"], p.short(&c));
    assert_eq!(f["path"], "qa/fixtures.lock.json");
    assert_eq!(
        changes_of(&json, &c),
        json!([change("qa/fixtures.lock.json", "deleted", "fixtures")])
    );
}

#[test]
fn agent_renames_a_fixture_both_sides_count() {
    let (p, base) = repo();
    p.git_cmd(&[
        "mv",
        "tests/fixtures/batch.ndjson",
        "tests/fixtures/batch_v2.ndjson",
    ]);
    let c = p.commit_as(CURSOR, "Rename the batch fixture\n");
    let run = check(&p, &since(&base));
    // Provenance for both sides; the tip's lockfile names a missing file and misses a new one.
    expect(
        &run,
        1,
        &[
            "agent_edit_protected",
            "fixture_missing",
            "fixture_unhashed",
        ],
    );
    let json = run.json();
    assert_eq!(
        changes_of(&json, &c),
        json!([
            change("tests/fixtures/batch.ndjson", "deleted", "fixtures"),
            change("tests/fixtures/batch_v2.ndjson", "added", "fixtures"),
        ])
    );
    let paths: Vec<Value> = findings(&json, "agent_edit_protected")
        .iter()
        .map(|f| f["path"].clone())
        .collect();
    assert_eq!(
        paths,
        vec![
            json!("tests/fixtures/batch.ndjson"),
            json!("tests/fixtures/batch_v2.ndjson")
        ]
    );
}

#[test]
fn agent_deletes_a_fixture() {
    let (p, base) = repo();
    p.git_cmd(&["rm", "-q", "tests/fixtures/invoice.json"]);
    let c = p.commit_as(CURSOR, "Drop the failing input\n");
    let run = check(&p, &since(&base));
    expect(&run, 1, &["agent_edit_protected", "fixture_missing"]);
    let json = run.json();
    assert_eq!(
        only(&json, "agent_edit_protected")["path"],
        "tests/fixtures/invoice.json"
    );
    assert_eq!(
        only(&json, "fixture_missing")["path"],
        "tests/fixtures/invoice.json"
    );
    assert_eq!(
        changes_of(&json, &c),
        json!([change("tests/fixtures/invoice.json", "deleted", "fixtures")])
    );
}

#[test]
fn agent_changes_the_lockfile_mode() {
    let (p, base) = repo();
    p.git_cmd(&["update-index", "--chmod=+x", "qa/fixtures.lock.json"]);
    let c = p.commit_index_as(CURSOR, "Make the lockfile executable\n", &[]);
    let entry = p.git_cmd(&["ls-tree", "HEAD", "qa/fixtures.lock.json"]);
    assert!(entry.starts_with("100755 "), "{entry}");

    let run = check(&p, &since(&base));
    expect(&run, 1, &["agent_edit_protected"]);
    let json = run.json();
    assert_eq!(
        only(&json, "agent_edit_protected")["path"],
        "qa/fixtures.lock.json"
    );
    assert_eq!(
        changes_of(&json, &c),
        json!([change("qa/fixtures.lock.json", "mode_changed", "fixtures")])
    );
}

#[test]
fn agent_adds_case_variants_of_protected_paths() {
    let (p, base) = repo();
    // Through the index, so this works on any file system: on a case-insensitive checkout
    // these entries replace the real files.
    let add = |path: &str, text: &str| {
        p.write(".git/variant", text);
        let blob = p.git_cmd(&["hash-object", "-w", ".git/variant"]);
        let info = format!("100644,{},{path}", blob.trim());
        p.git_cmd(&["update-index", "--add", "--cacheinfo", &info]);
    };
    add("QA/merge_ledger.toml", &permissive_ledger());
    let dir_variant = p.commit_index_as(CURSOR, "Add a ledger\n", &[]);
    add("qa/Freeze.toml", &freeze_toml(BUDGET, &[]));
    let file_variant = p.commit_index_as(CURSOR, "Add a freeze file\n", &[]);

    let run = check(&p, &since(&base));
    expect(&run, 1, &["agent_edit_protected"]);
    let json = run.json();
    assert_eq!(
        changes_of(&json, &dir_variant),
        json!([{"path": "QA/merge_ledger.toml", "kind": "added", "class": "ledger",
                "case_variant_of": "qa/merge_ledger.toml", "detail": null}])
    );
    assert_eq!(
        changes_of(&json, &file_variant),
        json!([{"path": "qa/Freeze.toml", "kind": "added", "class": "freeze",
                "case_variant_of": "qa/freeze.toml", "detail": null}])
    );
    let paths: Vec<(Value, Value)> = findings(&json, "agent_edit_protected")
        .iter()
        .map(|f| (f["commit"].clone(), f["path"].clone()))
        .collect();
    assert_eq!(
        paths,
        vec![
            (json!(p.short(&dir_variant)), json!("QA/merge_ledger.toml")),
            (json!(p.short(&file_variant)), json!("qa/Freeze.toml")),
        ]
    );
}

#[test]
fn agent_edits_a_protect_path() {
    let (p, base) = repo();
    p.write(".github/workflows/ci.yml", "on: push\njobs: {}\n");
    let c = p.commit_as(CURSOR, "Simplify CI\n");
    let run = check(&p, &since(&base));
    expect(&run, 1, &["agent_edit_protected"]);
    let json = run.json();
    assert_eq!(
        only(&json, "agent_edit_protected")["path"],
        ".github/workflows/ci.yml"
    );
    assert_eq!(
        changes_of(&json, &c),
        json!([change(".github/workflows/ci.yml", "modified", "ledger")])
    );
}

#[test]
fn protect_path_needs_the_ledger_trailer_from_a_human() {
    let (p, base) = repo();
    p.write(".github/workflows/ci.yml", "on: [push, pull_request]\n");
    p.commit_as(HUMAN, "Run CI on pull requests\n\nFixture-Lock: human\n");
    expect(&check(&p, &since(&base)), 1, &["missing_human_trailer"]);
    p.git_cmd(&[
        "commit",
        "-q",
        "--amend",
        "-m",
        "Run CI on pull requests\n\nLedger-Change: human",
    ]);
    expect(&check(&p, &since(&base)), 0, &[]);
}

#[test]
fn agent_replaces_a_fixture_with_a_symlink() {
    let (p, base) = repo();
    p.remove("tests/fixtures/invoice.json");
    std::os::unix::fs::symlink("../../src/app.py", p.path("tests/fixtures/invoice.json")).unwrap();
    let c = p.commit_as(CURSOR, "Point the fixture at the app\n");
    let entry = p.git_cmd(&["ls-tree", "HEAD", "tests/fixtures/invoice.json"]);
    assert!(entry.starts_with("120000 "), "{entry}");

    // git stores only a symlink's target text, so the tip has no fixture bytes to verify:
    // the range broke the fixture, a finding naming it (exit 1), beside the agent's edit.
    let run = check(&p, &since(&base));
    expect(&run, 1, &["agent_edit_protected", "fixture_not_regular"]);
    let json = run.json();
    assert!(json["error"].is_null(), "nothing unjudged: {json:#}");
    let f = only(&json, "fixture_not_regular");
    assert_eq!(f["path"], "tests/fixtures/invoice.json");
    assert!(f["message"].as_str().unwrap().contains("symlink"), "{f:#}");

    // After a human restores the file, the agent's symlink commit is still named.
    p.remove("tests/fixtures/invoice.json");
    p.write("tests/fixtures/invoice.json", INVOICE);
    p.commit_as(HUMAN, "Restore the fixture\n\nFixture-Lock: human\n");
    let run = check(&p, &since(&base));
    expect(&run, 1, &["agent_edit_protected"]);
    let json = run.json();
    assert_eq!(only(&json, "agent_edit_protected")["commit"], p.short(&c));
    assert_eq!(
        changes_of(&json, &c),
        json!([change(
            "tests/fixtures/invoice.json",
            "type_changed",
            "fixtures"
        )])
    );
}

#[test]
fn human_adds_a_symlink_to_the_fixture_corpus() {
    let (p, base) = repo();
    std::os::unix::fs::symlink("invoice.json", p.path("tests/fixtures/alias.json")).unwrap();
    p.commit_as(HUMAN, "Alias the invoice\n\nFixture-Lock: human\n");
    // The trailer approves the change; the tip still holds a fixture with no bytes in git.
    let run = check(&p, &since(&base));
    expect(&run, 1, &["fixture_not_regular"]);
    assert_eq!(
        only(&run.json(), "fixture_not_regular")["path"],
        "tests/fixtures/alias.json"
    );
}

#[test]
fn agent_replaces_the_fixture_dir_with_a_submodule() {
    let (p, base) = repo();
    p.git_cmd(&["rm", "-r", "-q", "--cached", "tests/fixtures"]);
    let info = format!("160000,{base},tests/fixtures");
    p.git_cmd(&["update-index", "--add", "--cacheinfo", &info]);
    let c = p.commit_index_as(CURSOR, "Vendor the fixtures\n", &[]);

    // As with a symlink: a submodule holds no fixture bytes in this repository. The corpus
    // directory and each lockfile entry under it are named.
    let run = check(&p, &since(&base));
    expect(&run, 1, &["agent_edit_protected", "fixture_not_regular"]);
    let json = run.json();
    let paths: Vec<Value> = findings(&json, "fixture_not_regular")
        .iter()
        .map(|f| f["path"].clone())
        .collect();
    assert_eq!(
        paths,
        vec![
            json!("tests/fixtures"),
            json!("tests/fixtures/batch.ndjson"),
            json!("tests/fixtures/invoice.json"),
        ]
    );
    assert!(
        findings(&json, "fixture_not_regular")
            .iter()
            .all(|f| f["message"].as_str().unwrap().contains("submodule")),
        "{json:#}"
    );

    // The files are still in the work tree: a human puts them back.
    p.git_cmd(&["rm", "-q", "--cached", "tests/fixtures"]);
    p.git_cmd(&["add", "tests/fixtures"]);
    p.commit_index_as(HUMAN, "Restore the fixtures\n\nFixture-Lock: human\n", &[]);
    let run = check(&p, &since(&base));
    expect(&run, 1, &["agent_edit_protected"]);
    let json = run.json();
    assert_eq!(
        changes_of(&json, &c),
        json!([
            change("tests/fixtures", "type_changed", "fixtures"),
            change("tests/fixtures/batch.ndjson", "deleted", "fixtures"),
            change("tests/fixtures/invoice.json", "deleted", "fixtures"),
        ])
    );
    assert_eq!(findings(&json, "agent_edit_protected").len(), 3);
}

// ---------------------------------------------------------------------------------------
// What the range broke in the tip is a finding with a code (exit 1), even when a human made
// the change with its trailer; exit 2 only when nothing rejects and something could not be
// judged. The base of each range below is valid, so a failure can only be the range's.

#[test]
fn human_deletes_the_lockfile_the_ledger_names() {
    let (p, base) = repo();
    p.git_cmd(&["rm", "-q", "qa/fixtures.lock.json"]);
    p.commit_as(HUMAN, "Drop the lockfile\n\nFixture-Lock: human\n");
    let run = check(&p, &since(&base));
    expect(&run, 1, &["lockfile_missing"]);
    let json = run.json();
    assert_eq!(json["decision"], "REJECT");
    assert_eq!(json["score"], 0);
    assert!(json["error"].is_null(), "{json:#}");
    let f = only(&json, "lockfile_missing");
    assert_eq!(f["path"], "qa/fixtures.lock.json");
    let help = f["help"].as_str().unwrap();
    assert!(
        help.contains(&p.short(&base)),
        "names where to restore it from: {help}"
    );
}

#[test]
fn human_turns_the_lockfile_into_a_symlink() {
    let (p, base) = repo();
    p.git_cmd(&["mv", "qa/fixtures.lock.json", "qa/real.lock.json"]);
    std::os::unix::fs::symlink("real.lock.json", p.path("qa/fixtures.lock.json")).unwrap();
    p.commit_as(HUMAN, "Link the lockfile\n\nFixture-Lock: human\n");
    let run = check(&p, &since(&base));
    expect(&run, 1, &["lockfile_missing"]);
    let f = only(&run.json(), "lockfile_missing");
    assert_eq!(f["path"], "qa/fixtures.lock.json");
    assert!(f["message"].as_str().unwrap().contains("symlink"), "{f:#}");
}

#[test]
fn human_writes_a_lockfile_entry_that_leaves_the_repository() {
    let (p, base) = repo();
    p.write(
        "qa/fixtures.lock.json",
        lockfile(&[
            ("../outside.json", INVOICE),
            ("tests/fixtures/batch.ndjson", BATCH),
            ("tests/fixtures/invoice.json", INVOICE),
        ]),
    );
    p.commit_as(HUMAN, "Hash an outside file\n\nFixture-Lock: human\n");
    let run = check(&p, &since(&base));
    expect(&run, 1, &["lockfile_invalid"]);
    let f = only(&run.json(), "lockfile_invalid");
    assert_eq!(f["path"], "qa/fixtures.lock.json");
    let message = f["message"].as_str().unwrap();
    // The entry is on line 3 of the lockfile this test wrote.
    assert!(
        message.contains("line 3") && message.contains(".."),
        "{message}"
    );
}

#[test]
fn human_deletes_the_freeze_file_the_ledger_names() {
    let (p, base) = repo();
    p.git_cmd(&["rm", "-q", "qa/freeze.toml"]);
    p.commit_as(HUMAN, "Drop the freeze file\n\nFreeze-Lease: human\n");
    let run = check(&p, &since(&base));
    expect(&run, 1, &["freeze_file_missing"]);
    let json = run.json();
    assert_eq!(only(&json, "freeze_file_missing")["path"], "qa/freeze.toml");
    // No lease was counted from a file that is not there.
    assert!(json["active_leases"].is_null(), "{json:#}");
    assert!(json["expired_leases"].is_null(), "{json:#}");
}

#[test]
fn human_writes_a_malformed_freeze_file() {
    let (p, base) = repo();
    p.write(
        "qa/freeze.toml",
        "version = 1\nmax_active_leases = \"many\"\n",
    );
    p.commit_as(HUMAN, "Loosen the budget\n\nFreeze-Lease: human\n");
    let run = check(&p, &since(&base));
    expect(&run, 1, &["freeze_file_invalid"]);
    let f = only(&run.json(), "freeze_file_invalid");
    assert_eq!(f["path"], "qa/freeze.toml");
    assert!(f["message"].as_str().unwrap().contains("line 2"), "{f:#}");
}

#[test]
fn human_deletes_the_ledger() {
    let (p, base) = repo();
    p.git_cmd(&["rm", "-q", "qa/merge_ledger.toml"]);
    p.commit_as(HUMAN, "Drop the ledger\n\nLedger-Change: human\n");
    // The trailer approves the edit, but the tip would hand the next push to the embedded
    // default ledger: the range removed the policy in force.
    let run = check(&p, &since(&base));
    expect(&run, 1, &["ledger_removed"]);
    assert_eq!(
        only(&run.json(), "ledger_removed")["path"],
        "qa/merge_ledger.toml"
    );
}

#[test]
fn the_same_files_broken_in_the_base_are_input_that_cannot_be_judged() {
    // Control for the tests above: when the base itself lacks the lockfile its ledger names,
    // the range broke nothing, and the tip cannot be judged (exit 2, decision null).
    let (p, _) = repo();
    p.git_cmd(&["rm", "-q", "qa/fixtures.lock.json"]);
    let broken = p.commit_as(HUMAN, "Drop the lockfile\n\nFixture-Lock: human\n");
    unrelated(&p, "src/app.py", "Bump the version");
    let run = check(&p, &since(&broken));
    expect(&run, 2, &[]);
    let json = run.json();
    assert!(json["decision"].is_null(), "{json:#}");
    assert_eq!(json["error"]["path"], "qa/fixtures.lock.json");
}

#[test]
fn malformed_junit_alone_cannot_be_judged_and_says_where() {
    let (p, _) = repo();
    p.write(
        "qa/merge_ledger.toml",
        format!("{LEDGER}\n[coverage]\nmin_proven = 60.0\n"),
    );
    let base = p.commit_as(HUMAN, "Set the coverage floor\n\nLedger-Change: human\n");
    unrelated(&p, "src/app.py", "Bump the version");
    // The second line is cut off inside a start tag.
    p.write(
        "junit.xml",
        "<testsuites>\n<testsuite name=\"x\"><testcase classname=\"a\" name=\"b\"",
    );
    let args = ["check", &since(&base), "--junit", "junit.xml"];
    let run = p.guard_both_walks(&[&args[..], &["--format", "json"]].concat());
    expect(&run, 2, &[]);
    let json = run.json();
    assert!(json["decision"].is_null(), "{json:#}");
    assert!(json["score"].is_null(), "{json:#}");
    assert_eq!(json["findings"], json!([]));
    let error = &json["error"];
    assert_eq!(error["path"], "junit.xml");
    assert_eq!(error["line"], 2, "{error:#}");
    assert!(error["column"].as_u64().is_some(), "{error:#}");
    assert!(error["message"].as_str().is_some_and(|m| !m.is_empty()));
    // What was not computed is null; the floor is known from the base's ledger.
    for key in [
        "collected_tests",
        "active_leases",
        "expired_leases",
        "proven_coverage_percent",
        "fixture_digest_delta",
        "property_failures",
        "junit",
    ] {
        assert!(json[key].is_null(), "{key} in {json:#}");
    }
    assert_eq!(json["min_proven_coverage_percent"], 60.0);
    assert_eq!(json["agent_added_leases"], 0, "the commits were judged");

    let text = p.guard_both_walks(&args);
    assert_eq!(text.code, 2, "{}{}", text.stdout, text.stderr);
    assert!(
        text.stdout.contains("error: junit.xml:2:"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout.contains("decision: none, cannot judge"),
        "{}",
        text.stdout
    );
    assert!(!text.stdout.contains("REJECT"), "{}", text.stdout);
}

#[test]
fn a_finding_rejects_even_when_the_junit_cannot_be_read() {
    let (p, base) = repo();
    extend_lease(&p);
    p.commit_as(CURSOR, "Extend the retry lease\n");
    p.write("junit.xml", "<testsuites>\n<testsuite");
    let args = ["check", &since(&base), "--junit", "junit.xml"];
    let run = p.guard_both_walks(&[&args[..], &["--format", "json"]].concat());
    expect(&run, 1, &["agent_edit_protected"]);
    let json = run.json();
    assert_eq!(json["decision"], "REJECT");
    // The part that could not be judged is still said.
    assert_eq!(json["error"]["path"], "junit.xml");
    let text = p.guard_both_walks(&args);
    assert_eq!(text.code, 1, "{}{}", text.stdout, text.stderr);
    assert!(text.stdout.contains("error: junit.xml:"), "{}", text.stdout);
    assert!(text.stdout.contains("decision: REJECT"), "{}", text.stdout);
}

#[test]
fn check_without_junit_says_no_test_evidence_was_scored() {
    let (p, base) = repo();
    unrelated(&p, "src/app.py", "Bump the version");
    let run = check(&p, &since(&base));
    expect(&run, 0, &[]);
    let json = run.json();
    assert_eq!(json["tests_scored"], false);
    assert!(json["property_failures"].is_null(), "{json:#}");
    let text = p.guard_both_walks(&["check", &since(&base)]);
    assert_eq!(text.code, 0, "{}{}", text.stdout, text.stderr);
    assert!(
        text.stdout
            .contains("tests: no test evidence scored (pass --junit)"),
        "{}",
        text.stdout
    );

    // With a report, the tests were scored.
    p.write(
        "junit.xml",
        junit(&[(
            "tests.properties.test_codec_roundtrip",
            "test_roundtrip_on_seeds",
            PASS,
        )]),
    );
    let run = p.guard_both_walks(&[
        "check",
        &since(&base),
        "--junit",
        "junit.xml",
        "--format",
        "json",
    ]);
    let json = run.json();
    assert_eq!(json["tests_scored"], true, "{json:#}");
    assert_eq!(json["property_failures"], 0, "{json:#}");
}

// ---------------------------------------------------------------------------------------
// Rule 4: agents may not add property tests (seeds are protected, but not properties).

#[test]
fn agent_adding_a_property_test_is_rejected() {
    let (p, base) = repo();
    p.write("tests/properties/seeds/refund.json", "{\"net\": -5}\n");
    let seed = p.commit_as(CURSOR, "Add a seed\n");
    p.write("tests/properties/test_refund_roundtrip.py", PROPERTY_FILE);
    let prop = p.commit_as(CURSOR, "Add a property\n");

    let run = check(&p, &format!("{base}..{seed}"));
    expect(&run, 1, &["agent_edit_protected"]);
    assert_eq!(
        changes_of(&run.json(), &seed),
        json!([change(
            "tests/properties/seeds/refund.json",
            "added",
            "properties"
        )])
    );

    let run = check(&p, &format!("{seed}..{prop}"));
    expect(&run, 1, &["agent_added_property", "agent_edit_protected"]);
    let json = run.json();
    for code in ["agent_added_property", "agent_edit_protected"] {
        assert_eq!(
            only(&json, code)["path"],
            "tests/properties/test_refund_roundtrip.py"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Fixtures verified from git (the tip's tree, never the checkout).

#[test]
fn fixture_changed_without_its_lockfile_entry_is_drift() {
    let (p, base) = repo();
    p.write("tests/fixtures/invoice.json", INVOICE_V2);
    p.commit_as(HUMAN, "New tax rate\n\nFixture-Lock: human\n");
    // The checkout is put back: guard must read the committed blob.
    p.write("tests/fixtures/invoice.json", INVOICE);

    let run = check(&p, &since(&base));
    expect(&run, 1, &["fixture_digest"]);
    let json = run.json();
    assert_eq!(json["fixture_digest_delta"], 1);
    let f = only(&json, "fixture_digest");
    assert_eq!(f["path"], "tests/fixtures/invoice.json");
    let message = f["message"].as_str().unwrap();
    assert!(
        message.contains(&sha256sum(INVOICE_V2.as_bytes())),
        "{message}"
    );
}

#[test]
fn fixture_and_lockfile_updated_together_by_a_human_merge() {
    let (p, base) = repo();
    p.write("tests/fixtures/invoice.json", INVOICE_V2).write(
        "qa/fixtures.lock.json",
        lockfile(&[
            ("tests/fixtures/batch.ndjson", BATCH),
            ("tests/fixtures/invoice.json", INVOICE_V2),
        ]),
    );
    let c = p.commit_as(HUMAN, "New tax rate\n\nFixture-Lock: human\n");
    // A dirty checkout does not matter either.
    p.write("tests/fixtures/invoice.json", "garbage\n");

    let run = check(&p, &since(&base));
    expect(&run, 0, &[]);
    let json = run.json();
    assert_eq!(
        json["policy_changes"],
        json!([{
            "commit": p.short(&c),
            "path": "qa/fixtures.lock.json",
            "changes": [{
                "change": "lock_entry_changed",
                "path": "tests/fixtures/invoice.json",
                "from": sha256sum(INVOICE.as_bytes()),
                "to": sha256sum(INVOICE_V2.as_bytes()),
            }],
        }])
    );
}

/// Writes `corpus` into `repo()`'s fixtures and the lockfile coreutils gives for all of them;
/// the fixtures' paths.
fn write_locked<'c>(p: &Project, corpus: &'c [(String, Vec<u8>)]) -> Vec<&'c str> {
    for (path, bytes) in corpus {
        p.write(path, bytes);
    }
    let mut rels: Vec<&str> = vec!["tests/fixtures/batch.ndjson", "tests/fixtures/invoice.json"];
    rels.extend(corpus.iter().map(|(path, _)| path.as_str()));
    p.write("qa/fixtures.lock.json", sha256sum_lockfile(p.root(), &rels));
    rels
}

/// The run's one `fixture_digest` finding is `drifted`'s, naming the digest of `bytes`.
fn assert_drifted(run: &Run, drifted: &str, bytes: &[u8]) {
    let f = only(&run.json(), "fixture_digest");
    assert_eq!(f["path"], drifted);
    let message = f["message"].as_str().unwrap();
    assert!(message.contains(&sha256sum(bytes)), "{message}");
}

#[test]
fn many_fixtures_hashed_on_every_core_name_the_one_that_drifted() {
    let (p, base) = repo();
    // 200 fixtures of 8 KiB, 1.6 MB in all: past the size where guard hashes the tip's blobs
    // on every core, each thread through its own repository handle. Two hold the same bytes.
    let corpus = fixture_corpus("tests/fixtures/many", 200, 8192);
    let rels = write_locked(&p, &corpus);
    // One fixture regenerated after the lockfile was written.
    let drifted = "tests/fixtures/many/f_137.bin";
    let new_bytes = vec![b'x'; 8192];
    p.write(drifted, &new_bytes);
    p.commit_as(HUMAN, "Regenerate the fixtures\n\nFixture-Lock: human\n");

    let run = check(&p, &since(&base));
    expect(&run, 1, &["fixture_digest"]);
    assert_eq!(run.json()["fixture_digest_delta"], 1);
    assert_drifted(&run, drifted, &new_bytes);

    // The lockfile made again: every digest matches.
    p.write("qa/fixtures.lock.json", sha256sum_lockfile(p.root(), &rels));
    p.commit_as(
        HUMAN,
        "Lock the regenerated fixture\n\nFixture-Lock: human\n",
    );
    let run = check(&p, &since(&base));
    expect(&run, 0, &[]);
    assert_eq!(run.json()["fixture_digest_delta"], 0);
}

#[test]
fn fixtures_packed_by_git_are_hashed_as_sha256sum_hashes_them() {
    // Blobs in a pack are streamed out of it by guard itself: stored whole (noise, which zlib
    // cannot shrink, over several of the reader's 256 KiB pieces), compressed (text), and as
    // deltas of one another (a near copy), which libgit2 reads.
    let (p, base) = repo();
    let mut corpus = fixture_corpus("tests/fixtures/big", 3, 1_000_000);
    let mut near = corpus[0].1.clone();
    near[400_000] ^= 0x55;
    corpus.push(("tests/fixtures/big/near.bin".into(), near));
    let text: String = (0..30_000)
        .map(|i| format!("{i},a row of a golden table that compresses well\n"))
        .collect();
    corpus.push(("tests/fixtures/big/table.csv".into(), text.into_bytes()));
    let rels = write_locked(&p, &corpus);
    // One regenerated after the lockfile was written: a byte far into it.
    let drifted = "tests/fixtures/big/f_001.bin";
    let mut new_bytes = corpus[1].1.clone();
    new_bytes[450_000] ^= 0x01;
    p.write(drifted, &new_bytes);
    p.commit_as(HUMAN, "Add the big fixtures\n\nFixture-Lock: human\n");
    p.git_cmd(&["repack", "-adfq"]);
    let packed = p.git_cmd(&["count-objects", "-v"]);
    assert!(packed.starts_with("count: 0\n"), "{packed}");

    let run = check(&p, &since(&base));
    expect(&run, 1, &["fixture_digest"]);
    assert_drifted(&run, drifted, &new_bytes);

    p.write("qa/fixtures.lock.json", sha256sum_lockfile(p.root(), &rels));
    p.commit_as(
        HUMAN,
        "Lock the regenerated fixture\n\nFixture-Lock: human\n",
    );
    p.git_cmd(&["repack", "-adfq"]);
    expect(&check(&p, &since(&base)), 0, &[]);
}

#[test]
fn drift_already_in_the_base_is_still_drift_at_the_tip() {
    let (p, _) = repo();
    // A fixture changed before guard was installed (or past a gate that was off): the base
    // itself does not match its lockfile.
    p.write("tests/fixtures/invoice.json", INVOICE_V2);
    let drifted = p.commit_as(HUMAN, "New tax rate\n\nFixture-Lock: human\n");
    unrelated(&p, "src/app.py", "Bump the version");
    // `guard lock --check` on this checkout reports the drift; so must `guard check` of a
    // range that starts at the drifted commit, although the range did not touch the file.
    let run = check(&p, &since(&drifted));
    expect(&run, 1, &["fixture_digest"]);
    assert_eq!(
        only(&run.json(), "fixture_digest")["path"],
        "tests/fixtures/invoice.json"
    );
}

#[test]
fn bare_clone_gives_the_same_decision() {
    let (p, base) = repo();
    p.write("tests/fixtures/invoice.json", INVOICE_V2).write(
        "qa/fixtures.lock.json",
        lockfile(&[
            ("tests/fixtures/batch.ndjson", BATCH),
            ("tests/fixtures/invoice.json", INVOICE_V2),
        ]),
    );
    let human = p.commit_as(HUMAN, "New tax rate\n\nFixture-Lock: human\n");
    extend_lease(&p);
    let agent = p.commit_as(CURSOR, "Extend the retry lease\n");
    let bare = Project::clone_of(&p, true);
    assert_eq!(
        bare.git_cmd(&["rev-parse", "--is-bare-repository"]).trim(),
        "true"
    );

    for (range, code, reasons) in [
        (format!("{base}..{human}"), 0, vec![]),
        (format!("{base}..{agent}"), 1, vec!["agent_edit_protected"]),
    ] {
        let work = check(&p, &range);
        expect(&work, code, &reasons);
        let dir = bare.root().to_str().unwrap();
        let in_bare = p.guard(&["-C", dir, "check", &range, "--format", "json"]);
        expect(&in_bare, code, &reasons);
        assert_eq!(in_bare.json(), work.json(), "the whole report is the same");
    }
}

// ---------------------------------------------------------------------------------------
// With artifacts: frozen tests that pass.

/// `guard check BASE..HEAD --junit junit.xml --format json`.
fn check_junit(p: &Project, base: &str) -> Run {
    p.guard(&[
        "check",
        &since(base),
        "--junit",
        "junit.xml",
        "--format",
        "json",
    ])
}

fn junit_with_retry_passing(p: &Project) {
    junit_with_retry_and(p, &[]);
}

/// JUnit in which the property test, the frozen retry test and `more` pass.
fn junit_with_retry_and(p: &Project, more: &[(&str, &str, &str)]) {
    let mut cases = vec![
        (
            "tests.properties.test_codec_roundtrip",
            "test_roundtrip_on_seeds",
            PASS,
        ),
        ("tests.test_retry", "test_backoff", PASS),
    ];
    cases.extend_from_slice(more);
    p.write("junit.xml", junit(&cases));
}

#[test]
fn a_rewritten_frozen_test_leaves_another_frozen_tests_pass_standing() {
    // Two frozen tests pass; the range rewrote only one of them. The other is still a
    // `frozen_test_passed` of its own.
    let (p, _) = repo();
    p.write(
        "tests/test_parser.py",
        "def test_unicode():\n    assert parse('x') == 1\n",
    );
    set_leases(&p, &[(LEASE, EXPIRES), (NEW_LEASE, EXPIRES)]);
    let base = p.commit_as(HUMAN, "Freeze the unicode test\n\nFreeze-Lease: human\n");
    p.write(
        "tests/test_retry.py",
        "def test_backoff():\n    assert True\n",
    );
    p.commit_as(CURSOR, "Stabilise the retry test\n");
    junit_with_retry_and(&p, &[("tests.test_parser", "test_unicode", PASS)]);
    let run = check_junit(&p, &base);
    expect(
        &run,
        1,
        &[
            "frozen_test_passed",
            "frozen_test_rewritten",
            "weakened_test",
        ],
    );
    assert_eq!(only(&run.json(), "frozen_test_rewritten")["test"], LEASE);
    assert_eq!(only(&run.json(), "frozen_test_passed")["test"], NEW_LEASE);
}

#[test]
fn frozen_test_reported_passing_from_a_file_the_range_deleted_is_a_rewrite() {
    // The report says the frozen test passed, but the range deleted its file: whatever ran
    // under that name is not the test that was frozen.
    let (p, base) = repo();
    p.git_cmd(&["rm", "-q", "tests/test_retry.py"]);
    p.commit_as(CURSOR, "Drop the flaky retry test\n");
    junit_with_retry_passing(&p);
    let run = check_junit(&p, &base);
    let f = only(&run.json(), "frozen_test_rewritten");
    assert_eq!(f["test"], LEASE);
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("tests/test_retry.py"),
        "{f}"
    );
    assert_eq!(run.code, 1);
}

#[test]
fn frozen_test_named_by_class_path_is_found_in_its_module_file() {
    // `tests.test_retry.TestBackoff::test_jitter` may live in `tests/test_retry/TestBackoff.py`
    // or `tests/test_retry.py`: the file that exists is the one the range rewrote.
    const CLASS_LEASE: &str = "tests.test_retry.TestBackoff::test_jitter";
    let (p, _) = repo();
    p.write(
        "tests/test_retry.py",
        "class TestBackoff:\n    def test_jitter(self):\n        assert jitter(3) < 0.5\n",
    );
    set_leases(&p, &[(CLASS_LEASE, EXPIRES)]);
    let base = p.commit_as(HUMAN, "Freeze the jitter test\n\nFreeze-Lease: human\n");
    p.write(
        "tests/test_retry.py",
        "class TestBackoff:\n    def test_jitter(self):\n        assert True\n",
    );
    p.commit_as(CURSOR, "Stabilise the jitter test\n");
    p.write(
        "junit.xml",
        junit(&[
            (
                "tests.properties.test_codec_roundtrip",
                "test_roundtrip_on_seeds",
                PASS,
            ),
            ("tests.test_retry.TestBackoff", "test_jitter", PASS),
        ]),
    );
    let run = check_junit(&p, &base);
    let f = only(&run.json(), "frozen_test_rewritten");
    assert_eq!(f["test"], CLASS_LEASE);
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("changed its file tests/test_retry.py"),
        "{f}"
    );
}

#[test]
fn frozen_test_that_passes_after_the_range_rewrote_it() {
    let (p, base) = repo();
    p.write(
        "tests/test_retry.py",
        "def test_backoff():\n    assert True\n",
    );
    p.commit_as(CURSOR, "Stabilise the retry test\n");
    junit_with_retry_passing(&p);
    let run = p.guard_both_walks(&[
        "check",
        &since(&base),
        "--junit",
        "junit.xml",
        "--format",
        "json",
    ]);
    // The rewrite itself is a weakened test in the agent's commit as well.
    expect(&run, 1, &["frozen_test_rewritten", "weakened_test"]);
    let f = only(&run.json(), "frozen_test_rewritten");
    assert_eq!(f["test"], LEASE);
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("tests/test_retry.py"),
        "{f}"
    );
    let w = only(&run.json(), "weakened_test");
    assert_eq!(
        (&w["path"], &w["line"]),
        (&json!("tests/test_retry.py"), &json!(1))
    );
    assert!(
        w["message"]
            .as_str()
            .unwrap()
            .starts_with("removes an assertion in test tests/test_retry.py::test_backoff"),
        "{w}"
    );
}

#[test]
fn frozen_test_that_passes_with_its_file_unchanged() {
    let (p, base) = repo();
    unrelated(&p, "src/app.py", "Bump the version");
    junit_with_retry_passing(&p);
    let run = p.guard_both_walks(&[
        "check",
        &since(&base),
        "--junit",
        "junit.xml",
        "--format",
        "json",
    ]);
    expect(&run, 1, &["frozen_test_passed"]);
    assert_eq!(only(&run.json(), "frozen_test_passed")["test"], LEASE);
}

// ---------------------------------------------------------------------------------------
// Semantic diff of the freeze file.

#[test]
fn lease_extension_is_shown_as_a_semantic_diff() {
    let (p, base) = repo();
    extend_lease(&p);
    let c = p.commit_as(HUMAN, "Extend the retry lease\n\nFreeze-Lease: human\n");
    let run = check(&p, &since(&base));
    expect(&run, 0, &[]);
    assert_eq!(
        run.json()["policy_changes"],
        json!([{
            "commit": p.short(&c),
            "path": "qa/freeze.toml",
            "changes": [{"change": "lease_extended", "nodeid": LEASE, "from": EXPIRES, "to": LATER}],
        }])
    );
    let text = p.guard_both_walks(&["check", &since(&base)]);
    assert_eq!(text.code, 0, "{}{}", text.stdout, text.stderr);
    for line in [
        format!("change: {} qa/freeze.toml:", p.short(&c)),
        format!("lease extended: {LEASE} {EXPIRES} -> {LATER}"),
        format!("-expires = \"{EXPIRES}\""),
        format!("+expires = \"{LATER}\""),
    ] {
        assert!(text.stdout.contains(&line), "{line:?} in\n{}", text.stdout);
    }
}

// ---------------------------------------------------------------------------------------
// The default range, and input that cannot be judged.

#[test]
fn default_range_is_the_upstream_to_head() {
    let (origin, base) = repo();
    let clone = Project::clone_of(&origin, false);
    extend_lease(&clone);
    let c = clone.commit_as(CURSOR, "Extend the retry lease\n");
    let run = clone.guard_both_walks(&["check", "--format", "json"]);
    expect(&run, 1, &["agent_edit_protected"]);
    let json = run.json();
    assert_eq!(json["range"], "@{upstream}..HEAD");
    assert_eq!(json["base"], base);
    assert_eq!(json["commits"].as_array().unwrap().len(), 1);
    assert_eq!(json["commits"][0]["id"], c);
}

#[test]
fn no_upstream_and_no_range_asks_for_a_range() {
    let (p, _) = repo();
    let run = p.guard_both_walks(&["check"]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("pass a range"), "{}", run.stderr);
    run.assert_cannot_judge_text();
}

#[test]
fn annotated_tag_range_ends_are_peeled() {
    let (p, base) = repo();
    p.git_cmd(&["tag", "-a", "-m", "Release 1", "v1"]);
    extend_lease(&p);
    p.commit_as(CURSOR, "Extend the retry lease\n");
    let run = check(&p, "v1..HEAD");
    expect(&run, 1, &["agent_edit_protected"]);
    assert_eq!(
        run.json()["base"],
        base,
        "the tag's commit, not the tag object"
    );
}

#[test]
fn unresolvable_range_cannot_be_judged() {
    let (p, _) = repo();
    let run = check(&p, "no-such-branch..HEAD");
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("no-such-branch"), "{}", run.stderr);
    // With --format json, stdout is still one object: no decision, and why.
    let json = run.json();
    assert!(json["decision"].is_null(), "{json:#}");
    assert!(json["score"].is_null(), "{json:#}");
    let message = json["error"]["message"].as_str().unwrap();
    assert!(message.contains("no-such-branch"), "{message}");
    assert!(json["error"]["path"].is_null(), "{json:#}");
    assert!(
        json["min_proven_coverage_percent"].is_null(),
        "no ledger was read: {json:#}"
    );
    // In text, stderr says it, and stdout ends with the verdict line.
    let text = p.guard(&["check", "no-such-branch..HEAD"]);
    assert_eq!(text.code, 2);
    text.assert_cannot_judge_text();
}

#[test]
fn malformed_ledger_in_the_base_cannot_be_judged() {
    let (p, _) = repo();
    p.write("qa/merge_ledger.toml", "[fixtures\nlockfile = 1\n");
    let bad = p.commit_as(HUMAN, "Break the ledger\n\nLedger-Change: human\n");
    unrelated(&p, "src/app.py", "Bump the version");
    let run = check(&p, &since(&bad));
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    let named = format!("qa/merge_ledger.toml at {}", p.short(&bad));
    assert!(run.stderr.contains(&named), "{named:?} in {}", run.stderr);
    // The JSON object names the file and the line of the broken table header (line 1).
    let json = run.json();
    assert!(json["decision"].is_null(), "{json:#}");
    assert_eq!(json["error"]["path"], named);
    assert_eq!(json["error"]["line"], 1, "{json:#}");
    assert!(json["min_proven_coverage_percent"].is_null(), "{json:#}");
}

#[test]
fn a_sha256_range_is_judged_as_a_sha1_one() {
    // The same history as `repo()` in a SHA-256 repository (whatever GIT_DEFAULT_HASH says):
    // the agent's fixture edit is found and named, with and without a commit-graph (guard
    // reads SHA-256 graphs itself).
    let sha256 = Project::new();
    sha256.git_cmd(&["init", "-q", "-b", "main", "--object-format=sha256"]);
    let (p, base) = repo_in(sha256);
    assert_eq!(base.len(), 64, "{base}");
    unrelated(&p, "src/app.py", "Bump the version");
    p.write("tests/fixtures/invoice.json", INVOICE_V2);
    let c = p.commit_as(CURSOR, "Regenerate the invoice fixture\n");
    let run = check(&p, &since(&base));
    expect(&run, 1, &["agent_edit_protected", "fixture_digest"]);
    let json = run.json();
    let edit = only(&json, "agent_edit_protected");
    assert_eq!(edit["path"], "tests/fixtures/invoice.json");
    assert_eq!(edit["commit"], p.short(&c));
    assert_eq!(json["commits"].as_array().unwrap().len(), 2, "{json:#}");
}

#[test]
fn an_object_format_guard_cannot_read_is_refused_with_a_clear_message() {
    // git itself knows SHA-1 and SHA-256 only; a repository that names another format is
    // refused as such, not as "not a git repository".
    let p = Project::git();
    p.write("src/app.py", "VERSION = 1\n");
    p.commit_as(HUMAN, "Start\n");
    p.git_cmd(&["config", "core.repositoryformatversion", "1"]);
    p.git_cmd(&["config", "extensions.objectformat", "sha512"]);
    let run = p.guard(&["check", "HEAD"]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("object format"), "{}", run.stderr);
    assert!(
        !run.stderr.contains("not in a git repository"),
        "{}",
        run.stderr
    );
}

// ---------------------------------------------------------------------------------------
// Long ranges are judged on all cores: the result must not depend on it.

/// Appends `n` commits to `p` with `git fast-import` (seconds for thousands): ordinary
/// edits by a human, and at `agent_at` an agent's edit of the freeze file.
fn fast_import_commits(p: &Project, n: usize, agent_at: usize) {
    let who = |i| if i == agent_at { CURSOR } else { HUMAN };
    crate::support::fast_import(p, n, who, |i| {
        if i == agent_at {
            (
                "qa/freeze.toml".to_string(),
                format!("{}# parked {i}\n", freeze_toml(BUDGET, &[(LEASE, EXPIRES)])),
            )
        } else {
            (
                format!("src/mod_{}/file_{i}.py", i % 17),
                format!("x = {i}\n"),
            )
        }
    });
}

#[test]
fn long_range_judged_in_parallel_finds_the_one_agent_commit_in_order() {
    let (p, base) = repo();
    fast_import_commits(&p, 1500, 1234);
    let run = check(&p, &since(&base));
    expect(&run, 1, &["agent_edit_protected"]);
    let json = run.json();
    let commits = json["commits"].as_array().unwrap();
    assert_eq!(commits.len(), 1500);
    // Oldest first, as git log --reverse lists them.
    let listed: Vec<&str> = commits
        .iter()
        .map(|c| c["subject"].as_str().unwrap())
        .collect();
    let expected: Vec<String> = (0..1500).map(|i| format!("Change {i}")).collect();
    assert_eq!(listed, expected);
    assert_eq!(
        only(&json, "agent_edit_protected")["subject"],
        "Change 1234"
    );
    assert!(commits[1234]["agent"].is_string());
    assert!(commits[1233]["agent"].is_null());
}

#[test]
fn protect_entries_that_name_directories_protect_what_is_under_them() {
    let p = Project::git();
    p.write(
        "qa/merge_ledger.toml",
        LEDGER.replace(
            "paths = [\".github/workflows/**\"]",
            "paths = [\".github/workflows/**\", \"hooks/\", \"ci\", \"./Makefile\"]",
        ),
    )
    .write("qa/freeze.toml", freeze_toml(BUDGET, &[(LEASE, EXPIRES)]))
    .write("qa/fixtures.lock.json", "{\"files\": {}}\n")
    .write("hooks/pre-commit", "#!/bin/sh\n")
    .write("ci/pipeline.yml", "steps: []\n")
    .write("Makefile", "test:\n\tpytest\n")
    .write("tests/properties/seeds/invoice.json", INVOICE);
    let base = p.commit_as(HUMAN, "Start\n");
    p.write("hooks/pre-commit", "#!/bin/sh\nexit 0\n")
        .write("ci/pipeline.yml", "steps: [skip]\n")
        .write("Makefile", "test:\n\ttrue\n")
        // A case variant of a [protect] glob: replaces the file on a case-insensitive checkout.
        .write(".GitHub/workflows/ci.yml", "on: never\n");
    p.commit_as(CURSOR, "Speed up CI\n");
    let run = check(&p, &since(&base));
    expect(&run, 1, &["agent_edit_protected"]);
    let json = run.json();
    let mut paths: Vec<&str> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    paths.sort_unstable();
    assert_eq!(
        paths,
        vec![
            ".GitHub/workflows/ci.yml",
            "Makefile",
            "ci/pipeline.yml",
            "hooks/pre-commit"
        ]
    );
}

#[test]
fn agent_gitattributes_that_rewrite_fixture_bytes_are_protected_edits() {
    // `working-tree-encoding`, `eol` or an LFS filter change the bytes a checkout writes for a
    // fixture without touching its blob: the attributes files on the way are protected too.
    for path in [".gitattributes", "tests/.gitattributes", ".lfsconfig"] {
        let (p, base) = repo();
        p.write(
            path,
            "tests/fixtures/invoice.json text working-tree-encoding=UTF-16LE\n",
        );
        p.git_cmd(&["add", path]);
        p.commit_index_as(CURSOR, "Normalise encodings\n", &[]);
        let run = check(&p, &since(&base));
        expect(&run, 1, &["agent_edit_protected"]);
        assert_eq!(only(&run.json(), "agent_edit_protected")["path"], path);
    }
}

#[test]
fn merge_with_a_stale_ancestor_cannot_bring_back_old_protected_content() {
    // C2 (human) adds a lease, C3 (human) removes it; the agent merges C2 back into C3 and
    // keeps C2's freeze file. C3 had moved past C2's content, so the merge's freeze file is
    // the merge's own edit, and its lease the merge's addition: judged from C3 (both outside
    // the range), from C2 (C3 in it) and from the start (both in it).
    let (p, start) = repo();
    set_leases(&p, &[(LEASE, EXPIRES), (NEW_LEASE, EXPIRES)]);
    let c2 = p.commit_as(HUMAN, "Freeze the unicode test\n\nFreeze-Lease: human\n");
    set_leases(&p, &[(LEASE, EXPIRES)]);
    let c3 = p.commit_as(HUMAN, "Unfreeze it\n\nFreeze-Lease: human\n");
    p.git_cmd(&["checkout", "-q", &c2, "--", "qa/freeze.toml"]);
    let tree = p.git_cmd(&["write-tree"]).trim().to_string();
    let merge = p
        .git_as(
            CURSOR,
            &["commit-tree", &tree, "-p", &c3, "-p", &c2, "-m", "Merge"],
        )
        .trim()
        .to_string();
    for base in [&c3, &c2, &start] {
        let run = check(&p, &format!("{base}..{merge}"));
        expect(&run, 1, &["agent_added_lease", "agent_edit_protected"]);
        assert_eq!(run.json()["agent_added_leases"], 1);
        let edit = only(&run.json(), "agent_edit_protected");
        assert_eq!(
            (&edit["commit"], &edit["path"]),
            (&json!(p.short(&merge)), &json!("qa/freeze.toml"))
        );
    }
}

#[test]
fn paths_a_ledger_change_newly_protects_are_protected_for_the_rest_of_the_range() {
    // A human moves the freeze file in the range; an agent then edits the new file. Judged by
    // the base ledger alone, `qa/leases.toml` would be an ordinary file.
    let (p, base) = repo();
    p.write(
        "qa/merge_ledger.toml",
        LEDGER.replace("file = \"qa/freeze.toml\"", "file = \"qa/leases.toml\""),
    )
    .write("qa/leases.toml", freeze_toml(BUDGET, &[(LEASE, EXPIRES)]));
    p.commit_as(
        HUMAN,
        "Move the leases\n\nLedger-Change: human\nFreeze-Lease: human\n",
    );
    p.write(
        "qa/leases.toml",
        freeze_toml(
            "max_active_leases = 5",
            &[(LEASE, EXPIRES), (NEW_LEASE, EXPIRES)],
        ),
    );
    let agent = p.commit_as(CURSOR, "Park the unicode test\n");
    let run = check(&p, &since(&base));
    expect(&run, 1, &["agent_edit_protected"]);
    let f = only(&run.json(), "agent_edit_protected");
    assert_eq!(f["path"], "qa/leases.toml");
    assert_eq!(f["commit"], p.short(&agent));
}

// Issue 10: replace refs and the ledger a range leaves behind.

#[test]
fn guard_reads_the_real_objects_when_a_replace_ref_exists() {
    let (p, base) = repo();
    unrelated(&p, "src/app.py", "Bump the version");
    // Point the fixture's blob at other bytes: git itself now shows those.
    let blob = p.rev("HEAD:tests/fixtures/invoice.json");
    p.write(".git/agent-bytes", INVOICE_V2);
    let agent = p.git_cmd(&["hash-object", "-w", ".git/agent-bytes"]);
    p.git_cmd(&["replace", &blob, agent.trim()]);
    assert_eq!(
        p.git_cmd(&["show", "HEAD:tests/fixtures/invoice.json"]),
        INVOICE_V2
    );
    // guard hashes the real blob, which matches the lockfile. (`guard_both_walks` is not
    // used: git writes no commit-graph while replace refs exist.)
    let run = p.guard(&["check", &since(&base), "--format", "json"]);
    expect(&run, 0, &[]);
}

#[test]
fn range_that_leaves_a_ledger_that_does_not_parse_is_rejected() {
    let (p, base) = repo();
    let text = format!("{LEDGER}\n[freeze]\nfile = \"qa/other.toml\"\n");
    let dup_line = text.lines().count() - 1;
    p.write("qa/merge_ledger.toml", &text);
    let c = p.commit_as(HUMAN, "Tweak the ledger\n\nLedger-Change: human\n");
    let run = check(&p, &since(&base));
    expect(&run, 1, &["ledger_invalid"]);
    let f = only(&run.json(), "ledger_invalid");
    assert_eq!(f["path"], "qa/merge_ledger.toml");
    assert_eq!(f["commit"], p.short(&c));
    let message = f["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("qa/merge_ledger.toml:{dup_line}:")),
        "{message}"
    );
    // A ledger the range does not change is not read again.
    let run = check(&p, &format!("{c}..{c}"));
    assert_eq!(
        run.code, 2,
        "the base's own ledger cannot be read: {}",
        run.stderr
    );
}

#[test]
fn range_that_leaves_a_ledger_with_two_mistakes_names_both_in_one_finding() {
    let (p, base) = repo();
    let text =
        format!("{LEDGER}\n[coverage]\nmin_proven = 101.0\n\n[baseline]\nvanished = \"maybe\"\n");
    let lines = text.lines().count();
    p.write("qa/merge_ledger.toml", &text);
    let c = p.commit_as(HUMAN, "Tweak the ledger\n\nLedger-Change: human\n");
    let run = check(&p, &since(&base));
    expect(&run, 1, &["ledger_invalid"]);
    let f = only(&run.json(), "ledger_invalid");
    assert_eq!(f["commit"], p.short(&c));
    assert_eq!(
        f["message"],
        format!(
            "qa/merge_ledger.toml:{}:14: `coverage.min_proven` must be 0..=100, not 101; qa/merge_ledger.toml:{lines}:12: `baseline.vanished` must be \"reject\", \"warn\" or \"off\", not \"maybe\"",
            lines - 3
        )
    );
}

// ---------------------------------------------------------------------------------------
// Issue 10: agent identities of today, [protect] spellings, rewritten frozen tests.

/// How agents sign their commits today: `(what, author, message)`. Each commit edits the
/// freeze file; the author is a human's unless the agent is the author.
const AGENT_IDENTITIES: &[(&str, (&str, &str), &str)] = &[
    (
        "Codex CLI",
        HUMAN,
        "Tune the lease\n\nCo-authored-by: Codex <noreply@openai.com>\n",
    ),
    (
        "Copilot CLI/SDK co-author",
        HUMAN,
        "Tune the lease\n\nCo-authored-by: Copilot <223556219+Copilot@users.noreply.github.com>\n",
    ),
    (
        "Copilot CLI/SDK author",
        ("Copilot", "223556219+Copilot@users.noreply.github.com"),
        "Tune the lease\n",
    ),
    (
        "VS Code Copilot",
        HUMAN,
        "Tune the lease\n\nCo-authored-by: Copilot <copilot@github.com>\n",
    ),
    ("Cursor", HUMAN, "Tune the lease\n\nMade-with: Cursor\n"),
    (
        "Copilot coding agent",
        HUMAN,
        "Tune the lease\n\nAgent-Logs-Url: https://github.com/acme/shop/sessions/4f2a9c\n",
    ),
    (
        "Claude Code session",
        HUMAN,
        "Tune the lease\n\nClaude-Session: https://claude.ai/code/session_011CUa\n",
    ),
    (
        "Devin",
        HUMAN,
        "Tune the lease\n\nCo-Authored-By: Devin <158243242+devin-ai-integration[bot]@users.noreply.github.com>\n",
    ),
    (
        "Assisted-by",
        HUMAN,
        "Tune the lease\n\nAssisted-by: gpt-5-codex\n",
    ),
    (
        "Generated-by",
        HUMAN,
        "Tune the lease\n\nGenerated-by: Junie\n",
    ),
    (
        "aider co-author",
        HUMAN,
        "Tune the lease\n\nCo-authored-by: aider (openai/gpt-4.1) <aider@aider.chat>\n",
    ),
    ("aider subject", HUMAN, "aider: Tune the lease\n"),
];

/// Commits every identity's freeze-file edit on top of `base`; returns `(what, commit)`.
fn commit_every_agent_identity(p: &Project) -> Vec<(&'static str, String)> {
    AGENT_IDENTITIES
        .iter()
        .enumerate()
        .map(|(i, (what, who, message))| {
            let freeze = p.read("qa/freeze.toml");
            p.write("qa/freeze.toml", format!("{freeze}# tuned {i}\n"));
            (*what, p.commit_as(*who, *message))
        })
        .collect()
}

/// Each identity's commit is an agent's editing the freeze file, none a human's missing a
/// trailer; a human's control commit with the trailer merges.
#[track_caller]
fn expect_every_identity_is_an_agent(p: &Project, base: &str) {
    let commits = commit_every_agent_identity(p);
    let run = check(p, &since(base));
    expect(&run, 1, &["agent_edit_protected"]);
    let json = run.json();
    let edits = findings(&json, "agent_edit_protected");
    for (what, c) in &commits {
        let short = p.short(c);
        let found: Vec<&Value> = edits.iter().filter(|f| f["commit"] == short).collect();
        assert_eq!(found.len(), 1, "{what}: {json:#}");
        assert_eq!(found[0]["path"], "qa/freeze.toml", "{what}");
        let help = found[0]["help"].as_str().unwrap();
        assert!(
            help.contains(&format!("git rebase -i {}", p.short(base)))
                && help.contains("Freeze-Lease: human")
                && !help.contains("git checkout"),
            "{what}: {help}"
        );
    }
    assert_eq!(edits.len(), commits.len(), "{json:#}");

    let last = p.rev("HEAD");
    let freeze = p.read("qa/freeze.toml");
    p.write("qa/freeze.toml", format!("{freeze}# reviewed\n"));
    p.commit_as(HUMAN, "Review the lease\n\nFreeze-Lease: human\n");
    expect(&check(p, &since(&last)), 0, &[]);
}

#[test]
fn agent_identities_of_today_are_agents_under_the_built_in_defaults() {
    // LEDGER has no [agents]: the built-in identities apply.
    let (p, base) = repo();
    expect_every_identity_is_an_agent(&p, &base);
}

#[test]
fn agent_identities_of_today_are_agents_under_the_starter_ledger() {
    // What `guard init` writes (and the embedded default) lists them too.
    let (p, _) = repo();
    p.write(
        "qa/merge_ledger.toml",
        include_str!("../../policy/merge_ledger.toml"),
    );
    let base = p.commit_as(HUMAN, "Adopt the starter ledger\n\nLedger-Change: human\n");
    expect_every_identity_is_an_agent(&p, &base);
}

/// The base ledger with `entries` as its `[protect]` paths (line 15 of the ledger).
fn protect_ledger(entries: &str) -> String {
    let ledger = LEDGER.replace(
        "paths = [\".github/workflows/**\"]",
        &format!("paths = [{entries}]"),
    );
    assert_eq!(
        ledger.lines().nth(14).unwrap(),
        format!("paths = [{entries}]")
    );
    ledger
}

#[test]
fn protect_entries_with_dot_and_double_slash_protect_the_normalised_path() {
    let (p, _) = repo();
    p.write(
        "qa/merge_ledger.toml",
        protect_ledger(r#""scripts/./deploy.sh", "tools//release.sh", "./ops/.//run.sh""#),
    )
    .write("scripts/deploy.sh", "#!/bin/sh\nrsync build/ prod:\n")
    .write("tools/release.sh", "#!/bin/sh\ngit tag v1\n")
    .write("ops/run.sh", "#!/bin/sh\nmake\n");
    let base = p.commit_as(
        HUMAN,
        "Protect the deploy scripts\n\nLedger-Change: human\n",
    );
    p.write("scripts/deploy.sh", "#!/bin/sh\nexit 0\n")
        .write("tools/release.sh", "#!/bin/sh\nexit 0\n")
        .write("ops/run.sh", "#!/bin/sh\nexit 0\n");
    p.commit_as(CURSOR, "Make deploys faster\n");
    let run = check(&p, &since(&base));
    expect(&run, 1, &["agent_edit_protected"]);
    let mut paths: Vec<String> = findings(&run.json(), "agent_edit_protected")
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect();
    paths.sort();
    assert_eq!(
        paths,
        vec!["ops/run.sh", "scripts/deploy.sh", "tools/release.sh"]
    );
    assert_eq!(p.guard(&["lint"]).code, 0);
}

#[test]
fn protect_entries_the_glob_engine_or_the_path_rules_refuse_name_file_and_line() {
    for (entry, says) in [
        (r#""scripts/[deploy.sh""#, "unclosed character class"),
        (r#""scripts\\deploy.sh""#, "`/`"),
        (r#""scripts/../deploy.sh""#, ".."),
        (r#""/scripts/deploy.sh""#, "relative"),
        (r#""./""#, "repository root"),
    ] {
        let (p, _) = repo();
        p.write("qa/merge_ledger.toml", protect_ledger(entry));
        let lint = p.guard(&["lint"]);
        assert_eq!(lint.code, 2, "{entry}: {}{}", lint.stdout, lint.stderr);
        assert!(
            lint.stderr.contains("qa/merge_ledger.toml:15:") && lint.stderr.contains(says),
            "{entry}: {}",
            lint.stderr
        );
        // In force as the base's ledger, it stops `check` with the same place.
        let bad = p.commit_as(HUMAN, "Protect the deploy script\n\nLedger-Change: human\n");
        unrelated(&p, "src/app.py", "Bump the version");
        let run = check(&p, &since(&bad));
        assert_eq!(run.code, 2, "{entry}: {}{}", run.stdout, run.stderr);
        let shown = format!("qa/merge_ledger.toml at {}:15:", p.short(&bad));
        assert!(run.stderr.contains(&shown), "{entry}: {}", run.stderr);
    }
}

#[test]
fn ledger_paths_with_backslashes_or_naming_the_root_are_refused_with_file_and_line() {
    for (key_line, line) in [
        ("[freeze]\nfile = \"qa\\\\freeze.toml\"", 12),
        ("[freeze]\nfile = \"./\"", 12),
        (
            "[fixtures]\nlockfile = \"qa/fixtures.lock.json\"\npaths = [\"tests\\\\fixtures\"]",
            9,
        ),
    ] {
        let section = key_line.lines().next().unwrap();
        let start = LEDGER.find(section).unwrap();
        let end = LEDGER[start..]
            .find("\n\n")
            .map_or(LEDGER.len(), |e| start + e);
        let ledger = format!("{}{key_line}{}", &LEDGER[..start], &LEDGER[end..]);
        let (p, _) = repo();
        p.write("qa/merge_ledger.toml", &ledger);
        let lint = p.guard(&["lint"]);
        assert_eq!(lint.code, 2, "{ledger}: {}{}", lint.stdout, lint.stderr);
        assert!(
            lint.stderr
                .contains(&format!("qa/merge_ledger.toml:{line}:")),
            "{ledger}: {}",
            lint.stderr
        );
    }
}

#[test]
fn ledger_paths_with_dot_and_double_slash_are_normalised() {
    // An agent edit of the freeze file named `qa/./freeze.toml` is an edit of qa/freeze.toml.
    let (p, _) = repo();
    p.write(
        "qa/merge_ledger.toml",
        LEDGER
            .replace("file = \"qa/freeze.toml\"", "file = \"qa/./freeze.toml\"")
            .replace(
                "lockfile = \"qa/fixtures.lock.json\"",
                "lockfile = \"qa//fixtures.lock.json\"",
            ),
    );
    let base = p.commit_as(HUMAN, "Respell the ledger\n\nLedger-Change: human\n");
    extend_lease(&p);
    p.write("qa/fixtures.lock.json", "{\"files\": {}}\n");
    p.commit_as(CURSOR, "Tidy the policy files\n");
    let run = check(&p, &since(&base));
    expect(&run, 1, &["agent_edit_protected", "fixture_unhashed"]);
    let mut paths: Vec<String> = findings(&run.json(), "agent_edit_protected")
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect();
    paths.sort();
    assert_eq!(paths, vec!["qa/fixtures.lock.json", "qa/freeze.toml"]);
}

/// The base ledger with `passing_frozen_is_error = false`, committed by a human.
fn allow_passing_frozen(p: &Project) -> String {
    p.write(
        "qa/merge_ledger.toml",
        LEDGER.replace(
            "file = \"qa/freeze.toml\"",
            "file = \"qa/freeze.toml\"\npassing_frozen_is_error = false",
        ),
    );
    p.commit_as(HUMAN, "Passing flakes are fine\n\nLedger-Change: human\n")
}

#[test]
fn gutted_frozen_test_is_rewritten_even_when_passing_frozen_tests_are_allowed() {
    let (p, _) = repo();
    let base = allow_passing_frozen(&p);
    // The agent makes the frozen test pass by returning before its assertion.
    p.write(
        "tests/test_retry.py",
        RETRY_TEST.replace("def test_backoff():\n", "def test_backoff():\n    return\n"),
    );
    p.commit_as(CURSOR, "Stabilise the retry test\n");
    junit_with_retry_passing(&p);
    let run = p.guard_both_walks(&[
        "check",
        &since(&base),
        "--junit",
        "junit.xml",
        "--format",
        "json",
    ]);
    expect(&run, 1, &["frozen_test_rewritten", "weakened_test"]);
    let f = only(&run.json(), "frozen_test_rewritten");
    assert_eq!(f["test"], LEASE);
    assert_eq!(
        (&f["path"], &f["line"]),
        (&json!("qa/freeze.toml"), &json!(5))
    );
    // The early return in the agent's commit is a weakened test too.
    let w = only(&run.json(), "weakened_test");
    assert_eq!(
        (&w["path"], &w["line"]),
        (&json!("tests/test_retry.py"), &json!(2))
    );
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("tests/test_retry.py"),
        "{f}"
    );
    let help = f["help"].as_str().unwrap();
    assert!(
        help.contains(&format!("git rebase -i {}", p.short(&base))),
        "{help}"
    );
}

#[test]
fn passing_frozen_test_with_its_file_unchanged_merges_when_allowed() {
    let (p, _) = repo();
    let base = allow_passing_frozen(&p);
    unrelated(&p, "src/app.py", "Bump the version");
    junit_with_retry_passing(&p);
    let run = p.guard_both_walks(&[
        "check",
        &since(&base),
        "--junit",
        "junit.xml",
        "--format",
        "json",
    ]);
    expect(&run, 0, &[]);
}

// ---------------------------------------------------------------------------------------
// Merges that bring back old protected content: a merge's protected path is brought by a
// side only when a commit of the range (or the base itself) made exactly that content and no
// other side had already moved past it; anything else is the merge's own edit.

const DATE: &str = "2026-01-01T00:00:00Z";

/// The tree of `rev` with each `(path, from)` taken from revision `from`, built with git's
/// plumbing in the index (the work tree is left alone; the index is reset to HEAD after).
fn tree_with(p: &Project, rev: &str, take: &[(&str, &str)]) -> String {
    p.git_cmd(&["read-tree", rev]);
    for (path, from) in take {
        let blob = p.rev(&format!("{from}:{path}"));
        p.git_cmd(&[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("100644,{blob},{path}"),
        ]);
    }
    let tree = p.git_cmd(&["write-tree"]).trim().to_string();
    p.git_cmd(&["read-tree", "HEAD"]);
    tree
}

/// A commit of `tree` with `parents` in this order, made by `who` at `date` (author and
/// committer), without touching any branch.
fn commit_tree(
    p: &Project,
    who: (&str, &str),
    tree: &str,
    parents: &[&str],
    subject: &str,
    date: &str,
) -> String {
    let mut args = vec!["commit-tree", tree, "-m", subject];
    for parent in parents {
        args.extend(["-p", parent]);
    }
    p.git_env(&as_at(who, date), &args).trim().to_string()
}

/// The environment that makes `who` author and committer at `date`.
fn as_at<'a>(who: (&'a str, &'a str), date: &'a str) -> [(&'static str, &'a str); 6] {
    [
        ("GIT_AUTHOR_NAME", who.0),
        ("GIT_AUTHOR_EMAIL", who.1),
        ("GIT_COMMITTER_NAME", who.0),
        ("GIT_COMMITTER_EMAIL", who.1),
        ("GIT_AUTHOR_DATE", date),
        ("GIT_COMMITTER_DATE", date),
    ]
}

/// A human freezes the unicode test (H1), then a human unfreezes it (T): main's history holds
/// a freeze file with a lease the tip no longer has. Returns (H1, T).
fn lease_added_then_removed(p: &Project) -> (String, String) {
    set_leases(p, &[(LEASE, EXPIRES), (NEW_LEASE, EXPIRES)]);
    let h1 = p.commit_as(HUMAN, "Freeze the unicode test\n\nFreeze-Lease: human\n");
    set_leases(p, &[(LEASE, EXPIRES)]);
    let t = p.commit_as(HUMAN, "Unfreeze it: fixed\n\nFreeze-Lease: human\n");
    (h1, t)
}

/// Asserts that the agent's merge `merge` alone edits `path` and adds `NEW_LEASE`.
#[track_caller]
fn expect_merge_restores_the_lease(p: &Project, run: &Run, merge: &str) {
    expect(run, 1, &["agent_added_lease", "agent_edit_protected"]);
    let json = run.json();
    let edit = only(&json, "agent_edit_protected");
    assert_eq!(
        (&edit["commit"], &edit["path"]),
        (&json!(p.short(merge)), &json!("qa/freeze.toml")),
        "{json:#}"
    );
    let added = only(&json, "agent_added_lease");
    assert_eq!(
        (&added["commit"], &added["test"]),
        (&json!(p.short(merge)), &json!(NEW_LEASE))
    );
    assert_eq!(json["agent_added_leases"], 1);
    assert_eq!(
        changes_of(&json, merge),
        json!([change("qa/freeze.toml", "modified", "freeze")])
    );
}

#[test]
fn octopus_merge_cannot_bring_back_a_lease_a_human_removed() {
    // The agent's octopus merge of the tip T, the old H1 and its own commit X takes H1's freeze
    // file. No commit of the range made that content, and T had left it behind: the merge's
    // own edit, in every parent order (libgit2's merge base of the first parent against any
    // other made H1's side look as if it brought the lease).
    let (p, _) = repo();
    let (h1, t) = lease_added_then_removed(&p);
    p.write("src/app.py", "VERSION = 2\n");
    let x = p.commit_as(CURSOR, "Bump the version\n");
    let tree = tree_with(&p, &x, &[("qa/freeze.toml", &h1)]);
    for parents in [[&t, &h1, &x], [&x, &h1, &t], [&h1, &t, &x]] {
        let parents: Vec<&str> = parents.iter().map(|s| s.as_str()).collect();
        let merge = commit_tree(&p, CURSOR, &tree, &parents, "Merge", DATE);
        let run = check(&p, &format!("{t}..{merge}"));
        expect_merge_restores_the_lease(&p, &run, &merge);
    }
}

#[test]
fn octopus_merge_cannot_bring_back_the_ledger_before_strict_mode() {
    // A human switched strict mode on in T. The octopus merge of T, the commit before it and
    // an unrelated commit takes the old ledger: strict mode would be off for the next push.
    let (p, before) = repo();
    p.write(
        "qa/merge_ledger.toml",
        format!("{LEDGER}\n[agents]\ndefault = \"agent\"\n"),
    );
    let strict = p.commit_as(HUMAN, "Strict mode\n\nLedger-Change: human\n");
    p.write("src/app.py", "VERSION = 2\n");
    let x = p.commit_as(CURSOR, "Bump the version\n");
    let tree = tree_with(&p, &x, &[("qa/merge_ledger.toml", &before)]);
    let merge = commit_tree(&p, HUMAN, &tree, &[&strict, &before, &x], "Merge", DATE);
    let run = check(&p, &format!("{strict}..{merge}"));
    // Unsigned, so not proven human: an agent's edit of the ledger.
    expect(&run, 1, &["agent_edit_protected", "unsigned_human_commit"]);
    let json = run.json();
    let edit = only(&json, "agent_edit_protected");
    assert_eq!(
        (&edit["commit"], &edit["path"]),
        (&json!(p.short(&merge)), &json!("qa/merge_ledger.toml"))
    );
    assert_eq!(
        changes_of(&json, &merge),
        json!([change("qa/merge_ledger.toml", "modified", "ledger")])
    );
}

#[test]
fn octopus_merge_cannot_bring_back_an_old_lockfile_with_its_fixture_and_seed() {
    // A human re-hashed the invoice fixture and changed a property seed in T. The agent's merge
    // brings back the old fixture with the old lockfile (which match each other, so the tip
    // has no digest drift) and the old seed.
    let (p, before) = repo();
    p.write("tests/fixtures/invoice.json", INVOICE_V2)
        .write(
            "qa/fixtures.lock.json",
            lockfile(&[
                ("tests/fixtures/batch.ndjson", BATCH),
                ("tests/fixtures/invoice.json", INVOICE_V2),
            ]),
        )
        .write("tests/properties/seeds/invoice.json", INVOICE_V2);
    let t = p.commit_as(
        HUMAN,
        "Tax is 21%\n\nFixture-Lock: human\nProperty-Seeds: human\n",
    );
    p.write("src/app.py", "VERSION = 2\n");
    let x = p.commit_as(CURSOR, "Bump the version\n");
    let old = [
        "qa/fixtures.lock.json",
        "tests/fixtures/invoice.json",
        "tests/properties/seeds/invoice.json",
    ];
    let take: Vec<(&str, &str)> = old.iter().map(|path| (*path, before.as_str())).collect();
    let tree = tree_with(&p, &x, &take);
    let merge = commit_tree(&p, CURSOR, &tree, &[&x, &before, &t], "Merge", DATE);
    let run = check(&p, &format!("{t}..{merge}"));
    expect(&run, 1, &["agent_edit_protected"]);
    let json = run.json();
    let edits: Vec<(Value, Value)> = findings(&json, "agent_edit_protected")
        .iter()
        .map(|f| (f["commit"].clone(), f["path"].clone()))
        .collect();
    let expected: Vec<(Value, Value)> = old
        .iter()
        .map(|path| (json!(p.short(&merge)), json!(path)))
        .collect();
    assert_eq!(edits, expected);
}

#[test]
fn criss_cross_merge_cannot_bring_back_a_lease_whatever_the_commit_dates() {
    // Y: the agent's commit on the commit before H1 (the lease's addition). K merges the tip T
    // and Y; M1 merges H1 into Y (from Y's side an honest merge: H1 made the lease after Y's
    // fork). F merges K and M1 and keeps M1's freeze file: K and M1 have two merge bases, Y
    // (no lease: M1 seems to bring it) and H1 (the lease: M1 brings nothing), and which one
    // libgit2 picks follows the commit dates, which the agent sets. T, a parent of K, had
    // left H1's lease behind, so F's freeze file is F's own edit either way.
    for y_date in ["2026-06-01T00:00:00Z", "2025-06-01T00:00:00Z"] {
        let (p, before) = repo();
        let (h1, t) = lease_added_then_removed(&p);
        p.git_cmd(&["checkout", "-q", "-b", "agent", &before]);
        p.write("src/agent.py", "WORK = 1\n");
        p.git_cmd(&["add", "src/agent.py"]);
        p.git_env(
            &as_at(CURSOR, y_date),
            &["commit", "-q", "-m", "Agent work"],
        );
        let y = p.rev("HEAD");
        p.git_cmd(&["checkout", "-q", "main"]);
        let k_tree = tree_with(&p, &t, &[("src/agent.py", &y)]);
        let k = commit_tree(&p, CURSOR, &k_tree, &[&t, &y], "Merge T", DATE);
        let m1_tree = tree_with(&p, &y, &[("qa/freeze.toml", &h1)]);
        let m1 = commit_tree(&p, CURSOR, &m1_tree, &[&y, &h1], "Merge H1", DATE);
        let f_tree = tree_with(&p, &k, &[("qa/freeze.toml", &m1)]);
        let f = commit_tree(&p, CURSOR, &f_tree, &[&k, &m1], "Merge", DATE);
        let bases = p.git_cmd(&["merge-base", "--all", &k, &m1]);
        let mut bases: Vec<&str> = bases.lines().collect();
        bases.sort();
        let mut expected = vec![y.as_str(), h1.as_str()];
        expected.sort();
        assert_eq!(bases, expected, "a criss-cross: two merge bases");

        let run = check(&p, &format!("{t}..{f}"));
        expect_merge_restores_the_lease(&p, &run, &f);
        // M1 brought H1's freeze file into Y's line, where nothing had changed it: not M1's.
        assert_eq!(changes_of(&run.json(), &m1), json!([]));
    }
}

#[test]
fn long_lived_feature_branch_that_merged_main_twice_merges() {
    // A feature branch from B merges main twice while humans change the freeze file on main
    // (with the trailer), then main merges the feature branch: every merge takes the newest
    // content. Judged from B, from the first freeze change and from the second, nothing is a
    // merge's own edit.
    let (p, b) = repo();
    p.git_cmd(&["checkout", "-q", "-b", "feature"]);
    unrelated(&p, "src/feature.py", "Feature work");
    p.git_cmd(&["checkout", "-q", "main"]);
    extend_lease(&p);
    let h = p.commit_as(HUMAN, "Extend the retry lease\n\nFreeze-Lease: human\n");
    p.git_cmd(&["checkout", "-q", "feature"]);
    p.git_cmd(&["merge", "-q", "--no-ff", "-m", "Merge main", "main"]);
    let m1 = p.rev("HEAD");
    p.git_cmd(&["checkout", "-q", "main"]);
    set_leases(&p, &[(LEASE, LATER), (NEW_LEASE, EXPIRES)]);
    let h2 = p.commit_as(HUMAN, "Freeze the unicode test\n\nFreeze-Lease: human\n");
    p.git_cmd(&["checkout", "-q", "feature"]);
    unrelated(&p, "src/feature.py", "More feature work");
    p.git_cmd(&["merge", "-q", "--no-ff", "-m", "Merge main again", "main"]);
    let m2 = p.rev("HEAD");
    p.git_cmd(&["checkout", "-q", "main"]);
    p.git_cmd(&["merge", "-q", "--no-ff", "-m", "Merge feature", "feature"]);
    let tip = p.rev("HEAD");
    assert_eq!(
        p.rev(&format!("{tip}:qa/freeze.toml")),
        p.rev(&format!("{h2}:qa/freeze.toml"))
    );

    for base in [&b, &h, &h2] {
        let run = check(&p, &format!("{base}..{tip}"));
        expect(&run, 0, &[]);
        let json = run.json();
        for merge in [&m1, &m2, &tip] {
            if json["commits"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["id"] == **merge)
            {
                assert_eq!(changes_of(&json, merge), json!([]), "{merge} from {base}");
            }
        }
    }
    // The feature branch alone, judged from main (the merges of main into it included).
    let run = check(&p, &format!("{h2}..{m2}"));
    expect(&run, 0, &[]);
}

#[test]
fn content_made_again_is_brought_by_its_newer_making() {
    // A human freezes the unicode test (C1) and unfreezes it (C2): the freeze file is back to
    // the start's content. A branch from the start (S0, same content) is merged, then a branch
    // from C1 (S1): its merge takes C2's content, as git does. S1 saw the start's making of
    // that content and moved past it, but not C2's: C2 brings it.
    let (p, start) = repo();
    p.git_cmd(&["checkout", "-q", "-b", "s0"]);
    unrelated(&p, "src/s0.py", "Early branch work");
    p.git_cmd(&["checkout", "-q", "main"]);
    set_leases(&p, &[(LEASE, EXPIRES), (NEW_LEASE, EXPIRES)]);
    p.commit_as(HUMAN, "Freeze the unicode test\n\nFreeze-Lease: human\n");
    p.git_cmd(&["checkout", "-q", "-b", "s1"]);
    unrelated(&p, "src/s1.py", "Later branch work");
    p.git_cmd(&["checkout", "-q", "main"]);
    set_leases(&p, &[(LEASE, EXPIRES)]);
    p.commit_as(HUMAN, "Unfreeze it: fixed\n\nFreeze-Lease: human\n");
    p.git_cmd(&["merge", "-q", "--no-ff", "-m", "Merge s0", "s0"]);
    p.git_cmd(&["merge", "-q", "--no-ff", "-m", "Merge s1", "s1"]);
    let tip = p.rev("HEAD");
    assert_eq!(
        p.rev(&format!("{tip}:qa/freeze.toml")),
        p.rev(&format!("{start}:qa/freeze.toml"))
    );
    let run = check(&p, &since(&start));
    expect(&run, 0, &[]);
    assert_eq!(changes_of(&run.json(), &tip), json!([]));
}

// ---------------------------------------------------------------------------------------
// Issue 14: edits that surviving mutants of the judging code let through.

#[test]
fn agent_root_commit_brought_in_by_an_unrelated_history_is_judged() {
    // A root commit has no parent: it is compared with the empty tree, not taken for a
    // merge. Here an agent starts a history of its own with a deploy workflow (a [protect]
    // path), and a human merges that history in: the merge itself takes the file as one side
    // made it, so only the root commit carries the edit.
    let (p, base) = repo();
    p.git_cmd(&["checkout", "-q", "--orphan", "tools"]);
    p.git_cmd(&["rm", "-rfq", "."]);
    p.write(".github/workflows/deploy.yml", "on: push\n");
    let root = p.commit_as(CURSOR, "Add a deploy workflow\n");
    assert_eq!(
        p.git_cmd(&["rev-list", "--parents", "-n1", &root]).trim(),
        root
    );
    p.git_cmd(&["checkout", "-q", "main"]);
    p.git_as(
        HUMAN,
        &[
            "merge",
            "-q",
            "--allow-unrelated-histories",
            "--no-edit",
            "tools",
        ],
    );
    let merge = p.rev("HEAD");
    let run = check(&p, &since(&base));
    expect(&run, 1, &["agent_edit_protected"]);
    let json = run.json();
    let f = only(&json, "agent_edit_protected");
    assert_eq!(f["path"], ".github/workflows/deploy.yml");
    assert_eq!(f["commit"], p.short(&root));
    assert_eq!(
        changes_of(&json, &root),
        json!([change(".github/workflows/deploy.yml", "added", "ledger")])
    );
    assert_eq!(changes_of(&json, &merge), json!([]));
}

#[test]
fn agent_edit_earlier_in_the_range_than_the_ledger_change_that_protects_it() {
    // The agent writes a lease file first; a human then points the ledger at it. What any
    // ledger of the range protects is protected for the whole range, before the change too.
    let (p, base) = repo();
    p.write(
        "qa/leases.toml",
        freeze_toml(BUDGET, &[(LEASE, EXPIRES), (NEW_LEASE, EXPIRES)]),
    );
    let agent = p.commit_as(CURSOR, "Draft a lease file\n");
    p.write(
        "qa/merge_ledger.toml",
        LEDGER.replace("file = \"qa/freeze.toml\"", "file = \"qa/leases.toml\""),
    );
    p.commit_as(HUMAN, "Use the new lease file\n\nLedger-Change: human\n");
    let run = check(&p, &since(&base));
    expect(&run, 1, &["agent_edit_protected"]);
    let json = run.json();
    let f = only(&json, "agent_edit_protected");
    assert_eq!(f["path"], "qa/leases.toml");
    assert_eq!(f["commit"], p.short(&agent));
    assert_eq!(
        changes_of(&json, &agent),
        json!([change("qa/leases.toml", "added", "freeze")])
    );
}

#[test]
fn agent_edit_under_a_top_directory_only_a_later_ledger_protects() {
    // `deploy/` is a directory no rule of the base ledger reaches into: the widened set must
    // descend into it too, for the agent commit made before the human protected it.
    let (p, base) = repo();
    p.write("deploy/prod.env", "TOKEN=agent\n");
    let agent = p.commit_as(CURSOR, "Add the deploy settings\n");
    p.write(
        "qa/merge_ledger.toml",
        protect_ledger(r#"".github/workflows/**", "deploy/**""#),
    );
    p.commit_as(
        HUMAN,
        "Protect the deploy settings\n\nLedger-Change: human\n",
    );
    let run = check(&p, &since(&base));
    expect(&run, 1, &["agent_edit_protected"]);
    let json = run.json();
    let f = only(&json, "agent_edit_protected");
    assert_eq!(f["path"], "deploy/prod.env");
    assert_eq!(f["commit"], p.short(&agent));
}

#[test]
fn protect_glob_added_in_the_range_beside_one_with_the_same_literal_prefix() {
    // `.github/workflows/*.yaml` starts from the same directory as the base's
    // `.github/workflows/*.yml`; it is a new rule all the same.
    let (p, _) = repo();
    p.write(
        "qa/merge_ledger.toml",
        protect_ledger(r#"".github/workflows/*.yml""#),
    );
    let base = p.commit_as(HUMAN, "Protect the workflows\n\nLedger-Change: human\n");
    p.write(
        "qa/merge_ledger.toml",
        protect_ledger(r#"".github/workflows/*.yml", ".github/workflows/*.yaml""#),
    );
    p.commit_as(
        HUMAN,
        "Protect the .yaml spelling too\n\nLedger-Change: human\n",
    );
    p.write(".github/workflows/release.yaml", "on: push\n");
    let agent = p.commit_as(CURSOR, "Add a release workflow\n");
    let run = check(&p, &since(&base));
    expect(&run, 1, &["agent_edit_protected"]);
    let json = run.json();
    let f = only(&json, "agent_edit_protected");
    assert_eq!(f["path"], ".github/workflows/release.yaml");
    assert_eq!(f["commit"], p.short(&agent));

    // Control: without the range's ledger change the file is not protected.
    p.git_cmd(&["checkout", "-q", "-b", "control", &base]);
    p.write(".github/workflows/release.yaml", "on: push\n");
    p.commit_as(CURSOR, "Add a release workflow\n");
    expect(&check(&p, &since(&base)), 0, &[]);
}

/// Writes a tree object whose entries are those of `tree`, in the order of `names` (git
/// itself always sorts them; `git hash-object --literally` writes what it is given, as a
/// pusher can when the server does not fsck).
fn tree_in_order(p: &Project, tree: &str, names: &[&str]) -> String {
    let listing = p.git_cmd(&["ls-tree", tree]);
    let mut bytes = Vec::new();
    for name in names {
        let line = listing
            .lines()
            .find(|l| l.split('\t').nth(1) == Some(*name))
            .unwrap_or_else(|| panic!("{name} in {listing}"));
        let (meta, _) = line.split_once('\t').unwrap();
        let fields: Vec<&str> = meta.split(' ').collect();
        let (mode, id) = (fields[0].trim_start_matches('0'), fields[2]);
        bytes.extend_from_slice(format!("{mode} {name}\0").as_bytes());
        bytes.extend(
            (0..id.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&id[i..i + 2], 16).unwrap()),
        );
    }
    assert_eq!(names.len(), listing.lines().count(), "every entry, once");
    let file = p.path(".git/guard-test-tree");
    std::fs::write(&file, bytes).unwrap();
    p.git_cmd(&[
        "hash-object",
        "--literally",
        "-t",
        "tree",
        "-w",
        file.to_str().unwrap(),
    ])
    .trim()
    .to_string()
}

#[test]
fn protected_directory_listed_out_of_order_in_a_tree_is_still_compared() {
    // In a tree whose entries are not sorted, a binary search for a name can miss it (here
    // `.github`, listed last); the entry is found by reading the tree, so the edit is the
    // modification it is, not a deletion of the whole directory.
    let (p, base) = repo();
    p.write(".github/workflows/ci.yml", "on: never\n");
    let sorted = p.commit_as(CURSOR, "Turn CI off\n");
    let tree = tree_in_order(&p, &sorted, &["qa", "src", "tests", ".github"]);
    let unsorted = p
        .git_as(
            CURSOR,
            &["commit-tree", &tree, "-p", &base, "-m", "Turn CI off"],
        )
        .trim()
        .to_string();
    p.git_cmd(&["branch", "unsorted", &unsorted]);
    let fsck = hermetic(std::process::Command::new("git"), p.root())
        .args(["fsck", "--no-dangling"])
        .current_dir(p.root())
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&fsck.stdout).contains("treeNotSorted")
            || String::from_utf8_lossy(&fsck.stderr).contains("treeNotSorted"),
        "git sees the tree as unsorted: {fsck:?}"
    );
    // The unsorted root is itself refused (`malformed_tree`), and the edit is still named.
    let run = check(&p, &format!("{base}..{unsorted}"));
    expect(&run, 1, &["agent_edit_protected", "malformed_tree"]);
    let json = run.json();
    assert_eq!(
        changes_of(&json, &unsorted),
        json!([change(".github/workflows/ci.yml", "modified", "ledger")])
    );
}

#[test]
fn harness_file_in_a_root_listed_out_of_order_is_still_compared() {
    // The root-level harness walk joins two sorted entry lists; an unsorted root (written by
    // hand) is compared by name instead, so the edit is the modification it is, not a
    // deletion found where a lookup missed the entry.
    let (p, _) = repo();
    p.write("conftest.py", "import pytest\n");
    let base = p.commit_as(HUMAN, "Add a conftest\n\nTest-Harness: human\n");
    p.write("conftest.py", "import pytest\n# every outcome passes\n");
    let sorted = p.commit_as(CURSOR, "Tune the harness\n");
    let tree = tree_in_order(
        &p,
        &sorted,
        &["qa", "src", "tests", ".github", "conftest.py"],
    );
    let unsorted = p
        .git_as(
            CURSOR,
            &["commit-tree", &tree, "-p", &base, "-m", "Tune the harness"],
        )
        .trim()
        .to_string();
    p.git_cmd(&["branch", "unsorted", &unsorted]);
    let run = check(&p, &format!("{base}..{unsorted}"));
    expect(&run, 1, &["agent_edit_protected", "malformed_tree"]);
    let json = run.json();
    assert_eq!(
        changes_of(&json, &unsorted),
        json!([change("conftest.py", "modified", "harness")])
    );
}

#[test]
fn frozen_test_behind_a_symlink_is_rewritten_when_its_target_is_gutted() {
    // The frozen test's file is a symlink on both sides: guard cannot read it as a file, and
    // an unreadable test file must not pass as untouched.
    let (p, _) = repo();
    p.write("tests/retry_impl.py", RETRY_TEST);
    p.remove("tests/test_retry.py");
    std::os::unix::fs::symlink("retry_impl.py", p.path("tests/test_retry.py")).unwrap();
    p.commit_as(HUMAN, "Move the retry test\n");
    let base = allow_passing_frozen(&p);
    p.write(
        "tests/retry_impl.py",
        RETRY_TEST.replace("def test_backoff():\n", "def test_backoff():\n    return\n"),
    );
    p.commit_as(CURSOR, "Stabilise the retry test\n");
    junit_with_retry_passing(&p);
    let run = check_junit(&p, &base);
    // The target is a test file of its own (under `tests/`): its early return is read there.
    expect(&run, 1, &["frozen_test_rewritten", "weakened_test"]);
    let w = only(&run.json(), "weakened_test");
    assert_eq!(w["path"], "tests/retry_impl.py");
}

/// Code under test runs as the CI job's user and can write that clone's `.git`: a
/// commit-graph that gives the agent's commit its parent's tree hides the edit from a
/// `guard check` run there afterwards (guard, like git, trusts the graph). A fetch never
/// carries the graph, so the fresh clone of a job of its own (the README's CI examples) sees
/// the edit.
#[test]
fn a_forged_commit_graph_fools_only_the_clone_it_was_written_in() {
    let (p, base) = repo();
    p.write("tests/fixtures/invoice.json", INVOICE_V2);
    p.write(
        "qa/fixtures.lock.json",
        lockfile(&[
            ("tests/fixtures/batch.ndjson", BATCH),
            ("tests/fixtures/invoice.json", INVOICE_V2),
        ]),
    );
    let agent = p.commit_as(CURSOR, "Fix the invoice fixture\n");
    let range = format!("{base}..{agent}");
    let honest = p.guard(&["check", &range, "--format", "json"]);
    expect(&honest, 1, &["agent_edit_protected"]);
    // The forge's copy, which every CI job fetches from; `p` is now the tests job's clone.
    let forge = Project::clone_of(&p, true);

    // What the agent's test code can do in the job that ran it: write a commit-graph, then
    // put the base's tree in the agent commit's entry (the only place that tree id is).
    p.git_cmd(&["commit-graph", "write", "--reachable"]);
    let raw = |rev: &str| {
        let hex = p.rev(rev);
        (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect::<Vec<u8>>()
    };
    let (agent_tree, base_tree) = (
        raw(&format!("{agent}^{{tree}}")),
        raw(&format!("{base}^{{tree}}")),
    );
    let graph = p.path(".git/objects/info/commit-graph");
    let mut bytes = std::fs::read(&graph).unwrap();
    let n = agent_tree.len();
    let at: Vec<usize> = (0..=bytes.len() - n)
        .filter(|&i| bytes[i..i + n] == agent_tree[..])
        .collect();
    assert_eq!(at.len(), 1, "the agent commit's tree is in the graph once");
    bytes[at[0]..at[0] + n].copy_from_slice(&base_tree);
    std::fs::remove_file(&graph).unwrap();
    std::fs::write(&graph, &bytes).unwrap();
    let fooled = p.guard(&["check", &range, "--format", "json"]);
    expect(&fooled, 0, &[]);

    // The judging job's clone, fetched as CI does (not hard-linked from this one).
    let fresh = Project::new();
    let url = format!("file://{}", forge.root().display());
    fresh.git_cmd(&["clone", "-q", &url, fresh.root().to_str().unwrap()]);
    assert!(!fresh.path(".git/objects/info/commit-graph").exists());
    let judged = fresh.guard(&["check", &range, "--format", "json"]);
    expect(&judged, 1, &["agent_edit_protected"]);
    assert_eq!(judged.json()["findings"], honest.json()["findings"]);
}

/// `guard check` reads a long range on two threads, each through pack readers of its own over
/// the repository's object directory. A repository whose objects only git's environment
/// shows (`GIT_ALTERNATE_OBJECT_DIRECTORIES`) is still judged in full, and the agent's edit at
/// either end of the range is found: such readers are not used when git's environment names
/// object directories, and what they cannot find is read through the usual handle (the test
/// fails with "object not found" without both).
#[test]
fn a_long_range_whose_objects_only_gits_environment_shows_is_judged_in_full() {
    let (p, base) = repo();
    set_leases(&p, &[(LEASE, EXPIRES), (NEW_LEASE, EXPIRES)]);
    let first = p.commit_as(CURSOR, "Freeze the flaky parser test\n");
    for k in 0..298 {
        p.git_cmd(&["commit", "-q", "--allow-empty", "-m", &format!("step {k}")]);
    }
    set_leases(&p, &[(LEASE, EXPIRES)]);
    let last = p.commit_as(CURSOR, "Drop the new lease\n");
    let range = since(&base);
    assert_eq!(p.git_cmd(&["rev-list", "--count", &range]).trim(), "300");
    let here = check(&p, &range);
    expect(&here, 1, &["agent_added_lease", "agent_edit_protected"]);
    let edits: Vec<Value> = findings(&here.json(), "agent_edit_protected")
        .iter()
        .map(|f| f["commit"].clone())
        .collect();
    assert_eq!(edits, [json!(p.short(&first)), json!(p.short(&last))]);

    // The same history in a bare repository of refs only; its objects stay in the project.
    let elsewhere = tempfile::tempdir().unwrap();
    let bare = elsewhere.path().join("refs-only.git");
    let objects = p.path(".git/objects");
    let objects = objects.to_str().unwrap();
    let git = |args: &[&str]| {
        let out = hermetic(std::process::Command::new("git"), p.root())
            .env("GIT_ALTERNATE_OBJECT_DIRECTORIES", objects)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    git(&["init", "-q", "--bare", bare.to_str().unwrap()]);
    let bare_dir = format!("--git-dir={}", bare.display());
    git(&[&bare_dir, "update-ref", "refs/heads/base", &base]);
    git(&[&bare_dir, "update-ref", "refs/heads/main", &last]);
    let run = hermetic(
        std::process::Command::new(env!("CARGO_BIN_EXE_guard")),
        p.root(),
    )
    .env("GIT_ALTERNATE_OBJECT_DIRECTORIES", objects)
    .args([
        "-C",
        bare.to_str().unwrap(),
        "check",
        "base..main",
        "--format",
        "json",
    ])
    .output()
    .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert_eq!(
        run.status.code(),
        Some(1),
        "{stdout}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let json: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["findings"], here.json()["findings"]);
    assert_eq!(json["commits"], here.json()["commits"]);
}
