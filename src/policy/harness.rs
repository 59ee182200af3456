//! The test harness's shared config files, section by section: whether the sections of a
//! `pyproject.toml` or `Cargo.toml` (TOML tables), a `package.json` (JSON keys) or a
//! `setup.cfg` (INI sections) that decide how tests run differ between two versions of the
//! file. Owns the section selectors and the comparison; which files are harness is the
//! ledger's, reading them from git is `git::protected`'s.
//!
//! Files are compared parsed, not as text: an agent may add a dependency to `[project]` or
//! reformat a table, but not change a value pytest, coverage or a plugin reads. Whatever
//! guard cannot read the way those tools do counts as changed (fail closed):
//!
//! - a file that does not parse, or is not UTF-8;
//! - for INI files, anything pytest's reader (iniconfig) and Python's `configparser` split
//!   into lines or sections differently from ours: control characters and Unicode line
//!   separators (Python's `str.splitlines()` breaks lines at `\x1c`, `\x0c`, a lone `\r`, ...),
//!   and indented lines that start with `[`, or lines that start with `[` and do not end with
//!   `]` (a header to one reader, a value to another).
//!   Section names are matched loosely (case-insensitive, and also as iniconfig reads a header
//!   with a comment after it), and lines before the first header always count.

use std::collections::BTreeMap;

use std::sync::OnceLock;

use globset::{Glob, GlobBuilder, GlobMatcher};

/// How a file is parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// TOML; selectors are dotted table names.
    Toml,
    /// JSON (`package.json`); selectors are dotted key paths, as for TOML.
    Json,
    /// Python-style INI; selectors are section-name globs.
    Ini,
}

impl Format {
    /// The format of files matched by `file_glob`: TOML for `*.toml`, JSON for `*.json`,
    /// INI otherwise.
    pub fn of(file_glob: &str) -> Format {
        let lower = file_glob.to_ascii_lowercase();
        if lower.ends_with(".toml") {
            Format::Toml
        } else if lower.ends_with(".json") {
            Format::Json
        } else {
            Format::Ini
        }
    }
}

/// The harness sections of one kind of file.
#[derive(Debug, Clone)]
pub struct Scope {
    format: Format,
    selectors: Vec<Selector>,
}

#[derive(Debug, Clone)]
enum Selector {
    /// A table and everything in it, by key path (`tool.pytest` covers
    /// `tool.pytest.ini_options`).
    Table { text: String, keys: Vec<String> },
    /// INI sections whose names match a glob (`coverage:*`).
    Section { text: String, glob: SectionGlob },
}

/// A section-name glob, checked when the ledger is read and compiled the first time a
/// harness file's sections are compared: most runs compare none, and compiling each was a
/// twentieth of a one-commit push's hook run.
#[derive(Debug, Clone)]
struct SectionGlob {
    glob: Glob,
    matcher: OnceLock<GlobMatcher>,
}

impl SectionGlob {
    fn is_match(&self, name: &str) -> bool {
        self.matcher
            .get_or_init(|| self.glob.compile_matcher())
            .is_match(name)
    }
}

/// What differs between two versions of a file, as far as its harness sections go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Same,
    /// The sections that differ (selector texts for TOML, section names for INI).
    Differs(Vec<String>),
    /// The file counts as changed as a whole, for the reason given: one version could not be
    /// read as the tools read it, or is no regular file.
    Whole(String),
}

impl Verdict {
    /// How a change report describes it; `None` for `Same`.
    pub fn describe(&self) -> Option<String> {
        match self {
            Verdict::Same => None,
            Verdict::Differs(names) => {
                let verb = if names.len() == 1 {
                    "differs"
                } else {
                    "differ"
                };
                let names: Vec<String> = names.iter().map(|n| format!("[{n}]")).collect();
                Some(format!("{} {verb}", names.join(", ")))
            }
            Verdict::Whole(why) => Some(format!("{why}: the whole file counts")),
        }
    }
}

/// The name given to lines before the first INI header (no real header can hold a NUL:
/// files with control characters are refused before parsing).
const BEFORE_ANY_HEADER: &str = "\0before the first section";

