//! The starter ledger `guard init` writes: the embedded ledger with the tables that depend
//! on the project (`[properties]`, the fixture paths, the coverage floor, `[tests] paths`,
//! CI files in `[protect]`) written from what `project::Layout` found, and what it could not
//! decide left as commented choices.

use crate::policy::ledger::EMBEDDED_LEDGER;
use crate::project::Layout;

/// The ledger text for `layout`. It parses as a ledger (tested), so `guard lint` reads it.
pub fn starter_ledger(layout: &Layout) -> String {
    let mut text = replace_table(EMBEDDED_LEDGER, "properties", &properties_table(layout));
    if !layout.fixture_dirs.is_empty() {
        let dirs: Vec<String> = layout
            .fixture_dirs
            .iter()
            .map(|d| format!("{d}/"))
            .collect();
        text = replace_key(&text, "fixtures", "paths", &toml_list(&dirs));
    }
    if let Some(floor) = layout.coverage_fail_under {
        text = replace_key(
            &text,
            "coverage",
            "min_proven",
            &format!("{floor:.1}  # coverage.py's fail_under in this project"),
        );
    }
    text = replace_key(&text, "tests", "paths", &toml_list(&layout.test_globs));
    if !layout.ci_globs.is_empty() {
        let mut protect: Vec<String> = [
            ".github/workflows/**",
            ".github/actions/**",
            ".gitlab-ci.yml",
        ]
        .map(String::from)
        .to_vec();
        protect.extend(layout.ci_globs.iter().cloned());
        text = replace_key(&text, "protect", "paths", &toml_list(&protect));
    }
    text
}

fn properties_table(layout: &Layout) -> String {
    let mut out = String::from("[properties]\n");
    let found = !layout.property_paths.is_empty();
    if found {
        out.push_str(
            "# Invariant tests. Every test under these paths must pass, at least one must run, and\n\
             # agents may not change them or their seeds. `guard init` took these from their names\n\
             # (a directory named properties, a file named like test_properties.py).\n",
        );
        out.push_str(&format!("paths = {}\n", toml_list(&layout.property_paths)));
        out.push_str("required = true\n");
    } else {
        out.push_str(
            "# Invariant tests. Every test under these paths must pass, at least one must run, and\n\
             # agents may not change them or their seeds. `guard init` found none by name, so none\n\
             # are required yet: put them under tests/properties/ (or list files here) and set\n\
             # `required = true`.\n",
        );
        out.push_str("paths = []\nrequired = false\n");
    }
    match &layout.seeds {
        Some(seeds) => out.push_str(&format!(
            "# Read-only seed corpus the property tests read; it must exist and not be empty.\nseeds = {}\n",
            toml_str(seeds)
        )),
        None => out.push_str(
            "# A read-only seed corpus the property tests read (it must exist and not be empty);\n\
             # `guard init` found none.\n# seeds = \"tests/properties/seeds\"\n",
        ),
    }
    out.push_str(
        "# A property file with fewer non-comment lines than this, or without assert/raise, is thin.\n\
         min_lines = 8\n\
         # Which files under `paths` are property test files (globs on the file name).\n\
         files = [\"test_*.py\", \"*_test.py\", \"*.rs\"]\n",
    );
    if !layout.property_candidates.is_empty() {
        out.push_str(
            "# These test files use a property-testing library (hypothesis, proptest, quickcheck).\n\
             # To hold them as properties (they must pass; agents may not change them), add them\n\
             # to `paths` with `required = true`:\n",
        );
        for file in &layout.property_candidates {
            out.push_str(&format!("#   {},\n", toml_str(file)));
        }
    }
    out
}

/// `text` with the table `[name]` (its header up to the next table header) replaced by
/// `table`. The template holds every table replaced here (tested).
fn replace_table(text: &str, name: &str, table: &str) -> String {
    let header = format!("[{name}]\n");
    let Some(start) = text.find(&format!("\n{header}")).map(|i| i + 1) else {
        debug_assert!(false, "the starter ledger has no [{name}]");
        return text.to_string();
    };
    let after = start + header.len();
    let end = text[after..]
        .find("\n[")
        .map(|i| after + i + 1)
        .unwrap_or(text.len());
    format!("{}{table}\n{}", &text[..start], &text[end..])
}

