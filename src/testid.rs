//! Test ids in the forms users and runners write them, reduced to lookup keys so that a
//! freeze entry, a collected id and a JUnit record of the same test meet.
//!
//! Forms understood:
//! - pytest node ids: `tests/test_billing.py::TestX::test_y[p-1]`
//! - the dotted `classname::name` pairs of JUnit (`tests.runtime.test_retry::test_backoff`),
//!   which is also how surefire, gotestsum and jest-junit records read
//! - cargo-nextest ids: `binary-id test::path` (a space between binary and test)
//! - `cargo test` paths: `tests::it_works`, matched against the test name of any binary
//!
//! A pytest node id becomes the dotted form pytest itself writes into JUnit (path with `/`
//! turned into `.` and `.py` dropped, classes joined with `.`), so both article forms match
//! real pytest output. Parameters in brackets are kept verbatim.

/// The key a user-written id is looked up under.
pub fn id_key(id: &str) -> String {
    let mut key = String::new();
    id_key_into(id, &mut key);
    key
}

/// `id_key(id)`, written into `key` (cleared first), so a caller that reads many ids reuses
/// one buffer.
pub fn id_key_into(id: &str, key: &mut String) {
    let id = id.trim();
    key.clear();
    if !pytest_dotted_into(id, key) {
        key.clear();
        key.push_str(id);
    }
}

/// The keys a JUnit record is indexed under: `classname::name`, `classname name` (nextest),
/// and the bare name when it is a Rust test path.
pub fn record_keys(classname: &str, name: &str) -> Vec<String> {
    let mut keys = Vec::with_capacity(3);
    for_each_record_key(classname, name, &mut String::new(), |key| {
        keys.push(key.to_string());
        false
    });
    keys
}

/// Calls `visit` with each of `record_keys(classname, name)`, built in `buf` (reused from
/// record to record, so a report's records cost no allocation), until `visit` returns true.
/// Returns whether it did.
pub fn for_each_record_key(
    classname: &str,
    name: &str,
    buf: &mut String,
    mut visit: impl FnMut(&str) -> bool,
) -> bool {
    if classname.is_empty() {
        return visit(name);
    }
    for separator in ["::", " "] {
        buf.clear();
        buf.push_str(classname);
        buf.push_str(separator);
        buf.push_str(name);
        if visit(buf) {
            return true;
        }
    }
    split_params(name).0.contains("::") && visit(name)
}

/// The keys a collected id (a line of `pytest --collect-only -q` or `cargo nextest list`)
/// is indexed under.
pub fn collected_keys(id: &str) -> Vec<String> {
    let id = id.trim();
    let mut keys = vec![id_key(id)];
    // nextest `binary-id test::path`: a bare `cargo test` id names the part after the space.
    if let Some((binary, test)) = id.split_once(' ')
        && !binary.is_empty()
        && !test.is_empty()
        && !binary.contains('[')
    {
        keys.push(test.to_string());
    }
    keys
}

/// A glob over test ids, written like a freeze entry (`tests/test_x.py::test_at[*]`, a
/// nextest `binary test::path*`) and normalised the same way, so it matches the keys of
/// `for_each_record_key`. `*` and `?` are wildcards; brackets and braces are literal, as
/// pytest parameters write them.
pub fn id_glob(pattern: &str) -> Result<globset::Glob, globset::Error> {
    let key = id_key(pattern);
    let mut escaped = String::with_capacity(key.len());
    for c in key.chars() {
        match c {
            '[' | ']' | '{' | '}' => {
                escaped.push('[');
                escaped.push(c);
                escaped.push(']');
            }
            _ => escaped.push(c),
        }
    }
    globset::GlobBuilder::new(&escaped)
        .literal_separator(false)
        .backslash_escape(false)
        .build()
}

/// Whether a JUnit record matches any of `set` (globs from `id_glob`).
pub fn record_matches(set: &globset::GlobSet, classname: &str, name: &str) -> bool {
    !set.is_empty() && for_each_record_key(classname, name, &mut String::new(), |k| set.is_match(k))
}

