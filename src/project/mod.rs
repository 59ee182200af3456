//! The project's own layout, read from the files it already has: where its tests live (from
//! pytest's configuration and Cargo's workspace), which of them look like property tests,
//! where its fixtures and CI files are, and the coverage floor it already keeps. `guard
//! init` writes its starter ledger from this. It reads; it decides nothing about a change.

pub mod cargo;
pub mod ci;
pub mod pytest;

use std::path::Path;

use crate::error::InputError;
use crate::runner::TestRunner;
use crate::source::Source;

pub use cargo::Package;
pub use pytest::PytestConfig;

/// Directory names that hold property tests by convention (`tests/properties/`).
const PROPERTY_DIRS: &[&str] = &["properties", "property", "property_tests", "proptests"];

/// CI configuration files beyond the starter ledger's `[protect]` (`.github/workflows/**`,
/// `.github/actions/**`, `.gitlab-ci.yml`), as (a file or directory that shows it is used,
/// the glob that protects it).
const CI_FILES: &[(&str, &str)] = &[
    (".circleci", ".circleci/**"),
    (".travis.yml", ".travis.yml"),
    ("azure-pipelines.yml", "azure-pipelines.yml"),
    ("Jenkinsfile", "Jenkinsfile"),
    (".buildkite", ".buildkite/**"),
    (".drone.yml", ".drone.yml"),
    (".woodpecker.yml", ".woodpecker.yml"),
    (".woodpecker", ".woodpecker/**"),
    (".forgejo/workflows", ".forgejo/workflows/**"),
    (".gitea/workflows", ".gitea/workflows/**"),
    ("bitbucket-pipelines.yml", "bitbucket-pipelines.yml"),
    (".cirrus.yml", ".cirrus.yml"),
];

/// What `guard init` found in a project.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    pub runner: TestRunner,
    pub pytest: PytestConfig,
    /// The Cargo packages (root first), empty without a root `Cargo.toml`.
    pub packages: Vec<Package>,
    /// Test files as `[tests] paths` globs.
    pub test_globs: Vec<String>,
    /// Property paths by convention: directories named like `properties`, files named like
    /// `test_properties.py` or `properties.rs`.
    pub property_paths: Vec<String>,
    /// Test files that use a property-testing library (hypothesis, proptest, quickcheck)
    /// outside `property_paths`: offered, not chosen.
    pub property_candidates: Vec<String>,
    /// A seed corpus beside the property tests (`<property dir>/seeds`).
    pub seeds: Option<String>,
    /// Directories named `fixtures` among the test files (`tests/fixtures`).
    pub fixture_dirs: Vec<String>,
    /// CI files present that the starter `[protect]` does not name, as globs.
    pub ci_globs: Vec<String>,
    /// coverage.py's `fail_under`, where the project sets one.
    pub coverage_fail_under: Option<f64>,
}

