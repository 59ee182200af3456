//! `action.yml` (the GitHub Action) and the CI examples in the README: the action parses,
//! declares the inputs the README documents, wires every input into its scripts through
//! `env:` only, and its scripts run as GitHub runs them (bash with the step's `env:`
//! evaluated), with `cargo` and `guard` replaced by stubs that record their arguments.
//! `@action-validator/cli` (npm; `.ci/run` installs it) checks action.yml and the README's
//! workflow against GitHub's schemas.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;

use crate::support::Project;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Action {
    name: String,
    description: String,
    author: Option<String>,
    branding: Option<BTreeMap<String, String>>,
    inputs: BTreeMap<String, Input>,
    runs: Runs,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Input {
    description: String,
    required: bool,
    default: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Runs {
    using: String,
    steps: Vec<Step>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Step {
    name: String,
    uses: Option<String>,
    with: Option<BTreeMap<String, String>>,
    shell: Option<String>,
    env: Option<BTreeMap<String, String>>,
    run: Option<String>,
}

fn repo_file(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn action() -> Action {
    let text = std::fs::read_to_string(repo_file("action.yml")).unwrap();
    serde_norway::from_str(&text).unwrap_or_else(|e| panic!("action.yml: {e}"))
}

fn step<'a>(action: &'a Action, name: &str) -> &'a Step {
    action
        .runs
        .steps
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no step {name:?}"))
}

#[test]
fn action_declares_its_inputs_and_uses_every_one() {
    let action = action();
    assert_eq!(action.name, "merge-guard");
    assert!(!action.description.is_empty());
    assert!(action.author.is_some());
    // The Marketplace shows the icon and colour.
    let branding = action.branding.as_ref().unwrap();
    assert!(branding.contains_key("icon") && branding.contains_key("color"));
    assert_eq!(action.runs.using, "composite");
    let names: Vec<&str> = action.inputs.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "args",
            "baseline-junit",
            "collected",
            "command",
            "coverage",
            "junit",
            "range",
            "retest-junit",
            "version"
        ]
    );
    for (name, input) in &action.inputs {
        assert!(!input.required, "{name} is optional");
        assert!(input.description.len() > 20, "{name} is described");
        let expected_default = if name == "command" { "check" } else { "" };
        assert_eq!(input.default, expected_default, "{name}");
    }

    // Every input reaches a script: bound to an env variable that the step's script reads,
    // or passed to an action with `with:` (the cache key).
    for name in action.inputs.keys() {
        let expr = format!("${{{{ inputs.{name} }}}}");
        let used = action.runs.steps.iter().any(|s| {
            let in_script = s.env.iter().flatten().any(|(var, value)| {
                value == &expr
                    && s.run
                        .as_deref()
                        .is_some_and(|r| r.contains(&format!("${var}")))
            });
            let in_with = s.with.iter().flatten().any(|(_, v)| v.contains(&expr));
            in_script || in_with
        });
        assert!(used, "input {name} is used by no step");
    }
    for s in &action.runs.steps {
        if let Some(run) = &s.run {
            // Expressions spliced into a script are a shell injection (a branch name, a
            // path): inputs go through env.
            assert!(
                !run.contains("${{"),
                "step {:?} splices an expression",
                s.name
            );
            assert_eq!(s.shell.as_deref(), Some("bash"), "step {:?}", s.name);
        }
    }

    // guard's build is cached: cargo's registry and git checkouts, and guard's own root,
    // which holds the target directory.
    let cache = step(&action, "Cache guard's build");
    assert!(
        cache
            .uses
            .as_deref()
            .unwrap()
            .starts_with("actions/cache@v")
    );
    let with = cache.with.as_ref().unwrap();
    let paths: Vec<&str> = with["path"].lines().collect();
    for path in [
        "~/.cargo/registry/cache",
        "~/.cargo/git/db",
        "~/.cargo/merge-guard",
    ] {
        assert!(paths.contains(&path), "{path} not cached: {paths:?}");
    }
    let install = step(&action, "Install guard").run.as_deref().unwrap();
    assert!(install.contains("export CARGO_TARGET_DIR=\"$root/target\""));
    assert!(with["key"].contains("${{ inputs.version }}"));
    // A job restores only what the same job saved: not what a job running the change's
    // tests left in the cached directories.
    assert!(
        with["key"].starts_with("merge-guard-${{ github.job }}-"),
        "{}",
        with["key"]
    );
    for key in with["restore-keys"].lines() {
        assert!(key.starts_with("merge-guard-${{ github.job }}-"), "{key}");
    }
}