impl Scope {
    /// The scope of `selectors` in files of `format`. Errors name the selector's index.
    pub fn parse(format: Format, selectors: &[String]) -> Result<Scope, (usize, String)> {
        let selectors = selectors
            .iter()
            .enumerate()
            .map(|(i, text)| {
                let parsed = match format {
                    Format::Toml | Format::Json => table_keys(text).map(|keys| Selector::Table {
                        text: text.clone(),
                        keys,
                    }),
                    Format::Ini => section_glob(text).map(|glob| Selector::Section {
                        text: text.clone(),
                        glob,
                    }),
                };
                parsed.map_err(|e| (i, e))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Scope { format, selectors })
    }

    /// The selectors, as the ledger writes them.
    pub fn selectors(&self) -> Vec<&str> {
        self.selectors
            .iter()
            .map(|s| match s {
                Selector::Table { text, .. } | Selector::Section { text, .. } => text.as_str(),
            })
            .collect()
    }

    /// Whether the harness sections differ from `old` to `new` (`None`: the file is absent).
    pub fn compare(&self, old: Option<&[u8]>, new: Option<&[u8]>) -> Verdict {
        let read = |bytes: Option<&[u8]>| -> Result<Sections, String> {
            let Some(bytes) = bytes else {
                return Ok(BTreeMap::new());
            };
            let text = std::str::from_utf8(bytes)
                .map_err(|e| format!("not UTF-8 (byte {})", e.valid_up_to()))?;
            match self.format {
                Format::Toml => self.toml_sections(text),
                Format::Json => self.json_sections(text),
                Format::Ini => self.ini_sections(text),
            }
        };
        let (before, after) = match (read(old), read(new)) {
            (Ok(before), Ok(after)) => (before, after),
            (Err(why), _) => return Verdict::Whole(format!("the old version {why}")),
            (_, Err(why)) => return Verdict::Whole(format!("the new version {why}")),
        };
        let mut differs: Vec<String> = before
            .keys()
            .chain(after.keys())
            .filter(|name| before.get(*name) != after.get(*name))
            .cloned()
            .collect();
        differs.sort();
        differs.dedup();
        if differs.is_empty() {
            Verdict::Same
        } else {
            Verdict::Differs(differs)
        }
    }

    /// The selected tables of a TOML document, by selector (absent tables left out).
    fn toml_sections(&self, text: &str) -> Result<Sections, String> {
        let doc: toml::Table = toml::from_str(text)
            .map_err(|e| format!("does not parse as TOML ({})", e.message().trim()))?;
        let mut out = Sections::new();
        for selector in &self.selectors {
            let Selector::Table { text, keys } = selector else {
                continue;
            };
            let mut value: Option<&toml::Value> = None;
            let mut table = Some(&doc);
            for key in keys {
                value = table.and_then(|t| t.get(key));
                table = value.and_then(toml::Value::as_table);
            }
            if let Some(value) = value {
                out.insert(text.clone(), Section::Toml(value.clone()));
            }
        }
        Ok(out)
    }

    /// The selected values of a JSON document, by selector (absent ones left out). A key
    /// given twice counts as its last value, as `JSON.parse` (npm) reads it.
    fn json_sections(&self, text: &str) -> Result<Sections, String> {
        let doc: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("does not parse as JSON ({e})"))?;
        let mut out = Sections::new();
        for selector in &self.selectors {
            let Selector::Table { text, keys } = selector else {
                continue;
            };
            let mut value = Some(&doc);
            for key in keys {
                value = value.and_then(|v| v.get(key));
            }
            if let Some(value) = value {
                out.insert(text.clone(), Section::Json(value.clone()));
            }
        }
        Ok(out)
    }

