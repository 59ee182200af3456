//! The scoring engine behind `guard score` (and, later, the artifact half of `guard check`
//! and the hooks): reads the policy files and artifacts of a workspace, streams the JUnit
//! reports once, and runs every rule. The decision is left to `findings::Decision`.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::PathBuf;

use jiff::civil::Date;

use crate::error::InputError;
use crate::evidence::collected::read_collected;
use crate::evidence::coverage::{Coverage, read_coverage};
use crate::evidence::junit::read_junit;
use crate::evidence::record::Outcome;
use crate::policy::freeze::{FreezeFile, Lease};
use crate::policy::ledger::{Policy, PropertiesPolicy, Severity};
use crate::policy::load::{
    in_ledger, no_freeze, no_lockfile, not_found, parse_freeze, parse_lockfile,
};
use crate::policy::lockfile::Lockfile;
use crate::report::finding::{Code, Finding};
use crate::report::{RunnerExit, Stats};
use crate::rules;
use crate::runner::TestRunner;
use crate::source::Source;
use crate::testid::{PathMatcher, collected_keys, coverage_context_test, id_key};

mod records;

use records::{Accumulator, record};

/// Artifacts to score, as given on the command line.
#[derive(Debug, Clone, Default)]
pub struct Artifacts {
    pub junit: Vec<PathBuf>,
    /// The JUnit reports of the base revision, to compare the tests with (`[baseline]`).
    pub baseline_junit: Vec<PathBuf>,
    /// The JUnit reports of the humans' tests run against the range's code (`guard
    /// retest`): `check` holds each test an agent changed, as the base has it, to them.
    pub retest_junit: Vec<PathBuf>,
    /// Whether the retest reports must be there when an agent changed a test (the hooks,
    /// with `artifacts.required`); `check` expects those it was given.
    pub retest_required: bool,
    pub coverage: Option<PathBuf>,
    pub collected: Option<PathBuf>,
    /// Overrides the ledger's `coverage.min_proven`.
    pub min_proven: Option<f64>,
    /// Whether missing evidence (no JUnit, a required coverage report absent) rejects.
    /// `score` always expects evidence; `check` only when some artifact was given.
    pub expect_evidence: bool,
    /// How the test runner that wrote the reports ended, when guard ran it (`guard run`).
    pub runner: Option<RunnerExit>,
}

impl Artifacts {
    /// Whether any evidence was given: a baseline alone counts, so that `check` without the
    /// current run's reports says `junit_missing` instead of skipping the comparison.
    pub fn any(&self) -> bool {
        !self.junit.is_empty()
            || !self.baseline_junit.is_empty()
            || self.coverage.is_some()
            || self.collected.is_some()
    }
}

#[derive(Debug, Clone)]
pub struct Evaluation {
    pub findings: Vec<Finding>,
    pub stats: Stats,
    /// Active leases whose test passed, whether or not that rejects by itself
    /// (`passing_frozen_is_error`): `check` asks whether the range rewrote their tests.
    pub passing_frozen: Vec<Lease>,
    /// Findings the ledger asks to show without rejecting (`[baseline]` set to "warn").
    pub warnings: Vec<Finding>,
}

/// What the scored tree is, which decides what a broken policy file in it means.
#[derive(Clone, Copy)]
pub enum Scored<'a> {
    /// A working tree (`guard score`): a policy file that is missing, not a regular file or
    /// malformed is input guard cannot judge.
    WorkTree,
    /// The tip of a range (`guard check`, the hooks): a policy file the range broke is a
    /// finding. The range broke it when `base` (the range's base) holds it intact, or when
    /// there is no base (the range made everything). Fixtures that are not regular files are
    /// findings here too (see `Source::list_fixtures`).
    RangeTip { base: Option<&'a dyn Source> },
}

/// The proven-coverage floor applied: `--min-proven`, else the ledger's.
pub fn floor(policy: &Policy, artifacts: &Artifacts) -> f64 {
    artifacts.min_proven.unwrap_or(policy.coverage.min_proven)
}

