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
        let name = path.rsplit('/').next().unwrap_or(path);
        match self {
            BotChange::ActionVersion => {
                (name.ends_with(".yml") || name.ends_with(".yaml"))
                    && same_yaml(old, new, &mut |v| without_uses_refs(v, false))
            }
            BotChange::PreCommitRev => {
                matches!(name, ".pre-commit-config.yaml" | ".pre-commit-config.yml")
                    && same_yaml(old, new, &mut without_revs)
            }
            BotChange::LockfilePins => same_lockfile(name, old, new),
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

/// Every `uses: owner/repo[/path]@ref` of a step (an item of a `steps` list) or of a job
/// (a reusable workflow) as `owner/repo[/path]@`: the action stays what it was, its ref may
/// move, but not to `refs/...` (a pull request's head is anyone's). `docker://` images,
/// local actions and any other `uses` stay whole. `in_steps`: `value` is an item of `steps`
/// or a job.
fn without_uses_refs(value: &mut serde_norway::Value, in_steps: bool) {
    use serde_norway::Value;
    match value {
        Value::Mapping(map) => {
            for (key, inner) in map.iter_mut() {
                let key = key.as_str().unwrap_or_default();
                match (key, &mut *inner) {
                    ("uses", Value::String(uses)) if in_steps => {
                        if let Some(at) = action_ref_at(uses) {
                            uses.truncate(at + 1);
                        }
                    }
                    ("steps", Value::Sequence(steps)) => {
                        for step in steps {
                            without_uses_refs(step, true);
                        }
                    }
                    ("jobs", Value::Mapping(jobs)) => {
                        for (_, job) in jobs.iter_mut() {
                            without_uses_refs(job, true);
                        }
                    }
                    _ => without_uses_refs(inner, false),
                }
            }
        }
        Value::Sequence(items) => items.iter_mut().for_each(|v| without_uses_refs(v, false)),
        Value::Tagged(tagged) => without_uses_refs(&mut tagged.value, in_steps),
        _ => {}
    }
}

/// Where the `@` of an action reference `owner/repo[/path]@ref` stands, when `uses` is one
/// whose ref a bot may move: owner and repository named, no `docker://` or local path, a
/// ref of letters, digits, `.`, `-`, `_` and `/` that is not a `refs/` name or `..`.
fn action_ref_at(uses: &str) -> Option<usize> {
    let (action, reference) = uses.split_once('@')?;
    let plain = |part: &str| {
        !part.is_empty()
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    let mut parts = action.split('/');
    let (owner, repo) = (parts.next()?, parts.next()?);
    let ok = plain(owner)
        && plain(repo)
        && !owner.starts_with('.')
        && parts.all(plain)
        && !reference.is_empty()
        && !reference.starts_with("refs/")
        && !reference.contains("..")
        && reference
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'));
    ok.then_some(action.len())
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
        if let Some(rev) = repo.get_mut("rev").filter(|r| r.is_string()) {
            *rev = serde_norway::Value::String(String::new());
        }
    }
}

/// The keys whose values are a package's pin: its version and what it hashes to (npm,
/// Cargo, Poetry, uv, Pipenv, pnpm). A value may change; the key may not come or go.
const PIN_KEYS: &[&str] = &[
    "version",
    "integrity",
    "checksum",
    "hash",
    "hashes",
    "sha256",
    "content-hash",
    "size",
    "upload-time",
];

/// Keys whose values are where a package is downloaded from: the path may change with the
/// version, the scheme and host may not (`https://registry.npmjs.org/`).
const URL_KEYS: &[&str] = &["resolved", "url"];

/// Keys under which nothing may change: where packages come from (`[package.source]`,
/// Pipfile.lock's `_meta`).
const FIXED_KEYS: &[&str] = &["source", "_meta", "sources"];

/// How a lockfile, known by its name, is read.
enum LockKind {
    Json,
    Toml,
    Yaml,
    Requirements,
}

fn lock_kind(name: &str) -> Option<LockKind> {
    match name {
        "package-lock.json" | "npm-shrinkwrap.json" | "Pipfile.lock" | "composer.lock" => {
            Some(LockKind::Json)
        }
        "Cargo.lock" | "poetry.lock" | "uv.lock" | "pdm.lock" => Some(LockKind::Toml),
        "pnpm-lock.yaml" => Some(LockKind::Yaml),
        _ if (name.ends_with(".txt") || name.ends_with(".in"))
            && (name.contains("requirements") || name.contains("constraints")) =>
        {
            Some(LockKind::Requirements)
        }
        _ => None,
    }
}

/// Whether lockfile `old` became `new` by pins alone: read by the file's name (JSON, TOML,
/// YAML, or a pip requirements file), the same packages with the same structure once every
/// pin is set aside. Any other file is never a pins-only change.
fn same_lockfile(name: &str, old: &str, new: &str) -> bool {
    let same_parsed = |a: Option<serde_json::Value>, b: Option<serde_json::Value>| match (a, b) {
        (Some(a), Some(b)) => pins_aside(a, false) == pins_aside(b, false),
        _ => false,
    };
    match lock_kind(name) {
        Some(LockKind::Json) => {
            let parse = |t: &str| serde_json::from_str::<serde_json::Value>(t).ok();
            same_parsed(parse(old), parse(new))
        }
        Some(LockKind::Toml) => {
            let parse = |t: &str| {
                t.parse::<toml::Table>()
                    .ok()
                    .and_then(|t| serde_json::to_value(t).ok())
            };
            same_parsed(parse(old), parse(new))
        }
        Some(LockKind::Yaml) => {
            let parse = |t: &str| serde_norway::from_str::<serde_json::Value>(t).ok();
            same_parsed(parse(old), parse(new))
        }
        Some(LockKind::Requirements) => same_requirements(old, new),
        None => false,
    }
}

/// `value` with every `PIN_KEYS` value blanked, each `URL_KEYS` value cut to its scheme and
/// host, and each `dependencies` entry written `name version` (Cargo.lock) cut to its name;
/// under `FIXED_KEYS` (or `fixed`) nothing is set aside.
fn pins_aside(value: serde_json::Value, fixed: bool) -> serde_json::Value {
    use serde_json::Value;
    if fixed {
        return value;
    }
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| {
                    let v = match (k.as_str(), v) {
                        (key, v) if FIXED_KEYS.contains(&key) => v,
                        (key, _) if PIN_KEYS.contains(&key) => Value::Null,
                        (key, Value::String(url)) if URL_KEYS.contains(&key) => {
                            Value::String(origin_of(&url))
                        }
                        ("dependencies", v) => names_only(v),
                        (_, v) => pins_aside(v, false),
                    };
                    (k, v)
                })
                .collect(),
        ),
        Value::Array(items) => {
            Value::Array(items.into_iter().map(|v| pins_aside(v, false)).collect())
        }
        other => other,
    }
}

