//! `guard init`: write a starter ledger, freeze file and lockfile (hashing the fixtures that
//! are already there), the ledger fitted to the project's own layout (`project::Layout`).
//! Refuses to overwrite anything: if any of the three exists, nothing is written. `--check`
//! prints what it would write and writes nothing.

mod ledger;

use std::io::Write as _;

use anyhow::{Context as _, bail};

use crate::error::InputErrors;
use crate::evidence::fixtures::FixtureState;
use crate::evidence::fixtures::list_files;
use crate::exit;
use crate::policy::agents::HumanTrailer;
use crate::policy::freeze::today_utc;
use crate::policy::ledger::{DEFAULT_LEDGER_PATH, Policy, PolicySource};
use crate::policy::lockfile::{LockFormat, Lockfile};
use crate::project::Layout;
use crate::runner::TestRunner;
use crate::source::{Source, WorkTree};
use crate::wording::count;
use crate::workspace::Workspace;

/// The starter freeze file `guard init` writes, with `{example_expires}` for the expiry of
/// its commented-out example lease.
pub const STARTER_FREEZE: &str = include_str!("../../../policy/freeze.toml");

/// Files guard's workflow writes into the work tree, which do not belong in commits.
const WORK_FILES: &[&str] = &[
    "junit.xml",
    "coverage.json",
    "collected.txt",
    "deselect.args",
];

/// The starter freeze file, its example lease expiring 30 days after `today`: a date that is
/// neither past nor far off, as a real lease's should be.
pub fn starter_freeze(today: jiff::civil::Date) -> String {
    let expires = today
        .checked_add(jiff::Span::new().days(30))
        .unwrap_or(today);
    STARTER_FREEZE.replace("{example_expires}", &expires.to_string())
}

pub fn run(ws: &Workspace, check: bool) -> anyhow::Result<i32> {
    let files = if ws.in_git {
        crate::git::tracked_files(&ws.root)?
    } else {
        crate::project::walk_files(&ws.root)
            .with_context(|| format!("cannot list the files of {}", ws.root.display()))?
    };
    let layout = Layout::scan(&WorkTree { ws }, &files)?;
    let ledger_text = ledger::starter_ledger(&layout);
    // What is written must be what guard then reads: a ledger that does not parse is guard's
    // bug, said before anything is written.
    let policy = Policy::parse(
        std::path::Path::new(DEFAULT_LEDGER_PATH),
        &ledger_text,
        PolicySource::File(DEFAULT_LEDGER_PATH.into()),
    )
    .map_err(|e: InputErrors| anyhow::anyhow!("guard init wrote a ledger it cannot read: {e}"))?;
    if check {
        outln!("{}", describe(&layout));
        outln!("\nguard init would write {DEFAULT_LEDGER_PATH}:\n");
        out!("{ledger_text}");
        return Ok(exit::MERGE);
    }
    let targets = [
        DEFAULT_LEDGER_PATH,
        policy.freeze.file.as_str(),
        policy.fixtures.lockfile.as_str(),
    ];
    let existing: Vec<&str> = targets
        .iter()
        .copied()
        .filter(|rel| std::fs::symlink_metadata(ws.root.join(rel)).is_ok())
        .collect();
    if !existing.is_empty() {
        bail!(
            "refusing to overwrite {} in {}; nothing was written\n  help: edit the existing files, or move them away first",
            existing.join(", "),
            ws.root.display()
        );
    }

    let fixtures = list_files(ws, &policy.fixtures.paths)?;
    let states = WorkTree { ws }.hash_files(&policy.fixtures.lockfile, &fixtures)?;
    let lockfile = Lockfile {
        format: LockFormat::Json,
        entries: states
            .into_iter()
            .filter_map(|(p, s)| match s {
                FixtureState::Digest(d) => Some((p, d)),
                FixtureState::Missing | FixtureState::NotRegular(_) => None,
            })
            .collect(),
    };
    let contents: [(&str, Vec<u8>); 3] = [
        (DEFAULT_LEDGER_PATH, ledger_text.into_bytes()),
        (
            policy.freeze.file.as_str(),
            starter_freeze(today_utc()).into_bytes(),
        ),
        (policy.fixtures.lockfile.as_str(), lockfile.render()),
    ];
    for (rel, bytes) in &contents {
        let path = ws.root.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        // create_new: never clobber a file that appeared since the check above.
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .with_context(|| format!("cannot create {rel}"))?;
        file.write_all(bytes)
            .with_context(|| format!("cannot write {rel}"))?;
        outln!("wrote {rel}");
    }
    outln!("{}", describe(&layout));
    outln!(
        "{} hashed into {}. Check with `guard lint`, then commit as a human, with the\n\
         trailers that approve each protected file in the message's last paragraph:\n\
         \n    git add qa && git commit -m \"Add the merge ledger\" \\\n        -m \"{}\n{}\n{}\"",
        count(lockfile.entries.len(), "fixture"),
        policy.fixtures.lockfile,
        policy.trailers.ledger,
        policy.trailers.freeze,
        policy.trailers.fixtures,
    );
    outln!(
        "\nFrom then on the test harness (conftest.py, pytest.ini, tox.ini, noxfile.py, .coveragerc, the\n\
         pytest and coverage sections of pyproject.toml and setup.cfg, .config/nextest.toml,\n\
         .cargo/config.toml, .gitmodules; see [harness]) and the CI config ([protect]) are\n\
         protected too: a human changes the harness in a commit with the trailer `{}`.",
        policy.trailers.harness,
    );
    outln!(
        "{}",
        runner_hints(ws, layout.runner, &policy.trailers.harness)
    );
    Ok(exit::MERGE)
}

