//! Signed human commits: git's allowed-signers file (as for `gpg.ssh.allowedSignersFile`)
//! and SSH commit signatures (`gpgsig` headers with `-----BEGIN SSH SIGNATURE-----`,
//! namespace `git`), verified in-process with the `ssh-key` crate. In-process, because
//! server hook images (GitHub Enterprise's) may have neither git nor ssh-keygen, and
//! spawning a process per commit would not fit a 5-second hook budget.
//!
//! ssh-key has no allowed-signers parser, so the line format of ssh-keygen(1) "ALLOWED
//! SIGNERS" is read here: `principals [options] keytype base64 [comment]`, with options
//! `namespaces="..."`, `valid-after="..."`, `valid-before="..."` and `cert-authority`.

use jiff::Timestamp;
use serde::Serialize;
use ssh_key::{HashAlg, PublicKey, SshSig, public::KeyData};

use crate::policy::agents::glob;

/// One line of an allowed-signers file.
#[derive(Debug, Clone)]
pub struct AllowedSigner {
    pub principals: Vec<String>,
    pub namespaces: Option<Vec<String>>,
    pub valid_after: Option<Timestamp>,
    pub valid_before: Option<Timestamp>,
    pub key: KeyData,
    pub line: u64,
}

#[derive(Debug, Clone, Default)]
pub struct AllowedSigners {
    pub signers: Vec<AllowedSigner>,
}

/// What a commit's signature proves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum SignatureStatus {
    Verified {
        principal: String,
        key: String,
    },
    Unsigned,
    /// An OpenPGP or X.509 signature: not verified by this build.
    Unsupported {
        kind: String,
    },
    Bad {
        reason: String,
    },
    UnknownSigner {
        key: String,
    },
    SignerNotCommitter {
        key: String,
        principals: Vec<String>,
        committer: String,
    },
    Expired {
        key: String,
        principal: String,
    },
}

impl SignatureStatus {
    pub fn is_verified(&self) -> bool {
        matches!(self, SignatureStatus::Verified { .. })
    }

    pub fn describe(&self) -> String {
        match self {
            SignatureStatus::Verified { principal, key } => {
                format!("signed by {principal} ({key})")
            }
            SignatureStatus::Unsigned => "not signed".to_string(),
            SignatureStatus::Unsupported { kind } => {
                format!("{kind} signature, which guard does not verify (use SSH signing)")
            }
            SignatureStatus::Bad { reason } => format!("bad signature: {reason}"),
            SignatureStatus::UnknownSigner { key } => {
                format!("signed by {key}, a key not in the allowed signers")
            }
            SignatureStatus::SignerNotCommitter {
                key,
                principals,
                committer,
            } => {
                format!(
                    "signed by {key} for {}, not the committer {committer}",
                    principals.join(",")
                )
            }
            SignatureStatus::Expired { key, principal } => {
                format!(
                    "signed by {principal} ({key}) outside the key's valid-after/valid-before window"
                )
            }
        }
    }
}

/// What is wrong with a line of an allowed-signers file (the caller names the file and the
/// line). The key parser's and the time parser's reasons are part of the message, not a
/// source, so that printing a chain of errors does not repeat them.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SignersError {
    #[error("unclosed quote")]
    UnclosedQuote,
    #[error("empty line")]
    EmptyLine,
    #[error("no key after the principals")]
    NoKey,
    #[error("cert-authority lines are not supported; list the signing keys themselves")]
    CertAuthority,
    #[error("unknown option {0:?}")]
    UnknownOption(String),
    #[error("no key data after {0:?}")]
    NoKeyData(String),
    #[error("not a valid {key_type} key: {error}")]
    BadKey {
        key_type: String,
        error: ssh_key::Error,
    },
    /// A `valid-after`/`valid-before` time not in the form `YYYYMMDD[HHMM[SS]][Z]`.
    #[error("{0:?} is not a time (YYYYMMDD[HHMM[SS]][Z])")]
    TimeForm(String),
    /// A time in that form that is no time (month 13, or out of range).
    #[error("{text:?}: {error}")]
    NoSuchTime { text: String, error: jiff::Error },
}