/// A directory of stubs: `NAME` appends its arguments, one per line, then a `--` line, to
/// `calls/NAME`, and exits with the code in `exit/NAME` (0 when absent).
struct Stubs {
    dir: Project,
}

impl Stubs {
    fn new(names: &[&str]) -> Stubs {
        let dir = Project::new();
        for name in names {
            dir.write(
                &format!("bin/{name}"),
                format!(
                    "#!/bin/sh\npwd > '{root}/cwd/{name}'\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >> '{root}/calls/{name}'\necho -- >> '{root}/calls/{name}'\nexit $(cat '{root}/exit/{name}' 2>/dev/null || echo 0)\n",
                    root = dir.root().display()
                ),
            );
            let path = dir.path(&format!("bin/{name}"));
            let mut perm = std::fs::metadata(&path).unwrap().permissions();
            std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
            std::fs::set_permissions(&path, perm).unwrap();
        }
        std::fs::create_dir_all(dir.path("calls")).unwrap();
        std::fs::create_dir_all(dir.path("cwd")).unwrap();
        Stubs { dir }
    }

    /// The directory the last call of `name` ran in.
    fn cwd(&self, name: &str) -> PathBuf {
        let text = std::fs::read_to_string(self.dir.path(&format!("cwd/{name}"))).unwrap();
        PathBuf::from(text.trim_end())
    }

    /// Each recorded call of `name`, as its arguments.
    fn calls(&self, name: &str) -> Vec<Vec<String>> {
        let text =
            std::fs::read_to_string(self.dir.path(&format!("calls/{name}"))).unwrap_or_default();
        text.split_terminator("--\n")
            .map(|call| call.lines().map(str::to_string).collect())
            .collect()
    }
}

