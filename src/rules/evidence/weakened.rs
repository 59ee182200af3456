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

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use crate::evidence::test_source::{
    Assertion, Helper, Helpers, Site, Strength, TestFile, TestFunction, Tolerance, normal_key,
    summarise,
};
use crate::policy::agents::HumanTrailer;
use crate::report::finding::{Code, Finding};

/// One test file a commit changed: its path and what it held before and after (`None`: the
/// file is absent on that side, or not a file whose tests guard reads). Shared: the engine
/// reads each version once for a range.
#[derive(Debug, Clone)]
pub struct FileVersions {
    pub path: String,
    pub old: Option<Rc<TestFile>>,
    pub new: Option<Rc<TestFile>>,
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
    /// How many other tests of the file the same change weakens the same way: a skip added
    /// at the module or a class applies to each of its tests, and is one finding.
    pub alike: usize,
}

/// The weakenings in one commit's changed test files, compared with one parent's.
pub fn weakenings(files: &[FileVersions]) -> Vec<Weakening> {
    let olds: Vec<Placed> = files
        .iter()
        .flat_map(|f| {
            f.old
                .iter()
                .flat_map(|t| t.functions.iter().map(|x| (f.path.as_str(), x)))
        })
        .collect();
    let news: Vec<Placed> = files
        .iter()
        .flat_map(|f| {
            f.new
                .iter()
                .flat_map(|t| t.functions.iter().map(|x| (f.path.as_str(), x)))
        })
        .collect();
    let pairs = pair(&olds, &news);

    // What each test asserts: its own assertions and its calls of helpers. A helper is read
    // on the same side, in any of the commit's files; one that only the other side holds
    // (moved to a file the commit does not change) is read there.
    let helpers = |side: fn(&FileVersions) -> Option<&Rc<TestFile>>| -> Helpers {
        let mut all = Helpers::new();
        for (name, defined) in files.iter().filter_map(side).flat_map(|t| &t.helpers) {
            all.entry(name.clone())
                .or_default()
                .extend(defined.iter().cloned());
        }
        all
    };
    let (old_helpers, new_helpers) = (helpers(|f| f.old.as_ref()), helpers(|f| f.new.as_ref()));
    // A class whose methods the new side reads where they were: one the commit deleted
    // whole, that no test it keeps named. One whose method alone was deleted (its base's
    // stands in), or that a kept test used before (`FakeHttp(..)` made `FakeBlob()`), is
    // not: what the test reaches now is the other class's.
    let owners = |helpers: &Helpers| -> HashSet<String> {
        helpers
            .values()
            .flatten()
            .map(|f| f.owner.clone())
            .collect()
    };
    let (old_owners, new_owners) = (owners(&old_helpers), owners(&new_helpers));
    let kept_words: HashSet<&str> = pairs
        .iter()
        .zip(&olds)
        .filter(|(n, _)| n.is_some())
        .flat_map(|(_, (_, f))| f.body.split(' '))
        .collect();
    let gone = |owner: &str| {
        old_owners.contains(owner)
            && !new_owners.contains(owner)
            && owner
                .split('.')
                .all(|class| !class.is_empty() && !kept_words.contains(class))
    };
    let (old_summary, new_summary) = (
        summarise(&old_helpers, &new_helpers, &|_| false),
        summarise(&new_helpers, &old_helpers, &gone),
    );
    let old_asserts: Vec<Vec<Assertion>> = olds
        .iter()
        .map(|(_, f)| asserted(f, &old_summary))
        .collect();
    let new_asserts: Vec<Vec<Assertion>> = news
        .iter()
        .map(|(_, f)| asserted(f, &new_summary))
        .collect();

    // Assertion texts the commit brings anywhere: into another test, a new test or a helper.
    // An assertion removed from one test that shows up there was moved.
    let mut moved_to = Destinations::default();
    let mut paired_new = vec![false; news.len()];
    for (o, n) in pairs.iter().enumerate() {
        if let Some(n) = n {
            paired_new[*n] = true;
            for text in gained(&old_asserts[o], &new_asserts[*n]) {
                moved_to.add(text, Some(*n));
            }
        }
    }
    // A new test that is skipped or expected to fail checks nothing: what moved there is
    // not checked.
    for (n, list) in new_asserts.iter().enumerate() {
        if !paired_new[n] && news[n].1.skips.is_empty() {
            for a in list {
                moved_to.add(normal_key(&a.text), None);
            }
        }
    }
    let helper_texts = |side: fn(&FileVersions) -> Option<&Rc<TestFile>>| -> Vec<String> {
        files
            .iter()
            .filter_map(side)
            .flat_map(|t| t.helper_assertions.iter().map(|a| normal_key(a)))
            .collect()
    };
    let mut old_texts: HashMap<String, usize> = HashMap::new();
    for text in helper_texts(|f| f.old.as_ref()) {
        *old_texts.entry(text).or_default() += 1;
    }
    for text in helper_texts(|f| f.new.as_ref()) {
        match old_texts.get_mut(&text) {
            Some(n) if *n > 0 => *n -= 1,
            _ => moved_to.add(text, None),
        }
    }

    // What each kept test lost, in the old tests' order; then the tests gone. Each takes
    // the places its assertions went.
    let lost: Vec<Option<Lost>> = pairs
        .iter()
        .enumerate()
        .map(|(o, n)| n.map(|n| lost(&old_asserts[o], &new_asserts[n], &mut moved_to)))
        .collect();
    // A test gone whose every assertion the commit brings elsewhere (merged into a
    // neighbour, split, renamed beyond recognition with its checks kept) was moved, not
    // deleted: what it checked is still checked. One that asserted nothing is deleted.
    let mut found: Vec<(usize, Weakening)> = Vec::new();
    for (o, n) in pairs.iter().enumerate() {
        let (old_path, old) = olds[o];
        if n.is_some() || moved_to.take_all(&old_asserts[o]) {
            continue;
        }
        let deleted = Weakening {
            kind: Kind::Deleted,
            path: old_path.to_string(),
            test: old.name.clone(),
            line: old.line,
            before: Some(format!("{} (line {})", old.name, old.line)),
            after: None,
            more: 0,
            alike: 0,
        };
        found.push((o, deleted));
    }
    // Then each kept test's findings. An assertion a kept test gained that stands for one
    // moved from elsewhere is not also new there: moving one assertion from `a` to `b` and
    // deleting one of `b`'s leaves a test checking less.
    for (o, n) in pairs.iter().enumerate() {
        let (Some(n), Some(lost)) = (n, &lost[o]) else {
            continue;
        };
        let (new_path, new) = news[*n];
        let asserts = (&old_asserts[o][..], &new_asserts[*n][..]);
        let used = moved_to.used.get(n).map(Vec::as_slice).unwrap_or_default();
        let mut one = Vec::new();
        compare((olds[o].1, new), asserts, lost, used, new_path, &mut one);
        found.extend(one.into_iter().map(|w| (o, w)));
    }
    found.sort_by_key(|(o, _)| *o);
    found.into_iter().map(|(_, w)| w).collect()
}

/// A skip added where several tests take it (`pytestmark`, a module-level `pytest.skip`, a
/// class's decorator) is one change: one finding, at the first test it skips, counting the
/// others. A test that gained another skip of its own as well keeps its own finding.
fn one_per_shared_skip(found: Vec<Weakening>) -> Vec<Weakening> {
    let mut out: Vec<Weakening> = Vec::with_capacity(found.len());
    let mut first_of: HashMap<(String, u64, Option<String>), usize> = HashMap::new();
    for w in found {
        if w.kind != Kind::SkipAdded || w.more > 0 {
            out.push(w);
            continue;
        }
        let key = (w.path.clone(), w.line, w.after.clone());
        match first_of.get(&key) {
            Some(&i) => out[i].alike += 1,
            None => {
                first_of.insert(key, out.len());
                out.push(w);
            }
        }
    }
    out
}

/// Where the assertions the commit brings elsewhere are, by normal text: how many in new
/// tests or helpers, and the kept tests that gained them (by index among the new tests).
/// Each stands for one assertion moved there.
#[derive(Default)]
struct Destinations {
    by_text: HashMap<String, Places>,
    /// The texts each kept test gained that stood for a moved assertion.
    used: HashMap<usize, Vec<String>>,
}

#[derive(Default)]
struct Places {
    new: usize,
    kept: Vec<usize>,
}

impl Destinations {
    fn add(&mut self, text: String, at: Option<usize>) {
        let places = self.by_text.entry(text).or_default();
        match at {
            Some(n) => places.kept.push(n),
            None => places.new += 1,
        }
    }

    /// Takes a place `text` went, a new test's or a helper's before a kept test's gain.
    fn take(&mut self, text: &str) -> bool {
        let Some(places) = self.by_text.get_mut(text) else {
            return false;
        };
        if places.new > 0 {
            places.new -= 1;
        } else if let Some(n) = places.kept.pop() {
            self.used.entry(n).or_default().push(text.to_string());
        } else {
            return false;
        }
        true
    }

