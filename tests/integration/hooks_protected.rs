//! Protected content a push brings: fixtures hashed from quarantine and after
//! break-glass, and the test harness (conftest, pytest options, attributes).

use crate::support::server::{Server, write_in};
use crate::support::{fixture_corpus, sha256sum, sha256sum_lockfile};

// Fixtures: hashed again after break-glass, and from quarantine.

#[test]
fn fixtures_are_hashed_again_after_a_break_glass_push() {
    // The hook trusts the old tip's fixture digests because the old tip passed the gate; a tip
    // that came in by break-glass did not.
    let s = Server::new("");
    s.lock_fixture("tests/fixtures/golden.csv", "a,b\n1,2\n");
    s.commit("Add a golden file\n\nFixture-Lock: human\n");
    s.push(&["origin", "main"]).assert_accepted();

    s.config("receive.advertisePushOptions", "true");
    s.config("guard.bypass", "alice");
    s.config("guard.auditLog", s.tmp.path("audit.log").to_str().unwrap());
    write_in(&s.work, "tests/fixtures/golden.csv", "a,b\n1,3\n");
    s.agent_commit("Regenerate the golden file\n");
    s.push_from(
        &s.work,
        &["-o", "guard.bypass=hotfix", "origin", "main"],
        &[("REMOTE_USER", "alice")],
    )
    .assert_accepted();

    // The next ordinary push brings nothing protected, yet the drift is found again.
    s.human_change("NOTES.md", "Notes");
    s.push(&["origin", "main"])
        .assert_rejected_with("remote: error: refs/heads/main: [fixture_digest]");

    // An audit log that exists but cannot be read cannot vouch that the old tip passed the
    // gate: the fixtures are hashed again all the same.
    let log = s.tmp.path("audit.log");
    std::fs::rename(&log, s.tmp.path("audit.log.kept")).unwrap();
    std::fs::create_dir(&log).unwrap();
    assert!(std::fs::read_to_string(&log).is_err());
    s.push(&["origin", "main"])
        .assert_rejected_with("remote: error: refs/heads/main: [fixture_digest]");
}

#[test]
fn a_long_push_is_judged_in_full_on_two_threads_from_quarantine() {
    // 300 commits: the hook compares a push of 256 commits or more on two threads, each
    // reading through pack readers of its own over the object directories git names for the
    // hook (the push's quarantine, the repository's objects). The agent's edits at both ends
    // of the push are found, and nothing lands.
    let s = Server::new("");
    let first = s.agent_edits_freeze("Park the flaky parser test\n");
    for k in 0..298 {
        s.human_change(&format!("notes/n{}.md", k % 7), &format!("Note {k}\n"));
    }
    let last = s.agent_edits_freeze("Park another test\n");
    assert_eq!(
        s.git(&["rev-list", "--count", &format!("{}..main", s.base)]),
        "300"
    );
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with("remote: error: refs/heads/main: [agent_edit_protected]");
    for id in [&first, &last] {
        let short = s.short(id);
        assert!(
            pushed
                .lines()
                .iter()
                .any(|line| line.contains("[agent_edit_protected]") && line.contains(&short)),
            "{short}: {}",
            pushed.stderr
        );
    }
    assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));
}

