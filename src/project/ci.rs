//! The files the project's CI runs besides the tests: the task runners and scripts that its
//! GitHub workflows' `run:` steps and its `.gitlab-ci.yml` scripts call. A `Makefile` whose
//! `test` target the protected workflow runs decides how the tests run as much as a
//! `pytest.ini` does (a `--deselect` added there drops a test from the run): those files are
//! harness too. Read with a YAML parser; the commands are split as a shell splits words.
//!
//! Followed: `make` (`-C DIR`, `-f FILE`), `just` (`-f FILE`), `task` (`-t FILE`), a script
//! run by path (`./ci/test.sh`, `scripts/check`) or through an interpreter (`bash
//! ci/test.sh`, `python tools/run_tests.py`). Not followed: a step's `working-directory`,
//! variables in a path, package manager scripts (`npm run test`), and commands built at run
//! time.

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
        collect_commands(&doc, &mut commands);
        for command in commands {
            out.extend(files_run_by(&command));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The shell text of every `run:` (GitHub) and `script:`/`before_script:`/`after_script:`
/// (GitLab) under `value`.
fn collect_commands(value: &serde_norway::Value, out: &mut Vec<String>) {
    use serde_norway::Value;
    match value {
        Value::Mapping(map) => {
            for (key, inner) in map {
                let key = key.as_str().unwrap_or_default();
                if matches!(key, "run" | "script" | "before_script" | "after_script") {
                    match inner {
                        Value::String(text) => out.push(text.clone()),
                        Value::Sequence(lines) => {
                            out.extend(lines.iter().filter_map(|l| l.as_str().map(str::to_string)))
                        }
                        _ => {}
                    }
                } else {
                    collect_commands(inner, out);
                }
            }
        }
        Value::Sequence(items) => {
            for item in items {
                collect_commands(item, out);
            }
        }
        Value::Tagged(tagged) => collect_commands(&tagged.value, out),
        _ => {}
    }
}

/// The files one command text runs: each line, each simple command of it (split at `&&`,
/// `||`, `;` and `|` standing as words).
fn files_run_by(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(words) = shlex::split(line) else {
            continue;
        };
        for command in words.split(|w| matches!(w.as_str(), "&&" | "||" | ";" | "|")) {
            out.extend(files_of_command(command));
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
            if name.len() == 2 && !name.starts_with("--") {
                if let Some(value) = arg.strip_prefix(name).filter(|v| !v.is_empty()) {
                    return Some(value.to_string());
                }
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

/// `path` as a repository-relative path, when it is one.
fn relative(path: &str) -> Option<String> {
    if path.starts_with('/') || path.starts_with('~') || path.contains('$') {
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => continue,
            ".." => return None,
            part => parts.push(part),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(text: &str) -> Vec<String> {
        let mut out = files_run_by(text);
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
        collect_commands(&github, &mut commands);
        assert_eq!(commands, ["make test", "./ci/a.sh\necho done\n"]);
        let gitlab: serde_norway::Value = serde_norway::from_str(
            "tests:\n  before_script:\n    - ./setup.sh\n  script:\n    - just test\n  after_script: ./report.sh\n",
        )
        .unwrap();
        let mut commands = Vec::new();
        collect_commands(&gitlab, &mut commands);
        commands.sort();
        assert_eq!(commands, ["./report.sh", "./setup.sh", "just test"]);
    }
}
