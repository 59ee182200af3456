//! Fixtures: every fixture's SHA-256 matches the human-owned lockfile; missing fixtures,
//! fixtures that are not regular files and (unless allowed) files the lockfile does not list
//! reject.

use std::collections::{BTreeMap, BTreeSet};

use crate::evidence::fixtures::FixtureState;
use crate::report::finding::{Code, Finding};

pub struct FixturesInput<'a> {
    pub lockfile_path: &'a str,
    /// Lockfile entries: path to expected digest.
    pub expected: &'a BTreeMap<String, String>,
    /// What each lockfile entry's file holds now.
    pub actual: &'a BTreeMap<String, FixtureState>,
    /// Every file found under the fixture paths.
    pub corpus: &'a BTreeSet<String>,
    /// What is under the fixture paths but is not a regular file: path to why.
    pub not_regular: &'a BTreeMap<String, String>,
    pub allow_unhashed_new: bool,
}

/// Returns the findings and the fixture digest delta (entries whose digest changed).
pub fn judge(input: &FixturesInput) -> (Vec<Finding>, usize) {
    let mut findings = Vec::new();
    let mut delta = 0;
    // One finding per path, whether the lockfile lists it or the corpus holds it.
    let mut not_regular = input.not_regular.clone();
    for (path, expected) in input.expected {
        match input.actual.get(path) {
            Some(FixtureState::NotRegular(why)) => {
                not_regular.insert(path.clone(), why.clone());
            }
            Some(FixtureState::Digest(actual)) if actual == expected => {}
            Some(FixtureState::Digest(actual)) => {
                delta += 1;
                findings.push(
                    Finding::new(
                        Code::FixtureDigest,
                        format!("fixture changed: sha256 {actual}, lockfile {} says {expected}", input.lockfile_path),
                    )
                    .path(path)
                    .help("byte-diff the fixture; revert it, or a human updates the lockfile (`guard lock`) in a commit with `Fixture-Lock: human`"),
                );
            }
            Some(FixtureState::Missing) | None => findings.push(
                Finding::new(
                    Code::FixtureMissing,
                    format!("fixture listed in {} is missing (expected sha256 {expected})", input.lockfile_path),
                )
                .path(path)
                .help("restore the fixture from the base branch, or a human removes it from the lockfile"),
            ),
        }
    }
    for (path, why) in not_regular {
        findings.push(
            Finding::new(
                Code::FixtureNotRegular,
                format!("fixture is not a regular file: {why}"),
            )
            .path(path)
            .help("restore the file's bytes from the base branch; fixtures are regular files, hashed in the lockfile"),
        );
    }
    if !input.allow_unhashed_new {
        for path in input.corpus {
            if !input.expected.contains_key(path) {
                findings.push(
                    Finding::new(
                        Code::FixtureUnhashed,
                        format!("fixture is not in the lockfile {}", input.lockfile_path),
                    )
                    .path(path)
                    .help("remove the file, or a human adds it with `guard lock` in a commit with `Fixture-Lock: human`"),
                );
            }
        }
    }
    (findings, delta)
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    const E: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    fn run(actual: &[(&str, FixtureState)], corpus: &[&str], allow: bool) -> (Vec<Code>, usize) {
        run_with(actual, corpus, &[], allow)
    }

    fn run_with(
        actual: &[(&str, FixtureState)],
        corpus: &[&str],
        not_regular: &[&str],
        allow: bool,
    ) -> (Vec<Code>, usize) {
        let expected: BTreeMap<String, String> = [
            ("t/a".to_string(), A.to_string()),
            ("t/e".to_string(), E.to_string()),
        ]
        .into();
        let actual: BTreeMap<String, FixtureState> = actual
            .iter()
            .map(|(p, s)| (p.to_string(), s.clone()))
            .collect();
        let corpus: BTreeSet<String> = corpus.iter().map(|s| s.to_string()).collect();
        let not_regular: BTreeMap<String, String> = not_regular
            .iter()
            .map(|p| (p.to_string(), "a symlink".to_string()))
            .collect();
        let (f, d) = judge(&FixturesInput {
            lockfile_path: "qa/fixtures.lock.json",
            expected: &expected,
            actual: &actual,
            corpus: &corpus,
            not_regular: &not_regular,
            allow_unhashed_new: allow,
        });
        (f.into_iter().map(|f| f.code).collect(), d)
    }

    #[test]
    fn matching_fixtures_hold() {
        let ok = [
            ("t/a", FixtureState::Digest(A.into())),
            ("t/e", FixtureState::Digest(E.into())),
        ];
        assert_eq!(run(&ok, &["t/a", "t/e"], false), (vec![], 0));
    }

    #[test]
    fn drift_missing_and_unhashed_reject() {
        let drift = [
            ("t/a", FixtureState::Digest(E.into())),
            ("t/e", FixtureState::Missing),
        ];
        assert_eq!(
            run(&drift, &["t/a", "t/new"], false),
            (
                vec![
                    Code::FixtureDigest,
                    Code::FixtureMissing,
                    Code::FixtureUnhashed
                ],
                1
            )
        );
        assert_eq!(
            run(&drift, &["t/a", "t/new"], true).0,
            vec![Code::FixtureDigest, Code::FixtureMissing]
        );
    }

    #[test]
    fn fixtures_that_are_not_files_reject_once_per_path() {
        let linked = [
            ("t/a", FixtureState::Digest(A.into())),
            ("t/e", FixtureState::NotRegular("a symlink".into())),
        ];
        // `t/e` (a lockfile entry, and in the corpus listing too) and `t/link` (in the
        // corpus only) each give one finding.
        assert_eq!(
            run_with(&linked, &["t/a"], &["t/e", "t/link"], false),
            (vec![Code::FixtureNotRegular, Code::FixtureNotRegular], 0)
        );
    }
}
