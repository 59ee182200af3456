//! What a commit changed in the freeze file and the lockfile, in their own terms: leases
//! added, removed or extended, budget changes, lockfile entries added, removed or re-hashed,
//! with a short unified-diff excerpt for people.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::policy::freeze::{FreezeFile, Lease};
use crate::policy::lockfile::Lockfile;
use crate::wording::count;

/// One semantic change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum PolicyChange {
    LeaseAdded {
        nodeid: String,
        owner: String,
        expires: String,
    },
    LeaseRemoved {
        nodeid: String,
    },
    LeaseExtended {
        nodeid: String,
        from: String,
        to: String,
    },
    LeaseShortened {
        nodeid: String,
        from: String,
        to: String,
    },
    LeaseEdited {
        nodeid: String,
    },
    BudgetChanged {
        from: Option<u32>,
        to: Option<u32>,
    },
    SettingChanged {
        key: String,
        from: String,
        to: String,
    },
    LockEntryAdded {
        path: String,
        sha256: String,
    },
    LockEntryRemoved {
        path: String,
    },
    LockEntryChanged {
        path: String,
        from: String,
        to: String,
    },
}

impl std::fmt::Display for PolicyChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let opt = |v: &Option<u32>| v.map_or("none".to_string(), |n| n.to_string());
        match self {
            PolicyChange::LeaseAdded {
                nodeid,
                owner,
                expires,
            } => {
                write!(
                    f,
                    "lease added: {nodeid} (owner {owner}, expires {expires})"
                )
            }
            PolicyChange::LeaseRemoved { nodeid } => write!(f, "lease removed: {nodeid}"),
            PolicyChange::LeaseExtended { nodeid, from, to } => {
                write!(f, "lease extended: {nodeid} {from} -> {to}")
            }
            PolicyChange::LeaseShortened { nodeid, from, to } => {
                write!(f, "lease shortened: {nodeid} {from} -> {to}")
            }
            PolicyChange::LeaseEdited { nodeid } => {
                write!(f, "lease edited (owner or reason): {nodeid}")
            }
            PolicyChange::BudgetChanged { from, to } => {
                write!(f, "max_active_leases {} -> {}", opt(from), opt(to))
            }
            PolicyChange::SettingChanged { key, from, to } => write!(f, "{key} {from} -> {to}"),
            PolicyChange::LockEntryAdded { path, sha256 } => write!(
                f,
                "lockfile entry added: {path} {}",
                &sha256[..12.min(sha256.len())]
            ),
            PolicyChange::LockEntryRemoved { path } => write!(f, "lockfile entry removed: {path}"),
            PolicyChange::LockEntryChanged { path, from, to } => write!(
                f,
                "lockfile entry re-hashed: {path} {} -> {}",
                &from[..12.min(from.len())],
                &to[..12.min(to.len())]
            ),
        }
    }
}

fn date(lease: &Lease) -> String {
    lease.expires.map_or("never".to_string(), |d| d.to_string())
}

/// Changes from `old` to `new` (either may be absent: file created or deleted).
pub fn diff_freeze(old: Option<&FreezeFile>, new: Option<&FreezeFile>) -> Vec<PolicyChange> {
    let empty = FreezeFile::empty();
    let (old_f, new_f) = (old.unwrap_or(&empty), new.unwrap_or(&empty));
    let mut out = Vec::new();
    if old_f.max_active_leases != new_f.max_active_leases {
        out.push(PolicyChange::BudgetChanged {
            from: old_f.max_active_leases,
            to: new_f.max_active_leases,
        });
    }
    for (key, a, b) in [
        (
            "reject_if_expired",
            old_f.reject_if_expired,
            new_f.reject_if_expired,
        ),
        (
            "reject_if_agent_adds_lease",
            old_f.reject_if_agent_adds_lease,
            new_f.reject_if_agent_adds_lease,
        ),
    ] {
        if a != b {
            out.push(PolicyChange::SettingChanged {
                key: key.to_string(),
                from: a.to_string(),
                to: b.to_string(),
            });
        }
    }
    let before: BTreeMap<&str, &Lease> = old_f
        .leases
        .iter()
        .map(|l| (l.nodeid.as_str(), l))
        .collect();
    let after: BTreeMap<&str, &Lease> = new_f
        .leases
        .iter()
        .map(|l| (l.nodeid.as_str(), l))
        .collect();
    for (id, lease) in &after {
        match before.get(id) {
            None => out.push(PolicyChange::LeaseAdded {
                nodeid: id.to_string(),
                owner: lease.owner.clone().unwrap_or_else(|| "none".into()),
                expires: date(lease),
            }),
            Some(old_lease) => {
                if old_lease.expires != lease.expires {
                    let (from, to) = (date(old_lease), date(lease));
                    let later = match (old_lease.expires, lease.expires) {
                        (Some(a), Some(b)) => b > a,
                        (Some(_), None) => true,
                        _ => false,
                    };
                    out.push(if later {
                        PolicyChange::LeaseExtended {
                            nodeid: id.to_string(),
                            from,
                            to,
                        }
                    } else {
                        PolicyChange::LeaseShortened {
                            nodeid: id.to_string(),
                            from,
                            to,
                        }
                    });
                } else if old_lease.owner != lease.owner || old_lease.reason != lease.reason {
                    out.push(PolicyChange::LeaseEdited {
                        nodeid: id.to_string(),
                    });
                }
            }
        }
    }
    for id in before.keys().filter(|id| !after.contains_key(*id)) {
        out.push(PolicyChange::LeaseRemoved {
            nodeid: id.to_string(),
        });
    }
    out
}

