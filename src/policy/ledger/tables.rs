//! The readers of the ledger's keys, one function per key or table (`version`, `mode`,
//! `[properties]` ... `[[bots]]`, `[levels]`): each checks its raw table and builds its part
//! of the policy, noting what is wrong; apart from the entry point that calls them in turn.

use std::ops::Range;

use globset::{Glob, GlobSet, GlobSetBuilder};
use toml::Spanned;

use super::checker::Checker;
use super::defaults::*;
use super::model::{
    ArtifactsPolicy, BaselinePolicy, CoveragePolicy, FixturesPolicy, FreezePolicy, HarnessPolicy,
    HarnessSections, HumansPolicy, Policy, PropertiesPolicy, ProtectPolicy, RefsPolicy,
    TestsPolicy, TrailerPolicy,
};
use super::patterns::{
    expand_protect_pattern, normalize_protect_pattern, protect_glob, protect_glob_cased,
};
use super::raw::{
    RawAgents, RawArtifacts, RawBaseline, RawBot, RawCoverage, RawFixtures, RawFreeze, RawHarness,
    RawHumans, RawLedger, RawProperties, RawProtect, RawRefs, RawTests, RawTrailers,
};
use crate::codes::Code;
use crate::error::InputError;
use crate::policy::agents::{
    AgentsPolicy, HumanTrailer, PatternSet, TrailerPatterns, trailer_pattern,
};
use crate::policy::bots::{self, BotsPolicy};
use crate::policy::caseless::{CaselessGlobSet, SetError};
use crate::policy::harness::{Format, Scope};
use crate::policy::levels::{self, Levels, Severity};
use crate::workspace::{check_relative, normalize_rel};

/// `version`: absent, or the one this guard reads.
pub(crate) fn check_version(version: &Option<Spanned<i64>>, c: &mut Checker) {
    if let Some(version) = version
        && *version.get_ref() != LEDGER_VERSION
    {
        c.invalid(
            version.span(),
            format!(
                "unsupported ledger version {}; this guard reads version {LEDGER_VERSION}",
                version.get_ref()
            ),
        );
    }
}

/// `mode`: `"enforce"` (the default) or `"evaluate"`.
pub(crate) fn evaluate_mode(mode: &Option<Spanned<String>>, c: &mut Checker) -> bool {
    match mode.as_ref().map(|m| (m.get_ref().as_str(), m.span())) {
        None | Some(("enforce", _)) => false,
        Some(("evaluate", _)) => true,
        Some((other, span)) => {
            c.invalid(
                span,
                format!("`mode` must be \"enforce\" or \"evaluate\", not {other:?}"),
            );
            false
        }
    }
}

/// `[properties]`.
pub(crate) fn properties(p: &RawProperties, c: &mut Checker) -> PropertiesPolicy {
    let min_lines = match &p.min_lines {
        None => DEFAULT_MIN_LINES,
        Some(v) if MIN_LINES_RANGE.contains(v.get_ref()) => *v.get_ref() as usize,
        Some(v) => {
            c.invalid(
                v.span(),
                format!(
                    "`properties.min_lines` must be {}..={}, not {}",
                    MIN_LINES_RANGE.start(),
                    MIN_LINES_RANGE.end(),
                    v.get_ref()
                ),
            );
            DEFAULT_MIN_LINES
        }
    };
    let file_patterns: Vec<String> = match &p.files {
        None => DEFAULT_PROPERTY_FILES
            .iter()
            .map(|s| s.to_string())
            .collect(),
        Some(list) => list.iter().map(|s| s.get_ref().clone()).collect(),
    };
    let mut globs = GlobSetBuilder::new();
    let mut each_compiles = true;
    for (i, pattern) in file_patterns.iter().enumerate() {
        match Glob::new(pattern) {
            Ok(glob) => {
                globs.add(glob);
            }
            Err(e) => {
                each_compiles = false;
                let span = p.files.as_ref().map(|l| l[i].span()).unwrap_or(0..0);
                c.invalid(
                    span,
                    format!("`properties.files` pattern {pattern:?} is not a valid glob: {e}"),
                );
            }
        }
    }
    // The set is compiled only when each glob did: one bad glob is one problem.
    let files = if each_compiles {
        globs.build().unwrap_or_else(|e| {
            let error = InputError::new(c.path, format!("`properties.files`: {e}"));
            c.note(error);
            GlobSet::empty()
        })
    } else {
        GlobSet::empty()
    };
    PropertiesPolicy {
        paths: c.rel_list(&p.paths, "properties.paths", DEFAULT_PROPERTY_PATHS),
        required: p.required.unwrap_or(DEFAULT_PROPERTIES_REQUIRED),
        seeds: c.rel_opt(&p.seeds, "properties.seeds"),
        min_lines,
        file_patterns,
        files,
    }
}

