//! Rules about which module may use what, checked on every source file read whole as Rust
//! (`syn`, with its `#[cfg(test)]` items cut out): each top-level module uses only the layers
//! below it (ARCHITECTURE.md), so there are no module cycles; no two files use each other,
//! directly or around a loop; and only `src/git/` may use the `git2` crate (the rest of the crate reads git through
//! `crate::git`'s functions, names objects by guard's own `git::ObjectId`, and holds only the
//! `Repository` handle it re-exports).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The lines of `text` that use the `git2` crate: a `git2::` path (not `libgit2::`, which
/// names no crate) or a `use`/`extern crate` of it.
fn git2_uses(text: &str) -> Vec<(usize, &str)> {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.lines()
        .enumerate()
        .filter(|(_, line)| {
            let path = line
                .match_indices("git2::")
                .any(|(at, _)| !line[..at].ends_with(is_ident));
            let trimmed = line.trim_start();
            let import = [
                "use git2",
                "pub use git2",
                "extern crate git2",
                "use ::git2",
            ]
            .iter()
            .any(|p| trimmed.starts_with(p));
            path || import
        })
        .map(|(i, line)| (i + 1, line))
        .collect()
}

#[test]
fn only_the_git_module_uses_git2() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let git = src.join("git");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(
        files.len() > 20,
        "found only {} files under src/",
        files.len()
    );
    let mut offenders = Vec::new();
    for file in files.iter().filter(|f| !f.starts_with(&git)) {
        let text = std::fs::read_to_string(file).unwrap();
        for (line, code) in git2_uses(&text) {
            let rel = file.strip_prefix(&src).unwrap().display();
            offenders.push(format!("src/{rel}:{line}: {}", code.trim()));
        }
    }
    assert!(
        offenders.is_empty(),
        "only src/git/ may use git2; add a function to src/git/ that reads what is needed:\n{}",
        offenders.join("\n")
    );
}

#[test]
fn the_scan_finds_every_form_of_use() {
    for used in [
        "use git2::Oid;",
        "    use git2::{Oid, Repository};",
        "pub use git2::Oid;",
        "extern crate git2;",
        "fn f(c: &git2::Commit) {}",
        "    git2::opts::enable_caching(false);",
        "let x = ::git2::Oid::zero();",
    ] {
        assert_eq!(git2_uses(used).len(), 1, "{used:?}");
    }
    for not_used in [
        "// libgit2's object cache",
        "let libgit2::x = 1;",
        "use crate::git::{Oid, Repository};",
        "my_git2::f();",
    ] {
        assert!(git2_uses(not_used).is_empty(), "{not_used:?}");
    }
}

#[test]
fn the_git_module_hands_out_no_libgit2_type() {
    // `git::Repository` is guard's own handle and `git::ObjectId` guard's own id: src/git/
    // re-exports nothing of libgit2's, so that no signature outside it holds a libgit2 type.
    let git = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/git");
    let mut files = Vec::new();
    rust_files(&git, &mut files);
    let reexports = |text: &str| -> Vec<String> {
        text.lines()
            .map(|l| l.split("//").next().unwrap_or("").trim().to_string())
            .filter(|code| {
                let code = code.replace("::{", " {");
                (code.starts_with("pub use") || code.starts_with("pub(crate) use"))
                    && code.contains("git2")
            })
            .collect()
    };
    let mut offenders = Vec::new();
    for file in &files {
        for code in reexports(&std::fs::read_to_string(file).unwrap()) {
            offenders.push(format!("{}: {code}", file.display()));
        }
    }
    assert!(offenders.is_empty(), "{}", offenders.join("\n"));
    // The scan sees what it looks for.
    assert_eq!(reexports("pub use git2::Repository;").len(), 1);
    assert_eq!(reexports("pub use git2::{Oid, Repository};").len(), 1);
    assert_eq!(reexports("pub(crate) use ::git2::Tree;").len(), 1);
    assert!(reexports("use git2::Repository;\n// pub use git2::Repository;").is_empty());
}

/// The lines of `text` that name `Oid` (libgit2's object id, which `crate::git` used to
/// re-export): the identifier, outside `//` comments.
fn oid_uses(text: &str) -> Vec<(usize, &str)> {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.lines()
        .enumerate()
        .filter(|(_, line)| {
            let code = line.split("//").next().unwrap_or("");
            code.match_indices("Oid").any(|(at, _)| {
                !code[..at].ends_with(is_ident) && !code[at + 3..].starts_with(is_ident)
            })
        })
        .map(|(i, line)| (i + 1, line))
        .collect()
}

