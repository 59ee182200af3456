//! What a test file's test functions assert, read with tree-sitter (Python with
//! `tree-sitter-python`, Rust with `tree-sitter-rust`): per test function its assertions and
//! how strong each is, its skip and expected-failure markers, the `return`s that come before
//! an assertion, and the tolerances it allows. The source is untrusted text (an agent wrote
//! it); tree-sitter reads any bytes without failing, and every walk here is iterative, so no
//! nesting depth overflows the stack. It judges nothing: comparing two versions is
//! `rules::evidence::weakened`'s job.
//!
//! A real parser rather than line patterns: a one-line `assert` may span lines, a `return`
//! inside a nested helper is not the test's, and the tokens of an `assert_eq!` call are told
//! apart from the same words in a string.

mod python;
mod rust;

use std::collections::{HashMap, HashSet};

use tree_sitter::Node;

pub use rust::TestItems;

/// The languages whose tests are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Language {
    Python,
    Rust,
}

impl Language {
    /// The language of a file, by its extension; `None` for any other file.
    pub fn of(path: &str) -> Option<Language> {
        let name = path.rsplit('/').next().unwrap_or(path);
        if name.ends_with(".py") {
            Some(Language::Python)
        } else if name.ends_with(".rs") {
            Some(Language::Rust)
        } else {
            None
        }
    }
}

/// The test functions of one version of a file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TestFile {
    pub functions: Vec<TestFunction>,
    /// The normalised text of each assertion made outside test functions (helpers the tests
    /// call), so that an assertion moved into a helper can be told from one removed.
    pub helper_assertions: Vec<String>,
    /// The file's functions that are not tests, by name, with what they assert and call: a
    /// test that calls one asserts what it asserts (see `summarise`).
    pub helpers: Helpers,
}

/// Functions that are not tests, by name (several of one name: methods of several types or
/// classes, or functions of several files).
pub type Helpers = HashMap<String, Vec<HelperFacts>>;

/// What a function that is not a test asserts itself, and the functions it calls.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HelperFacts {
    /// The class it is a method of (`Outer.Inner`), empty for a function of a module or a
    /// Rust function: what tells apart the functions of one name.
    pub owner: String,
    pub assertions: Vec<Strength>,
    pub calls: Vec<String>,
}

/// What one call of a helper asserts: as strong as its strongest assertion, and how many
/// (0 for a helper that asserts nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Helper {
    pub strength: Strength,
    pub count: usize,
}

/// A call of a helper counts for at most this many assertions.
const MAX_HELPER_COUNT: usize = 8;

