//! What a run's test records add up to: each JUnit testcase sorted, as it is read, into
//! frozen, property and failing tests (and a count of distinct tests), and which collected
//! ids have a record. A million-case report stays small in memory.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::evidence::distinct::DistinctTests;
use crate::evidence::record::{JunitCounts, Outcome, SuiteFailure, TestCase};
use crate::policy::freeze::Lease;
use crate::policy::ledger::PropertiesPolicy;
use crate::report::JunitStats;
use crate::rules;
use crate::testid::{
    PathMatcher, Place, collected_keys, for_each_record_key, id_key, id_key_into, possible_names,
    record_keys,
};

/// Which collected ids have a record. Runners mostly write records in the order they
/// collected the tests (pytest does), so each record is first compared with the id after the
/// last one met; only a record out of that order looks the ids up by key, in an index built
/// the first time one is needed.
pub(super) struct CollectedIndex<'a> {
    ids: &'a [String],
    /// Per collected id: whether a record of it was seen.
    pub(super) found: Vec<bool>,
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
pub(super) struct Accumulator<'a> {
    frozen_index: HashMap<String, Vec<usize>>,
    /// Record names that can meet a frozen key: a cheap exact pre-filter.
    frozen_names: foldhash::HashSet<String>,
    pub(super) frozen: Vec<Option<Outcome>>,
    property_records: PropertyRecords,
    pub(super) properties: BTreeMap<String, Outcome>,
    /// The distinct (classname, file) of property records, to tell which files ran.
    pub(super) property_sources: HashSet<(String, Option<String>)>,
    pub(super) failures: BTreeMap<String, Outcome>,
    pub(super) counts: JunitCounts,
    distinct: DistinctTests,
    /// With `--collected`: which collected tests have a record.
    pub(super) collected: Option<CollectedIndex<'a>>,
    /// Failures written on suites, with where (`path:line:column`).
    pub(super) suite_failures: Vec<(String, SuiteFailure)>,
    /// Every test and its outcome, when a baseline is compared.
    pub(super) all: Option<rules::evidence::baseline::Tests>,
}

impl<'a> Accumulator<'a> {
    pub(super) fn new(
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

    pub(super) fn add(&mut self, case: &TestCase) {
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

    pub(super) fn add_counts(&mut self, c: JunitCounts) {
        self.counts.files += c.files;
        self.counts.cases += c.cases;
        self.counts.passed += c.passed;
        self.counts.failed += c.failed;
        self.counts.errors += c.errors;
        self.counts.skipped += c.skipped;
    }

    pub(super) fn junit_stats(&self) -> JunitStats {
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
            if let Some((_, ext)) = pattern.rsplit_once('.')
                && !ext.is_empty()
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
                && !extensions.iter().any(|e| e == ext)
            {
                extensions.push(ext.to_string());
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

/// Adds a record to `tests`, merging it with earlier records of the same test.
pub(super) fn record(tests: &mut rules::evidence::baseline::Tests, case: &TestCase) {
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
    use crate::policy::ledger::Policy;

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
