//! What the server says, not the pusher: settings from the repository's git config (never
//! from the ledger, which the pushed commits could change), the authenticated pusher that
//! forges export, and the push options.

use std::path::PathBuf;
use std::time::Duration;

use crate::git::Repository;
use crate::git::config::GitConfig;

/// `guard.*` settings of the bare repository.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// `guard.defaultBranch`: new refs are judged against it (else the repository's HEAD).
    pub default_branch: Option<String>,
    /// `guard.timeout` in seconds (default 4, under GitHub Enterprise's 5 s for all hooks).
    pub timeout: Duration,
    /// `guard.bypass`: pushers allowed to break glass (multi-valued, or comma-separated).
    pub bypass: Vec<String>,
    /// `guard.auditLog`: where break-glass pushes are logged, one JSON line each.
    pub audit_log: Option<PathBuf>,
    /// `guard.artifacts`: a directory template with `{commit}` or `{tree}`.
    pub artifacts: Option<String>,
    /// `guard.allowedSigners`: an allowed-signers file that overrides the ledger's.
    pub allowed_signers: Option<PathBuf>,
    /// `guard.ledger`: the ledger's path inside each revision, for projects that keep it
    /// elsewhere than `qa/merge_ledger.toml`.
    pub ledger: Option<String>,
    /// `guard.policyRef`: the ref whose ledger is in force for every push (else the default
    /// branch's).
    pub policy_ref: Option<String>,
    /// Whether git checks the pushed objects (`receive.fsckObjects`, else
    /// `transfer.fsckObjects`, as receive-pack reads them).
    pub fsck_objects: bool,
    /// `guard.mode = evaluate`: judge and report every push, reject none (a trial period
    /// before enforcing; the ledger's `mode` can ask the same).
    pub evaluate: bool,
    /// `guard.allowDelete`: the ledger's `[refs] allow_delete` holds without an audit log.
    /// Unset, a deletion the ledger allows is refused while guard.auditLog is unset: guard
    /// could not remember it, and the ref made again at an old commit would land as new.
    pub allow_unlogged_delete: bool,
}

impl ServerConfig {
    pub fn read(repo: &Repository) -> anyhow::Result<ServerConfig> {
        let config = GitConfig::read(repo)?;
        let string = |key: &str| config.string(key).filter(|s| !s.trim().is_empty());
        let timeout = match config.string("guard.timeout") {
            Some(text) => {
                let secs: f64 = text
                    .trim()
                    .trim_end_matches('s')
                    .parse()
                    .ok()
                    .filter(|s: &f64| s.is_finite() && *s > 0.0)
                    .ok_or_else(|| {
                        anyhow::anyhow!(
                            "git config guard.timeout = {text:?} is not a number of seconds"
                        )
                    })?;
                Duration::from_secs_f64(secs)
            }
            None => Duration::from_secs(4),
        };
        let bypass = config
            .values("guard.bypass")
            .iter()
            .flat_map(|value| value.split(','))
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        let evaluate = match string("guard.mode").as_deref().map(str::trim) {
            None | Some("enforce") => false,
            Some("evaluate") => true,
            Some(other) => anyhow::bail!(
                "git config guard.mode = {other:?} is neither \"enforce\" nor \"evaluate\""
            ),
        };
        let allow_unlogged_delete = config.boolean("guard.allowDelete").map_err(|value| {
            anyhow::anyhow!(
                "git config guard.allowDelete = {value:?} is not a boolean (true or false)"
            )
        })?;
        Ok(ServerConfig {
            allow_unlogged_delete: allow_unlogged_delete.unwrap_or(false),
            evaluate,
            default_branch: string("guard.defaultBranch"),
            timeout,
            bypass,
            audit_log: string("guard.auditLog").map(PathBuf::from),
            artifacts: string("guard.artifacts"),
            allowed_signers: string("guard.allowedSigners").map(PathBuf::from),
            ledger: string("guard.ledger"),
            policy_ref: string("guard.policyRef"),
            fsck_objects: config.fsck_objects(),
        })
    }
}

fn env_var(key: &str) -> Option<String> {
    std::env::var(key).ok().filter(|v| !v.trim().is_empty())
}