impl AllowedSigners {
    /// Parses an allowed-signers file; an error comes with its 1-based line number.
    pub fn parse(text: &str) -> Result<AllowedSigners, (u64, SignersError)> {
        let mut signers = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line_no = i as u64 + 1;
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let tokens = tokenize(line).map_err(|e| (line_no, e))?;
            let mut it = tokens.into_iter().peekable();
            let principals_token = it.next().ok_or((line_no, SignersError::EmptyLine))?;
            let principals: Vec<String> = principals_token.split(',').map(str::to_string).collect();
            let mut namespaces = None;
            let mut valid_after = None;
            let mut valid_before = None;
            let key_type = loop {
                let token = it.next().ok_or((line_no, SignersError::NoKey))?;
                if is_key_type(&token) {
                    break token;
                }
                for option in split_options(&token) {
                    let (name, value) = match option.split_once('=') {
                        Some((n, v)) => (
                            n.to_ascii_lowercase(),
                            Some(v.trim_matches('"').to_string()),
                        ),
                        None => (option.to_ascii_lowercase(), None),
                    };
                    match (name.as_str(), value) {
                        ("namespaces", Some(v)) => {
                            namespaces = Some(v.split(',').map(str::to_string).collect())
                        }
                        ("valid-after", Some(v)) => {
                            valid_after = Some(parse_time(&v).map_err(|e| (line_no, e))?)
                        }
                        ("valid-before", Some(v)) => {
                            valid_before = Some(parse_time(&v).map_err(|e| (line_no, e))?)
                        }
                        ("cert-authority", None) => {
                            return Err((line_no, SignersError::CertAuthority));
                        }
                        (other, _) => {
                            return Err((line_no, SignersError::UnknownOption(other.to_string())));
                        }
                    }
                }
            };
            let base64 = it
                .next()
                .ok_or_else(|| (line_no, SignersError::NoKeyData(key_type.clone())))?;
            let key =
                PublicKey::from_openssh(&format!("{key_type} {base64}")).map_err(|error| {
                    let key_type = key_type.clone();
                    (line_no, SignersError::BadKey { key_type, error })
                })?;
            signers.push(AllowedSigner {
                principals,
                namespaces,
                valid_after,
                valid_before,
                key: key.key_data().clone(),
                line: line_no,
            });
        }
        Ok(AllowedSigners { signers })
    }

    /// Verifies an armored signature over `payload` for a commit by `committer` (e-mail) made
    /// at `time` (git checks validity at the committer date).
    pub fn verify(
        &self,
        armored: &[u8],
        payload: &[u8],
        committer: &str,
        time: Timestamp,
    ) -> SignatureStatus {
        self.verify_at(armored, payload, committer, &[time])
    }

    /// `verify`, with a key that must be valid at every one of `times`: the committer date,
    /// which the committer writes, and in hooks the time of the push, which they do not.
    pub fn verify_at(
        &self,
        armored: &[u8],
        payload: &[u8],
        committer: &str,
        times: &[Timestamp],
    ) -> SignatureStatus {
        let text = String::from_utf8_lossy(armored);
        if text.contains("-----BEGIN PGP SIGNATURE-----") {
            return SignatureStatus::Unsupported {
                kind: "OpenPGP".into(),
            };
        }
        if !text.contains("-----BEGIN SSH SIGNATURE-----") {
            return SignatureStatus::Unsupported {
                kind: "X.509 or unknown".into(),
            };
        }
        let sig = match SshSig::from_pem(text.trim().as_bytes()) {
            Ok(s) => s,
            Err(e) => {
                return SignatureStatus::Bad {
                    reason: format!("unreadable SSH signature: {e}"),
                };
            }
        };
        let signing_key = PublicKey::from(sig.public_key().clone());
        let key = signing_key.fingerprint(HashAlg::Sha256).to_string();
        if let Err(e) = signing_key.verify("git", payload, &sig) {
            return SignatureStatus::Bad {
                reason: format!(
                    "does not verify ({e}); the commit was changed after signing, or the signature is not for git"
                ),
            };
        }
        let candidates: Vec<&AllowedSigner> = self
            .signers
            .iter()
            .filter(|s| &s.key == sig.public_key())
            .filter(|s| {
                s.namespaces
                    .as_ref()
                    .is_none_or(|ns| ns.iter().any(|n| n == "git"))
            })
            .collect();
        if candidates.is_empty() {
            return SignatureStatus::UnknownSigner { key };
        }
        let matching: Vec<&AllowedSigner> = candidates
            .iter()
            .copied()
            .filter(|s| principal_matches(&s.principals, committer))
            .collect();
        if matching.is_empty() {
            return SignatureStatus::SignerNotCommitter {
                key,
                principals: candidates
                    .iter()
                    .flat_map(|s| s.principals.clone())
                    .collect(),
                committer: committer.to_string(),
            };
        }
        for s in &matching {
            let valid = |time: &Timestamp| {
                s.valid_after.is_none_or(|t| *time >= t)
                    && s.valid_before.is_none_or(|t| *time <= t)
            };
            if times.iter().all(valid) {
                return SignatureStatus::Verified {
                    principal: committer.to_string(),
                    key,
                };
            }
        }
        SignatureStatus::Expired {
            key,
            principal: committer.to_string(),
        }
    }
}