/// What a call of each helper of `side` asserts, through the helpers it calls: a name
/// `side` does not have is looked up in `other` (a helper the version compared with holds,
/// moved out of view). Of a name `side` has, `other`'s functions of classes `side` lacks
/// and `gone` allows are read too (a mock class deleted with the only suite that used it
/// leaves another class's `delete` standing), unless `side` has a class with a function of
/// that name `other` lacks: it may be the one gone, renamed. Of several functions of one
/// name, the one that asserts most counts (a call cannot be told to be another's).
///
/// A call counts for the helper's own assertions (`expect(&run, 0, &[])` for the three it
/// makes), or for one when it asserts only through other helpers: helpers are matched by
/// name alone, and counting every assertion down the calls would let one common name (a
/// `new`, a `run`) stand for dozens.
pub fn summarise<'h>(
    side: &'h Helpers,
    other: &'h Helpers,
    gone: &dyn Fn(&str) -> bool,
) -> HashMap<String, Helper> {
    let names: Vec<&String> = side.keys().chain(other.keys()).collect();
    let defined = |name: &str| -> Vec<&'h HelperFacts> {
        let mine = side.get(name).map(Vec::as_slice).unwrap_or_default();
        let theirs = other.get(name).map(Vec::as_slice).unwrap_or_default();
        let owners = |list: &'h [HelperFacts]| -> HashSet<&'h str> {
            list.iter().map(|f| f.owner.as_str()).collect()
        };
        if mine.is_empty() {
            return theirs.iter().collect();
        }
        let (my_owners, their_owners) = (owners(mine), owners(theirs));
        if !my_owners.is_subset(&their_owners) {
            return mine.iter().collect();
        }
        let read = theirs
            .iter()
            .filter(|f| !my_owners.contains(f.owner.as_str()) && gone(&f.owner));
        mine.iter().chain(read).collect()
    };
    let facts: HashMap<&str, Vec<&HelperFacts>> =
        names.iter().map(|n| (n.as_str(), defined(n))).collect();
    let none = Helper {
        strength: Strength::Weak,
        count: 0,
    };
    let mut out: HashMap<String, Helper> = names.iter().map(|n| ((*n).clone(), none)).collect();
    // Each round settles one more level of helpers calling helpers; there are no more levels
    // than helpers.
    for _ in 0..=names.len() {
        let mut changed = false;
        for name in &names {
            for f in facts.get(name.as_str()).into_iter().flatten() {
                let own = f.assertions.iter().copied();
                let through = f
                    .calls
                    .iter()
                    .filter_map(|c| out.get(c))
                    .filter(|h| h.count > 0)
                    .map(|h| h.strength);
                let Some(strength) = own.chain(through).max() else {
                    continue;
                };
                let count = f.assertions.len().clamp(1, MAX_HELPER_COUNT);
                let summary = Helper { strength, count };
                if out.get(*name).is_none_or(|known| summary > *known) {
                    out.insert((*name).clone(), summary);
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    out
}

/// A call of a function by its bare name (`check_total(..)`, `self.check(..)`,
/// `expect(&run, 0)`), which may be a helper that asserts.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub name: String,
    pub line: u64,
    /// As written, and `[only under: ..]` when it may not run.
    pub text: String,
    /// Under a statement that may leave it unrun (`if`, a loop, a `try`, a closure): what
    /// the helper asserts counts as weak there.
    pub conditional: bool,
}

/// One test function (Python: a `test*` function or method; Rust: a function with a test
/// attribute such as `#[test]` or `#[tokio::test]`).
#[derive(Debug, Clone, PartialEq)]
pub struct TestFunction {
    /// Qualified within the file as its runner names it: `TestX::test_y` (pytest's node id
    /// after the file), `tests::it_works` (the module path of a Rust test).
    pub name: String,
    /// 1-based line of the `def`/`fn` (decorators and attributes come before it).
    pub line: u64,
    /// The body's tokens without comments, joined: equal for a function that was only
    /// renamed, moved or reformatted.
    pub body: String,
    /// Its own assertions (calls of helpers are in `calls`).
    pub assertions: Vec<Assertion>,
    pub calls: Vec<Call>,
    /// Skip and expected-failure markers that apply to it: its own decorators or attributes,
    /// its class's, its module's (`pytestmark`, a module-level `pytest.skip`), and calls in
    /// its body (`pytest.skip(`, `self.skipTest(`).
    pub skips: Vec<Site>,
    /// `return`s of the function itself (not of a nested function or closure) that come
    /// before one of its assertions (or a call of a helper of the file that asserts).
    pub early_returns: Vec<Site>,
    pub tolerances: Vec<Tolerance>,
}

/// A place in the source, and its text (whitespace collapsed, cut to a readable length).
#[derive(Debug, Clone, PartialEq)]
pub struct Site {
    pub line: u64,
    pub text: String,
    /// All of what it says, the same for code only reformatted: what tells two sites apart
    /// (`text` is cut short, and `skipif(sys.platform == "win32")` made `skipif(True)` is
    /// another skip).
    pub key: String,
}

/// How much an assertion checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Strength {
    /// Truthiness or presence: `assert x`, `assert x is not None`, `assert!(r.is_ok())`,
    /// `assertTrue(x)`, `pytest.raises(Exception)`.
    Weak,
    /// A comparison with an expected value: `assert x == y`, `assert_eq!`, `assertEqual`,
    /// `pytest.raises(ValueError)`, a `match=` on it.
    Strong,
}

/// One assertion. Assertions that cannot fail (`assert True`, `assert!(true)`,
/// `assert_eq!(x, x)`) are not assertions and are not listed.
#[derive(Debug, Clone, PartialEq)]
pub struct Assertion {
    pub line: u64,
    pub text: String,
    pub strength: Strength,
    /// The expression (normal text) an exact equality with a constant fixes whole
    /// (`assert X == {...}`, `assert X == snapshot([...])`): every check on its parts holds
    /// when it does.
    pub pins: Option<String>,
    /// The expressions a comparison checks (normal texts: `len(X)`, `X['k']`, `X.a`, the `X`
    /// of `'k' in X`); empty for any other assertion.
    pub reads: Vec<String>,
}

/// Which way a tolerance is looser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Looser {
    Larger,
    Smaller,
}