/// `https://host/` of an `https://` or `http://` URL; any other text whole (a `git+ssh:`
/// source may not change at all).
fn origin_of(url: &str) -> String {
    for scheme in ["https://", "http://"] {
        if let Some(rest) = url.strip_prefix(scheme) {
            let host = rest.split('/').next().unwrap_or("");
            return format!("{scheme}{host}/");
        }
    }
    url.to_string()
}

/// A Cargo.lock `dependencies` list (`"serde 1.0.200"`, `"serde 1.0.200 (registry+...)"`)
/// as names; any other value as `pins_aside` leaves it.
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
                    other => pins_aside(other, false),
                })
                .collect(),
        ),
        other => pins_aside(other, false),
    }
}

/// Whether pip requirements `old` became `new` by pins alone: line for line the same,
/// except that a line `name==version` (with `[extras]`, `--hash=sha256:HEX` words and a
/// closing `\`) may change its version and hashes, and a line of `--hash=` words its hashes.
/// Every other line (comments, options, markers, `-r`, URLs) stays byte for byte.
fn same_requirements(old: &str, new: &str) -> bool {
    let (old, new): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    old.len() == new.len()
        && old.iter().zip(&new).all(|(a, b)| {
            a == b || matches!((pin_shape(a), pin_shape(b)), (Some(x), Some(y)) if x == y)
        })
}