#[test]
fn only_the_git_module_names_libgit2s_object_id() {
    // Above `src/git/` objects are named by `git::ObjectId` (SHA-1 and SHA-256 alike); git/
    // converts at its functions. Test code too: it would bring libgit2's ids back in.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let git = src.join("git");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut offenders = Vec::new();
    for file in files.iter().filter(|f| !f.starts_with(&git)) {
        let text = std::fs::read_to_string(file).unwrap();
        for (line, code) in oid_uses(&text) {
            let rel = file.strip_prefix(&src).unwrap().display();
            offenders.push(format!("src/{rel}:{line}: {}", code.trim()));
        }
    }
    assert!(
        offenders.is_empty(),
        "only src/git/ may name libgit2's Oid; name objects by git::ObjectId:\n{}",
        offenders.join("\n")
    );
    // The scan sees what it looks for.
    for used in [
        "use crate::git::{self, Oid, Repository};",
        "fn f(id: git::Oid) {}",
        "    let ids: Vec<Oid> = Vec::new(); // guard's",
        "let x = crate::git::Oid::zero();",
    ] {
        assert_eq!(oid_uses(used).len(), 1, "{used:?}");
    }
    for not_used in [
        "use crate::git::{self, ObjectId, Repository};",
        "// libgit2's Oid stays in src/git/",
        "let oids = OidHash::default();",
        "struct MyOid;",
    ] {
        assert!(oid_uses(not_used).is_empty(), "{not_used:?}");
    }
}

/// The modules each top-level module of `src/` may use (`crate::name`). Lower layers never
/// use higher ones, so there are no cycles (ARCHITECTURE.md draws the same picture).
const ALLOWED: &[(&str, &[&str])] = &[
    ("error", &["exit"]),
    ("exit", &[]),
    ("wording", &[]),
    ("testid", &[]),
    ("workspace", &[]),
    ("fsutil", &[]),
    ("changes", &[]),
    ("codes", &[]),
    ("parallel", &[]),
    ("evidence", &["error", "workspace", "testid", "parallel"]),
    ("source", &["error", "evidence", "workspace"]),
    ("runner", &["source", "workspace"]),
    ("project", &["error", "runner", "source", "workspace"]),
    (
        "policy",
        &[
            "codes",
            "error",
            "testid",
            "workspace",
            "wording",
            "evidence",
            "changes",
            "source",
        ],
    ),
    ("report", &["codes", "error", "exit", "changes", "policy"]),
    (
        "git",
        &[
            "error",
            "changes",
            "evidence",
            "parallel",
            "policy",
            "source",
            "workspace",
        ],
    ),
    (
        "rules",
        &[
            "changes", "evidence", "policy", "report", "runner", "testid", "wording", "error",
        ],
    ),
    ("render", &["error", "policy", "report", "wording"]),
    (
        "engine",
        &[
            "changes",
            "error",
            "evidence",
            "git",
            "parallel",
            "policy",
            "project",
            "report",
            "rules",
            "runner",
            "source",
            "testid",
            "workspace",
            "wording",
        ],
    ),
    (
        "hooks",
        &[
            "engine", "error", "exit", "git", "policy", "render", "report", "rules", "wording",
        ],
    ),
    (
        "cli",
        &[
            "engine",
            "error",
            "evidence",
            "exit",
            "fsutil",
            "git",
            "hooks",
            "policy",
            "project",
            "render",
            "report",
            "rules",
            "runner",
            "source",
            "testid",
            "workspace",
            "wording",
        ],
    ),
];

/// `crate::x` paths used by each top-level module, outside its `#[cfg(test)]` code: every
/// file read whole as Rust (`syn`), the items under `#[cfg(test)]` cut out, and every path
/// that starts at `crate` counted, in `use` trees, in code and in macro calls' tokens.
fn module_uses() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for path in files {
        let rel = path
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if rel == "lib.rs" || rel == "main.rs" {
            continue;
        }
        let top = rel
            .split('/')
            .next()
            .unwrap()
            .trim_end_matches(".rs")
            .to_string();
        let set = uses.entry(top.clone()).or_default();
        for name in crate_paths(&std::fs::read_to_string(&path).unwrap(), &rel) {
            if name != top {
                set.insert(name);
            }
        }
    }
    uses
}

/// The first segment after `crate::` of every path in `text` (the file `rel`) outside items
/// under `#[cfg(test)]` (`item_paths`, `super::` and `self::` resolved).
fn crate_paths(text: &str, rel: &str) -> BTreeSet<String> {
    item_paths(text, &module_of(rel), rel.ends_with("mod.rs"))
        .into_iter()
        .map(|path| path[0].clone())
        .collect()
}