    /// Whether every one of `asserts` (a deleted test's) has a place it went, which are then
    /// taken; none is taken otherwise.
    fn take_all(&mut self, asserts: &[Assertion]) -> bool {
        if asserts.is_empty() {
            return false;
        }
        let mut wanted: HashMap<String, usize> = HashMap::new();
        for a in asserts {
            *wanted.entry(normal_key(&a.text)).or_default() += 1;
        }
        let have = |text: &str| self.by_text.get(text).map_or(0, |p| p.new + p.kept.len());
        if wanted.iter().any(|(text, n)| have(text) < *n) {
            return false;
        }
        for (text, n) in wanted {
            for _ in 0..n {
                self.take(&text);
            }
        }
        true
    }
}

/// What `f` asserts: its own assertions, and per call of a helper as many as the helper
/// makes (`helpers`: what each call asserts).
fn asserted(f: &TestFunction, helpers: &HashMap<String, Helper>) -> Vec<Assertion> {
    let mut out = f.assertions.clone();
    for call in &f.calls {
        let Some(helper) = helpers.get(&call.name) else {
            continue;
        };
        // A call that may not run asserts nothing for sure.
        let strength = match call.conditional {
            true => Strength::Weak,
            false => helper.strength,
        };
        for _ in 0..helper.count {
            out.push(Assertion {
                line: call.line,
                text: call.text.clone(),
                strength,
                pins: None,
                reads: Vec::new(),
            });
        }
    }
    out
}

/// A test function and the file it is in.
type Placed<'a> = (&'a str, &'a TestFunction);

/// For each old function, the new function it is (by index), if any: the same name in the
/// same file; else the one function of that name elsewhere (moved); else the one with the
/// same body (renamed); else the one most like it (renamed and edited).
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
    // Elsewhere, only an unambiguous match pairs: by name, by its last part (a test moved
    // into a file of its own leaves its `mod tests` or class behind), then by body.
    let keys: [fn(&TestFunction) -> &str; 3] = [
        |f| f.name.as_str(),
        |f| f.name.rsplit("::").next().unwrap_or(&f.name),
        |f| f.body.as_str(),
    ];
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
            if let Some([n]) = by_key.get(key(f)).map(Vec::as_slice)
                && !taken[*n]
            {
                pairs[o] = Some(*n);
                taken[*n] = true;
            }
        }
    }
    // Renamed and edited in one commit (as git finds a rename): a new test alike enough,
    // when they share most of their tokens, or half of them under a name much like it. It is then compared like any other. The most
    // alike pairs are taken first, over all of the commit's tests, and of bodies alike
    // enough the names decide between them: tests full of one library's snapshots share
    // most tokens with each other (pydantic-ai's `test_google_model_code_execution_tool`
    // is 0.81 like an unrelated test and 0.76 like `test_code_execution`, where it went).
    let left: Vec<usize> = (0..olds.len()).filter(|&o| pairs[o].is_none()).collect();
    let open: Vec<usize> = (0..news.len()).filter(|&n| !taken[n]).collect();
    if left.len().saturating_mul(open.len()) <= MAX_SIMILARITY_PAIRS {
        let mut alike: Vec<(f64, usize, usize)> = Vec::new();
        for &o in &left {
            for &n in &open {
                let body = similarity(&olds[o].1.body, &news[n].1.body);
                if body < NAMED_RENAME_SIMILARITY {
                    continue;
                }
                let name = name_likeness(&olds[o].1.name, &news[n].1.name);
                if body >= RENAME_SIMILARITY || name >= LIKE_NAMES {
                    alike.push((body + NAME_WEIGHT * name, o, n));
                }
            }
        }
        alike.sort_by(|a, b| b.0.total_cmp(&a.0).then((a.1, a.2).cmp(&(b.1, b.2))));
        for (_, o, n) in alike {
            if pairs[o].is_none() && !taken[n] {
                pairs[o] = Some(n);
                taken[n] = true;
            }
        }
    }
    pairs
}

/// How alike two bodies must be to be one test renamed and edited when the names are alike
/// too (`LIKE_NAMES`): `test_read_input_empty` rewritten as `test_read_input_empty_then_valid`
/// (OpenHands 9460cb5: 0.59 alike, the old assertion kept and one added).
const NAMED_RENAME_SIMILARITY: f64 = 0.5;
/// Names this alike (`name_likeness`) lower the bar to `NAMED_RENAME_SIMILARITY`: two
/// words of `read_input_empty` more make 0.8.
const LIKE_NAMES: f64 = 0.75;

/// How much the names of two tests weigh beside their bodies' likeness, when the bodies are
/// alike enough: at most this much is added to the bodies' likeness.
const NAME_WEIGHT: f64 = 0.25;

/// Dice's coefficient of the words of two tests' names (the last part, split at `_`, its
/// case ignored, `test` left out): `test_google_model_code_execution_tool` and
/// `test_code_execution` share two of seven.
fn name_likeness(a: &str, b: &str) -> f64 {
    let words = |name: &str| -> Vec<String> {
        let last = name.rsplit("::").next().unwrap_or(name);
        last.split('_')
            .filter(|w| !w.is_empty() && !w.eq_ignore_ascii_case("test"))
            .map(str::to_ascii_lowercase)
            .collect()
    };
    let (a, b) = (words(a), words(b));
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let mut left: HashMap<&str, usize> = HashMap::new();
    for w in &b {
        *left.entry(w.as_str()).or_default() += 1;
    }
    let mut common = 0usize;
    for w in &a {
        if let Some(n) = left.get_mut(w.as_str())
            && *n > 0
        {
            *n -= 1;
            common += 1;
        }
    }
    2.0 * common as f64 / (a.len() + b.len()) as f64
}

/// How alike two bodies must be to be one test renamed and edited: the share of tokens they
/// have in common (Dice's coefficient over the token multisets).
const RENAME_SIMILARITY: f64 = 0.6;
/// Unpaired old and new tests compared for that, at most (a commit that rewrites thousands
/// of tests leaves them unpaired: deleted, which fails closed).
const MAX_SIMILARITY_PAIRS: usize = 10_000;

