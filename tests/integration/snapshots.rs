//! Snapshots of what users see: the text and JSON reports of `score`, `check` and `lint`,
//! `deselect` and `init`, the help text, and the pre-receive hook's lines as the pusher sees
//! them. Each snapshot is one command: the command line, its exit code, its stdout and its
//! stderr, with what changes from run to run redacted by [`assert_shot`] (temp dirs, commit
//! ids, today's date). A change of output shows in review as a changed file under
//! `snapshots/`; assertions on meaning stay in the other modules.
//!
//! After an intended change of output: `INSTA_UPDATE=always cargo test --test integration
//! snapshots` (or `cargo insta review`), then read every changed `.snap` before committing
//! it. Under `CI=true` (or `INSTA_UPDATE=no`) a mismatch fails without writing anything.

use std::fmt::Write as _;
use std::process::{Command, Stdio};

use crate::check::{
    CURSOR, EXPIRES, HUMAN, NEW_LEASE, diverge, extend_lease, lockfile, repo, set_leases, since,
    unrelated,
};
use crate::scenario::{
    FAIL, LEDGER, PASS, clean, clean_cases, freeze_toml, junit, use_freeze_toml,
};
use crate::support::server::{AGENTS, Server, append_in, ledger};
use crate::support::{Project, hermetic};

/// One command as a user ran it, and what it printed.
struct Shot {
    /// The command line as typed (arguments with spaces quoted).
    command: String,
    code: i32,
    stdout: String,
    stderr: String,
    /// Today's UTC date before and after the run: they differ only across midnight.
    today: [String; 2],
}

fn today_utc() -> String {
    jiff::Timestamp::now()
        .to_zoned_datetime(jiff::tz::TimeZone::UTC)
        .date()
        .to_string()
}

fn command_line(program: &str, args: &[&str]) -> String {
    let mut line = program.to_string();
    for arg in args {
        if arg.is_empty() || arg.contains([' ', '\'', '"']) {
            write!(line, " '{arg}'").unwrap();
        } else {
            write!(line, " {arg}").unwrap();
        }
    }
    line
}

/// Runs `cmd` (stdin closed) and records what it printed.
fn shoot(mut cmd: Command, command: String) -> Shot {
    let before = today_utc();
    let out = cmd.stdin(Stdio::null()).output().unwrap();
    Shot {
        command,
        code: out.status.code().expect("exited by a signal"),
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
        today: [before, today_utc()],
    }
}

/// `guard ARGS` in the project root, hermetic, as a 100-column terminal without colour
/// would show help text (clap reads `COLUMNS` when stdout is not a terminal).
fn guard(p: &Project, args: &[&str]) -> Shot {
    let mut cmd = hermetic(Command::new(env!("CARGO_BIN_EXE_guard")), p.root());
    cmd.args(args)
        .current_dir(p.root())
        .env("COLUMNS", "100")
        .env_remove("LINES")
        .env_remove("CLICOLOR_FORCE");
    let shot = shoot(cmd, command_line("guard", args));
    crate::support::json_contract::check_if_json(args, &shot.stdout);
    shot
}

/// One stream of a snapshot; an empty stream and a missing final newline are said, since
/// insta trims the end of a snapshot.
fn section(out: &mut String, name: &str, text: &str) {
    if text.is_empty() {
        writeln!(out, "--- {name}: empty").unwrap();
        return;
    }
    writeln!(out, "--- {name}").unwrap();
    out.push_str(text);
    if !text.ends_with('\n') {
        writeln!(out, "\n--- {name} has no newline at its end").unwrap();
    }
}

