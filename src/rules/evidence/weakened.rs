//! `weakened_test`: an agent commit that makes a test check less. Given what the test
//! functions of the files a commit changed asserted before and after
//! (`evidence::test_source`), it names each test that lost an assertion or had one loosened
//! (`assert x == y` made `assert x`), gained a skip or expected failure, gained a `return`
//! before its assertions, had a tolerance widened, or was deleted. Adding tests or
//! assertions is never a finding; the engine asks only about agents' commits.
//!
//! The functions of one commit are paired across its files, so a test moved to another file
//! or renamed (same body) is compared with itself, not deleted; and an assertion that leaves
//! one test for another (a test split in two) or for a helper, with the same text, is moved,
//! not removed.

use std::collections::HashMap;

use crate::evidence::test_source::{Assertion, Strength, TestFile, TestFunction, normal_key};
use crate::policy::agents::HumanTrailer;
use crate::report::finding::{Code, Finding};

/// One test file a commit changed: its path and what it held before and after (`None`: the
/// file is absent on that side, or not a file whose tests guard reads).
#[derive(Debug, Clone)]
pub struct FileVersions {
    pub path: String,
    pub old: Option<TestFile>,
    pub new: Option<TestFile>,
}

/// How a test was weakened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Deleted,
    AssertionRemoved,
    AssertionLoosened,
    SkipAdded,
    EarlyReturn,
    ToleranceWidened,
}

impl Kind {
    fn describe(self) -> &'static str {
        match self {
            Kind::Deleted => "deletes the test",
            Kind::AssertionRemoved => "removes an assertion",
            Kind::AssertionLoosened => "loosens an assertion",
            Kind::SkipAdded => "adds a skip or expected failure",
            Kind::EarlyReturn => "returns before its assertions",
            Kind::ToleranceWidened => "widens a tolerance",
        }
    }
}

/// One weakened test: where (the file and line after the commit; for a deleted test, where
/// it was before) and the lines that show it.
#[derive(Debug, Clone, PartialEq)]
pub struct Weakening {
    pub kind: Kind,
    pub path: String,
    /// The test's name within its file (`TestX::test_y`, `tests::it_works`).
    pub test: String,
    pub line: u64,
    /// What the commit removed or changed, as it read before.
    pub before: Option<String>,
    /// What it reads after.
    pub after: Option<String>,
    /// How many more of the same kind the test has.
    pub more: usize,
}

/// The weakenings in one commit's changed test files, compared with one parent's.
pub fn weakenings(files: &[FileVersions]) -> Vec<Weakening> {
    let olds: Vec<(&str, &TestFunction)> = files
        .iter()
        .flat_map(|f| {
            f.old
                .iter()
                .flat_map(|t| t.functions.iter().map(|x| (f.path.as_str(), x)))
        })
        .collect();
    let news: Vec<(&str, &TestFunction)> = files
        .iter()
        .flat_map(|f| {
            f.new
                .iter()
                .flat_map(|t| t.functions.iter().map(|x| (f.path.as_str(), x)))
        })
        .collect();
    let pairs = pair(&olds, &news);

    // Assertion texts the commit brings anywhere: into another test, a new test or a helper.
    // An assertion removed from one test that shows up there was moved.
    let mut moved_to: HashMap<String, usize> = HashMap::new();
    let mut paired_new = vec![false; news.len()];
    for (o, n) in pairs.iter().enumerate() {
        if let Some(n) = n {
            paired_new[*n] = true;
            for text in gained(&olds[o].1.assertions, &news[*n].1.assertions) {
                *moved_to.entry(text).or_default() += 1;
            }
        }
    }
    for (n, (_, f)) in news.iter().enumerate() {
        if !paired_new[n] {
            for a in &f.assertions {
                *moved_to.entry(normal_key(&a.text)).or_default() += 1;
            }
        }
    }
    let helpers = |side: fn(&FileVersions) -> Option<&TestFile>| -> Vec<String> {
        files
            .iter()
            .filter_map(side)
            .flat_map(|t| t.helper_assertions.iter().map(|a| normal_key(a)))
            .collect()
    };
    let mut old_helpers: HashMap<String, usize> = HashMap::new();
    for text in helpers(|f| f.old.as_ref()) {
        *old_helpers.entry(text).or_default() += 1;
    }
    for text in helpers(|f| f.new.as_ref()) {
        match old_helpers.get_mut(&text) {
            Some(n) if *n > 0 => *n -= 1,
            _ => *moved_to.entry(text).or_default() += 1,
        }
    }

    let mut out = Vec::new();
    for (o, n) in pairs.iter().enumerate() {
        let (old_path, old) = olds[o];
        match n {
            None => out.push(Weakening {
                kind: Kind::Deleted,
                path: old_path.to_string(),
                test: old.name.clone(),
                line: old.line,
                before: Some(format!("{} (line {})", old.name, old.line)),
                after: None,
                more: 0,
            }),
            Some(n) => {
                let (new_path, new) = news[*n];
                compare(old, new, new_path, &mut moved_to, &mut out);
            }
        }
    }
    out
}

