//! `[levels]`: any reason code set to `reject`, `warn` or `off`, applied the same way in
//! `score`, `check` and the hooks; the codes that guard the gate itself cannot be lowered.

use crate::scenario::*;
use crate::support::server::{AGENTS, Server, ledger, write_in};

/// The clean scenario with its frozen test passing: `frozen_test_passed` and nothing else.
fn frozen_passes(levels: &str) -> crate::support::Project {
    let p = clean();
    let mut cases = clean_cases();
    cases[1].2 = PASS;
    p.write("junit.xml", junit(&cases));
    p.write("qa/merge_ledger.toml", format!("{LEDGER}\n{levels}"));
    p
}

#[test]
fn a_code_set_to_warn_is_shown_and_does_not_reject_and_off_is_not_shown() {
    let args = ["score", "--junit", "junit.xml", "--format", "json"];
    let p = frozen_passes("");
    assert_eq!(p.guard(&args).reasons(), ["frozen_test_passed"]);

    let p = frozen_passes("[levels]\nfrozen_test_passed = \"warn\"\n");
    let run = p.guard(&args);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let warnings = &run.json()["warnings"];
    assert_eq!(warnings[0]["code"], "frozen_test_passed", "{}", run.stdout);
    let text = p.guard(&["score", "--junit", "junit.xml"]);
    assert!(
        text.stdout.contains("warning[frozen_test_passed]"),
        "{}",
        text.stdout
    );

    let p = frozen_passes("[levels]\nfrozen_test_passed = \"off\"\n");
    let run = p.guard(&args);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(
        run.json()["warnings"],
        serde_json::json!([]),
        "{}",
        run.stdout
    );

    // Another code is untouched by it.
    let p = frozen_passes("[levels]\nexpired_leases = \"off\"\n");
    assert_eq!(p.guard(&args).reasons(), ["frozen_test_passed"]);
}

#[test]
fn levels_apply_in_the_hook_and_the_older_keys_are_the_same_setting() {
    // `weakened_test` at "warn" through [levels]: the push lands, the pusher sees why.
    let calc = "def test_total():\n    assert total([1, 2]) == 3\n    assert total([]) == 0\n";
    for table in [
        "[levels]\nweakened_test = \"warn\"\n",
        "[tests]\nweakened = \"warn\"\n",
    ] {
        let s = Server::with_ledger(&ledger(AGENTS, table), |_| {});
        write_in(&s.work, "tests/test_calc.py", calc);
        s.commit("Add the calc tests\n");
        s.push(&["origin", "main"]).assert_accepted();
        write_in(
            &s.work,
            "tests/test_calc.py",
            &calc.replace("    assert total([]) == 0\n", ""),
        );
        let commit = s.agent_commit("Tidy test_total\n");
        let pushed = s.push(&["origin", "main"]);
        pushed.assert_accepted();
        assert!(
            pushed.stderr.contains(&format!(
                "remote: warning: refs/heads/main: [weakened_test] {}",
                s.short(&commit)
            )),
            "{table}: {}",
            pushed.stderr
        );
    }
}

#[test]
fn a_ledger_that_lowers_what_guards_the_gate_or_names_no_code_is_refused_where_it_stands() {
    let p = clean();
    p.write(
        "qa/merge_ledger.toml",
        format!(
            "{LEDGER}\n[tests]\nweakened = \"off\"\n\n[levels]\nagent_edit_protected = \"warn\"\nweakened_tests = \"off\"\nweakened_test = \"warn\"\nledger_invalid = \"reject\"\n"
        ),
    );
    let run = p.guard(&["lint"]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    let lines = LEDGER.lines().count();
    for (line, col, text) in [
        (
            lines + 3,
            12,
            "`[levels] weakened_test` and this key set one thing two ways",
        ),
        (
            lines + 6,
            24,
            "`levels.agent_edit_protected` cannot be lowered",
        ),
        (lines + 7, 1, "`levels.weakened_tests`: not a reason code"),
    ] {
        let at = format!("qa/merge_ledger.toml:{line}:{col}: {text}");
        assert!(run.stderr.contains(&at), "{at}\n{}", run.stderr);
    }
}
