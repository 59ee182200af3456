//! The scoring engine behind `guard score` (and, later, the artifact half of `guard check`
//! and the hooks): reads the policy files and artifacts of a workspace, streams the JUnit
//! reports once, and runs every rule. The decision is left to `findings::Decision`.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::PathBuf;

use jiff::civil::Date;

use crate::error::InputError;
use crate::evidence::collected::read_collected;
use crate::evidence::coverage::{Coverage, read_coverage};
use crate::evidence::distinct::DistinctTests;
use crate::evidence::junit::read_junit;
use crate::evidence::record::{JunitCounts, Outcome, SuiteFailure, TestCase};
use crate::policy::freeze::{FreezeFile, Lease};
use crate::policy::ledger::{Policy, PropertiesPolicy, Severity};
use crate::policy::load::{
    in_ledger, no_freeze, no_lockfile, not_found, parse_freeze, parse_lockfile,
};
use crate::policy::lockfile::Lockfile;
use crate::report::finding::{Code, Finding};
use crate::report::{JunitStats, RunnerExit, Stats};
use crate::rules;
use crate::runner::TestRunner;
use crate::source::Source;
use crate::testid::{
    PathMatcher, Place, collected_keys, coverage_context_test, for_each_record_key, id_key,
    id_key_into, possible_names, record_keys,
};

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

/// Which collected ids have a record. Runners mostly write records in the order they
/// collected the tests (pytest does), so each record is first compared with the id after the
/// last one met; only a record out of that order looks the ids up by key, in an index built
/// the first time one is needed.
struct CollectedIndex<'a> {
    ids: &'a [String],
    /// Per collected id: whether a record of it was seen.
    found: Vec<bool>,
    /// The id after the last one a record met.
    next: usize,
    by_key: Option<foldhash::HashMap<String, Vec<usize>>>,
    /// Reused for a record's keys and for the key of `ids[next]`.
    record_key: String,
    expected: String,
}

impl<'a> CollectedIndex<'a> {
    fn new(ids: &'a [String]) -> CollectedIndex<'a> {
        CollectedIndex {
            ids,
            found: vec![false; ids.len()],
            next: 0,
            by_key: None,
            record_key: String::new(),
            expected: String::new(),
        }
    }

    fn see(&mut self, case: &TestCase) {
        let CollectedIndex {
            ids,
            found,
            next,
            by_key,
            record_key,
            expected,
        } = self;
        if let Some(id) = ids.get(*next) {
            id_key_into(id, expected);
            let expected = expected.as_str();
            if for_each_record_key(&case.classname, &case.name, record_key, |k| k == expected) {
                found[*next] = true;
                *next += 1;
                return;
            }
        }
        let by_key = by_key.get_or_insert_with(|| {
            let mut by_key: foldhash::HashMap<String, Vec<usize>> = foldhash::HashMap::default();
            for (i, id) in ids.iter().enumerate() {
                for key in collected_keys(id) {
                    by_key.entry(key).or_default().push(i);
                }
            }
            by_key
        });
        for_each_record_key(&case.classname, &case.name, record_key, |key| {
            for &i in by_key.get(key).into_iter().flatten() {
                found[i] = true;
                *next = i + 1;
            }
            false
        });
    }
}

/// Gathers what the rules need from the stream of testcase records, keeping only frozen,
/// property and failing tests (and a hash per record, to count distinct tests) so a
/// million-case report stays small in memory.
struct Accumulator<'a> {
    frozen_index: HashMap<String, Vec<usize>>,
    /// Record names that can meet a frozen key: a cheap exact pre-filter.
    frozen_names: foldhash::HashSet<String>,
    frozen: Vec<Option<Outcome>>,
    property_records: PropertyRecords,
    properties: BTreeMap<String, Outcome>,
    /// The distinct (classname, file) of property records, to tell which files ran.
    property_sources: HashSet<(String, Option<String>)>,
    failures: BTreeMap<String, Outcome>,
    counts: JunitCounts,
    distinct: DistinctTests,
    /// With `--collected`: which collected tests have a record.
    collected: Option<CollectedIndex<'a>>,
    /// Failures written on suites, with where (`path:line:column`).
    suite_failures: Vec<(String, SuiteFailure)>,
    /// Every test and its outcome, when a baseline is compared.
    all: Option<rules::evidence::baseline::Tests>,
}