impl Layout {
    /// Reads the layout of the project at the root of `source`. `files` lists the project's
    /// files (repository-relative, `/`-separated): git's index in a work tree, else a walk.
    pub fn scan(source: &dyn Source, files: &[String]) -> Result<Layout, InputError> {
        let runner = TestRunner::detect(source);
        let pytest = PytestConfig::read(source)?;
        let manifests: Vec<String> = files
            .iter()
            .filter(|f| f.ends_with("/Cargo.toml"))
            .cloned()
            .collect();
        let packages = cargo::packages(source, &manifests)?;

        // Python's test globs unless the project is a Rust one where pytest has nothing to
        // collect (no settings file, no file its patterns name: helper scripts are no suite).
        let pytest_files = glob_set(&pytest.python_file_globs());
        let python = runner == TestRunner::Pytest
            || pytest.file.is_some()
            || files.iter().any(|f| pytest_files.is_match(f));
        let mut test_globs = Vec::new();
        if python {
            test_globs.extend(pytest.test_globs());
        }
        for package in &packages {
            test_globs.push(format!("{}/**", package.tests_dir()));
        }
        if files.iter().any(|f| f.starts_with("tests/")) {
            test_globs.insert(0, "tests/**".to_string());
        }
        if test_globs.is_empty() {
            test_globs = ["tests/**", "**/test_*.py", "**/*_test.py"]
                .map(String::from)
                .to_vec();
        }
        dedup_keep_order(&mut test_globs);
        let test_set = glob_set(&test_globs);
        let tests: Vec<&String> = files
            .iter()
            .filter(|f| test_set.is_match(f.as_str()))
            .collect();

        // Fixtures: a `fixtures` directory at the top of a test directory (`tests/fixtures`),
        // not any directory of that name (pytest's own `example_scripts/fixtures` are
        // examples of pytest fixtures, not content-addressed inputs).
        let mut test_roots: Vec<String> = pytest
            .testpaths
            .iter()
            .map(|t| t.trim_start_matches("./").trim_end_matches('/').to_string())
            .chain(packages.iter().map(Package::tests_dir))
            .chain(["tests".to_string()])
            .collect();
        dedup_keep_order(&mut test_roots);
        let mut fixture_dirs: Vec<String> = test_roots
            .iter()
            .map(|root| format!("{root}/fixtures"))
            .filter(|dir| files.iter().any(|f| f.starts_with(&format!("{dir}/"))))
            .collect();
        let mut property_paths = Vec::new();
        let mut property_candidates = Vec::new();
        for file in &tests {
            if fixture_dirs
                .iter()
                .any(|d| file.starts_with(&format!("{d}/")))
            {
                continue;
            }
            if let Some(dir) = dir_named(file, PROPERTY_DIRS) {
                property_paths.push(dir);
                continue;
            }
            // Only test files are properties: a conftest.py or a strategies module that
            // imports hypothesis is not.
            let is_test = (file.ends_with(".py") && pytest_files.is_match(file.as_str()))
                || file.ends_with(".rs");
            let stem = Path::new(file.as_str())
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("");
            if is_test && stem.contains("propert") {
                property_paths.push(file.to_string());
            } else if is_test && uses_property_library(source, file)? {
                property_candidates.push(file.to_string());
            }
        }
        dedup_keep_order(&mut property_paths);
        dedup_keep_order(&mut fixture_dirs);
        let seeds = property_paths
            .iter()
            .map(|p| format!("{p}/seeds"))
            .find(|s| files.iter().any(|f| f.starts_with(&format!("{s}/"))));

        let ci_globs = CI_FILES
            .iter()
            .filter(|(marker, _)| {
                files
                    .iter()
                    .any(|f| f == marker || f.starts_with(&format!("{marker}/")))
            })
            .map(|(_, glob)| glob.to_string())
            .collect();

        Ok(Layout {
            runner,
            pytest,
            packages,
            test_globs,
            property_paths,
            property_candidates,
            seeds,
            fixture_dirs,
            ci_globs,
            coverage_fail_under: coverage_fail_under(source)?,
        })
    }
}

/// The path up to and including the first directory of `file` named one of `names`.
fn dir_named(file: &str, names: &[&str]) -> Option<String> {
    let parts: Vec<&str> = file.split('/').collect();
    let at = parts[..parts.len() - 1]
        .iter()
        .position(|p| names.contains(p))?;
    Some(parts[..=at].join("/"))
}

/// Whether a test file imports a property-testing library: hypothesis, proptest, quickcheck.
fn uses_property_library(source: &dyn Source, file: &str) -> Result<bool, InputError> {
    let Some(bytes) = source.read(file)? else {
        return Ok(false);
    };
    let text = String::from_utf8_lossy(&bytes);
    Ok(text.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with("from hypothesis")
            || l.starts_with("import hypothesis")
            || l.starts_with("use proptest")
            || l.starts_with("proptest!")
            || l.starts_with("use quickcheck")
            || l.starts_with("#[quickcheck]")
    }))
}

/// coverage.py's `[report] fail_under`, from `.coveragerc`, `setup.cfg` (`[coverage:report]`)
/// or `pyproject.toml` (`[tool.coverage.report]`).
fn coverage_fail_under(source: &dyn Source) -> Result<Option<f64>, InputError> {
    if let Some(bytes) = source.read("pyproject.toml")? {
        let text = String::from_utf8_lossy(&bytes);
        // A pyproject.toml that does not parse was reported by PytestConfig::read.
        if let Ok(doc) = toml::from_str::<toml::Table>(&text) {
            let value = doc
                .get("tool")
                .and_then(|t| t.get("coverage"))
                .and_then(|t| t.get("report"))
                .and_then(|t| t.get("fail_under"));
            if let Some(v) = value.and_then(|v| v.as_float().or(v.as_integer().map(|i| i as f64))) {
                return Ok(Some(v));
            }
        }
    }
    for (file, section) in [(".coveragerc", "report"), ("setup.cfg", "coverage:report")] {
        let Some(bytes) = source.read(file)? else {
            continue;
        };
        let mut parser = configparser::ini::Ini::new();
        if let Ok(map) = parser.read(String::from_utf8_lossy(&bytes).into_owned()) {
            let value = map
                .get(section)
                .and_then(|s| s.get("fail_under"))
                .and_then(|v| v.as_deref())
                .and_then(|v| v.trim().parse::<f64>().ok());
            if value.is_some() {
                return Ok(value);
            }
        }
    }
    Ok(None)
}

fn glob_set(globs: &[String]) -> globset::GlobSet {
    let mut builder = globset::GlobSetBuilder::new();
    for g in globs {
        if let Ok(glob) = globset::GlobBuilder::new(g).literal_separator(true).build() {
            builder.add(glob);
        }
    }
    builder
        .build()
        .unwrap_or_else(|_| globset::GlobSet::empty())
}