/// `[fixtures]`.
pub(crate) fn fixtures(f: &RawFixtures, c: &mut Checker) -> FixturesPolicy {
    FixturesPolicy {
        lockfile: c
            .rel_opt(&f.lockfile, "fixtures.lockfile")
            .unwrap_or_else(|| DEFAULT_LOCKFILE.to_string()),
        paths: c.rel_list(&f.paths, "fixtures.paths", DEFAULT_FIXTURE_PATHS),
        allow_unhashed_new: f.allow_unhashed_new.unwrap_or(DEFAULT_ALLOW_UNHASHED_NEW),
    }
}

/// `[freeze]`.
pub(crate) fn freeze(z: &RawFreeze, c: &mut Checker) -> FreezePolicy {
    let max_active_leases = z.max_active_leases.as_ref().and_then(|v| {
        let checked = u32::try_from(*v.get_ref()).map_err(|_| {
            c.error(
                v.span(),
                format!(
                    "`freeze.max_active_leases` must be 0 or more, not {}",
                    v.get_ref()
                ),
            )
        });
        c.or(checked.map(Some), None)
    });
    FreezePolicy {
        file: c
            .rel_opt(&z.file, "freeze.file")
            .unwrap_or_else(|| DEFAULT_FREEZE_FILE.to_string()),
        passing_frozen_is_error: z
            .passing_frozen_is_error
            .unwrap_or(DEFAULT_PASSING_FROZEN_IS_ERROR),
        max_active_leases,
    }
}

/// `[coverage]`.
pub(crate) fn coverage(raw: &RawCoverage, c: &mut Checker) -> CoveragePolicy {
    let min_proven = match &raw.min_proven {
        None => DEFAULT_MIN_PROVEN,
        Some(v) if MIN_PROVEN_RANGE.contains(v.get_ref()) => *v.get_ref(),
        Some(v) => {
            c.invalid(
                v.span(),
                format!(
                    "`coverage.min_proven` must be {}..={}, not {}",
                    MIN_PROVEN_RANGE.start(),
                    MIN_PROVEN_RANGE.end(),
                    v.get_ref()
                ),
            );
            DEFAULT_MIN_PROVEN
        }
    };
    CoveragePolicy {
        min_proven,
        required: raw.required.unwrap_or(DEFAULT_COVERAGE_REQUIRED),
    }
}

/// A list of identity globs (`agents.*`, `refs.protected`), `default` when absent; the first
/// wrong entry of the list is noted.
fn pattern_set(
    c: &mut Checker,
    values: &Option<Vec<Spanned<String>>>,
    key: &str,
    default: &[&str],
) -> PatternSet {
    let texts: Vec<String> = match values {
        None => default.iter().map(|s| s.to_string()).collect(),
        Some(list) => list.iter().map(|v| v.get_ref().clone()).collect(),
    };
    PatternSet::new(&texts).unwrap_or_else(|(i, e)| {
        let span = values
            .as_ref()
            .and_then(|l| l.get(i))
            .map(|v| v.span())
            .unwrap_or(0..0);
        c.invalid(span, format!("`{key}`: {e}"));
        PatternSet {
            patterns: Vec::new(),
            set: CaselessGlobSet::empty(),
        }
    })
}