/// Runs the step `name` of action.yml as GitHub would: its `env:` evaluated (`inputs.X` from
/// `inputs`, else the input's default; anything else from `context`), then its script with
/// `bash -e` (GitHub's `shell: bash`), `stubs` first on PATH, in the workspace `home/work`
/// (`RUNNER_TEMP` is `home`). The exit code and stdout.
fn run_step(
    name: &str,
    inputs: &[(&str, &str)],
    context: &[(&str, &str)],
    stubs: &Stubs,
    home: &Path,
) -> (i32, String) {
    let action = action();
    let step = step(&action, name);
    let mut cmd = Command::new("bash");
    let workspace = home.join("work");
    std::fs::create_dir_all(&workspace).unwrap();
    cmd.args(["--noprofile", "--norc", "-eo", "pipefail", "-c"])
        .arg(step.run.as_deref().unwrap())
        .current_dir(&workspace)
        .env("GITHUB_WORKSPACE", &workspace)
        .env("HOME", home)
        .env("RUNNER_TEMP", home)
        .env("GITHUB_PATH", home.join("github_path"))
        .env(
            "PATH",
            format!(
                "{}:{}",
                stubs.dir.path("bin").display(),
                std::env::var("PATH").unwrap()
            ),
        );
    for (var, expr) in step.env.iter().flatten() {
        let value = match expr
            .strip_prefix("${{ inputs.")
            .and_then(|e| e.strip_suffix(" }}"))
        {
            Some(input) => inputs
                .iter()
                .find(|(k, _)| *k == input)
                .map(|(_, v)| v.to_string())
                .unwrap_or_else(|| action.inputs[input].default.clone()),
            // GitHub evaluates an expression it has no value for to "".
            None => context
                .iter()
                .find(|(k, _)| *k == expr)
                .map(|(_, v)| v.to_string())
                .unwrap_or_default(),
        };
        cmd.env(var, value);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

#[test]
fn run_step_passes_every_input_to_guard_with_the_github_format() {
    let home = Project::new();
    let stubs = Stubs::new(&["guard"]);
    let run = |inputs: &[(&str, &str)], context: &[(&str, &str)]| {
        run_step("Run guard", inputs, context, &stubs, home.root())
    };

    let (code, _) = run(
        &[
            ("range", "v1.0..HEAD"),
            ("junit", "junit.xml\nreports/unit tests.xml\n\n"),
            ("baseline-junit", "base-junit.xml\n"),
            ("retest-junit", "retest-junit.xml\nmore retest.xml"),
            ("coverage", "coverage.json"),
            ("collected", "collected.txt"),
            (
                "args",
                "--ledger 'ci/our ledger.toml' --min-proven 80 \"a b\"",
            ),
        ],
        &[],
    );
    assert_eq!(code, 0);
    assert_eq!(
        stubs.calls("guard").pop().unwrap(),
        strings(&[
            "check",
            "v1.0..HEAD",
            "--format",
            "github",
            "--junit",
            "junit.xml",
            "--junit",
            "reports/unit tests.xml",
            "--baseline-junit",
            "base-junit.xml",
            "--retest-junit",
            "retest-junit.xml",
            "--retest-junit",
            "more retest.xml",
            "--coverage",
            "coverage.json",
            "--collected",
            "collected.txt",
            "--ledger",
            "ci/our ledger.toml",
            "--min-proven",
            "80",
            "a b",
        ])
    );

    // In a pull request the default range is base..head; on a push, before..after, and
    // when the push made the branch (before is all zeros), its commits since the merge base
    // with the default branch (without a range guard asked for an upstream, which a
    // checkout's branch has none of, and failed with exit 2).
    let pr = [
        ("${{ github.event.pull_request.base.sha }}", "1111111"),
        ("${{ github.event.pull_request.head.sha }}", "2222222"),
    ];
    run(&[], &pr);
    assert_eq!(
        stubs.calls("guard").pop().unwrap(),
        strings(&["check", "1111111..2222222", "--format", "github"])
    );
    let push = |before: &str| {
        run(
            &[],
            &[
                ("${{ github.event.before }}", before),
                ("${{ github.event.after }}", "3333333"),
                ("${{ github.event.repository.default_branch }}", "trunk"),
            ],
        );
        stubs.calls("guard").pop().unwrap()
    };
    assert_eq!(push("4444444")[1], "4444444..3333333");
    assert_eq!(
        push(&"0".repeat(40)),
        strings(&["check", "origin/trunk..3333333", "--format", "github"])
    );

    // Other commands take no range, nor retest reports.
    run(
        &[
            ("command", "score"),
            ("range", "a..b"),
            ("args", "  "),
            ("retest-junit", "retest-junit.xml"),
        ],
        &pr,
    );
    assert_eq!(
        stubs.calls("guard").pop().unwrap(),
        strings(&["score", "--format", "github"])
    );

    // guard's exit code is the step's: a rejection fails the job.
    home.write("unused", "");
    std::fs::create_dir_all(stubs.dir.path("exit")).unwrap();
    stubs.dir.write("exit/guard", "1");
    let (code, _) = run(&[], &[]);
    assert_eq!(code, 1);

    // Arguments that cannot be split stop the step before guard runs.
    let before = stubs.calls("guard").len();
    let (code, stdout) = run(&[("args", "--ledger 'unclosed")], &[]);
    assert_eq!(code, 2);
    assert!(
        stdout.contains("::error title=merge-guard::cannot split the args input"),
        "{stdout}"
    );
    assert_eq!(stubs.calls("guard").len(), before);
}

#[test]
fn install_step_builds_the_actions_source_or_a_tag_into_a_cached_root() {
    let home = Project::new();
    let stubs = Stubs::new(&["cargo"]);
    // The stub cargo installs nothing: the step's `guard --version` finds this one.
    home.write(
        ".cargo/merge-guard/bin/guard",
        "#!/bin/sh\necho guard 0.1.0\n",
    );
    let guard = home.path(".cargo/merge-guard/bin/guard");
    let mut perm = std::fs::metadata(&guard).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&guard, perm).unwrap();
    let root = home.path(".cargo/merge-guard");
    let root = root.to_str().unwrap();
    let context = [
        ("${{ github.action_path }}", "/actions/merge-guard/v1"),
        (
            "${{ github.server_url }}/${{ github.action_repository }}",
            "https://github.example/org/merge-guard",
        ),
    ];

    let (code, stdout) = run_step("Install guard", &[], &context, &stubs, home.root());
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("guard 0.1.0"), "{stdout}");
    // Not in the checkout, whose `.cargo/config.toml` cargo would read (the change's own).
    assert_eq!(
        stubs.cwd("cargo").canonicalize().unwrap(),
        home.root().canonicalize().unwrap()
    );
    assert_eq!(
        stubs.calls("cargo").pop().unwrap(),
        strings(&[
            "install",
            "--locked",
            "--root",
            root,
            "--path",
            "/actions/merge-guard/v1",
        ])
    );
    assert_eq!(
        std::fs::read_to_string(home.path("github_path")).unwrap(),
        format!("{root}/bin\n")
    );

    let (code, _) = run_step(
        "Install guard",
        &[("version", "v0.2.0")],
        &context,
        &stubs,
        home.root(),
    );
    assert_eq!(code, 0);
    assert_eq!(
        stubs.calls("cargo").pop().unwrap(),
        strings(&[
            "install",
            "--locked",
            "--root",
            root,
            "--git",
            "https://github.example/org/merge-guard",
            "--tag",
            "v0.2.0",
            "merge-guard",
        ])
    );
}

