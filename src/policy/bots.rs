//! `[[bots]]`: a named bot may make the one kind of change it exists for on a set of
//! protected paths (Dependabot the `@version` of a workflow's `uses:`, pre-commit-ci the
//! `rev:` of `.pre-commit-config.yaml`, Renovate the version pins of a lockfile), and nothing
//! else. Each kind is judged on the parsed files, before and after: the change is allowed when
//! the two are equal once the values the kind may change are set aside. Any other byte a bot
//! changes in a protected path is judged as any agent's edit.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// The kinds of change a bot may be allowed, as the ledger spells them.
pub const KINDS: &[&str] = &["action-version", "pre-commit-rev", "lockfile-pins"];

/// One kind of change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BotChange {
    /// The `@ref` of `uses:` values in GitHub workflows and actions.
    ActionVersion,
    /// The `rev:` of each repository of a `.pre-commit-config.yaml`.
    PreCommitRev,
    /// Version pins, hashes and resolved URLs of packages already in a lockfile.
    LockfilePins,
}

impl BotChange {
    pub fn parse(name: &str) -> Option<BotChange> {
        match name {
            "action-version" => Some(BotChange::ActionVersion),
            "pre-commit-rev" => Some(BotChange::PreCommitRev),
            "lockfile-pins" => Some(BotChange::LockfilePins),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            BotChange::ActionVersion => "action-version",
            BotChange::PreCommitRev => "pre-commit-rev",
            BotChange::LockfilePins => "lockfile-pins",
        }
    }

    /// Whether `old` becoming `new` at `path` is this kind of change and no other: both read
    /// (a file added, removed or unreadable is not), and equal once what the kind may change
    /// is set aside.
    pub fn allows(self, path: &str, old: &str, new: &str) -> bool {
        match self {
            BotChange::ActionVersion => same_yaml(old, new, &mut without_uses_refs),
            BotChange::PreCommitRev => same_yaml(old, new, &mut without_revs),
            BotChange::LockfilePins => same_lockfile(path, old, new),
        }
    }
}

/// One `[[bots]]` entry.
#[derive(Debug, Clone)]
pub struct BotAllowance {
    /// The bot's e-mail, exactly as the ledger writes it (matched without case).
    pub who: String,
    pub paths: Vec<String>,
    pub set: GlobSet,
    pub change: BotChange,
}

/// `[[bots]]`, in ledger order.
#[derive(Debug, Clone, Default)]
pub struct BotsPolicy {
    pub allowances: Vec<BotAllowance>,
}

impl BotsPolicy {
    /// The allowances of the bot whose e-mail is `email`.
    pub fn of(&self, email: &str) -> Vec<&BotAllowance> {
        self.allowances
            .iter()
            .filter(|a| a.who.eq_ignore_ascii_case(email))
            .collect()
    }
}

/// Why `who` cannot name a bot: a glob would let any identity that fits it in.
pub fn check_who(who: &str) -> Result<String, String> {
    let who = who.replace("\\[", "[").replace("\\]", "]");
    if who.contains(['*', '?', '{', '}']) {
        return Err("name the bot's own e-mail exactly, without `*`, `?` or `{}`: an allowance goes to one identity, e.g. \"49699333+dependabot[bot]@users.noreply.github.com\"".into());
    }
    if !who.contains('@') || who.chars().any(char::is_whitespace) {
        return Err("not an e-mail address: name the bot's commit e-mail, e.g. \"49699333+dependabot[bot]@users.noreply.github.com\"".into());
    }
    Ok(who)
}

/// The glob set of an allowance's `paths` (git's glob rules: `*` stays within a directory).
pub fn path_set(paths: &[String]) -> Result<GlobSet, globset::Error> {
    let mut set = GlobSetBuilder::new();
    for path in paths {
        set.add(GlobBuilder::new(path).literal_separator(true).build()?);
    }
    set.build()
}

/// Whether `old` and `new` parse as YAML and are equal once `strip` has set aside what may
/// change.
fn same_yaml(old: &str, new: &str, strip: &mut dyn FnMut(&mut serde_norway::Value)) -> bool {
    let parse = |t: &str| serde_norway::from_str::<serde_norway::Value>(t).ok();
    let (Some(mut old), Some(mut new)) = (parse(old), parse(new)) else {
        return false;
    };
    strip(&mut old);
    strip(&mut new);
    old == new
}