/// `text` with the line `key = ...` of the table `[name]` given `value`.
fn replace_key(text: &str, name: &str, key: &str, value: &str) -> String {
    let header = format!("\n[{name}]\n");
    let Some(start) = text.find(&header) else {
        debug_assert!(false, "the starter ledger has no [{name}]");
        return text.to_string();
    };
    let body = start + header.len();
    let end = text[body..]
        .find("\n[")
        .map(|i| body + i)
        .unwrap_or(text.len());
    let prefix = format!("{key} = ");
    let mut at = body;
    for line in text[body..end].split_inclusive('\n') {
        if line.starts_with(&prefix) {
            return format!(
                "{}{prefix}{value}\n{}",
                &text[..at],
                &text[at + line.len()..]
            );
        }
        at += line.len();
    }
    debug_assert!(false, "[{name}] of the starter ledger has no {key}");
    text.to_string()
}

fn toml_str(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

fn toml_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| toml_str(s)).collect();
    format!("[{}]", quoted.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::ledger::{Policy, PolicySource};
    use crate::project::{Layout, PytestConfig};
    use crate::runner::TestRunner;
    use std::path::Path;

    fn layout() -> Layout {
        Layout {
            runner: TestRunner::Pytest,
            pytest: PytestConfig::default(),
            packages: Vec::new(),
            test_globs: vec!["testing/**".into(), "**/testing/python/*.py".into()],
            property_paths: Vec::new(),
            property_candidates: vec!["testing/test_h.py".into()],
            seeds: None,
            fixture_dirs: Vec::new(),
            ci_globs: Vec::new(),
            coverage_fail_under: None,
        }
    }

    #[test]
    fn the_bots_the_starter_ledger_offers_parse_once_uncommented() {
        let text = starter_ledger(&layout());
        // The commented block from its first `# [[bots]]` to the next line that is no comment.
        let mut in_block = false;
        let uncommented: String = text
            .lines()
            .map(|l| {
                in_block = (in_block || l == "# [[bots]]") && l.starts_with('#');
                match l.strip_prefix("# ").filter(|_| in_block) {
                    Some(rest) => rest.to_string(),
                    None => l.to_string(),
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        let policy = parse(&uncommented);
        let kinds: Vec<&str> = policy
            .bots
            .allowances
            .iter()
            .map(|a| a.change.name())
            .collect();
        assert_eq!(kinds, ["action-version", "pre-commit-rev", "lockfile-pins"]);
        assert_eq!(
            policy.bots.allowances[0].who,
            "49699333+dependabot[bot]@users.noreply.github.com"
        );
        // Commented, they allow nothing.
        assert!(parse(&text).bots.allowances.is_empty());
    }

    fn parse(text: &str) -> Policy {
        Policy::parse(
            Path::new("qa/merge_ledger.toml"),
            text,
            PolicySource::File("qa/merge_ledger.toml".into()),
        )
        .unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    #[test]
    fn no_property_tests_none_required_and_the_project_test_paths() {
        let text = starter_ledger(&layout());
        let p = parse(&text);
        assert!(!p.properties.required);
        assert!(p.properties.paths.is_empty());
        assert_eq!(p.properties.seeds, None);
        assert_eq!(p.tests.paths, ["testing/**", "**/testing/python/*.py"]);
        assert!(p.tests.is_test_file("testing/python/approx.py"));
        assert!(text.contains("#   \"testing/test_h.py\",\n"), "{text}");
        // Everything else is the embedded ledger's.
        let embedded = Policy::embedded();
        assert_eq!(p.fixtures.paths, embedded.fixtures.paths);
        assert_eq!(p.protect.paths, embedded.protect.paths);
        assert_eq!(p.coverage.min_proven, embedded.coverage.min_proven);
    }

    #[test]
    fn found_properties_seeds_fixtures_ci_and_a_floor() {
        let mut l = layout();
        l.property_paths = vec!["tests/properties".into(), "tests/test_props.py".into()];
        l.seeds = Some("tests/properties/seeds".into());
        l.fixture_dirs = vec!["tests/fixtures".into(), "sub/tests/fixtures".into()];
        l.ci_globs = vec![".circleci/**".into()];
        l.coverage_fail_under = Some(92.5);
        let p = parse(&starter_ledger(&l));
        assert!(p.properties.required);
        assert_eq!(
            p.properties.paths,
            ["tests/properties", "tests/test_props.py"]
        );
        assert_eq!(
            p.properties.seeds.as_deref(),
            Some("tests/properties/seeds")
        );
        assert_eq!(p.fixtures.paths, ["tests/fixtures", "sub/tests/fixtures"]);
        assert_eq!(p.coverage.min_proven, 92.5);
        assert!(p.protect.paths.contains(&".circleci/**".to_string()));
        assert!(p.protect.paths.contains(&".gitlab-ci.yml".to_string()));
    }
}