/// Scores `artifacts` against `policy`, reading policy files and fixtures from the working
/// tree `source`, on `today` (UTC).
pub fn score(
    source: &dyn Source,
    policy: &Policy,
    artifacts: &Artifacts,
    today: Date,
) -> Result<Evaluation, InputError> {
    score_tree(source, Scored::WorkTree, policy, artifacts, today)
}

/// Scores `artifacts` against `policy`, reading policy files and fixtures from `source`,
/// which is what `scored` says.
pub fn score_tree(
    source: &dyn Source,
    scored: Scored,
    policy: &Policy,
    artifacts: &Artifacts,
    today: Date,
) -> Result<Evaluation, InputError> {
    let mut findings = Vec::new();
    let freeze = match load_in(
        source,
        scored,
        policy,
        PolicyFile::Freeze,
        parse_freeze,
        no_freeze,
    )? {
        Loaded::Parsed(f) => Some(f),
        Loaded::Broken(f) => {
            findings.push(f);
            None
        }
    };
    // A broken freeze file freezes nothing: the tip has no valid lease.
    let empty = FreezeFile::empty();
    let leases = freeze.as_ref().unwrap_or(&empty);
    let active: Vec<&Lease> = rules::freeze::active_leases(leases, today);

    let (collected, in_collected) = collected_ids(artifacts, &active)?;

    let packages = member_packages(source, &policy.properties)?;
    let mut acc = Accumulator::new(&active, &policy.properties, &packages, collected.as_deref());
    let compare_baseline = !artifacts.baseline_junit.is_empty()
        && (policy.baseline.vanished != Severity::Off
            || policy.baseline.newly_skipped != Severity::Off);
    let mut baseline_tests = rules::evidence::baseline::Tests::new();
    if compare_baseline {
        acc.all = Some(rules::evidence::baseline::Tests::new());
        for path in &artifacts.baseline_junit {
            read_junit(path, &mut |case| record(&mut baseline_tests, case))?;
        }
    }
    read_reports(source, artifacts, &mut acc, &mut findings)?;
    let have_reports = !artifacts.junit.is_empty();

    let mut lease_counts = None;
    if let Some(freeze) = &freeze {
        let (freeze_findings, freeze_stats) = rules::freeze::judge(&rules::freeze::FreezeInput {
            freeze_path: &policy.freeze.file,
            file: freeze,
            ledger_budget: policy.freeze.max_active_leases,
            today,
            passing_frozen_is_error: policy.freeze.passing_frozen_is_error,
            outcomes: have_reports.then_some(acc.frozen.as_slice()),
            collected: in_collected.as_deref(),
        });
        findings.extend(freeze_findings);
        lease_counts = Some(freeze_stats);
    }
    let passing_frozen: Vec<Lease> = if have_reports && freeze.is_some() {
        active
            .iter()
            .zip(&acc.frozen)
            .filter(|(_, outcome)| **outcome == Some(Outcome::Passed))
            .map(|(lease, _)| (*lease).clone())
            .collect()
    } else {
        Vec::new()
    };

    // Listed once: the thin-file check and the "did every property file run" check share it.
    let prop_files = property_files(source, policy)?;
    let mut property_failures = None;
    if have_reports {
        let checks = ReportChecks {
            acc: &acc,
            active: &active,
            collected: collected.as_deref(),
            prop_files: &prop_files,
        };
        property_failures = Some(judge_reports(
            source,
            policy,
            artifacts,
            &checks,
            &mut findings,
        ));
    }
    findings.extend(judge_property_files(source, policy, &prop_files)?);
    let mut warnings = Vec::new();
    if let Some(current) = acc.all.as_ref().filter(|_| have_reports) {
        let judged = rules::evidence::baseline::judge(&baseline_tests, current, &policy.baseline);
        findings.extend(judged.rejects);
        warnings = judged.warnings;
    }

    let fixture_delta = judge_fixtures_in(source, scored, policy, &mut findings)?;

    let (coverage, floor) = judge_coverage(policy, artifacts, &active, &mut findings)?;

    Ok(Evaluation {
        findings,
        passing_frozen,
        warnings,
        stats: Stats {
            today_utc: today.to_string(),
            collected_tests: collected.as_ref().map(Vec::len),
            active_leases: lease_counts.map(|s| s.active),
            expired_leases: lease_counts.map(|s| s.expired),
            proven_coverage_percent: coverage.map(|c| c.percent),
            min_proven_coverage_percent: Some(floor),
            fixture_digest_delta: fixture_delta,
            property_failures,
            agent_added_leases: Some(0),
            junit: Some(acc.junit_stats()),
        },
    })
}