/// Dice's coefficient of the tokens of two bodies.
fn similarity(a: &str, b: &str) -> f64 {
    let mut counts: HashMap<&str, i64> = HashMap::new();
    let (mut total_a, mut total_b) = (0usize, 0usize);
    for t in a.split(' ') {
        *counts.entry(t).or_default() += 1;
        total_a += 1;
    }
    let mut common = 0usize;
    for t in b.split(' ') {
        total_b += 1;
        if let Some(n) = counts.get_mut(t)
            && *n > 0
        {
            *n -= 1;
            common += 1;
        }
    }
    // (Each side has a token at least: splitting "" gives one, empty.)
    2.0 * common as f64 / (total_a + total_b) as f64
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

/// What a kept test lost: assertions gone that an exact equality it now makes implies, and
/// those gone and not moved elsewhere (the places they went are taken from `moved_to`).
struct Lost {
    implied: Vec<Assertion>,
    removed: Vec<Assertion>,
}

fn lost(old_asserts: &[Assertion], new_asserts: &[Assertion], moved_to: &mut Destinations) -> Lost {
    let pins: Vec<&str> = new_asserts
        .iter()
        .filter_map(|a| a.pins.as_deref())
        .collect();
    let gone = difference(old_asserts, new_asserts);
    let (implied, gone): (Vec<&Assertion>, Vec<&Assertion>) =
        gone.into_iter().partition(|a| implied_by_pins(a, &pins));
    let removed = gone
        .into_iter()
        .filter(|a| !moved_to.take(&normal_key(&a.text)))
        .cloned()
        .collect();
    Lost {
        implied: implied.into_iter().cloned().collect(),
        removed,
    }
}

/// Compares one test with what it was (`asserts`: what each version asserts; `lost`: what
/// it lost; `used_texts`: texts it gained that stand for assertions moved from elsewhere).
fn compare(
    (old, new): (&TestFunction, &TestFunction),
    (old_asserts, new_asserts): (&[Assertion], &[Assertion]),
    Lost { implied, removed }: &Lost,
    used_texts: &[String],
    path: &str,
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
        alike: 0,
    };
    // Removed or loosened: assertions that are gone, unless an exact equality the test now
    // makes implies them, or they were moved elsewhere; against those it gained, but for an
    // equality that stands for the checks it implies and those that stand for moved ones.
    // An assertion that stands for one moved here implies nothing else as well.
    let mut used: HashMap<&str, usize> = HashMap::new();
    for text in used_texts {
        *used.entry(text.as_str()).or_default() += 1;
    }
    let mut take = |a: &Assertion| match used.get_mut(normal_key(&a.text).as_str()) {
        Some(n) if *n > 0 => {
            *n -= 1;
            true
        }
        _ => false,
    };
    let gained = difference(new_asserts, old_asserts);
    let (moved_here, gained): (Vec<&Assertion>, Vec<&Assertion>) =
        gained.into_iter().partition(|a| take(a));
    let pins: Vec<&str> = new_asserts
        .iter()
        .filter(|a| !moved_here.iter().any(|m| std::ptr::eq(*m, *a)))
        .filter_map(|a| a.pins.as_deref())
        .collect();
    let (implied, unpinned): (Vec<&Assertion>, Vec<&Assertion>) =
        implied.iter().partition(|a| implied_by_pins(a, &pins));
    let removed: Vec<&Assertion> = removed.iter().chain(unpinned).collect();
    let added: Vec<&Assertion> = gained
        .into_iter()
        .filter(|a| {
            a.pins
                .as_deref()
                .is_none_or(|pin| !implied.iter().any(|r| implied_by_pins(r, &[pin])))
        })
        .collect();
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
    // Skips are matched one for one by what they say: one made to say more
    // (`skipif(sys.platform == "win32")` made `skipif(True)`) is one gained.
    // Those written exactly as before are matched first, so that the one shown as gained
    // is one the commit wrote (five `pytest.skip(.., allow_module_level=True)` with
    // different reasons share one key).
    let mut unmatched: Vec<&Site> = old.skips.iter().collect();
    let mut take = |same: &dyn Fn(&Site, &Site) -> bool, s: &Site| match unmatched
        .iter()
        .position(|o| same(o, s))
    {
        Some(i) => {
            unmatched.swap_remove(i);
            true
        }
        None => false,
    };
    let as_written: Vec<bool> = new
        .skips
        .iter()
        .map(|s| take(&|o, s| o.key == s.key && o.text == s.text, s))
        .collect();
    let fresh: Vec<&Site> = new
        .skips
        .iter()
        .zip(as_written)
        .filter(|(s, written)| !written && !take(&|o, s| o.key == s.key, s))
        .map(|(s, _)| s)
        .collect();
    if let Some(skip) = fresh.first() {
        out.push(found(
            Kind::SkipAdded,
            skip.line,
            None,
            Some(skip.text.clone()),
            fresh.len() - 1,
        ));
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
    let widened = widened_tolerances(&old.tolerances, &new.tolerances);
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

/// Whether every expression `removed` compares is one of `pins` (each fixed whole by an exact
/// equality with a constant) or a part of one: `X`, `X['k']`, `X.a`, `X[0].b`, `len(X)`.
/// `assert len(msgs) == 1` and `assert msgs[0]['role'] == 'user'` made `assert msgs ==
/// snapshot([...])` check no less: the whole value is written out. (What the constant
/// says is another matter: a changed expected value is no weaker in form, and the humans'
/// tests run against the agent's code, `guard retest`, are what catch it.)
fn implied_by_pins(removed: &Assertion, pins: &[&str]) -> bool {
    !removed.reads.is_empty()
        && removed
            .reads
            .iter()
            .all(|read| pins.iter().any(|pin| part_of(read, pin)))
}

/// Whether `expr` (normal text) is `whole` or is read from it by subscripts, attributes
/// or a function of the whole value (`len`, `type`, `sorted`, ...), under the same
/// condition when either runs only under one (`[only under: ...]`).
fn part_of(expr: &str, whole: &str) -> bool {
    fn split(s: &str) -> (&str, &str) {
        match s.find(" [only under: ") {
            Some(i) => s.split_at(i),
            None => (s, ""),
        }
    }
    let ((mut expr, expr_under), (whole, whole_under)) = (split(expr), split(whole));
    if expr_under != whole_under {
        return false;
    }
    for _ in 0..8 {
        if expr == whole {
            return true;
        }
        if let Some(rest) = expr.strip_prefix(whole) {
            // Reading on from the whole, not a longer name (`msgs2`) or a call of it.
            if rest.starts_with('[') || rest.starts_with('.') {
                return true;
            }
        }
        let unwrapped = [
            "len(", "type(", "sorted(", "list(", "set(", "tuple(", "str(",
        ]
        .iter()
        .find_map(|f| expr.strip_prefix(f).and_then(|e| e.strip_suffix(')')));
        match unwrapped {
            Some(inner) => expr = inner,
            None => return false,
        }
    }
    false
}

/// The tolerances of `new` wider than the one each replaces in `old`. Tolerances pair by
/// what they bound, in order; those left over by the call and parameter alone (`approx.rel`),
/// in order, so that respelling what the call compares (`approx(0.3)` made
/// `approx(0.30, rel=0.5)`) widens nothing unseen.
fn widened_tolerances<'t>(
    old: &'t [Tolerance],
    new: &'t [Tolerance],
) -> Vec<(&'t Tolerance, &'t Tolerance)> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let mut paired = vec![false; old.len()];
    let mut pairs: Vec<(Option<usize>, &Tolerance)> = Vec::new();
    for t in new {
        let k = seen.entry(t.key.as_str()).or_default();
        let before = old
            .iter()
            .enumerate()
            .filter(|(_, o)| o.key == t.key)
            .nth(*k)
            .map(|(i, _)| i);
        *k += 1;
        if let Some(i) = before {
            paired[i] = true;
        }
        pairs.push((before, t));
    }
    for (before, t) in pairs.iter_mut().filter(|(b, _)| b.is_none()) {
        let slot = t.slot();
        let left = (0..old.len()).find(|&i| !paired[i] && old[i].slot() == slot);
        if let Some(i) = left {
            paired[i] = true;
            *before = Some(i);
        }
    }
    let mut widened = Vec::new();
    for (before, t) in pairs {
        if let Some(before) = before.map(|i| &old[i]).filter(|b| t.wider_than(b)) {
            widened.push((before, t));
        }
    }
    widened
}

