//! pytest's own configuration, read as pytest finds it: the first of `pytest.ini`,
//! `.pytest.ini`, `pytest.toml`, `.pytest.toml`, `pyproject.toml` (with `[tool.pytest]` or
//! `[tool.pytest.ini_options]`), `tox.ini` (with `[pytest]`) and `setup.cfg` (with
//! `[tool:pytest]`) at the repository root. Only the keys that say where tests live and what
//! pytest collects: `testpaths`, `python_files`, `python_classes`, `python_functions`.
//!
//! It does not judge the file (harness files are protected and judged elsewhere); a file
//! that does not parse is an error, since pytest would refuse it too.

use crate::error::InputError;
use crate::source::Source;

/// What pytest collects, with pytest's defaults for the keys a file leaves out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PytestConfig {
    /// The file the settings came from, `None` when pytest has no configuration file.
    pub file: Option<String>,
    /// Directories (or globs) pytest collects from when run without arguments; empty means
    /// the directory it runs in.
    pub testpaths: Vec<String>,
    /// Globs over test file names (`test_*.py`) or, with a `/`, over the end of the path
    /// (`testing/python/*.py`).
    pub python_files: Vec<String>,
    pub python_classes: Vec<String>,
    pub python_functions: Vec<String>,
}

impl Default for PytestConfig {
    fn default() -> Self {
        PytestConfig {
            file: None,
            testpaths: Vec::new(),
            python_files: vec!["test_*.py".into(), "*_test.py".into()],
            python_classes: vec!["Test".into()],
            python_functions: vec!["test".into()],
        }
    }
}

/// How one candidate file holds pytest's settings.
#[derive(Clone, Copy)]
enum Form {
    /// An INI file; `always` when the file is pytest's whatever its sections (pytest.ini).
    Ini { section: &'static str, always: bool },
    /// A TOML file whose `[pytest]` table holds native values (pytest.toml).
    Toml,
    /// pyproject.toml: `[tool.pytest]` (native values) or `[tool.pytest.ini_options]`.
    Pyproject,
}

/// pytest's order: the first file that holds a configuration wins.
const CANDIDATES: &[(&str, Form)] = &[
    (
        "pytest.ini",
        Form::Ini {
            section: "pytest",
            always: true,
        },
    ),
    (
        ".pytest.ini",
        Form::Ini {
            section: "pytest",
            always: true,
        },
    ),
    ("pytest.toml", Form::Toml),
    (".pytest.toml", Form::Toml),
    ("pyproject.toml", Form::Pyproject),
    (
        "tox.ini",
        Form::Ini {
            section: "pytest",
            always: false,
        },
    ),
    (
        "setup.cfg",
        Form::Ini {
            section: "tool:pytest",
            always: false,
        },
    ),
];

/// The settings of one file: each key with its value split into words.
type Settings = Vec<(String, Vec<String>)>;

const KEYS: [&str; 4] = [
    "testpaths",
    "python_files",
    "python_classes",
    "python_functions",
];

impl PytestConfig {
    /// Reads pytest's configuration at the root of `source`; pytest's defaults when there is
    /// none.
    pub fn read(source: &dyn Source) -> Result<PytestConfig, InputError> {
        for (file, form) in CANDIDATES {
            let Some(bytes) = source.read(file)? else {
                continue;
            };
            let text = String::from_utf8(bytes)
                .map_err(|_| InputError::new(file, "is not UTF-8, so pytest cannot read it"))?;
            let values = match form {
                Form::Ini { section, always } => ini_values(file, &text, section, *always)?,
                Form::Toml => toml_values(file, &text, &["pytest"])?,
                Form::Pyproject => match toml_values(file, &text, &["tool", "pytest"])? {
                    // `[tool.pytest]` holding only `ini_options` is the older form.
                    Some(v) if v.iter().any(|(k, _)| k != "ini_options") => Some(v),
                    _ => toml_values(file, &text, &["tool", "pytest", "ini_options"])?,
                },
            };
            if let Some(values) = values {
                return Ok(PytestConfig::from_values(file, values));
            }
        }
        Ok(PytestConfig::default())
    }

    fn from_values(file: &str, values: Settings) -> PytestConfig {
        let mut config = PytestConfig {
            file: Some(file.to_string()),
            ..PytestConfig::default()
        };
        for (key, value) in values {
            match key.as_str() {
                "testpaths" => config.testpaths = value,
                "python_files" => config.python_files = value,
                "python_classes" => config.python_classes = value,
                "python_functions" => config.python_functions = value,
                _ => {}
            }
        }
        config
    }