/// The first of `steps` that uses an action whose reference starts with `name` (or, unless
/// `prefix`, contains it).
fn step_using<'a>(
    steps: &'a [serde_norway::Value],
    name: &str,
    prefix: bool,
) -> Option<&'a serde_norway::Value> {
    steps.iter().find(|s| {
        s["uses"].as_str().is_some_and(|u| {
            if prefix {
                u.starts_with(name)
            } else {
                u.contains(name)
            }
        })
    })
}

/// The fenced block of README.md whose first line is `first_line`.
fn readme_block(first_line: &str) -> String {
    let readme = std::fs::read_to_string(repo_file("README.md")).unwrap();
    let start = readme
        .find(&format!("```yaml\n{first_line}\n"))
        .unwrap_or_else(|| panic!("README has no yaml block starting {first_line:?}"));
    let body = &readme[start + "```yaml\n".len()..];
    body[..body.find("\n```").unwrap() + 1].to_string()
}

#[test]
fn readme_workflow_uses_the_action_with_its_inputs() {
    let workflow: serde_norway::Value =
        serde_norway::from_str(&readme_block("# .github/workflows/merge-guard.yml")).unwrap();
    let steps = workflow["jobs"]["guard"]["steps"].as_sequence().unwrap();
    let checkout = step_using(steps, "actions/checkout@", true).expect("the workflow checks out");
    // `check` reads the range's history.
    assert_eq!(checkout["with"]["fetch-depth"].as_u64(), Some(0));
    let guard = step_using(steps, "merge-guard@", false).expect("the workflow uses the action");
    let inputs = action().inputs;
    for key in guard["with"].as_mapping().unwrap().keys() {
        let key = key.as_str().unwrap();
        assert!(
            inputs.contains_key(key),
            "the README passes {key:?}, which action.yml lacks"
        );
    }
    // The change's code runs in the tests job only: the job that judges has no step that
    // runs a command (code under test could write its `.git`, ledger or `guard` otherwise),
    // and gets the reports as the tests job's artifact.
    assert_eq!(workflow["jobs"]["guard"]["needs"].as_str(), Some("tests"));
    for s in steps {
        assert!(s.get("run").is_none(), "the guard job runs {:?}", s["run"]);
    }
    let upload = step_using(
        workflow["jobs"]["tests"]["steps"].as_sequence().unwrap(),
        "actions/upload-artifact@",
        true,
    )
    .expect("the tests job uploads its reports");
    let uploaded = upload["with"]["path"].as_str().unwrap();
    let download = step_using(steps, "actions/download-artifact@", true)
        .expect("the guard job downloads the reports");
    assert_eq!(download["with"]["name"], upload["with"]["name"]);
    let dir = download["with"]["path"].as_str().unwrap();
    for key in ["junit", "coverage", "collected"] {
        let report = guard["with"][key].as_str().unwrap();
        let name = report
            .strip_prefix(&format!("{dir}/"))
            .unwrap_or_else(|| panic!("{key} {report:?} is not in the downloaded {dir:?}"));
        assert!(
            uploaded.lines().any(|l| l.trim() == name),
            "{name} is not uploaded"
        );
    }
}

