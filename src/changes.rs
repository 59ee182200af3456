//! Changes to protected paths, as plain data: what `git` finds a commit changed, what `rules`
//! judge and what reports show. Finding them is `git::protected`'s job, not this module's.

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
    #[serde(skip_serializing_if = "Option::is_none")]
    pub case_variant_of: Option<String>,
    /// For a file of which only some sections are protected: which differ.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}