/// The weakenings of a merge at the test files where git's merge of its parents conflicted:
/// each it makes against a parent (`per_parent`), unless another parent's side made the same
/// one against the merge base (`sides`: each parent's weakenings against the base), which
/// that side's commits were judged for. A resolution that takes one side's whole file drops
/// what the other side added: that is the merge's own weakening.
pub fn against_sides(per_parent: Vec<Vec<Weakening>>, sides: &[Vec<Weakening>]) -> Vec<Weakening> {
    let same =
        |a: &Weakening, b: &Weakening| a.kind == b.kind && a.path == b.path && a.test == b.test;
    let mut found: Vec<Weakening> = Vec::new();
    for (i, weakenings) in per_parent.into_iter().enumerate() {
        for w in weakenings {
            let excused = sides
                .iter()
                .enumerate()
                .any(|(j, side)| j != i && side.iter().any(|o| same(o, &w)));
            if !excused && !found.iter().any(|f| same(f, &w) && f.line == w.line) {
                found.push(w);
            }
        }
    }
    found
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
    one_per_shared_skip(weakenings)
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
            let alike = match w.alike {
                0 => String::new(),
                1 => " and 1 more test of the file, by one change".to_string(),
                n => format!(" and {n} more tests of the file, by one change"),
            };
            let message = format!(
                "{}{more} in test {}::{}{alike}{where_}: {}",
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
            old: old.and_then(|t| parse(path, t.as_bytes())).map(Rc::new),
            new: new.and_then(|t| parse(path, t.as_bytes())).map(Rc::new),
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
    fn an_assertion_moved_to_another_test_or_a_helper_is_no_weakening() {
        let without = BASE.replace("    assert parts() == [1, 2]\n", "");
        let into_test = without.replace(
            "    assert ratio() == pytest.approx(0.5, rel=1e-9)\n",
            "    assert ratio() == pytest.approx(0.5, rel=1e-9)\n    assert parts() == [1, 2]\n",
        );
        let into_helper = format!("{without}\ndef check_parts():\n    assert parts() == [1, 2]\n");
        for new in [&into_test, &into_helper] {
            assert_eq!(
                kinds(&[versions("tests/test_a.py", Some(BASE), Some(new))]),
                [],
                "{new}"
            );
        }
    }

    #[test]
    fn a_test_merged_into_another_is_moved_not_deleted_unless_where_it_went_is_skipped() {
        // test_close's check now ends test_total (found on OpenHands' history).
        let merged = "import pytest\n\ndef test_total():\n    assert total() == 42\n    assert parts() == [1, 2]\n    assert ratio() == pytest.approx(0.5, rel=1e-9)\n";
        let got = kinds(&[versions("tests/test_a.py", Some(BASE), Some(merged))]);
        assert_eq!(got, []);
        // Renamed beyond recognition, its check kept: moved.
        let renamed = BASE.replace(
            "def test_close():\n",
            "def test_ratio_of_halves_is_one_half_exactly_enough():\n    x = 1\n",
        );
        let got = kinds(&[versions("tests/test_a.py", Some(BASE), Some(&renamed))]);
        assert_eq!(got, []);
        // Into a new test that is skipped: a weakening still (the rename pairs the two, so
        // it shows as the skip added).
        let skipped = BASE.replace(
            "def test_close():\n",
            "@pytest.mark.skip\ndef test_later_and_longer_name():\n    y = 2\n",
        );
        let got = kinds(&[versions("tests/test_a.py", Some(BASE), Some(&skipped))]);
        assert_eq!(
            got,
            [(Kind::SkipAdded, "test_later_and_longer_name".to_string(), 7)]
        );
        // The same in another file, skipped: a weakening whichever way it pairs.
        let moved_out = BASE.replace(
            "\ndef test_close():\n    assert ratio() == pytest.approx(0.5, rel=1e-9)\n",
            "",
        );
        let elsewhere = "import pytest\n\n@pytest.mark.skip\ndef test_other():\n    setup_a_lot_of_things(1, 2, 3, 4)\n    more_setup('x', 'y')\n    assert ratio() == pytest.approx(0.5, rel=1e-9)\n";
        let got = kinds(&[
            versions("tests/test_a.py", Some(BASE), Some(&moved_out)),
            versions("tests/test_b.py", None, Some(elsewhere)),
        ]);
        assert!(
            got.iter()
                .any(|(k, _, _)| matches!(k, Kind::Deleted | Kind::SkipAdded)),
            "{got:?}"
        );
        // An assertion taken out of a test into a new skipped test: removed.
        let parked = format!(
            "{}\n@pytest.mark.skip\ndef test_parts():\n    assert parts() == [1, 2]\n",
            BASE.replace("    assert parts() == [1, 2]\n", "")
        );
        let got = kinds(&[versions("tests/test_a.py", Some(BASE), Some(&parked))]);
        assert_eq!(got, [(Kind::AssertionRemoved, "test_total".to_string(), 3)]);
        // Gone with nothing of it elsewhere: deleted.
        let gone = BASE.replace(
            "\ndef test_close():\n    assert ratio() == pytest.approx(0.5, rel=1e-9)\n",
            "",
        );
        let got = kinds(&[versions("tests/test_a.py", Some(BASE), Some(&gone))]);
        assert_eq!(got, [(Kind::Deleted, "test_close".to_string(), 7)]);
    }

    #[test]
    fn an_assertion_a_helper_already_made_did_not_move_there() {
        let helper = "\ndef check_parts():\n    assert parts() == [1, 2]\n";
        let old = format!("{BASE}{helper}");
        let new = format!(
            "{}{helper}",
            BASE.replace("    assert parts() == [1, 2]\n", "")
        );
        assert_eq!(
            kinds(&[versions("tests/test_a.py", Some(&old), Some(&new))]),
            [(Kind::AssertionRemoved, "test_total".to_string(), 3)]
        );
        // A second helper that makes it too is where it went.
        let again = format!("{new}\ndef check_again():\n    assert parts() == [1, 2]\n");
        assert_eq!(
            kinds(&[versions("tests/test_a.py", Some(&old), Some(&again))]),
            []
        );
    }

    #[test]
    fn similarity_is_dices_coefficient_over_token_multisets() {
        assert_eq!(similarity("a b c", "a b c"), 1.0);
        // Two of three tokens shared: 2 * 2 / 6.
        assert_eq!(similarity("a b c", "a b d"), 4.0 / 6.0);
        // A repeated token is shared as often as both have it: `a` once, `b` once.
        assert_eq!(similarity("a a b", "a b b"), 4.0 / 6.0);
        assert_eq!(similarity("a b", "c d e f"), 0.0);
        assert_eq!(similarity("", ""), 1.0);
    }

    #[test]
    fn difference_counts_repeats() {
        let made = |texts: &[&str]| -> Vec<Assertion> {
            texts
                .iter()
                .enumerate()
                .map(|(i, t)| Assertion {
                    line: i as u64 + 1,
                    text: t.to_string(),
                    strength: Strength::Strong,
                    pins: None,
                    reads: Vec::new(),
                })
                .collect()
        };
        let texts = |list: Vec<&Assertion>| -> Vec<u64> { list.iter().map(|a| a.line).collect() };
        let twice = made(&["assert x == 1", "assert y == 2", "assert x == 1"]);
        let once = made(&["assert x == 1"]);
        // One `x` is matched; the second is not, and `y` never was.
        assert_eq!(texts(difference(&twice, &once)), [2, 3]);
        assert_eq!(texts(difference(&once, &twice)), Vec::<u64>::new());
        assert_eq!(
            gained(&once, &twice),
            [normal_key("assert y == 2"), normal_key("assert x == 1")]
        );
    }

    #[test]
    fn each_weakening_counts_the_others_of_its_kind() {
        let old = "import pytest\n\ndef test_t():\n    assert a() == 1\n    assert b() == 2\n    assert c() == 3\n    assert d() == 4\n    assert r() == pytest.approx(0.5, rel=1e-9)\n    assert s() == pytest.approx(0.5, rel=1e-9)\n";
        // A test skipped on one platform, and the same skipped twice more.
        let skipped = old.replace(
            "def test_t():",
            "@pytest.mark.skipif(sys.platform == \"win32\", reason=\"posix\")\ndef test_t():",
        );
        let more_skips = skipped.replace(
            "def test_t():",
            "@pytest.mark.skip\n@pytest.mark.skip(reason=\"flaky\")\ndef test_t():",
        );
        let cases = [
            // Three of the four comparisons gone.
            (
                old.to_string(),
                old.replace(
                    "    assert b() == 2\n    assert c() == 3\n    assert d() == 4\n",
                    "",
                ),
                Kind::AssertionRemoved,
                2,
                3,
            ),
            // Three comparisons made two truthiness checks and another comparison: two
            // strong assertions fewer.
            (
                old.to_string(),
                old.replace("a() == 1", "a()")
                    .replace("b() == 2", "b()")
                    .replace("c() == 3", "c() == 30"),
                Kind::AssertionLoosened,
                1,
                4,
            ),
            // Two tolerances widened.
            (
                old.to_string(),
                old.replace("rel=1e-9", "rel=0.5"),
                Kind::ToleranceWidened,
                1,
                8,
            ),
            // Shown at the first new skip (the `skipif` on line 3 was there before).
            (skipped, more_skips, Kind::SkipAdded, 1, 4),
            // One early return before the assertions, then three.
            (
                old.replace("def test_t():\n", "def test_t():\n    if x():\n        return\n"),
                old.replace(
                    "def test_t():\n",
                    "def test_t():\n    if x():\n        return\n    if y():\n        return\n    if z():\n        return\n",
                ),
                Kind::EarlyReturn,
                1,
                5,
            ),
        ];
        for (old, new, kind, more, line) in cases {
            let got: Vec<(Kind, usize, u64)> =
                weakenings(&[versions("tests/test_a.py", Some(&old), Some(&new))])
                    .into_iter()
                    .map(|w| (w.kind, w.more, w.line))
                    .collect();
            assert_eq!(got, [(kind, more, line)], "{new}");
        }
        // Two tolerances on one bound pair in order: unchanged, nothing widened.
        let two = old.replace("rel=1e-9)\n", "rel=1e-3)\n");
        let two = two.replacen("rel=1e-3", "rel=1e-9", 1);
        assert_eq!(
            kinds(&[versions("tests/test_a.py", Some(&two), Some(&two))]),
            []
        );
    }

    #[test]
    fn an_assertion_moved_once_excuses_one_removal() {
        let old = "def test_a():\n    assert parts() == [1, 2]\n    assert a() == 1\n\ndef test_b():\n    assert parts() == [1, 2]\n    assert b() == 2\n";
        let new = "def test_a():\n    assert a() == 1\n\ndef test_b():\n    assert b() == 2\n\ndef check_parts():\n    assert parts() == [1, 2]\n";
        assert_eq!(
            kinds(&[versions("tests/test_a.py", Some(old), Some(new))]),
            [(Kind::AssertionRemoved, "test_b".to_string(), 4)]
        );
    }

    #[test]
    fn of_bodies_alike_enough_the_one_of_the_likest_name_is_the_renamed_test() {
        // A test moved to a new file and renamed, its snapshot updated; beside it, a new
        // test of the same snapshot-heavy shape that checks little. The bodies of both are
        // alike enough, the unrelated one more: the names decide.
        let old = "def test_model_code_execution_tool():\n    result = agent.run('What is 2+2?', tools=[CodeTool(), SearchTool()])\n    assert result.all_messages() == snapshot([Request(parts=[Prompt(content='What is 2+2?')]), Response(parts=[Call(tool='code', args={'code': '2+2'})])])\n";
        let moved = "def test_code_execution():\n    result = agent.run('What is 2+2?', tools=[CodeTool()])\n    assert result.new_messages() == snapshot([Request(parts=[Prompt(content='What is 2+2?')]), Response(parts=[Call(tool='code', args={'code': '4'})])])\n    assert result.usage() == Usage(input_tokens=10, output_tokens=20, details={'code': 1})\n";
        let other = "def test_search_with_tools():\n    result = agent.run('What is 2+2?', tools=[CodeTool(), SearchTool()])\n    assert isinstance(result.output, str)\n    all_messages = [Request(parts=[Prompt(content='What is 2+2?')]), Response(parts=[Call(tool='code', args={'code': '2+2'})])]\n";
        let body = |text: &str| {
            parse("tests/t.py", text.as_bytes()).unwrap().functions[0]
                .body
                .clone()
        };
        let (to_moved, to_other) = (
            similarity(&body(old), &body(moved)),
            similarity(&body(old), &body(other)),
        );
        assert!(
            RENAME_SIMILARITY <= to_moved && to_moved < to_other,
            "{to_moved} {to_other}"
        );
        let files = [
            versions("tests/test_model.py", Some(old), None),
            versions("tests/model/test_code.py", None, Some(moved)),
            versions("tests/model/test_search.py", None, Some(other)),
        ];
        assert_eq!(kinds(&files), []);
        // Without a likeness of names, the likest body decides, as before.
        let unnamed = [
            versions("tests/test_model.py", Some(old), None),
            versions(
                "tests/model/test_code.py",
                None,
                Some(&moved.replace("test_code_execution", "test_one")),
            ),
            versions("tests/model/test_search.py", None, Some(other)),
        ];
        assert_eq!(
            kinds(&unnamed),
            [(
                Kind::AssertionLoosened,
                "test_search_with_tools".to_string(),
                3
            )]
        );
    }

    #[test]
    fn a_test_rewritten_under_a_longer_name_is_the_same_test_when_half_alike() {
        // Invalid input now asks again: the test feeds it two answers, keeps its check and
        // adds one. Half the tokens are shared, under a name that only grew.
        let old = "class TestReadInput:\n    async def test_read_input_empty(self, prompt):\n        prompt.return_value = ''\n        result = await read_input('Proceed?')\n        assert result == 'no'\n";
        let new = "class TestReadInput:\n    async def test_read_input_empty_then_valid(self, prompt, errors):\n        prompt.side_effect = ['', 'n']\n        result = await read_input('Proceed?')\n        assert result == 'no'\n        assert len(errors.calls) == 1\n        assert errors.calls[0].message.startswith('Invalid')\n";
        let body = |text: &str| {
            parse("tests/t.py", text.as_bytes()).unwrap().functions[0]
                .body
                .clone()
        };
        for new in [new, &new.replace("'no'", "'yes'")] {
            let alike = similarity(&body(old), &body(new));
            assert!(
                (NAMED_RENAME_SIMILARITY..RENAME_SIMILARITY).contains(&alike),
                "{alike}"
            );
        }
        assert_eq!(
            kinds(&[versions("tests/test_input.py", Some(old), Some(new))]),
            []
        );
        // Its expected answer changed too: paired, that is no weaker in form.
        let changed = new.replace("assert result == 'no'", "assert result == 'yes'");
        assert_eq!(
            kinds(&[versions("tests/test_input.py", Some(old), Some(&changed))]),
            []
        );
        // Half alike under another name is no rename: the old test is deleted.
        let renamed = changed.replace("test_read_input_empty_then_valid", "test_prompt_retries");
        assert_eq!(
            kinds(&[versions("tests/test_input.py", Some(old), Some(&renamed))]),
            [(
                Kind::Deleted,
                "TestReadInput::test_read_input_empty".to_string(),
                2
            )]
        );
    }

    #[test]
    fn an_inherited_test_hidden_or_uncollected_in_the_subclass_is_gone_there() {
        let suite = "class _Suite:\n    def test_roundtrip(self):\n        self.store.write('a', 'x')\n        assert self.store.read('a') == 'x'\n\n\nclass TestMemory(_Suite):\n    def setup_method(self):\n        self.store = Memory()\n";
        let http = "\n\nclass TestHttp(_Suite):\n    def setup_method(self):\n        self.store = Http()\n";
        let old = format!("{suite}{http}");
        let check = |new: &str| kinds(&[versions("tests/test_store.py", Some(&old), Some(new))]);
        // The inherited test's name bound to something else in the subclass: pytest runs
        // nothing, or a lambda that checks nothing.
        for hidden in [
            "    test_roundtrip = None\n",
            "    test_roundtrip = lambda self: None\n",
        ] {
            let new = format!("{old}\n{hidden}");
            assert_eq!(
                check(&new),
                [(Kind::Deleted, "TestHttp::test_roundtrip".to_string(), 2)],
                "{hidden}"
            );
        }
        // Renamed out of `python_classes`: its only base is a class of the file that is no
        // `TestCase`, so pytest does not collect it.
        let renamed = old.replace("class TestHttp(_Suite)", "class HttpSuite(_Suite)");
        assert_eq!(
            check(&renamed),
            [(Kind::SkipAdded, "HttpSuite::test_roundtrip".to_string(), 12)]
        );
        // With a base from elsewhere it may be a `TestCase`, which pytest collects.
        let test_case = renamed.replace("class HttpSuite(_Suite)", "class HttpSuite(Base, _Suite)");
        assert_eq!(check(&test_case), []);
        // A test moved up into a shared suite its class inherits is the same test: the base
        // not being collected is the base's matter.
        let own = "class TestMemory:\n    def setup_method(self):\n        self.store = Memory()\n\n    def test_roundtrip(self):\n        self.store.write('a', 'x')\n        assert self.store.read('a') == 'x'\n";
        assert_eq!(
            kinds(&[versions("tests/test_store.py", Some(own), Some(suite))]),
            []
        );
    }

    #[test]
    fn tests_pair_one_to_one() {
        // One name defined twice (pytest runs the last; both are read): each pairs with its own.
        let twice = "def test_a():\n    assert x() == 1\n\ndef test_a():\n    assert y() == 2\n";
        assert_eq!(
            kinds(&[versions("tests/test_a.py", Some(twice), Some(twice))]),
            []
        );
        // Moved to another file and made stronger there, while a namesake stays in a third:
        // paired by its name, though its body is not like the old one.
        let kept = "def test_x():\n    assert keep() == 1\n";
        let old = "def test_x():\n    assert total() == 42\n";
        let stronger = "def test_x():\n    assert total() == 42\n    assert total() > 0\n    assert parts() == [1, 2]\n    assert ratio() < 1\n    assert more() is None\n";
        let moved = [
            versions("tests/test_a.py", Some(kept), Some(kept)),
            versions("tests/test_b.py", Some(old), None),
            versions("tests/test_c.py", None, Some(stronger)),
        ];
        assert_eq!(kinds(&moved), []);
        // Two of one name from two files, and one left of them: the other is deleted.
        let merged = [
            versions("tests/test_a.py", Some(old), None),
            versions("tests/test_b.py", Some(old), None),
            versions("tests/test_c.py", None, Some(old)),
        ];
        assert_eq!(kinds(&merged), [(Kind::Deleted, "test_x".to_string(), 1)]);
    }

    #[test]
    fn a_test_moved_out_of_its_module_into_a_file_of_its_own_is_the_same_test() {
        let old = "#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(add(1, 2), 3);\n    }\n}\n";
        let new = "#[test]\nfn adds() {\n    assert_eq!(add(1, 2), 3);\n}\n";
        let files = [
            versions("src/calc.rs", Some(old), Some("pub fn add() {}\n")),
            versions("src/calc/tests.rs", None, Some(new)),
        ];
        assert_eq!(kinds(&files), []);
    }

    #[test]
    fn assertions_moved_into_a_helper_of_the_file_still_count() {
        let old = "def test_a():\n    run = go()\n    assert run.code == 0\n    assert run.reasons == []\n";
        let new = "def expect(run, code, reasons):\n    assert run.code == code\n    assert run.reasons == reasons\n\ndef test_a():\n    expect(go(), 0, [])\n";
        assert_eq!(
            kinds(&[versions("tests/test_a.py", Some(old), Some(new))]),
            []
        );
        let one = new.replace("    assert run.reasons == reasons\n", "");
        assert_eq!(
            kinds(&[versions("tests/test_a.py", Some(old), Some(&one))]),
            [(Kind::AssertionRemoved, "test_a".to_string(), 4)],
            "the helper asserts one of the two"
        );
        let rust_old = "#[test]\nfn t() {\n    let run = go();\n    assert_eq!(run.code, 0);\n}\n";
        let rust_new = "fn expect(run: &Run, code: i32) {\n    assert_eq!(run.code, code);\n}\n\nfn check(run: &Run) {\n    expect(run, 0);\n}\n\n#[test]\nfn t() {\n    check(&go());\n}\n";
        assert_eq!(
            kinds(&[versions("tests/it.rs", Some(rust_old), Some(rust_new))]),
            []
        );
        // A helper that asserts only weakly loosens what it replaced.
        let weak = "fn expect(run: &Run) {\n    assert!(run.ok);\n}\n\n#[test]\nfn t() {\n    expect(&go());\n}\n";
        assert_eq!(
            kinds(&[versions("tests/it.rs", Some(rust_old), Some(weak))]),
            [(Kind::AssertionLoosened, "t".to_string(), 7)]
        );
    }

    #[test]
    fn a_helper_moved_out_of_view_still_asserts_and_one_emptied_does_not() {
        let old = "def expect(run):\n    assert run.code == 0\n\ndef test_a():\n    expect(go())\n";
        // The helper moved to a support module the commit does not change.
        let moved = "from support import expect\n\ndef test_a():\n    expect(go())\n";
        assert_eq!(
            kinds(&[versions("tests/test_a.py", Some(old), Some(moved))]),
            []
        );
        // The helper kept, its assertion gone: the test asserts nothing now.
        let emptied = "def expect(run):\n    pass\n\ndef test_a():\n    expect(go())\n";
        assert_eq!(
            kinds(&[versions("tests/test_a.py", Some(old), Some(emptied))]),
            [(Kind::AssertionRemoved, "test_a".to_string(), 4)]
        );
    }

    #[test]
    fn a_class_deleted_with_its_method_leaves_another_class_s_method_of_that_name() {
        // The suite's `store.delete(..)` is linked by name to every `delete` of the file. The
        // commit deletes the mock whose `delete` asserted; another mock's stays. The test is
        // unchanged: what the gone class asserted is read where it was, as for a helper
        // moved out of view.
        let suite = "class _Suite:\n    def test_delete(self):\n        store = self.store\n        store.delete('a')\n        assert store.list() == []\n\n";
        let blob = "class FakeBlob:\n    def delete(self):\n        self.gone = True\n\n";
        let http = "class FakeHttp:\n    def delete(self, url):\n        assert url.startswith(self.base)\n\n";
        let old = format!("{suite}{blob}{http}");
        let new = format!("{suite}{blob}");
        assert_eq!(
            kinds(&[versions("tests/test_store.py", Some(&old), Some(&new))]),
            []
        );
        // The asserting class renamed and its method emptied in one commit: the new class's
        // `delete` may be the old one's, so the old one is not read for it.
        let renamed =
            format!("{suite}{blob}class FakeHttp2:\n    def delete(self, url):\n        pass\n\n");
        assert_eq!(
            kinds(&[versions("tests/test_store.py", Some(&old), Some(&renamed))]),
            [(Kind::AssertionRemoved, "_Suite::test_delete".to_string(), 2)]
        );
        // The class kept, its method emptied: the same.
        let emptied = http.replace("assert url.startswith(self.base)", "pass");
        let emptied = format!("{suite}{blob}{emptied}");
        assert_eq!(
            kinds(&[versions("tests/test_store.py", Some(&old), Some(&emptied))]),
            [(Kind::AssertionRemoved, "_Suite::test_delete".to_string(), 2)]
        );
    }

    #[test]
    fn a_method_deleted_where_a_kept_test_reaches_another_of_its_name_is_lost() {
        let blob = "class FakeBlob:\n    def delete(self, key):\n        self.gone = True\n\n";
        let http = "class FakeHttp(FakeBlob):\n    def __init__(self, base):\n        self.base = base\n\n    def delete(self, url):\n        assert url.startswith(self.base)\n\n";
        let test = "def test_remove():\n    store = Http(FakeHttp('http://x/'))\n    store.delete('a')\n    assert store.keys() == []\n";
        let old = format!("{blob}{http}{test}");
        // The asserting method deleted, its class kept: `FakeBlob`'s `delete` stands in.
        let method_gone = old.replace(
            "\n    def delete(self, url):\n        assert url.startswith(self.base)\n",
            "",
        );
        assert_ne!(method_gone, old);
        assert_eq!(
            kinds(&[versions(
                "tests/test_store.py",
                Some(&old),
                Some(&method_gone)
            )]),
            [(Kind::AssertionRemoved, "test_remove".to_string(), 9)]
        );
        // The class deleted and the kept test pointed at the other fake.
        let class_gone = format!(
            "{blob}{}",
            test.replace("FakeHttp('http://x/')", "FakeBlob()")
        );
        assert_eq!(
            kinds(&[versions(
                "tests/test_store.py",
                Some(&old),
                Some(&class_gone)
            )]),
            [(Kind::AssertionRemoved, "test_remove".to_string(), 5)]
        );
    }

    #[test]
    fn an_assertion_moved_into_a_kept_test_does_not_also_stand_for_one_it_lost() {
        // One assertion moved from `test_a` to `test_b`, one of `test_b`'s deleted.
        let old = "def test_a():\n    assert x() == 1\n    assert y() == 2\n\ndef test_b():\n    assert z() == 3\n";
        let new = "def test_a():\n    assert y() == 2\n\ndef test_b():\n    assert x() == 1\n";
        assert_eq!(
            kinds(&[versions("tests/test_a.py", Some(old), Some(new))]),
            [(Kind::AssertionRemoved, "test_b".to_string(), 4)]
        );
        // A test renamed to the name of one it replaces: the replaced test's check is gone.
        let old = "def test_totals_basic():\n    rows = load('a.csv')\n    assert total(rows) == 42\n\ndef test_totals_empty():\n    rows = load('empty.csv')\n    assert total(rows) == 0\n";
        let new =
            "def test_totals_empty():\n    rows = load('a.csv')\n    assert total(rows) == 42\n";
        assert_eq!(
            kinds(&[versions("tests/test_a.py", Some(old), Some(new))]),
            [(Kind::AssertionRemoved, "test_totals_empty".to_string(), 1)]
        );
        // The same under a name like the deleted one's, not its own: one finding either way.
        let old = old.replace("test_totals_basic", "test_sum_rows");
        let new = new.replace("test_totals_empty", "test_totals_empty_file");
        assert_eq!(
            kinds(&[versions("tests/test_a.py", Some(&old), Some(&new))]).len(),
            1
        );
    }

    #[test]
    fn tests_a_class_inherits_from_a_base_of_the_file_are_its_own() {
        let base = "class _Suite:\n    def test_roundtrip(self):\n        assert self.store.read(self.store.write('x')) == 'x'\n\n    def test_empty(self):\n        assert self.store.list() == []\n\n";
        let memory = "class TestMemory(TestCase, _Suite):\n    def setUp(self):\n        self.store = Memory()\n\n";
        let http = "class TestHttp(TestCase, _Suite):\n    def setUp(self):\n        self.store = Http()\n\n    def test_empty(self):\n        assert self.store.list() == ['index']\n\n";
        let old = format!("{base}{memory}{http}");
        // Deleting the class that runs the suite on one store deletes the suite's tests
        // there, those it inherits and its own.
        let new = format!("{base}{memory}");
        assert_eq!(
            kinds(&[versions("tests/test_store.py", Some(&old), Some(&new))]),
            [
                (Kind::Deleted, "TestHttp::test_empty".to_string(), 16),
                (Kind::Deleted, "TestHttp::test_roundtrip".to_string(), 2)
            ]
        );
        // A skip on the subclass skips what it inherits.
        let skipped = old.replace(
            "class TestMemory(",
            "@pytest.mark.skip(reason='slow')\nclass TestMemory(",
        );
        assert_eq!(
            kinds(&[versions("tests/test_store.py", Some(&old), Some(&skipped))]),
            [
                (Kind::SkipAdded, "TestMemory::test_roundtrip".to_string(), 8),
                (Kind::SkipAdded, "TestMemory::test_empty".to_string(), 8)
            ]
        );
    }

    #[test]
    fn a_test_renamed_and_edited_is_compared_with_what_it_was() {
        let old = "def test_totals():\n    rows = load('a.csv')\n    assert total(rows) == 42\n    assert total([]) == 0\n";
        let renamed = "def test_total_of_rows():\n    rows = load('a.csv', strict=True)\n    assert total(rows) == 42\n    assert total([]) == 0\n";
        assert_eq!(
            kinds(&[versions("tests/test_a.py", Some(old), Some(renamed))]),
            []
        );
        let weaker = renamed.replace("    assert total([]) == 0\n", "");
        assert_eq!(
            kinds(&[versions("tests/test_a.py", Some(old), Some(&weaker))]),
            [(Kind::AssertionRemoved, "test_total_of_rows".to_string(), 1)]
        );
        // An unrelated new test is no rename: the old one is deleted.
        let other = "def test_parse():\n    assert parse('x') is not None\n";
        assert_eq!(
            kinds(&[versions("tests/test_a.py", Some(old), Some(other))]),
            [(Kind::Deleted, "test_totals".to_string(), 1)]
        );
    }

    #[test]
    fn checks_on_parts_of_a_value_an_exact_equality_now_fixes_are_not_removed() {
        let old = "def test_schema():\n    schema = make()\n    assert schema['type'] == 'object'\n    assert len(schema['properties']) == 2\n    assert 'a' in schema['properties']\n    assert schema is not None\n";
        let kinds_of = |new: &str| kinds(&[versions("tests/test_s.py", Some(old), Some(new))]);
        // The whole value written out, plain or as inline-snapshot records it.
        for pinned in [
            "{'type': 'object', 'properties': {'a': 1, 'b': 2}}",
            "snapshot({'type': 'object', 'properties': {'a': 1, 'b': 2}})",
        ] {
            let new =
                format!("def test_schema():\n    schema = make()\n    assert schema == {pinned}\n");
            assert_eq!(kinds_of(&new), [], "{pinned}");
        }
        // Read through names bound once: `s = schema; s['type']` is a part of `schema`.
        let aliased = "def test_schema():\n    schema = make()\n    s = schema['properties']\n    assert s['a'] == 1\n    assert len(s) == 2\n";
        let pinned = "def test_schema():\n    schema = make()\n    assert schema == {'properties': {'a': 1, 'b': 2}}\n";
        assert_eq!(
            kinds(&[versions("tests/test_s.py", Some(aliased), Some(pinned))]),
            []
        );
        // A name bound again before its pin (here to the constant itself, by an assignment,
        // a loop, a `with .. as` or a walrus) pins nothing.
        for again in [
            "schema = {'type': 'object'}",
            "for schema in [{'type': 'object'}]:\n        pass",
            "with fixed() as schema:\n        pass",
            "if (schema := {'type': 'object'}):\n        pass",
        ] {
            let rebound = format!(
                "def test_schema():\n    schema = make()\n    {again}\n    assert schema == {{'type': 'object'}}\n"
            );
            assert_eq!(
                kinds_of(&rebound),
                [(Kind::AssertionRemoved, "test_schema".to_string(), 1)],
                "{again}"
            );
        }
        // Under the same condition on both sides, the pin stands for the parts too.
        let under = |body: &str| format!("def test_t():\n    with ctx() as x:\n        {body}\n");
        assert_eq!(
            kinds(&[versions(
                "tests/test_u.py",
                Some(&under("assert x['a'] == 1")),
                Some(&under("assert x == {'a': 1}"))
            )]),
            []
        );
        // Not fixed whole: a part pinned, an empty snapshot (the run fills it in), a value
        // compared with another computed one, or a pin only under a condition.
        for new in [
            "def test_schema():\n    schema = make()\n    assert schema['type'] == {'type': 'object'}\n",
            "def test_schema():\n    schema = make()\n    assert schema == snapshot()\n",
            "def test_schema():\n    schema = make()\n    assert schema == other()\n",
            "def test_schema():\n    schema = make()\n    if schema:\n        assert schema == {'type': 'object'}\n",
            "def test_schema():\n    schema = make()\n    assert schema2 == {'type': 'object'}\n",
        ] {
            assert_eq!(
                kinds_of(new),
                [(Kind::AssertionRemoved, "test_schema".to_string(), 1)],
                "{new}"
            );
        }
    }

    #[test]
    fn a_value_pinned_through_a_name_bound_to_a_constant_implies_unittest_checks_on_it() {
        // OpenHands 11eb53a: `assertIsNotNone` and `assertIn` checks, on the value and on a
        // comprehension over it, made one equality with the whole expected list.
        let old = "class TestG(unittest.TestCase):\n    def test_changes(self):\n        changes = get()\n        self.assertIsNotNone(changes)\n        paths = [c['path'] for c in changes]\n        self.assertIn('a.txt', paths)\n        self.assertEqual(len(changes), 2)\n";
        let kinds_of = |new: &str| kinds(&[versions("tests/test_g.py", Some(old), Some(new))]);
        let expected = "        expected = [{'path': 'a.txt'}, {'path': 'b.txt'}]\n";
        for equality in [
            "if changes != expected:\n            raise RuntimeError(f'got {changes}, not {expected}')\n        assert changes == expected",
            "print(changes, expected)\n        assert changes == expected",
            "assert changes == expected",
            "assert expected == changes",
            "self.assertEqual(changes, expected)",
            "self.assertEqual(changes, [{'path': 'a.txt'}, {'path': 'b.txt'}])",
        ] {
            let new = format!(
                "class TestG(unittest.TestCase):\n    def test_changes(self):\n        changes = get()\n{expected}        {equality}\n"
            );
            assert_eq!(kinds_of(&new), [], "{equality}");
        }
        // A `with` that never swallows a failure (here `patch`, as the module imports it)
        // runs its body: a binding there is the test's own. And the test's helpers on
        // `self` leave what it reads from `self` as it was.
        let patched = format!(
            "from unittest.mock import patch\n\n\n{}",
            old.replace(
                "        changes = get()\n",
                "        with patch('m.x', 1):\n            changes = get()\n",
            )
            .replace("        self.", "            self.")
            .replace("        paths", "            paths")
        );
        let pinned_in_with = "from unittest.mock import patch\n\n\nclass TestG(unittest.TestCase):\n    def test_changes(self):\n        with patch('m.x', 1):\n            changes = get()\n            expected = [{'path': 'a.txt'}, {'path': 'b.txt'}]\n            assert changes == expected\n";
        assert_eq!(
            kinds(&[versions(
                "tests/test_g.py",
                Some(&patched),
                Some(pinned_in_with)
            )]),
            []
        );
        let on_self = |body: &str| {
            format!(
                "class TestS(unittest.TestCase):\n    def test_s(self):\n        self.load()\n{body}"
            )
        };
        assert_eq!(
            kinds(&[versions(
                "tests/test_s.py",
                Some(&on_self(
                    "        assert self.state['a'] == 1\n        assert len(self.state) == 1\n"
                )),
                Some(&on_self("        self.assertEqual(self.state, {'a': 1})\n"))
            )]),
            []
        );
        // Not the whole value: a name bound to a computed value, bound twice, or a constant
        // changed by a method after it was written; a comparison other than equality; a
        // pin on the comprehension alone (it does not fix `changes`).
        let removed = [(Kind::AssertionRemoved, "test_changes".to_string(), 1)];
        for (binding, equality) in [
            ("expected = build()", "assert changes == expected"),
            (
                "expected = []\n        expected = [{'path': 'a.txt'}]",
                "assert changes == expected",
            ),
            (
                "expected = []\n        expected.append(changes[0])",
                "assert changes == expected",
            ),
            (
                "expected = []\n        fill(expected, changes)",
                "assert changes == expected",
            ),
            (
                "expected = []\n        alias = expected\n        alias.extend(changes)",
                "assert changes == expected",
            ),
            (
                "expected = []\n        assert fill(expected, changes) is None",
                "assert changes == expected",
            ),
            ("expected = [1]", "assert changes != expected"),
            ("expected = [1]", "self.assertCountEqual(changes, expected)"),
            (
                "paths = [c['path'] for c in changes]",
                "assert paths == ['a.txt', 'b.txt']",
            ),
        ] {
            let new = format!(
                "class TestG(unittest.TestCase):\n    def test_changes(self):\n        changes = get()\n        {binding}\n        {equality}\n"
            );
            let got = kinds_of(&new);
            assert_eq!(got.len(), 1, "{binding} / {equality}: {got:?}");
            assert_eq!(got[0].0, removed[0].0, "{binding} / {equality}");
        }
        // A comprehension that also reads another computed value is not derived from
        // `changes` alone: a check on it is not implied by a pin on `changes`.
        let shifted = "def test_s():\n    xs = get()\n    base = start()\n    ys = [x - base for x in xs]\n    assert ys[0] == 0\n    assert len(xs) == 2\n";
        let pinned = "def test_s():\n    xs = get()\n    base = start()\n    assert xs == [5, 6]\n";
        assert_eq!(
            kinds(&[versions("tests/test_s.py", Some(shifted), Some(pinned))]),
            [(Kind::AssertionRemoved, "test_s".to_string(), 1)]
        );
        let alone = shifted.replace("x - base", "x['a']");
        assert_eq!(
            kinds(&[versions("tests/test_s.py", Some(&alone), Some(pinned))]),
            []
        );
    }

    #[test]
    fn a_pin_through_a_name_holds_only_where_nothing_else_could_make_the_equality_hold() {
        // Each new version drops checks and adds one equality that a name, a call or a
        // fake makes hold whatever the code does (or that holds for less than the checks
        // it replaces): every one is still a removed assertion.
        let changes = "class TestC(unittest.TestCase):\n    def test_c(self):\n        changes = list_changes('repo')\n        self.assertIsNotNone(changes)\n        paths = [c['path'] for c in changes]\n        self.assertIn('a.txt', paths)\n        self.assertIn('b.txt', paths)\n";
        let body = |lines: &str| {
            format!(
                "class TestC(unittest.TestCase):\n    def test_c(self):\n        changes = list_changes('repo')\n{lines}"
            )
        };
        let cases: Vec<(&str, String, String)> = vec![
            (
                "a second name for the list (chained assignment)",
                changes.to_string(),
                body("        alias = expected = []\n        alias.extend(changes)\n        assert changes == expected\n"),
            ),
            (
                "the list reached through locals()",
                changes.to_string(),
                body("        expected = []\n        locals()['expected'].extend(changes)\n        assert changes == expected\n"),
            ),
            (
                "a helper named like an assertion that fills the list",
                changes.to_string(),
                format!("def assert_filled(e, c):\n    e.extend(c)\n\n\n{}", body("        expected = []\n        assert_filled(expected, changes)\n        assert changes == expected\n")),
            ),
            (
                "the list as a class's base, filled by a metaclass",
                changes.to_string(),
                body("        expected = []\n        class _H(expected, changes, metaclass=fill):\n            pass\n        assert changes == expected\n"),
            ),
            (
                "a fixture parameter of the same name, bound again only under a condition",
                changes.replace("def test_c(self):", "def test_c(self, expected):"),
                body("        if FULL:\n            expected = []\n        assert changes == expected\n").replace("def test_c(self):", "def test_c(self, expected):"),
            ),
            (
                "the list bound under a condition",
                changes.to_string(),
                body("        if FULL:\n            expected = [{'path': 'a.txt'}]\n        assert changes == expected\n"),
            ),
            (
                "the equality before the binding",
                changes.to_string(),
                body("        self.assertEqual(changes, expected)\n        expected = [{'path': 'a.txt'}]\n"),
            ),
            (
                "the class's own assertEqual, which checks nothing",
                changes.to_string(),
                body("        self.assertEqual(changes, [{'path': 'a.txt'}, {'path': 'b.txt'}])\n").replace(
                    "    def test_c(self):",
                    "    def assertEqual(self, first, second, msg=None):\n        pass\n\n    def test_c(self):",
                ),
            ),
            (
                "the value under test replaced by a constant",
                "def test_c():\n    changes = get()\n    assert len(changes) == 2\n    assert changes[0]['path'] == 'a'\n".to_string(),
                "def test_c():\n    changes = [{'path': 'a'}, {'path': 'b'}]\n    expected = [{'path': 'a'}, {'path': 'b'}]\n    assert changes == expected\n".to_string(),
            ),
            (
                "the pinned value emptied first",
                "def test_c():\n    changes = get()\n    assert len(changes) == 2\n    assert changes[0]['path'] == 'a'\n".to_string(),
                "def test_c():\n    changes = get()\n    changes.clear()\n    assert changes == []\n".to_string(),
            ),
            (
                "a comprehension that calls a function of the file on each item",
                "def test_c():\n    items = load()\n    out = [render(i) for i in items]\n    assert out[0] == '<1>'\n    assert out[1] == '<2>'\n".to_string(),
                "def test_c():\n    items = load()\n    assert items == [{'n': 1}, {'n': 2}]\n".to_string(),
            ),
            (
                "a comprehension that calls a method of each item",
                "def test_c():\n    items = load()\n    out = [i.render() for i in items]\n    assert out[0] == '<1>'\n    assert out[1] == '<2>'\n".to_string(),
                "def test_c():\n    items = load()\n    assert items == [{'n': 1}, {'n': 2}]\n".to_string(),
            ),
            (
                "a comprehension's result extended afterwards",
                "def test_c():\n    changes = get()\n    paths = [c['path'] for c in changes]\n    paths.extend(renamed())\n    assert 'z.txt' in paths\n    assert len(changes) == 1\n".to_string(),
                "def test_c():\n    changes = get()\n    assert changes == [{'path': 'a.txt'}]\n".to_string(),
            ),
            (
                "an identity made an equality (1 == True)",
                "class T(unittest.TestCase):\n    def test_c(self):\n        x = flag()\n        self.assertIs(x, True)\n        self.assertIsNotNone(x)\n".to_string(),
                "class T(unittest.TestCase):\n    def test_c(self):\n        x = flag()\n        assert x == 1\n".to_string(),
            ),
            (
                "assertSequenceEqual, which a string passes against its letters",
                "class T(unittest.TestCase):\n    def test_c(self):\n        x = letters()\n        assert x == ['a', 'b']\n        assert len(x) == 2\n".to_string(),
                "class T(unittest.TestCase):\n    def test_c(self):\n        x = letters()\n        self.assertSequenceEqual(x, ['a', 'b'])\n".to_string(),
            ),
            (
                "a type check made an equality",
                "class T(unittest.TestCase):\n    def test_c(self):\n        result = build()\n        self.assertIsInstance(result, OrderedDict)\n        assert result['a'] == 1\n".to_string(),
                "class T(unittest.TestCase):\n    def test_c(self):\n        result = build()\n        assert result == {'a': 1}\n".to_string(),
            ),
        ];
        for (what, old, new) in cases {
            let got = kinds(&[versions("tests/test_c.py", Some(&old), Some(&new))]);
            assert_eq!(got.len(), 1, "{what}: {got:?}");
            assert_eq!(got[0].0, Kind::AssertionRemoved, "{what}");
        }
    }

    #[test]
    fn a_skip_every_test_of_a_module_takes_is_one_finding() {
        let old = "import pytest\n\n\ndef test_a():\n    assert f() == 1\n\n\ndef test_b():\n    assert f() == 2\n\n\ndef test_c():\n    assert f() == 3\n";
        let marked = old.replace(
            "import pytest\n",
            "import pytest\n\npytestmark = pytest.mark.skipif(not HAVE_F, reason='no f')\n",
        );
        // test_c also gains a skip of its own: that one stays a finding of its own.
        let own = marked.replace(
            "def test_c",
            "@pytest.mark.skip(reason='later')\ndef test_c",
        );
        let commit = AgentCommit {
            short: "abc1234".into(),
            subject: "Skip without f".into(),
            agent: "an agent".into(),
            has_trailer: false,
        };
        let trailer = HumanTrailer::parse("Test-Removal: human").unwrap();
        let messages = |new: &str| -> Vec<String> {
            let found = weakenings(&[versions("tests/test_f.py", Some(old), Some(new))]);
            findings(found, &commit, &trailer, "base")
                .into_iter()
                .map(|f| f.message)
                .collect()
        };
        assert_eq!(
            messages(&marked),
            [
                "adds a skip or expected failure in test tests/test_f.py::test_a and 2 more tests of the file, by one change: `+pytest.mark.skipif`"
            ]
        );
        let got = messages(&own);
        assert_eq!(got.len(), 2, "{got:#?}");
        assert!(
            got[0].contains("test_a and 1 more test of the file, by one change"),
            "{got:#?}"
        );
        assert!(
            got[1].starts_with(
                "adds a skip or expected failure (and 1 more) in test tests/test_f.py::test_c:"
            ),
            "{got:#?}"
        );
    }

    #[test]
    fn the_skip_shown_as_gained_is_the_one_the_commit_wrote() {
        let old = "import pytest\n\ntry:\n    import a\nexcept ImportError:\n    pytest.skip('a not installed', allow_module_level=True)\n\n\ndef test_t():\n    assert a.f() == 1\n";
        let new = old.replace(
            "\n\ndef test_t",
            "\nif a.VERSION > 3:\n    pytest.skip('a 4 is unsupported', allow_module_level=True)\n\n\ndef test_t",
        );
        let found = weakenings(&[versions("tests/test_a.py", Some(old), Some(&new))]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            found[0].after.as_deref(),
            Some("pytest.skip('a 4 is unsupported', allow_module_level=True)")
        );
        assert_eq!(found[0].line, 9);
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
    fn a_conflicted_merge_weakens_what_no_other_side_weakened_itself() {
        let w = |test: &str| Weakening {
            kind: Kind::AssertionRemoved,
            path: "t.py".into(),
            test: test.into(),
            line: 1,
            before: None,
            after: None,
            more: 0,
            alike: 0,
        };
        // Against parent 0 the merge drops assertions of a and b; parent 1's side had itself
        // removed b's (against the base): a is the merge's own.
        let got = against_sides(vec![vec![w("a"), w("b")], vec![]], &[vec![], vec![w("b")]]);
        assert_eq!(got, [w("a")]);
        // A side that weakened the same test another way, or a test of that name in another
        // file, excuses nothing; nor does a parent's own side excuse what the merge does to it.
        let skipped = Weakening {
            kind: Kind::SkipAdded,
            ..w("a")
        };
        let elsewhere = Weakening {
            path: "u.py".into(),
            ..w("a")
        };
        assert_eq!(
            against_sides(
                vec![vec![w("a")], vec![]],
                &[vec![], vec![skipped, elsewhere]]
            ),
            [w("a")]
        );
        assert_eq!(
            against_sides(vec![vec![w("a")], vec![]], &[vec![w("a")], vec![]]),
            [w("a")]
        );
        // The same weakening against both parents is one finding.
        assert_eq!(
            against_sides(vec![vec![w("a")], vec![w("a")]], &[vec![], vec![]]),
            [w("a")]
        );
    }
}
