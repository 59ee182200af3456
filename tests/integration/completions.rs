//! `guard completions SHELL` and `guard man`, checked by their consumers: bash loads the
//! completion script and completes with it, and man-db's `man -l` renders the pages with
//! groff's warnings on.

use std::path::Path;
use std::process::Command;

use crate::support::Project;

const GUARD: &str = env!("CARGO_BIN_EXE_guard");

/// Every command, typed out here (not read from guard) so that a command missing from the
/// generated output fails.
const COMMANDS: &[&str] = &[
    "check",
    "score",
    "run",
    "retest",
    "deselect",
    "lock",
    "lint",
    "init",
    "hook",
    "completions",
    "man",
];

/// `bash -c SCRIPT` with `$GUARD` set to the test's guard; its stdout, after asserting it ran.
#[track_caller]
fn bash(script: &str) -> String {
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", script])
        .env("GUARD", GUARD)
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "bash failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn bash_loads_the_completion_script_and_completes_commands() {
    let defined = bash(r#"source <("$GUARD" completions bash) && complete -p guard"#);
    assert!(
        defined.trim_end().ends_with("-F _guard guard"),
        "`complete -p guard` after sourcing: {defined:?}"
    );

    // What bash offers after `guard ` and after `guard hook pre`, as readline would ask.
    let complete = |words: &str| {
        bash(&format!(
            r#"source <("$GUARD" completions bash)
            COMP_WORDS=({words}); COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
            COMP_LINE="{words}"; COMP_POINT=${{#COMP_LINE}}
            _guard guard "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
            printf '%s\n' "${{COMPREPLY[@]}}""#
        ))
    };
    let top = complete(r#"guard """#);
    let offered: Vec<&str> = top.lines().collect();
    for command in COMMANDS {
        assert!(
            offered.contains(command),
            "{command} not offered: {offered:?}"
        );
    }
    assert_eq!(
        complete("guard hook pre").lines().collect::<Vec<_>>(),
        ["pre-receive", "pre-push"]
    );
    let shells = complete(r#"guard completions """#);
    for shell in ["bash", "zsh", "fish", "powershell"] {
        assert!(shells.lines().any(|l| l == shell), "{shell}: {shells:?}");
    }
}

#[test]
fn zsh_fish_and_powershell_scripts_name_every_command() {
    let p = Project::new();
    // How each shell's script declares itself, and how it spells a command it completes.
    type Spelling = fn(&str) -> String;
    let shells: &[(&str, &str, Spelling)] = &[
        ("zsh", "#compdef guard", |c| format!("'{c}:")),
        ("fish", "complete -c guard", |c| format!("-a \"{c}\"")),
        (
            "powershell",
            "Register-ArgumentCompleter -Native -CommandName 'guard'",
            |c| format!("'{c}'"),
        ),
    ];
    for (shell, header, spelled) in shells {
        let run = p.guard(&["completions", shell]);
        assert_eq!(run.code, 0, "{shell}: {}", run.stderr);
        assert!(
            run.stdout.contains(header),
            "{shell} script:\n{}",
            run.stdout
        );
        for command in COMMANDS.iter().chain(&["pre-receive", "pre-push"]) {
            assert!(
                run.stdout.contains(&spelled(command)),
                "{shell} script does not complete {command}"
            );
        }
    }
}

#[test]
fn unknown_shell_is_a_usage_error() {
    let run = Project::new().guard(&["completions", "tcsh"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("invalid value 'tcsh'"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty());
}

/// `man -l PAGE` as man-db renders it (80 columns, groff's warnings on): its stdout, after
/// asserting it rendered without a warning.
#[track_caller]
fn man(page: &Path) -> String {
    let out = Command::new("man")
        .args(["--warnings", "-l"])
        .arg(page)
        .env("MANWIDTH", "80")
        .env("MANPAGER", "cat")
        .env("LC_ALL", "C")
        .output()
        .expect("man is installed (man-db; .ci/run installs it)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.is_empty(),
        "man -l {} failed or warned:\n{stderr}",
        page.display()
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn man_page_renders_with_man() {
    let p = Project::new();
    let run = p.guard(&["man"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.starts_with(".ie"), "not roff:\n{}", run.stdout);
    p.write("guard.1", &run.stdout);

    let text = man(&p.path("guard.1"));
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    assert!(
        lines.contains(&"guard - Stop AI coding agents from buying a green merge"),
        "{text}"
    );
    for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "SUBCOMMANDS"] {
        assert!(lines.contains(&section), "no {section} section:\n{text}");
    }
    for command in COMMANDS {
        assert!(
            lines.contains(&format!("guard-{command}(1)").as_str()),
            "guard-{command}(1) not listed:\n{text}"
        );
    }
    // Only pages that `guard man --out-dir` writes are listed (it writes no guard-help(1)),
    // and the synopsis is a usage line, not options with their values left out (`[-C ]`).
    assert!(!text.contains("guard-help(1)"), "{text}");
    assert!(lines.contains(&"guard [OPTIONS] <COMMAND>"), "{text}");
    assert!(!text.contains("[-C ]"), "{text}");
    assert!(text.contains("Exit codes: 0 MERGE, 1 REJECT, 2"), "{text}");
}

#[test]
fn man_out_dir_writes_a_page_per_command() {
    let p = Project::new();
    let run = p.guard(&["man", "--out-dir", "pages"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    for command in COMMANDS.iter().map(|c| format!("guard-{c}.1")).chain(
        [
            "guard.1",
            "guard-hook-pre-push.1",
            "guard-hook-pre-receive.1",
        ]
        .map(String::from),
    ) {
        assert!(
            p.path("pages").join(&command).is_file(),
            "{command} missing"
        );
    }
    let check = man(&p.path("pages/guard-check.1"));
    assert!(check.contains("guard check [OPTIONS] [RANGE]"), "{check}");
    // Every page listed in a SEE-ALSO-like SUBCOMMANDS section was written.
    for page in std::fs::read_dir(p.path("pages")).unwrap() {
        let text = man(&page.unwrap().path());
        for listed in text.split_whitespace().filter(|w| w.ends_with("(1)")) {
            let file = format!("{}.1", listed.trim_end_matches("(1)"));
            assert!(
                p.path("pages").join(&file).is_file(),
                "{listed} listed, {file} not written"
            );
        }
    }
    for option in ["--junit", "--coverage", "--collected", "--format"] {
        assert!(
            check.contains(option),
            "{option} missing from guard-check(1):\n{check}"
        );
    }

    // A directory that cannot be made is an error that names it.
    p.write("file", "not a directory");
    let run = p.guard(&["man", "--out-dir", "file/pages"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.starts_with("error: cannot create file/pages"),
        "{}",
        run.stderr
    );
}