/// ssh's pattern lists: `*` and `?` wildcards, `!` negates; case-insensitive like e-mail.
fn principal_matches(patterns: &[String], who: &str) -> bool {
    let mut matched = false;
    for p in patterns {
        let (negate, p) = match p.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, p.as_str()),
        };
        let Ok(m) = glob(&p.replace('[', "\\[").replace(']', "\\]")) else {
            continue;
        };
        if m.is_match(who) {
            if negate {
                return false;
            }
            matched = true;
        }
    }
    matched
}

fn is_key_type(token: &str) -> bool {
    token.starts_with("ssh-") || token.starts_with("ecdsa-") || token.starts_with("sk-")
}

/// Splits on whitespace outside double quotes.
fn tokenize(line: &str) -> Result<Vec<String>, SignersError> {
    let mut tokens = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                current.push(c);
            }
            c if c.is_whitespace() && !quoted => {
                if !current.is_empty() {
                    tokens.push(std::mem::take(&mut current));
                }
            }
            c => current.push(c),
        }
    }
    if quoted {
        return Err(SignersError::UnclosedQuote);
    }
    if !current.is_empty() {
        tokens.push(current);
    }
    Ok(tokens)
}

/// Splits `a="x,y",b` on commas outside quotes.
fn split_options(token: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    for c in token.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                current.push(c);
            }
            ',' if !quoted => out.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    out.push(current);
    out.into_iter().filter(|s| !s.is_empty()).collect()
}