/// Changes from `old` to `new` lockfile entries.
pub fn diff_lockfile(old: Option<&Lockfile>, new: Option<&Lockfile>) -> Vec<PolicyChange> {
    let empty = BTreeMap::new();
    let before = old.map_or(&empty, |l| &l.entries);
    let after = new.map_or(&empty, |l| &l.entries);
    let mut out = Vec::new();
    for (path, digest) in after {
        match before.get(path) {
            None => out.push(PolicyChange::LockEntryAdded {
                path: path.clone(),
                sha256: digest.clone(),
            }),
            Some(old_digest) if old_digest != digest => out.push(PolicyChange::LockEntryChanged {
                path: path.clone(),
                from: old_digest.clone(),
                to: digest.clone(),
            }),
            Some(_) => {}
        }
    }
    for path in before.keys().filter(|p| !after.contains_key(*p)) {
        out.push(PolicyChange::LockEntryRemoved { path: path.clone() });
    }
    out
}

/// A unified-diff excerpt of `old` to `new`, at most `max_lines` lines (changed lines and one
/// line of context), for text reports.
pub fn excerpt(old: &str, new: &str, max_lines: usize) -> Vec<String> {
    let diff = similar::TextDiff::from_lines(old, new);
    let mut lines = Vec::new();
    for group in diff.grouped_ops(1) {
        for op in group {
            for change in diff.iter_changes(&op) {
                let sign = match change.tag() {
                    similar::ChangeTag::Delete => '-',
                    similar::ChangeTag::Insert => '+',
                    similar::ChangeTag::Equal => ' ',
                };
                lines.push(format!(
                    "{sign}{}",
                    change.value().trim_end_matches(['\n', '\r'])
                ));
            }
        }
    }
    if lines.len() > max_lines {
        let more = lines.len() - max_lines;
        lines.truncate(max_lines);
        lines.push(format!("... {}", count(more, "more line")));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn freeze(text: &str) -> FreezeFile {
        FreezeFile::parse(Path::new("f.toml"), text.as_bytes()).unwrap()
    }

    const LEASE_A: &str =
        "[[leases]]\nnodeid = \"a\"\nowner = \"o\"\nreason = \"r\"\nexpires = \"2026-01-01\"\n";

    #[test]
    fn lease_changes_are_named() {
        let old = freeze(&format!("max_active_leases = 1\n{LEASE_A}"));
        let new = freeze(&format!(
            "max_active_leases = 2\n{}\n[[leases]]\nnodeid = \"b\"\nowner = \"p\"\nreason = \"r\"\nexpires = \"2026-02-01\"\n",
            LEASE_A.replace("2026-01-01", "2026-06-01")
        ));
        let changes = diff_freeze(Some(&old), Some(&new));
        assert_eq!(
            changes,
            vec![
                PolicyChange::BudgetChanged {
                    from: Some(1),
                    to: Some(2)
                },
                PolicyChange::LeaseExtended {
                    nodeid: "a".into(),
                    from: "2026-01-01".into(),
                    to: "2026-06-01".into()
                },
                PolicyChange::LeaseAdded {
                    nodeid: "b".into(),
                    owner: "p".into(),
                    expires: "2026-02-01".into()
                },
            ]
        );
        let back = diff_freeze(Some(&new), Some(&old));
        assert!(back.contains(&PolicyChange::LeaseRemoved { nodeid: "b".into() }));
        assert!(back.contains(&PolicyChange::LeaseShortened {
            nodeid: "a".into(),
            from: "2026-06-01".into(),
            to: "2026-01-01".into()
        }));
    }

    #[test]
    fn plain_list_additions_are_leases_added() {
        let old = FreezeFile::parse(Path::new("f.txt"), b"a\n").unwrap();
        let new = FreezeFile::parse(Path::new("f.txt"), b"a\nb\n").unwrap();
        assert_eq!(
            diff_freeze(Some(&old), Some(&new)),
            vec![PolicyChange::LeaseAdded {
                nodeid: "b".into(),
                owner: "none".into(),
                expires: "never".into()
            }]
        );
        assert_eq!(diff_freeze(None, Some(&old)).len(), 1);
    }

    #[test]
    fn lockfile_changes_are_named() {
        let lock = |pairs: &[(&str, &str)]| Lockfile {
            format: crate::policy::lockfile::LockFormat::Json,
            entries: pairs
                .iter()
                .map(|(p, d)| (p.to_string(), d.to_string()))
                .collect(),
        };
        let old = lock(&[("a", "1111"), ("b", "2222")]);
        let new = lock(&[("a", "1111"), ("b", "3333"), ("c", "4444")]);
        assert_eq!(
            diff_lockfile(Some(&old), Some(&new)),
            vec![
                PolicyChange::LockEntryChanged {
                    path: "b".into(),
                    from: "2222".into(),
                    to: "3333".into()
                },
                PolicyChange::LockEntryAdded {
                    path: "c".into(),
                    sha256: "4444".into()
                },
            ]
        );
        assert_eq!(diff_lockfile(Some(&new), None).len(), 3);
    }

    #[test]
    fn excerpt_shows_changed_lines_with_context_and_is_bounded() {
        let lines = excerpt("a\nb\nc\nd\n", "a\nb\nX\nd\n", 10);
        assert_eq!(lines, vec![" b", "-c", "+X", " d"]);
        let big_new: String = (0..50).map(|i| format!("line {i}\n")).collect();
        let lines = excerpt("", &big_new, 5);
        assert_eq!(lines.len(), 6);
        assert_eq!(lines[5], "... 45 more lines");
    }
}
