//! Provenance: who changed protected paths, with which trailers. Agent commits may not
//! change them at all; human commits need the class's human trailer; an agent commit that
//! carries a human trailer is a forgery; agents may not add leases or property tests.

use std::collections::BTreeMap;

use crate::changes::{Change, ChangeKind, Class};
use crate::policy::agents::{HumanTrailer, Trailers};
use crate::policy::ledger::TrailerPolicy;
use crate::policy::signers::SignatureStatus;
use crate::report::finding::{Code, Finding};

/// What is known about one commit of a range.
#[derive(Debug, Clone)]
pub struct CommitFacts {
    pub short: String,
    pub subject: String,
    /// Why the commit counts as an agent's; `None` for a human's.
    pub agent: Option<String>,
    pub trailers: Trailers,
    pub changes: Vec<Change>,
    /// Test ids this commit added to the freeze file.
    pub leases_added: Vec<String>,
    /// The base revision the range starts from: for "drop or rewrite the commit"
    /// (`git rebase -i BASE`) advice.
    pub base: String,
    /// The signature of a commit that needed proof of a human and matched no agent pattern.
    pub signature: Option<SignatureStatus>,
}

pub struct ProvenanceInput<'a> {
    pub trailers: &'a TrailerPolicy,
    pub reject_if_agent_adds_lease: bool,
    /// Property seed directory, whose additions are not new property tests.
    pub seeds: Option<&'a str>,
    /// File-name globs of property test files (`properties.files`): an added `conftest.py`
    /// is an edit of the property paths, not a new property test.
    pub property_files: &'a globset::GlobSet,
}

pub fn trailer_for(class: Class, policy: &TrailerPolicy) -> &HumanTrailer {
    match class {
        Class::Ledger => &policy.ledger,
        Class::Freeze => &policy.freeze,
        Class::Fixtures => &policy.fixtures,
        Class::Properties => &policy.properties,
        Class::Harness => &policy.harness,
    }
}

/// Findings for one commit. Also returns how many leases an agent added.
pub fn judge(commit: &CommitFacts, input: &ProvenanceInput) -> (Vec<Finding>, usize) {
    let mut findings = Vec::new();
    let mut by_class: BTreeMap<Class, Vec<&Change>> = BTreeMap::new();
    for change in &commit.changes {
        by_class.entry(change.class).or_default().push(change);
    }
    let at = |f: Finding| f.commit(&commit.short, &commit.subject);

    for (class, changes) in &by_class {
        let trailer = trailer_for(*class, input.trailers);
        let has_trailer = trailer.present_in(&commit.trailers.block);
        match &commit.agent {
            Some(why) => {
                for change in changes {
                    findings.push(at(Finding::new(
                        Code::AgentEditProtected,
                        format!("agent commit {} {} ({}); agent: {why}", change.kind.describe(), describe_path(change), class.describe()),
                    )
                    .path(&change.path)
                    // A revert commit would leave this commit in the range: it is judged
                    // still. The commit itself must go, or a human's must carry the change.
                    .help(format!(
                        "drop this commit, or rewrite it without the change to {} (`git rebase -i {}`); or have a human make the change in a commit of their own with `{trailer}`",
                        change.path, commit.base
                    ))));
                    let file_name = change.path.rsplit('/').next().unwrap_or(&change.path);
                    if change.class == Class::Properties
                        && change.kind == ChangeKind::Added
                        && input.property_files.is_match(file_name)
                        && !input
                            .seeds
                            .is_some_and(|s| change.path.starts_with(&format!("{s}/")))
                    {
                        findings.push(at(Finding::new(
                            Code::AgentAddedProperty,
                            "agent commit adds a property test file; properties are human-owned invariants",
                        )
                        .path(&change.path)
                        .help("move the test out of the property paths, or a human rewrites it as an invariant")));
                    }
                }
            }
            None if !has_trailer => {
                // Written, but where git does not read trailers: say so, or the author looks
                // at a message that seems to carry it.
                let misplaced = trailer.present_in(&commit.trailers.in_message);
                for change in changes {
                    let what = format!(
                        "commit {} {} ({})",
                        change.kind.describe(),
                        describe_path(change),
                        class.describe()
                    );
                    let finding = if misplaced {
                        Finding::new(
                            Code::MissingHumanTrailer,
                            format!("{what}: `{trailer}` is in the message but not in its trailer block (git reads trailers only from the message's last paragraph)"),
                        )
                        .help(format!(
                            "move the line `{trailer}` into the message's last paragraph, with the other trailers and no text after it (`git commit --amend`, or `git rebase -i {}` and `reword`)",
                            commit.base
                        ))
                    } else {
                        Finding::new(
                            Code::MissingHumanTrailer,
                            format!("{what} without a `{trailer}` trailer"),
                        )
                        .help(format!(
                            "if a human made this change on purpose, end the message with the trailer line `{trailer}` (`git commit --amend`, or `git rebase -i {}` and `reword`); else drop the change from the branch",
                            commit.base
                        ))
                    };
                    findings.push(at(finding.path(&change.path)));
                }
            }
            None => {}
        }
    }

    findings.extend(forged_trailers(commit, input).map(at));
    findings.extend(unproven_signature(commit).map(at));

    let mut added = 0;
    if let Some(why) = &commit.agent {
        for nodeid in &commit.leases_added {
            added += 1;
            if input.reject_if_agent_adds_lease {
                findings.push(at(Finding::new(
                    Code::AgentAddedLease,
                    format!("agent commit adds a freeze lease for {nodeid}; agent: {why}"),
                )
                .test(nodeid)
                .help("agents cannot freeze tests; fix the test, or a human adds the lease with `Freeze-Lease: human`")));
            }
        }
    }
    (findings, added)
}

