//! The ledger as TOML gives it, one serde struct per table with each value's place in the
//! text; apart from the readers that check these shapes and turn them into the policy.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

/// The ledger as TOML gives it; read by `read_tables`, one key at a time.
#[derive(Debug, Default)]
pub(crate) struct RawLedger {
    pub(crate) version: Option<Spanned<i64>>,
    pub(crate) mode: Option<Spanned<String>>,
    pub(crate) properties: RawProperties,
    pub(crate) fixtures: RawFixtures,
    pub(crate) freeze: RawFreeze,
    pub(crate) coverage: RawCoverage,
    pub(crate) tests: RawTests,
    pub(crate) agents: RawAgents,
    pub(crate) trailers: RawTrailers,
    pub(crate) protect: RawProtect,
    pub(crate) refs: RawRefs,
    pub(crate) artifacts: RawArtifacts,
    pub(crate) humans: RawHumans,
    pub(crate) harness: RawHarness,
    pub(crate) baseline: RawBaseline,
    pub(crate) bots: Vec<RawBot>,
    pub(crate) levels: BTreeMap<Spanned<String>, Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawBot {
    pub(crate) who: Spanned<String>,
    pub(crate) paths: Vec<Spanned<String>>,
    pub(crate) change: Spanned<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawBaseline {
    pub(crate) vanished: Option<Spanned<String>>,
    pub(crate) newly_skipped: Option<Spanned<String>>,
    pub(crate) ignore: Option<Vec<Spanned<String>>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawHarness {
    pub(crate) paths: Option<Vec<Spanned<String>>>,
    pub(crate) sections: Option<BTreeMap<Spanned<String>, Vec<Spanned<String>>>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawHumans {
    pub(crate) allowed_signers: Option<Spanned<String>>,
    pub(crate) require_signature: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRefs {
    pub(crate) protected: Option<Vec<Spanned<String>>>,
    pub(crate) allow_delete: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawArtifacts {
    pub(crate) required: Option<bool>,
    pub(crate) junit: Option<Vec<Spanned<String>>>,
    pub(crate) coverage: Option<Spanned<String>>,
    pub(crate) collected: Option<Spanned<String>>,
    pub(crate) retest_junit: Option<Vec<Spanned<String>>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawAgents {
    pub(crate) default: Option<Spanned<String>>,
    pub(crate) emails: Option<Vec<Spanned<String>>>,
    pub(crate) names: Option<Vec<Spanned<String>>>,
    pub(crate) trailers: Option<Vec<Spanned<String>>>,
    pub(crate) subjects: Option<Vec<Spanned<String>>>,
    pub(crate) pushers: Option<Vec<Spanned<String>>>,
    pub(crate) formatting_coauthors: Option<Vec<Spanned<String>>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTrailers {
    pub(crate) fixtures: Option<Spanned<String>>,
    pub(crate) freeze: Option<Spanned<String>>,
    pub(crate) properties: Option<Spanned<String>>,
    pub(crate) ledger: Option<Spanned<String>>,
    pub(crate) harness: Option<Spanned<String>>,
    pub(crate) test_removal: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawProtect {
    pub(crate) paths: Option<Vec<Spanned<String>>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawProperties {
    pub(crate) paths: Option<Vec<Spanned<String>>>,
    pub(crate) required: Option<bool>,
    pub(crate) seeds: Option<Spanned<String>>,
    pub(crate) min_lines: Option<Spanned<i64>>,
    pub(crate) files: Option<Vec<Spanned<String>>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawFixtures {
    pub(crate) lockfile: Option<Spanned<String>>,
    pub(crate) paths: Option<Vec<Spanned<String>>>,
    pub(crate) allow_unhashed_new: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawFreeze {
    pub(crate) file: Option<Spanned<String>>,
    pub(crate) passing_frozen_is_error: Option<bool>,
    pub(crate) max_active_leases: Option<Spanned<i64>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawCoverage {
    pub(crate) min_proven: Option<Spanned<f64>>,
    pub(crate) required: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTests {
    pub(crate) failures_reject: Option<bool>,
    pub(crate) paths: Option<Vec<Spanned<String>>>,
    pub(crate) weakened: Option<Spanned<String>>,
}