#[test]
fn a_push_of_many_fixtures_is_hashed_from_quarantine_on_every_core() {
    // 200 fixtures of about 8 KiB (1.6 MB: hashed on every core, each thread through its own
    // repository handle, which must see the push's quarantined objects), in one push with
    // their lockfile; one was regenerated after the lockfile was written.
    let s = Server::new("");
    let corpus = fixture_corpus("tests/fixtures/many", 200, 8192);
    for (path, bytes) in &corpus {
        let file = s.work.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, bytes).unwrap();
    }
    let rels: Vec<&str> = corpus.iter().map(|(path, _)| path.as_str()).collect();
    write_in(
        &s.work,
        "qa/fixtures.lock.json",
        &sha256sum_lockfile(&s.work, &rels),
    );
    let drifted = "tests/fixtures/many/f_063.bin";
    let new_bytes = vec![b'y'; 5000];
    std::fs::write(s.work.join(drifted), &new_bytes).unwrap();
    s.commit("Add the golden corpus\n\nFixture-Lock: human\n");
    // Over 100 objects arrive as a pack in the quarantine; with a higher unpack limit, git
    // unpacks them there as loose objects.
    for unpack_limit in ["100", "10000"] {
        s.config("receive.unpackLimit", unpack_limit);
        let pushed = s.push(&["origin", "main"]);
        pushed.assert_rejected_with(&format!(
            "remote: error: refs/heads/main: [fixture_digest] {drifted}"
        ));
        assert!(
            pushed.stderr.contains(&sha256sum(&new_bytes)),
            "{}",
            pushed.stderr
        );
        assert_eq!(
            pushed
                .lines()
                .iter()
                .filter(|l| l.contains("[fixture_digest]"))
                .count(),
            1,
            "{}",
            pushed.stderr
        );
        assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));
    }

    // The lockfile made again: the push lands.
    write_in(
        &s.work,
        "qa/fixtures.lock.json",
        &sha256sum_lockfile(&s.work, &rels),
    );
    let fixed = s.commit("Lock the regenerated fixture\n\nFixture-Lock: human\n");
    s.push(&["origin", "main"]).assert_accepted();
    assert_eq!(s.server_ref("refs/heads/main"), Some(fixed));
}

// 17. The test harness.

#[test]
fn agent_push_of_a_conftest_that_passes_every_test_is_rejected() {
    let s = Server::new("");
    write_in(
        &s.work,
        "tests/conftest.py",
        "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n    outcome = yield\n    outcome.get_result().outcome = \"passed\"\n",
    );
    s.agent_commit("Stabilise the test run\n");
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with("remote: error: refs/heads/main: [agent_edit_protected]");
    assert!(
        pushed.stderr.contains("tests/conftest.py")
            && pushed.stderr.contains("Test-Harness: human"),
        "names the path and the trailer: {}",
        pushed.stderr
    );
    assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));

    // A human who means it pushes the same change with the harness trailer.
    s.git(&["reset", "-q", "--soft", "HEAD~"]);
    s.commit("Stabilise the test run\n\nTest-Harness: human\n");
    s.push(&["origin", "main"]).assert_accepted();
}

#[test]
fn agent_push_of_pytest_addopts_in_pyproject_is_rejected_and_a_dependency_is_not() {
    let s = Server::new("");
    let pyproject = "[project]\nname = \"calc\"\ndependencies = []\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n";
    s.write("pyproject.toml", pyproject);
    s.commit("Add the project file\n\nTest-Harness: human\n");
    s.push(&["origin", "main"]).assert_accepted();

    s.write(
        "pyproject.toml",
        &pyproject.replace("dependencies = []", "dependencies = [\"attrs\"]"),
    );
    s.agent_commit("Depend on attrs\n");
    s.push(&["origin", "main"]).assert_accepted();

    s.write(
        "pyproject.toml",
        &pyproject
            .replace("dependencies = []", "dependencies = [\"attrs\"]")
            .replace(
                "\"-q\"",
                "\"-q --deselect=tests/properties/test_x.py::test_y\"",
            ),
    );
    s.agent_commit("Tidy the test options\n");
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with("remote: error: refs/heads/main: [agent_edit_protected]");
    assert!(
        pushed.stderr.contains("pyproject.toml"),
        "names the path: {}",
        pushed.stderr
    );
}

#[test]
fn agent_push_of_attributes_beside_the_ledger_is_rejected() {
    let s = Server::new("");
    write_in(&s.work, "qa/.gitattributes", "freeze.toml ident\n");
    s.agent_commit("Normalise attributes\n");
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with("remote: error: refs/heads/main: [agent_edit_protected]");
    assert!(
        pushed.stderr.contains("qa/.gitattributes"),
        "{}",
        pushed.stderr
    );
}