#[test]
fn the_scan_reads_past_tests_and_into_macros_and_leaves_test_code_out() {
    let text = "use crate::a::X;\n#[cfg(test)]\nmod tests { use crate::b::Y; }\nfn f() { crate::c::g(); }\nuse crate::{d, e::Z};\nfn h() { println!(\"{}\", crate::f::N); }\n#[cfg(test)]\nfn t() { crate::g::h(); }\nimpl S {\n    #[cfg(test)]\n    fn t() { crate::h::i(); }\n    fn u() { crate::i::j(); }\n}\n";
    let found: Vec<String> = crate_paths(text, "x.rs").into_iter().collect();
    assert_eq!(found, ["a", "c", "d", "e", "f", "i"]);
}

#[test]
fn modules_use_only_lower_layers() {
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    let mut wrong = Vec::new();
    for (module, used) in module_uses() {
        let Some(may) = allowed.get(module.as_str()) else {
            wrong.push(format!(
                "{module}: a new top-level module; add it to ALLOWED (and ARCHITECTURE.md)"
            ));
            continue;
        };
        for name in used {
            if !may.contains(&name.as_str()) {
                wrong.push(format!("{module} uses crate::{name}"));
            }
        }
    }
    assert!(wrong.is_empty(), "layering broken:\n{}", wrong.join("\n"));
}

/// The module path of the file `rel` under `src/` (`engine/audit.rs` is `engine::audit`,
/// `git/pack/mod.rs` is `git::pack`).
fn module_of(rel: &str) -> String {
    let rel = rel.trim_end_matches(".rs");
    let rel = rel.strip_suffix("/mod").unwrap_or(rel);
    rel.replace('/', "::")
}

/// Every path of `text` (the file whose module is `module`) that names an item of the crate,
/// absolute (`crate::a::b`, and `super::`/`self::` and paths that start at a module the file
/// declares resolved), outside `#[cfg(test)]` items.
fn item_paths(text: &str, module: &str, is_mod_rs: bool) -> BTreeSet<Vec<String>> {
    use syn::visit::Visit;

    struct Paths {
        base: Vec<String>,
        parent: Vec<String>,
        /// The modules the file declares (`mod x;`): a path may start at one of them.
        children: BTreeSet<String>,
        out: BTreeSet<Vec<String>>,
    }

    impl Paths {
        fn add(&mut self, segments: Vec<String>) {
            let resolved = match segments.first().map(String::as_str) {
                Some("crate") => segments[1..].to_vec(),
                Some("super") => [self.parent.clone(), segments[1..].to_vec()].concat(),
                Some("self") => [self.base.clone(), segments[1..].to_vec()].concat(),
                Some(first) if self.children.contains(first) => {
                    [self.base.clone(), segments].concat()
                }
                _ => return,
            };
            if !resolved.is_empty() {
                self.out.insert(resolved);
            }
        }
    }

    /// `crate :: name` in a macro call's tokens, at any depth.
    fn macro_paths(tokens: proc_macro2::TokenStream, out: &mut BTreeSet<String>) {
        use proc_macro2::TokenTree;
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        for (i, token) in tokens.iter().enumerate() {
            match token {
                TokenTree::Group(g) => macro_paths(g.stream(), out),
                TokenTree::Ident(id) if id == "crate" => {
                    if let (
                        Some(TokenTree::Punct(a)),
                        Some(TokenTree::Punct(b)),
                        Some(TokenTree::Ident(name)),
                    ) = (tokens.get(i + 1), tokens.get(i + 2), tokens.get(i + 3))
                        && a.as_char() == ':'
                        && b.as_char() == ':'
                    {
                        out.insert(name.to_string());
                    }
                }
                _ => {}
            }
        }
    }

    fn use_paths(tree: &syn::UseTree, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
        match tree {
            syn::UseTree::Path(p) => {
                let mut next = prefix;
                next.push(p.ident.to_string());
                use_paths(&p.tree, next, out);
            }
            syn::UseTree::Name(n) => {
                let mut path = prefix;
                if n.ident != "self" {
                    path.push(n.ident.to_string());
                }
                out.push(path);
            }
            syn::UseTree::Rename(r) => {
                let mut path = prefix;
                path.push(r.ident.to_string());
                out.push(path);
            }
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    use_paths(t, prefix.clone(), out);
                }
            }
            syn::UseTree::Glob(_) => out.push(prefix),
        }
    }

    impl<'ast> Visit<'ast> for Paths {
        fn visit_item(&mut self, item: &'ast syn::Item) {
            let attrs: &[syn::Attribute] = match item {
                syn::Item::Mod(m) => &m.attrs,
                syn::Item::Fn(f) => &f.attrs,
                syn::Item::Use(u) => &u.attrs,
                syn::Item::Impl(i) => &i.attrs,
                syn::Item::Struct(s) => &s.attrs,
                syn::Item::Enum(e) => &e.attrs,
                syn::Item::Const(c) => &c.attrs,
                syn::Item::Static(s) => &s.attrs,
                syn::Item::Trait(t) => &t.attrs,
                syn::Item::Type(t) => &t.attrs,
                syn::Item::Macro(m) => &m.attrs,
                _ => &[],
            };
            if !test_only(attrs) {
                syn::visit::visit_item(self, item);
            }
        }
        fn visit_macro(&mut self, mac: &'ast syn::Macro) {
            let mut found = BTreeSet::new();
            macro_paths(mac.tokens.clone(), &mut found);
            for name in found {
                self.add(vec!["crate".to_string(), name]);
            }
            syn::visit::visit_macro(self, mac);
        }
        fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
            if !test_only(&f.attrs) {
                syn::visit::visit_impl_item_fn(self, f);
            }
        }
        fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
            if test_only(&u.attrs) {
                return;
            }
            let mut all = Vec::new();
            use_paths(&u.tree, Vec::new(), &mut all);
            for p in all {
                self.add(p);
            }
        }
        // `pub(super)` names who may see an item, not a use of the parent.
        fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}
        fn visit_path(&mut self, path: &'ast syn::Path) {
            let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
            self.add(segments);
            syn::visit::visit_path(self, path);
        }
    }

    let base: Vec<String> = module.split("::").map(str::to_string).collect();
    // `super` of `engine/audit.rs` is `engine`; of `engine/mod.rs`, the crate root.
    let parent = if is_mod_rs {
        base[..base.len().saturating_sub(1)].to_vec()
    } else {
        base[..base.len() - 1].to_vec()
    };
    let file = syn::parse_file(text).unwrap_or_else(|e| panic!("{module}: {e}"));
    let children = file
        .items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Mod(m) if !test_only(&m.attrs) => Some(m.ident.to_string()),
            _ => None,
        })
        .collect();
    let mut paths = Paths {
        base,
        parent,
        children,
        out: BTreeSet::new(),
    };
    paths.visit_file(&file);
    paths.out
}

