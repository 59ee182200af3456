//! `guard score`: one violating input per rule, and the clean project that merges.

use crate::scenario::*;
use crate::support::{Project, sha256sum};

fn score_json(p: &Project, extra: &[&str]) -> crate::support::Run {
    let mut args = vec!["score", "--junit", "junit.xml", "--format", "json"];
    args.extend_from_slice(extra);
    p.guard(&args)
}

#[test]
fn clean_project_merges_with_every_contract_key() {
    let p = clean();
    let run = score_json(&p, &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let json = run.json();
    assert_eq!(json["decision"], "MERGE");
    assert_eq!(json["score"], 1);
    assert_eq!(json["reasons"], serde_json::json!([]));
    assert_eq!(json["findings"], serde_json::json!([]));
    assert_eq!(json["enforced"], true);
    assert_eq!(json["active_leases"], 1);
    assert_eq!(json["expired_leases"], 0);
    assert_eq!(json["fixture_digest_delta"], 0);
    assert_eq!(json["property_failures"], 0);
    assert_eq!(json["agent_added_leases"], 0);
    assert_eq!(json["min_proven_coverage_percent"], 70.0);
    assert!(json["proven_coverage_percent"].is_null());
    assert!(json["collected_tests"].is_null());
    let today = json["today_utc"].as_str().unwrap();
    assert_eq!(today.len(), 10, "ISO date: {today}");
    // 5 records: 3 passed, 1 failed (the frozen test), 1 skipped.
    assert_eq!(
        json["junit"],
        serde_json::json!({"files": 1, "cases": 5, "tests": 5, "passed": 3, "failed": 1, "errors": 0, "skipped": 1})
    );
    // Exactly the keys of JSON contract v1 (docs/report.schema.json), every one present:
    // `null` where it does not apply to `score` (the range's keys, `runner`, `error`).
    let mut keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        vec![
            "active_leases",
            "agent_added_leases",
            "base",
            "collected_tests",
            "commits",
            "decision",
            "enforced",
            "error",
            "expired_leases",
            "findings",
            "fixture_digest_delta",
            "junit",
            "min_proven_coverage_percent",
            "policy",
            "policy_changes",
            "property_failures",
            "proven_coverage_percent",
            "range",
            "reasons",
            "runner",
            "schema_version",
            "score",
            "tests_scored",
            "tip",
            "today_utc",
            "warnings",
        ]
    );
    assert_eq!(json["schema_version"], 1);
    assert_eq!(json["tests_scored"], true);
    for key in [
        "base",
        "commits",
        "error",
        "policy_changes",
        "range",
        "runner",
        "tip",
    ] {
        assert!(json[key].is_null(), "{key}: {json:#}");
    }
}