/// `[agents]`.
pub(crate) fn agents(raw: &RawAgents, c: &mut Checker) -> AgentsPolicy {
    let default_agent = match &raw.default {
        None => DEFAULT_UNMATCHED_IS_AGENT,
        Some(v) => match v.get_ref().as_str() {
            "human" => false,
            "agent" => true,
            other => {
                c.invalid(
                    v.span(),
                    format!("`agents.default` must be \"human\" or \"agent\", not {other:?}"),
                );
                DEFAULT_UNMATCHED_IS_AGENT
            }
        },
    };
    let trailers = match &raw.trailers {
        None => DEFAULT_AGENT_TRAILERS
            .iter()
            .map(|t| trailer_pattern(t).expect("default patterns parse"))
            .collect(),
        Some(list) => list
            .iter()
            .filter_map(|v| match trailer_pattern(v.get_ref()) {
                Ok(pattern) => Some(pattern),
                Err(e) => {
                    c.invalid(v.span(), format!("`agents.trailers`: {e}"));
                    None
                }
            })
            .collect(),
    };
    let trailers = TrailerPatterns::new(trailers).unwrap_or_else(|e| {
        let first = raw.trailers.as_ref().and_then(|l| l.first());
        c.invalid(
            first.map_or(0..0, |v| v.span()),
            format!("`agents.trailers`: {e}"),
        );
        TrailerPatterns::new(Vec::new()).expect("an empty set compiles")
    });
    AgentsPolicy {
        default_agent,
        emails: pattern_set(c, &raw.emails, "agents.emails", DEFAULT_AGENT_EMAILS),
        names: pattern_set(c, &raw.names, "agents.names", DEFAULT_AGENT_NAMES),
        trailers,
        subjects: pattern_set(c, &raw.subjects, "agents.subjects", DEFAULT_AGENT_SUBJECTS),
        pushers: pattern_set(c, &raw.pushers, "agents.pushers", DEFAULT_AGENT_PUSHERS),
        formatting_coauthors: pattern_set(
            c,
            &raw.formatting_coauthors,
            "agents.formatting_coauthors",
            DEFAULT_FORMATTING_COAUTHORS,
        ),
    }
}

/// `[trailers]`.
pub(crate) fn trailers(t: &RawTrailers, c: &mut Checker) -> TrailerPolicy {
    let mut trailer = |value: &Option<Spanned<String>>, key: &str, default: &str| {
        let default = HumanTrailer::parse(default).expect("default trailers parse");
        match value {
            None => default,
            Some(v) => {
                let checked = HumanTrailer::parse(v.get_ref())
                    .map_err(|e| c.error(v.span(), format!("`trailers.{key}`: {e}")));
                c.or(checked, default)
            }
        }
    };
    TrailerPolicy {
        fixtures: trailer(&t.fixtures, "fixtures", DEFAULT_TRAILER_FIXTURES),
        freeze: trailer(&t.freeze, "freeze", DEFAULT_TRAILER_FREEZE),
        properties: trailer(&t.properties, "properties", DEFAULT_TRAILER_PROPERTIES),
        ledger: trailer(&t.ledger, "ledger", DEFAULT_TRAILER_LEDGER),
        harness: trailer(&t.harness, "harness", DEFAULT_TRAILER_HARNESS),
        test_removal: trailer(
            &t.test_removal,
            "test_removal",
            DEFAULT_TRAILER_TEST_REMOVAL,
        ),
    }
}

/// The most `[protect] paths` a ledger may list. Each is a rule that every judged commit's
/// changes are compared against, so thousands make every push slow; globset's own limit used
/// to refuse somewhat more than this, with a less helpful message.
pub const MAX_PROTECT_PATTERNS: usize = 4096;