/// The test a coverage.py context names, when pytest-cov wrote it (`--cov-context=test`):
/// `tests/test_x.py::TestC::test_y[p]|run` (or `|setup`, `|teardown`: the test's fixtures)
/// names the pytest node id `tests/test_x.py::TestC::test_y[p]`, which `id_key` turns into
/// the key a freeze entry of that test has. `None` for the empty context (code run outside
/// any test, at import) and for anything else (a static `--context` label).
pub fn coverage_context_test(context: &str) -> Option<&str> {
    let (id, phase) = context.rsplit_once('|')?;
    (matches!(phase, "run" | "setup" | "teardown") && id.contains("::")).then_some(id)
}

/// Splits `test_y[p-1]` into `("test_y", "[p-1]")`. Brackets start at the first `[`.
fn split_params(id: &str) -> (&str, &str) {
    match id.find('[') {
        Some(i) if id.ends_with(']') => id.split_at(i),
        _ => (id, ""),
    }
}

/// Writes `tests/test_x.py::TestC::test_y[p]` as `tests.test_x.TestC::test_y[p]` into `out`;
/// false (and `out` in any state) when `id` is not a pytest node id.
fn pytest_dotted_into(id: &str, out: &mut String) -> bool {
    let (head, params) = split_params(id);
    let Some((file, rest)) = head.split_once("::") else {
        return false;
    };
    let Some(module) = file.strip_suffix(".py") else {
        return false;
    };
    let (classes, function) = match rest.rsplit_once("::") {
        Some((classes, function)) => (Some(classes), function),
        None => (None, rest),
    };
    if module.is_empty() || function.is_empty() {
        return false;
    }
    for c in module.trim_start_matches("./").chars() {
        out.push(if c == '/' || c == '\\' { '.' } else { c });
    }
    for class in classes.into_iter().flat_map(|c| c.split("::")) {
        out.push('.');
        out.push_str(class);
    }
    out.push_str("::");
    out.push_str(function);
    out.push_str(params);
    true
}

/// Whether a JUnit record belongs to a property path: a directory (`tests/properties/`) or one
/// file (`tests/test_recipes.py`, `tests/properties.rs`), prepared once since it runs for every
/// record. Uses the record's `file` attribute when there is one, else the dotted classname
/// pytest writes (`tests.properties.test_x`, `tests.test_recipes.TakeTests`), else a nextest
/// binary id (`crate::properties` for `tests/properties.rs` or `tests/properties/main.rs`).
#[derive(Debug, Clone)]
pub struct PathMatcher {
    /// `tests/properties`, without surrounding slashes.
    dir: String,
    /// `tests.properties`, the classname prefix pytest writes (`tests.test_recipes` for the
    /// file `tests/test_recipes.py`).
    dotted: String,
    /// The path names one test file (`*.py`, `*.rs`), not a directory.
    names_file: bool,
    /// `properties` for `tests/properties(.rs)`: a nextest integration-test target.
    nextest_target: Option<String>,
    /// The package whose `tests/` holds that target, when it is a workspace member's
    /// (`rand_distr` for `rand_distr/tests/value_stability.rs`): nextest names the binary
    /// `rand_distr::value_stability`. `None` for the root's `tests/`: any package's.
    nextest_package: Option<String>,
}