/// Which file of the crate uses which other: an edge from each file to the file of the
/// longest module prefix of each path it names (a `mod.rs` is its module's file), except to
/// the files below its own module.
fn file_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeMap<String, String> = files
        .iter()
        .map(|p| {
            let rel = p.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
            (module_of(&rel), rel)
        })
        .collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for path in &files {
        let rel = path
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if rel == "lib.rs" || rel == "main.rs" {
            continue;
        }
        let module = module_of(&rel);
        let text = std::fs::read_to_string(path).unwrap();
        let edges = graph.entry(module.clone()).or_default();
        for used in item_paths(&text, &module, rel.ends_with("mod.rs")) {
            let target = (1..=used.len())
                .rev()
                .map(|n| used[..n].join("::"))
                .find(|m| modules.contains_key(m));
            // A module's file may use the files below it: it declares them and is their
            // facade (`mod x;` and `x::f()`), as they use the types it shares. A cycle is
            // formed by any other edge: between siblings, or across modules.
            let below = |target: &str| target.starts_with(&format!("{module}::"));
            if let Some(target) = target.filter(|t| *t != module && !below(t)) {
                edges.insert(target);
            }
        }
    }
    graph
}

/// The strongly connected groups of more than one file in `graph` (Tarjan's algorithm).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g str) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on_stack.insert(v);
        let graph = s.graph;
        for w in graph.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[w].min(s.low[v]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.index[w].min(s.low[v]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut group = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                group.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if group.len() > 1 {
                group.sort();
                s.out.push(group);
            }
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out.sort();
    s.out
}

#[test]
fn the_allowed_layers_form_no_cycle() {
    // `ALLOWED` is the layer table: a module allowed to use one that may use it back would
    // let a module cycle pass `modules_use_only_lower_layers`.
    let graph: BTreeMap<String, BTreeSet<String>> = ALLOWED
        .iter()
        .map(|(m, uses)| (m.to_string(), uses.iter().map(|u| u.to_string()).collect()))
        .collect();
    assert!(cycles(&graph).is_empty(), "{:?}", cycles(&graph));
}

#[test]
fn no_files_use_each_other() {
    // Inside a module, two files that use each other (a cycle) are one concern in two files
    // or two concerns tangled: the shared part moves to a file both use.
    let found = cycles(&file_graph());
    assert!(
        found.is_empty(),
        "files that use each other (a cycle): {found:?}"
    );
}

#[test]
fn the_file_graph_resolves_crate_super_and_self_paths_and_finds_a_cycle() {
    let paths = item_paths(
        "use super::b::X;\nuse crate::c::{d, e::F};\nfn f() { self::g::h(); }\nmod k;\npub(super) fn g() { k::z(); }\n#[cfg(test)]\nmod tests { use crate::z::Y; }\n",
        "a::m",
        false,
    );
    let paths: Vec<String> = paths.iter().map(|p| p.join("::")).collect();
    // A path from a module the file declares (`k::z`) is resolved; `pub(super)` is no use.
    assert_eq!(
        paths,
        ["a::b::X", "a::m::g::h", "a::m::k::z", "c::d", "c::e::F"]
    );
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec!["a"]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.into_iter().map(str::to_string).collect()))
    .collect();
    assert_eq!(cycles(&graph), [["a", "b", "c"]]);
}

