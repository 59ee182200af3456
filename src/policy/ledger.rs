//! The merge ledger (`qa/merge_ledger.toml`): parsed from TOML into a raw form, then validated
//! into a `Policy` the rules read. Owns defaults and the embedded starter ledger; owns no rule.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::Deserialize;
use toml::Spanned;

use crate::error::{InputError, Location, line_column};
use crate::policy::agents::{AgentsPolicy, HumanTrailer, PatternSet, trailer_pattern};
use crate::policy::harness::{Format, Scope};
use crate::workspace::{Workspace, check_relative, normalize_rel};

/// The ledger path used when `--ledger` is not given.
pub const DEFAULT_LEDGER_PATH: &str = "qa/merge_ledger.toml";

/// The starter ledger, embedded so guard works in a repository that has none yet.
pub const EMBEDDED_LEDGER: &str = include_str!("../../policy/merge_ledger.toml");

/// Where the policy in force came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicySource {
    /// The ledger embedded in the binary (no ledger file exists).
    Embedded,
    /// A ledger file, as the user named it or relative to the workspace root.
    File(PathBuf),
    /// A ledger read from a git revision (the base of a range or push).
    Revision { path: String, commit: String },
}

impl PolicySource {
    pub fn describe(&self) -> String {
        match self {
            PolicySource::Embedded => "embedded default ledger".to_string(),
            PolicySource::File(path) => path.display().to_string(),
            PolicySource::Revision { path, commit } => format!("{path} at {commit}"),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Policy {
    pub source: PolicySource,
    pub properties: PropertiesPolicy,
    pub fixtures: FixturesPolicy,
    pub freeze: FreezePolicy,
    pub coverage: CoveragePolicy,
    pub tests: TestsPolicy,
    pub agents: AgentsPolicy,
    pub trailers: TrailerPolicy,
    pub protect: ProtectPolicy,
    pub refs: RefsPolicy,
    pub artifacts: ArtifactsPolicy,
    pub humans: HumansPolicy,
    pub harness: HarnessPolicy,
    pub baseline: BaselinePolicy,
}

/// What a rule comparing with the base revision's reports does with what it finds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Reject,
    /// Reported as a warning; the decision does not change.
    Warn,
    /// Not computed.
    Off,
}

/// `[baseline]`: the evidence compared with the base revision's.
#[derive(Debug, Clone)]
pub struct BaselinePolicy {
    pub vanished: Severity,
    pub newly_skipped: Severity,
    /// Test ids that may come and go, as written (for messages).
    pub ignore: Vec<String>,
    /// `ignore`, normalised like freeze entries and compiled.
    pub ignore_set: GlobSet,
}

/// The test harness: files that decide how tests run and what they report.
#[derive(Debug, Clone)]
pub struct HarnessPolicy {
    /// Whole files, as globs over repository-relative paths (expanded like `[protect]`).
    pub paths: Vec<String>,
    /// Shared files of which only some sections are harness.
    pub sections: Vec<HarnessSections>,
}

/// Files matching `file` (a glob like `**/pyproject.toml`) count as harness changes only when
/// the sections of `scope` differ.
#[derive(Debug, Clone)]
pub struct HarnessSections {
    pub file: String,
    pub scope: crate::policy::harness::Scope,
}

/// What proves a commit human.
#[derive(Debug, Clone)]
pub struct HumansPolicy {
    /// An allowed-signers file (git's `gpg.ssh.allowedSignersFile` format), read from the
    /// same revision as the ledger; the server's `guard.allowedSigners` overrides it.
    pub allowed_signers: Option<String>,
    /// A commit counts as human only when its SSH signature verifies against it.
    pub require_signature: bool,
}

/// Which refs the hooks judge, and whether protected refs may be deleted.
#[derive(Debug, Clone)]
pub struct RefsPolicy {
    pub protected: PatternSet,
    pub allow_delete: bool,
}

/// The test artifacts a hook scores, by file name: in the server's artifact directory
/// (`guard.artifacts`) for pre-receive, relative to the repository root for pre-push.
#[derive(Debug, Clone)]
pub struct ArtifactsPolicy {
    /// Reject a push when no JUnit report is found.
    pub required: bool,
    pub junit: Vec<String>,
    pub coverage: Option<String>,
    pub collected: Option<String>,
}

/// The human trailer each protected class needs.
#[derive(Debug, Clone)]
pub struct TrailerPolicy {
    pub fixtures: HumanTrailer,
    pub freeze: HumanTrailer,
    pub properties: HumanTrailer,
    pub ledger: HumanTrailer,
    pub harness: HumanTrailer,
    pub test_removal: HumanTrailer,
}

/// Extra protected paths, as globs over repository-relative paths.
#[derive(Debug, Clone)]
pub struct ProtectPolicy {
    pub paths: Vec<String>,
    pub set: GlobSet,
}

#[derive(Debug, Clone)]
pub struct PropertiesPolicy {
    /// Repository-relative directories (or files), without trailing slashes.
    pub paths: Vec<String>,
    pub required: bool,
    pub seeds: Option<String>,
    pub min_lines: usize,
    pub file_patterns: Vec<String>,
    pub files: GlobSet,
}

#[derive(Debug, Clone)]
pub struct FixturesPolicy {
    pub lockfile: String,
    pub paths: Vec<String>,
    pub allow_unhashed_new: bool,
}

#[derive(Debug, Clone)]
pub struct FreezePolicy {
    pub file: String,
    pub passing_frozen_is_error: bool,
    /// A budget set in the ledger; the stricter of this and the freeze file's applies.
    pub max_active_leases: Option<u32>,
}

#[derive(Debug, Clone)]
pub struct CoveragePolicy {
    pub min_proven: f64,
    pub required: bool,
}

#[derive(Debug, Clone)]
pub struct TestsPolicy {
    pub failures_reject: bool,
}

impl Policy {
    /// True when the policy files it names may be absent (the embedded default: a repository
    /// that has not run `guard init` has no freeze file or lockfile yet).
    pub fn files_optional(&self) -> bool {
        self.source == PolicySource::Embedded
    }

    /// The embedded default policy.
    pub fn embedded() -> Policy {
        Policy::parse(
            Path::new("<embedded ledger>"),
            EMBEDDED_LEDGER,
            PolicySource::Embedded,
        )
        .expect("the embedded ledger is valid (tested)")
    }

    /// Loads the policy for `ws`: `explicit` (relative to the current directory, must
    /// exist), else `qa/merge_ledger.toml` under the root if it exists, else the embedded one.
    pub fn load(ws: &Workspace, explicit: Option<&Path>) -> Result<Policy, InputError> {
        // `shown` is what messages and reports call the ledger: as the user named it, or
        // relative to the repository root.
        let (path, shown) = match explicit {
            Some(path) => (path.to_path_buf(), path.to_path_buf()),
            None => {
                let path = ws.root.join(DEFAULT_LEDGER_PATH);
                match std::fs::symlink_metadata(&path) {
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        return Ok(Policy::embedded());
                    }
                    _ => (path, PathBuf::from(DEFAULT_LEDGER_PATH)),
                }
            }
        };
        let bytes = std::fs::read(&path).map_err(|e| {
            InputError::io(&shown, &e)
                .with_hint("pass an existing ledger with --ledger, or run `guard init`")
        })?;
        let text = String::from_utf8(bytes).map_err(|e| {
            InputError::new(
                &shown,
                format!(
                    "ledger is not UTF-8 (byte {})",
                    e.utf8_error().valid_up_to()
                ),
            )
        })?;
        Policy::parse(&shown, &text, PolicySource::File(shown.clone()))
    }

    /// Parses and validates ledger text. `path` is only used in messages.
    pub fn parse(path: &Path, text: &str, source: PolicySource) -> Result<Policy, InputError> {
        let raw: RawLedger = toml::from_str(text).map_err(|e| toml_error(path, text, &e))?;
        let at = |span: std::ops::Range<usize>| {
            let (l, c) = line_column(text.as_bytes(), span.start);
            Location::LineColumn(l, c)
        };
        let invalid =
            |span: std::ops::Range<usize>, msg: String| InputError::new(path, msg).at(at(span));

        if let Some(version) = &raw.version {
            if *version.get_ref() != 1 {
                return Err(invalid(
                    version.span(),
                    format!(
                        "unsupported ledger version {}; this guard reads version 1",
                        version.get_ref()
                    ),
                ));
            }
        }

        // Repository paths are compared with git's tree paths: `a/./b` and `a//b` are written
        // `a/b`; what cannot be (a backslash, the root itself) is refused where it stands.
        let rel = |value: &Spanned<String>, key: &str| -> Result<String, InputError> {
            let refuse = |why: String| {
                invalid(
                    value.span(),
                    format!("`{key}` = {:?}: {why}", value.get_ref()),
                )
            };
            check_relative(value.get_ref()).map_err(|e| refuse(e.to_string()))?;
            if value.get_ref().contains('\\') {
                return Err(refuse(
                    "write paths with `/`; a backslash is part of a file name in git".into(),
                ));
            }
            let normal = normalize_rel(value.get_ref());
            if normal.is_empty() {
                return Err(refuse(
                    "names the repository root; name a file or directory inside it".into(),
                ));
            }
            Ok(normal)
        };
        let rel_list =
            |values: &Option<Vec<Spanned<String>>>, key: &str, default: &[&str]| match values {
                None => Ok(default.iter().map(|s| normalize_rel(s)).collect()),
                Some(values) => values
                    .iter()
                    .map(|v| rel(v, key))
                    .collect::<Result<Vec<_>, _>>(),
            };

        let p = &raw.properties;
        let min_lines = match &p.min_lines {
            None => 8,
            Some(v) if *v.get_ref() >= 1 && *v.get_ref() <= 10_000 => *v.get_ref() as usize,
            Some(v) => {
                return Err(invalid(
                    v.span(),
                    format!(
                        "`properties.min_lines` must be 1..=10000, not {}",
                        v.get_ref()
                    ),
                ));
            }
        };
        let file_patterns: Vec<String> = match &p.files {
            None => vec!["test_*.py".into(), "*_test.py".into(), "*.rs".into()],
            Some(list) => list.iter().map(|s| s.get_ref().clone()).collect(),
        };
        let mut globs = GlobSetBuilder::new();
        for (i, pattern) in file_patterns.iter().enumerate() {
            let glob = Glob::new(pattern).map_err(|e| {
                let span = p.files.as_ref().map(|l| l[i].span()).unwrap_or(0..0);
                invalid(
                    span,
                    format!("`properties.files` pattern {pattern:?} is not a valid glob: {e}"),
                )
            })?;
            globs.add(glob);
        }
        let files = globs
            .build()
            .map_err(|e| InputError::new(path, format!("`properties.files`: {e}")))?;
        let properties = PropertiesPolicy {
            paths: rel_list(&p.paths, "properties.paths", &["tests/properties"])?,
            required: p.required.unwrap_or(true),
            seeds: p
                .seeds
                .as_ref()
                .map(|s| rel(s, "properties.seeds"))
                .transpose()?,
            min_lines,
            file_patterns,
            files,
        };

        let f = &raw.fixtures;
        let fixtures = FixturesPolicy {
            lockfile: match &f.lockfile {
                Some(v) => rel(v, "fixtures.lockfile")?,
                None => "qa/fixtures.lock.json".to_string(),
            },
            paths: rel_list(&f.paths, "fixtures.paths", &["tests/fixtures"])?,
            allow_unhashed_new: f.allow_unhashed_new.unwrap_or(false),
        };

        let z = &raw.freeze;
        let max_active_leases = match &z.max_active_leases {
            None => None,
            Some(v) => Some(u32::try_from(*v.get_ref()).map_err(|_| {
                invalid(
                    v.span(),
                    format!(
                        "`freeze.max_active_leases` must be 0 or more, not {}",
                        v.get_ref()
                    ),
                )
            })?),
        };
        let freeze = FreezePolicy {
            file: match &z.file {
                Some(v) => rel(v, "freeze.file")?,
                None => "qa/freeze.toml".to_string(),
            },
            passing_frozen_is_error: z.passing_frozen_is_error.unwrap_or(true),
            max_active_leases,
        };

        let c = &raw.coverage;
        let min_proven = match &c.min_proven {
            None => 70.0,
            Some(v) if (0.0..=100.0).contains(v.get_ref()) => *v.get_ref(),
            Some(v) => {
                return Err(invalid(
                    v.span(),
                    format!("`coverage.min_proven` must be 0..=100, not {}", v.get_ref()),
                ));
            }
        };
        let coverage = CoveragePolicy {
            min_proven,
            required: c.required.unwrap_or(false),
        };
        let tests = TestsPolicy {
            failures_reject: raw.tests.failures_reject.unwrap_or(true),
        };

        let agents = parse_agents(&raw.agents, &invalid)?;
        let t = &raw.trailers;
        let trailer = |value: &Option<Spanned<String>>, key: &str, default: &str| match value {
            None => Ok(HumanTrailer::parse(default).expect("default trailers parse")),
            Some(v) => HumanTrailer::parse(v.get_ref())
                .map_err(|e| invalid(v.span(), format!("`trailers.{key}`: {e}"))),
        };
        let trailers = TrailerPolicy {
            fixtures: trailer(&t.fixtures, "fixtures", "Fixture-Lock: human")?,
            freeze: trailer(&t.freeze, "freeze", "Freeze-Lease: human")?,
            properties: trailer(&t.properties, "properties", "Property-Seeds: human")?,
            ledger: trailer(&t.ledger, "ledger", "Ledger-Change: human")?,
            harness: trailer(&t.harness, "harness", "Test-Harness: human")?,
            test_removal: trailer(&t.test_removal, "test_removal", "Test-Removal: human")?,
        };
        let protect_paths: Vec<Spanned<String>> = raw.protect.paths.clone().unwrap_or_default();
        let mut protect_set = GlobSetBuilder::new();
        let mut patterns = Vec::new();
        for p in &protect_paths {
            let normal = normalize_protect_pattern(p.get_ref()).map_err(|why| {
                invalid(
                    p.span(),
                    format!("`protect.paths` pattern {:?}: {why}", p.get_ref()),
                )
            })?;
            for pattern in expand_protect_pattern(&normal) {
                let glob = protect_glob(&pattern).map_err(|e| {
                    invalid(
                        p.span(),
                        format!("`protect.paths` pattern {:?}: {e}", p.get_ref()),
                    )
                })?;
                protect_set.add(glob);
                patterns.push(pattern);
            }
        }
        let protect = ProtectPolicy {
            paths: patterns,
            // Each glob compiled alone; together they can exceed the engine's size limit.
            set: protect_set.build().map_err(|e| {
                let first = protect_paths.first().map_or(0..0, |p| p.span());
                invalid(
                    first,
                    format!(
                        "`protect.paths`: its {} patterns do not compile into one set ({e}); use fewer, broader globs",
                        protect_paths.len()
                    ),
                )
            })?,
        };

        let harness = parse_harness(&raw.harness, &invalid)?;

        let r = &raw.refs;
        let protected_texts: Vec<String> = match &r.protected {
            None => vec!["refs/heads/*".to_string(), "refs/tags/*".to_string()],
            Some(list) => list.iter().map(|v| v.get_ref().clone()).collect(),
        };
        let refs = RefsPolicy {
            protected: PatternSet::new(&protected_texts).map_err(|(i, e)| {
                let span = r
                    .protected
                    .as_ref()
                    .and_then(|l| l.get(i))
                    .map(|v| v.span())
                    .unwrap_or(0..0);
                invalid(span, format!("`refs.protected`: {e}"))
            })?,
            allow_delete: r.allow_delete.unwrap_or(true),
        };
        let a = &raw.artifacts;
        let name = |v: &Spanned<String>, key: &str| -> Result<String, InputError> {
            check_relative(v.get_ref()).map_err(|e| {
                invalid(
                    v.span(),
                    format!("`artifacts.{key}` = {:?}: {e}", v.get_ref()),
                )
            })?;
            Ok(normalize_rel(v.get_ref()))
        };
        let artifacts = ArtifactsPolicy {
            required: a.required.unwrap_or(false),
            junit: match &a.junit {
                None => vec!["junit.xml".to_string()],
                Some(list) => list
                    .iter()
                    .map(|v| name(v, "junit"))
                    .collect::<Result<_, _>>()?,
            },
            coverage: a
                .coverage
                .as_ref()
                .map(|v| name(v, "coverage"))
                .transpose()?,
            collected: a
                .collected
                .as_ref()
                .map(|v| name(v, "collected"))
                .transpose()?,
        };

        let h = &raw.humans;
        let humans = HumansPolicy {
            allowed_signers: h
                .allowed_signers
                .as_ref()
                .map(|v| rel(v, "humans.allowed_signers"))
                .transpose()?,
            require_signature: h.require_signature.unwrap_or(false),
        };

        let baseline = parse_baseline(&raw.baseline, &invalid)?;

        Ok(Policy {
            baseline,
            humans,
            harness,
            source,
            properties,
            fixtures,
            freeze,
            coverage,
            tests,
            agents,
            trailers,
            protect,
            refs,
            artifacts,
        })
    }
}

/// A `[protect]` entry as the tree paths it is matched against are written: `.` components
/// and empty ones (`a//b`) dropped, a trailing `/` kept (it means a directory). Refused: an
/// absolute path, `..`, a backslash that escapes nothing special to globs (a Windows
/// separator, which would match nothing), and an entry that names the root.
pub fn normalize_protect_pattern(raw: &str) -> Result<String, String> {
    let p = raw.trim();
    if p.starts_with('/') {
        return Err("must be relative to the repository root".into());
    }
    let mut chars = p.chars();
    while let Some(c) = chars.next() {
        if c == '\\' && !chars.next().is_some_and(|n| "*?[]{}\\,!-^".contains(n)) {
            return Err("write paths with `/`; `\\` only escapes a glob character".into());
        }
    }
    let parts: Vec<&str> = p
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    if parts.contains(&"..") {
        return Err("must not contain `..`".into());
    }
    if parts.is_empty() {
        return Err("names the repository root; name files or directories inside it".into());
    }
    let mut normal = parts.join("/");
    if p.ends_with('/') {
        normal.push('/');
    }
    Ok(normal)
}

/// What a `[protect]` entry covers: `./` dropped; a directory (`hooks/`, or a plain name
/// without glob characters such as `ci`) covers itself and everything under it.
pub fn expand_protect_pattern(raw: &str) -> Vec<String> {
    let mut p = raw.trim();
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    if let Some(dir) = p.strip_suffix('/') {
        let dir = dir.trim_end_matches('/');
        return vec![dir.to_string(), format!("{dir}/**")];
    }
    if p.contains(['*', '?', '[', '{']) {
        vec![p.to_string()]
    } else {
        vec![p.to_string(), format!("{p}/**")]
    }
}

/// A `[protect]` glob: over repository-relative paths, `*` within one directory, `**`
/// across, case-insensitive (a case variant replaces the file on some checkouts).
pub fn protect_glob(pattern: &str) -> Result<globset::Glob, globset::Error> {
    globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .case_insensitive(true)
        .backslash_escape(true)
        .build()
}

/// A TOML parse error as `path:line:col: message`.
pub fn toml_error(path: &Path, text: &str, err: &toml::de::Error) -> InputError {
    let mut e = InputError::new(path, err.message().trim().to_string());
    if let Some(span) = err.span() {
        let (l, c) = line_column(text.as_bytes(), span.start);
        e = e.at(Location::LineColumn(l, c));
    }
    e
}

/// Validates `[harness]`: path globs like `[protect]`'s, and per file glob the section
/// selectors (dotted table names for `*.toml` files, section-name globs for INI files).
fn parse_harness(
    raw: &RawHarness,
    invalid: &dyn Fn(std::ops::Range<usize>, String) -> InputError,
) -> Result<HarnessPolicy, InputError> {
    // Spelled as `[protect]` entries are (`a/./b`, `a//b` normalised; `..`, absolute paths and
    // Windows separators refused): a spelling that matches no tree path protects nothing.
    let glob = |value: &Spanned<String>, key: &str| -> Result<String, InputError> {
        let text = value.get_ref();
        let normal = normalize_protect_pattern(text)
            .map_err(|e| invalid(value.span(), format!("`{key}` glob {text:?}: {e}")))?;
        protect_glob(&normal)
            .map_err(|e| invalid(value.span(), format!("`{key}` glob {text:?}: {e}")))?;
        Ok(normal)
    };
    let paths = match &raw.paths {
        None => DEFAULT_HARNESS_PATHS
            .iter()
            .flat_map(|p| expand_protect_pattern(p))
            .collect(),
        Some(list) => {
            let mut paths = Vec::new();
            for value in list {
                paths.extend(expand_protect_pattern(&glob(value, "harness.paths")?));
            }
            paths
        }
    };
    let sections = match &raw.sections {
        None => DEFAULT_HARNESS_SECTIONS
            .iter()
            .map(|(file, selectors)| {
                let selectors: Vec<String> = selectors.iter().map(|s| s.to_string()).collect();
                HarnessSections {
                    file: file.to_string(),
                    scope: Scope::parse(Format::of(file), &selectors)
                        .expect("default harness sections parse"),
                }
            })
            .collect(),
        Some(table) => {
            let mut out = Vec::new();
            for (file, selectors) in table {
                let normal = glob(file, "harness.sections")?;
                let texts: Vec<String> = selectors.iter().map(|s| s.get_ref().clone()).collect();
                let scope =
                    Scope::parse(Format::of(file.get_ref()), &texts).map_err(|(i, e)| {
                        invalid(
                            selectors[i].span(),
                            format!("`harness.sections` for {:?}: {e}", file.get_ref()),
                        )
                    })?;
                out.push(HarnessSections {
                    file: normal,
                    scope,
                });
            }
            out
        }
    };
    Ok(HarnessPolicy { paths, sections })
}

/// The files that decide how tests run and what they report, wherever they are: pytest's
/// own files (`pytest.ini`, and pytest 9's `pytest.toml`, hidden or not), `conftest.py`
/// plugins, tox and nox sessions, coverage settings, cargo-nextest's profile, Cargo's config
/// (a target `runner` wraps every test binary, `[env]` sets the tests' environment), and the
/// submodules a checkout brings in (a submodule's `conftest.py` is collected like any other).
const DEFAULT_HARNESS_PATHS: &[&str] = &[
    "**/conftest.py",
    "**/pytest.ini",
    "**/.pytest.ini",
    "**/pytest.toml",
    "**/.pytest.toml",
    "**/tox.ini",
    "**/noxfile.py",
    "**/.coveragerc",
    "**/.config/nextest.toml",
    "**/.cargo/config.toml",
    "**/.cargo/config",
    ".gitmodules",
];

/// Shared files whose harness sections only count: pytest and coverage options, tox's
/// table, pytest plugins registered by entry point (PEP 621's table, and Poetry's), and
/// `[DEFAULT]`, whose values Python's `configparser` (coverage, setuptools) reads into every
/// section.
const DEFAULT_HARNESS_SECTIONS: &[(&str, &[&str])] = &[
    (
        "**/pyproject.toml",
        &[
            "tool.pytest",
            "tool.coverage",
            "tool.tox",
            "project.entry-points.pytest11",
            "tool.poetry.plugins.pytest11",
        ],
    ),
    (
        "**/setup.cfg",
        &[
            "tool:pytest",
            "coverage:*",
            "options.entry_points",
            "DEFAULT",
        ],
    ),
];

fn parse_agents(
    raw: &RawAgents,
    invalid: &dyn Fn(std::ops::Range<usize>, String) -> InputError,
) -> Result<AgentsPolicy, InputError> {
    let default_agent = match &raw.default {
        None => false,
        Some(v) => match v.get_ref().as_str() {
            "human" => false,
            "agent" => true,
            other => {
                return Err(invalid(
                    v.span(),
                    format!("`agents.default` must be \"human\" or \"agent\", not {other:?}"),
                ));
            }
        },
    };
    let set = |values: &Option<Vec<Spanned<String>>>,
               key: &str,
               default: &[&str]|
     -> Result<PatternSet, InputError> {
        let texts: Vec<String> = match values {
            None => default.iter().map(|s| s.to_string()).collect(),
            Some(list) => list.iter().map(|v| v.get_ref().clone()).collect(),
        };
        PatternSet::new(&texts).map_err(|(i, e)| {
            let span = values
                .as_ref()
                .and_then(|l| l.get(i))
                .map(|v| v.span())
                .unwrap_or(0..0);
            invalid(span, format!("`agents.{key}`: {e}"))
        })
    };
    let trailers = match &raw.trailers {
        None => DEFAULT_AGENT_TRAILERS
            .iter()
            .map(|t| trailer_pattern(t).expect("default patterns parse"))
            .collect(),
        Some(list) => list
            .iter()
            .map(|v| {
                trailer_pattern(v.get_ref())
                    .map_err(|e| invalid(v.span(), format!("`agents.trailers`: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?,
    };
    Ok(AgentsPolicy {
        default_agent,
        emails: set(&raw.emails, "emails", DEFAULT_AGENT_EMAILS)?,
        names: set(&raw.names, "names", DEFAULT_AGENT_NAMES)?,
        trailers,
        subjects: set(&raw.subjects, "subjects", DEFAULT_AGENT_SUBJECTS)?,
        pushers: set(&raw.pushers, "pushers", &[])?,
    })
}

/// Agent identities seen in the wild (DESIGN.md, issue 10), used where a ledger has no
/// `[agents]`; `policy/merge_ledger.toml` lists the same (a test compares them). E-mails and
/// trailer keys only: a display name alone is anyone's to type.
const DEFAULT_AGENT_EMAILS: &[&str] = &[
    r"*\[bot\]@users.noreply.github.com",
    // Copilot coding agent; Copilot CLI/SDK; Copilot in VS Code.
    "198982749+Copilot@users.noreply.github.com",
    "223556219+Copilot@users.noreply.github.com",
    "copilot@github.com",
    "cursoragent@cursor.com",
    "noreply@aider.chat",
    "aider@aider.chat",
    "noreply@anthropic.com",
    "codex@openai.com",
    "noreply@openai.com",
];
const DEFAULT_AGENT_NAMES: &[&str] = &["* (aider)"];
const DEFAULT_AGENT_TRAILERS: &[&str] = &[
    "Co-authored-by: *<noreply@anthropic.com>",
    "Co-authored-by: *<codex@openai.com>",
    "Co-authored-by: *<noreply@openai.com>",
    "Co-authored-by: *<223556219+Copilot@users.noreply.github.com>",
    "Co-authored-by: *<copilot@github.com>",
    "Co-authored-by: *<noreply@aider.chat>",
    "Co-authored-by: *<aider@aider.chat>",
    "Co-authored-by: *<cursoragent@cursor.com>",
    // Devin's co-author line, and any other [bot] account's.
    r"Co-authored-by: *\[bot\]@users.noreply.github.com>",
    "Made-with: Cursor*",
    "Agent-Logs-Url: *",
    "Claude-Session: *",
    "Assisted-by: *",
    "Generated-by: *",
    "Replit-Commit-Author: Agent",
];
/// aider writes its commit messages with this prefix.
const DEFAULT_AGENT_SUBJECTS: &[&str] = &["aider: *"];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLedger {
    version: Option<Spanned<i64>>,
    #[serde(default)]
    properties: RawProperties,
    #[serde(default)]
    fixtures: RawFixtures,
    #[serde(default)]
    freeze: RawFreeze,
    #[serde(default)]
    coverage: RawCoverage,
    #[serde(default)]
    tests: RawTests,
    #[serde(default)]
    agents: RawAgents,
    #[serde(default)]
    trailers: RawTrailers,
    #[serde(default)]
    protect: RawProtect,
    #[serde(default)]
    refs: RawRefs,
    #[serde(default)]
    artifacts: RawArtifacts,
    #[serde(default)]
    humans: RawHumans,
    #[serde(default)]
    harness: RawHarness,
    #[serde(default)]
    baseline: RawBaseline,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBaseline {
    vanished: Option<Spanned<String>>,
    newly_skipped: Option<Spanned<String>>,
    ignore: Option<Vec<Spanned<String>>>,
}

fn parse_baseline(
    raw: &RawBaseline,
    invalid: &dyn Fn(std::ops::Range<usize>, String) -> InputError,
) -> Result<BaselinePolicy, InputError> {
    let severity = |v: &Option<Spanned<String>>, key: &str| match v {
        None => Ok(Severity::Reject),
        Some(v) => match v.get_ref().as_str() {
            "reject" => Ok(Severity::Reject),
            "warn" => Ok(Severity::Warn),
            "off" => Ok(Severity::Off),
            other => Err(invalid(
                v.span(),
                format!("`baseline.{key}` must be \"reject\", \"warn\" or \"off\", not {other:?}"),
            )),
        },
    };
    let mut set = GlobSetBuilder::new();
    let mut ignore = Vec::new();
    for v in raw.ignore.iter().flatten() {
        let glob = crate::testid::id_glob(v.get_ref()).map_err(|e| {
            invalid(
                v.span(),
                format!("`baseline.ignore` pattern {:?}: {e}", v.get_ref()),
            )
        })?;
        set.add(glob);
        ignore.push(v.get_ref().clone());
    }
    Ok(BaselinePolicy {
        vanished: severity(&raw.vanished, "vanished")?,
        newly_skipped: severity(&raw.newly_skipped, "newly_skipped")?,
        ignore,
        ignore_set: set.build().map_err(|e| {
            let first = raw
                .ignore
                .iter()
                .flatten()
                .next()
                .map_or(0..0, |p| p.span());
            invalid(first, format!("`baseline.ignore`: {e}"))
        })?,
    })
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHarness {
    paths: Option<Vec<Spanned<String>>>,
    sections: Option<BTreeMap<Spanned<String>, Vec<Spanned<String>>>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHumans {
    allowed_signers: Option<Spanned<String>>,
    require_signature: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRefs {
    protected: Option<Vec<Spanned<String>>>,
    allow_delete: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawArtifacts {
    required: Option<bool>,
    junit: Option<Vec<Spanned<String>>>,
    coverage: Option<Spanned<String>>,
    collected: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAgents {
    default: Option<Spanned<String>>,
    emails: Option<Vec<Spanned<String>>>,
    names: Option<Vec<Spanned<String>>>,
    trailers: Option<Vec<Spanned<String>>>,
    subjects: Option<Vec<Spanned<String>>>,
    pushers: Option<Vec<Spanned<String>>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTrailers {
    fixtures: Option<Spanned<String>>,
    freeze: Option<Spanned<String>>,
    properties: Option<Spanned<String>>,
    ledger: Option<Spanned<String>>,
    harness: Option<Spanned<String>>,
    test_removal: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProtect {
    paths: Option<Vec<Spanned<String>>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProperties {
    paths: Option<Vec<Spanned<String>>>,
    required: Option<bool>,
    seeds: Option<Spanned<String>>,
    min_lines: Option<Spanned<i64>>,
    files: Option<Vec<Spanned<String>>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFixtures {
    lockfile: Option<Spanned<String>>,
    paths: Option<Vec<Spanned<String>>>,
    allow_unhashed_new: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFreeze {
    file: Option<Spanned<String>>,
    passing_frozen_is_error: Option<bool>,
    max_active_leases: Option<Spanned<i64>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCoverage {
    min_proven: Option<Spanned<f64>>,
    required: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTests {
    failures_reject: Option<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Policy, InputError> {
        Policy::parse(
            Path::new("qa/merge_ledger.toml"),
            text,
            PolicySource::File("qa/merge_ledger.toml".into()),
        )
    }

    #[test]
    fn embedded_ledger_is_valid() {
        let p = Policy::embedded();
        assert_eq!(p.properties.paths, vec!["tests/properties"]);
        assert_eq!(p.fixtures.lockfile, "qa/fixtures.lock.json");
        assert_eq!(p.freeze.file, "qa/freeze.toml");
        assert!(p.files_optional());
    }

    #[test]
    fn embedded_ledger_lists_the_built_in_agent_identities() {
        // A repository without [agents] and one that ran `guard init` know the same agents.
        let embedded = Policy::embedded().agents;
        let built_in = parse("version = 1\n").unwrap().agents;
        assert_eq!(embedded.emails.patterns, built_in.emails.patterns);
        assert_eq!(embedded.names.patterns, built_in.names.patterns);
        assert_eq!(embedded.subjects.patterns, built_in.subjects.patterns);
        let texts = |a: &AgentsPolicy| {
            a.trailers
                .iter()
                .map(|t| t.text.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(texts(&embedded), texts(&built_in));
    }

    #[test]
    fn first_article_ledger_works_unchanged() {
        let text = r#"
# qa/merge_ledger.toml
# Human-owned. Agent writes to this file are a score of 0.

[properties]
paths = ["tests/properties/"]
required = true

[fixtures]
lockfile = "qa/fixtures.lock.json"
allow_unhashed_new = false

[freeze]
file = "qa/flake_freeze.txt"
# A frozen name that passes under the patch fails the score.
passing_frozen_is_error = true
"#;
        let p = parse(text).unwrap();
        assert_eq!(p.freeze.file, "qa/flake_freeze.txt");
        assert!(p.freeze.passing_frozen_is_error);
        assert!(!p.fixtures.allow_unhashed_new);
        assert!(!p.files_optional());
    }

    #[test]
    fn unknown_key_names_file_and_line() {
        let err = parse("[properties]\npaths = []\nrequird = true\n").unwrap_err();
        let shown = err.to_string();
        assert!(shown.starts_with("qa/merge_ledger.toml:3:"), "{shown}");
        assert!(shown.contains("requird"), "{shown}");
    }

    #[test]
    fn wrong_type_names_line() {
        let err = parse("[freeze]\nfile = \"x\"\npassing_frozen_is_error = \"yes\"\n").unwrap_err();
        assert!(
            err.to_string().starts_with("qa/merge_ledger.toml:3:"),
            "{err}"
        );
    }

    #[test]
    fn parent_and_absolute_paths_are_refused() {
        let err = parse("[fixtures]\nlockfile = \"../outside.json\"\n").unwrap_err();
        assert!(err.to_string().contains(":2:"), "{err}");
        assert!(err.to_string().contains(".."), "{err}");
        let err = parse("[properties]\npaths = [\"tests/p\", \"/abs\"]\n").unwrap_err();
        assert!(err.to_string().contains("absolute"), "{err}");
    }

    #[test]
    fn out_of_range_values_are_refused() {
        assert!(parse("[coverage]\nmin_proven = 101.0\n").is_err());
        assert!(parse("[freeze]\nmax_active_leases = -1\n").is_err());
        assert!(parse("[properties]\nmin_lines = 0\n").is_err());
        assert!(parse("version = 2\n").is_err());
        assert!(parse("[properties]\nfiles = [\"[\"]\n").is_err());
    }

    #[test]
    fn protect_entries_cover_directories() {
        assert_eq!(expand_protect_pattern("hooks/"), vec!["hooks", "hooks/**"]);
        assert_eq!(
            expand_protect_pattern("./Makefile"),
            vec!["Makefile", "Makefile/**"]
        );
        assert_eq!(
            expand_protect_pattern(".github/workflows/**"),
            vec![".github/workflows/**"]
        );
        let p = parse("[protect]\npaths = [\"ci\", \"./Makefile\", \"hooks/\"]\n").unwrap();
        for path in [
            "ci/pipeline.yml",
            "Makefile",
            "hooks/pre-commit",
            "CI/x.yml",
        ] {
            assert!(p.protect.set.is_match(path), "{path}");
        }
        assert!(!p.protect.set.is_match("src/ci.rs"));
    }

    #[test]
    fn protect_entries_are_normalised_or_refused() {
        for (raw, normal) in [
            ("scripts/./deploy.sh", "scripts/deploy.sh"),
            ("scripts//deploy.sh", "scripts/deploy.sh"),
            ("././/ops/", "ops/"),
            (" hooks ", "hooks"),
            (r"docs/\[draft\]/**", r"docs/\[draft\]/**"),
            ("a.b/..c/*.sh", "a.b/..c/*.sh"),
        ] {
            assert_eq!(
                normalize_protect_pattern(raw).as_deref(),
                Ok(normal),
                "{raw}"
            );
        }
        for raw in [
            "/etc/x",
            "a/../b",
            "..",
            r"scripts\deploy.sh",
            r"scripts\",
            ".",
            "./",
            "//",
            "",
        ] {
            assert!(normalize_protect_pattern(raw).is_err(), "{raw}");
        }
        let p = parse("[protect]\npaths = [\"scripts/./deploy.sh\", \"tools//x/\"]\n").unwrap();
        for path in ["scripts/deploy.sh", "tools/x/run.sh"] {
            assert!(p.protect.set.is_match(path), "{path}");
        }
        let err =
            parse("[protect]\npaths = [\n  \"ci\",\n  'scripts\\deploy.sh',\n]\n").unwrap_err();
        assert!(
            err.to_string().starts_with("qa/merge_ledger.toml:4:3:"),
            "{err}"
        );
    }

    #[test]
    fn ledger_paths_are_normalised_or_refused_with_their_line() {
        let p = parse(
            "[freeze]\nfile = \"qa/./flakes//list.txt\"\n[properties]\nseeds = \"tests//seeds/\"\n",
        )
        .unwrap();
        assert_eq!(p.freeze.file, "qa/flakes/list.txt");
        assert_eq!(p.properties.seeds.as_deref(), Some("tests/seeds"));
        for (text, line) in [
            ("[freeze]\nfile = 'qa\\freeze.toml'\n", 2),
            ("[fixtures]\n\npaths = ['tests/fixtures', '.']\n", 3),
            ("[properties]\nseeds = './'\n", 2),
        ] {
            let err = parse(text).unwrap_err().to_string();
            assert!(
                err.starts_with(&format!("qa/merge_ledger.toml:{line}:")),
                "{text}: {err}"
            );
        }
    }

    #[test]
    fn harness_paths_and_section_files_are_normalised_or_refused() {
        // Spelled like `[protect]` entries: otherwise `ci//run.sh` would protect nothing.
        let p = parse(
            "[harness]\npaths = [\"ci//run.sh\", \"./tools/./t.sh\"]\n[harness.sections]\n\"./cfg//setup.cfg\" = [\"tool:pytest\"]\n",
        )
        .unwrap();
        assert_eq!(
            p.harness.paths,
            ["ci/run.sh", "ci/run.sh/**", "tools/t.sh", "tools/t.sh/**"]
        );
        assert_eq!(p.harness.sections[0].file, "cfg/setup.cfg");
        for (text, line) in [
            ("[harness]\npaths = ['ci\\run.sh']\n", 2),
            ("[harness]\n\npaths = ['a/../b']\n", 3),
            ("[harness.sections]\n'/abs/setup.cfg' = ['x']\n", 2),
        ] {
            let err = parse(text).unwrap_err().to_string();
            assert!(
                err.starts_with(&format!("qa/merge_ledger.toml:{line}:")),
                "{text}: {err}"
            );
        }
    }

    #[test]
    fn harness_defaults_are_what_the_starter_ledger_lists() {
        // A ledger written before `[harness]` existed protects the same harness.
        let (old, starter) = (parse("version = 1\n").unwrap(), Policy::embedded());
        assert_eq!(old.harness.paths, starter.harness.paths);
        let sections = |p: &Policy| -> Vec<(String, Vec<String>)> {
            p.harness
                .sections
                .iter()
                .map(|s| {
                    let selectors = s.scope.selectors();
                    (
                        s.file.clone(),
                        selectors.iter().map(|t| t.to_string()).collect(),
                    )
                })
                .collect()
        };
        assert_eq!(sections(&old), sections(&starter));
        assert!(old.harness.paths.contains(&"**/conftest.py".to_string()));
        assert_eq!(old.trailers.harness.to_string(), "Test-Harness: human");
        // Listing paths replaces the list.
        let own = parse("[harness]\npaths = [\"ci/run-tests.sh\"]\n").unwrap();
        assert_eq!(own.harness.paths, ["ci/run-tests.sh", "ci/run-tests.sh/**"]);
        assert_eq!(sections(&own), sections(&starter));
    }

    #[test]
    fn malformed_toml_is_an_error_with_position() {
        let err = parse("[properties\npaths = 1").unwrap_err();
        assert!(
            err.to_string().starts_with("qa/merge_ledger.toml:1:"),
            "{err}"
        );
    }
}