/// A number a test allows slack by: a tolerance argument (`pytest.approx(x, rel=1e-9)`,
/// `math.isclose(.., abs_tol=..)`, `assertAlmostEqual(.., places=7)`, `epsilon = 1e-6`), a
/// timeout or a sleep, or a numeric bound in an asserted comparison (`assert elapsed < 0.5`).
/// A tolerance argument left out counts with its library default, so that adding
/// `rel=0.5` to a `pytest.approx` widens it.
#[derive(Debug, Clone, PartialEq)]
pub struct Tolerance {
    pub line: u64,
    /// What the number bounds, to pair it with the other version's: the call and its first
    /// argument with the parameter (`approx(expected).rel`), or the other side of a
    /// comparison with its direction (`elapsed <`).
    pub key: String,
    pub value: f64,
    pub looser: Looser,
    /// As written (`rel=1e-9`, `< 0.5`), or `rel (default 1e-06)` for a default.
    pub text: String,
}

impl Tolerance {
    /// What the number bounds without what it is compared with: the key with its first
    /// bracketed part left out (`approx.rel` for `approx(expected).rel`). A tolerance whose
    /// call was respelled (`approx(0.3)` made `approx(0.30, rel=0.5)`) pairs by this, in
    /// order, when nothing pairs by its key.
    pub fn slot(&self) -> String {
        match (self.key.find('('), self.key.find(')')) {
            (Some(open), Some(close)) if open < close => {
                format!("{}{}", &self.key[..open], &self.key[close + 1..])
            }
            _ => self.key.clone(),
        }
    }

    /// Whether `self` (a later version) allows more than `before`.
    pub fn wider_than(&self, before: &Tolerance) -> bool {
        match self.looser {
            Looser::Larger => self.value > before.value,
            Looser::Smaller => self.value < before.value,
        }
    }
}

/// A function as read, before the file's helpers are known: a test function's facts, with
/// where each assertion, `return` and call stands.
#[derive(Clone)]
struct Draft {
    function: TestFunction,
    /// Byte offset of each of `function.assertions`.
    assertion_at: Vec<usize>,
    /// The function's own `return`s, with their byte offsets.
    returns: Vec<(usize, Site)>,
    /// Byte offset of each of `function.calls`.
    call_at: Vec<usize>,
}

/// The file: its test functions, and its helpers (each with the class it is a method of,
/// empty for none). A `return` before a call of a helper of
/// the file that asserts is early. A helper's assertion after a `return` of its own (`if
/// xs: return`) may not run: weak, so that a test's assertion moved into such a helper is
/// loosened, not moved.
fn finish(tests: Vec<Draft>, helpers: Vec<(String, Draft)>) -> TestFile {
    let mut facts: Helpers = HashMap::new();
    for (owner, h) in &helpers {
        let f = HelperFacts {
            owner: owner.clone(),
            assertions: h
                .function
                .assertions
                .iter()
                .zip(&h.assertion_at)
                .map(|(a, at)| match h.returns.iter().any(|(r, _)| r < at) {
                    true => Strength::Weak,
                    false => a.strength,
                })
                .collect(),
            calls: h.function.calls.iter().map(|c| c.name.clone()).collect(),
        };
        facts.entry(h.function.name.clone()).or_default().push(f);
    }
    let summaries = summarise(&facts, &HashMap::new(), &|_| false);
    let functions = tests
        .into_iter()
        .map(|draft| {
            let Draft {
                mut function,
                assertion_at,
                returns,
                call_at,
            } = draft;
            let asserting_calls = function
                .calls
                .iter()
                .zip(&call_at)
                .filter(|(c, _)| summaries.get(&c.name).is_some_and(|h| h.count > 0))
                .map(|(_, at)| *at);
            let last = assertion_at.iter().copied().chain(asserting_calls).max();
            function.early_returns = returns
                .into_iter()
                .filter(|(at, _)| last.is_some_and(|last| last > *at))
                .map(|(_, s)| s)
                .collect();
            function
        })
        .collect();
    TestFile {
        functions,
        helper_assertions: helpers
            .into_iter()
            .flat_map(|(_, h)| h.function.assertions.into_iter().map(|a| a.text))
            .collect(),
        helpers: facts,
    }
}