/// The file at `path` as tokens (`syn`'s printing, tokens separated by spaces), without its
/// `#[cfg(test)]` items, at any depth of modules.
fn production_tokens(path: &Path) -> String {
    use syn::visit_mut::VisitMut;
    struct CutTests;
    impl VisitMut for CutTests {
        fn visit_file_mut(&mut self, file: &mut syn::File) {
            file.items.retain(|i| !is_test_item(i));
            syn::visit_mut::visit_file_mut(self, file);
        }
        fn visit_item_mod_mut(&mut self, m: &mut syn::ItemMod) {
            if let Some((_, items)) = &mut m.content {
                items.retain(|i| !is_test_item(i));
            }
            syn::visit_mut::visit_item_mod_mut(self, m);
        }
    }
    fn is_test_item(item: &syn::Item) -> bool {
        let attrs: &[syn::Attribute] = match item {
            syn::Item::Mod(m) => &m.attrs,
            syn::Item::Fn(f) => &f.attrs,
            syn::Item::Use(u) => &u.attrs,
            syn::Item::Impl(i) => &i.attrs,
            _ => &[],
        };
        test_only(attrs)
    }
    let text = std::fs::read_to_string(path).unwrap();
    let mut file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    CutTests.visit_file_mut(&mut file);
    use quote::ToTokens as _;
    format!(" {} ", file.to_token_stream())
}

/// Whether `attrs` hold `#[cfg(test)]`: the item is test code, which both scans leave out.
fn test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

#[test]
fn only_the_edges_print_and_rules_read_nothing() {
    // ARCHITECTURE.md: the edges (`cli/`, `hooks/`, `main.rs`) print; no other layer does;
    // the rules take facts and read no file, environment or clock.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut wrong = Vec::new();
    for path in &files {
        let rel = path
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        // `tests.rs` files are the `#[cfg(test)] mod tests;` of their module: tests whole.
        if rel.ends_with("/tests.rs") {
            continue;
        }
        let tokens = production_tokens(path);
        let edge = rel.starts_with("cli/") || rel.starts_with("hooks/") || rel == "main.rs";
        let printing = [
            " println !",
            " eprintln !",
            " print !",
            " eprint !",
            " stdout ()",
            " stderr ()",
        ];
        for p in printing.iter().filter(|p| !edge && tokens.contains(**p)) {
            wrong.push(format!("{rel} prints ({})", p.trim()));
        }
        let reading = [" fs ::", " env ::", " now ()", " File ::", " SystemTime "];
        if rel.starts_with("rules/") {
            for p in reading.iter().filter(|p| tokens.contains(**p)) {
                wrong.push(format!("{rel} reads ({})", p.trim()));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // The scan sees what it looks for.
    let probe = std::env::temp_dir().join(format!("guard-layering-{}.rs", std::process::id()));
    std::fs::write(
        &probe,
        "fn f() { eprintln!(\"x\"); let _ = std::fs::read(\"p\"); }\n#[cfg(test)]\nmod tests { fn g() { println!(); } }\n",
    )
    .unwrap();
    let tokens = production_tokens(&probe);
    std::fs::remove_file(&probe).unwrap();
    assert!(
        tokens.contains(" eprintln !") && tokens.contains(" fs ::"),
        "{tokens}"
    );
    assert!(!tokens.contains(" println !"), "{tokens}");
}
