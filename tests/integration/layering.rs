//! Rules about which module may use what, checked on the source text: each top-level module
//! uses only the layers below it (ARCHITECTURE.md), so there are no module cycles; and only
//! `src/git/` may use the `git2` crate (the rest of the crate reads git through
//! `crate::git`'s functions and holds only the `Oid` and `Repository` handles it re-exports).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The lines of `text` that use the `git2` crate: a `git2::` path (not `libgit2::`, which
/// names no crate) or a `use`/`extern crate` of it.
fn git2_uses(text: &str) -> Vec<(usize, &str)> {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.lines()
        .enumerate()
        .filter(|(_, line)| {
            let path = line
                .match_indices("git2::")
                .any(|(at, _)| !line[..at].ends_with(is_ident));
            let trimmed = line.trim_start();
            let import = [
                "use git2",
                "pub use git2",
                "extern crate git2",
                "use ::git2",
            ]
            .iter()
            .any(|p| trimmed.starts_with(p));
            path || import
        })
        .map(|(i, line)| (i + 1, line))
        .collect()
}

#[test]
fn only_the_git_module_uses_git2() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let git = src.join("git");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(
        files.len() > 20,
        "found only {} files under src/",
        files.len()
    );
    let mut offenders = Vec::new();
    for file in files.iter().filter(|f| !f.starts_with(&git)) {
        let text = std::fs::read_to_string(file).unwrap();
        for (line, code) in git2_uses(&text) {
            let rel = file.strip_prefix(&src).unwrap().display();
            offenders.push(format!("src/{rel}:{line}: {}", code.trim()));
        }
    }
    assert!(
        offenders.is_empty(),
        "only src/git/ may use git2; add a function to src/git/ that reads what is needed:\n{}",
        offenders.join("\n")
    );
}

#[test]
fn the_scan_finds_every_form_of_use() {
    for used in [
        "use git2::Oid;",
        "    use git2::{Oid, Repository};",
        "pub use git2::Oid;",
        "extern crate git2;",
        "fn f(c: &git2::Commit) {}",
        "    git2::opts::enable_caching(false);",
        "let x = ::git2::Oid::zero();",
    ] {
        assert_eq!(git2_uses(used).len(), 1, "{used:?}");
    }
    for not_used in [
        "// libgit2's object cache",
        "let libgit2::x = 1;",
        "use crate::git::{Oid, Repository};",
        "my_git2::f();",
    ] {
        assert!(git2_uses(not_used).is_empty(), "{not_used:?}");
    }
}

/// The modules each top-level module of `src/` may use (`crate::name`). Lower layers never
/// use higher ones, so there are no cycles (ARCHITECTURE.md draws the same picture).
const ALLOWED: &[(&str, &[&str])] = &[
    ("error", &["exit"]),
    ("exit", &[]),
    ("wording", &[]),
    ("testid", &[]),
    ("workspace", &[]),
    ("fsutil", &[]),
    ("changes", &[]),
    ("codes", &[]),
    ("parallel", &[]),
    ("evidence", &["error", "workspace", "testid", "parallel"]),
    ("source", &["error", "evidence", "workspace"]),
    ("runner", &["source", "workspace"]),
    ("project", &["error", "runner", "source", "workspace"]),
    (
        "policy",
        &[
            "codes",
            "error",
            "testid",
            "workspace",
            "wording",
            "evidence",
            "changes",
            "source",
        ],
    ),
    ("report", &["codes", "error", "exit", "changes", "policy"]),
    (
        "git",
        &[
            "error",
            "changes",
            "evidence",
            "parallel",
            "policy",
            "source",
            "workspace",
        ],
    ),
    (
        "rules",
        &[
            "changes", "evidence", "policy", "report", "runner", "testid", "wording", "error",
        ],
    ),
    ("render", &["error", "policy", "report", "wording"]),
    (
        "engine",
        &[
            "changes",
            "error",
            "evidence",
            "git",
            "parallel",
            "policy",
            "project",
            "report",
            "rules",
            "runner",
            "source",
            "testid",
            "workspace",
            "wording",
        ],
    ),
    (
        "hooks",
        &[
            "engine", "error", "exit", "git", "policy", "render", "report", "rules", "wording",
        ],
    ),
    (
        "cli",
        &[
            "engine",
            "error",
            "evidence",
            "exit",
            "fsutil",
            "git",
            "hooks",
            "policy",
            "project",
            "render",
            "report",
            "rules",
            "runner",
            "source",
            "testid",
            "workspace",
            "wording",
        ],
    ),
];

/// `crate::x` paths used by each top-level module, outside its `#[cfg(test)]` code.
fn module_uses() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let rel = path
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if !rel.ends_with(".rs") || rel == "lib.rs" || rel == "main.rs" {
                continue;
            }
            let top = rel
                .split('/')
                .next()
                .unwrap()
                .trim_end_matches(".rs")
                .to_string();
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap();
            let set = uses.entry(top.clone()).or_default();
            for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
                for part in line.split("crate::").skip(1) {
                    let name: String = part
                        .chars()
                        .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                        .collect();
                    if !name.is_empty() && name != top {
                        set.insert(name);
                    }
                }
            }
        }
    }
    uses
}

#[test]
fn modules_use_only_lower_layers() {
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    let mut wrong = Vec::new();
    for (module, used) in module_uses() {
        let Some(may) = allowed.get(module.as_str()) else {
            wrong.push(format!(
                "{module}: a new top-level module; add it to ALLOWED (and ARCHITECTURE.md)"
            ));
            continue;
        };
        for name in used {
            if !may.contains(&name.as_str()) {
                wrong.push(format!("{module} uses crate::{name}"));
            }
        }
    }
    assert!(wrong.is_empty(), "layering broken:\n{}", wrong.join("\n"));
}