/// `[protect]`.
pub(crate) fn protect(raw: &RawProtect, c: &mut Checker) -> ProtectPolicy {
    let entries = raw.paths.as_deref().unwrap_or_default();
    if entries.len() > MAX_PROTECT_PATTERNS {
        c.invalid(
            entries[0].span(),
            format!(
                "`protect.paths` has {} patterns, more than guard judges ({MAX_PROTECT_PATTERNS}): each is a rule every judged commit is compared against; use fewer, broader globs",
                entries.len()
            ),
        );
        return ProtectPolicy {
            paths: Vec::new(),
            set: CaselessGlobSet::empty(),
        };
    }
    // Each entry's globs, compiled into the set at once: a glob is parsed once on the way
    // (every push reads the ledger). Only when something is wrong is each one parsed alone,
    // so that every bad entry gets its own error.
    let mut patterns = Vec::new();
    let mut from = Vec::new();
    let mut each_normal = true;
    for (k, p) in entries.iter().enumerate() {
        match normalize_protect_pattern(p.get_ref()) {
            Ok(normal) => {
                for pattern in expand_protect_pattern(&normal) {
                    patterns.push(pattern);
                    from.push(k);
                }
            }
            Err(why) => {
                each_normal = false;
                c.invalid(
                    p.span(),
                    format!("`protect.paths` pattern {:?}: {why}", p.get_ref()),
                );
            }
        }
    }
    let compiled = each_normal.then(|| CaselessGlobSet::new(&patterns, protect_glob_cased));
    let set = match compiled {
        Some(Ok(set)) => set,
        // Each glob compiled alone; together they exceed the engine's size limit.
        Some(Err(SetError::Set(e))) => {
            let first = entries.first().map_or(0..0, |p| p.span());
            c.invalid(
                first,
                format!(
                    "`protect.paths`: its {} patterns do not compile into one set ({e}); use fewer, broader globs",
                    entries.len(),
                ),
            );
            CaselessGlobSet::empty()
        }
        // A glob that is no glob, or an entry that did not normalize: name each bad glob.
        Some(Err(SetError::Glob(..))) | None => {
            let mut named = vec![false; entries.len()];
            for (pattern, &k) in patterns.iter().zip(&from) {
                if named[k] {
                    continue;
                }
                if let Err(e) = protect_glob(pattern) {
                    named[k] = true;
                    let p = &entries[k];
                    c.invalid(
                        p.span(),
                        format!("`protect.paths` pattern {:?}: {e}", p.get_ref()),
                    );
                }
            }
            CaselessGlobSet::empty()
        }
    };
    ProtectPolicy {
        paths: patterns,
        set,
    }
}

/// `[refs]`.
pub(crate) fn refs(r: &RawRefs, c: &mut Checker) -> RefsPolicy {
    RefsPolicy {
        protected: pattern_set(c, &r.protected, "refs.protected", DEFAULT_PROTECTED_REFS),
        allow_delete: r.allow_delete.unwrap_or(DEFAULT_ALLOW_DELETE),
    }
}

/// `[artifacts]`: file names in the artifact directory.
pub(crate) fn artifacts(a: &RawArtifacts, c: &mut Checker) -> ArtifactsPolicy {
    fn name(c: &mut Checker, v: &Spanned<String>, key: &str) -> Option<String> {
        match check_relative(v.get_ref()) {
            Ok(_) => Some(normalize_rel(v.get_ref())),
            Err(e) => {
                c.invalid(
                    v.span(),
                    format!("`artifacts.{key}` = {:?}: {e}", v.get_ref()),
                );
                None
            }
        }
    }
    ArtifactsPolicy {
        required: a.required.unwrap_or(DEFAULT_ARTIFACTS_REQUIRED),
        junit: match &a.junit {
            None => DEFAULT_JUNIT_ARTIFACTS
                .iter()
                .map(|s| s.to_string())
                .collect(),
            Some(list) => list.iter().filter_map(|v| name(c, v, "junit")).collect(),
        },
        coverage: a.coverage.as_ref().and_then(|v| name(c, v, "coverage")),
        collected: a.collected.as_ref().and_then(|v| name(c, v, "collected")),
        retest_junit: match &a.retest_junit {
            None => DEFAULT_RETEST_JUNIT_ARTIFACTS
                .iter()
                .map(|s| s.to_string())
                .collect(),
            Some(list) => list
                .iter()
                .filter_map(|v| name(c, v, "retest_junit"))
                .collect(),
        },
    }
}