/// For a Python file, the source encoding its first lines declare when guard does not read
/// it as Python does (`python::unread_encoding`): the encoding's name and the line.
pub fn unread_encoding(path: &str, text: &[u8]) -> Option<(String, usize)> {
    match Language::of(path)? {
        Language::Python => python::unread_encoding(text),
        Language::Rust => None,
    }
}

/// Which Python functions and methods are tests: pytest's `python_functions`, each a name
/// prefix, or a glob when it holds `*`, `?` or `[` (pytest's own rule). Default `test`.
#[derive(Debug, Clone)]
pub struct PythonTests {
    prefixes: Vec<String>,
    globs: Vec<globset::GlobMatcher>,
    /// pytest's `python_classes`, read the same way: the classes it collects tests from.
    class_prefixes: Vec<String>,
    class_globs: Vec<globset::GlobMatcher>,
    /// pytest's `python_files`: the modules it collects (a name, or with a `/` the end of
    /// the path), and the patterns as written, to name them.
    files: globset::GlobSet,
    file_patterns: Vec<String>,
}

impl Default for PythonTests {
    fn default() -> Self {
        PythonTests::new(&["test".to_string()])
    }
}

impl PythonTests {
    pub fn new(patterns: &[String]) -> PythonTests {
        let (prefixes, globs) = name_patterns(patterns);
        let (class_prefixes, class_globs) = name_patterns(&["Test".to_string()]);
        PythonTests {
            prefixes,
            globs,
            class_prefixes,
            class_globs,
            files: globset::GlobSet::empty(),
            file_patterns: Vec::new(),
        }
        .with_files(&["test_*.py".to_string(), "*_test.py".to_string()])
    }

    /// With pytest's `python_files` (default `test_*.py`, `*_test.py`).
    pub fn with_files(mut self, patterns: &[String]) -> PythonTests {
        let mut set = globset::GlobSetBuilder::new();
        for p in patterns {
            let glob = format!("**/{p}");
            if let Ok(g) = globset::GlobBuilder::new(&glob)
                .literal_separator(true)
                .build()
            {
                set.add(g);
            }
        }
        self.files = set.build().unwrap_or_else(|_| globset::GlobSet::empty());
        self.file_patterns = patterns.to_vec();
        self
    }

    /// Whether pytest collects the module at `path` (any file that is not Python: yes).
    pub fn collects_module(&self, path: &str) -> bool {
        !path.ends_with(".py") || self.files.is_match(path)
    }

    /// Why pytest collects no test of the module at `path`, if it does not: its name is
    /// not one `python_files` names. As good as a skip of each of its tests (a test file
    /// moved to `tests/calc_checks.py` runs no more).
    fn module_not_collected(&self, path: &str) -> Option<Site> {
        if self.collects_module(path) {
            return None;
        }
        let name = path.rsplit('/').next().unwrap_or(path);
        Some(Site {
            line: 1,
            text: format!(
                "{name} is not collected (python_files: {})",
                self.file_patterns.join(" ")
            ),
            key: "not collected: module name".to_string(),
        })
    }

    /// With pytest's `python_classes` (default `Test`).
    pub fn with_classes(mut self, patterns: &[String]) -> PythonTests {
        (self.class_prefixes, self.class_globs) = name_patterns(patterns);
        self
    }

    /// Whether pytest collects a function of this name as a test.
    pub fn is_test(&self, name: &str) -> bool {
        self.prefixes.iter().any(|p| name.starts_with(p.as_str()))
            || self.globs.iter().any(|g| g.is_match(name))
    }

    /// Whether pytest collects tests from a class of this name (one that is not a
    /// `unittest.TestCase`, which it collects by its base).
    pub fn is_test_class(&self, name: &str) -> bool {
        self.class_prefixes
            .iter()
            .any(|p| name.starts_with(p.as_str()))
            || self.class_globs.iter().any(|g| g.is_match(name))
    }
}

