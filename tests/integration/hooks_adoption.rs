//! Adopting guard on a repository with history: the history from before the ledger's first
//! commit is counted in one warning, not judged commit by commit (it has no trailers, and
//! judged one by one it gave an error per few commits and ran past the hook's timeout); the
//! ledger's commit and everything after it are judged as always.

use std::path::Path;

use crate::support::Project;
use crate::support::server::{
    BOOTSTRAP_MESSAGE, FREEZE, LOCKFILE, Pushed, bare_repo, file_url, git_command, git_ok, install,
    ledger,
};

const HUMAN: (&str, &str) = ("Dev Human", "dev@example.com");
const AGENT: (&str, &str) = ("Cursor Agent", "cursoragent@cursor.com");

/// A project's history from before guard: `n` commits by an agent that change what the
/// ledger will protect (the CI workflow, a conftest.py), none with a trailer.
fn history_before_guard(n: usize) -> Project {
    let p = Project::git();
    for i in 0..n {
        p.write(".github/workflows/ci.yml", format!("# step {i}\n"));
        p.write("tests/conftest.py", format!("# fixture {i}\n"));
        p.commit_as(AGENT, format!("Step {i}\n"));
    }
    p
}

/// Adds the ledger in a human's commit with every trailer, as `guard init` says.
fn adopt(p: &Project) -> String {
    p.write(
        "qa/merge_ledger.toml",
        ledger("emails = ['cursoragent@cursor.com']", ""),
    );
    p.write("qa/freeze.toml", FREEZE);
    p.write("qa/fixtures.lock.json", LOCKFILE);
    p.commit_as(HUMAN, BOOTSTRAP_MESSAGE)
}

/// An empty bare repository guarded by `install.sh --server`.
fn guarded_server() -> (Project, std::path::PathBuf) {
    let (tmp, bare) = bare_repo();
    install(&["--server", bare.to_str().unwrap()]);
    git_ok(tmp.root(), &bare, &["config", "guard.timeout", "300"]);
    (tmp, bare)
}

fn push(p: &Project, bare: &Path) -> Pushed {
    Pushed::from(
        git_command(p.root(), p.root())
            .args(["push", &file_url(bare), "main"])
            .output()
            .unwrap(),
    )
}

#[test]
fn pushing_a_projects_history_into_a_new_guarded_repository_judges_it_from_the_ledger_on() {
    let p = history_before_guard(40);
    let adoption = adopt(&p);
    let (_tmp, bare) = guarded_server();
    let pushed = push(&p, &bare);
    pushed.assert_accepted();
    assert!(
        pushed.stderr.contains(&format!(
            "warning: refs/heads/main: [before_adoption] 40 commits before {}, the commit that adds qa/merge_ledger.toml (where the gate starts), were not judged",
            p.short(&adoption)
        )),
        "{}",
        pushed.stderr
    );

    // After adoption the gate holds: an agent's edit of the freeze file is rejected.
    p.write("qa/freeze.toml", format!("{FREEZE}# parked: flaky on CI\n"));
    p.commit_as(AGENT, "Park a flaky test\n");
    let pushed = push(&p, &bare);
    assert!(!pushed.ok, "{}", pushed.stderr);
    assert!(
        pushed.stderr.contains("[agent_edit_protected]"),
        "{}",
        pushed.stderr
    );
}

#[test]
fn the_commit_that_adds_the_ledger_is_judged_and_a_merge_is_no_adoption_point() {
    // The ledger added by an agent: judged (by the embedded ledger), so rejected.
    let p = history_before_guard(3);
    p.write(
        "qa/merge_ledger.toml",
        ledger("emails = ['cursoragent@cursor.com']", ""),
    );
    p.commit_as(AGENT, BOOTSTRAP_MESSAGE);
    let (_tmp, bare) = guarded_server();
    let pushed = push(&p, &bare);
    assert!(!pushed.ok, "{}", pushed.stderr);
    assert!(
        pushed.stderr.contains("[forged_human_trailer]"),
        "{}",
        pushed.stderr
    );

    // An agent's branch that merges the adopted line in: the merge brings the ledger, no
    // commit of the first-parent line adds it, so every commit is judged, the agent's first.
    let q = Project::git();
    q.write("README.md", "a project\n");
    q.commit_as(HUMAN, "Start\n");
    q.git_cmd(&["checkout", "-q", "-b", "adopted"]);
    adopt(&q);
    q.git_cmd(&["checkout", "-q", "main"]);
    q.write(".github/workflows/ci.yml", "# no tests\n");
    q.commit_as(AGENT, "Speed up CI\n");
    q.git_as(HUMAN, &["merge", "-q", "--no-ff", "-m", "Merge", "adopted"]);
    let (_tmp, bare) = guarded_server();
    let pushed = push(&q, &bare);
    assert!(!pushed.ok, "{}", pushed.stderr);
    assert!(
        pushed.stderr.contains("[agent_edit_protected]"),
        "{}",
        pushed.stderr
    );
    assert!(
        !pushed.stderr.contains("before_adoption"),
        "{}",
        pushed.stderr
    );
}