impl<'a> Accumulator<'a> {
    fn new(
        active: &[&Lease],
        properties: &PropertiesPolicy,
        packages: &[Option<String>],
        collected: Option<&'a [String]>,
    ) -> Self {
        let mut frozen_index: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, lease) in active.iter().enumerate() {
            frozen_index
                .entry(id_key(&lease.nodeid))
                .or_default()
                .push(i);
        }
        let keys: Vec<String> = frozen_index.keys().cloned().collect();
        Accumulator {
            frozen_index,
            frozen_names: possible_names(&keys),
            frozen: vec![None; active.len()],
            property_records: PropertyRecords::new(properties, packages),
            properties: BTreeMap::new(),
            property_sources: HashSet::new(),
            failures: BTreeMap::new(),
            counts: JunitCounts::default(),
            distinct: DistinctTests::new(),
            collected: collected.map(CollectedIndex::new),
            suite_failures: Vec::new(),
            all: None,
        }
    }

    fn add(&mut self, case: &TestCase) {
        self.distinct.add(&case.classname, &case.name, case.outcome);
        if let Some(all) = &mut self.all {
            record(all, case);
        }
        if let Some(collected) = &mut self.collected {
            collected.see(case);
        }
        if self.frozen_names.contains(case.name.as_str()) {
            let mut frozen = false;
            for key in record_keys(&case.classname, &case.name) {
                if let Some(leases) = self.frozen_index.get(&key) {
                    frozen = true;
                    for &i in leases {
                        merge(&mut self.frozen[i], case.outcome);
                    }
                }
            }
            if frozen {
                return;
            }
        }
        if self
            .property_records
            .contains(&case.classname, case.file.as_deref())
        {
            let slot = self
                .properties
                .entry(display_id(case))
                .or_insert(case.outcome);
            *slot = (*slot).max(case.outcome);
            self.property_sources
                .insert((case.classname.clone(), case.file.clone()));
        } else if matches!(
            case.outcome,
            Outcome::Failed | Outcome::Errored | Outcome::Flaky
        ) {
            let slot = self
                .failures
                .entry(display_id(case))
                .or_insert(case.outcome);
            *slot = (*slot).max(case.outcome);
        }
    }

    fn add_counts(&mut self, c: JunitCounts) {
        self.counts.files += c.files;
        self.counts.cases += c.cases;
        self.counts.passed += c.passed;
        self.counts.failed += c.failed;
        self.counts.errors += c.errors;
        self.counts.skipped += c.skipped;
    }

    fn junit_stats(&self) -> JunitStats {
        let tests = self.distinct.counts();
        JunitStats {
            files: self.counts.files,
            cases: self.counts.cases,
            tests: tests.tests,
            passed: tests.passed,
            failed: tests.failed,
            errors: tests.errors,
            skipped: tests.skipped,
        }
    }
}

/// Tells property test records apart: in a property path and, where the path is a directory,
/// from a file the `properties.files` globs name (a path naming one file holds properties
/// whatever its name). A record under a directory whose file cannot be told (a classname that
/// is the directory's own prefix) counts as a property's: it cannot be shown not to be.
struct PropertyRecords {
    paths: Vec<PathMatcher>,
    files: globset::GlobSet,
    /// A dotted classname (`tests.properties.test_codec.TestX`) names modules and classes,
    /// not files: each part is tried as a file with these extensions, the ones the `files`
    /// globs end in, and pytest's `py`.
    extensions: Vec<String>,
    /// Reused for the candidate file names of each record.
    name: String,
}

impl PropertyRecords {
    /// `packages`: the package name of each of `policy.paths` that lies in a Cargo workspace
    /// member's `tests/` (`member_packages`).
    fn new(policy: &PropertiesPolicy, packages: &[Option<String>]) -> PropertyRecords {
        let mut extensions = vec!["py".to_string()];
        for pattern in &policy.file_patterns {
            if let Some((_, ext)) = pattern.rsplit_once('.') {
                if !ext.is_empty()
                    && ext.chars().all(|c| c.is_ascii_alphanumeric())
                    && !extensions.iter().any(|e| e == ext)
                {
                    extensions.push(ext.to_string());
                }
            }
        }
        PropertyRecords {
            paths: policy
                .paths
                .iter()
                .enumerate()
                .map(|(i, p)| match packages.get(i) {
                    Some(Some(name)) => PathMatcher::new(p).in_package(name),
                    _ => PathMatcher::new(p),
                })
                .collect(),
            files: policy.files.clone(),
            extensions,
            name: String::new(),
        }
    }

