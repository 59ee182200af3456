//! The files the project's CI runs besides the tests: the task runners and scripts that its
//! GitHub workflows' `run:` steps and its `.gitlab-ci.yml` scripts call. A `Makefile` whose
//! `test` target the protected workflow runs decides how the tests run as much as a
//! `pytest.ini` does (a `--deselect` added there drops a test from the run): those files are
//! harness too. Read with a YAML parser; the commands are split as a shell splits words.
//!
//! Followed: `make` (`-C DIR`, `-f FILE`), `just` (`-f FILE`), `task` (`-t FILE`), a script
//! run by path (`./ci/test.sh`, `scripts/check`) or through an interpreter (`bash
//! ci/test.sh`, `python tools/run_tests.py`), each from the directory the command runs in: a
//! step's `working-directory`, the job's or workflow's `defaults.run.working-directory`, and
//! `cd`/`pushd` earlier in the same script; the workspace's own variables
//! (`${{ github.workspace }}`, `$GITHUB_WORKSPACE`, `$CI_PROJECT_DIR`) name the root. Not
//! followed: other variables in a path (after a `cd` to one, nothing more of that script),
//! and commands built at run time. Package manager scripts need no following: every
//! `package.json`'s `scripts`, `tox.ini` and `noxfile.py` are harness files wherever they are.

use crate::source::Source;

/// The CI files read: GitHub workflows and GitLab's pipeline.
const WORKFLOW_DIR: &str = ".github/workflows";
const GITLAB_CI: &str = ".gitlab-ci.yml";

/// Workflow files larger than this are not read (a pipeline is kilobytes).
const MAX_CI_FILE: usize = 1 << 20;

