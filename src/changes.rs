//! Changes to protected paths and malformed trees, as plain data: what `git` finds a commit
//! changed or brought, what `rules` judge and what reports show. Finding them is
//! `git::protected`'s and `git::fsck`'s job, not this module's.

/// What a protected path is, and so which human trailer may change it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    Ledger,
    Freeze,
    Fixtures,
    Properties,
    /// Files that decide how tests run and what they report (`[harness]`).
    Harness,
}

impl Class {
    pub const ALL: [Class; 5] = [
        Class::Ledger,
        Class::Freeze,
        Class::Fixtures,
        Class::Properties,
        Class::Harness,
    ];

    pub fn describe(self) -> &'static str {
        match self {
            Class::Ledger => "the ledger or a [protect] path",
            Class::Freeze => "the freeze file",
            Class::Fixtures => "the fixture lockfile or corpus",
            Class::Properties => "the property tests or seed corpus",
            Class::Harness => "the test harness",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Added,
    Deleted,
    Modified,
    /// Same content, other mode: executable bit, or a file turned into a symlink/submodule.
    ModeChanged,
    /// Content and type changed together (a file replaced by a symlink to elsewhere).
    TypeChanged,
}

impl ChangeKind {
    pub fn describe(self) -> &'static str {
        match self {
            ChangeKind::Added => "adds",
            ChangeKind::Deleted => "deletes",
            ChangeKind::Modified => "modifies",
            ChangeKind::ModeChanged => "changes the mode of",
            ChangeKind::TypeChanged => "changes the type of",
        }
    }
}

/// One changed protected path.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Change {
    pub path: String,
    pub kind: ChangeKind,
    pub class: Class,
    /// The protected path this one is a variant of, when the names differ (in case, Unicode
    /// normalisation, or what HFS+ or NTFS ignore).
    pub case_variant_of: Option<String>,
    /// For a file of which only some sections are protected: which differ.
    pub detail: Option<String>,
}

/// What is wrong with a tree, in git's fsck terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Problem {
    DuplicateEntries,
    NotSorted,
    HasDot,
    HasDotdot,
    HasDotgit,
    EmptyName,
    FullPathname,
    BadFilemode,
}

impl Problem {
    /// git's fsck message id, for readers who know git's.
    pub fn fsck_id(self) -> &'static str {
        match self {
            Problem::DuplicateEntries => "duplicateEntries",
            Problem::NotSorted => "treeNotSorted",
            Problem::HasDot => "hasDot",
            Problem::HasDotdot => "hasDotdot",
            Problem::HasDotgit => "hasDotgit",
            Problem::EmptyName => "emptyName",
            Problem::FullPathname => "fullPathname",
            Problem::BadFilemode => "badFilemode",
        }
    }
}

impl MalformedTree {
    /// What is wrong, as the end of a sentence about the tree.
    pub fn describe(&self) -> String {
        let name = &self.entry;
        match self.problem {
            Problem::DuplicateEntries => format!(
                "lists `{name}` twice: a checkout writes the last entry, a lookup by name may find another"
            ),
            Problem::NotSorted => format!(
                "lists `{name}` out of git's order: a lookup by name can miss entries a checkout writes"
            ),
            Problem::HasDot => "holds an entry named `.`".to_string(),
            Problem::HasDotdot => "holds an entry named `..`".to_string(),
            Problem::HasDotgit => format!(
                "holds `{name}`, which is `.git` on HFS+ or NTFS: a checkout there writes into the repository itself"
            ),
            Problem::EmptyName => "holds an entry with an empty name".to_string(),
            Problem::FullPathname => format!("holds `{name}`, a name with `/` in it"),
            Problem::BadFilemode => format!(
                "holds `{name}` with mode {:o}, which git never writes (only 100644, 100755, 120000, 040000 and 160000)",
                self.mode
            ),
        }
    }
}

/// A malformed tree in a commit, at its first offending entry for each problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MalformedTree {
    /// The tree's path in the commit (`""` for the root).
    pub tree: String,
    /// The offending entry's name, lossily decoded, and its path.
    pub entry: String,
    pub path: String,
    pub problem: Problem,
    /// The entry's raw mode.
    pub mode: i32,
}