    fn contains(&mut self, classname: &str, file: Option<&str>) -> bool {
        let PropertyRecords {
            paths,
            files,
            extensions,
            name,
        } = self;
        let mut named = |stem: &str, with_extensions: bool| {
            if files.is_match(stem) {
                return true;
            }
            with_extensions
                && extensions.iter().any(|ext| {
                    name.clear();
                    name.push_str(stem);
                    name.push('.');
                    name.push_str(ext);
                    files.is_match(name.as_str())
                })
        };
        paths.iter().any(|path| match path.place(classname, file) {
            None => false,
            Some(_) if path.names_file() => true,
            Some(Place::File(f)) => named(f.rsplit(['/', '\\']).next().unwrap_or(f), false),
            Some(Place::Dotted("")) => true,
            Some(Place::Dotted(rest)) => rest.split('.').any(|part| named(part, true)),
            Some(Place::Nextest(target)) => named(target, true) || named("main.rs", false),
        })
    }
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

/// Adds a record to `tests`, merging it with earlier records of the same test.
fn record(tests: &mut rules::evidence::baseline::Tests, case: &TestCase) {
    match tests.get_mut(&(case.classname.clone(), case.name.clone())) {
        Some((file, outcome)) => {
            *outcome = (*outcome).max(case.outcome);
            if file.is_none() {
                file.clone_from(&case.file);
            }
        }
        None => {
            tests.insert(
                (case.classname.clone(), case.name.clone()),
                (case.file.clone(), case.outcome),
            );
        }
    }
}

/// Duplicate records of one test merge, the worst outcome winning (a failure over a pass).
fn merge(slot: &mut Option<Outcome>, outcome: Outcome) {
    *slot = Some(slot.map_or(outcome, |s| s.max(outcome)));
}

fn display_id(case: &TestCase) -> String {
    if case.classname.is_empty() {
        case.name.clone()
    } else {
        format!("{}::{}", case.classname, case.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(classname: &str, name: &str, outcome: Outcome) -> TestCase {
        TestCase {
            classname: classname.into(),
            name: name.into(),
            file: None,
            outcome,
            message: None,
        }
    }

    #[test]
    fn collected_ids_are_met_in_order_and_out_of_it() {
        let ids: Vec<String> = [
            "tests/test_a.py::test_one",
            "tests/test_a.py::TestB::test_two[x-1]",
            "tests/test_a.py::test_three",
            "tiny tests::it_works",
            "tests::bare",
            "tests/test_a.py::test_never_run",
        ]
        .map(String::from)
        .to_vec();
        let mut index = CollectedIndex::new(&ids);
        for (classname, name) in [
            ("tests.test_a", "test_one"),
            ("tests.test_a.TestB", "test_two[x-1]"),
            // Out of order from here: looked up by key.
            ("tiny", "tests::it_works"),
            ("tests.test_a", "test_three"),
            ("bin", "tests::bare"),
            ("tests.test_a", "test_not_collected"),
        ] {
            index.see(&case(classname, name, Outcome::Passed));
        }
        assert_eq!(index.found, [true, true, true, true, true, false]);
        // Only exact keys meet: a record of another test never counts for a collected one.
        let mut index = CollectedIndex::new(&ids[5..]);
        index.see(&case("tests.test_a", "test_never_run[1]", Outcome::Passed));
        index.see(&case("tests.test_a.X", "test_never_run", Outcome::Passed));
        assert_eq!(index.found, [false]);
    }

    #[test]
    fn accumulator_sorts_records_into_frozen_property_and_failures() {
        let lease = Lease {
            nodeid: "tests/test_retry.py::test_backoff".into(),
            owner: None,
            reason: None,
            expires: None,
            line: 1,
        };
        let policy = Policy::embedded();
        let mut acc = Accumulator::new(&[&lease], &policy.properties, &[], None);
        acc.add(&case("tests.test_retry", "test_backoff", Outcome::Passed));
        acc.add(&case("tests.test_retry", "test_backoff", Outcome::Failed));
        acc.add(&case(
            "tests.properties.test_codec",
            "test_roundtrip",
            Outcome::Passed,
        ));
        acc.add(&case("tests.test_other", "test_ok", Outcome::Passed));
        acc.add(&case("tests.test_other", "test_bad", Outcome::Errored));
        assert_eq!(
            acc.frozen,
            vec![Some(Outcome::Failed)],
            "a failure wins over a pass"
        );
        assert_eq!(acc.properties.len(), 1);
        assert_eq!(
            acc.failures.keys().collect::<Vec<_>>(),
            vec!["tests.test_other::test_bad"]
        );
    }
}
