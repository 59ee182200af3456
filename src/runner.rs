//! Which test runner a repository uses, as far as hints need to know: guard's messages and
//! `guard init` name the commands of that runner (nextest in a Rust crate, else pytest). It
//! decides nothing: the evidence is judged the same whichever runner wrote it.

use crate::source::Source;

/// The runner whose commands hints show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestRunner {
    Pytest,
    /// cargo-nextest, with a `ci` profile that writes JUnit.
    Nextest,
}

/// Files that make a repository a Python project even when it also has a `Cargo.toml`
/// (a Rust extension module tested with pytest).
const PYTHON_MARKERS: &[&str] = &["pyproject.toml", "setup.cfg", "pytest.ini", "tox.ini"];

impl TestRunner {
    /// nextest when `source` has a `Cargo.toml` at its root and none of pytest's markers,
    /// else pytest. A file that cannot be read counts as absent (this only picks hints).
    pub fn detect(source: &dyn Source) -> TestRunner {
        let has = |rel: &str| matches!(source.read(rel), Ok(Some(_)));
        if has("Cargo.toml") && !PYTHON_MARKERS.iter().any(|m| has(m)) {
            TestRunner::Nextest
        } else {
            TestRunner::Pytest
        }
    }

    /// The command that runs the suite and writes a JUnit report.
    pub fn run_command(self) -> &'static str {
        match self {
            TestRunner::Pytest => "python3 -m pytest --junitxml=junit.xml",
            TestRunner::Nextest => "cargo nextest run --profile ci",
        }
    }

    /// Where that command writes the JUnit report.
    pub fn junit_path(self) -> &'static str {
        match self {
            TestRunner::Pytest => "junit.xml",
            TestRunner::Nextest => "target/nextest/ci/junit.xml",
        }
    }

    /// The command that lists the collected tests for `--collected` and `guard deselect`.
    pub fn collect_command(self) -> &'static str {
        match self {
            TestRunner::Pytest => "python3 -m pytest --collect-only -q > collected.txt",
            TestRunner::Nextest => "cargo nextest list > collected.txt",
        }
    }

    /// The configuration the run command needs, if any, as (file, lines).
    pub fn junit_config(self) -> Option<(&'static str, &'static str)> {
        match self {
            TestRunner::Pytest => None,
            TestRunner::Nextest => Some((
                ".config/nextest.toml",
                "[profile.ci.junit]\npath = \"junit.xml\"",
            )),
        }
    }

    /// How to get a JUnit report, for `help:` lines: the command, its report, and any
    /// configuration it needs.
    pub fn junit_hint(self) -> String {
        match self.junit_config() {
            None => format!("`{}`", self.run_command()),
            Some((file, lines)) => format!(
                "`{}` with `{}` in {file} (the report is {})",
                self.run_command(),
                lines.replace('\n', " "),
                self.junit_path()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::WorkTree;
    use crate::workspace::Workspace;

    fn detect(files: &[&str]) -> TestRunner {
        let dir = tempfile::tempdir().unwrap();
        for f in files {
            std::fs::write(dir.path().join(f), "").unwrap();
        }
        let ws = Workspace::at(dir.path());
        TestRunner::detect(&WorkTree { ws: &ws })
    }

    #[test]
    fn a_cargo_project_uses_nextest_unless_pytest_is_configured() {
        assert_eq!(detect(&[]), TestRunner::Pytest);
        assert_eq!(detect(&["Cargo.toml"]), TestRunner::Nextest);
        assert_eq!(
            detect(&["Cargo.toml", "pyproject.toml"]),
            TestRunner::Pytest
        );
        assert_eq!(detect(&["Cargo.toml", "tox.ini"]), TestRunner::Pytest);
        assert_eq!(detect(&["setup.cfg"]), TestRunner::Pytest);
    }

    #[test]
    fn the_nextest_hint_names_the_profile_its_config_and_the_report() {
        assert_eq!(
            TestRunner::Nextest.junit_hint(),
            "`cargo nextest run --profile ci` with `[profile.ci.junit] path = \"junit.xml\"` in .config/nextest.toml (the report is target/nextest/ci/junit.xml)"
        );
        assert_eq!(
            TestRunner::Pytest.junit_hint(),
            "`python3 -m pytest --junitxml=junit.xml`"
        );
    }
}
