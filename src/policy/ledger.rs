//! The merge ledger (`qa/merge_ledger.toml`): parsed from TOML into a raw form, table by
//! table, then validated into a `Policy` the rules read, one step per table. Every step notes
//! what is wrong and goes on, so a ledger with three mistakes names all three, in file order
//! (`InputErrors`). Owns the defaults (`ledger/defaults.rs`, re-exported here) and the
//! embedded starter ledger; owns no rule.

mod checker;
mod defaults;
mod model;
mod patterns;
mod raw;
mod tables;

use std::path::{Path, PathBuf};

use serde::de::Error as _;
use toml::de::DeTable;

use self::checker::Checker;
pub use self::checker::toml_error;
// The defaults, at the paths they have always had (`crate::policy::ledger::DEFAULT_*`).
pub use self::defaults::*;
pub use self::model::{
    ArtifactsPolicy, BaselinePolicy, CoveragePolicy, FixturesPolicy, FreezePolicy, HarnessPolicy,
    HarnessSections, HumansPolicy, Policy, PolicySource, PropertiesPolicy, ProtectPolicy,
    RefsPolicy, TestsPolicy, TrailerPolicy,
};
pub use self::patterns::{
    expand_protect_pattern, normalize_protect_pattern, protect_glob, protect_glob_cased,
};
use self::raw::RawLedger;
pub use self::tables::MAX_PROTECT_PATTERNS;
use self::tables::{
    agents, artifacts, baseline, bots, check_version, coverage, evaluate_mode, fixtures, freeze,
    harness, humans, levels, properties, protect, refs, tests, trailers,
};
use crate::error::{InputError, InputErrors};
use crate::policy::levels::Levels;
pub use crate::policy::levels::Severity;
use crate::workspace::Workspace;

/// The ledger path used when `--ledger` is not given.
pub const DEFAULT_LEDGER_PATH: &str = "qa/merge_ledger.toml";

/// The starter ledger, embedded so guard works in a repository that has none yet.
pub const EMBEDDED_LEDGER: &str = include_str!("../../policy/merge_ledger.toml");

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
    pub fn load(ws: &Workspace, explicit: Option<&Path>) -> Result<Policy, InputErrors> {
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

    /// Parses and validates ledger text. `path` is only used in messages. A TOML syntax
    /// error stops there; past it, every table is read and checked, and every problem found
    /// is returned, in file order.
    pub fn parse(path: &Path, text: &str, source: PolicySource) -> Result<Policy, InputErrors> {
        let doc = DeTable::parse(text).map_err(|e| toml_error(path, text, &e))?;
        let mut c = Checker {
            path,
            text,
            problems: Vec::new(),
        };
        let raw = read_tables(doc.into_inner(), &mut c);
        check_version(&raw.version, &mut c);
        let policy = Policy {
            source,
            evaluate: evaluate_mode(&raw.mode, &mut c),
            properties: properties(&raw.properties, &mut c),
            fixtures: fixtures(&raw.fixtures, &mut c),
            freeze: freeze(&raw.freeze, &mut c),
            coverage: coverage(&raw.coverage, &mut c),
            tests: tests(&raw.tests, &mut c),
            agents: agents(&raw.agents, &mut c),
            trailers: trailers(&raw.trailers, &mut c),
            protect: protect(&raw.protect, &mut c),
            refs: refs(&raw.refs, &mut c),
            artifacts: artifacts(&raw.artifacts, &mut c),
            humans: humans(&raw.humans, &mut c),
            harness: harness(&raw.harness, &mut c),
            baseline: baseline(&raw.baseline, &mut c),
            bots: bots(&raw.bots, &mut c),
            levels: Levels::default(),
        };
        let policy = levels(&raw, policy, &mut c);
        c.finish(policy)
    }
}

/// The keys a ledger may have at its top level, in the order an unknown one's message lists
/// them.
const LEDGER_KEYS: &[&str] = &[
    "version",
    "mode",
    "properties",
    "fixtures",
    "freeze",
    "coverage",
    "tests",
    "agents",
    "trailers",
    "protect",
    "refs",
    "artifacts",
    "humans",
    "harness",
    "baseline",
    "bots",
    "levels",
];