    /// The test files as `[tests] paths` globs: everything under each of `testpaths` (helpers
    /// and data beside the tests included, as the default `tests/**` does), and every file
    /// `python_files` names anywhere (a pattern with a `/` matches the end of a path, as
    /// pytest's `fnmatch_ex` does).
    pub fn test_globs(&self) -> Vec<String> {
        let mut globs = self.testpath_globs();
        globs.extend(self.python_file_globs());
        globs.dedup();
        globs
    }

    /// What each of `testpaths` holds, as a glob: everything under a directory, or the one
    /// test module a path ending in `.py` names (`testpaths = ["tests", "ci/test_ci.py"]`).
    pub fn testpath_globs(&self) -> Vec<String> {
        self.testpaths
            .iter()
            .map(|t| t.trim_start_matches("./").trim_end_matches('/'))
            .filter(|t| inside(t))
            .map(|t| match t.ends_with(".py") {
                true => t.to_string(),
                false => format!("{t}/**"),
            })
            .collect()
    }

    /// Every file `python_files` names, anywhere, as a glob.
    pub fn python_file_globs(&self) -> Vec<String> {
        self.python_files
            .iter()
            .map(|p| p.trim_start_matches("./"))
            .filter(|p| inside(p))
            .map(|p| format!("**/{p}"))
            .collect()
    }
}

/// Whether a path pytest's settings name lies inside the repository, written as the ledger
/// takes it: an absolute path, `..` or a backslash names nothing guard reads in a revision.
fn inside(p: &str) -> bool {
    !p.is_empty() && p != "." && !p.contains('\\') && crate::workspace::check_relative(p).is_ok()
}

/// The settings of `section` in an INI file, each split as pytest splits them (shell words);
/// `None` when the file has no such section and is not pytest's own.
fn ini_values(
    file: &str,
    text: &str,
    section: &str,
    always: bool,
) -> Result<Option<Settings>, InputError> {
    let mut defaults = configparser::ini::IniDefault::default();
    defaults.enable_inline_comments = false;
    defaults.case_sensitive = true;
    // iniconfig continues a value on indented lines (`testpaths =` then one path a line).
    defaults.multiline = true;
    let mut parser = configparser::ini::Ini::new_from_defaults(defaults);
    let map = parser
        .read(text.to_string())
        .map_err(|e| InputError::new(file, format!("does not parse as INI ({e})")))?;
    let Some(values) = map.get(section) else {
        return Ok(always.then(Vec::new));
    };
    let mut out = Vec::new();
    for key in KEYS {
        if let Some(Some(value)) = values.get(key) {
            out.push((key.to_string(), split_words(file, key, value)?));
        }
    }
    Ok(Some(out))
}

/// The settings in the table at `table` of a TOML file, `None` when there is no such table.
/// A value is a list of strings or one string of shell words (the `ini_options` form).
fn toml_values(file: &str, text: &str, table: &[&str]) -> Result<Option<Settings>, InputError> {
    let doc: toml::Table = toml::from_str(text)
        .map_err(|e| InputError::new(file, format!("does not parse as TOML ({})", e.message())))?;
    let mut at = &doc;
    for key in table {
        match at.get(*key) {
            Some(toml::Value::Table(t)) => at = t,
            _ => return Ok(None),
        }
    }
    let mut out = Vec::new();
    for (key, value) in at {
        if !KEYS.contains(&key.as_str()) {
            // Other keys (ini_options, addopts, ...) say nothing of where tests live.
            out.push((key.clone(), Vec::new()));
            continue;
        }
        let words = match value {
            toml::Value::String(s) => split_words(file, key, s)?,
            toml::Value::Array(items) => items
                .iter()
                .map(|v| match v {
                    toml::Value::String(s) => Ok(s.clone()),
                    other => Err(InputError::new(
                        file,
                        format!("`{key}` holds {other}, not a string"),
                    )),
                })
                .collect::<Result<_, _>>()?,
            other => {
                return Err(InputError::new(
                    file,
                    format!("`{key}` is {other}, not a string or a list of strings"),
                ));
            }
        };
        out.push((key.clone(), words));
    }
    Ok(Some(out))
}

fn split_words(file: &str, key: &str, value: &str) -> Result<Vec<String>, InputError> {
    shlex::split(value).ok_or_else(|| {
        InputError::new(
            file,
            format!("`{key}` has an unclosed quote, so pytest cannot read it"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::WorkTree;
    use crate::workspace::Workspace;

    fn read(files: &[(&str, &str)]) -> Result<PytestConfig, InputError> {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        let ws = Workspace::at(dir.path());
        PytestConfig::read(&WorkTree { ws: &ws })
    }

    #[test]
    fn no_file_gives_pytests_defaults() {
        let c = read(&[]).unwrap();
        assert_eq!(c.file, None);
        assert_eq!(c.test_globs(), ["**/test_*.py", "**/*_test.py"]);
    }

    #[test]
    fn pytests_own_layout_in_native_toml() {
        // As pytest's own pyproject.toml has it.
        let c = read(&[(
            "pyproject.toml",
            "[tool.pytest]\nminversion = \"2.0\"\npython_files = [\"test_*.py\", \"*_test.py\", \"testing/python/*.py\"]\npython_classes = [\"Test\", \"Acceptance\"]\ntestpaths = [\"testing\"]\n",
        )])
        .unwrap();
        assert_eq!(c.file.as_deref(), Some("pyproject.toml"));
        assert_eq!(c.python_classes, ["Test", "Acceptance"]);
        assert_eq!(c.python_functions, ["test"]);
        assert_eq!(
            c.test_globs(),
            [
                "testing/**",
                "**/test_*.py",
                "**/*_test.py",
                "**/testing/python/*.py"
            ]
        );
    }

    #[test]
    fn ini_options_strings_are_split_as_shell_words() {
        let c = read(&[(
            "pyproject.toml",
            "[tool.pytest.ini_options]\ntestpaths = \"tests  'odd dir'\"\npython_files = [\"check_*.py\"]\n",
        )])
        .unwrap();
        assert_eq!(c.testpaths, ["tests", "odd dir"]);
        assert_eq!(c.python_files, ["check_*.py"]);
    }

    #[test]
    fn pytest_ini_wins_even_empty_and_tox_without_a_section_is_skipped() {
        let c = read(&[
            ("pytest.ini", "# nothing\n"),
            ("setup.cfg", "[tool:pytest]\ntestpaths = src\n"),
        ])
        .unwrap();
        assert_eq!(c.file.as_deref(), Some("pytest.ini"));
        assert!(c.testpaths.is_empty());
        let c = read(&[
            ("tox.ini", "[tox]\nenvlist = py3\n"),
            (
                "setup.cfg",
                "[tool:pytest]\ntestpaths =\n    t1\n    t2\npython_functions = check_*\n",
            ),
        ])
        .unwrap();
        assert_eq!(c.file.as_deref(), Some("setup.cfg"));
        assert_eq!(c.testpaths, ["t1", "t2"]);
        assert_eq!(c.python_functions, ["check_*"]);
    }

    #[test]
    fn paths_outside_the_repository_are_left_out() {
        let c = read(&[(
            "pytest.ini",
            "[pytest]\ntestpaths = tests ../elsewhere /abs 'win\\dir'\npython_files = check_*.py ../x.py\n",
        )])
        .unwrap();
        assert_eq!(c.test_globs(), ["tests/**", "**/check_*.py"]);
        assert_eq!(c.python_file_globs(), ["**/check_*.py"]);
    }

    #[test]
    fn a_testpath_naming_a_module_is_that_file() {
        let c = read(&[(
            "pyproject.toml",
            "[tool.pytest.ini_options]\ntestpaths = [\"tests\", \"./ci/test_budget.py\"]\n",
        )])
        .unwrap();
        assert_eq!(c.testpath_globs(), ["tests/**", "ci/test_budget.py"]);
    }

    #[test]
    fn a_file_pytest_cannot_read_is_an_error_naming_it() {
        let e = read(&[("pyproject.toml", "[tool.pytest\n")]).unwrap_err();
        assert_eq!(e.path, std::path::Path::new("pyproject.toml"));
        assert!(e.message.contains("TOML"), "{}", e.message);
        let e = read(&[("pytest.ini", "[pytest]\ntestpaths = 'a\n")]).unwrap_err();
        assert!(e.message.contains("unclosed quote"), "{}", e.message);
        let e = read(&[("pytest.toml", "[pytest]\ntestpaths = 3\n")]).unwrap_err();
        assert!(e.message.contains("`testpaths` is 3"), "{}", e.message);
    }
}