/// Where in a property path a record comes from, as far as the record tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place<'a> {
    /// The record names its file (`file` attribute), which is under the path.
    File(&'a str),
    /// The record's dotted classname, after the path's prefix and its `.`: modules and
    /// classes (`test_codec.TestX`); empty when the classname is the prefix itself.
    Dotted(&'a str),
    /// A nextest binary built from the path: `tests/NAME.rs` or `tests/NAME/main.rs`.
    Nextest(&'a str),
}

impl PathMatcher {
    pub fn new(path: &str) -> PathMatcher {
        let dir = path.trim_matches('/').trim_start_matches("./").to_string();
        let names_file = dir.ends_with(".py") || dir.ends_with(".rs");
        // `tests/NAME(.rs)` at the root, or `MEMBER/tests/NAME(.rs)` in a workspace member.
        let (member, in_tests) = match dir.strip_prefix("tests/") {
            Some(rest) => (None, Some(rest)),
            None => match dir.rsplit_once("/tests/") {
                Some((member, rest)) => (Some(member), Some(rest)),
                None => (None, None),
            },
        };
        let nextest_target = in_tests
            .map(|stem| stem.strip_suffix(".rs").unwrap_or(stem))
            .filter(|stem| !stem.contains('/') && !stem.is_empty())
            .map(str::to_string);
        // The member's directory name until `in_package` says its package name.
        let nextest_package = member
            .filter(|_| nextest_target.is_some())
            .map(|m| m.rsplit('/').next().unwrap_or(m).to_string());
        let module = dir.strip_suffix(".py").unwrap_or(&dir);
        PathMatcher {
            dotted: module.replace('/', "."),
            dir,
            names_file,
            nextest_target,
            nextest_package,
        }
    }

    /// The workspace member directory of a `MEMBER/tests/NAME.rs` path, whose package name
    /// [`PathMatcher::in_package`] should be given.
    pub fn member_dir(&self) -> Option<&str> {
        self.nextest_package.as_ref()?;
        self.dir.rsplit_once("/tests/").map(|(m, _)| m)
    }

    /// Names the package of a member's `tests/` target (`package.name` in its Cargo.toml),
    /// which is what nextest writes before `::`.
    pub fn in_package(mut self, name: &str) -> PathMatcher {
        if self.nextest_package.is_some() {
            self.nextest_package = Some(name.to_string());
        }
        self
    }

    /// True when the path names one test file: every record placed in it is that file's.
    pub fn names_file(&self) -> bool {
        self.names_file
    }

    pub fn matches(&self, classname: &str, file: Option<&str>) -> bool {
        self.place(classname, file).is_some()
    }

    /// Where the record is in the path, or `None` when it is not in it.
    pub fn place<'a>(&self, classname: &'a str, file: Option<&'a str>) -> Option<Place<'a>> {
        if self.dir.is_empty() {
            return Some(match file {
                Some(f) => Place::File(f),
                None => Place::Dotted(classname),
            });
        }
        if let Some(file) = file {
            let file = file.trim_start_matches("./");
            let under = |f: &str| {
                f == self.dir
                    || f.strip_prefix(self.dir.as_str())
                        .is_some_and(|r| r.starts_with('/'))
            };
            let inside = if file.contains('\\') {
                under(&file.replace('\\', "/"))
            } else {
                under(file)
            };
            return inside.then_some(Place::File(file));
        }
        if let Some(rest) = classname.strip_prefix(self.dotted.as_str()) {
            if rest.is_empty() {
                return Some(Place::Dotted(rest));
            }
            if let Some(rest) = rest.strip_prefix('.') {
                return Some(Place::Dotted(rest));
            }
        }
        // nextest: `crate::name` is the integration test target built from `tests/name.rs`.
        let target = self.nextest_target.as_deref()?;
        // Most records end otherwise, and are told at once. Then the first `::`, found by its
        // first byte: `str::split_once("::")` sets up a substring searcher per call, a
        // measurable cost when this runs for every record of a report.
        if !classname.ends_with(target) {
            return None;
        }
        let mut from = 0;
        while let Some(i) = memchr::memchr(b':', &classname.as_bytes()[from..]) {
            let at = from + i;
            if classname[at + 1..].starts_with(':') {
                let name = &classname[at + 2..];
                let package_ok = self
                    .nextest_package
                    .as_deref()
                    .is_none_or(|p| p == &classname[..at]);
                return (name == target && package_ok).then_some(Place::Nextest(name));
            }
            from = at + 1;
        }
        None
    }
}

/// Every record name that can meet one of `keys` (made by `id_key`): the whole key (a bare
/// name) and whatever follows a `::` or a space in it. A record whose name is not in this set
/// cannot match, so most records skip building keys at all.
///
/// The set is looked up once per record of a report, so it hashes with foldhash rather than
/// SipHash: its entries come from the freeze list, so report contents cannot flood it.
pub fn possible_names(keys: &[String]) -> foldhash::HashSet<String> {
    let mut names = foldhash::HashSet::default();
    for key in keys {
        names.insert(key.clone());
        for (i, _) in key.match_indices("::") {
            names.insert(key[i + 2..].to_string());
        }
        for (i, _) in key.match_indices(' ') {
            names.insert(key[i + 1..].to_string());
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pytest_cov_contexts_name_tests_keyed_like_freeze_entries() {
        for (context, test) in [
            (
                "tests/test_x.py::test_y|run",
                Some("tests/test_x.py::test_y"),
            ),
            (
                "tests/test_x.py::TestC::test_y[a|b]|setup",
                Some("tests/test_x.py::TestC::test_y[a|b]"),
            ),
            (
                "tests/test_x.py::test_y|teardown",
                Some("tests/test_x.py::test_y"),
            ),
            ("", None),
            ("ci-run", None),
            ("tests/test_x.py::test_y", None),
            ("label|run", None),
        ] {
            assert_eq!(coverage_context_test(context), test, "{context}");
        }
        // The same key as the freeze entry in either article's form.
        let id = coverage_context_test("tests/test_x.py::TestC::test_y[1]|run").unwrap();
        assert_eq!(id_key(id), id_key("tests/test_x.py::TestC::test_y[1]"));
        assert_eq!(id_key(id), id_key("tests.test_x.TestC::test_y[1]"));
    }

    #[test]
    fn id_globs_match_records_with_literal_brackets() {
        let set = |p: &str| {
            let mut b = globset::GlobSetBuilder::new();
            b.add(id_glob(p).unwrap());
            b.build().unwrap()
        };
        let stamp = set("tests/test_clock.py::test_at[*]");
        assert!(record_matches(
            &stamp,
            "tests.test_clock",
            "test_at[2026-12-01T04:50]"
        ));
        assert!(!record_matches(&stamp, "tests.test_clock", "test_at"));
        assert!(!record_matches(&stamp, "tests.test_other", "test_at[1]"));
        let literal = set("tests/test_x.py::test_p[a]");
        assert!(record_matches(&literal, "tests.test_x", "test_p[a]"));
        assert!(!record_matches(&literal, "tests.test_x", "test_pa"));
        let nextest = set("core::tests tests::gen_*");
        assert!(record_matches(&nextest, "core::tests", "tests::gen_42"));
        assert!(!record_matches(&set("x::y"), "a", "b"));
    }

    fn record_under(classname: &str, file: Option<&str>, dir: &str) -> bool {
        PathMatcher::new(dir).matches(classname, file)
    }

    #[test]
    fn pytest_node_id_meets_pytest_junit_record() {
        // pytest writes classname "tests.test_billing.TestX" and name "test_y[p-1]" for this node.
        let key = id_key("tests/test_billing.py::TestX::test_y[p-1]");
        assert_eq!(key, "tests.test_billing.TestX::test_y[p-1]");
        assert!(record_keys("tests.test_billing.TestX", "test_y[p-1]").contains(&key));
    }

    #[test]
    fn params_with_separators_are_kept_verbatim() {
        assert_eq!(
            id_key("tests/test_a.py::test_b[x::y/z.py]"),
            "tests.test_a::test_b[x::y/z.py]"
        );
    }

    #[test]
    fn dotted_article_form_meets_pytest_record() {
        let key = id_key("tests.runtime.test_retry::test_backoff_under_load");
        assert!(record_keys("tests.runtime.test_retry", "test_backoff_under_load").contains(&key));
    }

    #[test]
    fn nextest_and_cargo_ids_meet_nextest_record() {
        let record = record_keys("tiny-crate", "tests::it_works");
        assert!(record.contains(&id_key("tiny-crate tests::it_works")));
        assert!(record.contains(&id_key("tests::it_works")));
        assert!(!record.contains(&id_key("tests::it_fails")));
    }

    #[test]
    fn collected_nextest_id_is_found_by_cargo_path() {
        let keys = collected_keys("tiny-crate::bin/tiny tests::it_works");
        assert!(keys.contains(&"tests::it_works".to_string()));
        assert!(keys.contains(&"tiny-crate::bin/tiny tests::it_works".to_string()));
    }

    #[test]
    fn different_tests_do_not_meet() {
        let key = id_key("tests/test_billing.py::test_y");
        assert!(!record_keys("tests.test_billing", "test_y[1]").contains(&key));
        assert!(!record_keys("tests.test_billing_x", "test_y").contains(&key));
    }

    #[test]
    fn possible_names_cover_every_record_key_form() {
        let keys = vec![
            id_key("tests/test_a.py::TestB::test_c[x y]"),
            id_key("tiny tests::it_works"),
            id_key("tests::bare"),
        ];
        let names = possible_names(&keys);
        for (classname, name) in [
            ("tests.test_a.TestB", "test_c[x y]"),
            ("tiny", "tests::it_works"),
            ("bin", "tests::bare"),
        ] {
            assert!(names.contains(name), "{name}");
            assert!(
                record_keys(classname, name)
                    .iter()
                    .any(|k| keys.contains(k))
            );
        }
        assert!(!names.contains("test_other"));
    }

    #[test]
    fn property_records_found_by_path_in_every_form() {
        assert!(record_under(
            "tests.properties.test_codec",
            None,
            "tests/properties/"
        ));
        assert!(record_under(
            "x",
            Some("tests/properties/test_codec.py"),
            "tests/properties"
        ));
        assert!(record_under(
            "tiny-crate::properties",
            None,
            "tests/properties.rs"
        ));
        assert!(!record_under(
            "tests.test_properties_like",
            None,
            "tests/properties/"
        ));
        assert!(!record_under(
            "tests.propertiesx.test_a",
            None,
            "tests/properties/"
        ));
        assert!(!record_under(
            "x",
            Some("tests/other/test_a.py"),
            "tests/properties/"
        ));
        // The binary target follows the first `::`, not a single colon.
        assert!(record_under("a:b::properties", None, "tests/properties.rs"));
        assert!(!record_under(
            "a::b:properties",
            None,
            "tests/properties.rs"
        ));
        assert!(!record_under("properties:", None, "tests/properties.rs"));
        assert!(!record_under(
            "tiny-crate::properties::x",
            None,
            "tests/properties.rs"
        ));
    }

    #[test]
    fn a_workspace_members_test_target_meets_its_packages_nextest_binary() {
        // rand's workspace: rand_distr/tests/value_stability.rs is nextest's
        // `rand_distr::value_stability` (checked against cargo-nextest's list output).
        let m = PathMatcher::new("rand_distr/tests/value_stability.rs");
        assert_eq!(m.member_dir(), Some("rand_distr"));
        assert!(m.matches("rand_distr::value_stability", None));
        assert!(!m.matches("rand::value_stability", None));
        assert!(!m.matches("rand_distr", None));
        // A package named otherwise than its directory.
        let m = PathMatcher::new("crates/distr/tests/value_stability.rs").in_package("rand-distr");
        assert!(m.matches("rand-distr::value_stability", None));
        assert!(!m.matches("distr::value_stability", None));
        // The root's tests/ stay any package's, and in_package leaves them so.
        let m = PathMatcher::new("tests/properties.rs").in_package("x");
        assert_eq!(m.member_dir(), None);
        assert!(m.matches("tiny-crate::properties", None));
    }

    #[test]
    fn property_path_naming_one_python_file_meets_its_records() {
        // pytest's default (xunit2) records of tests/test_recipes.py: classname only.
        let m = PathMatcher::new("tests/test_recipes.py");
        assert!(m.names_file());
        assert_eq!(
            m.place("tests.test_recipes.TakeTests", None),
            Some(Place::Dotted("TakeTests"))
        );
        assert_eq!(m.place("tests.test_recipes", None), Some(Place::Dotted("")));
        assert!(m.matches("x", Some("tests/test_recipes.py")));
        assert!(!m.matches("tests.test_recipes_more", None));
        assert!(!m.matches("tests.test_recipes_more.TakeTests", None));
        assert!(!m.matches("tests.test_other", None));
        assert!(!m.matches("x", Some("tests/test_recipes.pyc")));
        let dir = PathMatcher::new("tests/properties/");
        assert!(!dir.names_file());
        assert_eq!(
            dir.place("tests.properties.test_codec.TestX", None),
            Some(Place::Dotted("test_codec.TestX"))
        );
        assert_eq!(
            dir.place("x", Some("./tests/properties/test_a.py")),
            Some(Place::File("tests/properties/test_a.py"))
        );
        assert_eq!(
            dir.place("tiny::properties", None),
            Some(Place::Nextest("properties"))
        );
    }
}
