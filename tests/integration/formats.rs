//! The CI formats, each held to its consumer's rules: GitHub's workflow commands (escaping,
//! 10 annotations per type), SARIF 2.1.0 as Microsoft's SARIF Multitool validates it, GitLab
//! Code Quality (unique, stable fingerprints without line numbers), and the Markdown step
//! summary GitHub shows on a job's page.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use crate::scenario::{FAIL, clean, clean_cases, freeze_toml, junit, use_freeze_toml};
use crate::support::Project;

const SCORE: &[&str] = &["score", "--junit", "junit.xml"];
const RETRY: &str = "tests/runtime/test_retry.py::test_backoff_under_load";

fn score(p: &Project, format: &str) -> crate::support::Run {
    let mut args = SCORE.to_vec();
    args.extend(["--format", format]);
    p.guard(&args)
}

/// 14 ordinary tests fail (14 `test_failures`), plus the property test (`property_hold`).
fn many_failures() -> Project {
    let p = clean();
    let mut cases = clean_cases();
    cases[0].2 = FAIL;
    let names: Vec<String> = (0..14).map(|i| format!("test_broken_{i:02}")).collect();
    for name in &names {
        cases.push(("tests.test_many", name.as_str(), FAIL));
    }
    p.write("junit.xml", junit(&cases));
    p
}

// --- GitHub ------------------------------------------------------------------------------

#[test]
fn github_annotations_are_workflow_commands_on_the_file_and_line() {
    let p = clean();
    // An expired lease on line 7 of the freeze file: a finding with a path and a line.
    let freeze = freeze_toml("max_active_leases = 2", &[(RETRY, "2001-01-01")]);
    use_freeze_toml(&p, &freeze);
    // The lease's line is its `[[leases]]` header's.
    let line = freeze.lines().position(|l| l == "[[leases]]").unwrap() + 1;
    let run = score(&p, "github");
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    // Written by hand from GitHub's syntax: `::error file=F,line=L,title=T::message`; the
    // help follows the message on its own line (%0A).
    let expired = lines
        .iter()
        .find(|l| l.contains("title=expired_leases"))
        .unwrap_or_else(|| panic!("no expired_leases annotation:\n{}", run.stdout));
    assert!(
        expired.starts_with(&format!(
            "::error file=qa/freeze.toml,line={line},title=expired_leases::lease for "
        )),
        "{expired}"
    );
    assert!(expired.contains("%0Ahelp: "), "{expired}");
    assert_eq!(
        lines.last().copied(),
        // The expired lease, and the test it no longer covers, which fails.
        Some("::notice title=merge-guard::decision: REJECT (2 findings)")
    );
}

#[test]
fn github_shows_ten_errors_then_counts_the_rest() {
    let p = many_failures();
    let run = score(&p, "github");
    assert_eq!(run.code, 1, "{}", run.stderr);
    let errors = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("::error "))
        .count();
    assert_eq!(errors, 10, "{}", run.stdout);
    // 15 findings: 10 annotations and a notice for the other 5.
    assert!(
        run.stdout
            .contains("::notice title=merge-guard::5 more errors not shown as annotations"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("decision: REJECT (15 findings)"));
}

#[test]
fn github_escapes_what_the_report_wrote() {
    let p = clean();
    let mut cases = clean_cases();
    // A test name with `%`, `,` and `:` and a newline, as a report under judgement may hold.
    cases.push(("tests.test_odd", "test_a%b,c:d&#10;e", FAIL));
    p.write("junit.xml", junit(&cases));
    let run = score(&p, "github");
    assert_eq!(run.code, 1);
    let line = run
        .stdout
        .lines()
        .find(|l| l.contains("test_odd"))
        .expect("annotation of the odd test");
    // One line per annotation: the newline is %0A, the percent %25; the message keeps `,`
    // and `:` (only properties escape them).
    assert!(line.contains("test_a%25b,c:d%0Ae"), "{line}");
    assert_eq!(
        run.stdout
            .lines()
            .filter(|l| l.contains("test_odd"))
            .count(),
        1
    );
}

