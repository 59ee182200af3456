//! `coverage_excluded`: an agent commit that adds a coverage exclusion to code: a line
//! coverage then stops counting cannot lower the floor (`proven_coverage`), so the code it
//! marks may go untested. Humans may; an agent may not, unasked. (`.coveragerc` and
//! `[tool.coverage]`, where `exclude_lines` lives, are harness files already.)

use super::{AgentCommit, CommitRule};
use crate::report::finding::{Code, Finding};

/// The markers, by the kind of file they work in.
const PYTHON: &[&str] = &["pragma: no cover", "pragma: no branch"];
const RUST: &[&str] = &[
    "#[coverage(off)]",
    "#[cfg_attr(coverage_nightly, coverage(off))]",
    "#[cfg(not(tarpaulin_include))]",
    "#[cfg(not(tarpaulin))]",
    "#[tarpaulin::skip]",
];

pub struct CoverageExcluded;

fn markers(path: &str) -> &'static [&'static str] {
    if path.ends_with(".py") {
        PYTHON
    } else if path.ends_with(".rs") {
        RUST
    } else {
        &[]
    }
}

/// The lines of `text` that hold a marker, with their 1-based numbers. Python's pragma is
/// matched as coverage.py matches it (a regex over the line, any case, spaces inside).
fn marked(text: &str, markers: &[&str]) -> Vec<(u64, String)> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| {
            let squeezed: String = line
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect::<String>()
                .to_ascii_lowercase();
            markers.iter().any(|m| {
                let m: String = m.chars().filter(|c| !c.is_whitespace()).collect();
                squeezed.contains(&m.to_ascii_lowercase())
            })
        })
        .map(|(i, line)| (i as u64 + 1, line.trim().to_string()))
        .collect()
}

impl CommitRule for CoverageExcluded {
    fn code(&self) -> Code {
        Code::CoverageExcluded
    }

    fn reads(&self, path: &str) -> bool {
        !markers(path).is_empty()
    }

    fn may_find_in(&self, new: &str) -> bool {
        // Every marker holds one of these words, in some case.
        ["pragma", "coverage", "tarpaulin"].iter().any(|word| {
            new.as_bytes()
                .windows(word.len())
                .any(|w| w.eq_ignore_ascii_case(word.as_bytes()))
        })
    }

    fn judge(&self, commit: &AgentCommit) -> Vec<Finding> {
        let mut out = Vec::new();
        for file in commit.files {
            let markers = markers(&file.path);
            let Some(new) = &file.new else { continue };
            let now = marked(new, markers);
            // More markers than in any parent (a merge's own, not one a side brought).
            let before = file
                .old
                .iter()
                .map(|old| old.as_deref().map_or(0, |t| marked(t, markers).len()))
                .max()
                .unwrap_or(0);
            if now.len() <= before {
                continue;
            }
            let seen: Vec<String> = file
                .old
                .iter()
                .flatten()
                .flat_map(|t| marked(t, markers).into_iter().map(|(_, l)| l))
                .collect();
            let Some((line, text)) = now.iter().find(|(_, l)| !seen.contains(l)).or(now.last())
            else {
                continue;
            };
            let added = now.len() - before;
            let more = match added {
                1 => String::new(),
                n => format!(" (and {} more)", n - 1),
            };
            out.push(
                Finding::new(
                    Code::CoverageExcluded,
                    format!(
                        "adds a coverage exclusion{more}: `{text}`; agent: {}",
                        commit.agent
                    ),
                )
                .path(&file.path)
                .line(*line)
                .commit(commit.short, commit.subject)
                .help(format!(
                    "drop the exclusion and cover the code with a test (rewrite the commit: `git rebase -i {}`); a human who means it adds it in a commit of their own",
                    commit.base
                )),
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::ChangedText;
    use super::*;

    fn judge(path: &str, old: Option<&str>, new: &str) -> Vec<Finding> {
        let files = [ChangedText {
            path: path.into(),
            old: vec![old.map(str::to_string)],
            new: Some(new.into()),
        }];
        let commit = AgentCommit {
            short: "abc1234",
            subject: "Tidy",
            agent: "author e-mail a@b matches",
            files: &files,
            base: "main",
        };
        CoverageExcluded.judge(&commit)
    }

    #[test]
    fn an_added_exclusion_is_found_in_python_and_rust_with_its_line() {
        let old = "def f(x):\n    if x:\n        return 1\n    return 2\n";
        let new = old.replace("    if x:\n", "    if x:  # pragma: no cover\n");
        let found = judge("src/app.py", Some(old), &new);
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].line, found[0].path.as_deref()),
            (Some(2), Some("src/app.py"))
        );
        assert!(
            found[0].message.contains("`if x:  # pragma: no cover`"),
            "{}",
            found[0].message
        );
        // coverage.py's own regex reads `#pragma:NO COVER` too.
        assert_eq!(
            judge(
                "a.py",
                Some(old),
                &new.replace("# pragma: no cover", "#pragma:NO   cover")
            )
            .len(),
            1
        );
        let rs = "fn f() {}\n";
        for attr in [
            "#[coverage(off)]",
            "#[cfg(not(tarpaulin_include))]",
            "#[cfg_attr(coverage_nightly, coverage(off))]",
        ] {
            assert_eq!(
                judge("src/lib.rs", Some(rs), &format!("{attr}\n{rs}")).len(),
                1,
                "{attr}"
            );
        }
    }

    #[test]
    fn the_prefilter_lets_every_marker_through_in_any_case() {
        for text in [
            "x  #PRAGMA: NO COVER",
            "#[Coverage(off)]",
            "#[cfg(not(TARPAULIN))]",
        ] {
            assert!(CoverageExcluded.may_find_in(text), "{text}");
        }
        assert!(!CoverageExcluded.may_find_in("def f():\n    return 1\n"));
    }

    #[test]
    fn a_marker_already_there_moved_or_in_another_kind_of_file_is_no_finding() {
        let old = "x = 1  # pragma: no cover\n";
        assert!(judge("a.py", Some(old), &format!("y = 2\n{old}")).is_empty());
        assert!(judge("README.md", None, "# pragma: no cover\n").is_empty());
        // Two added, one finding that says so.
        let found = judge(
            "a.py",
            None,
            "a  # pragma: no cover\nb  # pragma: no branch\n",
        );
        assert_eq!(found.len(), 1);
        assert!(
            found[0].message.contains("(and 1 more)"),
            "{}",
            found[0].message
        );
    }
}