/// `[humans]`.
pub(crate) fn humans(h: &RawHumans, c: &mut Checker) -> HumansPolicy {
    HumansPolicy {
        allowed_signers: c.rel_opt(&h.allowed_signers, "humans.allowed_signers"),
        require_signature: h.require_signature.unwrap_or(DEFAULT_REQUIRE_SIGNATURE),
    }
}

/// `[harness]`: path globs like `[protect]`'s, and per file glob the section selectors
/// (dotted table names for `*.toml` files, section-name globs for INI files).
pub(crate) fn harness(raw: &RawHarness, c: &mut Checker) -> HarnessPolicy {
    // Spelled as `[protect]` entries are (`a/./b`, `a//b` normalised; `..`, absolute paths and
    // Windows separators refused): a spelling that matches no tree path protects nothing.
    fn glob(c: &mut Checker, value: &Spanned<String>, key: &str) -> Option<String> {
        let text = value.get_ref();
        let checked = normalize_protect_pattern(text).and_then(|normal| {
            protect_glob(&normal)
                .map(|_| normal)
                .map_err(|e| e.to_string())
        });
        match checked {
            Ok(normal) => Some(normal),
            Err(e) => {
                c.invalid(value.span(), format!("`{key}` glob {text:?}: {e}"));
                None
            }
        }
    }
    let paths = match &raw.paths {
        None => DEFAULT_HARNESS_PATHS
            .iter()
            .flat_map(|p| expand_protect_pattern(p))
            .collect(),
        Some(list) => list
            .iter()
            .filter_map(|value| glob(c, value, "harness.paths"))
            .flat_map(|normal| expand_protect_pattern(&normal))
            .collect(),
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
                let normal = glob(c, file, "harness.sections");
                let texts: Vec<String> = selectors.iter().map(|s| s.get_ref().clone()).collect();
                let scope = match Scope::parse(Format::of(file.get_ref()), &texts) {
                    Ok(scope) => Some(scope),
                    Err((i, e)) => {
                        let span = selectors.get(i).map_or(0..0, |s| s.span());
                        c.invalid(
                            span,
                            format!("`harness.sections` for {:?}: {e}", file.get_ref()),
                        );
                        None
                    }
                };
                if let (Some(file), Some(scope)) = (normal, scope) {
                    out.push(HarnessSections { file, scope });
                }
            }
            out
        }
    };
    HarnessPolicy { paths, sections }
}

/// `[tests]`.
pub(crate) fn tests(raw: &RawTests, c: &mut Checker) -> TestsPolicy {
    let weakened = match &raw.weakened {
        None => DEFAULT_WEAKENED_SEVERITY,
        Some(v) => severity(c, v, "tests.weakened").unwrap_or(DEFAULT_WEAKENED_SEVERITY),
    };
    let (paths, set) = path_globs(c, &raw.paths, "tests.paths", DEFAULT_TEST_PATHS);
    TestsPolicy {
        failures_reject: raw.failures_reject.unwrap_or(DEFAULT_FAILURES_REJECT),
        paths,
        set,
        weakened,
        python_functions: vec!["test".to_string()],
        python_classes: vec!["Test".to_string()],
        python_files: vec!["test_*.py".to_string(), "*_test.py".to_string()],
    }
}