#[test]
fn guard_check_of_history_across_the_adoption_warns_once() {
    let p = history_before_guard(12);
    let root = p.rev("HEAD~11");
    let adoption = adopt(&p);
    p.write("src/app.py", "x = 1\n");
    p.commit_as(HUMAN, "Work after adoption\n");
    let run = p.guard(&["check", &format!("{root}..HEAD"), "--format", "json"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let json = run.json();
    assert_eq!(json["findings"], serde_json::json!([]), "{json:#}");
    let warnings = json["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{json:#}");
    assert_eq!(warnings[0]["code"], "before_adoption");
    assert_eq!(
        warnings[0]["message"],
        format!(
            "11 commits before {}, the commit that adds qa/merge_ledger.toml (where the gate starts), were not judged",
            p.short(&adoption)
        )
    );
    // The range judged the ledger's commit and the one after it.
    let judged: Vec<&str> = json["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(judged.len(), 2, "{json:#}");
    assert!(judged.contains(&adoption.as_str()), "{json:#}");
}

#[test]
fn guard_check_of_history_wholly_before_the_adoption_warns_once() {
    let p = history_before_guard(12);
    let adoption = adopt(&p);
    // Old history, both ends before the ledger: the agent's edits of the workflow were one
    // finding per commit (nothing before adoption has trailers).
    let run = p.guard(&["check", "HEAD~12..HEAD~2", "--format", "json"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let json = run.json();
    assert_eq!(json["findings"], serde_json::json!([]), "{json:#}");
    assert_eq!(
        json["warnings"][0]["message"],
        format!(
            "10 commits before {}, the commit that adds qa/merge_ledger.toml (where the gate starts), were not judged",
            p.short(&adoption)
        )
    );

    // A branch made from old history that the default line does not hold is new work: judged.
    p.git_cmd(&["checkout", "-q", "-b", "late", "HEAD~3"]);
    p.write(".github/workflows/ci.yml", "# no tests\n");
    p.commit_as(AGENT, "Speed up CI\n");
    let run = p.guard(&["check", "HEAD~1..HEAD", "--format", "json"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.reasons(), ["agent_edit_protected"]);
}

#[test]
fn a_copy_of_the_ledgers_commit_on_old_history_launders_nothing() {
    // Adopted: the server's main holds the ledger. An agent branches from history before
    // adoption, edits the harness, and tops it with a human-looking copy of the ledger's
    // commit: the branch's base holds no ledger, but guard is adopted, so every commit the
    // push brings is judged (the copy made the agent's commit "before adoption").
    let p = history_before_guard(3);
    adopt(&p);
    let (_tmp, bare) = guarded_server();
    push(&p, &bare).assert_accepted();
    p.git_cmd(&["checkout", "-q", "-b", "maint", "main~2"]);
    let old = p.rev("HEAD");
    // The maintenance branch exists on the server, at its old tip (no new commits: accepted).
    let push_maint = || {
        Pushed::from(
            git_command(p.root(), p.root())
                .args(["push", &file_url(&bare), "maint"])
                .output()
                .unwrap(),
        )
    };
    push_maint().assert_accepted();
    p.write("tests/conftest.py", "# every test passes\n");
    p.commit_as(AGENT, "Speed up the fixtures\n");
    adopt(&p);
    let pushed = push_maint();
    assert!(!pushed.ok, "{}", pushed.stderr);
    assert!(
        pushed.stderr.contains("[agent_edit_protected]")
            && pushed.stderr.contains("tests/conftest.py"),
        "{}",
        pushed.stderr
    );
    assert!(
        !pushed.stderr.contains("before_adoption"),
        "{}",
        pushed.stderr
    );

    // The same range audited by hand: the default line (main) adopted guard in another
    // commit, so the copy is no adoption point.
    p.git_cmd(&["checkout", "-q", "main"]);
    let run = p.guard(&["check", &format!("{old}..maint"), "--format", "json"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.reasons().contains(&"agent_edit_protected".to_string()),
        "{}",
        run.stdout
    );

    // A ledger deleted and added again is not a first adoption either.
    p.git_cmd(&["checkout", "-q", "-b", "again", "main"]);
    p.git_cmd(&["rm", "-q", "-r", "qa"]);
    p.commit_as(
        HUMAN,
        "Drop the ledger\n\nLedger-Change: human\nFreeze-Lease: human\nFixture-Lock: human\n",
    );
    let dropped = p.rev("HEAD");
    p.write("tests/conftest.py", "# every test passes, again\n");
    p.commit_as(AGENT, "Speed up the fixtures\n");
    adopt(&p);
    let run = p.guard(&["check", &format!("{dropped}..again"), "--format", "json"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.reasons().contains(&"agent_edit_protected".to_string()),
        "{}",
        run.stdout
    );
}