/// The repository-relative paths of the task runner files and scripts the CI files of
/// `source` run, sorted, without duplicates. A CI file that cannot be read or parsed adds
/// nothing (it is protected itself, and judged as such).
pub fn task_runner_files(source: &dyn Source) -> Vec<String> {
    let mut ci_files: Vec<String> = source
        .list_files(&[WORKFLOW_DIR.to_string()])
        .unwrap_or_default()
        .into_iter()
        .filter(|p| p.ends_with(".yml") || p.ends_with(".yaml"))
        .collect();
    ci_files.push(GITLAB_CI.to_string());
    let mut out = Vec::new();
    for file in ci_files {
        let Ok(Some(bytes)) = source.read(&file) else {
            continue;
        };
        if bytes.len() > MAX_CI_FILE {
            continue;
        }
        let Ok(text) = String::from_utf8(bytes) else {
            continue;
        };
        let Ok(doc) = serde_norway::from_str::<serde_norway::Value>(&text) else {
            continue;
        };
        let mut commands = Vec::new();
        collect_commands(&doc, None, &mut commands);
        for (command, dir) in commands {
            out.extend(files_run_by(&command, dir.as_deref()));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Where a command runs: the repository root (`None`), a directory in it, or somewhere
/// guard cannot tell (a variable).
type Dir = Option<String>;

/// A directory guard cannot tell: what runs there is not followed.
const UNKNOWN_DIR: &str = "\0unknown";

/// The shell text of every `run:` (GitHub) and `script:`/`before_script:`/`after_script:`
/// (GitLab) under `value`, each with the directory it runs in: `dir` unless a
/// `working-directory` (the step's) or `defaults.run.working-directory` (a job's or the
/// workflow's) says otherwise, relative to the repository root.
fn collect_commands(value: &serde_norway::Value, dir: Option<&str>, out: &mut Vec<(String, Dir)>) {
    use serde_norway::Value;
    match value {
        Value::Mapping(map) => {
            let defaults = map
                .get("defaults")
                .and_then(|d| d.get("run"))
                .and_then(|r| r.get("working-directory"));
            let own = map.get("working-directory").or(defaults);
            let dir: Dir = match own {
                Some(Value::String(path)) => Some(in_dir(None, path)),
                Some(_) => Some(UNKNOWN_DIR.to_string()),
                None => dir.map(str::to_string),
            };
            for (key, inner) in map {
                let key = key.as_str().unwrap_or_default();
                if matches!(key, "run" | "script" | "before_script" | "after_script") {
                    match inner {
                        Value::String(text) => out.push((text.clone(), dir.clone())),
                        Value::Sequence(lines) => out.extend(
                            lines
                                .iter()
                                .filter_map(|l| l.as_str().map(|l| (l.to_string(), dir.clone()))),
                        ),
                        _ => {}
                    }
                } else {
                    collect_commands(inner, dir.as_deref(), out);
                }
            }
        }
        Value::Sequence(items) => {
            for item in items {
                collect_commands(item, dir, out);
            }
        }
        Value::Tagged(tagged) => collect_commands(&tagged.value, dir, out),
        _ => {}
    }
}

/// `path` (a `working-directory` or the argument of `cd`) from `dir`: a directory of the
/// repository (empty for the root), or [`UNKNOWN_DIR`].
fn in_dir(dir: Option<&str>, path: &str) -> String {
    let path = workspace_root(path);
    if dir == Some(UNKNOWN_DIR) {
        return UNKNOWN_DIR.to_string();
    }
    let joined = join(dir.filter(|d| !d.is_empty()), &path);
    normalized(&joined).unwrap_or_else(|| UNKNOWN_DIR.to_string())
}

/// `text` with the variables that name the repository's root on the forges
/// (`${{ github.workspace }}`, `$GITHUB_WORKSPACE`, `${CI_PROJECT_DIR}`, ...) as `.`.
fn workspace_root(text: &str) -> String {
    let mut out = text.to_string();
    while let Some(start) = out.find("${{") {
        let Some(len) = out[start..].find("}}") else {
            break;
        };
        let inner = out[start + 3..start + len].trim();
        if inner != "github.workspace" {
            break;
        }
        out.replace_range(start..start + len + 2, ".");
    }
    for name in ["GITHUB_WORKSPACE", "CI_PROJECT_DIR"] {
        out = out
            .replace(&format!("${{{name}}}"), ".")
            .replace(&format!("${name}"), ".");
    }
    out
}

/// The files one command text runs from directory `dir` (`None`: the root): each line, each
/// simple command of it (split at `&&`, `||`, `;` and `|` standing as words). A `cd` or
/// `pushd` moves the rest of the text, as it moves the one shell a step runs in.
fn files_run_by(text: &str, dir: Option<&str>) -> Vec<String> {
    let mut out = Vec::new();
    let mut cwd: Option<String> = dir.map(str::to_string);
    for line in text.lines() {
        let Some(words) = shlex::split(&workspace_root(line)) else {
            continue;
        };
        for command in words.split(|w| matches!(w.as_str(), "&&" | "||" | ";" | "|")) {
            match command {
                [cd, to, ..] if cd == "cd" || cd == "pushd" => {
                    cwd = Some(in_dir(cwd.as_deref(), to));
                    continue;
                }
                [cd] if cd == "cd" => {
                    cwd = Some(UNKNOWN_DIR.to_string());
                    continue;
                }
                _ => {}
            }
            match cwd.as_deref() {
                Some(UNKNOWN_DIR) => {}
                Some(d) if !d.is_empty() => out.extend(
                    files_of_command(command)
                        .into_iter()
                        .filter_map(|f| relative(&format!("{d}/{f}"))),
                ),
                _ => out.extend(files_of_command(command)),
            }
        }
    }
    out
}

/// The files one simple command runs.
fn files_of_command(words: &[String]) -> Vec<String> {
    // Environment assignments, wrappers and their options before the program.
    let mut rest = words;
    let mut wrapped = false;
    while let Some((first, tail)) = rest.split_first() {
        let assignment = first.contains('=') && !first.starts_with('-');
        let wrapper = matches!(first.as_str(), "sudo" | "env" | "time" | "exec" | "nice");
        if assignment || wrapper || (wrapped && first.starts_with('-')) {
            wrapped |= wrapper;
            rest = tail;
        } else {
            break;
        }
    }
    let Some((program, args)) = rest.split_first() else {
        return Vec::new();
    };
    match program.as_str() {
        "make" | "gmake" => {
            let dir = option_value(args, &["-C", "--directory"]);
            match option_value(args, &["-f", "--file", "--makefile"]) {
                Some(file) => relative(&join(dir.as_deref(), &file)).into_iter().collect(),
                None => ["GNUmakefile", "makefile", "Makefile"]
                    .iter()
                    .filter_map(|name| relative(&join(dir.as_deref(), name)))
                    .collect(),
            }
        }
        "just" => match option_value(args, &["-f", "--justfile"]) {
            Some(file) => relative(&file).into_iter().collect(),
            None => ["justfile", "Justfile", ".justfile"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
        },
        "task" => match option_value(args, &["-t", "--taskfile"]) {
            Some(file) => relative(&file).into_iter().collect(),
            None => [
                "Taskfile.yml",
                "Taskfile.yaml",
                "taskfile.yml",
                "taskfile.yaml",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        },
        "bash" | "sh" | "zsh" | "dash" | "python" | "python3" | "ruby" | "perl" | "node" => {
            // The first argument that is not an option is the script (`python -m x` runs a
            // module, not a file of the repository's root: not followed).
            if args.first().is_some_and(|a| a == "-m" || a == "-c") {
                return Vec::new();
            }
            args.iter()
                .find(|a| !a.starts_with('-'))
                .and_then(|a| script_path(a))
                .into_iter()
                .collect()
        }
        _ => script_path(program).into_iter().collect(),
    }
}

/// The value of the first of `names` among `args` (`-C dir`, `-Cdir`, `--directory=dir`).
fn option_value(args: &[String], names: &[&str]) -> Option<String> {
    for (i, arg) in args.iter().enumerate() {
        for name in names {
            if arg == name {
                return args.get(i + 1).cloned();
            }
            if let Some(value) = arg.strip_prefix(&format!("{name}=")) {
                return Some(value.to_string());
            }
            if name.len() == 2
                && !name.starts_with("--")
                && let Some(value) = arg.strip_prefix(name).filter(|v| !v.is_empty())
            {
                return Some(value.to_string());
            }
        }
    }
    None
}

/// `dir/name`, or `name` alone.
fn join(dir: Option<&str>, name: &str) -> String {
    match dir {
        Some(dir) => format!("{}/{name}", dir.trim_end_matches('/')),
        None => name.to_string(),
    }
}

/// A program named by path (`./ci/test.sh`, `scripts/check.py`): the repository file it
/// is, when it is one (no variable, not absolute, not above the root).
fn script_path(word: &str) -> Option<String> {
    if !word.contains('/') && !word.ends_with(".sh") && !word.ends_with(".py") {
        return None;
    }
    relative(word)
}

/// `path` as a repository-relative path of a file, when it is one.
fn relative(path: &str) -> Option<String> {
    normalized(path).filter(|p| !p.is_empty())
}

/// `path` as a repository-relative path with `.` and `..` resolved (empty for the root), when
/// it is one: not absolute, no variable, never above the root.
fn normalized(path: &str) -> Option<String> {
    if path.starts_with('/') || path.starts_with('~') || path.contains('$') {
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => continue,
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(text: &str) -> Vec<String> {
        files_in(text, None)
    }

    fn files_in(text: &str, dir: Option<&str>) -> Vec<String> {
        let mut out = files_run_by(text, dir);
        out.sort();
        out
    }

    #[test]
    fn task_runners_and_scripts_a_command_runs() {
        assert_eq!(files("make test"), ["GNUmakefile", "Makefile", "makefile"]);
        assert_eq!(
            files("make -C tools check"),
            ["tools/GNUmakefile", "tools/Makefile", "tools/makefile"]
        );
        assert_eq!(files("make -f ci.mk test"), ["ci.mk"]);
        assert_eq!(files("just test"), [".justfile", "Justfile", "justfile"]);
        assert_eq!(files("task -t ci/Taskfile.yml test"), ["ci/Taskfile.yml"]);
        assert_eq!(files("./ci/test.sh --fast"), ["ci/test.sh"]);
        assert_eq!(files("bash scripts/run_tests.sh"), ["scripts/run_tests.sh"]);
        assert_eq!(files("python tools/check.py -q"), ["tools/check.py"]);
        assert_eq!(
            files("CI=1 sudo -E env X=1 ./x.sh && make lint; true | tee log"),
            ["GNUmakefile", "Makefile", "makefile", "x.sh"]
        );
        // Not the repository's files.
        for text in [
            "python -m pytest tests",
            "cargo test",
            "/usr/bin/env true",
            "$HOME/bin/run.sh",
            "../other/run.sh",
            "echo 'unbalanced",
            "npm run test",
        ] {
            assert_eq!(files(text), Vec::<String>::new(), "{text}");
        }
        // One file per line of a multi-line step.
        assert_eq!(
            files("make deps\n./ci/test.sh\n"),
            ["GNUmakefile", "Makefile", "ci/test.sh", "makefile"]
        );
    }

    #[test]
    fn commands_are_read_from_github_steps_and_gitlab_scripts() {
        let github: serde_norway::Value = serde_norway::from_str(
            "on: push\njobs:\n  t:\n    steps:\n      - uses: actions/checkout@v4\n      - run: make test\n      - name: x\n        run: |\n          ./ci/a.sh\n          echo done\n",
        )
        .unwrap();
        let mut commands = Vec::new();
        collect_commands(&github, None, &mut commands);
        let commands: Vec<&str> = commands.iter().map(|(c, _)| c.as_str()).collect();
        assert_eq!(commands, ["make test", "./ci/a.sh\necho done\n"]);
        let gitlab: serde_norway::Value = serde_norway::from_str(
            "tests:\n  before_script:\n    - ./setup.sh\n  script:\n    - just test\n  after_script: ./report.sh\n",
        )
        .unwrap();
        let mut commands = Vec::new();
        collect_commands(&gitlab, None, &mut commands);
        let mut commands: Vec<&str> = commands.iter().map(|(c, _)| c.as_str()).collect();
        commands.sort();
        assert_eq!(commands, ["./report.sh", "./setup.sh", "just test"]);
    }

    #[test]
    fn commands_run_where_their_step_job_or_workflow_says() {
        let github: serde_norway::Value = serde_norway::from_str(
            "defaults:\n  run:\n    working-directory: app\njobs:\n  a:\n    steps:\n      - run: make test\n      - run: ./ci.sh\n        working-directory: ./tools/\n  b:\n    defaults:\n      run:\n        working-directory: ${{ github.workspace }}\n    steps:\n      - run: just test\n  c:\n    steps:\n      - run: ./x.sh\n        working-directory: ${{ matrix.dir }}\n",
        )
        .unwrap();
        let mut commands = Vec::new();
        collect_commands(&github, None, &mut commands);
        let mut found: Vec<String> = commands
            .iter()
            .flat_map(|(c, d)| files_run_by(c, d.as_deref()))
            .collect();
        found.sort();
        assert_eq!(
            found,
            [
                ".justfile",
                "Justfile",
                "app/GNUmakefile",
                "app/Makefile",
                "app/makefile",
                "justfile",
                "tools/ci.sh",
            ]
        );
    }

    #[test]
    fn cd_moves_the_rest_of_the_script_and_workspace_variables_name_the_root() {
        assert_eq!(
            files("cd backend && make test"),
            [
                "backend/GNUmakefile",
                "backend/Makefile",
                "backend/makefile"
            ]
        );
        assert_eq!(files("cd backend\ncd ../ci\n./run.sh"), ["ci/run.sh"]);
        assert_eq!(files_in("cd .. && ./run.sh", Some("app")), ["run.sh"]);
        assert_eq!(
            files("bash ${{ github.workspace }}/ci/test.sh"),
            ["ci/test.sh"]
        );
        assert_eq!(files("$GITHUB_WORKSPACE/ci/test.sh"), ["ci/test.sh"]);
        assert_eq!(files("make -f ${CI_PROJECT_DIR}/ci.mk"), ["ci.mk"]);
        assert_eq!(files("cd \"$CI_PROJECT_DIR\" && ./run.sh"), ["run.sh"]);
        // Where guard cannot tell, nothing more of the script is followed.
        assert_eq!(files("cd \"$SOMEWHERE\" && ./run.sh"), Vec::<String>::new());
        assert_eq!(files("cd ../../out && ./run.sh"), Vec::<String>::new());
        assert_eq!(files("cd\n./run.sh"), Vec::<String>::new());
    }
}