/// The fixtures against the lockfile `scored` holds: findings appended to `findings`; the
/// number of fixtures whose digest differs, when the lockfile could be read.
fn judge_fixtures_in(
    source: &dyn Source,
    scored: Scored,
    policy: &Policy,
    findings: &mut Vec<Finding>,
) -> Result<Option<usize>, InputError> {
    match load_in(
        source,
        scored,
        policy,
        PolicyFile::Lockfile,
        parse_lockfile,
        no_lockfile,
    )? {
        Loaded::Parsed(lockfile) => {
            let (fixture_findings, delta) = judge_fixtures(source, policy, &lockfile)?;
            findings.extend(fixture_findings);
            Ok(Some(delta))
        }
        // Without a lockfile no fixture can be verified (the finding says so), but one that
        // is not a regular file is still named.
        Loaded::Broken(f) => {
            findings.push(f);
            let listing = source.list_fixtures(&policy.fixtures.paths)?;
            let (not_regular, _) = rules::fixtures::judge(&rules::fixtures::FixturesInput {
                lockfile_path: &policy.fixtures.lockfile,
                expected: &BTreeMap::new(),
                actual: &BTreeMap::new(),
                corpus: &BTreeSet::new(),
                not_regular: &listing.not_regular,
                allow_unhashed_new: true,
            });
            findings.extend(not_regular);
            Ok(None)
        }
    }
}

/// What the reports `checks` read show, beyond the freeze file: properties that failed or
/// did not run, failed tests and suites, collected tests missing from the reports, a runner
/// whose exit contradicts them. Findings appended to `findings`; returns how many property
/// tests failed or did not run.
fn judge_reports(
    source: &dyn Source,
    policy: &Policy,
    artifacts: &Artifacts,
    checks: &ReportChecks,
    findings: &mut Vec<Finding>,
) -> usize {
    let ReportChecks {
        acc,
        active,
        collected,
        prop_files,
    } = *checks;
    let (found, failures) = rules::properties::judge_results(
        &acc.properties,
        &policy.properties.paths,
        policy.properties.required,
        TestRunner::detect(source),
    );
    findings.extend(found);
    // Every property file must have run: one missing from the reports may have been
    // deselected (an unprotected conftest.py, `-k`, addopts) rather than passed.
    let not_run = rules::properties::judge_files_ran(prop_files, &acc.property_sources);
    let property_failures = failures + not_run.len();
    findings.extend(not_run);
    findings.extend(rules::evidence::test_failures::judge(
        &acc.failures,
        policy.tests.failures_reject,
    ));
    findings.extend(rules::evidence::test_failures::judge_suites(
        &acc.suite_failures,
        policy.tests.failures_reject,
    ));
    if let (Some(ids), Some(index)) = (collected, &acc.collected) {
        // A frozen test missing from the reports is the freeze rule's to judge.
        let lease_keys: HashSet<String> = active.iter().map(|l| id_key(&l.nodeid)).collect();
        let missing: Vec<&str> = ids
            .iter()
            .zip(&index.found)
            .filter(|(id, found)| {
                !**found && !collected_keys(id).iter().any(|k| lease_keys.contains(k))
            })
            .map(|(id, _)| id.as_str())
            .collect();
        findings.extend(rules::evidence::cross_checks::judge_collected(&missing));
    }
    if let Some(runner) = &artifacts.runner {
        let reports_show_failure =
            acc.counts.failed + acc.counts.errors > 0 || !acc.suite_failures.is_empty();
        findings.extend(rules::evidence::cross_checks::judge_runner(
            runner,
            reports_show_failure,
        ));
    }
    property_failures
}