    /// The selected sections of an INI file, by section name, with the lines before the
    /// first header; refuses what INI readers split differently.
    fn ini_sections(&self, text: &str) -> Result<Sections, String> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut chars = text.char_indices().peekable();
        while let Some((_, c)) = chars.next() {
            let line_end_crlf = c == '\r' && chars.peek().is_some_and(|(_, n)| *n == '\n');
            let odd = (c.is_control() && c != '\t' && c != '\n' && !line_end_crlf)
                || c == '\u{2028}'
                || c == '\u{2029}';
            if odd {
                return Err(format!(
                    "holds U+{:04X}, which INI readers take as a line break or not",
                    c as u32
                ));
            }
        }
        for (n, line) in text.lines().enumerate() {
            if line.starts_with(char::is_whitespace) && line.trim_start().starts_with('[') {
                return Err(format!(
                    "line {}: an indented line starting with `[` is a section header to one INI reader and a value to another",
                    n + 1
                ));
            }
            if line.starts_with('[') && !iniconfig_header(line) {
                return Err(format!(
                    "line {}: a line starting with `[` that does not end with `]` is a section header to configparser and a value line to pytest's reader",
                    n + 1
                ));
            }
        }
        let mut defaults = configparser::ini::IniDefault::default();
        defaults.default_section = BEFORE_ANY_HEADER.to_string();
        // pytest reads `addopts = -q ;--x` with the `;` part: no inline comments.
        defaults.enable_inline_comments = false;
        // Key names are case-sensitive to pytest.
        defaults.case_sensitive = true;
        defaults.multiline = true;
        let mut parser = configparser::ini::Ini::new_from_defaults(defaults);
        let parsed = parser
            .read(text.to_string())
            .map_err(|e| format!("does not parse as INI ({e})"))?;
        let mut out = Sections::new();
        for (name, values) in parsed {
            if name == BEFORE_ANY_HEADER || self.selects_section(&name) {
                let values: BTreeMap<String, Option<String>> = values.into_iter().collect();
                out.insert(name, Section::Ini(values));
            }
        }
        Ok(out)
    }

    /// Whether an INI section is selected, by its name as our parser reads it (between the
    /// first `[` and the last `]`) or as iniconfig does (comments after the header dropped
    /// first): `[tool:pytest] ; ]` is `tool:pytest` to pytest.
    fn selects_section(&self, name: &str) -> bool {
        let mut names = vec![name.trim().to_string()];
        if let Some(cut) = name.find([';', '#']) {
            let head = name[..cut].trim_end();
            names.push(head.strip_suffix(']').unwrap_or(head).trim().to_string());
        }
        self.selectors.iter().any(|s| match s {
            Selector::Section { glob, .. } => names.iter().any(|n| glob.is_match(n)),
            Selector::Table { .. } => false,
        })
    }
}

/// Whether pytest's INI reader (iniconfig) takes a line starting with `[` as a section
/// header: only when it ends with `]` once everything from the first `#` or `;` is cut off.
/// Otherwise it continues the value before it, while configparser (Python's, coverage's and
/// guard's) takes `[x]y` as the header `[x]`: the lines after it would be in [tool:pytest] to
/// pytest and in [x] to guard.
fn iniconfig_header(line: &str) -> bool {
    let mut head = line.trim_end();
    for c in ['#', ';'] {
        head = head.split(c).next().unwrap_or("").trim_end();
    }
    head.ends_with(']')
}

/// The selected sections of one version of a file, by name.
type Sections = BTreeMap<String, Section>;

#[derive(Debug, PartialEq)]
enum Section {
    Toml(toml::Value),
    Json(serde_json::Value),
    Ini(BTreeMap<String, Option<String>>),
}

/// The key path of a dotted TOML table name, parsed by the TOML parser itself (so quoted
/// keys such as `tool."my.plugin"` work).
fn table_keys(text: &str) -> Result<Vec<String>, String> {
    let invalid = || format!("{text:?} is not a dotted TOML table name (like `tool.pytest`)");
    let doc: toml::Table = toml::from_str(&format!("{text} = true")).map_err(|_| invalid())?;
    let mut keys = Vec::new();
    let mut table = &doc;
    loop {
        let mut entries = table.iter();
        let (Some((key, value)), None) = (entries.next(), entries.next()) else {
            return Err(invalid());
        };
        keys.push(key.clone());
        match value {
            toml::Value::Table(inner) => table = inner,
            toml::Value::Boolean(true) => return Ok(keys),
            _ => return Err(invalid()),
        }
    }
}

