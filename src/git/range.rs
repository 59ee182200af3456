//! Which commits a range brings: `A..B`, `A...B` (B's commits since the merge base), a single
//! commit, or the default `@{upstream}..HEAD`; and the base revision whose policy applies.

use anyhow::{Context as _, anyhow};
use git2::{Oid, Repository, RevparseMode, Sort};

/// A resolved range: judge the commits reachable from `tip` and not from `base`.
#[derive(Debug, Clone)]
pub struct Range {
    /// The revision the policy is read from; `None` when the range starts at a root commit.
    pub base: Option<Oid>,
    pub tip: Oid,
    /// The range as the user wrote it (or the default).
    pub spec: String,
}

/// Resolves `spec` (`None`: the current branch's upstream to HEAD).
pub fn resolve(repo: &Repository, spec: Option<&str>) -> anyhow::Result<Range> {
    let spec_text = spec.unwrap_or("@{upstream}..HEAD");
    let revspec = repo.revparse(spec_text).map_err(|e| {
        if spec.is_none() {
            anyhow!(
                "the current branch has no upstream ({}); pass a range such as origin/main..HEAD",
                e.message()
            )
        } else {
            anyhow!("cannot resolve range {spec_text:?}: {}", e.message())
        }
    })?;
    let peel = |o: Option<&git2::Object>, what: &str| -> anyhow::Result<Oid> {
        let o = o.ok_or_else(|| anyhow!("range {spec_text:?} has no {what} revision"))?;
        Ok(o.peel_to_commit()
            .with_context(|| format!("{what} of {spec_text:?} is not a commit"))?
            .id())
    };
    let mode = revspec.mode();
    let (base, tip) = if mode.contains(RevparseMode::MERGE_BASE) {
        let a = peel(revspec.from(), "start")?;
        let b = peel(revspec.to(), "end")?;
        let base = repo
            .merge_base(a, b)
            .with_context(|| format!("{spec_text:?}: the two sides have no merge base"))?;
        (Some(base), b)
    } else if mode.contains(RevparseMode::RANGE) {
        (
            Some(peel(revspec.from(), "start")?),
            peel(revspec.to(), "end")?,
        )
    } else {
        // A single commit: that commit alone, judged by its first parent's policy.
        let tip = peel(revspec.from(), "single")?;
        let commit = repo.find_commit(tip)?;
        (commit.parent_id(0).ok(), tip)
    };
    Ok(Range {
        base,
        tip,
        spec: spec_text.to_string(),
    })
}

/// The commits reachable from `tip` but not from any of `hide`, oldest first.
pub fn commits(repo: &Repository, tip: Oid, hide: &[Oid]) -> anyhow::Result<Vec<Oid>> {
    let mut walk = repo.revwalk()?;
    walk.set_sorting(Sort::TOPOLOGICAL | Sort::REVERSE)?;
    walk.push(tip)?;
    for &h in hide {
        walk.hide(h)?;
    }
    let mut out = Vec::new();
    for id in walk {
        out.push(id.context("walking the commit graph")?);
    }
    Ok(out)
}