/// What [`judge_reports`] reads: the reports as read, the active leases, the collected ids.
struct ReportChecks<'a> {
    acc: &'a Accumulator<'a>,
    active: &'a [&'a Lease],
    collected: Option<&'a [String]>,
    prop_files: &'a [String],
}

/// The proven coverage of the report `artifacts` name against the floor: findings appended
/// to `findings`; returns the coverage read, if any, and the floor.
fn judge_coverage(
    policy: &Policy,
    artifacts: &Artifacts,
    active: &[&Lease],
    findings: &mut Vec<Finding>,
) -> Result<(Option<Coverage>, f64), InputError> {
    let (coverage, frozen_only) = match &artifacts.coverage {
        Some(path) => {
            let (c, frozen_only) = proven_coverage(read_coverage(path)?, active, path)?;
            (Some(c), frozen_only)
        }
        None => (None, None),
    };
    let floor = floor(policy, artifacts);
    let coverage_path = artifacts.coverage.as_ref().map(|p| p.display().to_string());
    findings.extend(rules::evidence::coverage::judge(
        coverage.as_ref(),
        coverage_path.as_deref(),
        floor,
        policy.coverage.required && artifacts.expect_evidence,
        frozen_only,
    ));
    Ok((coverage, floor))
}

/// Reads the JUnit reports `artifacts` name into `acc`; a run that should have left
/// reports and left none is a finding.
fn read_reports(
    source: &dyn Source,
    artifacts: &Artifacts,
    acc: &mut Accumulator,
    findings: &mut Vec<Finding>,
) -> Result<(), InputError> {
    if artifacts.junit.is_empty() && artifacts.expect_evidence {
        findings.push(rules::evidence::test_failures::junit_missing(
            &TestRunner::detect(source).junit_hint(),
        ));
    }
    for path in &artifacts.junit {
        let read = read_junit(path, &mut |case| acc.add(case))?;
        acc.add_counts(read.counts);
        let shown = path.display().to_string();
        acc.suite_failures.extend(
            read.suite_failures
                .into_iter()
                .map(|failure| (shown.clone(), failure)),
        );
    }
    Ok(())
}

/// The collected test ids, and per active lease whether its test is among them.
type CollectedIds = (Option<Vec<String>>, Option<Vec<bool>>);

/// The test ids the runner collected (`[artifacts] collected`), and for each active lease
/// whether its test is among them.
fn collected_ids(artifacts: &Artifacts, active: &[&Lease]) -> Result<CollectedIds, InputError> {
    let collected = match &artifacts.collected {
        Some(path) => Some(read_collected(path)?),
        None => None,
    };
    let in_collected: Option<Vec<bool>> = collected.as_ref().map(|ids| {
        let keys: std::collections::HashSet<String> =
            ids.iter().flat_map(|id| collected_keys(id)).collect();
        active
            .iter()
            .map(|l| keys.contains(&id_key(&l.nodeid)))
            .collect()
    });
    Ok((collected, in_collected))
}

/// The proven figure of a coverage report. A report that records which test ran each line
/// (coverage.py JSON with contexts, from pytest-cov's `--cov-context=test`) proves it from
/// one run: the contexts of active leases' tests (their run, setup and teardown) are found
/// by the id normalisation freeze entries use, and lines only they ran do not count. Any
/// other report (or one in which no frozen test ran) is taken as the run with frozen tests
/// deselected: its figure is the proven one. Also returns how many executed lines only
/// frozen tests ran, when the report tells.
fn proven_coverage(
    mut coverage: Coverage,
    active: &[&Lease],
    path: &std::path::Path,
) -> Result<(Coverage, Option<u64>), InputError> {
    let Some(contexts) = coverage.contexts.take() else {
        return Ok((coverage, None));
    };
    let keys: HashSet<String> = active.iter().map(|l| id_key(&l.nodeid)).collect();
    let frozen: Vec<bool> = contexts
        .names
        .iter()
        .map(|name| coverage_context_test(name).is_some_and(|id| keys.contains(&id_key(id))))
        .collect();
    if !frozen.contains(&true) {
        return Ok((coverage, Some(0)));
    }
    let proven = rules::evidence::coverage::proven_lines(&contexts, &frozen);
    if contexts.branches > 0 {
        return Err(InputError::new(
            path,
            format!(
                "frozen tests ran in this run ({} executed lines only they ran), and the report measured branches: coverage.py records which test ran each line, not which took each branch, so the branches they alone took cannot be left out",
                proven.frozen_only
            ),
        )
        .with_hint(
            "measure lines only (no `--cov-branch`) for a figure from one run, or score the coverage of a run with frozen tests deselected (`guard deselect`)",
        ));
    }
    coverage.percent = proven.percent();
    coverage.covered = Some(proven.covered);
    coverage.total = Some(proven.total);
    Ok((coverage, Some(proven.frozen_only)))
}