/// pytest's name patterns: a prefix each, or a glob when it holds `*`, `?` or `[`.
fn name_patterns(patterns: &[String]) -> (Vec<String>, Vec<globset::GlobMatcher>) {
    let (mut prefixes, mut globs) = (Vec::new(), Vec::new());
    for p in patterns {
        if p.contains(['*', '?', '[']) {
            if let Ok(g) = globset::Glob::new(p) {
                globs.push(g.compile_matcher());
            }
        } else {
            prefixes.push(p.clone());
        }
    }
    (prefixes, globs)
}

/// The test functions of `text`, read as the language of `path`; `None` for a file in no
/// language read here.
pub fn parse(path: &str, text: &[u8]) -> Option<TestFile> {
    parse_with(path, text, &PythonTests::default())
}

/// `parse`, with which Python functions are tests.
pub fn parse_with(path: &str, text: &[u8], python: &PythonTests) -> Option<TestFile> {
    let language = Language::of(path)?;
    // Without a function there is no test and no helper: nothing to parse.
    let keyword: &[u8] = match language {
        Language::Python => b"def",
        Language::Rust => b"fn",
    };
    if memchr::memmem::find(text, keyword).is_none() {
        return Some(TestFile::default());
    }
    // One parser per language and thread, reused: a range reads thousands of small files.
    thread_local! {
        static PARSERS: std::cell::RefCell<HashMap<u8, tree_sitter::Parser>> =
            std::cell::RefCell::new(HashMap::new());
    }
    let tree = PARSERS.with(|parsers| {
        let mut parsers = parsers.borrow_mut();
        let parser = parsers.entry(language as u8).or_insert_with(|| {
            let grammar: tree_sitter::Language = match language {
                Language::Python => tree_sitter_python::LANGUAGE.into(),
                Language::Rust => tree_sitter_rust::LANGUAGE.into(),
            };
            let mut parser = tree_sitter::Parser::new();
            parser
                .set_language(&grammar)
                .expect("the grammar crates are built for this tree-sitter (tested)");
            parser
        });
        // Parsing fails only when cancelled or without a language.
        match language {
            Language::Python => python::parse(parser, text),
            Language::Rust => parser.parse(text, None),
        }
    })?;
    let source = Source {
        text,
        skip_aliases: Vec::new(),
        bindings: Default::default(),
    };
    Some(match language {
        Language::Python => {
            let mut file = python::read(&source, tree.root_node(), python);
            if let Some(site) = python.module_not_collected(path) {
                for f in &mut file.functions {
                    f.skips.push(site.clone());
                }
            }
            file
        }
        Language::Rust => rust::read(&source, tree.root_node()),
    })
}

/// Where the tests of the Rust source `text` are (`rust::test_items`); `None` when it does
/// not parse cleanly (a splice could cut through code).
pub fn rust_test_items(text: &[u8]) -> Option<TestItems> {
    let mut parser = tree_sitter::Parser::new();
    let grammar: tree_sitter::Language = tree_sitter_rust::LANGUAGE.into();
    parser.set_language(&grammar).ok()?;
    let tree = parser.parse(text, None)?;
    if tree.root_node().has_error() {
        return None;
    }
    let source = Source {
        text,
        skip_aliases: Vec::new(),
        bindings: Default::default(),
    };
    Some(rust::test_items(&source, tree.root_node()))
}

/// Assertion `a` as it stands inside `statement`, whose body may not run or whose failures
/// may be caught (`if False:`, `for _ in []:`, `if false { .. }`): weak, and named with the
/// statement's first line, so that the same assertion moved into or out of it is another.
/// Only the statement's first line is read: a block of thousands of assertions is not
/// copied once for each of them.
fn conditional(src: &Source, mut a: Assertion, statement: Node) -> Assertion {
    a.strength = Strength::Weak;
    let under = only_under(src, statement);
    a.text.push_str(&under);
    // What it pins and reads holds only where the statement lets it run.
    for expr in a.pins.iter_mut().chain(a.reads.iter_mut()) {
        expr.push_str(&under);
    }
    a
}

/// What an assertion, a pin or a read inside `statement` is named with: ` [only under: if x:]`.
fn only_under(src: &Source, statement: Node) -> String {
    format!(" [only under: {}]", shorten(&src.first_line(statement)))
}