/// `forged_human_trailer`: any human trailer on an agent commit that changes protected paths.
fn forged_trailers(commit: &CommitFacts, input: &ProvenanceInput) -> Option<Finding> {
    // Any human trailer on an agent commit that changes protected paths is a forgery, not
    // only the trailer of a changed path's class (DESIGN: "carries a human trailer").
    if let (Some(why), Some(first)) = (&commit.agent, commit.changes.first()) {
        let mut carried: Vec<String> = Class::ALL
            .into_iter()
            .map(|c| trailer_for(c, input.trailers))
            .filter(|t| t.present_in(&commit.trailers.block))
            .map(|t| format!("`{t}`"))
            .collect();
        carried.sort();
        carried.dedup();
        if !carried.is_empty() {
            return Some(Finding::new(
                Code::ForgedHumanTrailer,
                format!("agent commit carries {}: a human trailer on an agent's commit is a forgery; agent: {why}", carried.join(", ")),
            )
            .path(&first.path)
            .help("drop the commit; a human makes the change in a commit of their own"));
        }
    }
    None
}

/// Why the signature of a commit that needed one to count as human, and changed a protected
/// path, did not prove a human.
fn unproven_signature(commit: &CommitFacts) -> Option<Finding> {
    // A commit that needed a signature to count as human and changed a protected path: say
    // why its signature did not prove a human.
    if let Some(status) = commit
        .signature
        .as_ref()
        .filter(|_| !commit.changes.is_empty())
    {
        let code = match status {
            SignatureStatus::Verified { .. } => None,
            SignatureStatus::Unsigned => Some(Code::UnsignedHumanCommit),
            SignatureStatus::Unsupported { .. } | SignatureStatus::Bad { .. } => {
                Some(Code::BadSignature)
            }
            SignatureStatus::UnknownSigner { .. } => Some(Code::UnknownSigner),
            SignatureStatus::SignerNotCommitter { .. } => Some(Code::SignerNotCommitter),
            SignatureStatus::Expired { .. } => Some(Code::SignatureExpired),
        };
        if let Some(code) = code {
            return Some(Finding::new(code, format!("commit changes protected paths and is {}", status.describe()))
                .path(&commit.changes[0].path)
                .help("sign the commit with a key in the allowed signers whose principal is your committer e-mail: `git -c gpg.format=ssh -c user.signingkey=KEY commit --amend -S --no-edit`"));
        }
    }
    None
}

