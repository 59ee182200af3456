//! Changes to protected paths between a commit's tree and a parent's, found by comparing
//! the tree entries along each protected path (never a full diff of the commit): identical
//! subtrees are skipped by id, so the cost follows what changed under protected paths, not
//! the size of the repository.
//!
//! Every way of changing a path counts: additions, deletions, content, mode (a file turned
//! into a symlink or a submodule), a directory replaced by a file, and entries whose names
//! are variants of a protected path on some file system (case, Unicode normalisation,
//! HFS+-ignored code points, NTFS trailing dots, streams and backslashes: see
//! `path_variants`), which a checkout there writes over it.
//!
//! It also finds the malformed trees (git's fsck rules, see `fsck`) a commit brings on the
//! way to protected paths: a reader other than git's checkout may see other files in them.
//!
//! The test harness's shared files (`pyproject.toml`, `setup.cfg`) are the exception: a change
//! to one counts only when its harness sections differ (`crate::policy::harness`), compared with the
//! same parent the tree entries were compared with.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use git2::{ObjectType, Oid};
use globset::GlobSet;

use crate::changes::{Change, ChangeKind, Class};
use crate::git::ObjectId;
use crate::git::id::to_git2;
use crate::git::path_in;
use crate::git::path_variants::{self, Component, Match, match_name};
use crate::git::raw_tree::{RawEntry, RawTree, git_order};
use crate::git::trees::{Trees, for_differing};
use crate::policy::caseless::CaselessGlobSet;
use crate::policy::harness::{Scope, Verdict};
use crate::policy::ledger::{Policy, protect_glob_cased};
use crate::workspace::normalize_rel;

mod malformed;

/// A protected path, or a glob with the literal directory it starts from.
#[derive(Debug, Clone)]
struct Rule {
    /// Repository-relative path components to walk (the literal prefix for globs).
    components: Vec<Component>,
    class: Class,
    /// For `[protect]` globs: only changed paths under `components` that match.
    glob: Option<CaselessGlobSet>,
    /// The glob's text, to tell rules apart.
    pattern: Option<String>,
    /// Harness files of which only some sections count: a changed path under `components`
    /// that `glob` does not match counts when one of these matches it and its sections differ.
    sections: Option<SectionRules>,
}

/// The `[harness.sections]` files of one rule, their globs compiled into sets: a regex per
/// glob was a tenth of a one-commit push's hook run.
#[derive(Debug, Clone)]
struct SectionRules {
    any_case: CaselessGlobSet,
    /// A name that matches only ignoring case (`PyProject.toml` beside `pyproject.toml`
    /// replaces it on a case-insensitive checkout) counts whole.
    exact: GlobSet,
    /// Each file's sections, in the sets' order.
    scopes: Vec<Scope>,
}

