//! How a `[protect]` entry (and every path glob written like one) is spelled and matched:
//! normalised, expanded to cover a directory, compiled case-insensitively; apart because the
//! policy types and other modules (git's protected paths, retest) use them too.

/// A `[protect]` entry as the tree paths it is matched against are written: `.` components
/// and empty ones (`a//b`) dropped, a trailing `/` kept (it means a directory). Refused: an
/// absolute path, `..`, a backslash that escapes nothing special to globs (a Windows
/// separator, which would match nothing), and an entry that names the root.
pub fn normalize_protect_pattern(raw: &str) -> Result<String, String> {
    let p = raw.trim();
    if p.starts_with('/') {
        return Err("must be relative to the repository root".into());
    }
    let mut chars = p.chars();
    while let Some(c) = chars.next() {
        if c == '\\' && !chars.next().is_some_and(|n| "*?[]{}\\,!-^".contains(n)) {
            return Err("write paths with `/`; `\\` only escapes a glob character".into());
        }
    }
    let parts: Vec<&str> = p
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    if parts.contains(&"..") {
        return Err("must not contain `..`".into());
    }
    if parts.is_empty() {
        return Err("names the repository root; name files or directories inside it".into());
    }
    let mut normal = parts.join("/");
    if p.ends_with('/') {
        normal.push('/');
    }
    Ok(normal)
}

/// What a `[protect]` entry covers: `./` dropped; a directory (`hooks/`, or a plain name
/// without glob characters such as `ci`) covers itself and everything under it.
pub fn expand_protect_pattern(raw: &str) -> Vec<String> {
    let mut p = raw.trim();
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    if let Some(dir) = p.strip_suffix('/') {
        let dir = dir.trim_end_matches('/');
        return vec![dir.to_string(), format!("{dir}/**")];
    }
    if p.contains(['*', '?', '[', '{']) {
        vec![p.to_string()]
    } else {
        vec![p.to_string(), format!("{p}/**")]
    }
}

/// A `[protect]` glob: over repository-relative paths, `*` within one directory, `**`
/// across, case-insensitive (a case variant replaces the file on some checkouts).
pub fn protect_glob(pattern: &str) -> Result<globset::Glob, globset::Error> {
    protect_glob_cased(pattern, true)
}

/// `protect_glob`, case-insensitive or not (for `CaselessGlobSet`).
pub fn protect_glob_cased(
    pattern: &str,
    case_insensitive: bool,
) -> Result<globset::Glob, globset::Error> {
    globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .case_insensitive(case_insensitive)
        .backslash_escape(true)
        .build()
}