/// A call of a possible helper at `node`, named `name`, under `under` when it may not run.
fn helper_call(src: &Source, node: Node, name: String, under: Option<Node>) -> Call {
    let mut text = src.shown(node);
    if let Some(statement) = under {
        text.push_str(&only_under(src, statement));
    }
    Call {
        name,
        line: line(node),
        text,
        conditional: under.is_some(),
    }
}

/// The text being read, for node texts.
struct Source<'t> {
    text: &'t [u8],
    /// Python: the names a skipping call of pytest's goes by in this file besides its own
    /// (`later` after `from pytest import skip as later`, `pt.skip` after `import pytest as
    /// pt`).
    skip_aliases: Vec<String>,
    /// Python: how the module binds names (what a `with`'s context manager resolves to).
    bindings: python::Bindings,
}

impl Source<'_> {
    /// The text of `node`, lossily decoded.
    fn text(&self, node: Node) -> String {
        let bytes = self.text.get(node.byte_range()).unwrap_or_default();
        String::from_utf8_lossy(bytes).into_owned()
    }

    /// The text of `node` with every run of whitespace made one space (or none, beside
    /// punctuation), so that formatting does not change it.
    fn normal(&self, node: Node) -> String {
        normal_text(&self.text(node))
    }

    /// Where `node` is, as a site.
    fn site(&self, node: Node) -> Site {
        Site {
            line: line(node),
            text: self.shown(node),
            key: self.tokens(node),
        }
    }

    /// The first line of `node`'s text, whitespace runs made one space. Only that line is
    /// read: a statement of thousands of lines is not copied for each assertion in it.
    fn first_line(&self, node: Node) -> String {
        let text = self.text.get(node.byte_range()).unwrap_or_default();
        let first = &text[..memchr::memchr2(b'\n', b'\r', text).unwrap_or(text.len())];
        let first = String::from_utf8_lossy(first);
        first.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// The text of `node` as shown in a message: whitespace runs made one space, cut to a
    /// readable length.
    fn shown(&self, node: Node) -> String {
        let text = self.text(node);
        shorten(&text.split_whitespace().collect::<Vec<_>>().join(" "))
    }

    /// The leaves of `node` (comments left out), joined by spaces: the same for code that was
    /// only reformatted. A comma before a closing bracket is left out too: formatters add
    /// and remove it (black's "magic trailing comma", rustfmt's vertical lists).
    fn tokens(&self, node: Node) -> String {
        self.tokens_without(node, |_| false)
    }

    /// [`Source::tokens`] of `node` without the parts `left_out` names (and what is in them).
    fn tokens_without(&self, node: Node, left_out: impl Fn(Node) -> bool) -> String {
        let mut leaves: Vec<String> = Vec::new();
        let mut stack = vec![node];
        while let Some(next) = stack.pop() {
            if left_out(next) {
                continue;
            }
            if next.child_count() == 0 {
                if !next.kind().contains("comment") {
                    leaves.push(self.text(next));
                }
                continue;
            }
            let mut cursor = next.walk();
            let children: Vec<Node> = next.children(&mut cursor).collect();
            stack.extend(children.into_iter().rev());
        }
        let mut out = String::new();
        let mut last = "";
        for (i, leaf) in leaves.iter().enumerate() {
            // A comma is left out before a closing bracket, and where a part left out leaves
            // it beside another comma or an opening bracket.
            let closes = leaves
                .get(i + 1)
                .is_some_and(|next| matches!(next.as_str(), ")" | "]" | "}" | ","));
            if leaf == "," && (closes || matches!(last, "(" | "[" | "{")) {
                continue;
            }
            last = leaf;
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(leaf);
        }
        out
    }
}

/// The text an assertion is compared by across versions and places: `text` with whitespace
/// collapsed as formatting would change it.
pub fn normal_key(text: &str) -> String {
    normal_text(text)
}

/// Each test's name and its skips' lines and texts, for tests of the readers.
#[cfg(test)]
fn skip_sites(file: &TestFile) -> Vec<(&str, Vec<(u64, &str)>)> {
    file.functions
        .iter()
        .map(|f| {
            let sites = f.skips.iter().map(|s| (s.line, s.text.as_str())).collect();
            (f.name.as_str(), sites)
        })
        .collect()
}

/// 1-based line of `node`.
fn line(node: Node) -> u64 {
    node.start_position().row as u64 + 1
}