/// What stays of a pinned requirement line when its version and hashes are set aside:
/// its indentation, name and extras, how many hashes, and whether it continues; `None` for
/// any other line.
fn pin_shape(line: &str) -> Option<(String, usize, bool)> {
    let indent: String = line.chars().take_while(|c| *c == ' ').collect();
    let mut words: Vec<&str> = line.split_whitespace().collect();
    let continues = words.last() == Some(&"\\");
    if continues {
        words.pop();
    }
    let is_hash = |w: &str| {
        w.strip_prefix("--hash=sha256:")
            .is_some_and(|h| h.len() == 64 && h.chars().all(|c| c.is_ascii_hexdigit()))
    };
    let (name, hashes) = match words.split_first() {
        Some((first, rest)) if !first.starts_with("--") => {
            let (name, version) = first.split_once("==")?;
            let named = !name.is_empty()
                && name.chars().all(|c| {
                    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '[' | ']' | ',')
                });
            let versioned = !version.is_empty()
                && version
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '!' | '+' | '-' | '_'));
            if !(named && versioned) {
                return None;
            }
            (name.to_ascii_lowercase(), rest)
        }
        _ => (String::new(), words.as_slice()),
    };
    if !hashes.iter().all(|w| is_hash(w)) || (name.is_empty() && hashes.is_empty()) {
        return None;
    }
    Some((format!("{indent}{name}"), hashes.len(), continues))
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
        // The rev may move, not go; and only in a pre-commit configuration.
        let gone = config.replace("    rev: v0.4.0\n", "");
        assert!(!kind.allows(".pre-commit-config.yaml", config, &gone));
        let bumped = config.replace("v0.4.0", "v0.5.1");
        assert!(!kind.allows("other.yaml", config, &bumped));
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

        let (aa, bb) = ("a".repeat(64), "b".repeat(64));
        let pip =
            format!("# pinned\nrequests==2.31.0 \\\n    --hash=sha256:{aa}\nurllib3==2.2.1\n");
        let bumped = pip.replace("2.31.0", "2.32.0").replace(&aa, &bb);
        assert!(kind.allows("requirements.txt", &pip, &bumped));
        assert!(!kind.allows("requirements.txt", &pip, &format!("{pip}evil==1.0\n")));
        assert!(!kind.allows("yarn.lock", "a", "b"));
        // Found in review: a comment ending in `\` that pip does not continue, a marker
        // after the version, an option read as a pin, another index.
        for (what, changed) in [
            (
                "comment continued",
                format!("{bumped}# bump \\\nevil-pkg==6.6.6\n"),
            ),
            (
                "marker",
                bumped.replace("urllib3==2.2.1", "urllib3==2.2.1;python_version<\"0\""),
            ),
            ("option", bumped.replace("urllib3==2.2.1", "-r base.txt==x")),
            (
                "index",
                bumped.replace("# pinned", "--index-url https://evil.example/simple"),
            ),
        ] {
            assert!(!kind.allows("requirements.txt", &pip, &changed), "{what}");
        }
        // Sources and download hosts stay; pin keys neither come nor go.
        let poetry = "[[package]]\nname = \"a\"\nversion = \"1.0\"\n\n[package.source]\ntype = \"legacy\"\nurl = \"https://pypi.example/simple\"\n";
        assert!(kind.allows("poetry.lock", poetry, &poetry.replace("1.0", "1.1")));
        let moved = poetry.replace("pypi.example", "evil.example");
        assert!(!kind.allows("poetry.lock", poetry, &moved));
        let npm2 = npm.replace("https://r/jest-29.7.0.tgz", "https://evil.example/jest.tgz");
        assert!(!kind.allows("package-lock.json", npm, &npm2));
        let dropped = npm.replace(", \"integrity\": \"sha512-a\"", "");
        assert!(!kind.allows("package-lock.json", npm, &dropped));
        // A file whose name is no lockfile's is never a pins-only change.
        assert!(!kind.allows(".github/workflows/ci.yml", "a: 1\n", "a: 2\n"));
        let pipfile = "{\"default\": {\"a\": {\"version\": \"==1.0\"}}}";
        assert!(kind.allows("Pipfile.lock", pipfile, &pipfile.replace("1.0", "1.1")));
    }

    #[test]
    fn action_version_keeps_docker_local_and_pull_request_refs_fixed() {
        let kind = BotChange::ActionVersion;
        let with = |uses: &str| format!("jobs:\n  t:\n    steps:\n      - uses: {uses}\n");
        for (from, to) in [
            ("docker://alpine@sha256:aaaa", "docker://alpine@sha256:bbbb"),
            ("./local@v1", "./local@v2"),
            (
                "actions/setup-python@v5",
                "actions/setup-python@refs/pull/999/head",
            ),
            (
                "actions/setup-python@v5",
                "actions/setup-python@v5/../../evil",
            ),
        ] {
            assert!(!kind.allows("ci.yml", &with(from), &with(to)), "{to}");
        }
        assert!(kind.allows("ci.yml", &with("a/b/sub@v1"), &with("a/b/sub@v2")));
        // Reusable workflows are a job's `uses`; a `uses` key elsewhere (an input) stays.
        let job = |r: &str| format!("jobs:\n  t:\n    uses: org/wf/.github/workflows/x.yml@{r}\n");
        assert!(kind.allows("ci.yml", &job("v1"), &job("v2")));
        let input = |r: &str| {
            format!(
                "jobs:\n  t:\n    steps:\n      - uses: a/b@v1\n        with:\n          uses: x/y@{r}\n"
            )
        };
        assert!(!kind.allows("ci.yml", &input("v1"), &input("v2")));
        // Only YAML files.
        assert!(!kind.allows(".gitattributes", "a: 1\n", "a:\n  1\n"));
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
