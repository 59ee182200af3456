//! `[[bots]]`: a named bot may make the one kind of change it exists for on protected paths,
//! pushed through the installed pre-receive hook; anything else it changes there is an
//! agent's edit, and no allowance reaches the ledger's own files.

use crate::support::server::{AGENT_EMAIL, AGENT_NAME, Pushed, Server, ledger};

const DEPENDABOT_NAME: &str = "dependabot[bot]";
const DEPENDABOT_EMAIL: &str = "49699333+dependabot[bot]@users.noreply.github.com";

/// The test agents, and every GitHub `[bot]` account, as the starter ledger has them.
const AGENTS: &str = "emails = ['cursoragent@cursor.com', '*\\[bot\\]@users.noreply.github.com']";

const PROTECT: &str = "[protect]\npaths = [\".github/workflows/**\"]\n";

const DEPENDABOT: &str = "[[bots]]\nwho = \"49699333+dependabot[bot]@users.noreply.github.com\"\npaths = [\".github/workflows/**\"]\nchange = \"action-version\"\n";

const WORKFLOW: &str = "name: tests\non: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@b4ffde65f46336ab88eb53be808477a3936bae11 # v4.1.1\n      - uses: actions/setup-python@v5\n        with:\n          python-version: '3.12'\n      - run: python -m pytest -q\n";

/// A server whose ledger protects the workflows, with `bots` tables, and a human's workflow.
fn server(bots: &str) -> Server {
    let s = Server::with_ledger(&ledger(AGENTS, &format!("{PROTECT}\n{bots}")), |_| {});
    s.write(".github/workflows/tests.yml", WORKFLOW);
    s.commit("Add the tests workflow\n\nLedger-Change: human\n");
    s.push(&["origin", "main"]).assert_accepted();
    s
}

/// A commit of everything in the working clone as `(name, e-mail)`, committed by GitHub as
/// a Dependabot pull request's commit is.
fn commit_as(s: &Server, who: (&str, &str), message: &str) -> String {
    s.commit_with(
        message,
        &[
            ("GIT_AUTHOR_NAME", who.0),
            ("GIT_AUTHOR_EMAIL", who.1),
            ("GIT_COMMITTER_NAME", "GitHub"),
            ("GIT_COMMITTER_EMAIL", "noreply@github.com"),
        ],
    )
}

/// Dependabot's message for a bump of actions/checkout.
const BUMP_MESSAGE: &str = "Bump actions/checkout from 4.1.1 to 4.2.2\n\nBumps [actions/checkout](https://github.com/actions/checkout) from 4.1.1 to 4.2.2.\n- [Release notes](https://github.com/actions/checkout/releases)\n- [Commits](https://github.com/actions/checkout/compare/b4ffde65f46336ab88eb53be808477a3936bae11...11bd71901bbe5b1630ceea73d27597364c9af683)\n\n---\nupdated-dependencies:\n- dependency-name: actions/checkout\n  dependency-type: direct:production\n  update-type: version-update:semver-minor\n...\n\nSigned-off-by: dependabot[bot] <support@github.com>\n";

fn bumped() -> String {
    WORKFLOW.replace(
        "checkout@b4ffde65f46336ab88eb53be808477a3936bae11 # v4.1.1",
        "checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2",
    )
}

fn rejected_for(pushed: &Pushed, commit: &str, s: &Server) {
    pushed.assert_rejected_with(&format!(
        "remote: error: refs/heads/main: [agent_edit_protected] {} ",
        s.short(commit)
    ));
}

#[test]
fn dependabots_action_bump_is_accepted_under_its_allowance_and_nothing_more() {
    let s = server(DEPENDABOT);
    let tip = s.git(&["rev-parse", "HEAD"]);
    // The bump alone: accepted.
    s.write(".github/workflows/tests.yml", &bumped());
    let bump = commit_as(&s, (DEPENDABOT_NAME, DEPENDABOT_EMAIL), BUMP_MESSAGE);
    s.push(&["origin", "main"]).assert_accepted();
    assert_eq!(s.server_ref("refs/heads/main"), Some(bump.clone()));

    // The bump with a `run:` line changed too: rejected.
    s.write(
        ".github/workflows/tests.yml",
        &bumped()
            .replace("@v5", "@v5.3.0")
            .replace("pytest -q", "pytest -q --deselect tests/test_calc.py"),
    );
    let also = commit_as(&s, (DEPENDABOT_NAME, DEPENDABOT_EMAIL), BUMP_MESSAGE);
    rejected_for(&s.push(&["origin", "main"]), &also, &s);
    s.git(&["reset", "-q", "--hard", &bump]);

    // Another identity making the same kind of change, an agent or another bot: rejected.
    s.write(
        ".github/workflows/tests.yml",
        &bumped().replace("setup-python@v5", "setup-python@v5.3.0"),
    );
    for who in [
        (AGENT_NAME, AGENT_EMAIL),
        (
            "renovate[bot]",
            "29139614+renovate[bot]@users.noreply.github.com",
        ),
    ] {
        let commit = commit_as(&s, who, "Bump setup-python\n");
        rejected_for(&s.push(&["origin", "main"]), &commit, &s);
        s.git(&["reset", "-q", "--soft", "HEAD^"]);
    }
    s.git(&["reset", "-q", "--hard", &bump]);
    let _ = tip;
}