#[test]
fn findings_without_a_file_are_attached_to_the_ledger() {
    let p = clean();
    let run = p.guard(&["score", "--format", "github"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout.contains(
            "::error file=qa/merge_ledger.toml,title=junit_missing::no JUnit report given"
        ),
        "{}",
        run.stdout
    );
    let gitlab: Value =
        serde_json::from_str(&p.guard(&["score", "--format", "gitlab"]).stdout).unwrap();
    assert_eq!(gitlab[0]["check_name"], "junit_missing");
    assert_eq!(gitlab[0]["location"]["path"], "qa/merge_ledger.toml");
    assert_eq!(gitlab[0]["location"]["lines"]["begin"], 1);
}

#[test]
fn every_mistake_of_a_ledger_is_annotated_where_it_is() {
    let p = clean();
    p.write(
        "qa/merge_ledger.toml",
        "version = 1\n[properties]\nseeds = \"/seeds\"\nmin_lines = -1\n",
    );
    let run = p.guard(&["lint", "--format", "github"]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    // Only the first was annotated: the second mistake stayed out of the pull request.
    for at in ["line=3,col=9,", "line=4,col=13,"] {
        assert!(
            run.stdout.contains(&format!(
                "::error file=qa/merge_ledger.toml,{at}title=cannot_judge::"
            )),
            "{at}: {}",
            run.stdout
        );
    }
}

#[test]
fn a_run_that_cannot_be_judged_is_an_error_in_every_ci_format() {
    let p = clean();
    p.write(
        "qa/merge_ledger.toml",
        "[freeze]\nmax_active_leases = \"two\"\n",
    );
    let github = score(&p, "github");
    assert_eq!(github.code, 2);
    assert!(
        github.stdout.starts_with(
            "::error file=qa/merge_ledger.toml,line=2,col=21,title=cannot_judge::cannot judge: "
        ),
        "{}",
        github.stdout
    );
    assert!(github.stdout.contains("decision: none, cannot judge"));
    let sarif: Value = serde_json::from_str(&score(&p, "sarif").stdout).unwrap();
    let invocation = &sarif["runs"][0]["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false);
    assert_eq!(
        invocation["toolExecutionNotifications"][0]["locations"][0]["physicalLocation"]["region"]["startLine"],
        2
    );
    assert_eq!(sarif["runs"][0]["results"], serde_json::json!([]));
    let gitlab: Value = serde_json::from_str(&score(&p, "gitlab").stdout).unwrap();
    assert_eq!(gitlab[0]["check_name"], "cannot_judge");
    assert_eq!(gitlab[0]["location"]["lines"]["begin"], 2);
}

// --- SARIF -------------------------------------------------------------------------------

/// Microsoft's SARIF Multitool: `SARIF_MULTITOOL`, else `Sarif.Multitool` on PATH. `.ci/run`
/// installs it from npm (`@microsoft/sarif-multitool-linux`).
fn multitool() -> PathBuf {
    if let Some(path) = std::env::var_os("SARIF_MULTITOOL") {
        return PathBuf::from(path);
    }
    let found = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|dir| dir.join("Sarif.Multitool"))
        .find(|p| p.is_file());
    found.unwrap_or_else(|| {
        panic!(
            "SARIF Multitool not found: `npm install --prefix /opt/sarif @microsoft/sarif-multitool-linux` and set SARIF_MULTITOOL=/opt/sarif/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool (.ci/run does)"
        )
    })
}

/// Validates `sarif` with the Multitool; returns its results (rule id, level, text).
fn validate(p: &Project, name: &str, sarif: &str) -> Vec<(String, String, String)> {
    let input = p.root().join(format!("{name}.sarif"));
    let output = p.root().join(format!("{name}.validation.sarif"));
    std::fs::write(&input, sarif).unwrap();
    let run = Command::new(multitool())
        .arg("validate")
        .arg(&input)
        .arg("--output")
        .arg(&output)
        .env("DOTNET_CLI_TELEMETRY_OPTOUT", "1")
        .output()
        .expect("run the SARIF Multitool");
    assert!(
        run.status.success(),
        "Multitool failed on {name}:\n{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    let log: Value = serde_json::from_str(&std::fs::read_to_string(&output).unwrap()).unwrap();
    log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["ruleId"].as_str().unwrap_or_default().to_string(),
                r["level"].as_str().unwrap_or("warning").to_string(),
                r["message"]["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect()
}

#[test]
fn sarif_validates_with_the_sarif_multitool() {
    let mut cases: Vec<(&str, Project, &[&str])> = vec![
        ("findings", many_failures(), SCORE),
        ("clean", clean(), SCORE),
        ("no-junit", clean(), &["score"]),
        ("lint", clean(), &["lint"]),
    ];
    let broken = clean();
    broken.write("qa/merge_ledger.toml", "[freeze\n");
    cases.push(("cannot-judge", broken, SCORE));
    let spaced = clean();
    spaced.write("tests/fixtures/with space [1].json", "{}\n");
    cases.push(("odd-path", spaced, SCORE));
    for (name, p, args) in cases {
        let mut args = args.to_vec();
        args.extend(["--format", "sarif"]);
        let run = p.guard(&args);
        assert!(run.code <= 2, "{name}: {}", run.stderr);
        let problems: Vec<_> = validate(&p, name, &run.stdout)
            .into_iter()
            .filter(|(_, level, _)| level == "error")
            .collect();
        assert!(
            problems.is_empty(),
            "{name}: the Multitool finds errors: {problems:#?}"
        );
    }
}

#[test]
fn the_multitool_check_can_fail() {
    // A log without its required `version` and with a result naming no rule: the validator
    // this suite relies on reports errors for it.
    let p = clean();
    let bad = r#"{"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"message": {"text": "m"}}]}]}"#;
    let input = p.root().join("bad.sarif");
    std::fs::write(&input, bad).unwrap();
    let run = Command::new(multitool())
        .arg("validate")
        .arg(&input)
        .arg("--output")
        .arg(p.root().join("bad.validation.sarif"))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(
        !run.status.success() || out.contains(": error "),
        "the Multitool accepts a broken log:\n{out}"
    );
}

#[test]
fn sarif_has_a_rule_per_code_and_stable_fingerprints() {
    let p = many_failures();
    let first: Value = serde_json::from_str(&score(&p, "sarif").stdout).unwrap();
    let run = &first["runs"][0];
    assert_eq!(first["version"], "2.1.0");
    let rules: Vec<&str> = run["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    for code in merge_guard::report::Code::ALL {
        assert!(rules.contains(&code.as_str()), "no rule for {code}");
    }
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 15);
    for r in results {
        let index = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[index], r["ruleId"], "ruleIndex points at its rule");
        assert_eq!(r["level"], "error");
    }
    let prints = |log: &Value| -> Vec<String> {
        log["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                r["partialFingerprints"]["guardFinding/v1"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    };
    let mut unique = prints(&first);
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 15, "one fingerprint per finding");
    // Another run, with the report's records in another order and at other lines: the same
    // findings keep their fingerprints.
    let mut cases = clean_cases();
    cases[0].2 = FAIL;
    let names: Vec<String> = (0..14)
        .rev()
        .map(|i| format!("test_broken_{i:02}"))
        .collect();
    for name in &names {
        cases.insert(1, ("tests.test_many", name.as_str(), FAIL));
    }
    p.write("junit.xml", junit(&cases));
    let second: Value = serde_json::from_str(&score(&p, "sarif").stdout).unwrap();
    let mut a = prints(&first);
    let mut b = prints(&second);
    a.sort();
    b.sort();
    assert_eq!(a, b);
}

// --- GitLab ------------------------------------------------------------------------------

#[test]
fn gitlab_code_quality_has_unique_fingerprints_without_line_numbers() {
    let p = clean();
    let freeze = freeze_toml(
        "max_active_leases = 5",
        &[
            (RETRY, "2001-01-01"),
            ("tests/test_x.py::test_y", "2001-01-01"),
        ],
    );
    use_freeze_toml(&p, &freeze);
    let first: Value = serde_json::from_str(&score(&p, "gitlab").stdout).unwrap();
    let issues = first.as_array().unwrap();
    let expired: Vec<&Value> = issues
        .iter()
        .filter(|i| i["check_name"] == "expired_leases")
        .collect();
    assert_eq!(expired.len(), 2, "{first:#}");
    for issue in issues {
        assert!(
            ["info", "minor", "major", "critical", "blocker"]
                .contains(&issue["severity"].as_str().unwrap()),
            "{issue}"
        );
        assert!(issue["location"]["lines"]["begin"].as_u64().unwrap() >= 1);
        assert!(!issue["description"].as_str().unwrap().is_empty());
    }
    let mut prints: Vec<&str> = issues
        .iter()
        .map(|i| i["fingerprint"].as_str().unwrap())
        .collect();
    prints.sort_unstable();
    prints.dedup();
    assert_eq!(prints.len(), issues.len(), "fingerprints are unique");
    // The same leases three lines further down (a comment added above them): each finding
    // moved to another line and keeps its fingerprint.
    use_freeze_toml(&p, &format!("# one\n# two\n# three\n{freeze}"));
    let moved: Value = serde_json::from_str(&score(&p, "gitlab").stdout).unwrap();
    let lines = |v: &Value| -> Vec<u64> {
        v.as_array()
            .unwrap()
            .iter()
            .filter(|i| i["check_name"] == "expired_leases")
            .map(|i| i["location"]["lines"]["begin"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(
        lines(&moved),
        lines(&first).iter().map(|l| l + 3).collect::<Vec<_>>(),
        "the findings moved"
    );
    let fingerprints = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|i| i["fingerprint"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(fingerprints(&first), fingerprints(&moved));
}

#[test]
fn gitlab_tells_two_identical_findings_apart() {
    let p = clean();
    let mut cases = clean_cases();
    // The same failing record twice in one report: one test, one finding; two reports with
    // the same failing test: still one test. Identical findings come from two identical
    // lint advice entries instead: two property paths that do not exist.
    cases.push(("tests.test_same", "test_twice", FAIL));
    p.write("junit.xml", junit(&cases));
    let text = std::fs::read_to_string(p.root().join("qa/merge_ledger.toml")).unwrap();
    p.write(
        "qa/merge_ledger.toml",
        text.replace(
            "paths = [\"tests/properties/\"]",
            "paths = [\"tests/properties/\", \"tests/gone\", \"tests/gone\"]",
        ),
    );
    let lint: Value =
        serde_json::from_str(&p.guard(&["lint", "--format", "gitlab"]).stdout).unwrap();
    let gone: Vec<&Value> = lint
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["location"]["path"] == "tests/gone")
        .collect();
    assert_eq!(gone.len(), 2, "{lint:#}");
    assert_eq!(gone[0]["description"], gone[1]["description"]);
    assert_ne!(gone[0]["fingerprint"], gone[1]["fingerprint"]);
}

// --- Step summary ------------------------------------------------------------------------

#[test]
fn github_step_summary_is_appended_in_every_format() {
    let p = many_failures();
    let summary = p.root().join("summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    for format in ["text", "json", "github"] {
        let run = crate::support::hermetic(Command::new(env!("CARGO_BIN_EXE_guard")), p.root())
            .args(["score", "--junit", "junit.xml", "--format", format])
            .current_dir(p.root())
            .env("GITHUB_STEP_SUMMARY", &summary)
            .output()
            .unwrap();
        assert_eq!(run.status.code(), Some(1));
    }
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(
        text.starts_with("earlier step\n### merge-guard\n"),
        "appended, not overwritten:\n{text}"
    );
    assert_eq!(text.matches("### merge-guard").count(), 3);
    assert!(text.contains("Decision: **REJECT**, 15 findings."));
    assert!(text.contains(r"| error | `test_failures` | `qa/merge_ledger.toml` | test tests.test\_many\:\:test\_broken\_00 failed<br>help: "));
    assert!(text.contains("| policy | collected tests |"));
}

#[test]
fn step_summary_escapes_markdown_from_the_reports() {
    let p = clean();
    let mut cases = clean_cases();
    cases.push((
        "tests.test_odd",
        "test_[link](http://x) &lt;img&gt; a|b",
        FAIL,
    ));
    p.write("junit.xml", junit(&cases));
    let summary = p.root().join("summary.md");
    let run = crate::support::hermetic(Command::new(env!("CARGO_BIN_EXE_guard")), p.root())
        .args(["score", "--junit", "junit.xml"])
        .current_dir(p.root())
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(
        text.contains(r"test\_\[link\](http\://x) &lt;img&gt; a\|b"),
        "{text}"
    );
    assert!(!text.contains("<img"), "{text}");
}

#[test]
fn step_summary_renders_inert_on_github() {
    // Rendered by cmark-gfm, GitHub's own Markdown (`cmarkgfm`, with its autolinks): a test
    // name with a URL, a www name, an address and bold text was a live link and bold.
    let p = clean();
    let mut cases = clean_cases();
    cases.push((
        "tests.test_odd",
        "test_x approved: https://evil.example/ok www.evil.example ops@evil.example **decision: MERGE** [y](http://z) `code` ``",
        FAIL,
    ));
    p.write("junit.xml", junit(&cases));
    let summary = p.root().join("summary.md");
    crate::support::hermetic(Command::new(env!("CARGO_BIN_EXE_guard")), p.root())
        .args(["score", "--junit", "junit.xml"])
        .current_dir(p.root())
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    let html = crate::support::github_markdown_html(&summary);
    let row = html
        .lines()
        .find(|l| l.contains("test_x approved"))
        .unwrap_or_else(|| panic!("{html}"));
    for made in ["<a ", "<strong>", "<em>", "<img"] {
        assert!(!row.contains(made), "{made} in {row}");
    }
    // The text still reads as written.
    assert!(row.contains("https://evil.example/ok"), "{row}");
}

#[test]
fn what_commits_wrote_reaches_the_terminal_inert_in_check_verbose() {
    // An agent's commit whose author name, and a protected path it changes, hold a colour
    // escape and a right-to-left override: `guard check --verbose` (text) shows them as
    // one line each, in the order they are.
    let p = Project::git();
    p.write("README.md", "x\n");
    p.git_cmd(&["add", "-A"]);
    p.git_cmd(&["commit", "-qm", "Start"]);
    let hostile = "tests/fixtures/\u{1b}[32mok\u{202e}nosj.json";
    p.write(hostile, "{}\n");
    p.commit_as(
        ("Cursor \u{1b}[2J\u{202e}Agent", "cursoragent@cursor.com"),
        "Add a fixture\n",
    );
    let run = p.guard(&["check", "HEAD~1..HEAD", "--verbose"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        !run.stdout.contains('\u{1b}') && !run.stdout.contains('\u{202e}'),
        "{:?}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("tests/fixtures/ [32mok\u{fffd}nosj.json"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("by Cursor  [2J\u{fffd}Agent"),
        "{}",
        run.stdout
    );
}