#[test]
fn text_report_ends_with_the_decision() {
    let p = clean();
    let run = p.guard(&["score", "--junit", "junit.xml"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("decision: MERGE (score 1, 0 findings"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("policy: "), "{}", run.stdout);
}

#[test]
fn frozen_test_that_passes_is_a_blocker() {
    let p = clean();
    let mut cases = clean_cases();
    cases[1].2 = PASS;
    p.write("junit.xml", junit(&cases));
    let run = score_json(&p, &[]);
    assert_eq!(run.code, 1);
    assert_eq!(run.reasons(), vec!["frozen_test_passed"]);
    let finding = &run.json()["findings"][0];
    assert_eq!(
        finding["test"],
        "tests.runtime.test_retry::test_backoff_under_load"
    );
    assert_eq!(
        (&finding["path"], &finding["line"]),
        (
            &serde_json::json!("qa/flake_freeze.txt"),
            &serde_json::json!(2)
        )
    );
    let text = p.guard(&["score", "--junit", "junit.xml"]);
    assert!(
        text.stdout.contains("error[frozen_test_passed]"),
        "{}",
        text.stdout
    );
    assert!(text.stdout.contains("help: "), "{}", text.stdout);
}

#[test]
fn frozen_pass_allowed_when_the_ledger_turns_the_rule_off() {
    let p = clean();
    let mut cases = clean_cases();
    cases[1].2 = PASS;
    p.write("junit.xml", junit(&cases));
    p.write(
        "qa/merge_ledger.toml",
        LEDGER.replace(
            "passing_frozen_is_error = true",
            "passing_frozen_is_error = false",
        ),
    );
    assert_eq!(score_json(&p, &[]).code, 0);
}

#[test]
fn frozen_skip_and_error_do_not_count_as_passes() {
    for child in [SKIP, ERROR] {
        let p = clean();
        let mut cases = clean_cases();
        cases[1].2 = child;
        p.write("junit.xml", junit(&cases));
        assert_eq!(score_json(&p, &[]).code, 0, "{child}");
    }
}

#[test]
fn frozen_test_absent_from_reports_rejects() {
    let p = clean();
    let mut cases = clean_cases();
    cases.remove(1);
    p.write("junit.xml", junit(&cases));
    let run = score_json(&p, &[]);
    assert_eq!(run.code, 1);
    assert_eq!(run.reasons(), vec!["frozen_test_missing"]);
}

#[test]
fn duplicate_records_merge_with_the_failure_winning() {
    // A frozen test recorded twice, failing once: still frozen-and-failing, so it merges.
    let p = clean();
    let mut cases = clean_cases();
    cases.push(("tests.runtime.test_retry", "test_backoff_under_load", PASS));
    p.write("junit.xml", junit(&cases));
    assert_eq!(score_json(&p, &[]).code, 0);
    // An ordinary test passing in one record and failing in another rejects.
    let mut cases = clean_cases();
    cases.push(("tests.test_billing.TestInvoice", "test_total[p-1]", FAIL));
    p.write("junit.xml", junit(&cases));
    assert_eq!(score_json(&p, &[]).reasons(), vec!["test_failures"]);
}

#[test]
fn pytest_node_id_leases_match_dotted_pytest_records() {
    let p = clean();
    use_freeze_toml(
        &p,
        &freeze_toml(
            "max_active_leases = 2",
            &[(
                "tests/runtime/test_retry.py::test_backoff_under_load",
                "2999-12-31",
            )],
        ),
    );
    assert_eq!(score_json(&p, &[]).code, 0);
    let mut cases = clean_cases();
    cases[1].2 = PASS;
    p.write("junit.xml", junit(&cases));
    assert_eq!(score_json(&p, &[]).reasons(), vec!["frozen_test_passed"]);
}

#[test]
fn expired_lease_rejects() {
    let p = clean();
    use_freeze_toml(
        &p,
        &freeze_toml(
            "max_active_leases = 2",
            &[(
                "tests/runtime/test_retry.py::test_backoff_under_load",
                "2001-01-01",
            )],
        ),
    );
    let run = score_json(&p, &[]);
    assert_eq!(run.code, 1);
    // The lease no longer freezes the test, so its failure is an ordinary failure too.
    assert_eq!(run.reasons(), vec!["expired_leases", "test_failures"]);
    assert_eq!(run.json()["expired_leases"], 1);
    assert_eq!(run.json()["active_leases"], 0);
}

#[test]
fn leases_over_budget_reject_and_omitted_budget_is_zero() {
    let p = clean();
    let leases = [
        (
            "tests/runtime/test_retry.py::test_backoff_under_load",
            "2999-12-31",
        ),
        ("tests/test_billing.py::test_skipped", "2999-12-31"),
    ];
    use_freeze_toml(&p, &freeze_toml("max_active_leases = 1", &leases));
    assert_eq!(score_json(&p, &[]).reasons(), vec!["freeze_budget"]);
    use_freeze_toml(&p, &freeze_toml("", &leases[..1]));
    assert_eq!(score_json(&p, &[]).reasons(), vec!["freeze_budget"]);
    use_freeze_toml(&p, &freeze_toml("max_active_leases = 2", &leases));
    assert_eq!(score_json(&p, &[]).code, 0);
}

#[test]
fn lease_naming_an_uncollected_test_rejects() {
    let p = clean();
    p.write(
        "collected.txt",
        "tests/properties/test_codec_roundtrip.py::test_roundtrip_on_seeds\ntests/test_billing.py::TestInvoice::test_total[p-1]\n\n3 tests collected in 0.01s\n",
    );
    let run = score_json(&p, &["--collected", "collected.txt"]);
    assert_eq!(run.reasons(), vec!["lease_not_collected"]);
    assert_eq!(run.json()["collected_tests"], 2);
    p.write(
        "collected.txt",
        "tests/runtime/test_retry.py::test_backoff_under_load\ntests/test_billing.py::TestInvoice::test_total[p-1]\n",
    );
    assert_eq!(score_json(&p, &["--collected", "collected.txt"]).code, 0);
}

#[test]
fn fixture_drift_names_path_and_both_digests() {
    let p = clean();
    p.write(
        "tests/fixtures/invoice_v3.json",
        "{\"net\": 100, \"tax\": 0}\n",
    );
    let run = score_json(&p, &[]);
    assert_eq!(run.reasons(), vec!["fixture_digest"]);
    assert_eq!(run.json()["fixture_digest_delta"], 1);
    let finding = &run.json()["findings"][0];
    assert_eq!(finding["path"], "tests/fixtures/invoice_v3.json");
    let message = finding["message"].as_str().unwrap();
    assert!(
        message.contains(&sha256sum(b"{\"net\": 100, \"tax\": 0}\n")),
        "{message}"
    );
    assert!(
        message.contains(&sha256sum(INVOICE.as_bytes())),
        "{message}"
    );
}

#[test]
fn missing_fixture_rejects() {
    let p = clean();
    p.remove("tests/fixtures/empty_batch.ndjson");
    assert_eq!(score_json(&p, &[]).reasons(), vec!["fixture_missing"]);
}

#[test]
fn unhashed_new_fixture_rejects_unless_allowed() {
    let p = clean();
    p.write("tests/fixtures/new_golden.json", "{}\n");
    let run = score_json(&p, &[]);
    assert_eq!(run.reasons(), vec!["fixture_unhashed"]);
    assert_eq!(
        run.json()["findings"][0]["path"],
        "tests/fixtures/new_golden.json"
    );
    p.write(
        "qa/merge_ledger.toml",
        LEDGER.replace("allow_unhashed_new = false", "allow_unhashed_new = true"),
    );
    assert_eq!(score_json(&p, &[]).code, 0);
}

#[test]
fn sha256sum_lockfile_form_works() {
    let p = clean();
    let lock = format!(
        "{}  tests/fixtures/empty_batch.ndjson\n{}  tests/fixtures/invoice_v3.json\n",
        sha256sum(BATCH.as_bytes()),
        sha256sum(INVOICE.as_bytes())
    );
    p.write("qa/fixtures.lock", lock);
    p.write(
        "qa/merge_ledger.toml",
        LEDGER.replace("qa/fixtures.lock.json", "qa/fixtures.lock"),
    );
    assert_eq!(score_json(&p, &[]).code, 0);
    p.write("tests/fixtures/empty_batch.ndjson", "x");
    assert_eq!(score_json(&p, &[]).reasons(), vec!["fixture_digest"]);
}

#[test]
fn failing_property_rejects() {
    let p = clean();
    let mut cases = clean_cases();
    cases[0].2 = FAIL;
    p.write("junit.xml", junit(&cases));
    let run = score_json(&p, &[]);
    assert_eq!(run.reasons(), vec!["property_hold"]);
    assert_eq!(run.json()["property_failures"], 1);
}

#[test]
fn skipped_property_rejects() {
    let p = clean();
    let mut cases = clean_cases();
    cases[0].2 = SKIP;
    p.write("junit.xml", junit(&cases));
    assert_eq!(score_json(&p, &[]).reasons(), vec!["property_hold"]);
}

#[test]
fn no_property_test_ran_rejects() {
    let p = clean();
    let mut cases = clean_cases();
    cases.remove(0);
    p.write("junit.xml", junit(&cases));
    let run = score_json(&p, &[]);
    assert_eq!(run.reasons(), vec!["property_hold"]);
    assert!(
        run.json()["findings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("no property test ran")
    );
}

#[test]
fn property_found_by_file_attribute_too() {
    // pytest xunit1 writes file="tests/properties/..." with a dotted classname.
    let p = clean();
    let xml = junit(&clean_cases()).replace(
        "classname=\"tests.properties.test_codec_roundtrip\"",
        "file=\"tests/properties/test_codec_roundtrip.py\" classname=\"test_codec_roundtrip\"",
    );
    p.write("junit.xml", xml);
    assert_eq!(score_json(&p, &[]).code, 0);
}

#[test]
fn thin_property_file_rejects() {
    let p = clean();
    p.write(
        "tests/properties/test_trivial.py",
        "def test_x():\n    assert True\n",
    );
    let mut cases = clean_cases();
    cases.push(("tests.properties.test_trivial", "test_x", PASS));
    p.write("junit.xml", junit(&cases));
    let run = score_json(&p, &[]);
    assert_eq!(run.reasons(), vec!["property_thin"]);
    assert_eq!(
        run.json()["findings"][0]["path"],
        "tests/properties/test_trivial.py"
    );
}

#[test]
fn property_file_without_assert_rejects() {
    let p = clean();
    let body: String = (0..12).map(|i| format!("value_{i} = {i}\n")).collect();
    p.write("tests/properties/test_noassert.py", body);
    let mut cases = clean_cases();
    cases.push(("tests.properties.test_noassert", "test_y", PASS));
    p.write("junit.xml", junit(&cases));
    assert_eq!(score_json(&p, &[]).reasons(), vec!["property_thin"]);
}

#[test]
fn property_file_that_did_not_run_rejects() {
    // Two property files, one deselected (say by `-k` or an unprotected conftest.py).
    let p = clean();
    p.write("tests/properties/test_money.py", PROPERTY_FILE);
    let run = score_json(&p, &[]);
    assert_eq!(run.reasons(), vec!["property_hold"]);
    assert_eq!(
        run.json()["findings"][0]["path"],
        "tests/properties/test_money.py"
    );
    assert_eq!(run.json()["property_failures"], 1);
    let mut cases = clean_cases();
    cases.push((
        "tests.properties.test_money",
        "test_roundtrip_on_seeds",
        PASS,
    ));
    p.write("junit.xml", junit(&cases));
    assert_eq!(score_json(&p, &[]).code, 0);
}

#[test]
fn empty_or_missing_seed_corpus_rejects() {
    let p = clean();
    p.remove("tests/properties/seeds/invoice.json");
    assert_eq!(score_json(&p, &[]).reasons(), vec!["property_seeds"]);
    std::fs::remove_dir(p.path("tests/properties/seeds")).unwrap();
    assert_eq!(score_json(&p, &[]).reasons(), vec!["property_seeds"]);
}

#[test]
fn ordinary_failure_rejects_unless_the_ledger_says_ci_gates_it() {
    let p = clean();
    let mut cases = clean_cases();
    cases[2].2 = ERROR;
    p.write("junit.xml", junit(&cases));
    let run = score_json(&p, &[]);
    assert_eq!(run.reasons(), vec!["test_failures"]);
    assert_eq!(
        run.json()["findings"][0]["test"],
        "tests.test_billing.TestInvoice::test_total[p-1]"
    );
    p.write(
        "qa/merge_ledger.toml",
        format!("{LEDGER}\n[tests]\nfailures_reject = false\n"),
    );
    assert_eq!(score_json(&p, &[]).code, 0);
}

#[test]
fn coverage_below_floor_rejects() {
    let p = clean();
    // LCOV: 7 of 10 lines hit is 70%.
    p.write("cov.lcov", "TN:\nSF:src/a.py\nLF:10\nLH:7\nend_of_record\n");
    let run = score_json(&p, &["--coverage", "cov.lcov"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.json()["proven_coverage_percent"], 70.0);
    let run = score_json(&p, &["--coverage", "cov.lcov", "--min-proven", "70.5"]);
    assert_eq!(run.reasons(), vec!["proven_coverage"]);
    assert_eq!(run.json()["min_proven_coverage_percent"], 70.5);
    p.write(
        "qa/merge_ledger.toml",
        format!("{LEDGER}\n[coverage]\nmin_proven = 80\n"),
    );
    assert_eq!(
        score_json(&p, &["--coverage", "cov.lcov"]).reasons(),
        vec!["proven_coverage"]
    );
}

#[test]
fn required_coverage_missing_rejects() {
    let p = clean();
    p.write(
        "qa/merge_ledger.toml",
        format!("{LEDGER}\n[coverage]\nrequired = true\n"),
    );
    assert_eq!(score_json(&p, &[]).reasons(), vec!["coverage_missing"]);
}

#[test]
fn no_junit_rejects() {
    let p = clean();
    let run = p.guard(&["score", "--format", "json"]);
    assert_eq!(run.code, 1);
    assert_eq!(run.reasons(), vec!["junit_missing"]);
}

#[test]
fn several_reports_are_read_together() {
    let p = clean();
    let cases = clean_cases();
    p.write("a.xml", junit(&cases[..2]));
    p.write("b.xml", junit(&cases[2..]));
    let run = p.guard(&[
        "score", "--junit", "a.xml", "--junit", "b.xml", "--format", "json",
    ]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.json()["junit"]["files"], 2);
    assert_eq!(run.json()["junit"]["cases"], 5);
}

#[test]
fn runs_from_a_subdirectory_and_with_dash_c() {
    let p = clean();
    std::fs::create_dir_all(p.path("src/deep")).unwrap();
    let junit_path = p.path("junit.xml");
    let junit_arg = junit_path.to_str().unwrap();
    let run = p.guard_in(&p.path("src/deep"), &["score", "--junit", junit_arg]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("qa/merge_ledger.toml"),
        "{}",
        run.stdout
    );
    let other = Project::new();
    let root = p.root().to_str().unwrap();
    let run = other.guard(&["-C", root, "score", "--junit", "junit.xml"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
}

#[test]
fn repository_without_ledger_uses_the_embedded_default() {
    let p = Project::git();
    p.write("tests/properties/test_codec_roundtrip.py", PROPERTY_FILE)
        .write("junit.xml", junit(&clean_cases()[..1]));
    let run = p.guard(&["score", "--junit", "junit.xml"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("policy: embedded default ledger"),
        "{}",
        run.stdout
    );
}

#[test]
fn without_a_ledger_budget_a_plain_list_has_none_and_a_freeze_toml_has_zero() {
    // The first article's list has no budget; the second article's freeze.toml with an
    // omitted budget has 0. The ledger sets none here.
    let p = clean();
    let ledger = LEDGER.replace("max_active_leases = 2\n", "");
    p.write("qa/merge_ledger.toml", &ledger);
    let run = score_json(&p, &[]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.json()["active_leases"], 1);

    p.write(
        "qa/merge_ledger.toml",
        ledger.replace("qa/flake_freeze.txt", "qa/freeze.toml"),
    )
    .write(
        "qa/freeze.toml",
        freeze_toml(
            "",
            &[(
                "tests/runtime/test_retry.py::test_backoff_under_load",
                "2999-12-31",
            )],
        ),
    );
    let run = score_json(&p, &[]);
    assert_eq!(run.reasons(), vec!["freeze_budget"]);
    assert!(
        run.json()["findings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("1 active lease, budget is 0"),
        "{}",
        run.stdout
    );
}

// ---------------------------------------------------------------------------------------
// Input that cannot be judged: with --format json, still one object on stdout (issue 10).

/// The figures `score` computes from the artifacts and policy files: all unknown when the
/// input could not be judged.
const NOT_COMPUTED: [&str; 7] = [
    "collected_tests",
    "active_leases",
    "expired_leases",
    "proven_coverage_percent",
    "fixture_digest_delta",
    "property_failures",
    "junit",
];

#[track_caller]
fn assert_unjudged_object(run: &crate::support::Run) -> serde_json::Value {
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    // The message still goes to stderr for people.
    assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
    let json = run.json();
    assert!(json["decision"].is_null(), "{json:#}");
    assert!(json["score"].is_null(), "{json:#}");
    assert_eq!(json["reasons"], serde_json::json!([]));
    assert_eq!(json["findings"], serde_json::json!([]));
    for key in NOT_COMPUTED {
        assert!(json[key].is_null(), "{key} in {json:#}");
    }
    assert_eq!(
        json["today_utc"].as_str().map(str::len),
        Some(10),
        "{json:#}"
    );
    json
}

#[test]
fn unreadable_coverage_gives_an_object_with_null_figures_and_the_ledgers_floor() {
    let p = clean();
    p.write(
        "qa/merge_ledger.toml",
        format!("{LEDGER}\n[coverage]\nmin_proven = 60.0\n"),
    );
    let run = score_json(&p, &["--coverage", "nope.json"]);
    let json = assert_unjudged_object(&run);
    assert_eq!(json["min_proven_coverage_percent"], 60.0, "from the ledger");
    let error = &json["error"];
    assert_eq!(error["path"], "nope.json");
    assert_eq!(error["message"], "file not found");
    assert!(
        error["line"].is_null() && error["column"].is_null(),
        "{error:#}"
    );

    // --min-proven is the floor applied when given.
    let run = score_json(&p, &["--coverage", "nope.json", "--min-proven", "55"]);
    assert_eq!(
        assert_unjudged_object(&run)["min_proven_coverage_percent"],
        55.0
    );
}

#[test]
fn malformed_junit_gives_an_object_with_its_position() {
    let p = clean();
    // Cut off inside the start tag on the second line.
    p.write(
        "bad.xml",
        "<testsuites>\n<testsuite name=\"x\"><testcase classname=\"a\" name=\"b\"",
    );
    let run = p.guard(&["score", "--junit", "bad.xml", "--format", "json"]);
    let json = assert_unjudged_object(&run);
    assert_eq!(json["error"]["path"], "bad.xml");
    assert_eq!(json["error"]["line"], 2, "{json:#}");
    assert!(json["error"]["column"].as_u64().is_some(), "{json:#}");
    assert_eq!(
        json["min_proven_coverage_percent"], 70.0,
        "the ledger's default"
    );
}

#[test]
fn malformed_ledger_gives_an_object_without_a_floor() {
    let p = clean();
    p.write(
        "qa/merge_ledger.toml",
        LEDGER.replace("required = true", "required = \"yes\""),
    );
    let run = score_json(&p, &[]);
    let json = assert_unjudged_object(&run);
    // `required` is on line 4 of LEDGER.
    assert_eq!(json["error"]["path"], "qa/merge_ledger.toml");
    assert_eq!(json["error"]["line"], 4, "{json:#}");
    assert!(json["error"]["column"].as_u64().is_some(), "{json:#}");
    assert!(
        json["min_proven_coverage_percent"].is_null(),
        "the ledger was not read: {json:#}"
    );
}