/// `"reject"`, `"warn"` or `"off"`; `None` once a wrong value is noted.
fn severity(c: &mut Checker, v: &Spanned<String>, key: &str) -> Option<Severity> {
    match v.get_ref().as_str() {
        "reject" => Some(Severity::Reject),
        "warn" => Some(Severity::Warn),
        "off" => Some(Severity::Off),
        other => {
            c.invalid(
                v.span(),
                format!("`{key}` must be \"reject\", \"warn\" or \"off\", not {other:?}"),
            );
            None
        }
    }
}

/// A list of path globs written as `[protect]` entries are (normalised, a directory covering
/// what is under it), `default` when absent, and the set they compile into. Each wrong entry
/// is noted; the set is compiled only when each glob did.
fn path_globs(
    c: &mut Checker,
    values: &Option<Vec<Spanned<String>>>,
    key: &str,
    default: &[&str],
) -> (Vec<String>, CaselessGlobSet) {
    let written: Vec<(String, Range<usize>)> = match values {
        None => default.iter().map(|p| (p.to_string(), 0..0)).collect(),
        Some(list) => list
            .iter()
            .map(|v| (v.get_ref().clone(), v.span()))
            .collect(),
    };
    let mut patterns = Vec::new();
    let mut each_compiles = true;
    for (text, span) in written {
        let checked = normalize_protect_pattern(&text).and_then(|normal| {
            protect_glob(&normal)
                .map(|_| normal)
                .map_err(|e| e.to_string())
        });
        match checked {
            Ok(normal) => {
                for pattern in expand_protect_pattern(&normal) {
                    if protect_glob(&pattern).is_ok() {
                        patterns.push(pattern);
                    }
                }
            }
            Err(e) => {
                each_compiles = false;
                c.invalid(span, format!("`{key}` glob {text:?}: {e}"));
            }
        }
    }
    let set = if each_compiles {
        CaselessGlobSet::new(&patterns, protect_glob_cased).unwrap_or_else(|e| {
            let error = InputError::new(c.path, format!("`{key}`: {}", set_error(e)));
            c.note(error);
            CaselessGlobSet::empty()
        })
    } else {
        CaselessGlobSet::empty()
    };
    (patterns, set)
}

/// globset's reason a checked set did not compile (each glob did alone).
fn set_error(e: SetError) -> globset::Error {
    match e {
        SetError::Glob(_, e) | SetError::Set(e) => e,
    }
}

/// `[baseline]`.
/// `[levels]`: each key a reason code, each value `reject`, `warn` or `off`; a code in
/// `levels::FIXED` only `reject`. The older keys for three codes (`tests.weakened`,
/// `baseline.vanished`, `baseline.newly_skipped`) are the same setting: set in both places,
/// they must agree; set in one, both read it.
pub(crate) fn levels(raw: &RawLedger, mut policy: Policy, c: &mut Checker) -> Policy {
    let mut levels = Levels::default();
    for (key, value) in &raw.levels {
        let Some(code) = levels::code_named(key.get_ref()) else {
            c.invalid(
                key.span(),
                format!(
                    "`levels.{}`: not a reason code guard reports (README, \"Reason codes\", lists them; e.g. `frozen_test_passed`, `weakened_test`)",
                    key.get_ref()
                ),
            );
            continue;
        };
        let Some(level) = severity(c, value, &format!("levels.{}", key.get_ref())) else {
            continue;
        };
        if level != Severity::Reject && levels::FIXED.contains(&code) {
            c.invalid(
                value.span(),
                format!(
                    "`levels.{code}` cannot be lowered: it guards the gate itself (who may change its files, its history, what proves a human); only \"reject\""
                ),
            );
            continue;
        }
        levels.set(code, level);
    }
    let aliases = [
        (
            Code::WeakenedTest,
            raw.tests.weakened.as_ref(),
            &mut policy.tests.weakened,
        ),
        (
            Code::TestVanished,
            raw.baseline.vanished.as_ref(),
            &mut policy.baseline.vanished,
        ),
        (
            Code::TestNewlySkipped,
            raw.baseline.newly_skipped.as_ref(),
            &mut policy.baseline.newly_skipped,
        ),
    ];
    for (code, old_key, old_level) in aliases {
        match (levels.names(code), old_key) {
            (true, Some(old)) if levels.of(code) != *old_level => c.invalid(
                old.span(),
                format!("`[levels] {code}` and this key set one thing two ways, differently: keep `[levels] {code}`"),
            ),
            (true, _) => *old_level = levels.of(code),
            (false, _) => levels.set(code, *old_level),
        }
    }
    policy.levels = levels;
    policy
}

