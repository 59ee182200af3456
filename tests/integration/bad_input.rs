//! Bad input is a test case: each gives a clear message on stderr and exit code 2, never a
//! panic and never a silent pass.

use crate::scenario::*;
use crate::support::{Project, Run, data};

fn assert_cannot_judge(run: &Run, mentions: &[&str]) {
    assert_eq!(
        run.code, 2,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    for m in mentions {
        assert!(
            run.stderr.contains(m),
            "stderr lacks {m:?}:\n{}",
            run.stderr
        );
    }
}

fn score(p: &Project) -> Run {
    p.guard(&["score", "--junit", "junit.xml"])
}

#[test]
fn malformed_ledger_names_file_and_line() {
    let p = clean();
    p.write(
        "qa/merge_ledger.toml",
        "[properties]\npaths = [\"tests/properties/\"\nrequired = true\n",
    );
    assert_cannot_judge(&score(&p), &["qa/merge_ledger.toml:"]);
    p.write(
        "qa/merge_ledger.toml",
        format!("{LEDGER}\n[fixtures.extra]\nx = 1\n"),
    );
    assert_cannot_judge(&score(&p), &["qa/merge_ledger.toml:"]);
    p.write(
        "qa/merge_ledger.toml",
        LEDGER.replace("required = true", "required = \"yes\""),
    );
    assert_cannot_judge(&score(&p), &["qa/merge_ledger.toml:4:"]);
    p.write("qa/merge_ledger.toml", b"\xff\xfe[properties]\n".as_slice());
    assert_cannot_judge(&score(&p), &["qa/merge_ledger.toml", "UTF-8"]);
}

#[test]
fn explicit_ledger_must_exist() {
    let p = clean();
    assert_cannot_judge(
        &p.guard(&["score", "--junit", "junit.xml", "--ledger", "nope.toml"]),
        &["nope.toml"],
    );
}

#[test]
fn ledger_paths_leaving_the_repository_are_refused() {
    let p = clean();
    p.write(
        "qa/merge_ledger.toml",
        LEDGER.replace("qa/flake_freeze.txt", "../../etc/passwd"),
    );
    assert_cannot_judge(&score(&p), &["qa/merge_ledger.toml:", ".."]);
    p.write(
        "qa/merge_ledger.toml",
        LEDGER.replace("qa/flake_freeze.txt", "/etc/passwd"),
    );
    assert_cannot_judge(&score(&p), &["absolute"]);
}

#[test]
fn missing_freeze_file_named_by_the_ledger_is_an_error() {
    let p = clean();
    p.remove("qa/flake_freeze.txt");
    assert_cannot_judge(&score(&p), &["qa/flake_freeze.txt", "guard init"]);
}

#[test]
fn bad_lease_dates_are_refused() {
    let p = clean();
    use_freeze_toml(
        &p,
        &freeze_toml("max_active_leases = 1", &[("a::b", "2026-02-30")]),
    );
    assert_cannot_judge(&score(&p), &["qa/freeze.toml:", "2026-02-30"]);
    use_freeze_toml(
        &p,
        &freeze_toml("max_active_leases = 1", &[("a::b", "soon")]),
    );
    assert_cannot_judge(&score(&p), &["qa/freeze.toml:"]);
}

#[test]
fn lockfile_with_parent_or_absolute_paths_is_refused() {
    let p = clean();
    let digest = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    p.write(
        "qa/fixtures.lock.json",
        format!("{{\"files\": {{\"../outside\": \"{digest}\"}}}}"),
    );
    assert_cannot_judge(&score(&p), &["qa/fixtures.lock.json", ".."]);
    p.write(
        "qa/fixtures.lock.json",
        format!("{{\"files\": {{\"/etc/passwd\": \"{digest}\"}}}}"),
    );
    assert_cannot_judge(&score(&p), &["qa/fixtures.lock.json"]);
    p.write(
        "qa/fixtures.lock.json",
        "{\"files\": {\"tests/fixtures/a\": \"replace-with-real-sha256\"}}",
    );
    assert_cannot_judge(
        &score(&p),
        &["qa/fixtures.lock.json", "replace-with-real-sha256"],
    );
    p.write("qa/fixtures.lock.json", "{\"files\": {");
    assert_cannot_judge(&score(&p), &["qa/fixtures.lock.json"]);
}

#[cfg(unix)]
#[test]
fn symlinked_fixture_is_refused() {
    let p = clean();
    p.remove("tests/fixtures/invoice_v3.json");
    std::os::unix::fs::symlink("/etc/hostname", p.path("tests/fixtures/invoice_v3.json")).unwrap();
    assert_cannot_judge(&score(&p), &["tests/fixtures/invoice_v3.json", "symlink"]);
}

#[cfg(unix)]
#[test]
fn symlinked_fixture_directory_is_refused() {
    let p = clean();
    let outside = Project::new();
    outside.write("secret.json", "{}");
    std::os::unix::fs::symlink(outside.root(), p.path("tests/fixtures/linked")).unwrap();
    assert_cannot_judge(&score(&p), &["tests/fixtures/linked", "symlink"]);
}

#[test]
fn malformed_junit_is_refused_with_file_and_position() {
    let p = clean();
    // Each input is one line, so a position is `1:<column>`, the 1-based byte column of what
    // is wrong, found in the input itself.
    let column = |bytes: &[u8], needle: &[u8]| {
        bytes
            .windows(needle.len())
            .position(|w| w == needle)
            .expect("the needle is in the input")
            + 1
    };
    let truncated: &[u8] =
        b"<testsuites><testsuite name=\"x\"><testcase classname=\"a\" name=\"b\">";
    let html: &[u8] = b"<html><body>not junit</body></html>";
    let entities: &[u8] = b"<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\"><!ENTITY lol2 \"&lol;&lol;&lol;\">]><testsuites><testsuite><testcase classname=\"a\" name=\"&lol2;\"/></testsuite></testsuites>";
    let latin1: &[u8] = b"<?xml version=\"1.0\" encoding=\"utf-8\"?><testsuites><testsuite><testcase classname=\"a\" name=\"caf\xe9\"/></testsuite></testsuites>";
    let cases: [(&str, &[u8], String, &str); 5] = [
        (
            "truncated",
            truncated,
            // The end of the file, one past its last byte.
            format!("bad.xml:1:{}:", truncated.len() + 1),
            "never closed",
        ),
        ("empty", b"", "bad.xml:1:1:".into(), "empty file"),
        (
            "html",
            html,
            "bad.xml:1:1:".into(),
            "root element is <html>",
        ),
        (
            "entities",
            entities,
            format!("bad.xml:1:{}:", column(entities, b"<!DOCTYPE")),
            "DTDs are not allowed",
        ),
        (
            "latin1",
            latin1,
            format!("bad.xml:1:{}:", column(latin1, b"\xe9")),
            "not valid UTF-8",
        ),
    ];
    for (name, bytes, at, what) in cases {
        p.write("bad.xml", bytes);
        let run = p.guard(&["score", "--junit", "bad.xml"]);
        assert_cannot_judge(&run, &[&format!("error: {at} ")]);
        assert!(run.stderr.contains(what), "{name}: {}", run.stderr);
    }
    // Where the truncated file's unclosed element opened is named too.
    p.write("bad.xml", truncated);
    let run = p.guard(&["score", "--junit", "bad.xml"]);
    assert!(
        run.stderr.contains(&format!(
            "<testcase>, which is never closed (it opens at line 1, column {})",
            column(truncated, b"<testcase")
        )),
        "{}",
        run.stderr
    );
}

#[test]
fn missing_artifacts_are_errors_not_passes() {
    let p = clean();
    assert_cannot_judge(
        &p.guard(&["score", "--junit", "nope.xml"]),
        &["nope.xml", "not found"],
    );
    assert_cannot_judge(
        &p.guard(&["score", "--junit", "junit.xml", "--coverage", "nope.json"]),
        &["nope.json"],
    );
    assert_cannot_judge(
        &p.guard(&["score", "--junit", "junit.xml", "--collected", "nope.txt"]),
        &["nope.txt"],
    );
}

#[test]
fn malformed_coverage_and_collected_are_refused() {
    let p = clean();
    for (name, bytes) in [
        (
            "cov.json",
            b"{\"totals\": {\"percent_covered\": 150}}".as_slice(),
        ),
        ("cov.json", b"{\"totals\": "),
        ("cov.json", b"\xff\xfe\x00garbage"),
        ("cov.json", b"just some words\n"),
    ] {
        p.write(name, bytes);
        let run = p.guard(&["score", "--junit", "junit.xml", "--coverage", name]);
        assert_cannot_judge(&run, &[name]);
    }
    p.write("collected.txt", "tests/test_x.py: 3\n");
    assert_cannot_judge(
        &p.guard(&[
            "score",
            "--junit",
            "junit.xml",
            "--collected",
            "collected.txt",
        ]),
        &["collected.txt"],
    );
}

/// Every file in the committed bad-input corpus gives exit 2 for the artifact kind it is.
#[test]
fn committed_bad_input_corpus_gives_exit_two() {
    let p = clean();
    for (kind, flag) in [
        ("junit", "--junit"),
        ("coverage", "--coverage"),
        ("collected", "--collected"),
    ] {
        let dir = data(&format!("bad/{kind}"));
        let entries = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("the bad-input corpus {} is missing: {e}", dir.display()));
        let mut seen_here = 0;
        for entry in entries {
            let path = entry.unwrap().path();
            let shown = path.to_str().unwrap().to_string();
            let mut args = vec!["score", "--junit", "junit.xml", flag, &shown];
            if kind == "junit" {
                args.drain(1..3);
            }
            let run = p.guard(&args);
            assert_cannot_judge(&run, &[path.file_name().unwrap().to_str().unwrap()]);
            seen_here += 1;
        }
        // The corpus as committed: a folder that lost its files tests nothing.
        let floor = match kind {
            "junit" => 11,
            "coverage" => 22,
            _ => 14,
        };
        assert!(
            seen_here >= floor,
            "{}: {seen_here} files, fewer than the {floor} committed",
            dir.display()
        );
    }
}