/// A test function and the file it is in.
type Placed<'a> = (&'a str, &'a TestFunction);

/// For each old function, the new function it is (by index), if any: the same name in the
/// same file; else the one function of that name in another file (moved); else the one with
/// the same body (renamed).
fn pair(olds: &[Placed], news: &[Placed]) -> Vec<Option<usize>> {
    let mut taken = vec![false; news.len()];
    let mut pairs = vec![None; olds.len()];
    let mut in_file: HashMap<(&str, &str), Vec<usize>> = HashMap::new();
    for (n, (path, f)) in news.iter().enumerate() {
        in_file.entry((path, f.name.as_str())).or_default().push(n);
    }
    for (o, (path, f)) in olds.iter().enumerate() {
        let same = in_file.get(&(*path, f.name.as_str())).into_iter().flatten();
        if let Some(&n) = same.into_iter().find(|n| !taken[**n]) {
            pairs[o] = Some(n);
            taken[n] = true;
        }
    }
    // Elsewhere, only an unambiguous match pairs.
    let keys: [fn(&TestFunction) -> &str; 2] = [|f| f.name.as_str(), |f| f.body.as_str()];
    for key in keys {
        let mut by_key: HashMap<&str, Vec<usize>> = HashMap::new();
        for (n, (_, f)) in news.iter().enumerate() {
            if !taken[n] && !key(f).is_empty() {
                by_key.entry(key(f)).or_default().push(n);
            }
        }
        for (o, (_, f)) in olds.iter().enumerate() {
            if pairs[o].is_some() {
                continue;
            }
            if let Some([n]) = by_key.get(key(f)).map(Vec::as_slice) {
                if !taken[*n] {
                    pairs[o] = Some(*n);
                    taken[*n] = true;
                }
            }
        }
    }
    pairs
}

/// The normalised texts of `after`'s assertions that `before` does not have (as multisets).
fn gained(before: &[Assertion], after: &[Assertion]) -> Vec<String> {
    difference(after, before)
        .into_iter()
        .map(|a| normal_key(&a.text))
        .collect()
}

/// The assertions of `a` that `b` does not have, by text, counting repeats.
fn difference<'a>(a: &'a [Assertion], b: &[Assertion]) -> Vec<&'a Assertion> {
    let mut left: HashMap<String, usize> = HashMap::new();
    for x in b {
        *left.entry(normal_key(&x.text)).or_default() += 1;
    }
    a.iter()
        .filter(|x| match left.get_mut(&normal_key(&x.text)) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .collect()
}