/// `[[bots]]`: each entry's e-mail exact, its paths repository globs, its change a known kind.
pub(crate) fn bots(raw: &[RawBot], c: &mut Checker) -> BotsPolicy {
    let mut allowances = Vec::new();
    for bot in raw {
        let who = match bots::check_who(bot.who.get_ref()) {
            Ok(who) => who,
            Err(why) => {
                c.invalid(
                    bot.who.span(),
                    format!("`bots.who` = {:?}: {why}", bot.who.get_ref()),
                );
                continue;
            }
        };
        let Some(change) = bots::BotChange::parse(bot.change.get_ref()) else {
            c.invalid(
                bot.change.span(),
                format!(
                    "`bots.change` = {:?}: not a kind of change guard judges; one of {}",
                    bot.change.get_ref(),
                    bots::KINDS.join(", ")
                ),
            );
            continue;
        };
        if bot.paths.is_empty() {
            c.invalid(
                bot.who.span(),
                "`bots.paths` is empty: name the protected paths the bot may change".into(),
            );
            continue;
        }
        let mut paths = Vec::new();
        for path in &bot.paths {
            match normalize_protect_pattern(path.get_ref()) {
                Ok(normal) => paths.push(normal),
                Err(why) => c.invalid(
                    path.span(),
                    format!("`bots.paths` pattern {:?}: {why}", path.get_ref()),
                ),
            }
        }
        if paths.len() != bot.paths.len() {
            continue;
        }
        match bots::path_set(&paths) {
            Ok(set) => allowances.push(bots::BotAllowance {
                who,
                paths,
                set,
                change,
            }),
            Err(e) => c.invalid(bot.paths[0].span(), format!("`bots.paths`: {e}")),
        }
    }
    BotsPolicy { allowances }
}

pub(crate) fn baseline(raw: &RawBaseline, c: &mut Checker) -> BaselinePolicy {
    let mut read = |v: &Option<Spanned<String>>, key: &str| match v {
        None => DEFAULT_BASELINE_SEVERITY,
        Some(v) => severity(c, v, &format!("baseline.{key}")).unwrap_or(DEFAULT_BASELINE_SEVERITY),
    };
    let vanished = read(&raw.vanished, "vanished");
    let newly_skipped = read(&raw.newly_skipped, "newly_skipped");
    let entries = raw.ignore.as_deref().unwrap_or_default();
    let mut set = GlobSetBuilder::new();
    let mut ignore = Vec::new();
    let mut each_compiles = true;
    for v in entries {
        match crate::testid::id_glob(v.get_ref()) {
            Ok(glob) => {
                set.add(glob);
                ignore.push(v.get_ref().clone());
            }
            Err(e) => {
                each_compiles = false;
                c.invalid(
                    v.span(),
                    format!("`baseline.ignore` pattern {:?}: {e}", v.get_ref()),
                );
            }
        }
    }
    let ignore_set = if each_compiles {
        set.build().unwrap_or_else(|e| {
            let first = entries.first().map_or(0..0, |p| p.span());
            c.invalid(first, format!("`baseline.ignore`: {e}"));
            GlobSet::empty()
        })
    } else {
        GlobSet::empty()
    };
    BaselinePolicy {
        vanished,
        newly_skipped,
        ignore,
        ignore_set,
    }
}
