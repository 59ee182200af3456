//! What the server says, not the pusher: settings from the repository's git config (never
//! from the ledger, which the pushed commits could change), the authenticated pusher that
//! forges export, and the push options.

use std::path::PathBuf;
use std::time::Duration;

use git2::Repository;

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
}

impl ServerConfig {
    pub fn read(repo: &Repository) -> anyhow::Result<ServerConfig> {
        let config = repo.config()?.snapshot()?;
        let string = |key: &str| config.get_string(key).ok().filter(|s| !s.trim().is_empty());
        let timeout = match config.get_string("guard.timeout") {
            Ok(text) => {
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
            Err(_) => Duration::from_secs(4),
        };
        let mut bypass = Vec::new();
        if let Ok(mut entries) = config.multivar("guard.bypass", None) {
            while let Some(Ok(entry)) = entries.next() {
                if let Ok(value) = entry.value() {
                    bypass.extend(
                        value
                            .split(',')
                            .map(str::trim)
                            .filter(|s| !s.is_empty())
                            .map(str::to_string),
                    );
                }
            }
        }
        Ok(ServerConfig {
            default_branch: string("guard.defaultBranch"),
            timeout,
            bypass,
            audit_log: string("guard.auditLog").map(PathBuf::from),
            artifacts: string("guard.artifacts"),
            allowed_signers: string("guard.allowedSigners").map(PathBuf::from),
            ledger: string("guard.ledger"),
        })
    }
}

/// The authenticated pusher as the forge exports it, first found wins: GitHub Enterprise,
/// GitLab, Gitea/Forgejo, a good signed push certificate, then HTTP authentication.
pub fn pusher_from_env() -> Option<String> {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
    var("GITHUB_USER_LOGIN")
        .or_else(|| var("GL_USERNAME"))
        .or_else(|| var("GITEA_PUSHER_NAME"))
        .or_else(|| {
            // A good signature on a certificate with a fresh nonce: a replayed certificate
            // (nonce status other than OK) names nobody.
            (var("GIT_PUSH_CERT_STATUS").as_deref() == Some("G")
                && var("GIT_PUSH_CERT_NONCE_STATUS").as_deref() == Some("OK"))
            .then(|| var("GIT_PUSH_CERT_SIGNER"))
            .flatten()
        })
        .or_else(|| var("REMOTE_USER"))
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