#[test]
fn agent_push_removing_a_protected_file_or_the_directory_above_one_is_rejected() {
    // The freeze file removed beside the ledger and lockfile, which stay (its directory lists
    // one entry fewer); then, pushed apart, the whole `tests/` directory with its fixtures.
    let s = Server::new("");
    write_in(&s.work, "tests/fixtures/golden.csv", "a,b\n");
    write_in(&s.work, "tests/unit/test_a.py", "def test_a(): pass\n");
    write_in(
        &s.work,
        "qa/fixtures.lock.json",
        &sha256sum_lockfile(&s.work, &["tests/fixtures/golden.csv"]),
    );
    s.commit("Add a golden file\n\nFixture-Lock: human\n");
    s.push(&["origin", "main"]).assert_accepted();

    s.git(&["rm", "-q", "qa/freeze.toml"]);
    s.agent_commit("Drop the freeze file\n");
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with("remote: error: refs/heads/main: [agent_edit_protected]");
    assert!(
        pushed.stderr.contains("qa/freeze.toml"),
        "{}",
        pushed.stderr
    );

    s.git(&["reset", "-q", "--hard", "origin/main"]);
    s.git(&["rm", "-q", "-r", "tests"]);
    s.agent_commit("Remove the old tests\n");
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with("remote: error: refs/heads/main: [agent_edit_protected]");
    assert!(
        pushed.stderr.contains("tests/fixtures/golden.csv"),
        "{}",
        pushed.stderr
    );
}

#[test]
fn agent_push_of_a_commit_with_an_odd_header_is_judged_all_the_same() {
    // Without a commit-graph (a bare repository has none until `git gc` writes one), the
    // hook lists a push by reading commit headers itself; a header laid out otherwise than
    // git writes it (here a second author line, naming a human) goes to libgit2's walk and
    // parse, which take the first author, as git does. git's own check refuses two author
    // lines, but it is off by default.
    let s = Server::new("");
    s.config("receive.fsckObjects", "false");
    assert!(!s.bare.join("objects/info/commit-graph").exists());
    let agent = s.agent_edits_freeze("Park a test\n");
    let text = s.git(&["cat-file", "commit", &agent]);
    let odd = text.replacen(
        "\ncommitter ",
        "\nauthor Alice Human <alice@example.com> 1700000000 +0000\ncommitter ",
        1,
    );
    assert_ne!(odd, text);
    let file = s.tmp.path("odd-commit");
    std::fs::write(&file, &odd).unwrap();
    let written = s.git(&[
        "hash-object",
        "-t",
        "commit",
        "-w",
        "--literally",
        file.to_str().unwrap(),
    ]);
    s.git(&["update-ref", "refs/heads/main", written.trim()]);
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with("remote: error: refs/heads/main: [agent_edit_protected]");
    assert!(
        pushed.stderr.contains("qa/freeze.toml"),
        "{}",
        pushed.stderr
    );
}

/// The agents of 2026 as their commits show them, against the starter ledger's `[agents]`
/// (README, "Agent identities"), each parking a test in the freeze file through the hook.
#[test]
fn todays_agents_are_known_by_the_starter_ledger_through_the_hook() {
    let starter = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/policy/merge_ledger.toml"
    ))
    .unwrap();
    let s = Server::with_ledger(&starter, |_| {});
    // (author name, author e-mail, trailers): OpenHands, Amp, OpenCode's bot and trailer.
    let agents = [
        ("openhands", "openhands@all-hands.dev", ""),
        (
            "Dev",
            "dev@example.com",
            "\n\nAmp-Thread-ID: https://ampcode.com/threads/T-019cb9fe-1234-4abc-9def-0123456789ab\nCo-authored-by: Amp <amp@ampcode.com>\n",
        ),
        (
            "opencode-agent[bot]",
            "219766164+opencode-agent[bot]@users.noreply.github.com",
            "",
        ),
        (
            "Dev",
            "dev@example.com",
            "\n\nCo-Authored-By: opencode <noreply@opencode.ai>\n",
        ),
    ];
    for (name, email, trailers) in agents {
        crate::support::server::append_in(&s.work, "qa/freeze.toml", "# parked\n");
        let commit = s.commit_with(
            &format!("Park a flaky test{trailers}"),
            &[
                ("GIT_AUTHOR_NAME", name),
                ("GIT_AUTHOR_EMAIL", email),
                ("GIT_COMMITTER_NAME", name),
                ("GIT_COMMITTER_EMAIL", email),
            ],
        );
        s.push(&["origin", "main"]).assert_rejected_with(&format!(
            "remote: error: refs/heads/main: [agent_edit_protected] {} ",
            s.short(&commit)
        ));
        s.git(&["reset", "-q", "--hard", "HEAD^"]);
    }
}
