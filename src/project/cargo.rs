//! A Cargo project's packages: the root package and the workspace members its `Cargo.toml`
//! names (globs such as `crates/*` expanded over the directories that hold a `Cargo.toml`,
//! `exclude` honoured), each with its package name, which is what nextest calls its test
//! binaries (`rand_distr::value_stability` for `rand_distr/tests/value_stability.rs`).

use crate::error::InputError;
use crate::source::Source;

/// One package of the project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Package {
    /// `package.name` in its `Cargo.toml`.
    pub name: String,
    /// Its directory, repository-relative; empty for the root package.
    pub dir: String,
}

impl Package {
    /// The directory of its integration tests (`tests`, `rand_distr/tests`).
    pub fn tests_dir(&self) -> String {
        if self.dir.is_empty() {
            "tests".to_string()
        } else {
            format!("{}/tests", self.dir)
        }
    }
}

/// The packages of the Cargo project at the root of `source`, root package first; empty when
/// there is no root `Cargo.toml`. `dirs` is every directory of the project that holds a
/// `Cargo.toml` (the files listed), for expanding member globs.
pub fn packages(source: &dyn Source, manifests: &[String]) -> Result<Vec<Package>, InputError> {
    let Some(root) = read_manifest(source, "Cargo.toml")? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    if let Some(name) = package_name(&root) {
        out.push(Package {
            name,
            dir: String::new(),
        });
    }
    let workspace = root.get("workspace").and_then(toml::Value::as_table);
    let list = |key: &str| -> Result<Vec<globset::GlobMatcher>, InputError> {
        let Some(items) = workspace
            .and_then(|w| w.get(key))
            .and_then(|v| v.as_array())
        else {
            return Ok(Vec::new());
        };
        items
            .iter()
            .filter_map(|v| v.as_str())
            .map(|p| {
                globset::GlobBuilder::new(p.trim_start_matches("./").trim_end_matches('/'))
                    .literal_separator(true)
                    .build()
                    .map(|g| g.compile_matcher())
                    .map_err(|e| InputError::new("Cargo.toml", format!("`workspace.{key}`: {e}")))
            })
            .collect()
    };
    let members = list("members")?;
    let exclude = list("exclude")?;
    for manifest in manifests {
        let Some(dir) = manifest.strip_suffix("/Cargo.toml") else {
            continue;
        };
        if !members.iter().any(|m| m.is_match(dir)) || exclude.iter().any(|m| m.is_match(dir)) {
            continue;
        }
        if let Some(name) = read_manifest(source, manifest)?
            .as_ref()
            .and_then(package_name)
        {
            out.push(Package {
                name,
                dir: dir.to_string(),
            });
        }
    }
    Ok(out)
}

/// `package.name` in `dir/Cargo.toml`, `None` when there is no such manifest or it names no
/// package.
pub fn package_name_at(source: &dyn Source, dir: &str) -> Result<Option<String>, InputError> {
    Ok(read_manifest(source, &format!("{dir}/Cargo.toml"))?
        .as_ref()
        .and_then(package_name))
}

fn read_manifest(source: &dyn Source, rel: &str) -> Result<Option<toml::Table>, InputError> {
    let Some(bytes) = source.read(rel)? else {
        return Ok(None);
    };
    let text = String::from_utf8(bytes).map_err(|_| InputError::new(rel, "is not UTF-8"))?;
    toml::from_str(&text)
        .map(Some)
        .map_err(|e| InputError::new(rel, format!("does not parse as TOML ({})", e.message())))
}

fn package_name(manifest: &toml::Table) -> Option<String> {
    manifest
        .get("package")?
        .get("name")?
        .as_str()
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::WorkTree;
    use crate::workspace::Workspace;

    #[test]
    fn members_by_name_and_glob_with_exclusions() {
        let dir = tempfile::tempdir().unwrap();
        let write = |rel: &str, text: &str| {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write(
            "Cargo.toml",
            "[package]\nname = \"rand\"\n[workspace]\nmembers = [\"rand_distr\", \"crates/*\"]\nexclude = [\"crates/old\"]\n",
        );
        write(
            "rand_distr/Cargo.toml",
            "[package]\nname = \"rand_distr\"\n",
        );
        write("crates/a/Cargo.toml", "[package]\nname = \"a-crate\"\n");
        write("crates/old/Cargo.toml", "[package]\nname = \"old\"\n");
        write("crates/a/sub/Cargo.toml", "[package]\nname = \"nested\"\n");
        write("benches/Cargo.toml", "[package]\nname = \"benches\"\n");
        let ws = Workspace::at(dir.path());
        let manifests: Vec<String> = [
            "rand_distr/Cargo.toml",
            "crates/a/Cargo.toml",
            "crates/old/Cargo.toml",
            "crates/a/sub/Cargo.toml",
            "benches/Cargo.toml",
        ]
        .map(String::from)
        .to_vec();
        let got = packages(&WorkTree { ws: &ws }, &manifests).unwrap();
        let got: Vec<(&str, &str)> = got
            .iter()
            .map(|p| (p.name.as_str(), p.dir.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("rand", ""),
                ("rand_distr", "rand_distr"),
                ("a-crate", "crates/a")
            ]
        );
    }

    #[test]
    fn no_manifest_no_packages_and_a_broken_one_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::at(dir.path());
        assert!(packages(&WorkTree { ws: &ws }, &[]).unwrap().is_empty());
        std::fs::write(dir.path().join("Cargo.toml"), "[package\n").unwrap();
        let e = packages(&WorkTree { ws: &ws }, &[]).unwrap_err();
        assert_eq!(e.path, std::path::Path::new("Cargo.toml"));
    }
}