#[test]
fn readme_gitlab_job_uploads_the_code_quality_report() {
    let ci: serde_norway::Value =
        serde_norway::from_str(&readme_block("# .gitlab-ci.yml")).unwrap();
    let job = &ci["merge-guard"];
    let script: Vec<&str> = job["script"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    let guard = script
        .iter()
        .find(|l| l.starts_with("guard check"))
        .expect("the job runs guard check");
    assert!(guard.contains("--format gitlab"), "{guard}");
    assert!(guard.contains("> gl-code-quality.json"), "{guard}");
    assert_eq!(
        job["artifacts"]["reports"]["codequality"].as_str(),
        Some("gl-code-quality.json")
    );
    // The report is uploaded when guard rejects, which is when it matters.
    assert_eq!(job["artifacts"]["when"].as_str(), Some("always"));
    // guard judges from a clone of its own, with the tests job's report, and runs none of
    // the change's code.
    assert_eq!(job["needs"][0].as_str(), Some("tests"));
    assert_eq!(job["variables"]["GIT_STRATEGY"].as_str(), Some("clone"));
    // Nothing the change brings or a cache kept takes part in building guard: no cache
    // (GitLab's live in the checkout), no cargo home in the checkout, cargo run elsewhere.
    assert!(job.get("cache").is_none(), "{:?}", job["cache"]);
    assert!(job["variables"].get("CARGO_HOME").is_none());
    let install: Vec<&str> = job["before_script"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .filter(|l| l.contains("cargo install"))
        .collect();
    assert_eq!(install.len(), 1, "{install:?}");
    assert!(
        install[0].starts_with("(cd /tmp && cargo install "),
        "{}",
        install[0]
    );
    for line in &script {
        assert!(!line.contains("pytest"), "the guard job runs {line:?}");
    }
    assert!(
        ci["tests"]["artifacts"]["paths"]
            .as_sequence()
            .unwrap()
            .iter()
            .any(|p| p.as_str() == Some("junit.xml")),
        "the tests job passes junit.xml on"
    );
}

/// `action-validator FILE`: exit status and output.
fn action_validator(file: &Path) -> (bool, String) {
    let out = Command::new("action-validator").arg(file).output().expect(
        "action-validator is installed (npm install -g @action-validator/cli; .ci/run does)",
    );
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[test]
fn action_and_readme_workflow_validate_against_githubs_schemas() {
    let (ok, output) = action_validator(&repo_file("action.yml"));
    assert!(ok, "action.yml:\n{output}");

    let p = Project::new();
    p.write(
        ".github/workflows/merge-guard.yml",
        readme_block("# .github/workflows/merge-guard.yml"),
    );
    let (ok, output) = action_validator(&p.path(".github/workflows/merge-guard.yml"));
    assert!(ok, "README workflow:\n{output}");

    // The validator can fail: an action whose steps run nothing does.
    let text = std::fs::read_to_string(repo_file("action.yml")).unwrap();
    p.write(
        "bad/action.yml",
        text.replace("using: composite", "using: compost"),
    );
    let (ok, _) = action_validator(&p.path("bad/action.yml"));
    assert!(!ok, "a broken action validated");
}

/// Runs a `run:` step of the README's workflow as GitHub would (`bash -e`), its `env:`
/// expressions looked up in `context` (GitHub evaluates one it has no value for to "").
fn run_readme_step(step: &serde_norway::Value, context: &[(&str, &str)], path: &str, home: &Path) {
    let workspace = home.join("work");
    let mut cmd = Command::new("bash");
    cmd.args(["--noprofile", "--norc", "-e", "-c"])
        .arg(step["run"].as_str().unwrap())
        .current_dir(&workspace)
        .env("GITHUB_WORKSPACE", &workspace)
        .env("RUNNER_TEMP", home)
        .env("PATH", path)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1");
    for (var, expr) in step["env"].as_mapping().into_iter().flatten() {
        let expr = expr.as_str().unwrap();
        let value = context
            .iter()
            .find(|(k, _)| *k == expr)
            .map_or("", |(_, v)| *v);
        cmd.env(var.as_str().unwrap(), value);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "step {:?} failed:\n{}{}",
        step["name"],
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A throwaway project: a human's calc with two tests; then an agent breaks `total` for the
/// empty list and deletes the test that would have said so (its own run is green). The
/// project, the base and the tip.
fn deleted_test_and_broken_code() -> (Project, String, String) {
    let origin = Project::git();
    origin
        .write(
            "qa/merge_ledger.toml",
            "version = 1\n\n[properties]\npaths = []\nrequired = false\n\n[agents]\nemails = ['cursoragent@cursor.com']\n",
        )
        .write("qa/freeze.toml", "version = 1\nmax_active_leases = 0\n")
        .write("qa/fixtures.lock.json", "{\"files\": {}}\n")
        .write("pytest.ini", "[pytest]\npythonpath = src\n")
        .write(".gitignore", "__pycache__/\n")
        .write("src/calc.py", "def total(xs):\n    return sum(xs)\n")
        .write(
            "tests/test_calc.py",
            "from calc import total\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n\n\ndef test_empty():\n    assert total([]) == 0\n",
        );
    origin.commit_as(
        ("Dev Human", "dev@example.com"),
        "Add calc\n\nLedger-Change: human\nFreeze-Lease: human\nFixture-Lock: human\n",
    );
    let base = origin.rev("HEAD");
    origin
        .write(
            "src/calc.py",
            "def total(xs):\n    return sum(xs) if xs else 1\n",
        )
        .write(
            "tests/test_calc.py",
            "from calc import total\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n",
        );
    origin.commit_as(
        ("Cursor Agent", "cursoragent@cursor.com"),
        "Simplify total\n",
    );
    let tip = origin.rev("HEAD");
    (origin, base, tip)
}

/// A full clone of `origin` in `home/work`, `tip` checked out.
fn clone_at(origin: &Project, tip: &str, home: &Project) {
    let out = Command::new("git")
        .args(["clone", "-q"])
        .arg(origin.root())
        .arg(home.path("work"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let out = Command::new("git")
        .args(["checkout", "-q", "--detach", tip])
        .current_dir(home.path("work"))
        .output()
        .unwrap();
    assert!(out.status.success());
}

#[test]
fn readme_workflow_run_step_by_step_rejects_an_agent_that_deletes_a_test_and_breaks_the_code() {
    let (origin, base, tip) = deleted_test_and_broken_code();
    let context = [
        (
            "${{ github.event.pull_request.base.sha || github.event.before }}",
            base.as_str(),
        ),
        (
            "${{ github.event.pull_request.head.sha || github.sha }}",
            tip.as_str(),
        ),
        ("${{ github.event.pull_request.base.sha }}", base.as_str()),
        ("${{ github.event.pull_request.head.sha }}", tip.as_str()),
        ("${{ github.event.repository.default_branch }}", "main"),
    ];
    let workflow: serde_norway::Value =
        serde_norway::from_str(&readme_block("# .github/workflows/merge-guard.yml")).unwrap();
    // guard on PATH, as the lint step leaves it.
    let bin = Project::new();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_guard"), bin.path("guard")).unwrap();
    let path = format!(
        "{}:{}",
        bin.root().display(),
        std::env::var("PATH").unwrap()
    );
    let clone = |home: &Project| clone_at(&origin, &tip, home);

    // The tests job, step by step: checkout (a full clone), then every `run:` step.
    let tests_home = Project::new();
    clone(&tests_home);
    let tests = workflow["jobs"]["tests"]["steps"].as_sequence().unwrap();
    for step in tests.iter().filter(|s| s.get("run").is_some()) {
        run_readme_step(step, &context, &path, tests_home.root());
    }
    // The judging job: a fresh clone, the uploaded reports downloaded, the action run.
    let upload = step_using(tests, "actions/upload-artifact@", true).unwrap();
    let guard_home = Project::new();
    clone(&guard_home);
    let steps = workflow["jobs"]["guard"]["steps"].as_sequence().unwrap();
    let download = step_using(steps, "actions/download-artifact@", true).unwrap();
    let into = guard_home.path(&format!(
        "work/{}",
        download["with"]["path"].as_str().unwrap()
    ));
    std::fs::create_dir_all(&into).unwrap();
    let mut uploaded = Vec::new();
    for name in upload["with"]["path"].as_str().unwrap().lines() {
        let from = tests_home.path(&format!("work/{name}"));
        if from.exists() {
            std::fs::copy(&from, into.join(name)).unwrap();
            uploaded.push(name);
        }
    }
    assert!(
        uploaded.contains(&"base-junit.xml") && uploaded.contains(&"retest-junit.xml"),
        "{uploaded:?}"
    );
    let guard = step_using(steps, "merge-guard@", false).unwrap();
    let inputs: Vec<(String, String)> = guard["with"]
        .as_mapping()
        .unwrap()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().unwrap().to_string(),
                v.as_str().unwrap().to_string(),
            )
        })
        .collect();
    let inputs: Vec<(&str, &str)> = inputs
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let real = Stubs::new(&[]);
    std::fs::create_dir_all(real.dir.path("bin")).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_guard"), real.dir.path("bin/guard")).unwrap();
    let (code, stdout) = run_step("Run guard", &inputs, &context, &real, guard_home.root());
    assert_eq!(code, 1, "{stdout}");
    // The deleted test is gone from the run (the baseline), and the base's version of it
    // fails on the agent's code (the retest).
    assert!(
        stdout.contains("test_vanished") && stdout.contains("tests.test_calc::test_empty"),
        "{stdout}"
    );
    assert!(
        stdout.contains("old_test_fails")
            && stdout.contains("the base's test tests/test_calc.py::test_empty fails"),
        "{stdout}"
    );
}

#[test]
fn readme_gitlab_pipeline_run_step_by_step_rejects_an_agent_that_deletes_a_test_and_breaks_the_code()
 {
    let (origin, base, tip) = deleted_test_and_broken_code();
    let ci: serde_norway::Value =
        serde_norway::from_str(&readme_block("# .gitlab-ci.yml")).unwrap();
    let bin = Project::new();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_guard"), bin.path("guard")).unwrap();
    let path = format!(
        "{}:{}",
        bin.root().display(),
        std::env::var("PATH").unwrap()
    );
    // Each script line as GitLab runs it, in the job's checkout; the exit code.
    let run_job = |job: &str, home: &Project| -> i32 {
        let dir = home.path("work");
        let script: Vec<&str> = ci[job]["script"]
            .as_sequence()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap())
            .collect();
        let out = Command::new("bash")
            .args(["--noprofile", "--norc", "-e", "-c"])
            .arg(script.join("\n"))
            .current_dir(&dir)
            .env("CI_PROJECT_DIR", &dir)
            .env("TMPDIR", home.root())
            .env("CI_MERGE_REQUEST_DIFF_BASE_SHA", &base)
            .env("CI_COMMIT_SHA", &tip)
            .env("PATH", &path)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        eprintln!("{}", String::from_utf8_lossy(&out.stderr));
        out.status.code().unwrap()
    };
    // The tests job, with the guard-binary job's artifact.
    let tests_home = Project::new();
    clone_at(&origin, &tip, &tests_home);
    let built = ci["guard-binary"]["artifacts"]["paths"][0]
        .as_str()
        .unwrap();
    let built = tests_home.path(&format!("work/{built}"));
    std::fs::create_dir_all(built.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_guard"), &built).unwrap();
    assert_eq!(run_job("tests", &tests_home), 0);
    // The judging job: a fresh clone with the tests job's artifacts.
    let guard_home = Project::new();
    clone_at(&origin, &tip, &guard_home);
    for name in ci["tests"]["artifacts"]["paths"].as_sequence().unwrap() {
        let name = name.as_str().unwrap();
        std::fs::copy(
            tests_home.path(&format!("work/{name}")),
            guard_home.path(&format!("work/{name}")),
        )
        .unwrap_or_else(|e| panic!("the tests job wrote no {name}: {e}"));
    }
    assert_eq!(run_job("merge-guard", &guard_home), 1);
    let report = guard_home.read("work/gl-code-quality.json");
    assert!(
        report.contains("test_vanished") && report.contains("old_test_fails"),
        "{report}"
    );
}