/// A section-name glob, case-insensitive.
fn section_glob(text: &str) -> Result<SectionGlob, String> {
    if text.trim().is_empty() {
        return Err("an empty section name".to_string());
    }
    GlobBuilder::new(text)
        .case_insensitive(true)
        .build()
        .map(|glob| SectionGlob {
            glob,
            matcher: OnceLock::new(),
        })
        .map_err(|e| format!("{text:?} is not a valid section-name glob: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_values_compare_parsed_by_key_path() {
        let scope = scope(Format::Json, &["scripts"]);
        let old = br#"{"name": "app", "scripts": {"test": "jest"}, "dependencies": {"a": "1"}}"#;
        // A dependency bumped and the file reformatted: the same scripts.
        let bumped = b"{\n  \"dependencies\": {\"a\": \"2\"},\n  \"scripts\": {\"test\": \"jest\"},\n  \"name\": \"app\"\n}";
        assert_eq!(scope.compare(Some(old), Some(bumped)), Verdict::Same);
        let green =
            br#"{"name": "app", "scripts": {"test": "echo ok"}, "dependencies": {"a": "1"}}"#;
        assert_eq!(
            scope.compare(Some(old), Some(green)),
            Verdict::Differs(vec!["scripts".to_string()])
        );
        // A key given twice is its last value, as JSON.parse reads it.
        let twice = br#"{"scripts": {"test": "jest"}, "scripts": {"test": "true"}}"#;
        assert_eq!(
            scope.compare(Some(old), Some(twice)),
            Verdict::Differs(vec!["scripts".to_string()])
        );
        assert!(matches!(
            scope.compare(Some(old), Some(b"{\"scripts\": ")),
            Verdict::Whole(_)
        ));
        assert_eq!(Format::of("**/package.json"), Format::Json);
    }

    fn scope(format: Format, selectors: &[&str]) -> Scope {
        let selectors: Vec<String> = selectors.iter().map(|s| s.to_string()).collect();
        Scope::parse(format, &selectors).unwrap()
    }

    fn toml_verdict(old: &str, new: &str) -> Verdict {
        scope(Format::Toml, &["tool.pytest", "tool.coverage"])
            .compare(Some(old.as_bytes()), Some(new.as_bytes()))
    }

    fn ini_verdict(old: &str, new: &str) -> Verdict {
        scope(Format::Ini, &["tool:pytest", "coverage:*"])
            .compare(Some(old.as_bytes()), Some(new.as_bytes()))
    }

    const PYPROJECT: &str = "[project]\nname = \"x\"\ndependencies = []\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n\n[tool.coverage.run]\nbranch = true\n";

    #[test]
    fn toml_tables_compare_by_value_not_text() {
        assert_eq!(
            toml_verdict(PYPROJECT, &PYPROJECT.replace("[]", "[\"attrs\"]")),
            Verdict::Same
        );
        assert_eq!(
            toml_verdict(PYPROJECT, &PYPROJECT.replace("\"-q\"", "'-q'  # quiet")),
            Verdict::Same
        );
        assert_eq!(
            toml_verdict(PYPROJECT, &PYPROJECT.replace("\"-q\"", "\"-q -x\"")),
            Verdict::Differs(vec!["tool.pytest".into()])
        );
        assert_eq!(
            toml_verdict(
                PYPROJECT,
                &PYPROJECT.replace("branch = true", "branch = false")
            ),
            Verdict::Differs(vec!["tool.coverage".into()])
        );
        // Absent on one side: a table added or removed.
        assert_eq!(
            scope(Format::Toml, &["tool.pytest"]).compare(None, Some(PYPROJECT.as_bytes())),
            Verdict::Differs(vec!["tool.pytest".into()])
        );
        assert_eq!(
            scope(Format::Toml, &["tool.pytest"]).compare(None, Some(b"[project]\n")),
            Verdict::Same
        );
    }

    #[test]
    fn unreadable_versions_count_as_changed() {
        assert!(matches!(
            toml_verdict(PYPROJECT, "[tool.pytest\n"),
            Verdict::Whole(why) if why.starts_with("the new version does not parse as TOML")
        ));
        assert!(matches!(
            scope(Format::Toml, &["tool.pytest"]).compare(Some(b"\xff"), Some(b"")),
            Verdict::Whole(why) if why.contains("not UTF-8")
        ));
        assert!(matches!(
            ini_verdict("[tool:pytest]\n", "[tool:pytest\n"),
            Verdict::Whole(_)
        ));
    }

    #[test]
    fn table_names_are_parsed_as_toml_keys() {
        assert_eq!(table_keys("tool.pytest").unwrap(), ["tool", "pytest"]);
        assert_eq!(
            table_keys("project.entry-points.pytest11").unwrap(),
            ["project", "entry-points", "pytest11"]
        );
        assert_eq!(table_keys("tool.\"a.b\"").unwrap(), ["tool", "a.b"]);
        for bad in ["", "tool..pytest", "tool.", "a = 1", "[tool]", "a\nb"] {
            assert!(table_keys(bad).is_err(), "{bad:?}");
        }
    }

    const SETUP_CFG: &str = "[metadata]\nname = x\n\n[tool:pytest]\naddopts = -q\ntestpaths =\n    tests\n\n[coverage:run]\nbranch = True\n";

    #[test]
    fn ini_sections_compare_by_value() {
        assert_eq!(
            ini_verdict(SETUP_CFG, &SETUP_CFG.replace("name = x", "name = y")),
            Verdict::Same
        );
        assert_eq!(
            ini_verdict(
                SETUP_CFG,
                &SETUP_CFG.replace("addopts = -q", "addopts=-q\n# quiet")
            ),
            Verdict::Same,
            "spacing and comment lines are no change"
        );
        assert_eq!(
            ini_verdict(
                SETUP_CFG,
                &SETUP_CFG.replace("    tests\n", "    tests\n    more\n")
            ),
            Verdict::Differs(vec!["tool:pytest".into()])
        );
        assert_eq!(
            ini_verdict(
                SETUP_CFG,
                &SETUP_CFG.replace("branch = True", "branch = False")
            ),
            Verdict::Differs(vec!["coverage:run".into()])
        );
        assert_eq!(
            ini_verdict(SETUP_CFG, &SETUP_CFG.replace("addopts", "ADDOPTS")),
            Verdict::Differs(vec!["tool:pytest".into()]),
            "key names are case-sensitive"
        );
        assert_eq!(
            ini_verdict(SETUP_CFG, &SETUP_CFG.replace("-q", "-q ;--deselect=a")),
            Verdict::Differs(vec!["tool:pytest".into()]),
            "an inline `;` is part of the value"
        );
        assert_eq!(
            ini_verdict(SETUP_CFG, &SETUP_CFG.replace("\n", "\r\n")),
            Verdict::Same,
            "CRLF line ends"
        );
    }

    #[test]
    fn ini_headers_are_matched_as_every_reader_sees_them() {
        for header in [
            "[tool:pytest] ; ]",
            "[tool:pytest] # x ]",
            "[Tool:Pytest]",
            "[ tool:pytest ]",
        ] {
            let new = format!("{SETUP_CFG}\n{header}\nextra = 1\n");
            assert!(
                matches!(ini_verdict(SETUP_CFG, &new), Verdict::Differs(_)),
                "{header}"
            );
        }
        // Lines before the first header always count.
        assert!(matches!(
            ini_verdict(SETUP_CFG, &format!("addopts = -x\n{SETUP_CFG}")),
            Verdict::Differs(_)
        ));
    }

    #[test]
    fn ini_text_read_differently_by_other_readers_is_refused() {
        for odd in [
            "name = x\x1c[tool:pytest]",
            "name = x\x0c[tool:pytest]",
            "name = x\r[tool:pytest]",
            "name = x\u{2028}[tool:pytest]",
            "name = x\u{85}[tool:pytest]",
            "name = x\x1f",
            "name =\n  [tool:pytest]",
            // A value line to pytest (no `]` at its end), a header to configparser.
            "name = x\n[x]y",
            "name = x\n[x] y",
            "name = x\n[tool:pytest;]",
        ] {
            let new = SETUP_CFG.replace("name = x", odd);
            assert!(
                matches!(ini_verdict(SETUP_CFG, &new), Verdict::Whole(_)),
                "{odd:?}"
            );
        }
        // A byte order mark is dropped, as iniconfig does.
        assert_eq!(
            ini_verdict(SETUP_CFG, &format!("\u{feff}{SETUP_CFG}")),
            Verdict::Same
        );
    }

    #[test]
    fn describe_names_the_sections() {
        assert_eq!(Verdict::Same.describe(), None);
        assert_eq!(
            Verdict::Differs(vec!["tool.pytest".into(), "tool.coverage".into()]).describe(),
            Some("[tool.pytest], [tool.coverage] differ".into())
        );
    }
}
