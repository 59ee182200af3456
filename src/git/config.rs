//! The repository's git config as guard reads it: the values of keys (the server's `guard.*`
//! settings are read through it; what they mean is `hooks::server`'s), and whether
//! receive-pack checks the objects a push brings (`receive.fsckObjects`).

use git2::Repository;

/// The repository's git config, read once (a snapshot: every value comes from the same read).
pub struct GitConfig {
    snapshot: git2::Config,
}

impl GitConfig {
    /// Reads the config of `repo` (its own file, and the global and system ones).
    pub fn read(repo: &Repository) -> Result<GitConfig, git2::Error> {
        Ok(GitConfig {
            snapshot: repo.config()?.snapshot()?,
        })
    }

    /// The value of `key` as written (the last one, for a key set more than once); `None`
    /// when unset or not UTF-8.
    pub fn string(&self, key: &str) -> Option<String> {
        self.snapshot.get_string(key).ok()
    }

    /// The boolean `key` as git reads one (`true`, `yes`, `on`, `1`, ...); `None` when unset,
    /// `Err` with the value when it is no boolean.
    pub fn boolean(&self, key: &str) -> Result<Option<bool>, String> {
        match self.snapshot.get_bool(key) {
            Ok(value) => Ok(Some(value)),
            Err(_) => match self.string(key) {
                None => Ok(None),
                Some(text) => Err(text),
            },
        }
    }

    /// Every value of the multi-valued `key`, in order (up to the first unreadable one).
    pub fn values(&self, key: &str) -> Vec<String> {
        let mut out = Vec::new();
        if let Ok(mut entries) = self.snapshot.multivar(key, None) {
            while let Some(Ok(entry)) = entries.next() {
                if let Ok(value) = entry.value() {
                    out.push(value.to_string());
                }
            }
        }
        out
    }

    /// Whether git checks the pushed objects: `receive.fsckObjects`, falling back to
    /// `transfer.fsckObjects`, as receive-pack reads them: from `git -c` settings passed down
    /// in the environment first, then the config files.
    pub fn fsck_objects(&self) -> bool {
        let env = |k: &str| std::env::var(k).ok();
        let setting =
            |key: &str| command_line_bool(key, env).or_else(|| self.snapshot.get_bool(key).ok());
        setting("receive.fsckObjects")
            .or_else(|| setting("transfer.fsckObjects"))
            .unwrap_or(false)
    }
}

/// A boolean that `git -c KEY=VALUE` (or a forge running git that way) passed to the hook:
/// in `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`, or in
/// `GIT_CONFIG_PARAMETERS`, where git writes each setting as `'key'='value'` with the key
/// lowercased. It only decides whether a warning is printed, so a form it misses costs a
/// warning, nothing more.
fn command_line_bool(key: &str, env: impl Fn(&str) -> Option<String>) -> Option<bool> {
    // git's spellings (libgit2 reads them as git does: true/yes/on, false/no/off, empty, or a
    // number), around blanks git would not allow there.
    let parse = |v: &str| git2::Config::parse_bool(v.trim()).ok();
    let count: usize = env("GIT_CONFIG_COUNT")
        .and_then(|c| c.trim().parse().ok())
        .unwrap_or(0);
    let mut found = None;
    for i in 0..count.min(1000) {
        let k = env(&format!("GIT_CONFIG_KEY_{i}")).unwrap_or_default();
        if k.eq_ignore_ascii_case(key) {
            let v = env(&format!("GIT_CONFIG_VALUE_{i}")).unwrap_or_default();
            found = parse(&v).or(found);
        }
    }
    if found.is_some() {
        return found;
    }
    let params = env("GIT_CONFIG_PARAMETERS")?;
    let key = key.to_ascii_lowercase();
    [("true", true), ("false", false)]
        .iter()
        .filter_map(|(v, b)| params.rfind(&format!("'{key}'='{v}'")).map(|at| (at, *b)))
        .max()
        .map(|(_, b)| b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fsck_setting_from_git_config_parameters() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                vars.iter()
                    .find(|(name, _)| *name == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let params = env(&[(
            "GIT_CONFIG_PARAMETERS",
            "'receive.fsckobjects'='false' 'core.x'='y' 'receive.fsckobjects'='true'",
        )]);
        assert_eq!(command_line_bool("receive.fsckObjects", params), Some(true));
        assert_eq!(command_line_bool("transfer.fsckObjects", params), None);
        let counted = env(&[
            ("GIT_CONFIG_COUNT", "2"),
            ("GIT_CONFIG_KEY_0", "Transfer.FsckObjects"),
            ("GIT_CONFIG_VALUE_0", "yes"),
            ("GIT_CONFIG_KEY_1", "transfer.fsckobjects"),
            ("GIT_CONFIG_VALUE_1", "off"),
        ]);
        assert_eq!(
            command_line_bool("transfer.fsckObjects", counted),
            Some(false)
        );
        assert_eq!(command_line_bool("receive.fsckObjects", env(&[])), None);
    }

    /// The spellings the hand-written parser this replaced accepted (any case, blanks
    /// around), and the numbers git reads as booleans too.
    #[test]
    fn command_line_booleans_in_every_spelling_git_reads() {
        let value = |v: &str| {
            let v = v.to_string();
            command_line_bool("receive.fsckObjects", move |k: &str| match k {
                "GIT_CONFIG_COUNT" => Some("1".to_string()),
                "GIT_CONFIG_KEY_0" => Some("receive.fsckobjects".to_string()),
                "GIT_CONFIG_VALUE_0" => Some(v.clone()),
                _ => None,
            })
        };
        for t in ["true", "TRUE", "Yes", "on", "1", " yes ", "2"] {
            assert_eq!(value(t), Some(true), "{t:?}");
        }
        for f in ["false", "No", "OFF", "0", "", "  "] {
            assert_eq!(value(f), Some(false), "{f:?}");
        }
        for bad in ["maybe", "tru", "yes please"] {
            assert_eq!(value(bad), None, "{bad:?}");
        }
    }
}