/// The ledger's top-level values, each read on its own so that a mistake in one leaves the
/// others to be checked. A table with a TOML error (a wrong type, an unknown key) is noted
/// and then read as if absent.
fn read_tables<'a>(doc: DeTable<'a>, c: &mut Checker<'a>) -> RawLedger {
    let mut raw = RawLedger::default();
    for (key, value) in doc {
        match key.get_ref().as_ref() {
            "version" => raw.version = c.table(value).flatten(),
            "mode" => raw.mode = c.table(value).flatten(),
            "properties" => raw.properties = c.table(value).unwrap_or_default(),
            "fixtures" => raw.fixtures = c.table(value).unwrap_or_default(),
            "freeze" => raw.freeze = c.table(value).unwrap_or_default(),
            "coverage" => raw.coverage = c.table(value).unwrap_or_default(),
            "tests" => raw.tests = c.table(value).unwrap_or_default(),
            "agents" => raw.agents = c.table(value).unwrap_or_default(),
            "trailers" => raw.trailers = c.table(value).unwrap_or_default(),
            "protect" => raw.protect = c.table(value).unwrap_or_default(),
            "refs" => raw.refs = c.table(value).unwrap_or_default(),
            "artifacts" => raw.artifacts = c.table(value).unwrap_or_default(),
            "humans" => raw.humans = c.table(value).unwrap_or_default(),
            "harness" => raw.harness = c.table(value).unwrap_or_default(),
            "baseline" => raw.baseline = c.table(value).unwrap_or_default(),
            "bots" => raw.bots = c.table(value).unwrap_or_default(),
            "levels" => raw.levels = c.table(value).unwrap_or_default(),
            // Worded as serde words an unknown field (the tables' own unknown keys are).
            other => c.invalid(
                key.span(),
                toml::de::Error::unknown_field(other, LEDGER_KEYS)
                    .message()
                    .to_string(),
            ),
        }
    }
    raw
}