/// The two policy files a scored tree holds beside the ledger.
#[derive(Clone, Copy)]
enum PolicyFile {
    Freeze,
    Lockfile,
}

impl PolicyFile {
    fn rel(self, policy: &Policy) -> &str {
        match self {
            PolicyFile::Freeze => &policy.freeze.file,
            PolicyFile::Lockfile => &policy.fixtures.lockfile,
        }
    }

    /// The ledger key that names the file.
    fn key(self) -> &'static str {
        match self {
            PolicyFile::Freeze => "freeze.file",
            PolicyFile::Lockfile => "fixtures.lockfile",
        }
    }

    fn what(self) -> &'static str {
        match self {
            PolicyFile::Freeze => "freeze file",
            PolicyFile::Lockfile => "lockfile",
        }
    }

    /// What judging goes without when the file is broken.
    fn consequence(self) -> &'static str {
        match self {
            PolicyFile::Freeze => "no lease applies, so frozen tests count as ordinary tests",
            PolicyFile::Lockfile => "no fixture can be verified without it",
        }
    }

    fn missing(self) -> Code {
        match self {
            PolicyFile::Freeze => Code::FreezeFileMissing,
            PolicyFile::Lockfile => Code::LockfileMissing,
        }
    }

    fn invalid(self) -> Code {
        match self {
            PolicyFile::Freeze => Code::FreezeFileInvalid,
            PolicyFile::Lockfile => Code::LockfileInvalid,
        }
    }
}

/// A policy file as the scored tree holds it.
enum Loaded<T> {
    Parsed(T),
    /// The range broke it; the finding says how.
    Broken(Finding),
}

/// Reads and parses `file` from `source`. A file that cannot be read or parsed is an error,
/// unless `scored` is a range's tip and the range broke it: then it is a finding.
fn load_in<T>(
    source: &dyn Source,
    scored: Scored,
    policy: &Policy,
    file: PolicyFile,
    parse: fn(&Policy, &[u8]) -> Result<T, InputError>,
    absent: fn(&Policy) -> T,
) -> Result<Loaded<T>, InputError> {
    let rel = file.rel(policy);
    let key = file.key();
    let (code, why, error) = match source.read(rel) {
        Ok(Some(bytes)) => match parse(policy, &bytes) {
            Ok(parsed) => return Ok(Loaded::Parsed(parsed)),
            Err(e) => {
                let at = e.position().map(|p| format!(" at {p}")).unwrap_or_default();
                let why = format!("the {} does not parse{at}: {}", file.what(), e.message);
                (file.invalid(), why, e)
            }
        },
        Ok(None) if policy.files_optional() => return Ok(Loaded::Parsed(absent(policy))),
        Ok(None) => {
            let why = format!(
                "the {} the ledger names as `{key}` is missing in the {}",
                file.what(),
                source.describe()
            );
            (file.missing(), why, not_found(source, policy, rel, key))
        }
        Err(e) => {
            let why = format!(
                "the {} the ledger names as `{key}` cannot be read as a regular file: {}",
                file.what(),
                e.message
            );
            (file.missing(), why, in_ledger(policy, key, e))
        }
    };
    let Scored::RangeTip { base } = scored else {
        return Err(error);
    };
    // Broken in the base too: the range did not break it, and the base cannot be judged.
    let base_intact = base.is_none_or(|b| match b.read(rel) {
        Ok(Some(bytes)) => parse(policy, &bytes).is_ok(),
        Ok(None) => policy.files_optional(),
        Err(_) => false,
    });
    if !base_intact {
        return Err(error);
    }
    Ok(Loaded::Broken(rules::history::policy_file_broken(
        code,
        &format!("{why}; {}", file.consequence()),
        rel,
        key,
        base.map(|b| b.describe()).as_deref(),
    )))
}