fn describe_path(change: &Change) -> String {
    let mut shown = change.path.clone();
    if let Some(of) = &change.case_variant_of {
        shown.push_str(&format!(
            " (the same file as {of} on a case-insensitive, macOS or Windows checkout)"
        ));
    }
    if let Some(detail) = &change.detail {
        shown.push_str(&format!(" ({detail})"));
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::ledger::Policy;

    fn facts(
        agent: bool,
        trailers: &[(&str, &str)],
        changes: &[(&str, Class, ChangeKind)],
    ) -> CommitFacts {
        CommitFacts {
            short: "1a2b3c4".into(),
            subject: "Tweak".into(),
            agent: agent.then(|| "author e-mail matches".to_string()),
            trailers: Trailers::block(
                trailers
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            changes: changes
                .iter()
                .map(|(p, c, k)| Change {
                    path: p.to_string(),
                    kind: *k,
                    class: *c,
                    case_variant_of: None,
                    detail: None,
                })
                .collect(),
            leases_added: Vec::new(),
            base: "main".into(),
            signature: None,
        }
    }

    fn codes(f: &CommitFacts) -> Vec<Code> {
        let policy = Policy::embedded();
        let input = ProvenanceInput {
            trailers: &policy.trailers,
            reject_if_agent_adds_lease: true,
            seeds: Some("tests/properties/seeds"),
            property_files: &policy.properties.files,
        };
        judge(f, &input).0.into_iter().map(|f| f.code).collect()
    }

    const FREEZE: (&str, Class, ChangeKind) =
        ("qa/freeze.toml", Class::Freeze, ChangeKind::Modified);

    #[test]
    fn agent_edit_rejects_and_forged_trailer_is_named() {
        assert_eq!(
            codes(&facts(true, &[], &[FREEZE])),
            vec![Code::AgentEditProtected]
        );
        assert_eq!(
            codes(&facts(true, &[("Freeze-Lease", "human")], &[FREEZE])),
            vec![Code::AgentEditProtected, Code::ForgedHumanTrailer]
        );
        assert_eq!(
            codes(&facts(true, &[("Fixture-Lock", "human")], &[FREEZE])),
            vec![Code::AgentEditProtected, Code::ForgedHumanTrailer],
            "another class's human trailer is a forgery too"
        );
        assert_eq!(
            codes(&facts(true, &[("Fixture-Lock", "human")], &[])),
            vec![],
            "no protected change, nothing to forge"
        );
    }

    #[test]
    fn human_edit_needs_the_trailer_of_its_class() {
        assert_eq!(
            codes(&facts(false, &[], &[FREEZE])),
            vec![Code::MissingHumanTrailer]
        );
        assert_eq!(
            codes(&facts(false, &[("freeze-lease", "human")], &[FREEZE])),
            vec![]
        );
        assert_eq!(
            codes(&facts(false, &[("Fixture-Lock", "human")], &[FREEZE])),
            vec![Code::MissingHumanTrailer]
        );
    }

    #[test]
    fn agent_added_leases_and_properties() {
        let mut f = facts(
            true,
            &[],
            &[(
                "tests/properties/test_new.py",
                Class::Properties,
                ChangeKind::Added,
            )],
        );
        f.leases_added = vec!["tests/a.py::b".into()];
        assert_eq!(
            codes(&f),
            vec![
                Code::AgentEditProtected,
                Code::AgentAddedProperty,
                Code::AgentAddedLease
            ]
        );
        let seeds = facts(
            true,
            &[],
            &[(
                "tests/properties/seeds/x.json",
                Class::Properties,
                ChangeKind::Added,
            )],
        );
        assert_eq!(codes(&seeds), vec![Code::AgentEditProtected]);
        let helper = facts(
            true,
            &[],
            &[(
                "tests/properties/conftest.py",
                Class::Properties,
                ChangeKind::Added,
            )],
        );
        assert_eq!(
            codes(&helper),
            vec![Code::AgentEditProtected],
            "conftest.py is no property test"
        );
    }

    #[test]
    fn leases_an_agent_adds_are_counted_whether_or_not_they_reject() {
        let policy = Policy::embedded();
        let judge_with = |agent: bool, reject: bool| {
            let mut f = facts(agent, &[], &[FREEZE]);
            f.leases_added = vec!["tests/a.py::b".into(), "tests/a.py::c".into()];
            let input = ProvenanceInput {
                trailers: &policy.trailers,
                reject_if_agent_adds_lease: reject,
                seeds: None,
                property_files: &policy.properties.files,
            };
            let (found, added) = judge(&f, &input);
            let tests: Vec<String> = found
                .iter()
                .filter(|f| f.code == Code::AgentAddedLease)
                .filter_map(|f| f.test.clone())
                .collect();
            (tests, added)
        };
        assert_eq!(
            judge_with(true, true),
            (vec!["tests/a.py::b".into(), "tests/a.py::c".into()], 2)
        );
        assert_eq!(
            judge_with(true, false),
            (vec![], 2),
            "counted, not rejected"
        );
        assert_eq!(judge_with(false, true), (vec![], 0), "a human's leases");
    }

    #[test]
    fn unprotected_changes_are_fine() {
        assert!(codes(&facts(true, &[], &[])).is_empty());
    }
}