/// What `guard init` found, in the words of the ledger it writes.
fn describe(layout: &Layout) -> String {
    let mut out = String::from("Found:");
    let mut line = |what: &str, items: &[String]| {
        let shown = if items.is_empty() {
            "none".to_string()
        } else {
            items.join(", ")
        };
        out.push_str(&format!("\n  {what}: {shown}"));
    };
    let config = match &layout.pytest.file {
        Some(file) => format!("pytest settings in {file}"),
        None => "no pytest settings file".to_string(),
    };
    let packages: Vec<String> = layout
        .packages
        .iter()
        .map(|p| match p.dir.as_str() {
            "" => p.name.clone(),
            dir => format!("{} ({dir})", p.name),
        })
        .collect();
    line("test files ([tests] paths)", &layout.test_globs);
    line("runner configuration", &[config]);
    if !packages.is_empty() {
        line("Cargo packages", &packages);
    }
    line(
        "property tests ([properties] paths)",
        &layout.property_paths,
    );
    if !layout.property_candidates.is_empty() {
        line(
            "tests using hypothesis/proptest/quickcheck (offered in the ledger, commented)",
            &[count(layout.property_candidates.len(), "file")],
        );
    }
    line(
        "fixture directories",
        &layout
            .fixture_dirs
            .iter()
            .map(|d| format!("{d}/"))
            .collect::<Vec<_>>(),
    );
    if !layout.ci_globs.is_empty() {
        line("CI files added to [protect]", &layout.ci_globs);
    }
    out
}

/// How to run the tests into the evidence `score` reads, for the runner the repository
/// uses, and the `.gitignore` lines for the files that workflow leaves in the work tree
/// (offered, not written: the `.gitignore` is the user's).
fn runner_hints(ws: &Workspace, runner: TestRunner, harness_trailer: &HumanTrailer) -> String {
    let mut out = match runner {
        TestRunner::Nextest => {
            "\nTests: Cargo.toml and no pytest configuration, so cargo-nextest. Score a run with:"
        }
        TestRunner::Pytest => "\nTests: pytest. Score a run with:",
    }
    .to_string();
    out.push_str(&format!(
        "\n\n    {}\n    guard score --junit {}\n",
        runner.run_command(),
        runner.junit_path()
    ));
    if let Some((file, lines)) = runner.junit_config() {
        out.push_str(&format!(
            "\nwith this in {file} (a harness file: commit it with the trailer `{harness_trailer}`):\n\n{}\n",
            indent(lines)
        ));
    }
    out.push_str(&format!(
        "\nList the collected tests (for `--collected` and `guard deselect`) with `{}`.\n",
        runner.collect_command()
    ));
    // Lines already in the .gitignore are not offered again (compared as written).
    let ignored = std::fs::read_to_string(ws.root.join(".gitignore")).unwrap_or_default();
    let missing: Vec<&str> = WORK_FILES
        .iter()
        .copied()
        .filter(|f| {
            !ignored
                .lines()
                .any(|l| l.trim() == *f || l.trim() == format!("/{f}"))
        })
        .collect();
    if !missing.is_empty() {
        out.push_str(&format!(
            "\nThese runs leave files that do not belong in commits; add them to .gitignore:\n\n{}\n",
            indent(&missing.join("\n"))
        ));
    }
    out.trim_end().to_string()
}

fn indent(lines: &str) -> String {
    lines
        .lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}