/// The fixture corpus under the fixture paths against `lockfile`: the findings (and the
/// number of differing files) `score` gives for `source`.
pub fn judge_fixtures(
    source: &dyn Source,
    policy: &Policy,
    lockfile: &Lockfile,
) -> Result<(Vec<Finding>, usize), InputError> {
    let listing = source.list_fixtures(&policy.fixtures.paths)?;
    let corpus: BTreeSet<String> = listing.files.into_iter().collect();
    let rels: Vec<String> = lockfile.entries.keys().cloned().collect();
    let actual = source.hash_files(&policy.fixtures.lockfile, &rels)?;
    Ok(rules::fixtures::judge(&rules::fixtures::FixturesInput {
        lockfile_path: &policy.fixtures.lockfile,
        expected: &lockfile.entries,
        actual: &actual,
        corpus: &corpus,
        not_regular: &listing.not_regular,
        allow_unhashed_new: policy.fixtures.allow_unhashed_new,
    }))
}

/// Property test files under the property paths (by the `files` globs), outside the seeds.
pub fn property_files(source: &dyn Source, policy: &Policy) -> Result<Vec<String>, InputError> {
    let seeds = policy.properties.seeds.as_deref();
    Ok(source
        .list_files(&policy.properties.paths)?
        .into_iter()
        .filter(|rel| !seeds.is_some_and(|s| rel == s || rel.starts_with(&format!("{s}/"))))
        .filter(|rel| {
            // A path that names one file names a property file, whatever its name.
            let name = rel.rsplit('/').next().unwrap_or(rel);
            policy.properties.paths.contains(rel) || policy.properties.files.is_match(name)
        })
        .collect())
}

/// Thin property files and the seed corpus, read from `source`.
/// `files` is `property_files(source, policy)`.
pub fn judge_property_files(
    source: &dyn Source,
    policy: &Policy,
    files: &[String],
) -> Result<Vec<Finding>, InputError> {
    let mut texts = Vec::new();
    for rel in files.iter().cloned() {
        let bytes = source
            .read(&rel)?
            .ok_or_else(|| InputError::new(&rel, "property file vanished while reading"))?;
        texts.push((rel, String::from_utf8_lossy(&bytes).into_owned()));
    }
    let mut findings = rules::properties::judge_files(&texts, policy.properties.min_lines);
    if let Some(seeds) = &policy.properties.seeds {
        let count = if source.is_dir(seeds)? {
            Some(source.list_files(std::slice::from_ref(seeds))?.len())
        } else {
            None
        };
        // The embedded policy names a default seed directory; a project that has no property
        // suite yet is told by `property_hold`, not twice.
        if !(policy.files_optional() && count.is_none()) {
            findings.extend(rules::properties::judge_seeds(seeds, count));
        }
    }
    Ok(findings)
}

/// The package name of each property path inside a Cargo workspace member's `tests/`
/// (`rand_distr/tests/value_stability.rs`: `package.name` of `rand_distr/Cargo.toml`),
/// read from the same source as the policy; `None` for every other path.
fn member_packages(
    source: &dyn Source,
    policy: &PropertiesPolicy,
) -> Result<Vec<Option<String>>, InputError> {
    policy
        .paths
        .iter()
        .map(|p| match PathMatcher::new(p).member_dir() {
            Some(dir) => crate::project::cargo::package_name_at(source, dir),
            None => Ok(None),
        })
        .collect()
}