/// The signer of a signed push: a good signature on a certificate with a fresh nonce (a
/// replayed certificate, whose nonce status is other than OK, names nobody).
fn push_cert_signer() -> Option<String> {
    (env_var("GIT_PUSH_CERT_STATUS").as_deref() == Some("G")
        && env_var("GIT_PUSH_CERT_NONCE_STATUS").as_deref() == Some("OK"))
    .then(|| env_var("GIT_PUSH_CERT_SIGNER"))
    .flatten()
}

/// The authenticated pusher as the forge exports it, first found wins: GitHub Enterprise,
/// GitLab, Gitea/Forgejo, gitolite, a good signed push certificate, then HTTP
/// authentication. This is who may break glass.
pub fn pusher_from_env() -> Option<String> {
    env_var("GITHUB_USER_LOGIN")
        .or_else(|| env_var("GL_USERNAME"))
        .or_else(|| env_var("GITEA_PUSHER_NAME"))
        .or_else(|| env_var("GL_USER"))
        .or_else(push_cert_signer)
        .or_else(|| env_var("REMOTE_USER"))
}

/// Every identity the server names for this push, matched against `[agents] pushers`: the
/// pusher under each variable a forge sets (Gitea/Forgejo's e-mail as well as its name),
/// and the author of the pull request that GitHub Enterprise's merge button merges: merging
/// an agent's pull request lands the agent's work, so the push is the agent's. None of these
/// come from the pusher's side (push options do, and are never read here).
pub fn push_identities_from_env() -> Vec<String> {
    let mut out: Vec<String> = [
        "GITHUB_USER_LOGIN",
        "GITHUB_PULL_REQUEST_AUTHOR_LOGIN",
        "GL_USERNAME",
        "GITEA_PUSHER_NAME",
        "GITEA_PUSHER_EMAIL",
        "GL_USER",
    ]
    .iter()
    .filter_map(|k| env_var(k))
    .chain(push_cert_signer())
    .chain(env_var("REMOTE_USER"))
    .collect();
    out.dedup();
    out
}

/// The push options (`git push -o ...`), which git passes only when the server advertises
/// them (`receive.advertisePushOptions`). They are unauthenticated text from the pusher.
pub fn push_options_from_env() -> Vec<String> {
    let count: usize = std::env::var("GIT_PUSH_OPTION_COUNT")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (0..count.min(1000))
        .filter_map(|i| std::env::var(format!("GIT_PUSH_OPTION_{i}")).ok())
        .collect()
}

/// The break-glass reason in the push options (`guard.bypass=REASON`).
pub fn bypass_reason(options: &[String]) -> Option<String> {
    options.iter().find_map(|o| {
        o.strip_prefix("guard.bypass=")
            .or_else(|| (o == "guard.bypass").then_some(""))
            .map(|r| r.trim().to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ServerConfig::read` of a repository whose config sets `guard.timeout` to `value`.
    fn timeout(value: &str) -> anyhow::Result<Duration> {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(dir.path()).unwrap();
        repo.config()
            .unwrap()
            .set_str("guard.timeout", value)
            .unwrap();
        ServerConfig::read(&repo).map(|c| c.timeout)
    }

    #[test]
    fn guard_timeout_is_a_positive_finite_number_of_seconds() {
        assert_eq!(timeout("2.5").unwrap(), Duration::from_millis(2500));
        assert_eq!(timeout(" 30s ").unwrap(), Duration::from_secs(30));
        // Zero would reject every push as late; infinity would wait forever (and not fit a
        // Duration); neither is a timeout.
        for bad in ["0", "-1", "inf", "NaN", "soon", ""] {
            let err = timeout(bad).unwrap_err().to_string();
            assert_eq!(
                err,
                format!("git config guard.timeout = {bad:?} is not a number of seconds"),
            );
        }
    }

    #[test]
    fn bypass_reason_from_options() {
        let opts = vec![
            "ci.skip".to_string(),
            "guard.bypass=prod outage #123".to_string(),
        ];
        assert_eq!(bypass_reason(&opts).as_deref(), Some("prod outage #123"));
        assert_eq!(
            bypass_reason(&["guard.bypass".to_string()]).as_deref(),
            Some("")
        );
        assert_eq!(bypass_reason(&["guard.bypassed=x".to_string()]), None);
    }
}