/// Snapshots `shot` as `name`, with what changes from run to run redacted the same way for
/// every snapshot:
///
/// - `commits` names the commits the test made (`(label, id)`): a full id shows as
///   `[label]`, one abbreviated to N digits as `[label:N]`, so a snapshot still says which
///   commit a line is about and how long its id is. Other full object ids show as `[ID]`.
///   Abbreviated ids of commits not named stay: with fixed identities and dates they are
///   stable, and a catch-all for short hex would also hit SHA-256 digest prefixes and
///   numbers.
/// - Temp dirs show as `[TMP]`.
/// - Today's UTC date where guard prints it (`today_utc`, `today ... UTC`) shows as
///   `[TODAY]`; other dates (lease expiries) are the test's own and stay.
/// - git pads each `remote:` line with 8 spaces (to clear a terminal line); that padding is
///   git's, not guard's, and is dropped.
#[track_caller]
fn assert_shot(name: &str, shot: &Shot, commits: &[(&str, &str)]) {
    let mut body = String::new();
    writeln!(body, "$ {}", shot.command).unwrap();
    writeln!(body, "exit: {}", shot.code).unwrap();
    section(&mut body, "stdout", &shot.stdout);
    section(&mut body, "stderr", &shot.stderr);

    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    for (label, id) in commits {
        // 40 hex digits, or 64 in a SHA-256 repository (CI runs these under both formats).
        assert!(
            matches!(id.len(), 40 | 64) && id.bytes().all(|b| b.is_ascii_hexdigit()),
            "{label} is not a full commit id: {id}"
        );
        settings.add_filter(&format!(r"\b{id}\b"), format!("[{label}]"));
        for digits in 7..40 {
            settings.add_filter(
                &format!(r"\b{}\b", &id[..digits]),
                format!("[{label}:{digits}]"),
            );
        }
    }
    settings.add_filter(r"\b[0-9a-f]{40}\b", "[ID]");
    // A temp dir made by the test helpers (`guard-test-XXXXXX`) or by tempfile's default
    // (`.tmpXXXXXX`), with the directories above it.
    settings.add_filter(
        r"(?:/[\w.+-]+)*/(?:guard-test-|\.tmp)[0-9A-Za-z]{6}",
        "[TMP]",
    );
    for today in &shot.today {
        settings.add_filter(
            &format!(r#"(today(?:_utc": "| is | )){today}\b"#),
            "${1}[TODAY]",
        );
    }
    settings.add_filter(r"(?m)^(remote: .*) {8}$", "${1}");
    settings.bind(|| insta::assert_snapshot!(name, body));
}

/// `guard ARGS` and `guard ARGS --format json`, snapshotted as `NAME-text` and `NAME-json`.
#[track_caller]
fn assert_both_formats(p: &Project, name: &str, args: &[&str], commits: &[(&str, &str)]) {
    assert_shot(&format!("{name}-text"), &guard(p, args), commits);
    let json = [args, &["--format", "json"]].concat();
    assert_shot(&format!("{name}-json"), &guard(p, &json), commits);
}

// ---------------------------------------------------------------------------------------
// `guard score`: the scenario project that merges, and each way it breaks.

const SCORE: &[&str] = &["score", "--junit", "junit.xml"];

/// The scenario's retry test as a pytest node id, for a `freeze.toml` lease.
const RETRY_NODEID: &str = "tests/runtime/test_retry.py::test_backoff_under_load";

fn score_with_cases(name: &str, edit: impl FnOnce(&mut Vec<crate::scenario::Case<'static>>)) {
    let p = clean();
    let mut cases = clean_cases();
    edit(&mut cases);
    p.write("junit.xml", junit(&cases));
    assert_both_formats(&p, name, SCORE, &[]);
}

#[test]
fn score_clean_project_merges() {
    assert_both_formats(&clean(), "score-clean", SCORE, &[]);
}

#[test]
fn score_failing_property() {
    score_with_cases("score-property-failing", |cases| cases[0].2 = FAIL);
}

#[test]
fn score_frozen_test_passing() {
    score_with_cases("score-frozen-test-passing", |cases| cases[1].2 = PASS);
}

#[test]
fn score_expired_lease() {
    let p = clean();
    let freeze = freeze_toml("max_active_leases = 2", &[(RETRY_NODEID, "2001-01-01")]);
    use_freeze_toml(&p, &freeze);
    assert_both_formats(&p, "score-expired-lease", SCORE, &[]);
}

#[test]
fn score_leases_over_budget() {
    let p = clean();
    let leases = [
        (RETRY_NODEID, "2999-12-31"),
        ("tests/test_billing.py::test_skipped", "2999-12-31"),
    ];
    use_freeze_toml(&p, &freeze_toml("max_active_leases = 1", &leases));
    assert_both_formats(&p, "score-freeze-budget", SCORE, &[]);
}

#[test]
fn score_fixture_digest() {
    let p = clean();
    p.write(
        "tests/fixtures/invoice_v3.json",
        "{\"net\": 100, \"tax\": 0}\n",
    );
    assert_both_formats(&p, "score-fixture-digest", SCORE, &[]);
}

#[test]
fn score_unhashed_fixture() {
    let p = clean();
    p.write("tests/fixtures/new_golden.json", "{}\n");
    assert_both_formats(&p, "score-fixture-unhashed", SCORE, &[]);
}

#[test]
fn score_thin_property() {
    let p = clean();
    p.write(
        "tests/properties/test_trivial.py",
        "def test_x():\n    assert True\n",
    );
    let mut cases = clean_cases();
    cases.push(("tests.properties.test_trivial", "test_x", PASS));
    p.write("junit.xml", junit(&cases));
    assert_both_formats(&p, "score-property-thin", SCORE, &[]);
}

#[test]
fn score_missing_seeds() {
    let p = clean();
    p.remove("tests/properties/seeds/invoice.json");
    assert_both_formats(&p, "score-property-seeds", SCORE, &[]);
}

#[test]
fn score_coverage_below_floor() {
    let p = clean();
    // LCOV: 7 of 10 lines hit is 70%.
    p.write("cov.lcov", "TN:\nSF:src/a.py\nLF:10\nLH:7\nend_of_record\n");
    let args = [SCORE, &["--coverage", "cov.lcov", "--min-proven", "70.5"]].concat();
    assert_both_formats(&p, "score-proven-coverage", &args, &[]);
}

#[test]
fn score_without_junit() {
    assert_both_formats(&clean(), "score-junit-missing", &["score"], &[]);
}

#[test]
fn score_several_findings_at_once() {
    // The order findings are printed in is part of the output.
    let p = clean();
    p.write("tests/fixtures/invoice_v3.json", "{}\n")
        .write("tests/fixtures/new_golden.json", "{}\n");
    let freeze = freeze_toml("max_active_leases = 2", &[(RETRY_NODEID, "2001-01-01")]);
    use_freeze_toml(&p, &freeze);
    let mut cases = clean_cases();
    cases[0].2 = FAIL;
    cases[2].2 = FAIL;
    p.write("junit.xml", junit(&cases));
    assert_both_formats(&p, "score-several-findings", SCORE, &[]);
}

#[test]
fn score_malformed_junit() {
    let p = clean();
    // Cut off inside the start tag on the second line.
    p.write(
        "bad.xml",
        "<testsuites>\n<testsuite name=\"x\"><testcase classname=\"a\" name=\"b\"",
    );
    let args = ["score", "--junit", "bad.xml"];
    assert_both_formats(&p, "score-malformed-junit", &args, &[]);
}

#[test]
fn score_malformed_ledger() {
    let p = clean();
    p.write(
        "qa/merge_ledger.toml",
        LEDGER.replace("required = true", "required = \"yes\""),
    );
    assert_both_formats(&p, "score-malformed-ledger", SCORE, &[]);
}

// ---------------------------------------------------------------------------------------
// `guard lint`, `deselect`, `init`, help and usage errors.

#[test]
fn lint_ok() {
    assert_both_formats(&clean(), "lint-ok", &["lint"], &[]);
}

#[test]
fn lint_findings() {
    let p = clean();
    p.write("tests/properties/test_thin.py", "def test():\n    pass\n");
    let lease = [("tests/a.py::test_b", "2001-01-01")];
    use_freeze_toml(&p, &freeze_toml("max_active_leases = 0", &lease));
    assert_both_formats(&p, "lint-findings", &["lint"], &[]);
}

#[test]
fn lint_warnings() {
    // A plain freeze list without a budget, and a property path with no property file.
    let p = clean();
    let ledger = LEDGER.replace("max_active_leases = 2\n", "").replace(
        "paths = [\"tests/properties/\"]",
        "paths = [\"tests/properties/\", \"tests/props/\"]",
    );
    p.write("qa/merge_ledger.toml", ledger);
    std::fs::create_dir_all(p.path("tests/props")).unwrap();
    assert_both_formats(&p, "lint-warnings", &["lint"], &[]);
}

#[test]
fn lint_malformed_lease() {
    let p = clean();
    use_freeze_toml(
        &p,
        "version = 1\nmax_active_leases = 1\n\n[[leases]]\nnodeid = \"a::b\"\nowner = \"x\"\nexpires = \"2030-01-01\"\n",
    );
    assert_both_formats(&p, "lint-malformed-lease", &["lint"], &[]);
}

const COLLECTED: &str = "tests/properties/test_codec_roundtrip.py::test_roundtrip_on_seeds\n\
tests/runtime/test_retry.py::test_backoff_under_load\n\
tests/test_billing.py::TestInvoice::test_total[p-1]\n\
\n4 tests collected in 0.02s\n";

#[test]
fn deselect_for_each_runner() {
    let p = clean();
    p.write("collected.txt", COLLECTED);
    let args = ["deselect", "--collected", "collected.txt"];
    assert_shot("deselect-pytest", &guard(&p, &args), &[]);

    let rust = clean();
    rust.write("qa/flake_freeze.txt", "tests::flaky_network\n")
        .write(
            "collected.txt",
            "tiny-crate:\n    tests::adds\n    tests::flaky_network\n",
        );
    for runner in ["nextest", "cargo"] {
        let args = [&args[..], &["--runner", runner]].concat();
        assert_shot(&format!("deselect-{runner}"), &guard(&rust, &args), &[]);
    }
}

#[test]
fn deselect_refuses_an_expired_lease() {
    let p = clean();
    p.write("collected.txt", COLLECTED);
    let freeze = freeze_toml("max_active_leases = 3", &[(RETRY_NODEID, "2001-01-01")]);
    use_freeze_toml(&p, &freeze);
    let args = ["deselect", "--collected", "collected.txt"];
    assert_shot("deselect-expired-lease", &guard(&p, &args), &[]);
}

#[test]
fn init_writes_the_starter_files() {
    let p = Project::git();
    p.write("tests/fixtures/golden.json", "{\"a\": 1}\n");
    let init = guard(&p, &["init"]);
    assert_shot("init", &init, &[]);

    // What it wrote is what users start from. Its example lease expires 30 days after the
    // run (`commands::init_dates_its_example_lease_30_days_ahead` checks the date).
    let mut files = String::new();
    for file in [
        "qa/merge_ledger.toml",
        "qa/freeze.toml",
        "qa/fixtures.lock.json",
    ] {
        let mut text = p.read(file);
        for today in &init.today {
            let date: jiff::civil::Date = today.parse().unwrap();
            let expires = date.checked_add(jiff::Span::new().days(30)).unwrap();
            text = text.replace(
                &format!("expires = \"{expires}\""),
                "expires = \"[TODAY+30]\"",
            );
        }
        section(&mut files, file, &text);
    }
    let written = Shot {
        command: "cat qa/merge_ledger.toml qa/freeze.toml qa/fixtures.lock.json".to_string(),
        code: 0,
        stdout: files,
        stderr: String::new(),
        today: [today_utc(), today_utc()],
    };
    assert_shot("init-files", &written, &[]);

    assert_shot("init-again", &guard(&p, &["init"]), &[]);
}

#[test]
fn init_in_a_cargo_project() {
    let p = Project::git();
    p.write(
        "Cargo.toml",
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\n",
    );
    p.write(".gitignore", "/target\ncollected.txt\n");
    assert_shot("init-cargo", &guard(&p, &["init"]), &[]);
}

#[test]
fn help_text() {
    let p = Project::new();
    assert_shot("help", &guard(&p, &["--help"]), &[]);
    assert_shot("help-check", &guard(&p, &["check", "--help"]), &[]);
    assert_shot("help-score", &guard(&p, &["score", "--help"]), &[]);
    let args = ["score", "--format", "yaml"];
    assert_shot("usage-error", &guard(&p, &args), &[]);
}

// ---------------------------------------------------------------------------------------
// `guard check RANGE`.

/// A JUnit report of a clean run of the `check` repository: the property passes, the frozen
/// test fails.
fn clean_run(p: &Project) {
    p.write(
        "junit.xml",
        junit(&[
            (
                "tests.properties.test_codec_roundtrip",
                "test_roundtrip_on_seeds",
                PASS,
            ),
            ("tests.test_retry", "test_backoff", FAIL),
        ]),
    );
}

#[test]
fn check_clean_human_range() {
    let (p, base) = repo();
    let c = unrelated(&p, "src/app.py", "Bump the version");
    clean_run(&p);
    let range = since(&base);
    let args = ["check", &range, "--junit", "junit.xml"];
    let commits = [("base", &*base), ("bump", &*c)];
    assert_both_formats(&p, "check-human-range", &args, &commits);
}

#[test]
fn check_without_junit() {
    let (p, base) = repo();
    let c = unrelated(&p, "src/app.py", "Bump the version");
    let range = since(&base);
    let commits = [("base", &*base), ("bump", &*c)];
    assert_both_formats(&p, "check-no-junit", &["check", &range], &commits);
}

#[test]
fn check_with_malformed_junit() {
    // The commits are judged; the tests cannot be: no decision, exit 2.
    let (p, base) = repo();
    let c = unrelated(&p, "src/app.py", "Bump the version");
    p.write(
        "junit.xml",
        "<testsuites>\n<testsuite name=\"x\"><testcase classname=\"a\" name=\"b\"",
    );
    let range = since(&base);
    let args = ["check", &range, "--junit", "junit.xml"];
    let commits = [("base", &*base), ("bump", &*c)];
    assert_both_formats(&p, "check-malformed-junit", &args, &commits);
}

#[test]
fn check_agent_edits_the_freeze_file() {
    let (p, base) = repo();
    set_leases(&p, &[(crate::check::LEASE, EXPIRES), (NEW_LEASE, EXPIRES)]);
    let c = p.commit_as(CURSOR, "Freeze the flaky parser test\n");
    let range = since(&base);
    let commits = [("base", &*base), ("agent", &*c)];
    assert_both_formats(&p, "check-agent-freeze-edit", &["check", &range], &commits);
}

#[test]
fn check_lockfile_change_shows_its_semantic_diff() {
    use crate::check::{BATCH, INVOICE_V2};
    let (p, base) = repo();
    p.write("tests/fixtures/invoice.json", INVOICE_V2).write(
        "qa/fixtures.lock.json",
        lockfile(&[
            ("tests/fixtures/batch.ndjson", BATCH),
            ("tests/fixtures/invoice.json", INVOICE_V2),
        ]),
    );
    let c = p.commit_as(HUMAN, "New tax rate\n\nFixture-Lock: human\n");
    let range = since(&base);
    let commits = [("base", &*base), ("relock", &*c)];
    assert_both_formats(&p, "check-lockfile-change", &["check", &range], &commits);
}

#[test]
fn check_verbose() {
    // A human lease extension with its trailer, an agent's unprotected change, and a
    // human's: every commit listed with its author and agent status.
    let (p, base) = repo();
    extend_lease(&p);
    let lease = p.commit_as(HUMAN, "Extend the retry lease\n\nFreeze-Lease: human\n");
    p.write("src/app.py", "VERSION = 2\n");
    let agent = p.commit_as(CURSOR, "Bump the version\n");
    let human = unrelated(&p, "README.md", "Document the release");
    let range = since(&base);
    let commits = [
        ("base", &*base),
        ("lease", &*lease),
        ("agent", &*agent),
        ("human", &*human),
    ];
    let shot = guard(&p, &["check", &range, "--verbose"]);
    assert_shot("check-verbose", &shot, &commits);
}

#[test]
fn check_merge_that_changes_the_lockfile() {
    let (p, base) = repo();
    let side = diverge(&p, |p| unrelated(p, "src/side.py", "Side work"));
    let main = p.rev("HEAD");
    p.git_cmd(&["merge", "-q", "--no-ff", "--no-commit", "side"]);
    // Same entries, other bytes: a change made in the merge itself.
    let compact = p.read("qa/fixtures.lock.json").replace(['\n', ' '], "");
    p.write("qa/fixtures.lock.json", format!("{compact}\n"));
    p.git_cmd(&["add", "qa/fixtures.lock.json"]);
    p.git_cmd(&["commit", "-q", "--no-edit"]);
    let merge = p.rev("HEAD");
    let range = since(&base);
    let commits = [
        ("base", &*base),
        ("side", &*side),
        ("main", &*main),
        ("merge", &*merge),
    ];
    assert_both_formats(&p, "check-evil-merge", &["check", &range], &commits);
}

// ---------------------------------------------------------------------------------------
// The pre-receive hook installed by `install.sh --server`, as the pusher sees it.

/// `git push origin main` from the server's working clone with `env` set.
fn push(s: &Server, env: &[(&str, &str)]) -> Shot {
    let args = ["push", "origin", "main"];
    let mut cmd = s.git_cmd(&s.work);
    cmd.args(args).envs(env.iter().copied());
    let mut line = String::new();
    for (key, value) in env {
        write!(line, "{key}={value} ").unwrap();
    }
    shoot(cmd, line + &command_line("git", &args))
}

#[test]
fn hook_accepts_a_human_push() {
    let s = Server::new("");
    let c = s.human_change("README.md", "Document the project");
    let commits = [("base", &*s.base), ("human", &*c)];
    assert_shot("hook-accepted", &push(&s, &[]), &commits);
}

#[test]
fn hook_rejects_an_agent_push() {
    let s = Server::new("");
    let c = s.agent_edits_freeze("Park a flaky test");
    let commits = [("base", &*s.base), ("agent", &*c)];
    assert_shot("hook-rejected", &push(&s, &[]), &commits);
}

#[test]
fn hook_rejects_for_gitlab_with_its_prefix() {
    let s = Server::with_ledger(
        &ledger(&format!("{AGENTS}\npushers = [\"ci-bot-*\"]"), ""),
        |_| {},
    );
    append_in(&s.work, "qa/freeze.toml", "# parked\n");
    let c = s.commit("Park a test\n\nFreeze-Lease: human\n");
    let env = [("GL_ID", "user-7"), ("GL_USERNAME", "ci-bot-7")];
    let commits = [("base", &*s.base), ("parked", &*c)];
    assert_shot("hook-rejected-gitlab", &push(&s, &env), &commits);
}

// ---------------------------------------------------------------------------------------
// What commits and reports write, hostile, in every format.

/// Markdown link, autolink and emphasis syntax, HTML, and a bidi override: what a test name in
/// a JUnit report can hold (XML 1.0 has no escape characters).
const HOSTILE_TEST: &str = "test_x https://evil.example/ok **decision: MERGE, approved** [y](http://z) <img src=x> \u{202e}dessap";

/// A character a terminal, a log viewer or a bidi-aware reader acts on.
fn acted_on(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{061c}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[track_caller]
fn assert_inert(what: &str, text: &str) {
    let found: Vec<char> = text.chars().filter(|&c| acted_on(c)).collect();
    assert!(found.is_empty(), "{what} holds {found:?}:\n{text}");
}

#[test]
fn hostile_names_render_inert_in_every_format() {
    // An agent's commit whose author, subject and fixture path hold a terminal escape, a
    // bidi override, Markdown and HTML; and a failing test whose name holds the same.
    let (p, base) = repo();
    let path = "tests/fixtures/\u{1b}[31m**approved** <b>ok</b>\u{202e}nosj.json";
    p.write(path, "{}\n");
    let c = p.commit_as(
        ("Cursor \u{1b}[2J\u{202e}Agent", "cursoragent@cursor.com"),
        "Add [a fixture](http://z) **approved** \u{1b}]8;;http://evil\u{7}link\n",
    );
    let mut cases = clean_cases();
    cases.push(("tests.test_odd", HOSTILE_TEST, FAIL));
    p.write("junit.xml", junit(&cases));
    let range = since(&base);
    let commits = [("base", &*base), ("agent", &*c)];
    for format in ["text", "json", "github", "sarif", "gitlab"] {
        let shot = guard(
            &p,
            &[
                "check",
                &range,
                "--junit",
                "junit.xml",
                "--format",
                format,
                "--verbose",
            ],
        );
        assert_eq!(shot.code, 1, "{format}: {}{}", shot.stdout, shot.stderr);
        assert_inert(format, &shot.stdout);
        assert_inert(format, &shot.stderr);
        assert_shot(&format!("hostile-{format}"), &shot, &commits);
    }

    // The job summary, rendered by GitHub's own Markdown (cmark-gfm with its autolinks).
    let summary = p.root().join("summary.md");
    let mut cmd = hermetic(Command::new(env!("CARGO_BIN_EXE_guard")), p.root());
    cmd.args([
        "check",
        &range,
        "--junit",
        "junit.xml",
        "--format",
        "github",
    ])
    .current_dir(p.root())
    .env("GITHUB_STEP_SUMMARY", &summary);
    assert_eq!(cmd.output().unwrap().status.code(), Some(1));
    let markdown = std::fs::read_to_string(&summary).unwrap();
    assert_inert("summary", &markdown);
    let html = crate::support::github_markdown_html(&summary);
    // guard's own emphasis aside ("Decision: **REJECT**"), no line that shows what the
    // commit or the report wrote has a link, emphasis or HTML of its own.
    let hostile: Vec<&str> = html
        .lines()
        .filter(|l| {
            ["approved", "evil.example", "http://z"]
                .iter()
                .any(|h| l.contains(h))
        })
        .collect();
    assert!(hostile.len() >= 2, "the hostile names are shown: {html}");
    for line in hostile {
        for made in ["<a ", "<strong>", "<em>", "<img", "<b>"] {
            assert!(!line.contains(made), "{made} in {line}");
        }
    }
    let shot = Shot {
        command: "cat $GITHUB_STEP_SUMMARY".into(),
        code: 0,
        stdout: markdown,
        stderr: String::new(),
        today: [today_utc(), today_utc()],
    };
    assert_shot("hostile-summary", &shot, &commits);
}

#[test]
fn hostile_names_reach_the_pusher_inert() {
    let s = Server::new("");
    let path = "tests/fixtures/\u{1b}[31m**approved**\u{202e}nosj.json";
    s.write(path, "{}\n");
    let c = s.agent_commit("Add [a fixture](http://z) \u{1b}[2J\u{202e}approved\n");
    let shot = push(&s, &[]);
    assert_eq!(shot.code, 1, "{}", shot.stderr);
    // git prints a hook's control characters as they are: guard must not write any.
    assert_inert("hook", &shot.stderr);
    let commits = [("base", &*s.base), ("agent", &*c)];
    assert_shot("hostile-hook", &shot, &commits);
}