#[test]
fn without_an_allowance_the_same_bump_is_an_agent_edit_and_no_allowance_reaches_the_freeze_file() {
    let s = server("");
    s.write(".github/workflows/tests.yml", &bumped());
    let bump = commit_as(&s, (DEPENDABOT_NAME, DEPENDABOT_EMAIL), BUMP_MESSAGE);
    rejected_for(&s.push(&["origin", "main"]), &bump, &s);

    // Nor an attribute file on the way to the workflows, which YAML would read as anything.
    let s = server(DEPENDABOT);
    s.write(
        ".github/workflows/.gitattributes",
        "tests.yml text eol=lf\n",
    );
    s.commit("Attributes\n\nLedger-Change: human\n");
    s.push(&["origin", "main"]).assert_accepted();
    s.write(
        ".github/workflows/.gitattributes",
        "tests.yml text\n  eol=lf\n",
    );
    let commit = commit_as(&s, (DEPENDABOT_NAME, DEPENDABOT_EMAIL), "Bump\n");
    rejected_for(&s.push(&["origin", "main"]), &commit, &s);

    // An allowance whose paths take in the freeze file does not cover it.
    let wide = "[[bots]]\nwho = \"49699333+dependabot[bot]@users.noreply.github.com\"\npaths = [\"**\"]\nchange = \"pre-commit-rev\"\n";
    let s = server(wide);
    s.write("qa/freeze.toml", "version = 1\nmax_active_leases = 9\n");
    let commit = commit_as(&s, (DEPENDABOT_NAME, DEPENDABOT_EMAIL), "Bump\n");
    rejected_for(&s.push(&["origin", "main"]), &commit, &s);
}

#[test]
fn a_ledger_with_an_unknown_kind_or_a_glob_for_a_bot_is_refused_where_it_stands() {
    let s = server("");
    let bad = "[[bots]]\nwho = \"*dependabot*@users.noreply.github.com\"\npaths = [\".github/workflows/**\"]\nchange = \"action-version\"\n\n[[bots]]\nwho = \"49699333+dependabot[bot]@users.noreply.github.com\"\npaths = [\".github/workflows/**\"]\nchange = \"anything\"\n";
    s.write(
        "qa/merge_ledger.toml",
        &ledger(AGENTS, &format!("{PROTECT}\n{bad}")),
    );
    let commit = s.commit("Let the bots in\n\nLedger-Change: human\n");
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with("remote: error: refs/heads/main: [ledger_invalid]");
    // Line and column of each value (counted by hand in `ledger`'s text).
    for expected in [
        "qa/merge_ledger.toml:20:7: `bots.who` = \"*dependabot*@users.noreply.github.com\": name the bot's own e-mail exactly",
        "qa/merge_ledger.toml:27:10: `bots.change` = \"anything\": not a kind of change guard judges; one of action-version, pre-commit-rev, lockfile-pins",
    ] {
        assert!(
            pushed.stderr.contains(expected),
            "{expected}: {}",
            pushed.stderr
        );
    }
    let _ = commit;
}

#[test]
fn in_strict_mode_an_unsigned_bot_commit_gets_no_allowance() {
    let s = server(DEPENDABOT);
    // Strict mode: every commit is an agent's unless a signature by an allowed signer
    // proves a human; a bot's allowance too needs the signature to prove who made it.
    s.write(
        "qa/merge_ledger.toml",
        &ledger(
            &format!("{AGENTS}\ndefault = \"agent\""),
            &format!("{PROTECT}\n{DEPENDABOT}"),
        ),
    );
    s.commit("Strict mode\n\nLedger-Change: human\n");
    s.push(&["origin", "main"]).assert_accepted();
    s.write(".github/workflows/tests.yml", &bumped());
    let bump = commit_as(&s, (DEPENDABOT_NAME, DEPENDABOT_EMAIL), BUMP_MESSAGE);
    rejected_for(&s.push(&["origin", "main"]), &bump, &s);
}
