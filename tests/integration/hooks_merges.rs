//! Merges that bring back old protected content, and rewinds a merge base misjudges.

use crate::support::server::{AGENT_EMAIL, AGENT_NAME, AGENTS, FREEZE, Server, append_in, ledger};

// Merges that bring back old protected content.

const LEASE_BLOCK: &str = "\n[[leases]]\nnodeid = \"tests/test_io.py::test_unicode\"\nreason = \"flaky on CI\"\nowner = \"qa\"\nexpires = \"2099-01-31\"\n";

/// The tree of `rev` with each `(path, from)` taken from revision `from`, built with git's
/// plumbing in the working clone's index (reset to HEAD after).
fn tree_with(s: &Server, rev: &str, take: &[(&str, &str)]) -> String {
    s.git(&["read-tree", rev]);
    for (path, from) in take {
        let blob = s.git(&["rev-parse", &format!("{from}:{path}")]);
        s.git(&[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("100644,{blob},{path}"),
        ]);
    }
    let tree = s.git(&["write-tree"]);
    s.git(&["read-tree", "HEAD"]);
    tree
}

/// A commit of `tree` with `parents` in this order, by the agent at `date`.
fn agent_commit_tree(
    s: &Server,
    tree: &str,
    parents: &[&str],
    subject: &str,
    date: &str,
) -> String {
    let mut cmd = s.git_cmd(&s.work);
    cmd.args(["commit-tree", tree, "-m", subject]);
    for parent in parents {
        cmd.args(["-p", parent]);
    }
    let out = cmd
        .env("GIT_AUTHOR_NAME", AGENT_NAME)
        .env("GIT_AUTHOR_EMAIL", AGENT_EMAIL)
        .env("GIT_COMMITTER_NAME", AGENT_NAME)
        .env("GIT_COMMITTER_EMAIL", AGENT_EMAIL)
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_DATE", date)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A human adds a lease to the freeze file (H1) and removes it again (T); both land on main.
/// Returns (H1, T).
fn lease_landed_then_removed(s: &Server) -> (String, String) {
    append_in(&s.work, "qa/freeze.toml", LEASE_BLOCK);
    let h1 = s.commit("Freeze the unicode test\n\nFreeze-Lease: human\n");
    s.write("qa/freeze.toml", FREEZE);
    let t = s.commit("Unfreeze the unicode test\n\nFreeze-Lease: human\n");
    s.push(&["origin", "main"]).assert_accepted();
    (h1, t)
}

#[test]
fn agent_octopus_merge_bringing_back_a_removed_lease_is_rejected() {
    let s = Server::new("");
    let (h1, t) = lease_landed_then_removed(&s);
    let x = s.agent_commit("Agent work");
    let tree = tree_with(&s, &x, &[("qa/freeze.toml", &h1)]);
    let merge = agent_commit_tree(&s, &tree, &[&t, &h1, &x], "Merge", "2026-01-01T00:00:00Z");
    let pushed = s.push(&["origin", &format!("{merge}:refs/heads/main")]);
    pushed.assert_rejected_with(&format!(
        "remote: error: refs/heads/main: [agent_edit_protected] {} \"Merge\" qa/freeze.toml:",
        s.short(&merge)
    ));
    pushed.assert_rejected_with(&format!(
        "remote: error: refs/heads/main: [agent_added_lease] {}",
        s.short(&merge)
    ));
    assert_eq!(s.server_ref("refs/heads/main"), Some(t));
}

#[test]
fn octopus_merge_bringing_back_the_ledger_before_strict_mode_is_rejected() {
    let s = Server::new("");
    let before = s.base.clone();
    s.write(
        "qa/merge_ledger.toml",
        &ledger(&format!("{AGENTS}\ndefault = \"agent\""), ""),
    );
    let strict = s.commit("Strict mode\n\nLedger-Change: human\n");
    s.push(&["origin", "main"]).assert_accepted();
    // In strict mode every unsigned commit is an agent's: an unrelated one passes ...
    let x = s.human_change("README.md", "Document the project");
    // ... and the merge that takes the ledger from before strict mode is an agent's edit.
    let tree = tree_with(&s, &x, &[("qa/merge_ledger.toml", &before)]);
    let merge = agent_commit_tree(
        &s,
        &tree,
        &[&strict, &before, &x],
        "Merge",
        "2026-01-01T00:00:00Z",
    );
    let pushed = s.push(&["origin", &format!("{merge}:refs/heads/main")]);
    pushed.assert_rejected_with(&format!(
        "remote: error: refs/heads/main: [agent_edit_protected] {} \"Merge\" qa/merge_ledger.toml:",
        s.short(&merge)
    ));
    assert_eq!(s.server_ref("refs/heads/main"), Some(strict));
}

#[test]
fn agent_criss_cross_merge_bringing_back_a_removed_lease_is_rejected() {
    // As in `guard check`'s test: Y is the agent's commit from before H1; K merges T and Y, M1
    // merges H1 into Y, F merges K and M1 with M1's freeze file. Y's date decides which of the
    // two merge bases of K and M1 libgit2 picks; neither may matter.
    for y_date in ["2026-06-01T00:00:00Z", "2025-06-01T00:00:00Z"] {
        let s = Server::new("");
        let before = s.base.clone();
        let (h1, t) = lease_landed_then_removed(&s);
        s.git(&["checkout", "-q", "-b", "agent", &before]);
        s.write("src/agent.py", "WORK = 1\n");
        s.git(&["add", "src/agent.py"]);
        let y_tree = s.git(&["write-tree"]);
        let y = agent_commit_tree(&s, &y_tree, &[&before], "Agent work", y_date);
        s.git(&["checkout", "-q", "-f", "main"]);
        let date = "2026-01-01T00:00:00Z";
        let k = agent_commit_tree(
            &s,
            &tree_with(&s, &t, &[("src/agent.py", &y)]),
            &[&t, &y],
            "Merge T",
            date,
        );
        let m1 = agent_commit_tree(
            &s,
            &tree_with(&s, &y, &[("qa/freeze.toml", &h1)]),
            &[&y, &h1],
            "Merge H1",
            date,
        );
        let f = agent_commit_tree(
            &s,
            &tree_with(&s, &k, &[("qa/freeze.toml", &m1)]),
            &[&k, &m1],
            "Merge",
            date,
        );

        let pushed = s.push(&["origin", &format!("{f}:refs/heads/main")]);
        pushed.assert_rejected_with(&format!(
            "remote: error: refs/heads/main: [agent_edit_protected] {} \"Merge\" qa/freeze.toml:",
            s.short(&f)
        ));
        let errors: Vec<&str> = pushed
            .lines()
            .into_iter()
            .filter(|l| l.starts_with("remote: error: refs/heads/main: ["))
            .collect();
        assert_eq!(
            errors.len(),
            2,
            "F's edit and its lease, nothing else: {errors:#?}"
        );
        assert_eq!(s.server_ref("refs/heads/main"), Some(t));
    }
}

#[test]
fn feature_branch_that_merges_main_then_lands_by_a_human_merge_is_accepted() {
    let s = Server::new("");
    s.git(&["checkout", "-q", "-b", "feature"]);
    append_in(&s.work, "qa/freeze.toml", LEASE_BLOCK);
    s.commit("Freeze the unicode test\n\nFreeze-Lease: human\n");
    s.push(&["origin", "feature"]).assert_accepted();
    s.git(&["checkout", "-q", "main"]);
    append_in(
        &s.work,
        "qa/freeze.toml",
        "# reviewed by the platform team\n",
    );
    s.commit("Note the review\n\nFreeze-Lease: human\n");
    s.human_change("README.md", "Main work");
    s.push(&["origin", "main"]).assert_accepted();

    // main merged into the feature branch: the human resolves the freeze file to hold both
    // changes, with the trailer (a merge's own edit of a protected file needs one).
    s.git(&["checkout", "-q", "feature"]);
    let merged = s
        .git_cmd(&s.work)
        .args(["merge", "-q", "--no-ff", "-m", "Merge main", "main"])
        .output()
        .unwrap();
    if !merged.status.success() {
        let mut text = FREEZE.to_string();
        text.push_str("# reviewed by the platform team\n");
        text.push_str(LEASE_BLOCK);
        s.write("qa/freeze.toml", &text);
        s.commit("Merge main\n\nFreeze-Lease: human\n");
    }
    s.push(&["origin", "feature"]).assert_accepted();
    s.human_change("docs/feature.md", "Feature work");
    s.push(&["origin", "feature"]).assert_accepted();

    // The feature branch lands on main by a human merge that takes its freeze file.
    s.git(&["checkout", "-q", "main"]);
    s.git(&["merge", "-q", "--no-ff", "-m", "Merge feature", "feature"]);
    let tip = s.git(&["rev-parse", "HEAD"]);
    s.push(&["origin", "main"]).assert_accepted();
    assert_eq!(s.server_ref("refs/heads/main"), Some(tip));
}

#[test]
fn agent_branch_landed_by_a_human_merge_names_the_agent_commit_once() {
    let s = Server::new("");
    s.git(&["checkout", "-q", "-b", "agent"]);
    let agent = s.agent_edits_freeze("Park a flaky test");
    s.git(&["checkout", "-q", "main"]);
    s.human_change("README.md", "Main work");
    s.git(&["merge", "-q", "--no-ff", "-m", "Merge agent", "agent"]);
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with(&format!(
        "remote: error: refs/heads/main: [agent_edit_protected] {} ",
        s.short(&agent)
    ));
    let errors: Vec<&str> = pushed
        .lines()
        .into_iter()
        .filter(|l| l.starts_with("remote: error: refs/heads/main: ["))
        .collect();
    assert_eq!(
        errors.len(),
        1,
        "the merge brings the agent's change, no edit of its own: {errors:#?}"
    );
}

// Rewinds that a merge base misjudges.

/// A human's commit of everything in the working clone, dated `date`.
fn commit_dated(s: &Server, message: &str, date: &str) -> String {
    s.commit_with(
        message,
        &[("GIT_AUTHOR_DATE", date), ("GIT_COMMITTER_DATE", date)],
    )
}

#[test]
fn agent_force_push_of_a_merge_of_two_old_commits_that_undoes_a_lease_removal_is_rejected() {
    // main: a side branch from the first commit, a lease (H1), the side branch merged, the
    // lease removed (T). The agent force-pushes main to a new merge of H1 and the side
    // branch: it drops T, and H1 and the side branch are both merge bases of T and it.
    // Judged against the side branch's tree, the lease looks brought by the merge; it is T's
    // removal undone. The side branch's date decides which base libgit2 returns.
    for side_date in ["2025-06-01T00:00:00Z", "2026-06-01T00:00:00Z"] {
        for h1_first in [true, false] {
            let s = Server::new("");
            s.git(&["checkout", "-q", "-b", "side"]);
            s.write("docs/side.md", "Side work.\n");
            let side = commit_dated(&s, "Side work", side_date);
            s.git(&["checkout", "-q", "main"]);
            append_in(&s.work, "qa/freeze.toml", LEASE_BLOCK);
            let h1 = s.commit("Freeze the unicode test\n\nFreeze-Lease: human\n");
            s.git(&["merge", "-q", "--no-ff", "-m", "Merge side", "side"]);
            s.write("qa/freeze.toml", FREEZE);
            let t = s.commit("Unfreeze the unicode test\n\nFreeze-Lease: human\n");
            s.push(&["origin", "main"]).assert_accepted();

            let tree = tree_with(&s, &h1, &[("docs/side.md", &side)]);
            let parents: [&str; 2] = if h1_first { [&h1, &side] } else { [&side, &h1] };
            let merge =
                agent_commit_tree(&s, &tree, &parents, "Merge side", "2026-01-01T00:00:00Z");
            let pushed = s.push(&["--force", "origin", &format!("{merge}:refs/heads/main")]);
            pushed.assert_rejected_with("remote: error: refs/heads/main: [protected_rewind]");
            assert!(
                pushed.stderr.contains("qa/freeze.toml"),
                "{side_date} {h1_first}: {}",
                pushed.stderr
            );
            assert_eq!(s.server_ref("refs/heads/main"), Some(t));
        }
    }
}

// An agent's merge judged against git's own merge of its parents.

/// 6 `def test_total`, 7 and 8 its assertions; 11 `def test_ratio`, 12 its assertion.
const CALC: &str = "from calc import ratio, total\n\n\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n    assert total([]) == 0\n\n\ndef test_ratio():\n    assert ratio(1, 2) == 0.5\n";

/// `git merge --no-commit --no-ff BRANCH` in the working clone; whether it merged cleanly.
fn merge_no_commit(s: &Server, branch: &str) -> bool {
    s.git_cmd(&s.work)
        .args(["merge", "-q", "--no-commit", "--no-ff", branch])
        .output()
        .unwrap()
        .status
        .success()
}

#[test]
fn agent_merge_that_guts_a_test_its_old_side_branch_predates_is_rejected() {
    let s = Server::new("");
    // A human's side branch from before the test existed.
    s.git(&["checkout", "-q", "-b", "side"]);
    s.write("docs/side.md", "Side work.\n");
    s.commit("Side work");
    s.push(&["origin", "side"]).assert_accepted();
    s.git(&["checkout", "-q", "main"]);
    s.write("tests/test_calc.py", CALC);
    s.commit("Add the calc tests");
    s.push(&["origin", "main"]).assert_accepted();

    // The agent merges the old branch and, in the merge, drops an assertion. Against the
    // side branch the test file is new; against git's merge it lost an assertion.
    assert!(merge_no_commit(&s, "side"));
    s.write(
        "tests/test_calc.py",
        &CALC.replace("    assert total([]) == 0\n", ""),
    );
    let merge = s.agent_commit("Merge side");
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with(&format!(
        "remote: error: refs/heads/main: [weakened_test] {} \"Merge side\" tests/test_calc.py:",
        s.short(&merge)
    ));
    assert!(
        pushed.stderr.contains("assert total([]) == 0"),
        "{}",
        pushed.stderr
    );

    // The same merge without the edit is what git's merge gives: accepted.
    s.git(&["reset", "-q", "--hard", "HEAD^"]);
    assert!(merge_no_commit(&s, "side"));
    let honest = s.agent_commit("Merge side");
    s.push(&["origin", "main"]).assert_accepted();
    assert_eq!(s.server_ref("refs/heads/main"), Some(honest));
}

#[test]
fn agent_merge_resolving_a_test_conflict_is_judged_against_every_parent() {
    let s = Server::new("");
    s.write("tests/test_calc.py", CALC);
    s.commit("Add the calc tests");
    s.push(&["origin", "main"]).assert_accepted();
    // Two humans add a test at the same place.
    s.git(&["checkout", "-q", "-b", "side"]);
    append_in(
        &s.work,
        "tests/test_calc.py",
        "\n\ndef test_side():\n    assert total([2]) == 2\n",
    );
    s.commit("Side test");
    s.push(&["origin", "side"]).assert_accepted();
    s.git(&["checkout", "-q", "main"]);
    append_in(
        &s.work,
        "tests/test_calc.py",
        "\n\ndef test_main():\n    assert total([3]) == 3\n",
    );
    s.commit("Main test");
    s.push(&["origin", "main"]).assert_accepted();
    let main = s.git(&["rev-parse", "HEAD"]);

    // The agent resolves the conflict and drops an assertion both sides had: rejected.
    assert!(!merge_no_commit(&s, "side"), "the two additions conflict");
    let both = format!(
        "{CALC}\n\ndef test_main():\n    assert total([3]) == 3\n\n\ndef test_side():\n    assert total([2]) == 2\n"
    );
    s.write(
        "tests/test_calc.py",
        &both.replace("    assert total([]) == 0\n", ""),
    );
    let merge = s.agent_commit("Merge side");
    s.push(&["origin", "main"]).assert_rejected_with(&format!(
        "remote: error: refs/heads/main: [weakened_test] {} \"Merge side\" tests/test_calc.py:",
        s.short(&merge)
    ));
    assert_eq!(s.server_ref("refs/heads/main"), Some(main.clone()));

    // The resolution that keeps both sides' tests: accepted.
    s.git(&["reset", "-q", "--hard", &main]);
    assert!(!merge_no_commit(&s, "side"));
    s.write("tests/test_calc.py", &both);
    let honest = s.agent_commit("Merge side");
    s.push(&["origin", "main"]).assert_accepted();
    assert_eq!(s.server_ref("refs/heads/main"), Some(honest));
}

/// Leases `unicode` and `ascii`, and three lines that keep an edit at either end apart.
fn lease(name: &str) -> String {
    format!(
        "\n[[leases]]\nnodeid = \"tests/test_io.py::test_{name}\"\nreason = \"flaky on CI\"\nowner = \"qa\"\nexpires = \"2099-01-31\"\n"
    )
}
const SPACER: &str =
    "\n# Leases are reviewed by the platform team.\n# Each names its owner.\n# Each expires.\n";

#[test]
fn agent_merge_taking_a_side_branch_whole_freeze_file_back_is_rejected() {
    let s = Server::new("");
    let unicode = lease("unicode");
    s.write("qa/freeze.toml", &format!("{FREEZE}{unicode}{SPACER}"));
    s.commit("Freeze the unicode test\n\nFreeze-Lease: human\n");
    s.push(&["origin", "main"]).assert_accepted();
    // A human's branch adds another lease at the end ...
    s.git(&["checkout", "-q", "-b", "side"]);
    let ascii = lease("ascii");
    s.write(
        "qa/freeze.toml",
        &format!("{FREEZE}{unicode}{SPACER}{ascii}"),
    );
    s.commit("Freeze the ascii test\n\nFreeze-Lease: human\n");
    s.push(&["origin", "side"]).assert_accepted();
    // ... while main removes the first.
    s.git(&["checkout", "-q", "main"]);
    s.write("qa/freeze.toml", &format!("{FREEZE}{SPACER}"));
    let t = s.commit("Unfreeze the unicode test\n\nFreeze-Lease: human\n");
    s.push(&["origin", "main"]).assert_accepted();

    // git merges the two cleanly: the ascii lease, not the unicode one. The agent's merge
    // takes the side branch's whole file, the removed lease with it.
    assert!(merge_no_commit(&s, "side"));
    let git_merged = std::fs::read_to_string(s.work.join("qa/freeze.toml")).unwrap();
    assert_eq!(git_merged, format!("{FREEZE}{SPACER}{ascii}"));
    s.git(&["checkout", "side", "--", "qa/freeze.toml"]);
    let merge = s.agent_commit("Merge side");
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with(&format!(
        "remote: error: refs/heads/main: [agent_edit_protected] {} \"Merge side\" qa/freeze.toml:",
        s.short(&merge)
    ));
    pushed.assert_rejected_with(&format!(
        "remote: error: refs/heads/main: [agent_added_lease] {}",
        s.short(&merge)
    ));
    assert!(pushed.stderr.contains("test_unicode"), "{}", pushed.stderr);
    assert_eq!(s.server_ref("refs/heads/main"), Some(t.clone()));

    // The agent's merge that keeps git's result brings the human's changes: accepted.
    s.git(&["reset", "-q", "--hard", &t]);
    assert!(merge_no_commit(&s, "side"));
    let honest = s.agent_commit("Merge side");
    s.push(&["origin", "main"]).assert_accepted();
    assert_eq!(s.server_ref("refs/heads/main"), Some(honest));
}

#[test]
fn agent_octopus_merge_that_guts_a_test_one_branch_predates_is_rejected() {
    let s = Server::new("");
    for branch in ["one", "two"] {
        s.git(&["checkout", "-q", "-b", branch, &s.base]);
        s.write(&format!("docs/{branch}.md"), "Work.\n");
        s.commit(&format!("Work on {branch}"));
        s.push(&["origin", branch]).assert_accepted();
    }
    s.git(&["checkout", "-q", "main"]);
    s.write("tests/test_calc.py", CALC);
    s.commit("Add the calc tests");
    s.push(&["origin", "main"]).assert_accepted();
    let main = s.git(&["rev-parse", "HEAD"]);

    assert!(
        s.git_cmd(&s.work)
            .args(["merge", "-q", "--no-commit", "one", "two"])
            .status()
            .unwrap()
            .success()
    );
    s.write(
        "tests/test_calc.py",
        &CALC.replace("assert ratio(1, 2) == 0.5", "assert ratio(1, 2)"),
    );
    let merge = s.agent_commit("Merge one and two");
    assert_eq!(
        s.git(&["rev-list", "--parents", "-n1", "HEAD"])
            .split(' ')
            .count(),
        4
    );
    s.push(&["origin", "main"]).assert_rejected_with(&format!(
        "remote: error: refs/heads/main: [weakened_test] {} \"Merge one and two\" tests/test_calc.py:",
        s.short(&merge)
    ));
    assert_eq!(s.server_ref("refs/heads/main"), Some(main));
}

#[test]
fn agent_merge_that_conflicts_on_purpose_and_takes_its_side_whole_is_rejected() {
    let s = Server::new("");
    s.write("tests/test_calc.py", CALC);
    s.commit("Add the calc tests");
    s.push(&["origin", "main"]).assert_accepted();
    let v1 = s.git(&["rev-parse", "HEAD"]);
    // A human strengthens test_total on main ...
    let stronger = CALC.replace(
        "    assert total([]) == 0\n",
        "    assert total([]) == 0\n    assert total([5]) == 5\n",
    );
    s.write("tests/test_calc.py", &stronger);
    let main = s.commit("Strengthen test_total");
    s.push(&["origin", "main"]).assert_accepted();
    // ... while the agent's branch touches the same line (a comment: no weakening) ...
    s.git(&["checkout", "-q", "-b", "side", &v1]);
    s.write(
        "tests/test_calc.py",
        &CALC.replace("== 0\n", "== 0  # empty\n"),
    );
    s.agent_commit("Comment the empty case");
    s.push(&["origin", "side"]).assert_accepted();
    // ... so that the merge conflicts, and the agent takes its side's whole file: the
    // human's new assertion is gone. Against its own side the merge changed nothing.
    s.git(&["checkout", "-q", "main"]);
    assert!(!merge_no_commit(&s, "side"), "the two edits conflict");
    s.git(&["checkout", "side", "--", "tests/test_calc.py"]);
    let merge = s.agent_commit("Merge side");
    s.push(&["origin", "main"]).assert_rejected_with(&format!(
        "remote: error: refs/heads/main: [weakened_test] {} \"Merge side\" tests/test_calc.py:",
        s.short(&merge)
    ));
    assert_eq!(s.server_ref("refs/heads/main"), Some(main.clone()));

    // An old branch from before the test existed, where the agent adds a gutted copy: the
    // two additions conflict, and the merge takes the gutted one.
    s.git(&["reset", "-q", "--hard", &main]);
    s.git(&["checkout", "-q", "-b", "old", &s.base]);
    s.write(
        "tests/test_calc.py",
        &CALC.replace("    assert total([]) == 0\n", ""),
    );
    s.agent_commit("Add a calc test");
    s.git(&["checkout", "-q", "main"]);
    assert!(!merge_no_commit(&s, "old"), "the two additions conflict");
    s.git(&["checkout", "old", "--", "tests/test_calc.py"]);
    let merge = s.agent_commit("Merge old");
    s.push(&["origin", "main"]).assert_rejected_with(&format!(
        "remote: error: refs/heads/main: [weakened_test] {} \"Merge old\" tests/test_calc.py:",
        s.short(&merge)
    ));
}

#[test]
fn merge_attributes_in_the_agents_checkout_do_not_change_guard_checks_merge() {
    // `merge=binary` (in a `.gitattributes` no rule protects) makes libgit2's merge of the
    // test file conflict when it reads the checkout's attributes, and a conflicted file is
    // judged against each side. guard merges without the checkout's attributes, as the
    // server's bare repository does: `guard check` in the clone agrees with the hook.
    let s = Server::new("");
    s.write("tests/unit/test_calc.py", CALC);
    s.commit("Add the calc tests");
    s.push(&["origin", "main"]).assert_accepted();
    let v1 = s.git(&["rev-parse", "HEAD"]);
    s.write("tests/unit/.gitattributes", "test_calc.py merge=binary\n");
    s.agent_commit("Treat the calc tests as binary");
    s.push(&["origin", "main"]).assert_accepted();
    s.write(
        "tests/unit/test_calc.py",
        &CALC.replace(
            "    assert total([]) == 0\n",
            "    assert total([]) == 0\n    assert total([5]) == 5\n",
        ),
    );
    s.commit("Strengthen test_total");
    s.push(&["origin", "main"]).assert_accepted();
    s.git(&["checkout", "-q", "-b", "side", &v1]);
    append_in(
        &s.work,
        "tests/unit/test_calc.py",
        "\n\ndef test_more():\n    assert total([1]) == 1\n",
    );
    s.agent_commit("Another test");
    s.git(&["checkout", "-q", "main"]);
    let _ = merge_no_commit(&s, "side");
    s.git(&["checkout", "side", "--", "tests/unit/test_calc.py"]);
    let merge = s.agent_commit("Merge side");
    let out = crate::support::hermetic(
        std::process::Command::new(crate::support::server::GUARD),
        s.home(),
    )
    .args(["check", "origin/main..HEAD"])
    .current_dir(&s.work)
    .output()
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(&format!("error[weakened_test]: {}", s.short(&merge))),
        "{stdout}"
    );
    s.push(&["origin", "main"]).assert_rejected_with(&format!(
        "remote: error: refs/heads/main: [weakened_test] {} \"Merge side\" tests/unit/test_calc.py:",
        s.short(&merge)
    ));
}