/// `node` and every node under it, in source order, without recursion.
pub(crate) fn descendants(node: Node) -> impl Iterator<Item = Node> {
    let mut stack = vec![node];
    std::iter::from_fn(move || {
        let next = stack.pop()?;
        let mut cursor = next.walk();
        let children: Vec<Node> = next.children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
        Some(next)
    })
}

/// `text` with whitespace runs collapsed: removed next to punctuation, one space between
/// words.
fn normal_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pending_space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            pending_space = true;
            continue;
        }
        if pending_space {
            let word = |c: char| c.is_alphanumeric() || c == '_' || c == '"' || c == '\'';
            if out.chars().last().is_some_and(word) && word(c) {
                out.push(' ');
            }
            pending_space = false;
        }
        out.push(c);
    }
    out
}

/// `text` cut to a length that fits in a one-line message.
fn shorten(text: &str) -> String {
    const MAX: usize = 80;
    match text.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text.to_string(),
    }
}

/// A numeric literal as Python or Rust writes it (`1_000`, `1e-9`, `0x10`, `2.5f64`,
/// `10u32`); `None` for anything else (a complex number, a name).
fn number(text: &str) -> Option<f64> {
    let mut t: String = text.chars().filter(|&c| c != '_').collect();
    let negative = t.starts_with('-');
    if negative {
        t.remove(0);
    }
    let lower = t.to_ascii_lowercase();
    let value = if let Some(hex) = lower.strip_prefix("0x") {
        let digits = hex.trim_end_matches(|c: char| !c.is_ascii_hexdigit());
        u64::from_str_radix(digits, 16).ok()? as f64
    } else if let Some(oct) = lower.strip_prefix("0o") {
        u64::from_str_radix(oct.trim_end_matches(|c: char| !c.is_digit(8)), 8).ok()? as f64
    } else if let Some(bin) = lower.strip_prefix("0b") {
        u64::from_str_radix(bin.trim_end_matches(|c: char| !c.is_digit(2)), 2).ok()? as f64
    } else {
        // Rust's type suffixes (`u32`, `f64`, `usize`) follow the digits.
        let end = ["f32", "f64", "u8", "u16", "u32", "u64", "u128", "usize"]
            .iter()
            .chain(&["i8", "i16", "i32", "i64", "i128", "isize"])
            .find_map(|s| lower.strip_suffix(s))
            .unwrap_or(&lower);
        if end.ends_with('j') {
            return None;
        }
        end.parse::<f64>().ok()?
    };
    value
        .is_finite()
        .then_some(if negative { -value } else { value })
}

#[cfg(test)]
mod tests {
    #[test]
    fn python_tests_are_named_as_pytest_names_them() {
        let default = super::PythonTests::default();
        assert!(
            default.is_test("test_x") && default.is_test("testing") && !default.is_test("check_x")
        );
        let custom = super::PythonTests::new(&["check_".to_string(), "*_spec".to_string()]);
        assert!(custom.is_test("check_total") && custom.is_test("total_spec"));
        assert!(!custom.is_test("test_x") && !custom.is_test("spec_total"));
    }

    use super::*;

    #[test]
    fn numbers_as_written() {
        for (text, value) in [
            ("1_000", 1000.0),
            ("1e-9", 1e-9),
            ("-2.5", -2.5),
            ("0x10", 16.0),
            ("10u32", 10.0),
            ("0.5_f64", 0.5),
            ("1.", 1.0),
            (".5", 0.5),
        ] {
            assert_eq!(number(text), Some(value), "{text}");
        }
        for text in ["1j", "x", "", "1e999"] {
            assert_eq!(number(text), None, "{text}");
        }
    }

    #[test]
    fn whitespace_is_collapsed_as_formatting_would_change_it() {
        assert_eq!(normal_text("assert  x ==\n    y"), "assert x==y");
        assert_eq!(
            normal_text("f( a ,\n b )"),
            normal_text("f(a, b)"),
            "a reformat reads the same"
        );
        assert_eq!(normal_text("not  x"), "not x");
    }

    #[test]
    fn languages_by_extension() {
        assert_eq!(Language::of("tests/test_a.py"), Some(Language::Python));
        assert_eq!(Language::of("src/lib.rs"), Some(Language::Rust));
        assert_eq!(Language::of("tests/data.json"), None);
    }
}