// Names the tests use that the code above no longer needs (the readers are in `tables.rs`).
#[cfg(test)]
use crate::{error::Location, policy::agents::AgentsPolicy};

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Policy, InputErrors> {
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
                .patterns
                .iter()
                .map(|t| t.text.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(texts(&embedded), texts(&built_in));
    }

    #[test]
    fn protect_lists_at_most_max_protect_patterns() {
        let ledger = |n: usize| {
            let paths: Vec<String> = (0..n).map(|i| format!("\"ops/f{i}.sh\"")).collect();
            format!(
                "version = 1\n[protect]\npaths = [\n{}\n]\n",
                paths.join(",\n")
            )
        };
        let at_most = parse(&ledger(MAX_PROTECT_PATTERNS)).unwrap();
        assert!(at_most.protect.set.is_match("ops/f4095.sh"));
        assert!(at_most.protect.set.is_match("OPS/F17.SH/x"));
        assert!(!at_most.protect.set.is_match("ops/f4096.sh"));
        let err = format!(
            "{:#}",
            parse(&ledger(MAX_PROTECT_PATTERNS + 1)).unwrap_err()
        );
        assert!(
            err.contains(":4:1: `protect.paths` has 4097 patterns, more than guard judges (4096)"),
            "{err}"
        );
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
    fn test_paths_default_to_what_the_starter_ledger_lists() {
        let (old, starter) = (parse("version = 1\n").unwrap(), Policy::embedded());
        assert_eq!(old.tests.paths, starter.tests.paths);
        assert_eq!(old.tests.weakened, Severity::Reject);
        assert_eq!(starter.tests.weakened, Severity::Reject);
        for (path, test) in [
            ("tests/test_a.py", true),
            ("tests/unit/helpers.py", true),
            ("tests/it.rs", true),
            ("src/pkg/test_codec.py", true),
            ("test_root.py", true),
            ("src/pkg/codec_test.py", true),
            ("src/pkg/codec.py", false),
            ("src/lib.rs", false),
        ] {
            assert_eq!(old.tests.is_test_file(path), test, "{path}");
        }
        // A directory covers what is under it; a bad glob is named with its place.
        let own = parse("[tests]\npaths = [\"checks/\"]\nweakened = \"warn\"\n").unwrap();
        assert_eq!(own.tests.paths, ["checks", "checks/**"]);
        assert!(
            own.tests.is_test_file("checks/verify.py") && !own.tests.is_test_file("tests/t.py")
        );
        assert_eq!(own.tests.weakened, Severity::Warn);
        let err = parse("[tests]\npaths = [\"../x\"]\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("qa/merge_ledger.toml:2:10: `tests.paths` glob \"../x\""),
            "{err}"
        );
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

    /// Each error as `(line, column, message)`.
    fn problems(errors: &InputErrors) -> Vec<(u64, u64, String)> {
        errors
            .iter()
            .map(|e| match e.location {
                Some(Location::LineColumn(l, c)) => (l, c, e.message.clone()),
                other => panic!("no line and column: {other:?} {e}"),
            })
            .collect()
    }

    #[test]
    fn three_mistakes_in_three_tables_are_all_reported_in_file_order() {
        // Written in another order than the tables are checked in; one is a TOML type error
        // (read table by table, it hides nothing else), one an unknown table.
        let text = "[coverage]
min_proven = 101.0

[refs]
allow_delete = \"no\"

[propertes]
min_lines = 8
";
        let err = parse(text).unwrap_err();
        assert_eq!(
            problems(&err),
            [
                (2, 14, "`coverage.min_proven` must be 0..=100, not 101".to_string()),
                (
                    5,
                    16,
                    "invalid type: string \"no\", expected a boolean".to_string()
                ),
                (
                    7,
                    2,
                    "unknown field `propertes`, expected one of `version`, `mode`, `properties`, `fixtures`, `freeze`, `coverage`, `tests`, `agents`, `trailers`, `protect`, `refs`, `artifacts`, `humans`, `harness`, `baseline`, `bots`, `levels`".to_string()
                ),
            ]
        );
        // Each reads as it does alone, one after the other.
        let alone: Vec<String> = [
            "[coverage]\nmin_proven = 101.0\n",
            "\n\n\n[refs]\nallow_delete = \"no\"\n",
            "\n\n\n\n\n\n[propertes]\nmin_lines = 8\n",
        ]
        .iter()
        .map(|text| {
            let err = parse(text).unwrap_err();
            assert!(err.rest().is_empty(), "{err}");
            err.to_string()
        })
        .collect();
        assert_eq!(err.to_string(), alone.join("\nerror: "));
    }

    #[test]
    fn every_protect_glob_that_is_no_glob_is_named() {
        // Two bad globs (the set refuses the first it meets; each must still be named), and
        // a bad glob beside an entry that does not normalize.
        for (paths, bad) in [
            // `paths = [` is 9 columns: the first entry's quote is column 10.
            (r#""a/[x", "ok/", "b/{y""#, vec![("a/[x", 10), ("b/{y", 25)]),
            (r#""/etc", "a/[x""#, vec![("/etc", 10), ("a/[x", 18)]),
        ] {
            let err = parse(&format!("[protect]\npaths = [{paths}]\n")).unwrap_err();
            let got: Vec<(u64, u64)> = problems(&err).iter().map(|p| (p.0, p.1)).collect();
            let want: Vec<(u64, u64)> = bad.iter().map(|&(_, col)| (2, col)).collect();
            assert_eq!(got, want, "{err}");
            for (pattern, _) in bad {
                assert!(
                    err.to_string().contains(&format!("pattern {pattern:?}")),
                    "{err}"
                );
            }
        }
    }

    #[test]
    fn every_step_reports_its_mistakes_beside_the_others() {
        let text = concat!(
            "version = 2\n",
            "[properties]\nmin_lines = 0\nfiles = [\"[\"]\nseeds = \"../seeds\"\n",
            "[fixtures]\nlockfile = \"/abs.json\"\npaths = [\"ok\", \"a\\\\b\"]\n",
            "[freeze]\nmax_active_leases = -1\n",
            "[agents]\ndefault = \"robot\"\nemails = [\"[x\"]\ntrailers = [\"nocolon\"]\n",
            "[trailers]\nfreeze = \"nocolon\"\n",
            "[protect]\npaths = [\"/etc\", \"ok/\", \"a/../b\"]\n",
            "[refs]\nprotected = [\"[y\"]\n",
            "[artifacts]\njunit = [\"../j.xml\"]\n",
            "[humans]\nallowed_signers = \"/signers\"\n",
            "[harness]\npaths = [\"c//d/../e\"]\n",
            "[baseline]\nvanished = \"maybe\"\n",
        );
        let err = parse(text).unwrap_err();
        let lines: Vec<u64> = problems(&err).iter().map(|p| p.0).collect();
        // Line 18 holds two bad `[protect]` entries, each reported.
        assert_eq!(
            lines,
            [
                1, 3, 4, 5, 7, 8, 10, 12, 13, 14, 16, 18, 18, 20, 22, 24, 26, 28
            ],
            "{err}"
        );
        // No more than these: the `[protect]` entry that is fine is not compiled into a set
        // alone (which could fail on its own account and add a problem of its own).
        assert!(problems(&err)[11].1 < problems(&err)[12].1, "{err}");
        assert!(problems(&err)[11].2.contains("\"/etc\""), "{err}");
        assert!(problems(&err)[12].2.contains("\"a/../b\""), "{err}");
    }

    #[test]
    fn a_syntax_error_stops_the_reading() {
        let err = parse("[properties]\nmin_lines = 0\n[fixtures\n").unwrap_err();
        assert_eq!(problems(&err).len(), 1, "{err}");
        assert_eq!(problems(&err)[0].0, 3, "{err}");
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
