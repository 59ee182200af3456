//! `guard deselect`, `lock`, `lint` and `init`.

use crate::scenario::*;
use crate::support::{Project, sha256sum};

const COLLECTED: &str = "tests/properties/test_codec_roundtrip.py::test_roundtrip_on_seeds\n\
tests/runtime/test_retry.py::test_backoff_under_load\n\
tests/test_billing.py::TestInvoice::test_total[p-1]\n\
\n4 tests collected in 0.02s\n";

#[test]
fn deselect_prints_pytest_node_ids_for_dotted_leases() {
    let p = clean();
    p.write("collected.txt", COLLECTED);
    let run = p.guard(&["deselect", "--collected", "collected.txt"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "--deselect=tests/runtime/test_retry.py::test_backoff_under_load\n"
    );
}

#[test]
fn deselect_for_nextest_and_cargo() {
    let p = clean();
    p.write("qa/flake_freeze.txt", "tests::flaky_network\n");
    p.write(
        "collected.txt",
        "tiny-crate:\n    tests::adds\n    tests::flaky_network\n",
    );
    let run = p.guard(&[
        "deselect",
        "--collected",
        "collected.txt",
        "--runner",
        "nextest",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "-E\nnot ((binary_id(=tiny-crate) & test(=tests::flaky_network)))\n"
    );
    let run = p.guard(&[
        "deselect",
        "--collected",
        "collected.txt",
        "--runner",
        "cargo",
    ]);
    assert_eq!(run.stdout, "--exact\n--skip\ntests::flaky_network\n");
}

#[test]
fn deselect_refuses_unknown_ids_expired_leases_and_budget() {
    let p = clean();
    p.write(
        "collected.txt",
        "tests/test_billing.py::TestInvoice::test_total[p-1]\n",
    );
    let run = p.guard(&["deselect", "--collected", "collected.txt"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("tests.runtime.test_retry::test_backoff_under_load"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty());

    p.write("collected.txt", COLLECTED);
    let lease = [(
        "tests/runtime/test_retry.py::test_backoff_under_load",
        "2001-01-01",
    )];
    use_freeze_toml(&p, &freeze_toml("max_active_leases = 3", &lease));
    let run = p.guard(&["deselect", "--collected", "collected.txt"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("expired 2001-01-01"), "{}", run.stderr);

    let lease = [(
        "tests/runtime/test_retry.py::test_backoff_under_load",
        "2999-01-01",
    )];
    use_freeze_toml(&p, &freeze_toml("max_active_leases = 0", &lease));
    let run = p.guard(&["deselect", "--collected", "collected.txt"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("budget"), "{}", run.stderr);
}

#[test]
fn lock_check_reports_drift_and_lock_rewrites_in_the_same_form() {
    let p = clean();
    let run = p.guard(&["lock", "--check"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);

    p.write("tests/fixtures/invoice_v3.json", "changed\n");
    p.write("tests/fixtures/sub/new.bin", [0u8, 1, 2, 255]);
    let before = p.read("qa/fixtures.lock.json");
    let run = p.guard(&["lock", "--check"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout
            .contains("changed  tests/fixtures/invoice_v3.json"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("added    tests/fixtures/sub/new.bin"),
        "{}",
        run.stdout
    );
    assert_eq!(
        p.read("qa/fixtures.lock.json"),
        before,
        "--check writes nothing"
    );

    let run = p.guard(&["lock"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lock: serde_json::Value = serde_json::from_str(&p.read("qa/fixtures.lock.json")).unwrap();
    assert_eq!(
        lock["files"]["tests/fixtures/invoice_v3.json"],
        sha256sum(b"changed\n")
    );
    assert_eq!(
        lock["files"]["tests/fixtures/sub/new.bin"],
        sha256sum(&[0, 1, 2, 255])
    );
    assert_eq!(lock["files"].as_object().unwrap().len(), 3);
    assert_eq!(p.guard(&["lock", "--check"]).code, 0);
    assert_eq!(p.guard(&["score", "--junit", "junit.xml"]).code, 0);
}

#[test]
fn lock_keeps_the_sha256sum_form() {
    let p = clean();
    p.write(
        "qa/merge_ledger.toml",
        LEDGER.replace("qa/fixtures.lock.json", "qa/fixtures.lock"),
    );
    p.write("qa/fixtures.lock", "");
    assert_eq!(p.guard(&["lock"]).code, 0);
    let expected = format!(
        "{}  tests/fixtures/empty_batch.ndjson\n{}  tests/fixtures/invoice_v3.json\n",
        sha256sum(BATCH.as_bytes()),
        sha256sum(INVOICE.as_bytes())
    );
    assert_eq!(p.read("qa/fixtures.lock"), expected);
}

#[test]
fn lint_passes_a_clean_policy_and_finds_each_problem() {
    let p = clean();
    let run = p.guard(&["lint"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("lint: ok"), "{}", run.stdout);

    p.write("tests/properties/test_thin.py", "def test():\n    pass\n");
    let lease = [("tests/a.py::test_b", "2001-01-01")];
    use_freeze_toml(&p, &freeze_toml("max_active_leases = 0", &lease));
    let run = p.guard(&["lint", "--format", "json"]);
    assert_eq!(run.code, 1);
    let json = run.json();
    let reasons: Vec<&str> = json["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(reasons, vec!["expired_leases", "property_thin"]);
}

#[test]
fn lint_rejects_a_malformed_lease_with_its_line() {
    let p = clean();
    use_freeze_toml(
        &p,
        "version = 1\nmax_active_leases = 1\n\n[[leases]]\nnodeid = \"a::b\"\nowner = \"x\"\nexpires = \"2030-01-01\"\n",
    );
    let run = p.guard(&["lint"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("qa/freeze.toml:4:"), "{}", run.stderr);
    assert!(run.stderr.contains("reason"), "{}", run.stderr);
    run.assert_cannot_judge_text();

    // With --format json, stdout is one object: no verdict, the error, nothing counted.
    let run = p.guard(&["lint", "--format", "json"]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    let json = run.json();
    assert!(json["decision"].is_null(), "{json:#}");
    assert_eq!(json["findings"], serde_json::json!([]));
    assert_eq!(json["error"]["path"], "qa/freeze.toml");
    assert_eq!(json["error"]["line"], 4, "{json:#}");
    for key in ["active_leases", "expired_leases", "fixtures"] {
        assert!(json[key].is_null(), "{key} in {json:#}");
    }
    assert_eq!(
        json["policy"],
        serde_json::json!({"source": "file", "path": "qa/merge_ledger.toml", "commit": null}),
        "the ledger was read"
    );
}

#[test]
fn json_reports_print_an_object_for_errors_before_any_judging() {
    let p = Project::new();
    for args in [
        &["-C", "no-such-dir", "score", "--format", "json"][..],
        &["-C", "no-such-dir", "check", "--format", "json"],
        &["-C", "no-such-dir", "lint", "--format", "json"],
    ] {
        let run = p.guard(args);
        assert_eq!(run.code, 2, "{args:?}: {}{}", run.stdout, run.stderr);
        assert!(run.stderr.contains("no-such-dir"), "{}", run.stderr);
        let json = run.json();
        let verdict = if args[2] == "lint" { "ok" } else { "decision" };
        assert!(json[verdict].is_null(), "{args:?}: {json:#}");
        let message = json["error"]["message"].as_str().unwrap();
        assert!(message.contains("no-such-dir"), "{message}");
    }
    // In text, the error is on stderr, and stdout ends with the verdict line.
    let run = p.guard(&["-C", "no-such-dir", "score"]);
    assert_eq!(run.code, 2);
    run.assert_cannot_judge_text();
}

#[test]
fn init_writes_starters_that_lint_clean_and_never_overwrites() {
    let p = Project::git();
    p.write("tests/fixtures/golden.json", "{\"a\": 1}\n");
    let run = p.guard(&["init"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    for file in [
        "qa/merge_ledger.toml",
        "qa/freeze.toml",
        "qa/fixtures.lock.json",
    ] {
        assert!(p.path(file).is_file(), "{file}");
    }
    let lock: serde_json::Value = serde_json::from_str(&p.read("qa/fixtures.lock.json")).unwrap();
    assert_eq!(
        lock["files"]["tests/fixtures/golden.json"],
        sha256sum(b"{\"a\": 1}\n")
    );

    let ledger = p.read("qa/merge_ledger.toml");
    p.write("qa/merge_ledger.toml", "# edited by a human\n");
    let run = p.guard(&["init"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("refusing to overwrite"),
        "{}",
        run.stderr
    );
    assert_eq!(p.read("qa/merge_ledger.toml"), "# edited by a human\n");
    p.write("qa/merge_ledger.toml", ledger);

    // The starter policy fits the project: it has no property tests, so none are required
    // (the embedded ledger's tests/properties/ and seeds made lint and every score reject).
    let run = p.guard(&["lint", "--format", "json"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        p.read("qa/merge_ledger.toml")
            .contains("\npaths = []\nrequired = false\n")
    );
    // A project that has them gets them required, with their seeds.
    let q = Project::git();
    q.write("tests/properties/test_codec_roundtrip.py", PROPERTY_FILE);
    q.write("tests/properties/seeds/one.json", "{}\n");
    assert_eq!(q.guard(&["init"]).code, 0);
    let ledger = q.read("qa/merge_ledger.toml");
    assert!(
        ledger.contains("\npaths = [\"tests/properties\"]\nrequired = true\n"),
        "{ledger}"
    );
    assert!(
        ledger.contains("\nseeds = \"tests/properties/seeds\"\n"),
        "{ledger}"
    );
    assert_eq!(q.guard(&["lint"]).code, 0);
    q.remove("tests/properties/seeds/one.json");
    let json = q.guard(&["lint", "--format", "json"]).json();
    assert_eq!(json["findings"][0]["code"], "property_seeds", "{json:#}");
    // The freeze file it writes sets its budget explicitly, so lint has nothing to warn of.
    assert!(
        p.read("qa/freeze.toml")
            .contains("\nmax_active_leases = 0\n"),
        "{}",
        p.read("qa/freeze.toml")
    );
    let json = p.guard(&["lint", "--format", "json"]).json();
    assert_eq!(json["warnings"], serde_json::json!([]));
}

#[test]
fn help_and_version_exit_zero_and_bad_arguments_exit_two() {
    let p = Project::new();
    let run = p.guard(&["--help"]);
    assert_eq!(run.code, 0);
    for cmd in ["score", "deselect", "lock", "lint", "init"] {
        assert!(
            run.stdout.contains(cmd),
            "{cmd} missing from help:\n{}",
            run.stdout
        );
    }
    assert_eq!(p.guard(&["--version"]).code, 0);
    assert_eq!(p.guard(&["score", "--no-such-flag"]).code, 2);
    assert_eq!(p.guard(&["score", "--min-proven", "101"]).code, 2);
    assert_eq!(p.guard(&["score", "--format", "yaml"]).code, 2);
    assert_eq!(p.guard(&["deselect"]).code, 2, "--collected is required");
    assert_eq!(p.guard(&[]).code, 2);
}

/// Hands the project to uid 65534 (`nobody` on most systems; a numeric id needs no account).
/// Only root can; CI runs the suite as root, and elsewhere this fails rather than passing
/// without having tested anything.
fn give_to_another_user(p: &Project) {
    let uid = std::process::Command::new("id").arg("-u").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&uid.stdout).trim(),
        "0",
        "this test needs root (to chown a repository to another user); run the suite as root as CI does"
    );
    let out = std::process::Command::new("chown")
        .args(["-R", "65534:65534"])
        .arg(p.root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_repository_owned_by_another_user_is_refused_with_the_safe_directory_fix() {
    let p = clean();
    p.git_cmd(&["add", "-A"]);
    p.git_cmd(&["commit", "-qm", "Start"]);
    // An expired lease: lint on the embedded ledger (no freeze file) would say ok.
    use_freeze_toml(
        &p,
        &freeze_toml("max_active_leases = 3", &[("tests/a.py::t", "2001-01-01")]),
    );
    give_to_another_user(&p);
    let root = std::fs::canonicalize(p.root()).unwrap();
    let fix = format!(
        "help: if you trust it, mark it safe: git config --global --add safe.directory {}",
        root.display()
    );
    p.write("sub/x.txt", "x\n");
    for (dir, args) in [
        (p.root().to_path_buf(), &["check", "HEAD"][..]),
        (p.root().to_path_buf(), &["lint"]),
        (p.path("sub"), &["lint"]),
        (p.root().to_path_buf(), &["score"]),
    ] {
        let run = p.guard_in(&dir, args);
        assert_eq!(run.code, 2, "{args:?}: {}{}", run.stdout, run.stderr);
        assert!(
            run.stderr.contains(&format!(
                "error: the git repository at {} belongs to another user",
                root.display()
            )),
            "{args:?}: {}",
            run.stderr
        );
        assert!(run.stderr.contains(&fix), "{args:?}: {}", run.stderr);
        assert!(
            !run.stderr.contains("not in a git repository"),
            "{}",
            run.stderr
        );
        run.assert_cannot_judge_text();
    }

    // The fix it names works: with the directory marked safe, lint reads the repository's
    // own policy and finds the expired lease.
    p.write(
        ".gitconfig",
        format!("[safe]\n\tdirectory = {}\n", root.display()),
    );
    let run = p.guard(&["lint"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("error[expired_leases]: qa/freeze.toml:5:"),
        "{}",
        run.stdout
    );
}

#[test]
fn lint_after_init_says_what_score_will_reject_and_how_to_create_the_seeds() {
    let p = Project::git();
    p.write("tests/fixtures/golden.json", "{\"a\": 1}\n");
    assert_eq!(p.guard(&["init"]).code, 0);
    // The human then asks for a property suite and seeds the project does not have yet.
    let ledger = p.read("qa/merge_ledger.toml").replacen(
        "paths = []\nrequired = false\n",
        "paths = [\"tests/properties/\"]\nrequired = true\nseeds = \"tests/properties/seeds\"\n",
        1,
    );
    p.write("qa/merge_ledger.toml", ledger);
    // A fixture added after init, and one changed since: both are in the fixture paths.
    p.write("tests/fixtures/new.json", "{}\n");
    p.write("tests/fixtures/golden.json", "{\"a\": 2}\n");

    let run = p.guard(&["lint", "--format", "json"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let json = run.json();
    let findings: Vec<(String, String)> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                f["path"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let expected = [
        ("property_seeds", "tests/properties/seeds"),
        ("property_hold", "tests/properties"),
        ("fixture_digest", "tests/fixtures/golden.json"),
        ("fixture_unhashed", "tests/fixtures/new.json"),
    ];
    for (code, path) in expected {
        assert!(
            findings.contains(&(code.to_string(), path.to_string())),
            "{code} at {path} in {findings:?}"
        );
    }
    assert_eq!(findings.len(), expected.len(), "{findings:?}");
    // `score` rejects the same fixtures for the same reasons.
    let score = p.guard(&["score", "--format", "json"]).json();
    for code in ["fixture_digest", "fixture_unhashed", "property_seeds"] {
        assert!(
            score["reasons"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r == code),
            "{code}: {score:#}"
        );
    }

    let text = p.guard(&["lint"]).stdout;
    // A new project has no seeds to restore: the help says how to create them, or do without.
    assert!(
        text.contains(
            "error[property_seeds]: tests/properties/seeds: property seed corpus is missing\n  help: create tests/properties/seeds/ with the seed files the property tests read and commit them as a human"
        ),
        "{text}"
    );
    assert!(
        text.contains("remove `properties.seeds` from the ledger"),
        "{text}"
    );
    assert!(
        text.contains("error[property_hold]: tests/properties: `properties.paths` names nothing that exists (tests/properties), so no property test can run and `guard score` will reject every run (no property test ran)"),
        "{text}"
    );

    // An existing property directory without property files: not certain to reject (the
    // `files` globs may be what is wrong), so a warning that still says what score does.
    p.write("tests/properties/README.md", "property tests go here\n");
    let json = p.guard(&["lint", "--format", "json"]).json();
    let codes: Vec<&str> = json["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert!(!codes.contains(&"property_hold"), "{json:#}");
    let warning = &json["warnings"][0];
    assert_eq!(warning["path"], "tests/properties", "{json:#}");
    assert!(
        warning["message"]
            .as_str()
            .unwrap()
            .ends_with("`guard score` will reject every run (no property test ran)"),
        "{json:#}"
    );
}

/// The `guard init` output from its runner hints on.
fn init_hints(p: &Project) -> String {
    let run = p.guard(&["init"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let at = run
        .stdout
        .find("\nTests: ")
        .expect("init prints runner hints");
    run.stdout[at..].to_string()
}

#[test]
fn init_in_a_cargo_project_gives_nextest_hints_and_offers_gitignore_lines() {
    let p = Project::git();
    p.write(
        "Cargo.toml",
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\n",
    );
    p.write(".gitignore", "/target\n/junit.xml\n");
    let hints = init_hints(&p);
    assert!(hints.contains("\n    cargo nextest run --profile ci\n    guard score --junit target/nextest/ci/junit.xml\n"), "{hints}");
    assert!(
        hints.contains("in .config/nextest.toml (a harness file: commit it with the trailer `Test-Harness: human`):\n\n    [profile.ci.junit]\n    path = \"junit.xml\"\n"),
        "{hints}"
    );
    assert!(
        hints.contains("`cargo nextest list > collected.txt`"),
        "{hints}"
    );
    assert!(!hints.contains("python3 -m pytest"), "{hints}");
    // The lines not already in .gitignore are offered; the file itself is left alone.
    assert!(
        hints.ends_with(
            "add them to .gitignore:\n\n    coverage.json\n    collected.txt\n    deselect.args\n"
        ),
        "{hints}"
    );
    assert_eq!(p.read(".gitignore"), "/target\n/junit.xml\n");
    // Without a JUnit report, score's hint names nextest too.
    let json = p.guard(&["score", "--format", "json"]).json();
    let junit = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "junit_missing")
        .unwrap_or_else(|| panic!("{json:#}"));
    let help = junit["help"].as_str().unwrap();
    assert!(help.contains("`cargo nextest run --profile ci` with `[profile.ci.junit] path = \"junit.xml\"` in .config/nextest.toml (the report is target/nextest/ci/junit.xml)"), "{help}");
}

#[test]
fn init_in_a_python_project_gives_pytest_hints_even_with_a_cargo_toml() {
    // A Rust extension tested with pytest: pyproject.toml decides.
    let p = Project::git();
    p.write(
        "Cargo.toml",
        "[package]\nname = \"ext\"\nversion = \"0.1.0\"\n",
    );
    p.write("pyproject.toml", "[project]\nname = \"ext\"\n");
    let hints = init_hints(&p);
    assert!(
        hints.contains(
            "\n    python3 -m pytest --junitxml=junit.xml\n    guard score --junit junit.xml\n"
        ),
        "{hints}"
    );
    assert!(!hints.contains("nextest"), "{hints}");
    assert!(
        hints.ends_with("add them to .gitignore:\n\n    junit.xml\n    coverage.json\n    collected.txt\n    deselect.args\n"),
        "{hints}"
    );
    assert!(!p.path(".gitignore").exists(), "init writes no .gitignore");
}

#[test]
fn init_dates_its_example_lease_30_days_ahead() {
    let p = Project::git();
    let before = jiff::Timestamp::now()
        .to_zoned_datetime(jiff::tz::TimeZone::UTC)
        .date();
    assert_eq!(p.guard(&["init"]).code, 0);
    let after = jiff::Timestamp::now()
        .to_zoned_datetime(jiff::tz::TimeZone::UTC)
        .date();
    let freeze = p.read("qa/freeze.toml");
    let written = [before, after].map(|d| {
        let expires = d.checked_add(jiff::Span::new().days(30)).unwrap();
        format!("\n# expires = \"{expires}\"\n")
    });
    assert!(
        written.iter().any(|w| freeze.contains(w.as_str())),
        "{freeze}"
    );
    assert!(
        freeze.contains("# An example lease, commented out"),
        "{freeze}"
    );
    // Uncommented, the example is a valid, unexpired lease.
    let uncommented = freeze
        .replace("\n# [[leases]]", "\n[[leases]]")
        .replace("\n# nodeid", "\nnodeid")
        .replace("\n# reason", "\nreason")
        .replace("\n# owner", "\nowner")
        .replace("\n# expires", "\nexpires")
        .replace("max_active_leases = 0", "max_active_leases = 1");
    p.write("qa/freeze.toml", uncommented);
    let json = p.guard(&["lint", "--format", "json"]).json();
    assert_eq!(json["active_leases"], 1, "{json:#}");
    assert_eq!(json["expired_leases"], 0, "{json:#}");
}

/// `install.sh --prefix DIR` from a copy of the script, with a `cargo` on PATH that "builds"
/// by copying the test's guard where the release build would be, under `shell`.
fn install_binary(
    dir: &std::path::Path,
    prefix: &std::path::Path,
    path: &str,
    shell: &str,
) -> (i32, String) {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let here = dir.join("src");
    std::fs::create_dir_all(&here).unwrap();
    std::fs::copy(repo.join("install.sh"), here.join("install.sh")).unwrap();
    let fake = dir.join("fakebin");
    std::fs::create_dir_all(&fake).unwrap();
    let cargo = fake.join("cargo");
    std::fs::write(
        &cargo,
        format!(
            "#!/bin/sh\nmkdir -p '{here}/target/release' && cp '{guard}' '{here}/target/release/guard'\n",
            here = here.display(),
            guard = env!("CARGO_BIN_EXE_guard")
        ),
    )
    .unwrap();
    std::fs::set_permissions(&cargo, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = std::process::Command::new("bash")
        .arg(here.join("install.sh"))
        .arg("--prefix")
        .arg(prefix)
        .env("PATH", format!("{}:{path}", fake.display()))
        .env("SHELL", shell)
        .env("HOME", dir)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn install_offers_the_path_line_for_the_users_shell() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("p");
    let bin = prefix.join("bin");
    let (code, stderr) = install_binary(dir.path(), &prefix, "/usr/bin:/bin", "/usr/bin/zsh");
    assert_eq!(code, 0, "{stderr}");
    assert!(bin.join("guard").is_file());
    assert!(
        stderr.contains("the first build takes a few minutes"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "note: {} is not on PATH, so `guard` alone will not find it. Add this line to ~/.zshrc\nand open a new shell (or call {}/guard):\n\n    export PATH=\"{}:$PATH\"\n",
            bin.display(),
            bin.display(),
            bin.display()
        )),
        "{stderr}"
    );
    let (_, stderr) = install_binary(dir.path(), &prefix, "/usr/bin:/bin", "/usr/bin/fish");
    assert!(
        stderr.contains(&format!("    fish_add_path {}\n", bin.display())),
        "{stderr}"
    );
    // On PATH already: no note.
    let (code, stderr) = install_binary(
        dir.path(),
        &prefix,
        &format!("{}:/usr/bin:/bin", bin.display()),
        "/bin/bash",
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("not on PATH"), "{stderr}");
}