/// Compares one test with what it was; what it lost to another place (`moved_to`) is taken
/// from there.
fn compare(
    old: &TestFunction,
    new: &TestFunction,
    path: &str,
    moved_to: &mut HashMap<String, usize>,
    out: &mut Vec<Weakening>,
) {
    let found = |kind, line, before: Option<String>, after: Option<String>, more| Weakening {
        kind,
        path: path.to_string(),
        test: new.name.clone(),
        line,
        before,
        after,
        more,
    };
    // Removed or loosened: assertions that are gone, unless they were moved elsewhere.
    let removed: Vec<&Assertion> = difference(&old.assertions, &new.assertions)
        .into_iter()
        .filter(|a| match moved_to.get_mut(&normal_key(&a.text)) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .collect();
    let added = difference(&new.assertions, &old.assertions);
    let strong = |list: &[&Assertion]| {
        list.iter()
            .filter(|a| a.strength == Strength::Strong)
            .count()
    };
    if removed.len() > added.len() {
        let lost = removed.len() - added.len();
        let first = removed[0];
        out.push(found(
            Kind::AssertionRemoved,
            new.line,
            Some(first.text.clone()),
            None,
            lost - 1,
        ));
    } else if strong(&removed) > strong(&added) {
        let before = removed.iter().find(|a| a.strength == Strength::Strong);
        let after = added.iter().find(|a| a.strength == Strength::Weak);
        out.push(found(
            Kind::AssertionLoosened,
            after.map_or(new.line, |a| a.line),
            before.map(|a| a.text.clone()),
            after.map(|a| a.text.clone()),
            strong(&removed) - strong(&added) - 1,
        ));
    }
    if new.skips.len() > old.skips.len() {
        let fresh: Vec<_> = new
            .skips
            .iter()
            .filter(|s| !old.skips.iter().any(|o| o.text == s.text))
            .collect();
        let shown = fresh.first().copied().or(new.skips.last());
        if let Some(skip) = shown {
            out.push(found(
                Kind::SkipAdded,
                skip.line,
                None,
                Some(skip.text.clone()),
                new.skips.len() - old.skips.len() - 1,
            ));
        }
    }
    if new.early_returns.len() > old.early_returns.len() {
        let at = &new.early_returns[0];
        out.push(found(
            Kind::EarlyReturn,
            at.line,
            None,
            Some(at.text.clone()),
            new.early_returns.len() - old.early_returns.len() - 1,
        ));
    }
    // Tolerances pair by what they bound, in order.
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let mut widened = Vec::new();
    for t in &new.tolerances {
        let k = seen.entry(t.key.as_str()).or_default();
        let before = old.tolerances.iter().filter(|o| o.key == t.key).nth(*k);
        *k += 1;
        if let Some(before) = before.filter(|b| t.wider_than(b)) {
            widened.push((before, t));
        }
    }
    if let Some((before, after)) = widened.first() {
        out.push(found(
            Kind::ToleranceWidened,
            after.line,
            Some(before.text.clone()),
            Some(after.text.clone()),
            widened.len() - 1,
        ));
    }
}

/// The weakenings of a merge: those it makes against every parent. What one parent's side
/// already did was judged in the commit that did it.
pub fn in_every_parent(mut per_parent: Vec<Vec<Weakening>>) -> Vec<Weakening> {
    let Some(first) = per_parent.pop() else {
        return Vec::new();
    };
    first
        .into_iter()
        .filter(|w| {
            per_parent.iter().all(|other| {
                other
                    .iter()
                    .any(|o| o.kind == w.kind && o.path == w.path && o.test == w.test)
            })
        })
        .collect()
}

/// The agent commit that weakened tests.
#[derive(Debug, Clone)]
pub struct AgentCommit {
    pub short: String,
    pub subject: String,
    /// Why it counts as an agent's.
    pub agent: String,
    /// Whether its message carries the `trailers.test_removal` trailer (which an agent's
    /// commit cannot use).
    pub has_trailer: bool,
}

/// `weakened_test` findings for `weakenings` made by `commit`.
pub fn findings(
    weakenings: Vec<Weakening>,
    commit: &AgentCommit,
    trailer: &HumanTrailer,
    base_name: &str,
) -> Vec<Finding> {
    let mut help = format!(
        "an agent may not weaken a test (the commit is an agent's: {}): drop or rewrite the commit (`git rebase -i {base_name}`) and restore the test; a human who means the change makes it in a commit of their own, with `{trailer}`",
        commit.agent
    );
    if commit.has_trailer {
        help.push_str(&format!(
            " (the commit's own `{trailer}` does not count: it is an agent's)"
        ));
    }
    weakenings
        .into_iter()
        .map(|w| {
            let mut excerpt = Vec::new();
            if let Some(before) = &w.before {
                excerpt.push(format!("`-{before}`"));
            }
            if let Some(after) = &w.after {
                excerpt.push(format!("`+{after}`"));
            }
            let more = match w.more {
                0 => String::new(),
                n => format!(" (and {n} more)"),
            };
            let where_ = if w.kind == Kind::Deleted {
                " (in the parent)"
            } else {
                ""
            };
            let message = format!(
                "{}{more} in test {}::{}{where_}: {}",
                w.kind.describe(),
                w.path,
                w.test,
                excerpt.join(" ")
            );
            Finding::new(Code::WeakenedTest, message)
                .path(&w.path)
                .line(w.line)
                .test(format!("{}::{}", w.path, w.test))
                .commit(&commit.short, &commit.subject)
                .help(&help)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::test_source::parse;

    fn versions(path: &str, old: Option<&str>, new: Option<&str>) -> FileVersions {
        FileVersions {
            path: path.to_string(),
            old: old.and_then(|t| parse(path, t.as_bytes())),
            new: new.and_then(|t| parse(path, t.as_bytes())),
        }
    }

    fn kinds(files: &[FileVersions]) -> Vec<(Kind, String, u64)> {
        weakenings(files)
            .into_iter()
            .map(|w| (w.kind, w.test, w.line))
            .collect()
    }

    const BASE: &str = "import pytest\n\ndef test_total():\n    assert total() == 42\n    assert parts() == [1, 2]\n\ndef test_close():\n    assert ratio() == pytest.approx(0.5, rel=1e-9)\n";

    #[test]
    fn each_kind_of_weakening_is_named() {
        let cases: &[(&str, Kind, &str, u64)] = &[
            (
                "import pytest\n\ndef test_total():\n    assert total() == 42\n\ndef test_close():\n    assert ratio() == pytest.approx(0.5, rel=1e-9)\n",
                Kind::AssertionRemoved,
                "test_total",
                3,
            ),
            (
                "import pytest\n\ndef test_total():\n    assert total()\n    assert parts() == [1, 2]\n\ndef test_close():\n    assert ratio() == pytest.approx(0.5, rel=1e-9)\n",
                Kind::AssertionLoosened,
                "test_total",
                4,
            ),
            (
                "import pytest\n\n@pytest.mark.skip\ndef test_total():\n    assert total() == 42\n    assert parts() == [1, 2]\n\ndef test_close():\n    assert ratio() == pytest.approx(0.5, rel=1e-9)\n",
                Kind::SkipAdded,
                "test_total",
                3,
            ),
            (
                "import pytest\n\ndef test_total():\n    return\n    assert total() == 42\n    assert parts() == [1, 2]\n\ndef test_close():\n    assert ratio() == pytest.approx(0.5, rel=1e-9)\n",
                Kind::EarlyReturn,
                "test_total",
                4,
            ),
            (
                "import pytest\n\ndef test_total():\n    assert total() == 42\n    assert parts() == [1, 2]\n\ndef test_close():\n    assert ratio() == pytest.approx(0.5, rel=0.5)\n",
                Kind::ToleranceWidened,
                "test_close",
                8,
            ),
            (
                "import pytest\n\ndef test_total():\n    assert total() == 42\n    assert parts() == [1, 2]\n",
                Kind::Deleted,
                "test_close",
                7,
            ),
        ];
        for (new, kind, test, line) in cases {
            let got = kinds(&[versions("tests/test_a.py", Some(BASE), Some(new))]);
            assert_eq!(got, [(*kind, test.to_string(), *line)], "{new}");
        }
    }

    #[test]
    fn adding_renaming_moving_and_reformatting_is_no_weakening() {
        let more = format!("{BASE}\ndef test_more():\n    assert 1 + 1 == 2\n");
        let stronger = BASE.replace(
            "    assert total() == 42\n",
            "    assert total() == 42\n    assert total() > 0\n",
        );
        let renamed = BASE.replace("def test_total", "def test_sum");
        let reformatted = BASE.replace(
            "assert parts() == [1, 2]",
            "assert parts() == [\n        1,\n        2,\n    ]",
        );
        let tighter = BASE.replace("rel=1e-9", "rel=1e-12");
        for new in [&more, &stronger, &renamed, &reformatted, &tighter] {
            assert_eq!(
                kinds(&[versions("tests/test_a.py", Some(BASE), Some(new))]),
                [],
                "{new}"
            );
        }
        // Moved to another file (git mv), and split in two.
        let moved = [
            versions("tests/test_a.py", Some(BASE), None),
            versions("tests/test_b.py", None, Some(BASE)),
        ];
        assert_eq!(kinds(&moved), []);
        let split = BASE.replace(
            "    assert parts() == [1, 2]\n",
            "\ndef test_parts():\n    assert parts() == [1, 2]\n",
        );
        assert_eq!(
            kinds(&[versions("tests/test_a.py", Some(BASE), Some(&split))]),
            []
        );
    }

    #[test]
    fn rust_ignore_and_assert_true() {
        let old = "#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(add(1, 2), 3);\n    }\n}\n";
        let ignored = old.replace("    #[test]\n", "    #[test]\n    #[ignore]\n");
        let vacuous = old.replace("assert_eq!(add(1, 2), 3)", "assert!(true)");
        assert_eq!(
            kinds(&[versions("src/lib.rs", Some(old), Some(&ignored))]),
            [(Kind::SkipAdded, "tests::adds".to_string(), 4)]
        );
        assert_eq!(
            kinds(&[versions("src/lib.rs", Some(old), Some(&vacuous))]),
            [(Kind::AssertionRemoved, "tests::adds".to_string(), 4)]
        );
    }

    #[test]
    fn a_merge_weakens_what_it_weakens_against_every_parent() {
        let w = |test: &str| Weakening {
            kind: Kind::AssertionRemoved,
            path: "t.py".into(),
            test: test.into(),
            line: 1,
            before: None,
            after: None,
            more: 0,
        };
        let got = in_every_parent(vec![vec![w("a"), w("b")], vec![w("b")]]);
        assert_eq!(got, [w("b")]);
    }
}