#[test]
fn huge_junit_streams() {
    // 200k cases (about 20 MB): streamed, not a DOM; every case counted.
    let p = clean();
    let mut xml = String::from("<testsuites><testsuite name=\"big\">");
    for i in 0..200_000 {
        xml.push_str(&format!(
            "<testcase classname=\"tests.test_big\" name=\"test_{i}\" time=\"0\"/>"
        ));
    }
    xml.push_str("</testsuite></testsuites>");
    p.write("big.xml", xml);
    let run = p.guard(&[
        "score",
        "--junit",
        "junit.xml",
        "--junit",
        "big.xml",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.json()["junit"]["cases"], 200_005);
}

#[test]
fn closed_stdout_is_not_a_panic() {
    // `guard score ... | head -1`: the reader goes away; the exit code still says the decision.
    let p = clean();
    let mut child = crate::support::hermetic(
        std::process::Command::new(env!("CARGO_BIN_EXE_guard")),
        p.root(),
    )
    .args(["score", "--junit", "junit.xml", "--format", "json"])
    .current_dir(p.root())
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn blank_lease_fields_are_refused_with_file_and_position() {
    // A lease must say which test, who owns it and why: blank text says none of it.
    let p = clean();
    for key in ["nodeid", "owner", "reason"] {
        let good = freeze_toml("max_active_leases = 1", &[("a::b", "2099-01-31")]);
        let text: String = good
            .lines()
            .map(|l| match l.split_once(" = ") {
                Some((k, _)) if k == key => format!("{key} = \" \t \"\n"),
                _ => format!("{l}\n"),
            })
            .collect();
        assert_ne!(text, good, "{key} is in the lease");
        let (line, column) = text
            .lines()
            .enumerate()
            .find_map(|(i, l)| {
                l.starts_with(key)
                    .then(|| (i + 1, l.find('"').unwrap() + 1))
            })
            .unwrap();
        use_freeze_toml(&p, &text);
        assert_cannot_judge(
            &score(&p),
            &[&format!(
                "error: qa/freeze.toml:{line}:{column}: lease `{key}` is empty"
            )],
        );
        // lint reads the same file the same way.
        assert_cannot_judge(&p.guard(&["lint"]), &["qa/freeze.toml:", "is empty"]);
    }
}

/// Three independent mistakes in the scenario ledger, one per table: (the line as it is, the
/// line with the mistake, the `error:` line guard prints for it alone).
const THREE_MISTAKES: [(&str, &str, &str); 3] = [
    (
        "seeds = \"tests/properties/seeds\"",
        "seeds = \"/seeds\"",
        "error: qa/merge_ledger.toml:5:9: `properties.seeds` = \"/seeds\": path is absolute; write it relative to the repository root",
    ),
    (
        "lockfile = \"qa/fixtures.lock.json\"",
        "lockfile = 7",
        "error: qa/merge_ledger.toml:8:12: invalid type: integer `7`, expected a string",
    ),
    (
        "max_active_leases = 2",
        "max_active_leases = -1",
        "error: qa/merge_ledger.toml:14:21: `freeze.max_active_leases` must be 0 or more, not -1",
    ),
];

#[test]
fn a_ledger_with_three_mistakes_names_all_three_with_their_lines() {
    let p = clean();
    let mut ledger = LEDGER.to_string();
    for (good, bad, _) in THREE_MISTAKES {
        assert_eq!(ledger.matches(good).count(), 1, "{good}");
        ledger = ledger.replace(good, bad);
    }
    p.write("qa/merge_ledger.toml", &ledger);
    let expected: String = THREE_MISTAKES
        .iter()
        .map(|(_, _, line)| format!("{line}\n"))
        .collect();
    for args in [
        &["lint"][..],
        &["lint", "--format", "json"],
        &["score", "--junit", "junit.xml"],
        &["score", "--junit", "junit.xml", "--format", "json"],
    ] {
        let run = p.guard(args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert_eq!(run.stderr, expected, "{args:?}");
        if args.contains(&"json") {
            // The first mistake, counting the others.
            assert_eq!(
                run.json()["error"],
                serde_json::json!({
                    "kind": "input",
                    "message": "`properties.seeds` = \"/seeds\": path is absolute; write it relative to the repository root (and 2 more errors in this file)",
                    "path": "qa/merge_ledger.toml",
                    "line": 5,
                    "column": 9,
                    "byte": null,
                    "help": null,
                }),
                "{args:?}"
            );
        } else {
            run.assert_cannot_judge_text();
        }
    }
}

#[test]
fn a_ledger_with_one_mistake_reads_as_it_always_did() {
    // Each of the three alone: one `error:` line, and the JSON `error` names it and no more.
    for (good, bad, line) in THREE_MISTAKES {
        let p = clean();
        p.write("qa/merge_ledger.toml", LEDGER.replace(good, bad));
        let run = p.guard(&["lint"]);
        assert_eq!(
            (run.code, run.stderr.as_str()),
            (2, format!("{line}\n").as_str())
        );
        let run = p.guard(&["score", "--junit", "junit.xml", "--format", "json"]);
        assert_eq!(run.code, 2, "{}", run.stderr);
        let message = run.json()["error"]["message"].as_str().unwrap().to_string();
        let (position, said) = line
            .strip_prefix("error: qa/merge_ledger.toml:")
            .unwrap()
            .split_once(": ")
            .unwrap();
        assert_eq!(message, said, "no count of other errors");
        let error = &run.json()["error"];
        assert_eq!(
            format!("{}:{}", error["line"], error["column"]),
            position,
            "{line}"
        );
    }
}