/// `YYYYMMDD[HHMM[SS]][Z]`. Without `Z` ssh-keygen reads local time; a server runs on UTC,
/// so guard reads both as UTC.
fn parse_time(text: &str) -> Result<Timestamp, SignersError> {
    let t = text.trim_end_matches(['Z', 'z']);
    let padded = match t.len() {
        8 => format!("{t}000000"),
        12 => format!("{t}00"),
        14 => t.to_string(),
        _ => return Err(SignersError::TimeForm(text.to_string())),
    };
    let no_such_time = |error| SignersError::NoSuchTime {
        text: text.to_string(),
        error,
    };
    let dt = jiff::civil::DateTime::strptime("%Y%m%d%H%M%S", &padded).map_err(no_such_time)?;
    dt.to_zoned_datetime(jiff::tz::TimeZone::UTC)
        .map(|z| z.timestamp())
        .map_err(no_such_time)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDtwXUE2Ep4IyHTvHh+JQvFrS/OOXvHg3IFZJTG5x4W5";

    #[test]
    fn parses_principals_options_and_keys() {
        let text = format!(
            "# team\ndev@example.com,*@corp.example {KEY} laptop\n\"ops@example.com\" namespaces=\"git,file\",valid-after=\"20260101\",valid-before=\"20261231235959Z\" {KEY}\n"
        );
        let s = AllowedSigners::parse(&text).unwrap();
        assert_eq!(s.signers.len(), 2);
        assert_eq!(
            s.signers[0].principals,
            vec!["dev@example.com", "*@corp.example"]
        );
        assert_eq!(
            s.signers[1].namespaces.as_deref(),
            Some(&["git".to_string(), "file".to_string()][..])
        );
        assert_eq!(
            s.signers[1].valid_after.unwrap().to_string(),
            "2026-01-01T00:00:00Z"
        );
        assert_eq!(s.signers[1].line, 3);
    }

    #[test]
    fn every_key_type_ssh_keygen_writes_starts_a_key() {
        // ECDSA from `ssh-keygen -t ecdsa`; a security-key (FIDO) ed25519 key by hand: its
        // type, a 32-byte key and the application "ssh:".
        let ecdsa = "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBNesBOKo1Me3CtiAR23Rt3gNWRnxnTvzQUp5chLAS5LlIKqUsHO+ySqHDpPuGfZWNpzwXW/ECBQoyfcJotodp20=";
        let sk = "sk-ssh-ed25519@openssh.com AAAAGnNrLXNzaC1lZDI1NTE5QG9wZW5zc2guY29tAAAAIAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gAAAABHNzaDo=";
        let text = format!("a@example.com {KEY}\nb@example.com {ecdsa}\nc@example.com {sk}\n");
        let s = AllowedSigners::parse(&text).unwrap();
        let types: Vec<String> = s
            .signers
            .iter()
            .map(|s| s.key.algorithm().to_string())
            .collect();
        assert_eq!(
            types,
            [
                "ssh-ed25519",
                "ecdsa-sha2-nistp256",
                "sk-ssh-ed25519@openssh.com"
            ]
        );
    }

    #[test]
    fn valid_times_take_every_form_ssh_keygen_reads() {
        for (text, want) in [
            ("20260101", "2026-01-01T00:00:00Z"),
            ("202601011230", "2026-01-01T12:30:00Z"),
            ("20260101123045", "2026-01-01T12:30:45Z"),
            ("20260101123045Z", "2026-01-01T12:30:45Z"),
        ] {
            let line = format!("a@b valid-after=\"{text}\" {KEY}");
            let s = AllowedSigners::parse(&line).unwrap();
            assert_eq!(
                s.signers[0].valid_after.unwrap().to_string(),
                want,
                "{text}"
            );
        }
        for bad in ["2026010112", "202601011", "2026"] {
            let line = format!("a@b valid-after=\"{bad}\" {KEY}");
            assert_eq!(AllowedSigners::parse(&line).unwrap_err().0, 1, "{bad}");
        }
    }

    #[test]
    fn bad_lines_name_their_line() {
        for (text, line) in [
            (format!("a@b cert-authority {KEY}"), 1),
            ("a@b ssh-ed25519 notbase64!!".to_string(), 1),
            (format!("# c\na@b valid-before=\"tomorrow\" {KEY}"), 2),
            (format!("a@b frobnicate {KEY}"), 1),
            ("a@b".to_string(), 1),
        ] {
            assert_eq!(AllowedSigners::parse(&text).unwrap_err().0, line, "{text}");
        }
    }

    #[test]
    fn principal_patterns() {
        let p = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(principal_matches(
            &p(&["dev@example.com"]),
            "DEV@example.com"
        ));
        assert!(principal_matches(&p(&["*@corp.example"]), "a@corp.example"));
        assert!(!principal_matches(
            &p(&["*@corp.example", "!bot@corp.example"]),
            "bot@corp.example"
        ));
        assert!(!principal_matches(
            &p(&["dev@example.com"]),
            "dev@example.co"
        ));
    }

    /// Makes a key with ssh-keygen and signs `payload` as git does (`-Y sign -n git`).
    fn keygen_and_sign(
        dir: &std::path::Path,
        name: &str,
        kind: &str,
        payload: &[u8],
    ) -> (String, Vec<u8>) {
        let key = dir.join(name);
        let mut args = vec![
            "-q",
            "-t",
            kind,
            "-N",
            "",
            "-C",
            name,
            "-f",
            key.to_str().unwrap(),
        ];
        if kind == "rsa" {
            args.extend(["-b", "2048"]);
        }
        let ok = std::process::Command::new("ssh-keygen")
            .args(&args)
            .status()
            .expect("ssh-keygen runs");
        assert!(ok.success());
        let data = dir.join(format!("{name}.payload"));
        std::fs::write(&data, payload).unwrap();
        let ok = std::process::Command::new("ssh-keygen")
            .args([
                "-q",
                "-Y",
                "sign",
                "-n",
                "git",
                "-f",
                key.to_str().unwrap(),
                data.to_str().unwrap(),
            ])
            .status()
            .unwrap();
        assert!(ok.success());
        let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
        let public = public
            .split_whitespace()
            .take(2)
            .collect::<Vec<_>>()
            .join(" ");
        (
            public,
            std::fs::read(dir.join(format!("{name}.payload.sig"))).unwrap(),
        )
    }

    #[test]
    fn real_ssh_signatures_verify_and_tampering_fails() {
        let dir = tempfile::tempdir().unwrap();
        let payload = b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor A <dev@example.com> 1767225600 +0000\n\nmsg\n";
        let noon = "2026-06-01T12:00:00Z".parse::<Timestamp>().unwrap();
        for kind in ["ed25519", "rsa"] {
            let (public, sig) = keygen_and_sign(dir.path(), &format!("k-{kind}"), kind, payload);
            let signers =
                AllowedSigners::parse(&format!("dev@example.com namespaces=\"git\" {public}\n"))
                    .unwrap();
            assert!(
                signers
                    .verify(&sig, payload, "dev@example.com", noon)
                    .is_verified(),
                "{kind}"
            );
            let mut tampered = payload.to_vec();
            tampered.extend_from_slice(b"evil\n");
            assert!(
                matches!(
                    signers.verify(&sig, &tampered, "dev@example.com", noon),
                    SignatureStatus::Bad { .. }
                ),
                "{kind}"
            );
            assert!(matches!(
                signers.verify(&sig, payload, "other@example.com", noon),
                SignatureStatus::SignerNotCommitter { .. }
            ));
            let expired = AllowedSigners::parse(&format!(
                "dev@example.com valid-before=\"20260101\" {public}\n"
            ))
            .unwrap();
            assert!(matches!(
                expired.verify(&sig, payload, "dev@example.com", noon),
                SignatureStatus::Expired { .. }
            ));
            // Valid at the committer date, retired by the time of the push.
            let retired = AllowedSigners::parse(&format!(
                "dev@example.com valid-before=\"20260701\" {public}\n"
            ))
            .unwrap();
            let push = "2026-08-01T00:00:00Z".parse::<Timestamp>().unwrap();
            assert!(
                retired
                    .verify_at(&sig, payload, "dev@example.com", &[noon])
                    .is_verified()
            );
            assert!(matches!(
                retired.verify_at(&sig, payload, "dev@example.com", &[noon, push]),
                SignatureStatus::Expired { .. }
            ));
            let early = AllowedSigners::parse(&format!(
                "dev@example.com valid-after=\"20270101\" {public}\n"
            ))
            .unwrap();
            assert!(matches!(
                early.verify(&sig, payload, "dev@example.com", noon),
                SignatureStatus::Expired { .. }
            ));
            let other_ns =
                AllowedSigners::parse(&format!("dev@example.com namespaces=\"file\" {public}\n"))
                    .unwrap();
            assert!(matches!(
                other_ns.verify(&sig, payload, "dev@example.com", noon),
                SignatureStatus::UnknownSigner { .. }
            ));
        }
        let (_, stranger_sig) = keygen_and_sign(dir.path(), "stranger", "ed25519", payload);
        let (public, _) = keygen_and_sign(dir.path(), "trusted", "ed25519", payload);
        let signers = AllowedSigners::parse(&format!("dev@example.com {public}\n")).unwrap();
        assert!(matches!(
            signers.verify(&stranger_sig, payload, "dev@example.com", noon),
            SignatureStatus::UnknownSigner { .. }
        ));
    }

    #[test]
    fn non_ssh_signatures_are_unsupported() {
        let s = AllowedSigners::default();
        let pgp = b"-----BEGIN PGP SIGNATURE-----\nabc\n-----END PGP SIGNATURE-----\n";
        assert_eq!(
            s.verify(pgp, b"x", "a@b", Timestamp::UNIX_EPOCH),
            SignatureStatus::Unsupported {
                kind: "OpenPGP".into()
            }
        );
        let junk = b"-----BEGIN SSH SIGNATURE-----\nnot base64\n-----END SSH SIGNATURE-----\n";
        assert!(matches!(
            s.verify(junk, b"x", "a@b", Timestamp::UNIX_EPOCH),
            SignatureStatus::Bad { .. }
        ));
    }

    #[test]
    fn bad_line_messages() {
        let message = |text: String| AllowedSigners::parse(&text).unwrap_err().1.to_string();
        assert_eq!(
            message(format!("a@b cert-authority {KEY}")),
            "cert-authority lines are not supported; list the signing keys themselves"
        );
        assert_eq!(
            message(format!("a@b frobnicate {KEY}")),
            "unknown option \"frobnicate\""
        );
        assert_eq!(
            message(format!("a@b valid-before=\"2026\" {KEY}")),
            "\"2026\" is not a time (YYYYMMDD[HHMM[SS]][Z])"
        );
        let no_digits = message(format!("a@b valid-before=\"tomorrow\" {KEY}"));
        assert!(no_digits.starts_with("\"tomorrow\": "), "{no_digits}");
        let no_such_day = message(format!("a@b valid-after=\"20261340\" {KEY}"));
        assert!(no_such_day.starts_with("\"20261340\": "), "{no_such_day}");
        assert_eq!(message("a@b".to_string()), "no key after the principals");
        assert_eq!(
            message("a@b ssh-ed25519".to_string()),
            "no key data after \"ssh-ed25519\""
        );
        let bad_key = message("a@b ssh-ed25519 notbase64!!".to_string());
        assert!(
            bad_key.starts_with("not a valid ssh-ed25519 key: "),
            "{bad_key}"
        );
        assert_eq!(message(format!("\"a@b {KEY}")), "unclosed quote");
    }
}