/// Every `uses: owner/repo[/path]@ref` value as `owner/repo[/path]@`: the action stays what
/// it was, its ref may move. `docker://` images and local actions (no `@`) stay whole.
fn without_uses_refs(value: &mut serde_norway::Value) {
    use serde_norway::Value;
    match value {
        Value::Mapping(map) => {
            for (key, inner) in map.iter_mut() {
                match (key.as_str(), &mut *inner) {
                    (Some("uses"), Value::String(uses)) => {
                        if let Some(at) = uses.find('@') {
                            uses.truncate(at + 1);
                        }
                    }
                    _ => without_uses_refs(inner),
                }
            }
        }
        Value::Sequence(items) => items.iter_mut().for_each(without_uses_refs),
        Value::Tagged(tagged) => without_uses_refs(&mut tagged.value),
        _ => {}
    }
}

/// The `rev` of each entry of the top-level `repos` list set aside.
fn without_revs(value: &mut serde_norway::Value) {
    let Some(repos) = value
        .get_mut("repos")
        .and_then(serde_norway::Value::as_sequence_mut)
    else {
        return;
    };
    for repo in repos {
        if let Some(map) = repo.as_mapping_mut() {
            map.remove("rev");
        }
    }
}

/// The keys whose values are a package's pin: its version, where it was resolved from and
/// what it hashes to (npm, Cargo, Poetry, uv, Pipenv, pnpm).
const PIN_KEYS: &[&str] = &[
    "version",
    "resolved",
    "integrity",
    "checksum",
    "hash",
    "hashes",
    "sha256",
    "content-hash",
    "url",
    "sdist",
    "wheels",
    "files",
    "size",
    "upload-time",
    "specifier",
];

/// Whether lockfile `old` became `new` by pins alone: read by the file's kind (JSON, TOML,
/// YAML, or a pip requirements file), the same packages with the same structure once every
/// pin is set aside. A lockfile of another kind is never a pins-only change.
fn same_lockfile(path: &str, old: &str, new: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    if name.ends_with(".json") {
        let parse = |t: &str| serde_json::from_str::<serde_json::Value>(t).ok();
        let (Some(old), Some(new)) = (parse(old), parse(new)) else {
            return false;
        };
        return json_pins_aside(old) == json_pins_aside(new);
    }
    if name.ends_with(".lock") || name.ends_with(".toml") {
        let parse = |t: &str| t.parse::<toml::Table>().ok();
        let (Some(old), Some(new)) = (parse(old), parse(new)) else {
            return false;
        };
        let aside = |t: toml::Table| json_pins_aside(serde_json::to_value(t).unwrap_or_default());
        return aside(old) == aside(new);
    }
    if name.ends_with(".yaml") || name.ends_with(".yml") {
        let parse = |t: &str| serde_norway::from_str::<serde_json::Value>(t).ok();
        let (Some(old), Some(new)) = (parse(old), parse(new)) else {
            return false;
        };
        return json_pins_aside(old) == json_pins_aside(new);
    }
    if name.ends_with(".txt") || name.ends_with(".in") {
        return requirements_aside(old) == requirements_aside(new);
    }
    false
}

/// `value` with every `PIN_KEYS` value removed, and each `dependencies` entry written `name
/// version` (Cargo.lock) cut to its name.
fn json_pins_aside(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(k, _)| !PIN_KEYS.contains(&k.as_str()))
                .map(|(k, v)| {
                    let v = if k == "dependencies" {
                        names_only(v)
                    } else {
                        json_pins_aside(v)
                    };
                    (k, v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(json_pins_aside).collect()),
        other => other,
    }
}

/// A Cargo.lock `dependencies` list (`"serde 1.0.200"`, `"serde 1.0.200 (registry+...)"`)
/// as names; any other value as `json_pins_aside` leaves it.
fn names_only(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|item| match item {
                    Value::String(s) => {
                        Value::String(s.split_whitespace().next().unwrap_or("").to_string())
                    }
                    other => json_pins_aside(other),
                })
                .collect(),
        ),
        other => json_pins_aside(other),
    }
}