fn dedup_keep_order(items: &mut Vec<String>) {
    let mut seen = std::collections::HashSet::new();
    items.retain(|i| seen.insert(i.clone()));
}

/// The project's files under `root` when it is not a git work tree: a walk that skips git's
/// directory, the usual build, cache and environment directories, and symlinks (hidden
/// directories such as `.github` and `.config` are read: CI and nextest live there).
pub fn walk_files(root: &Path) -> std::io::Result<Vec<String>> {
    const SKIP: &[&str] = &[
        ".git",
        ".venv",
        ".tox",
        ".nox",
        ".hypothesis",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        "target",
        "node_modules",
        "venv",
        "__pycache__",
        "build",
        "dist",
    ];
    let mut out = Vec::new();
    let mut stack = vec![String::new()];
    while let Some(rel) = stack.pop() {
        for entry in std::fs::read_dir(root.join(&rel))? {
            let entry = entry?;
            let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                continue;
            };
            let path = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            let kind = entry.file_type()?;
            if kind.is_dir() && !SKIP.contains(&name.as_str()) {
                stack.push(path);
            } else if kind.is_file() {
                out.push(path);
            }
        }
    }
    out.sort_unstable();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::WorkTree;
    use crate::workspace::Workspace;

    fn scan(files: &[(&str, &str)]) -> Layout {
        let dir = tempfile::tempdir().unwrap();
        for (rel, text) in files {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let listed = walk_files(dir.path()).unwrap();
        let ws = Workspace::at(dir.path());
        Layout::scan(&WorkTree { ws: &ws }, &listed).unwrap()
    }

    #[test]
    fn a_pytest_project_with_hypothesis_and_no_property_directory() {
        let l = scan(&[
            (
                "pyproject.toml",
                "[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n[tool.coverage.report]\nfail_under = 92\n",
            ),
            ("tests/test_a.py", "def test_a():\n    assert 1\n"),
            (
                "tests/test_b.py",
                "from hypothesis import given\n\n@given(...)\ndef test_b(x):\n    assert x\n",
            ),
            ("tests/fixtures/data.json", "{}"),
            (".circleci/config.yml", ""),
        ]);
        assert_eq!(l.runner, TestRunner::Pytest);
        assert_eq!(l.test_globs, ["tests/**", "**/test_*.py", "**/*_test.py"]);
        assert!(l.property_paths.is_empty());
        assert_eq!(l.property_candidates, ["tests/test_b.py"]);
        assert_eq!(l.fixture_dirs, ["tests/fixtures"]);
        assert_eq!(l.ci_globs, [".circleci/**"]);
        assert_eq!(l.coverage_fail_under, Some(92.0));
        assert_eq!(l.seeds, None);
    }

    #[test]
    fn a_property_directory_with_seeds_and_a_properties_file() {
        let l = scan(&[
            (
                "tests/properties/test_inv.py",
                "def test_x():\n    assert 1\n",
            ),
            ("tests/properties/seeds/a.txt", "1"),
            (
                "testing/test_properties.py",
                "def test_p():\n    assert 1\n",
            ),
        ]);
        assert_eq!(
            l.property_paths,
            ["testing/test_properties.py", "tests/properties"]
        );
        assert_eq!(l.seeds.as_deref(), Some("tests/properties/seeds"));
    }

    #[test]
    fn a_cargo_workspace_tests_each_member() {
        let l = scan(&[
            (
                "Cargo.toml",
                "[package]\nname = \"rand\"\n[workspace]\nmembers = [\"rand_distr\"]\n",
            ),
            (
                "rand_distr/Cargo.toml",
                "[package]\nname = \"rand_distr\"\n",
            ),
            (
                "rand_distr/tests/value_stability.rs",
                "#[test]\nfn t() {}\n",
            ),
            (
                "rand_distr/tests/props.rs",
                "use proptest::prelude::*;\nproptest! {}\n",
            ),
        ]);
        assert_eq!(l.runner, TestRunner::Nextest);
        assert_eq!(l.test_globs, ["tests/**", "rand_distr/tests/**"]);
        assert_eq!(l.property_candidates, ["rand_distr/tests/props.rs"]);
        assert_eq!(l.packages.len(), 2);
    }

    #[test]
    fn a_non_default_pytest_layout() {
        let l = scan(&[
            (
                "pyproject.toml",
                "[tool.pytest]\npython_files = [\"test_*.py\", \"testing/python/*.py\"]\ntestpaths = [\"testing\"]\n",
            ),
            ("testing/python/approx.py", "def test_x():\n    assert 1\n"),
        ]);
        assert_eq!(
            l.test_globs,
            ["testing/**", "**/test_*.py", "**/testing/python/*.py"]
        );
    }
}