impl SectionRules {
    /// The first file whose glob matches `path` ignoring case, or its folded spelling.
    fn find(&self, path: &str, folded: Option<&String>) -> Option<usize> {
        let first = |p: &str| self.any_case.matches(p).first().copied();
        let by_folded = folded.and_then(|f| first(f));
        match (first(path), by_folded) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// The protected paths of a policy.
#[derive(Debug, Clone)]
pub struct ProtectedSet {
    rules: Vec<Rule>,
    /// The distinct first components of the rules' paths (most share `qa` or `tests`).
    tops: Vec<Component>,
}

impl Rule {
    /// The walked path, `/`-joined.
    fn path(&self) -> String {
        let names: Vec<&str> = self.components.iter().map(Component::name).collect();
        names.join("/")
    }

    /// Whether a changed path found under this rule's components belongs to it: for a glob,
    /// the path or its folded spelling (a variant's) must match.
    fn covers(&self, path: &str) -> bool {
        let Some(glob) = &self.glob else {
            return true;
        };
        glob.is_match(path)
            || (!path
                .split('/')
                .all(|c| path_variants::is_plain(c.as_bytes()))
                && glob.is_match(&path_variants::folded_path(path)))
    }
}

impl ProtectedSet {
    /// The protected paths of `policy`, whose ledger lives at `ledger_path`.
    pub fn new(policy: &Policy, ledger_path: &str) -> ProtectedSet {
        let mut rules = Vec::new();
        add_path(&mut rules, ledger_path, Class::Ledger);
        if let Some(signers) = &policy.humans.allowed_signers {
            add_path(&mut rules, signers, Class::Ledger);
        }
        add_path(&mut rules, &policy.freeze.file, Class::Freeze);
        add_path(&mut rules, &policy.fixtures.lockfile, Class::Fixtures);
        for p in &policy.fixtures.paths {
            add_path(&mut rules, p, Class::Fixtures);
        }
        if let Some(seeds) = &policy.properties.seeds {
            add_path(&mut rules, seeds, Class::Properties);
        }
        for p in &policy.properties.paths {
            add_path(&mut rules, p, Class::Properties);
        }
        // Attributes change the bytes a checkout writes (`working-tree-encoding`, `eol`,
        // `ident`, LFS filters): the root's `.gitattributes` and `.lfsconfig` are as protected
        // as the files they apply to, and so are those on the way to each protected path (below).
        add_path(&mut rules, ".gitattributes", Class::Fixtures);
        add_path(&mut rules, ".lfsconfig", Class::Fixtures);
        for pattern in &policy.protect.paths {
            rules.push(Rule {
                components: literal_prefix(pattern),
                class: Class::Ledger,
                glob: CaselessGlobSet::new(&[pattern], protect_glob_cased).ok(),
                pattern: Some(pattern.clone()),
                sections: None,
            });
        }
        rules.extend(harness_rules(policy));

        // The `.gitattributes` in each directory above a protected path, and in a glob's
        // literal directory, in the class of the first path it leads to.
        let mut attributes: Vec<(String, Class)> = Vec::new();
        for rule in &rules {
            let dirs = match rule.glob {
                None => rule.components.len().saturating_sub(1),
                Some(_) => rule.components.len(),
            };
            for n in 1..=dirs {
                let names: Vec<&str> = rule.components[..n].iter().map(Component::name).collect();
                let path = format!("{}/.gitattributes", names.join("/"));
                attributes.push((path, rule.class));
            }
        }
        for (path, class) in attributes {
            add_path(&mut rules, &path, class);
        }

        let tops = tops_of(&rules);
        ProtectedSet { rules, tops }
    }

    /// Whether `path` is protected by `[protect]` globs alone (or is an attribute file on
    /// the way to such a path): what a `[[bots]]` allowance may reach. The ledger, the
    /// allowed signers, the freeze file, the fixture lockfile, fixtures, property tests,
    /// seeds and harness files (whole or by section) never are, whatever else names them.
    pub fn protect_only(&self, path: &str) -> bool {
        let mut by_protect = false;
        for rule in &self.rules {
            let prefix: Vec<&str> = rule.components.iter().map(Component::name).collect();
            let prefix = prefix.join("/");
            let under = prefix.is_empty()
                || path == prefix
                || path
                    .strip_prefix(prefix.as_str())
                    .is_some_and(|rest| rest.starts_with('/'));
            if !under {
                continue;
            }
            let by_sections = rule
                .sections
                .as_ref()
                .is_some_and(|s| s.find(path, None).is_some());
            let hit = match &rule.glob {
                None => rule.sections.is_none() || by_sections,
                Some(glob) => glob.is_match(path) || by_sections,
            };
            if !hit {
                continue;
            }
            if rule.class == Class::Ledger && rule.pattern.is_some() && !by_sections {
                by_protect = true;
            } else {
                return false;
            }
        }
        by_protect
    }

    /// Adds the rules of `other` that this set lacks; true when it grew.
    pub fn extend(&mut self, other: ProtectedSet) -> bool {
        let before = self.rules.len();
        for rule in other.rules {
            let known = self
                .rules
                .iter()
                .any(|r| r.components == rule.components && r.pattern == rule.pattern);
            if !known {
                self.rules.push(rule);
            }
        }
        self.tops = tops_of(&self.rules);
        self.rules.len() > before
    }

    /// Changes to protected paths from the tree `parent` (None: the empty tree of a root
    /// commit) to the tree `tree`. Paths under two rules are reported once, under the first
    /// rule's class.
    pub fn changes(
        &self,
        trees: &Trees,
        tree: ObjectId,
        parent: Option<ObjectId>,
    ) -> Result<Vec<Change>, git2::Error> {
        let mut out: Vec<Change> = Vec::new();
        if parent == Some(tree) {
            return Ok(out);
        }
        let walker = Walker { trees };
        let get = |id| trees.get(to_git2(id)?);
        let (tree, parent) = (get(tree)?, parent.map(get).transpose()?);
        // Most commits change nothing under the few top-level directories that protected
        // paths start in: that is settled once per directory, not once per rule, from the
        // root entries that differ.
        let mut touched: Vec<&Component> = Vec::new();
        for_differing(trees, Some(&tree), parent.as_deref(), |e| {
            for top in &self.tops {
                if !touched.contains(&top)
                    && match_name(e.entry_name(), std::slice::from_ref(top)) != Match::No
                {
                    touched.push(top);
                }
            }
        });
        for rule in &self.rules {
            if rule
                .components
                .first()
                .is_some_and(|top| !touched.contains(&top))
            {
                continue;
            }
            let mut found = Vec::new();
            walker.compare_path(
                Some(&tree),
                parent.as_deref(),
                &rule.components,
                "",
                false,
                &mut found,
            )?;
            for found in found {
                if out.iter().any(|c| c.path == found.path) {
                    continue;
                }
                let mut detail = None;
                if !rule.covers(&found.path) {
                    // A variant's folded spelling (`pyproject.toml.` on NTFS) names the same
                    // file; `section_verdict` counts such a name whole.
                    let folded = (!found
                        .path
                        .split('/')
                        .all(|c| path_variants::is_plain(c.as_bytes())))
                    .then(|| path_variants::folded_path(&found.path));
                    let Some((sections, i)) = rule
                        .sections
                        .as_ref()
                        .and_then(|s| s.find(&found.path, folded.as_ref()).map(|i| (s, i)))
                    else {
                        continue;
                    };
                    match section_verdict(trees, sections, i, &found)? {
                        Verdict::Same => continue,
                        verdict => detail = verdict.describe(),
                    }
                }
                let case_variant_of = found.variant.then(|| rule.path());
                out.push(Change {
                    path: found.path,
                    kind: found.kind,
                    class: rule.class,
                    case_variant_of,
                    detail,
                });
            }
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }
}

/// The distinct first components of `rules`' paths, in order.
fn tops_of(rules: &[Rule]) -> Vec<Component> {
    let mut tops: Vec<Component> = Vec::new();
    for top in rules.iter().filter_map(|r| r.components.first()) {
        if !tops.contains(top) {
            tops.push(top.clone());
        }
    }
    tops
}

/// Adds a rule for the literal path `path`, unless one exists (the first class wins).
fn add_path(rules: &mut Vec<Rule>, path: &str, class: Class) {
    let components: Vec<Component> = normalize_rel(path)
        .split('/')
        .filter(|c| !c.is_empty())
        .map(Component::new)
        .collect();
    if !components.is_empty()
        && !rules
            .iter()
            .any(|r| r.glob.is_none() && r.components == components)
    {
        rules.push(Rule {
            components,
            class,
            glob: None,
            pattern: None,
            sections: None,
        });
    }
}

/// The directories a glob starts in, before its first component with glob characters.
fn literal_prefix(pattern: &str) -> Vec<Component> {
    pattern
        .split('/')
        .take_while(|c| !c.contains(['*', '?', '[', '{', '\\']))
        .filter(|c| !c.is_empty())
        .map(Component::new)
        .collect()
}

/// The harness rules: one per literal directory the globs start in, so that the `**/` globs
/// (a `conftest.py` anywhere) share one walk from the root.
fn harness_rules(policy: &Policy) -> Vec<Rule> {
    struct Group {
        prefix: Vec<Component>,
        whole: Vec<String>,
        sections: Option<(Vec<String>, globset::GlobSetBuilder, Vec<Scope>)>,
        names: Vec<String>,
    }
    let mut groups: Vec<Group> = Vec::new();
    let mut group = |pattern: &str| -> usize {
        let prefix = literal_prefix(pattern);
        match groups.iter().position(|g| g.prefix == prefix) {
            Some(i) => i,
            None => {
                groups.push(Group {
                    prefix,
                    whole: Vec::new(),
                    sections: None,
                    names: Vec::new(),
                });
                groups.len() - 1
            }
        }
    };
    let harness = &policy.harness;
    let mut at = Vec::new();
    for pattern in &harness.paths {
        at.push(group(pattern));
    }
    let mut section_at = Vec::new();
    for entry in &harness.sections {
        section_at.push(group(&entry.file));
    }
    // The ledger validated every glob, so they are not parsed again here just to check; one
    // that failed would fail its group's set, which then covers everything below the group's
    // directory (`Rule::covers`).
    for (pattern, i) in harness.paths.iter().zip(at) {
        groups[i].whole.push(pattern.clone());
        groups[i].names.push(pattern.clone());
    }
    for (entry, i) in harness.sections.iter().zip(section_at) {
        let exact = globset::GlobBuilder::new(&entry.file)
            .literal_separator(true)
            .backslash_escape(true)
            .build();
        if let Ok(exact) = exact {
            let (any_cases, exacts, scopes) = groups[i]
                .sections
                .get_or_insert_with(|| (Vec::new(), globset::GlobSetBuilder::new(), Vec::new()));
            any_cases.push(entry.file.clone());
            exacts.add(exact);
            scopes.push(entry.scope.clone());
            groups[i].names.push(format!(
                "{} [{}]",
                entry.file,
                entry.scope.selectors().join(", ")
            ));
        }
    }
    groups
        .into_iter()
        .map(|g| Rule {
            components: g.prefix,
            class: Class::Harness,
            glob: CaselessGlobSet::new(&g.whole, protect_glob_cased).ok(),
            pattern: Some(format!("harness: {}", g.names.join("; "))),
            sections: g.sections.and_then(|(any_case, exact, scopes)| {
                Some(SectionRules {
                    any_case: CaselessGlobSet::new(&any_case, protect_glob_cased).ok()?,
                    exact: exact.build().ok()?,
                    scopes,
                })
            }),
        })
        .collect()
}

/// Whether a changed file with harness sections counts: regular files with the exact name
/// are compared section by section; anything else counts whole.
fn section_verdict(
    trees: &Trees,
    rules: &SectionRules,
    i: usize,
    found: &Found,
) -> Result<Verdict, git2::Error> {
    if !rules.exact.matches(&found.path).contains(&i) {
        return Ok(Verdict::Whole(
            "its name differs only in case from a harness file's".to_string(),
        ));
    }
    let regular = |e: Option<Entry>| e.is_none_or(|(_, mode)| mode == 0o100644 || mode == 0o100755);
    if !regular(found.new) || !regular(found.old) {
        return Ok(Verdict::Whole(
            "it is a symlink, submodule or directory on one side".to_string(),
        ));
    }
    let blob = |e: Option<Entry>| -> Result<Option<git2::Blob>, git2::Error> {
        e.map(|(id, _)| super::text_blob(trees.repo(), id, &found.path))
            .transpose()
    };
    let (new, old) = (blob(found.new)?, blob(found.old)?);
    Ok(rules.scopes[i].compare(
        old.as_ref().map(|b| b.content()),
        new.as_ref().map(|b| b.content()),
    ))
}

/// An entry: object id, file mode.
type Entry = (Oid, i32);

/// A changed path the walker found, with its entries on both sides.
struct Found {
    path: String,
    kind: ChangeKind,
    /// Found under a name that differs from the rule's only in case.
    variant: bool,
    new: Option<Entry>,
    old: Option<Entry>,
}

struct Walker<'a, 'r> {
    trees: &'a Trees<'r>,
}

const TREE_MODE: i32 = 0o040000;

impl<'r> Walker<'_, 'r> {
    fn tree(&self, entry: Option<Entry>) -> Result<Option<Rc<RawTree>>, git2::Error> {
        match entry {
            Some((id, mode)) if mode == TREE_MODE => Ok(Some(self.trees.get(id)?)),
            _ => Ok(None),
        }
    }

    /// Walks `components` below `prefix` in both trees, following the protected names and
    /// their variants.
    fn compare_path(
        &self,
        new: Option<&RawTree>,
        old: Option<&RawTree>,
        components: &[Component],
        prefix: &str,
        variant: bool,
        out: &mut Vec<Found>,
    ) -> Result<(), git2::Error> {
        if new.map(RawTree::id) == old.map(RawTree::id) {
            return Ok(());
        }
        let Some(first) = components.first() else {
            // The protected path is the root itself (a glob like `**/*.yml`).
            return self.diff_trees(new, old, prefix, variant, out);
        };
        let name = first.name().as_bytes();
        // Each name standing for the protected one, with how many components it stands for
        // (a backslash in a name stands for more than one). Only entries that differ between
        // the two trees can hold a change: any other name is listed alike on both sides
        // (`RawTree::differing`), so its entries compare equal. In a busy directory that is
        // the entry or two a commit changed, not every entry matched against the protected
        // name and its variants on both sides (a third of `guard check`'s time on a merge
        // history with a busy `tests/`).
        let mut names: BTreeMap<&[u8], usize> = BTreeMap::new();
        for_differing(self.trees, new, old, |entry| {
            let taken = match match_name(entry.entry_name(), components) {
                Match::No => return,
                Match::Exact => 1,
                Match::Variant(n) => n,
            };
            names.insert(entry.name_bytes(), taken);
        });
        for (entry_name, taken) in names {
            let new_entry = new.and_then(|t| lookup_written(t, entry_name));
            let old_entry = old.and_then(|t| lookup_written(t, entry_name));
            let variant = variant || entry_name != name;
            self.compare_entry(
                new_entry,
                old_entry,
                entry_name,
                &components[taken..],
                prefix,
                variant,
                out,
            )?;
        }
        Ok(())
    }

    /// Compares the entries named `entry_name` in both trees along the rest of a path.
    #[allow(clippy::too_many_arguments)]
    fn compare_entry(
        &self,
        new_entry: Option<Entry>,
        old_entry: Option<Entry>,
        entry_name: &[u8],
        rest: &[Component],
        prefix: &str,
        variant: bool,
        out: &mut Vec<Found>,
    ) -> Result<(), git2::Error> {
        if new_entry == old_entry {
            // Same id and mode (or absent from both): nothing below changed, and no tree
            // needs reading.
            return Ok(());
        }
        let path = path_in(prefix, entry_name);
        if rest.is_empty() {
            self.diff_entry(new_entry, old_entry, &path, variant, out)
        } else {
            let (new_sub, old_sub) = (self.tree(new_entry)?, self.tree(old_entry)?);
            self.compare_path(
                new_sub.as_deref(),
                old_sub.as_deref(),
                rest,
                &path,
                variant,
                out,
            )
        }
    }

    /// Compares one entry in both trees, descending into directories.
    fn diff_entry(
        &self,
        new: Option<Entry>,
        old: Option<Entry>,
        path: &str,
        variant: bool,
        out: &mut Vec<Found>,
    ) -> Result<(), git2::Error> {
        if new == old {
            return Ok(());
        }
        let is_tree = |e: Option<Entry>| e.is_some_and(|(_, m)| m == TREE_MODE);
        match (new, old) {
            (Some(_), Some(_)) if is_tree(new) && is_tree(old) => {
                let (n, o) = (self.tree(new)?, self.tree(old)?);
                self.diff_trees(n.as_deref(), o.as_deref(), path, variant, out)?;
            }
            (Some((nid, nmode)), Some((oid, omode))) if !is_tree(new) && !is_tree(old) => {
                let kind = match (nid == oid, nmode == omode) {
                    (true, _) => ChangeKind::ModeChanged,
                    (false, true) => ChangeKind::Modified,
                    (false, false) => ChangeKind::TypeChanged,
                };
                out.push(Found {
                    path: path.to_string(),
                    kind,
                    variant,
                    new,
                    old,
                });
            }
            _ => {
                // Added, deleted, or a directory replaced by a non-directory (or back): the
                // non-directory side is one change, every file of the directory side another.
                for (side, kind) in [(old, ChangeKind::Deleted), (new, ChangeKind::Added)] {
                    if is_tree(side) {
                        let t = self.tree(side)?;
                        let (n, o) = if kind == ChangeKind::Added {
                            (t.as_deref(), None)
                        } else {
                            (None, t.as_deref())
                        };
                        self.diff_trees(n, o, path, variant, out)?;
                    } else if side.is_some() {
                        let kind = if new.is_some() && old.is_some() {
                            ChangeKind::TypeChanged
                        } else {
                            kind
                        };
                        out.push(Found {
                            path: path.to_string(),
                            kind,
                            variant,
                            new,
                            old,
                        });
                    }
                }
            }
        }
        Ok(())
    }

    /// Every differing entry of two directories, recursively; identical subtrees skipped.
    /// Root globs (a `conftest.py` anywhere) walk every directory a commit changes, so the
    /// two entry lists are walked together in git's order, and an entry whose id and mode
    /// are the same on both sides costs a comparison, not a path.
    fn diff_trees(
        &self,
        new: Option<&RawTree>,
        old: Option<&RawTree>,
        prefix: &str,
        variant: bool,
        out: &mut Vec<Found>,
    ) -> Result<(), git2::Error> {
        if new.map(RawTree::id) == old.map(RawTree::id) {
            return Ok(());
        }
        let (Some(new_tree), Some(old_tree)) = (new, old) else {
            // One side only: each of its entries is added (or deleted).
            for e in new.or(old).into_iter().flat_map(RawTree::iter) {
                let side = Some(entry(&e));
                let (n, o) = if new.is_some() {
                    (side, None)
                } else {
                    (None, side)
                };
                self.diff_entry(n, o, &path_in(prefix, e.name_bytes()), variant, out)?;
            }
            return Ok(());
        };
        if !new_tree.in_git_order() || !old_tree.in_git_order() {
            // A malformed tree (entries out of order, or a name twice) is rare: compared by name.
            return self.diff_trees_by_name(new_tree, old_tree, prefix, variant, out);
        }
        // Only the entries that can differ (`Trees::differing`: every other entry is the same,
        // byte for byte, at the same index in both trees, and in trees in git's order no name
        // is listed twice) are joined, in git's order. In a busy directory where a commit
        // changed one file that is one entry a side, not every entry compared and made into
        // libgit2 ids (BENCHMARKS.md, "Measured choices", M14).
        let differing = self.trees.differing(Some(new_tree), Some(old_tree));
        let mut news = differing
            .0
            .iter()
            .filter_map(|&i| new_tree.get(i))
            .peekable();
        let mut olds = differing
            .1
            .iter()
            .filter_map(|&i| old_tree.get(i))
            .peekable();
        loop {
            let order = match (news.peek(), olds.peek()) {
                (None, None) => break,
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (Some(n), Some(o)) => git_order(n, o),
            };
            match order {
                Ordering::Equal => {
                    let (n, o) = (news.next().expect("peeked"), olds.next().expect("peeked"));
                    if n.id_bytes() != o.id_bytes() || n.filemode_raw() != o.filemode_raw() {
                        let path = path_in(prefix, n.name_bytes());
                        self.diff_entry(Some(entry(&n)), Some(entry(&o)), &path, variant, out)?;
                    }
                }
                Ordering::Less => {
                    // Only in the new tree, unless the old one has the name as another type
                    // (a file and a directory sort apart): then the pair is compared here.
                    let n = news.next().expect("peeked");
                    let o = lookup(old_tree, n.name_bytes());
                    let path = path_in(prefix, n.name_bytes());
                    self.diff_entry(Some(entry(&n)), o, &path, variant, out)?;
                }
                Ordering::Greater => {
                    let o = olds.next().expect("peeked");
                    if lookup(new_tree, o.name_bytes()).is_none() {
                        let path = path_in(prefix, o.name_bytes());
                        self.diff_entry(None, Some(entry(&o)), &path, variant, out)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// `diff_trees` for trees whose entries are not in git's order.
    fn diff_trees_by_name(
        &self,
        new: &RawTree,
        old: &RawTree,
        prefix: &str,
        variant: bool,
        out: &mut Vec<Found>,
    ) -> Result<(), git2::Error> {
        // Each name's entry as a checkout writes it: the last one listed. (libgit2's lookup by
        // name is a binary search, which can miss an entry of an unsorted tree.)
        let entries = |tree: &RawTree| -> BTreeMap<Vec<u8>, Entry> {
            tree.iter()
                .map(|e| (e.name_bytes().to_vec(), entry(&e)))
                .collect()
        };
        let (news, olds) = (entries(new), entries(old));
        let names: BTreeSet<&Vec<u8>> = news.keys().chain(olds.keys()).collect();
        for name in names {
            let (n, o) = (news.get(name).copied(), olds.get(name).copied());
            if n != o {
                self.diff_entry(n, o, &path_in(prefix, name), variant, out)?;
            }
        }
        Ok(())
    }
}

fn entry(e: &RawEntry) -> Entry {
    let mode = if e.kind() == Some(ObjectType::Tree) {
        TREE_MODE
    } else {
        e.filemode()
    };
    (e.id(), mode)
}

/// The entry named `name` as a checkout writes it: the last one listed. Linear, for trees that
/// may be malformed (libgit2's `lookup` is a binary search, which can miss an entry of an
/// unsorted tree).
fn lookup_written(tree: &RawTree, name: &[u8]) -> Option<Entry> {
    tree.iter()
        .rev()
        .find(|e| e.name_bytes() == name)
        .map(|e| entry(&e))
}

fn lookup(tree: &RawTree, name: &[u8]) -> Option<Entry> {
    tree.get_name_bytes(name).map(|e| entry(&e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::raw_tree::git_order_of;
    use crate::policy::ledger::PolicySource;
    use git2::Repository;

    /// Harness files named where they are: no glob walks from the root.
    const NARROW_LEDGER: &str = r#"version = 1
[properties]
required = false
paths = ["tests/properties/"]
[fixtures]
lockfile = "qa/fixtures.lock.json"
paths = ["tests/fixtures/"]
[freeze]
file = "qa/freeze.toml"
[protect]
paths = [".github/workflows/*.yml"]
[harness]
paths = ["conftest.py"]
[harness.sections]
"pyproject.toml" = ["tool.pytest"]
"#;

    /// A tree of `files` (path, contents), written with libgit2's tree builder.
    fn tree_of(repo: &Repository, files: &[(&str, &str)]) -> Oid {
        let mut here: BTreeMap<&str, Vec<(&str, &str)>> = BTreeMap::new();
        let mut builder = repo.treebuilder(None).unwrap();
        for &(path, text) in files {
            match path.split_once('/') {
                Some((dir, rest)) => here.entry(dir).or_default().push((rest, text)),
                None => {
                    let blob = repo.blob(text.as_bytes()).unwrap();
                    builder.insert(path, blob, 0o100644).unwrap();
                }
            }
        }
        for (dir, below) in here {
            builder
                .insert(dir, tree_of(repo, &below), 0o040000)
                .unwrap();
        }
        builder.write().unwrap()
    }

    /// The project both trees below start from.
    const FILES: &[(&str, &str)] = &[
        (".github/workflows/ci.yml", "on: push\n"),
        ("qa/freeze.toml", "version = 1\n"),
        ("qa/merge_ledger.toml", NARROW_LEDGER),
        ("src/pkg/mod.py", "X = 1\n"),
        ("tests/fixtures/a.json", "{}\n"),
        ("tests/fixtures/deep/b.json", "[]\n"),
        ("tests/unit/test_a.py", "def test_a(): pass\n"),
    ];

    /// `FILES` with `path` holding `text` instead.
    fn changed(repo: &Repository, path: &str, text: &str) -> Oid {
        let files: Vec<(&str, &str)> = FILES
            .iter()
            .map(|&(p, t)| if p == path { (p, text) } else { (p, t) })
            .collect();
        tree_of(repo, &files)
    }

    fn narrow_set() -> ProtectedSet {
        let path = "qa/merge_ledger.toml";
        let policy = Policy::parse(
            std::path::Path::new(path),
            NARROW_LEDGER,
            PolicySource::Embedded,
        )
        .unwrap();
        ProtectedSet::new(&policy, path)
    }

    #[test]
    fn only_protect_globs_are_what_a_bot_allowance_may_reach() {
        let set = ProtectedSet::new(&Policy::embedded(), "qa/merge_ledger.toml");
        for path in [
            ".github/workflows/ci.yml",
            ".github/actions/setup/action.yml",
            ".gitlab-ci.yml",
        ] {
            assert!(set.protect_only(path), "{path}");
        }
        for path in [
            "qa/merge_ledger.toml",
            "qa/freeze.toml",
            "qa/fixtures.lock.json",
            "tests/fixtures/a.json",
            "tests/properties/test_x.py",
            "tests/conftest.py",
            "pyproject.toml",
            "Cargo.toml",
            ".gitattributes",
            "src/app.py",
        ] {
            assert!(!set.protect_only(path), "{path}");
        }
    }

    #[test]
    fn trees_are_read_once_while_held() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(dir.path()).unwrap();
        let (a, b) = (
            tree_of(&repo, FILES),
            changed(&repo, "src/pkg/mod.py", "X = 2\n"),
        );
        let trees = Trees::new(&repo).unwrap();
        for id in [a, b, a, b] {
            trees.get(id).unwrap();
        }
        assert_eq!(trees.reads(), 2);
    }

    #[test]
    fn a_change_outside_protected_directories_reads_only_the_roots() {
        // `src/` holds no protected path: comparing the roots settles it, and no glob's walk
        // starts above its literal directory (`.github/workflows/`).
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(dir.path()).unwrap();
        let (old, new) = (
            guard_id(tree_of(&repo, FILES)),
            guard_id(changed(&repo, "src/pkg/mod.py", "X = 2\n")),
        );
        let set = narrow_set();
        let trees = Trees::new(&repo).unwrap();
        assert!(set.changes(&trees, new, Some(old)).unwrap().is_empty());
        assert_eq!(trees.reads(), 2);
        let trees = Trees::new(&repo).unwrap();
        assert!(set.malformed_trees(&trees, new, &[old]).unwrap().is_empty());
        assert_eq!(trees.reads(), 2);
    }

    fn guard_id(id: Oid) -> ObjectId {
        crate::git::id::from_git2(id).unwrap()
    }

    /// The changes `narrow_set` finds from `old` to `new`: (path, kind, variant of).
    fn found(repo: &Repository, old: Oid, new: Oid) -> Vec<(String, ChangeKind, Option<String>)> {
        let trees = Trees::new(repo).unwrap();
        let changes = narrow_set()
            .changes(&trees, guard_id(new), Some(guard_id(old)))
            .unwrap();
        changes
            .into_iter()
            .map(|c| (c.path, c.kind, c.case_variant_of))
            .collect()
    }

    #[test]
    fn a_protected_name_added_or_removed_among_entries_that_stay_is_a_change() {
        // The directory lists one entry more or fewer, so its entries are not compared index
        // by index: the protected name is on one side only. Both directions, and a whole
        // directory above protected ones.
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(dir.path()).unwrap();
        let all = tree_of(&repo, FILES);
        let without = |gone: &str| {
            let kept: Vec<(&str, &str)> = FILES
                .iter()
                .copied()
                .filter(|(p, _)| !p.starts_with(gone))
                .collect();
            tree_of(&repo, &kept)
        };
        let no_freeze = without("qa/freeze.toml");
        let freeze = |kind| vec![("qa/freeze.toml".to_string(), kind, None)];
        assert_eq!(found(&repo, all, no_freeze), freeze(ChangeKind::Deleted));
        assert_eq!(found(&repo, no_freeze, all), freeze(ChangeKind::Added));
        let no_tests = without("tests/");
        let fixtures = |kind| {
            ["tests/fixtures/a.json", "tests/fixtures/deep/b.json"]
                .map(|p| (p.to_string(), kind, None))
                .to_vec()
        };
        assert_eq!(found(&repo, all, no_tests), fixtures(ChangeKind::Deleted));
        assert_eq!(found(&repo, no_tests, all), fixtures(ChangeKind::Added));
    }

    #[test]
    fn a_variant_added_beside_changes_far_apart_in_a_busy_directory_is_a_change() {
        // `tests/` with many directories, two of them changed far apart (their entries compared
        // index by index between), and `Fixtures/` added among them: found under its own name.
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(dir.path()).unwrap();
        let busy: Vec<(String, String)> = (0..60)
            .map(|i| (format!("tests/t{i:02}/test_x.py"), format!("# {i}\n")))
            .collect();
        let files = |edit: &[(&str, &str)]| {
            let mut all: Vec<(&str, &str)> = FILES.to_vec();
            all.extend(busy.iter().map(|(p, t)| (p.as_str(), t.as_str())));
            for &(path, text) in edit {
                match all.iter_mut().find(|(p, _)| *p == path) {
                    Some(entry) => entry.1 = text,
                    None => all.push((path, text)),
                }
            }
            tree_of(&repo, &all)
        };
        let old = files(&[]);
        let same_count = files(&[
            ("tests/t03/test_x.py", "# edited\n"),
            ("tests/t57/test_x.py", "# edited\n"),
            ("tests/fixtures/a.json", "{\"x\": 1}\n"),
        ]);
        assert_eq!(
            found(&repo, old, same_count),
            [(
                "tests/fixtures/a.json".to_string(),
                ChangeKind::Modified,
                None
            )]
        );
        let variant = files(&[
            ("tests/t03/test_x.py", "# edited\n"),
            ("tests/t57/test_x.py", "# edited\n"),
            ("tests/Fixtures/a.json", "{}\n"),
        ]);
        assert_eq!(
            found(&repo, old, variant),
            [(
                "tests/Fixtures/a.json".to_string(),
                ChangeKind::Added,
                Some("tests/fixtures".to_string())
            )]
        );
    }

    #[test]
    fn the_malformed_tree_walk_reads_only_directories_that_changed_on_protected_paths() {
        // `tests/` changed (an ordinary test), `tests/fixtures/` did not: the walk reads both
        // roots and both `tests/` trees, and stops at `tests/fixtures/` (the parent has it).
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(dir.path()).unwrap();
        let old = guard_id(tree_of(&repo, FILES));
        let new = guard_id(changed(
            &repo,
            "tests/unit/test_a.py",
            "def test_a(): assert 1\n",
        ));
        let set = narrow_set();
        let trees = Trees::new(&repo).unwrap();
        assert!(set.malformed_trees(&trees, new, &[old]).unwrap().is_empty());
        assert_eq!(trees.reads(), 4);
        // A fixture changed: `tests/fixtures/` is read on both sides as well, and every
        // directory below it that changed (none here: `deep/` is the parent's).
        let new = guard_id(changed(&repo, "tests/fixtures/a.json", "{\"a\": 1}\n"));
        let trees = Trees::new(&repo).unwrap();
        assert!(set.malformed_trees(&trees, new, &[old]).unwrap().is_empty());
        assert_eq!(trees.reads(), 6);
        let trees = Trees::new(&repo).unwrap();
        let found = set.changes(&trees, new, Some(old)).unwrap();
        let paths: Vec<&str> = found.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(paths, ["tests/fixtures/a.json"]);
    }

    #[test]
    fn git_order_puts_a_directory_after_names_that_extend_it() {
        // git sorts the directory `a` as `a/`: after `a-b` and `a.txt`, before `a0`.
        let mut names = vec![
            (&b"a0"[..], false),
            (b"a", true),
            (b"a.txt", false),
            (b"a-b", false),
            (b"a", false),
            (b"b", false),
        ];
        names.sort_by(|x, y| git_order_of(x.0, x.1, y.0, y.1));
        assert_eq!(
            names,
            vec![
                (&b"a"[..], false),
                (b"a-b", false),
                (b"a.txt", false),
                (b"a", true),
                (b"a0", false),
                (b"b", false),
            ]
        );
    }

    #[test]
    fn trees_git_writes_are_in_git_order() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(dir.path()).unwrap();
        let blob = repo.blob(b"x").unwrap();
        let sub = repo.treebuilder(None).unwrap().write().unwrap();
        let mut builder = repo.treebuilder(None).unwrap();
        for name in ["a0", "a.txt", "a-b", "b"] {
            builder.insert(name, blob, 0o100644).unwrap();
        }
        builder.insert("a", sub, 0o040000).unwrap();
        let odb = repo.odb().unwrap();
        let tree = RawTree::read(&odb, builder.write().unwrap()).unwrap();
        let names: Vec<String> = tree
            .iter()
            .map(|e| String::from_utf8_lossy(e.name_bytes()).into_owned())
            .collect();
        assert_eq!(names, ["a-b", "a.txt", "a", "a0", "b"]);
        let entries: Vec<RawEntry> = tree.iter().collect();
        assert!(
            entries
                .windows(2)
                .all(|w| git_order(&w[0], &w[1]) == Ordering::Less)
        );
    }

    #[test]
    fn trees_in_git_order_are_compared_as_when_compared_by_name() {
        // Random pairs of trees git writes (names that sort around a directory's `name/`, files
        // edited, added and deleted, directories made files and back): joining only the
        // entries `Trees::differing` keeps must find what pairing every name finds.
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(dir.path()).unwrap();
        let names = ["a", "a.b", "a-", "ab", "a0", "b"];
        let mut next = crate::git::test_random(0x9e37_79b9);
        // A path of one to three names; a set of them where no file is another's directory.
        let files = |next: &mut dyn FnMut(usize) -> usize| {
            let mut paths: BTreeMap<String, &str> = BTreeMap::new();
            for _ in 0..next(12) {
                let depth = 1 + next(3);
                let path: Vec<&str> = (0..depth).map(|_| names[next(names.len())]).collect();
                let path = path.join("/");
                let clashes = paths.keys().any(|p| {
                    p.starts_with(&format!("{path}/")) || path.starts_with(&format!("{p}/"))
                });
                if !clashes {
                    paths.insert(path, ["1", "2"][next(2)]);
                }
            }
            paths
        };
        let mut compared = 0;
        for _ in 0..400 {
            let old = files(&mut next);
            let mut new = old.clone();
            // Edit or drop some files, then add others (which may turn a file into a directory
            // or back).
            new.retain(|_, _| next(4) != 0);
            for text in new.values_mut() {
                if next(3) == 0 {
                    *text = if *text == "1" { "2" } else { "1" };
                }
            }
            for (path, text) in files(&mut next) {
                new.retain(|p, _| {
                    !(p.starts_with(&format!("{path}/")) || path.starts_with(&format!("{p}/")))
                });
                new.insert(path, text);
            }
            let tree = |files: &BTreeMap<String, &str>| {
                let list: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), *t)).collect();
                tree_of(&repo, &list)
            };
            let trees = Trees::new(&repo).unwrap();
            let (new_tree, old_tree) = (
                trees.get(tree(&new)).unwrap(),
                trees.get(tree(&old)).unwrap(),
            );
            assert!(new_tree.in_git_order() && old_tree.in_git_order());
            let walker = Walker { trees: &trees };
            let listed = |out: Vec<Found>| {
                let mut out: Vec<(String, ChangeKind)> =
                    out.into_iter().map(|f| (f.path, f.kind)).collect();
                out.sort_by(|a, b| a.0.cmp(&b.0));
                out
            };
            let (mut joined, mut by_name) = (Vec::new(), Vec::new());
            walker
                .diff_trees(Some(&new_tree), Some(&old_tree), "", false, &mut joined)
                .unwrap();
            walker
                .diff_trees_by_name(&new_tree, &old_tree, "", false, &mut by_name)
                .unwrap();
            let (joined, by_name) = (listed(joined), listed(by_name));
            assert_eq!(joined, by_name, "old {old:?}\nnew {new:?}");
            compared += usize::from(!joined.is_empty());
        }
        // Most pairs differ: the comparison was not of empty lists.
        assert!(compared > 300, "{compared}");
    }

    #[test]
    fn a_file_named_like_a_directory_beside_it_is_compared_as_a_checkout_writes_it() {
        // `a` and `a/` sort apart, so a tree listing both is in order, yet lists the name
        // twice; a checkout writes the last one listed. The parent has both, the commit keeps
        // only the file: at `a` a directory became a file (and its files are gone), though the
        // file's entry did not change.
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(dir.path()).unwrap();
        let blob = repo.blob(b"x").unwrap();
        let sub = tree_of(&repo, &[("f", "y")]);
        let raw = |entries: &[(&str, Oid)]| {
            let mut bytes = Vec::new();
            for (mode_name, id) in entries {
                bytes.extend_from_slice(mode_name.as_bytes());
                bytes.push(0);
                bytes.extend_from_slice(id.as_bytes());
            }
            to_git2(crate::git::write_raw_object(&repo, "tree", &bytes)).unwrap()
        };
        let old = raw(&[("100644 a", blob), ("40000 a", sub)]);
        let new = raw(&[("100644 a", blob)]);
        let trees = Trees::new(&repo).unwrap();
        let (new_tree, old_tree) = (trees.get(new).unwrap(), trees.get(old).unwrap());
        assert!(new_tree.in_git_order());
        assert!(!old_tree.in_git_order());
        // With names between the two (`a-x` sorts after `a`, before `a/`).
        let apart = raw(&[("100644 a", blob), ("100644 a-x", blob), ("40000 a", sub)]);
        assert!(!trees.get(apart).unwrap().in_git_order());
        let distinct = raw(&[("100644 a-x", blob), ("40000 a", sub)]);
        assert!(trees.get(distinct).unwrap().in_git_order());
        let mut out = Vec::new();
        Walker { trees: &trees }
            .diff_trees(Some(&new_tree), Some(&old_tree), "", false, &mut out)
            .unwrap();
        let found: Vec<(String, ChangeKind)> = out.into_iter().map(|f| (f.path, f.kind)).collect();
        assert_eq!(
            found,
            [
                ("a/f".to_string(), ChangeKind::Deleted),
                ("a".to_string(), ChangeKind::TypeChanged)
            ]
        );
    }
}