/// A pip requirements file's requirements, each without its version and hashes: comments,
/// blank lines and continuations aside, what is required stays.
fn requirements_aside(text: &str) -> Vec<String> {
    let joined = text.replace("\\\n", " ");
    joined
        .lines()
        .map(|line| line.split(" #").next().unwrap_or(line).trim())
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| {
            line.split_whitespace()
                .filter(|word| !word.starts_with("--hash"))
                .map(|word| match word.find("==") {
                    Some(at) => &word[..at],
                    None => word,
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const WORKFLOW: &str = "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4.1.0\n      - uses: actions/setup-python@0a5c61591373683505ea898e09a3ea4f39ef2b9c # v5.0.0\n        with:\n          python-version: '3.12'\n      - run: python -m pytest\n";

    #[test]
    fn action_version_allows_refs_of_uses_and_nothing_else() {
        let kind = BotChange::ActionVersion;
        let bumped = WORKFLOW
            .replace("checkout@v4.1.0", "checkout@v4.2.0")
            .replace(
                "setup-python@0a5c61591373683505ea898e09a3ea4f39ef2b9c # v5.0.0",
                "setup-python@82c7e631bb3cdc910f68e0081d67478d79c6982d # v5.1.0",
            );
        assert!(kind.allows(".github/workflows/ci.yml", WORKFLOW, &bumped));
        for (what, changed) in [
            (
                "a run line",
                bumped.replace("python -m pytest", "python -m pytest -k 'not slow'"),
            ),
            (
                "another action",
                WORKFLOW.replace("actions/checkout@v4.1.0", "evil/checkout@v4.1.0"),
            ),
            ("a with input", bumped.replace("'3.12'", "'3.8'")),
            ("a step added", format!("{bumped}      - run: true\n")),
            ("unreadable", "jobs: [".to_string()),
        ] {
            assert!(
                !kind.allows(".github/workflows/ci.yml", WORKFLOW, &changed),
                "{what}"
            );
        }
    }

    #[test]
    fn pre_commit_rev_allows_revs_alone() {
        let config = "repos:\n  - repo: https://github.com/astral-sh/ruff-pre-commit\n    rev: v0.4.0\n    hooks:\n      - id: ruff\n";
        let kind = BotChange::PreCommitRev;
        assert!(kind.allows(
            ".pre-commit-config.yaml",
            config,
            &config.replace("v0.4.0", "v0.5.1")
        ));
        assert!(!kind.allows(
            ".pre-commit-config.yaml",
            config,
            &config.replace("id: ruff", "id: ruff\n        args: [--exit-zero]")
        ));
        assert!(!kind.allows(
            ".pre-commit-config.yaml",
            config,
            &config.replace("astral-sh/ruff-pre-commit", "evil/ruff-pre-commit")
        ));
    }

    #[test]
    fn lockfile_pins_allows_versions_hashes_and_sources_of_the_same_packages() {
        let kind = BotChange::LockfilePins;
        let cargo = "version = 4\n\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\ndependencies = [\n \"serde 1.0.200\",\n]\n\n[[package]]\nname = \"serde\"\nversion = \"1.0.200\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\nchecksum = \"aa\"\n";
        let bumped = cargo
            .replace("1.0.200", "1.0.201")
            .replace("checksum = \"aa\"", "checksum = \"bb\"");
        assert!(kind.allows("Cargo.lock", cargo, &bumped));
        let added = format!("{bumped}\n[[package]]\nname = \"evil\"\nversion = \"1.0.0\"\n");
        assert!(!kind.allows("Cargo.lock", cargo, &added));
        let source = cargo.replace(
            "registry+https://github.com/rust-lang/crates.io-index",
            "git+https://evil",
        );
        assert!(!kind.allows("Cargo.lock", cargo, &source));

        let npm = "{\"packages\": {\"node_modules/jest\": {\"version\": \"29.7.0\", \"resolved\": \"https://r/jest-29.7.0.tgz\", \"integrity\": \"sha512-a\"}}}";
        assert!(
            kind.allows(
                "package-lock.json",
                npm,
                &npm.replace("29.7.0", "29.8.0")
                    .replace("sha512-a", "sha512-b")
            )
        );
        assert!(!kind.allows(
            "package-lock.json",
            npm,
            &npm.replace("node_modules/jest", "node_modules/evil")
        ));

        let pip = "# pinned\nrequests==2.31.0 \\\n    --hash=sha256:aa\nurllib3==2.2.1\n";
        assert!(kind.allows(
            "requirements.txt",
            pip,
            &pip.replace("2.31.0", "2.32.0").replace(":aa", ":bb")
        ));
        assert!(!kind.allows("requirements.txt", pip, &format!("{pip}evil==1.0\n")));
        assert!(!kind.allows("yarn.lock", "a", "b"));
    }

    #[test]
    fn who_is_one_exact_e_mail() {
        assert_eq!(
            check_who("49699333+dependabot\\[bot\\]@users.noreply.github.com").unwrap(),
            "49699333+dependabot[bot]@users.noreply.github.com"
        );
        assert!(check_who("*dependabot*@users.noreply.github.com").is_err());
        assert!(check_who("dependabot[bot]").is_err());
    }
}
