//! Reading git with libgit2. The only module that imports `git2` (a test in
//! `tests/integration/layering.rs` holds the rest of `src/` to that): it opens the
//! repository, reads its config and refs, resolves ranges, reads commits (identities,
//! trailers, signatures, files), finds changes to protected paths and the files a commit
//! changed, and serves a commit's tree as a `Source`. It never writes to the repository (in
//! pre-receive the pushed objects are in quarantine).

pub mod changed;
pub mod commit;
pub mod config;
mod date_walk;
/// The commit-header reader of the date walk, for the fuzz targets (`fuzz/`).
#[doc(hidden)]
pub use date_walk::fuzzing as date_walk_fuzzing;
pub mod fsck;
pub mod graph;
mod id;
pub mod lineage;
pub mod merge;
mod oid_hash;
pub mod pack;
pub mod path_variants;
pub mod protected;
pub mod range;
pub mod raw_tree;
pub mod refs;
pub mod tree_source;
pub mod trees;
mod walk_order;
pub mod worktree_copy;

/// The largest file guard reads as text from git: the policy files (ledger, freeze file,
/// lockfile, allowed signers), harness files it compares section by section, property tests.
/// Humans write these; a larger one is refused from its object header, before libgit2 inflates
/// it: a 1 GiB ledger (a few hundred KiB pushed, zeros compress) used to be parsed until
/// `guard.timeout` ran out. Fixtures, which are hashed, not read as text, have no limit.
pub const MAX_TEXT_BLOB: usize = 32 << 20;

/// The blob `id`'s bytes, unless it is larger than [`MAX_TEXT_BLOB`] (`path` names it in the
/// error).
pub(crate) fn text_blob<'r>(
    repo: &'r git2::Repository,
    id: Oid,
    path: &str,
) -> Result<git2::Blob<'r>, git2::Error> {
    let (size, _) = repo.odb()?.read_header(id)?;
    if size > MAX_TEXT_BLOB {
        return Err(too_large(path, size, id));
    }
    repo.find_blob(id)
}

/// The error for a text file larger than [`MAX_TEXT_BLOB`].
fn too_large(path: &str, size: usize, id: Oid) -> git2::Error {
    git2::Error::from_str(&format!(
        "{path} is {size} bytes in git (blob {id}); guard reads the files it judges as text (policy, tests, what commit rules check) up to {} MiB",
        MAX_TEXT_BLOB >> 20
    ))
}

/// The bytes of the blob `id`.
pub fn blob(repo: &git2::Repository, id: Oid) -> Result<Vec<u8>, git2::Error> {
    let object = repo.find_object(id, Some(git2::ObjectType::Blob))?;
    let blob = object
        .as_blob()
        .ok_or_else(|| git2::Error::from_str("not a blob"))?;
    Ok(blob.content().to_vec())
}

/// An open repository, as the engine and the hooks hold it: they pass it along to this
/// module's functions and read nothing through it themselves. libgit2's handle stays inside
/// `git/`, whose functions take it (a `&Repository` coerces to it through `Deref`), so that
/// no libgit2 type is in a signature outside this module.
pub struct Repository(git2::Repository);

impl std::ops::Deref for Repository {
    type Target = git2::Repository;

    fn deref(&self) -> &git2::Repository {
        &self.0
    }
}

impl Repository {
    /// A new, empty bare repository at `path`, for tests outside this module.
    #[cfg(test)]
    pub fn init_bare(path: impl AsRef<std::path::Path>) -> Result<Repository, git2::Error> {
        git2::Repository::init_bare(path).map(Repository)
    }
}
// The rest of the crate names objects by guard's own id; libgit2's stays in here.
use git2::Oid;
pub use id::{NotAnId, ObjectId};

/// Writes `bytes` as an object of `kind` (`"blob"`, `"tree"` or `"commit"`), unchecked: tests
/// outside this module build hand-made and malformed objects with it.
#[cfg(test)]
pub fn write_raw_object(repo: &git2::Repository, kind: &str, bytes: &[u8]) -> ObjectId {
    let kind = match kind {
        "blob" => git2::ObjectType::Blob,
        "tree" => git2::ObjectType::Tree,
        "commit" => git2::ObjectType::Commit,
        other => panic!("no object kind {other}"),
    };
    id::from_git2(repo.odb().unwrap().write(kind, bytes).unwrap()).unwrap()
}

/// Opens the repository the way git does for a hook or a command: `GIT_DIR`,
/// `GIT_OBJECT_DIRECTORY` and `GIT_ALTERNATE_OBJECT_DIRECTORIES` from the environment when
/// set (so a pre-receive hook sees quarantined objects), else discovery from the current
/// directory.
pub fn open() -> anyhow::Result<Repository> {
    // Re-hashing every object read costs a fifth of a history scan. The objects were checked
    // when they entered the repository (index-pack, or receive-pack for a push), so guard
    // trusts the object database as git itself does on read.
    git2::opts::strict_hash_verification(false);
    // guard reads the real objects: libgit2 (1.9) has no replace-ref support, so a
    // `refs/replace/*` ref changes nothing it reads. It does honour `info/grafts` and
    // `shallow`, files only an admin (or `receive.shallowUpdate`) writes.
    let repo = git2::Repository::open_from_env().map_err(|e| {
        // An object format libgit2 does not know (neither SHA-1 nor SHA-256): say so, rather
        // than "not in a git repository".
        if e.code() == git2::ErrorCode::Owner {
            owner_error(&e)
        } else if e.message().contains("object format") {
            anyhow::anyhow!(
                "this repository's object format is one guard cannot read (it reads SHA-1 and SHA-256 repositories): {}",
                e.message()
            )
        } else {
            anyhow::Error::new(e).context(
                "not in a git repository (or any parent): run guard check inside a clone, or pass -C DIR",
            )
        }
    })?;
    Ok(Repository(repo))
}

/// The files of the work tree at `root` that git does not ignore, as `git ls-files --cached
/// --others --exclude-standard` lists them (submodules left out), repository-relative and
/// `/`-separated: what `guard init` looks at, so that virtualenvs, build output and other
/// ignored files are not read, while files not yet added are. Names that are not UTF-8 are
/// left out.
pub fn tracked_files(root: &std::path::Path) -> anyhow::Result<Vec<String>> {
    use anyhow::Context as _;
    let repo = git2::Repository::open(root)
        .with_context(|| format!("cannot open the git repository at {}", root.display()))?;
    let index = repo.index().context("cannot read git's index")?;
    let mut files: Vec<String> = index
        .iter()
        .filter(|e| e.mode & 0o170000 != 0o160000)
        .filter_map(|e| String::from_utf8(e.path).ok())
        .collect();
    let mut options = git2::StatusOptions::new();
    options
        .include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .exclude_submodules(true);
    let statuses = repo
        .statuses(Some(&mut options))
        .context("cannot list the work tree's untracked files")?;
    files.extend(
        statuses
            .iter()
            .filter(|s| s.status().contains(git2::Status::WT_NEW))
            .filter_map(|s| s.path().ok().map(str::to_string)),
    );
    files.sort_unstable();
    files.dedup();
    Ok(files)
}

/// `err` marked `Internal` when it comes from the repository's object store itself (a
/// truncated or corrupt object, a zlib stream that does not inflate, an I/O failure, memory
/// running out): not the input's fault, and reported as `kind: "internal"`. A missing
/// object, a bad revision or an unreadable policy stay the input's.
pub fn mark_store_failure(err: anyhow::Error) -> anyhow::Error {
    let store = err.chain().any(|cause| {
        cause.downcast_ref::<git2::Error>().is_some_and(|e| {
            matches!(
                e.class(),
                git2::ErrorClass::Zlib
                    | git2::ErrorClass::Os
                    | git2::ErrorClass::NoMemory
                    | git2::ErrorClass::Odb
            ) && e.code() != git2::ErrorCode::NotFound
        })
    });
    if store && crate::error::ErrorKind::of(&err) != crate::error::ErrorKind::Internal {
        err.context(crate::error::Internal(
            "the repository's object store could not be read; `git fsck` says what is wrong with it".into(),
        ))
    } else {
        err
    }
}

/// Another handle on the repository whose git directory is `git_dir` (`Repository::path`;
/// libgit2's `Repository` is not `Sync`: each thread that reads objects needs its own),
/// opened as [`open`] opens one: from git's environment, so that a hook's quarantined objects
/// and alternate object directories are visible through it too. `None` when it cannot be
/// opened.
pub fn reopen(git_dir: &std::path::Path) -> Option<Repository> {
    git2::Repository::open_ext(
        git_dir,
        git2::RepositoryOpenFlags::FROM_ENV | git2::RepositoryOpenFlags::NO_SEARCH,
        std::iter::empty::<&std::ffi::OsStr>(),
    )
    .ok()
    .map(Repository)
}

/// Pack files up to this size (those of every object directory a handle reads, together) are
/// read through readers of each thread's own (`reopen_apart`). The readers' windows share
/// `PACK_MAPPED_LIMIT`, and how much of a pack each touches decides whether they fit, so the
/// bound is a measured one: below it the readers of their own made `guard check` faster;
/// well above it they kept unmapping each other's windows (BENCHMARKS.md, "Measured
/// choices", M3).
const APART_PACKS_UP_TO: u64 = (PACK_MAPPED_LIMIT as u64) * 2 / 3;

/// The object directories a handle opened from git's environment reads, in the order libgit2
/// adds them: each of `GIT_ALTERNATE_OBJECT_DIRECTORIES` (colon-separated; empty entries
/// name nothing), then `GIT_OBJECT_DIRECTORY`, or the repository's own `objects` without it.
/// In a pre-receive hook these are the push's quarantine and the repository's objects.
/// `object_dir` and `alternates` are those two variables' values.
fn object_dirs(
    repo: &git2::Repository,
    object_dir: Option<&std::ffi::OsStr>,
    alternates: Option<&std::ffi::OsStr>,
) -> Vec<std::path::PathBuf> {
    let mut dirs: Vec<std::path::PathBuf> = alternates
        .map(|list| {
            std::env::split_paths(list)
                .filter(|dir| !dir.as_os_str().is_empty())
                .collect()
        })
        .unwrap_or_default();
    dirs.push(match object_dir {
        Some(dir) => dir.into(),
        None => repo.commondir().join("objects"),
    });
    dirs
}

/// The object directories a handle opened from git's environment reads ([`object_dirs`]),
/// or `None` when `GIT_OBJECT_DIRECTORY` is set but empty (it names no directory).
pub fn env_object_dirs(repo: &git2::Repository) -> Option<Vec<std::path::PathBuf>> {
    let object_dir = std::env::var_os("GIT_OBJECT_DIRECTORY");
    if object_dir.as_ref().is_some_and(|dir| dir.is_empty()) {
        return None;
    }
    Some(object_dirs(
        repo,
        object_dir.as_deref(),
        std::env::var_os("GIT_ALTERNATE_OBJECT_DIRECTORIES").as_deref(),
    ))
}

/// Whether the repository's pack files are small enough to be read through readers of each
/// thread's own (`APART_PACKS_UP_TO`): those of every object directory git's environment
/// names for it, or of its own. A pack directory that cannot be listed is not (one that does
/// not exist holds nothing), and neither is an empty `GIT_OBJECT_DIRECTORY`, which names no
/// directory (`reopen_apart` opens no handle for it).
pub fn packs_fit_apart(repo: &git2::Repository) -> bool {
    env_object_dirs(repo).is_some_and(|dirs| packs_up_to(&dirs, APART_PACKS_UP_TO))
}

/// Whether the `.pack` files in the `pack` directories of `dirs` total at most `bound` bytes.
fn packs_up_to(dirs: &[std::path::PathBuf], bound: u64) -> bool {
    let mut total = 0u64;
    for dir in dirs {
        let entries = match std::fs::read_dir(dir.join("pack")) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(_) => return false,
        };
        for entry in entries {
            let Ok(entry) = entry else {
                return false;
            };
            if entry.path().extension().is_some_and(|e| e == "pack") {
                let Ok(meta) = entry.metadata() else {
                    return false;
                };
                total = total.saturating_add(meta.len());
            }
        }
    }
    total <= bound
}

/// A handle like [`reopen`]'s whose object reads wait on no other handle's. libgit2 keeps one
/// reader per pack file path for the whole process (a lock held while it looks an object up
/// in the pack's index, a cache of delta bases, the mapped windows), so threads reading
/// through handles on the same path wait for each other at nearly every object. Handle `n`
/// (1, 2, ...) spells each object directory with `n` more `./` components, which libgit2
/// takes for other pack files: the same files, read through readers of its own.
///
/// Its object database is made of the same object directories as [`reopen`]'s, from git's
/// environment as libgit2 reads it (`object_dirs`: a hook's quarantine and the repository's
/// objects), each with its `info/alternates`; so both handles see the same objects, and a
/// short id (unique among what a handle sees) comes out the same through either. A caller
/// still takes what it reads as read, and a failure (a pack gone meanwhile) as a reason to
/// read through the usual handle, not as an answer. `None` when it cannot be opened, and
/// when the pack files are larger than `APART_PACKS_UP_TO` (readers of their own share
/// `PACK_MAPPED_LIMIT`).
pub fn reopen_apart(git_dir: &std::path::Path, n: usize) -> Option<Repository> {
    reopen_apart_from(
        git_dir,
        n,
        std::env::var_os("GIT_OBJECT_DIRECTORY").as_deref(),
        std::env::var_os("GIT_ALTERNATE_OBJECT_DIRECTORIES").as_deref(),
    )
}

/// [`reopen_apart`] with git's two object-directory variables given.
fn reopen_apart_from(
    git_dir: &std::path::Path,
    n: usize,
    object_dir: Option<&std::ffi::OsStr>,
    alternates: Option<&std::ffi::OsStr>,
) -> Option<Repository> {
    // An empty GIT_OBJECT_DIRECTORY names no directory (spelled apart it would name `/`).
    if object_dir.is_some_and(|dir| dir.is_empty()) {
        return None;
    }
    let repo = reopen(git_dir)?;
    let dirs = object_dirs(&repo, object_dir, alternates);
    if !packs_up_to(&dirs, APART_PACKS_UP_TO) {
        return None;
    }
    let odb = git2::Odb::new_ext(repo.object_format()).ok()?;
    for dir in &dirs {
        let spelled = format!("{}/{}", dir.to_str()?, "./".repeat(n));
        odb.add_disk_alternate(&spelled).ok()?;
    }
    repo.set_odb(&odb).ok()?;
    Some(repo)
}

/// Refuses a work tree at `root` that git itself would refuse because another user owns it
/// (and it is not a `safe.directory`). Commands that read the work tree rather than git call
/// this, so that they refuse where `git` and `guard check` do instead of quietly judging it.
/// Any other failure to open is left to the command (a plain directory is a workspace too).
pub fn refuse_unsafe_owner(root: &std::path::Path) -> anyhow::Result<()> {
    match git2::Repository::open(root) {
        Err(e) if e.code() == git2::ErrorCode::Owner => Err(owner_error(&e)),
        _ => Ok(()),
    }
}

/// What is wrong when libgit2 refuses a repository owned by another user, and the fix.
fn owner_error(e: &git2::Error) -> anyhow::Error {
    // libgit2 names the path it refused in quotes ("repository path '/srv/x/' is not owned
    // by current user"); the current directory stands in if a release words it otherwise.
    let path = e
        .message()
        .split('\'')
        .nth(1)
        .map(|p| p.trim_end_matches('/').to_string())
        .filter(|p| !p.is_empty())
        .or_else(|| {
            std::env::current_dir()
                .ok()
                .map(|d| d.display().to_string())
        })
        .unwrap_or_else(|| "<path>".to_string());
    anyhow::anyhow!(
        "the git repository at {path} belongs to another user, and git (and guard) refuse to read a repository someone else owns ({})\n  help: if you trust it, mark it safe: git config --global --add safe.directory {path}",
        e.message()
    )
}

/// The path of the entry `name` in the directory `prefix` (`""`: the root), the name lossily
/// decoded (it still counts as a change). Built without `format!`: the walks make one for
/// every entry a commit changes (BENCHMARKS.md, "Measured choices", M13).
pub(crate) fn path_in(prefix: &str, name: &[u8]) -> String {
    let name = String::from_utf8_lossy(name);
    if prefix.is_empty() {
        return name.into_owned();
    }
    let mut path = String::with_capacity(prefix.len() + 1 + name.len());
    path.push_str(prefix);
    path.push('/');
    path.push_str(&name);
    path
}

/// The object id `hex` names in `repo`: as many hex digits as the repository's ids have (40
/// for SHA-1, 64 for SHA-256). libgit2's plain `Oid::from_str` would read any id as SHA-1.
pub(crate) fn parse_id(repo: &git2::Repository, hex: &str) -> Result<Oid, git2::Error> {
    if hex.len() != 2 * hash_len(repo) {
        return Err(git2::Error::from_str(&format!(
            "{hex:?} is no object id of this repository (its ids have {} hex digits)",
            2 * hash_len(repo)
        )));
    }
    Oid::from_str_ext(hex, repo.object_format())
}

/// How many bytes the repository's object ids have: 20 (SHA-1) or 32 (SHA-256).
pub(crate) fn hash_len(repo: &git2::Repository) -> usize {
    match repo.object_format() {
        git2::ObjectFormat::Sha1 => 20,
        git2::ObjectFormat::Sha256 => 32,
    }
}

/// The repository's git directory (a bare repository's own directory).
pub fn git_dir(repo: &git2::Repository) -> &std::path::Path {
    repo.path()
}

/// The repository's work tree; `None` for a bare repository.
pub fn work_tree(repo: &git2::Repository) -> Option<&std::path::Path> {
    repo.workdir()
}

/// Runs `read` with libgit2's object cache off, and turns it on again after the outermost
/// such call. Reading a long range keeps every tree and commit it reads in that cache, which
/// costs more time (and memory) than it saves; the callers keep the few objects they read
/// again.
pub fn without_object_cache<T>(read: impl FnOnce() -> T) -> T {
    use std::sync::atomic::{AtomicUsize, Ordering};
    // How many calls are running (the cache is one switch for the whole process).
    static DEPTH: AtomicUsize = AtomicUsize::new(0);
    if DEPTH.fetch_add(1, Ordering::SeqCst) == 0 {
        git2::opts::enable_caching(false);
    }
    let out = read();
    if DEPTH.fetch_sub(1, Ordering::SeqCst) == 1 {
        git2::opts::enable_caching(true);
    }
    out
}

/// How much of the pack files libgit2 keeps mapped at once: a scan of a long history reads
/// trees from all over a pack, and by default libgit2 maps up to 8 GiB in 1 GiB windows, so
/// every page it touched stays in guard's resident memory (BENCHMARKS.md, "Measured
/// choices", M4). Windows beyond the limit are unmapped, oldest
/// first; their pages stay in the page cache, so mapping one again costs page faults, not
/// reads.
const PACK_WINDOW: usize = 32 << 20;
const PACK_MAPPED_LIMIT: usize = 96 << 20;

/// How much libgit2's object cache holds, counted in raw object bytes (libgit2's default is
/// 256 MiB). When libgit2's own walk lists a range without a commit-graph (`DateWalk` gave up
/// at an odd commit), every commit is read twice, the second time from this cache, sized to
/// hold a long range's commits within a bounded resident memory (BENCHMARKS.md, "Measured
/// choices", M4).
const OBJECT_CACHE: isize = 16 << 20;

/// Bounds libgit2's mapping of pack files (`PACK_MAPPED_LIMIT`) and its object cache
/// (`OBJECT_CACHE`).
///
/// # Safety
///
/// libgit2's global options are not synchronised: call this before any repository is
/// opened, while no other thread uses libgit2.
pub unsafe fn bound_libgit2_memory() {
    // SAFETY: the caller guarantees that no other thread uses libgit2 meanwhile.
    unsafe {
        let _ = git2::opts::set_mwindow_size(PACK_WINDOW);
        let _ = git2::opts::set_mwindow_mapped_limit(PACK_MAPPED_LIMIT);
        let _ = git2::opts::set_cache_max_size(OBJECT_CACHE);
    }
}

/// Lets libgit2 open a repository that another user owns. git trusts the repository it runs
/// a hook in; libgit2 would refuse one owned by another user (common on servers).
///
/// # Safety
///
/// libgit2's global options are not synchronised: call this before any repository is
/// opened, while no other thread uses libgit2.
pub unsafe fn trust_repositories_of_other_owners() {
    // SAFETY: the caller guarantees that no other thread uses libgit2 meanwhile.
    unsafe {
        let _ = git2::opts::set_verify_owner_validation(false);
    }
}

/// The abbreviated id git would show, at least 7 hex digits.
pub fn short_id(repo: &git2::Repository, id: ObjectId) -> String {
    let object = id::to_git2(id).and_then(|id| repo.find_object(id, None));
    match object {
        Ok(object) => object_short_id(&object),
        Err(_) => id.to_string()[..7].to_string(),
    }
}

/// `short_id` of an object already read (reading it again costs more than abbreviating it).
fn object_short_id(object: &git2::Object) -> String {
    object
        .short_id()
        .ok()
        .and_then(|buf| buf.as_str().ok().map(str::to_string))
        .unwrap_or_else(|| object.id().to_string()[..7].to_string())
}

/// Every `Key: value` line of a message (a one-word key, as git's trailers have), wherever it
/// stands; read up to a NUL byte like `trailers`. Only to explain a trailer git does not read.
pub fn trailer_lines(message: &[u8]) -> Vec<(String, String)> {
    let end = message
        .iter()
        .position(|&b| b == 0)
        .unwrap_or(message.len());
    String::from_utf8_lossy(&message[..end])
        .lines()
        .filter_map(|line| {
            let (key, value) = line.split_once(':')?;
            let (key, value) = (key.trim(), value.trim());
            (!key.is_empty() && !key.contains(char::is_whitespace) && !value.is_empty())
                .then(|| (key.to_string(), value.to_string()))
        })
        .collect()
}

/// The trailer block of a commit message by git's rules (libgit2's port of git's trailer
/// parser: only the last paragraph counts). CRLF line ends are read as LF, and a message
/// with a NUL byte is read up to it, since git itself stops there.
pub fn trailers(message: &[u8]) -> Vec<(String, String)> {
    let end = message
        .iter()
        .position(|&b| b == 0)
        .unwrap_or(message.len());
    let mut text = Vec::with_capacity(end);
    let mut i = 0;
    while i < end {
        if message[i] == b'\r' && message.get(i + 1) == Some(&b'\n') {
            i += 1;
            continue;
        }
        text.push(message[i]);
        i += 1;
    }
    match git2::message_trailers_bytes(text) {
        Ok(found) => found
            .iter()
            .map(|(k, v)| {
                (
                    String::from_utf8_lossy(k).trim().to_string(),
                    String::from_utf8_lossy(v).trim().to_string(),
                )
            })
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// A small random-number generator for tests that build many random inputs (xorshift32 from
/// `seed`, so that a failure repeats): each call gives a number below `n`.
#[cfg(test)]
pub(crate) fn test_random(seed: u32) -> impl FnMut(usize) -> usize {
    let mut state = seed;
    move |n: usize| {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        state as usize % n
    }
}

/// How many bytes the unit tests' repositories' ids have: `git init` follows
/// `GIT_DEFAULT_HASH`, and CI runs the tests of `git/` under `sha256` too.
#[cfg(test)]
pub(crate) fn test_hash_len() -> usize {
    match std::env::var("GIT_DEFAULT_HASH").as_deref() {
        Ok("sha256") => 32,
        _ => 20,
    }
}

/// The id `hex` spells (40 digits for SHA-1, 64 for SHA-256), if it is one.
#[cfg(test)]
pub(crate) fn test_oid(hex: &str) -> Option<Oid> {
    let format = match hex.len() {
        40 => git2::ObjectFormat::Sha1,
        64 => git2::ObjectFormat::Sha256,
        _ => return None,
    };
    Oid::from_str_ext(hex, format).ok()
}

/// `git` run in `dir` for unit tests: no system or user configuration, one identity and
/// date; its output, trimmed.
#[cfg(test)]
pub(crate) fn test_git(dir: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "A")
        .env("GIT_AUTHOR_EMAIL", "a@example.com")
        .env("GIT_COMMITTER_NAME", "A")
        .env("GIT_COMMITTER_EMAIL", "a@example.com")
        .env("GIT_AUTHOR_DATE", "2025-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2025-01-01T00:00:00Z")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(message: &[u8]) -> Vec<(String, String)> {
        trailers(message)
    }

    #[test]
    fn trailers_come_from_the_last_paragraph_only() {
        let msg = b"Update lock\n\nFixture-Lock: human\n\nSome more text.\n";
        assert!(
            keys(msg).is_empty(),
            "a trailer in the body is not a trailer"
        );
        let msg = b"Update lock\n\nBody text.\n\nFixture-Lock: human\nSigned-off-by: A <a@b>\n";
        assert_eq!(
            keys(msg),
            vec![
                ("Fixture-Lock".to_string(), "human".to_string()),
                ("Signed-off-by".to_string(), "A <a@b>".to_string())
            ]
        );
    }

    #[test]
    fn crlf_and_non_utf8_messages_are_read() {
        let msg = b"Update\r\n\r\nFixture-Lock: human\r\n";
        assert_eq!(
            keys(msg),
            vec![("Fixture-Lock".to_string(), "human".to_string())]
        );
        let msg = b"caf\xe9 \xff\n\nfixture-lock: human\n";
        assert_eq!(
            keys(msg),
            vec![("fixture-lock".to_string(), "human".to_string())]
        );
        let msg = b"nul\0\n\nFixture-Lock: human\n";
        assert!(keys(msg).is_empty());
    }

    #[test]
    fn subject_only_message_has_no_trailers() {
        assert!(keys(b"Fixture-Lock: human\n").is_empty());
    }

    #[test]
    fn trailer_lines_are_found_in_every_paragraph() {
        let msg = b"Fix: the subject\r\n\r\nFixture-Lock: human\r\nsee https://x.example/a:b\n\nSigned-off-by: A <a@b>\nnot a: trailer key\n";
        let found = trailer_lines(msg);
        assert_eq!(
            found,
            vec![
                ("Fix".to_string(), "the subject".to_string()),
                ("Fixture-Lock".to_string(), "human".to_string()),
                ("Signed-off-by".to_string(), "A <a@b>".to_string()),
            ]
        );
        assert!(trailer_lines(b"nul\0\n\nFixture-Lock: human\n").is_empty());
    }

    /// Threads get pack readers of their own only while all the packs fit
    /// `APART_PACKS_UP_TO`; past it they share the repository's (`reopen_apart` is `None`).
    #[test]
    fn large_packs_are_read_through_one_shared_reader() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(dir.path()).unwrap();
        let packs = dir.path().join("objects/pack");
        assert!(packs_fit_apart(&repo));
        assert!(reopen_apart(repo.path(), 1).is_some());
        // Sparse files: only their lengths count. Two packs at the bound together are over
        // it; other files in the directory do not count.
        let sized = |name: &str, len: u64| {
            let file = std::fs::File::create(packs.join(name)).unwrap();
            file.set_len(len).unwrap();
        };
        sized("pack-a.pack", APART_PACKS_UP_TO);
        sized("pack-a.idx", APART_PACKS_UP_TO);
        assert!(packs_fit_apart(&repo));
        sized("pack-b.pack", 1);
        assert!(!packs_fit_apart(&repo));
        assert!(reopen_apart(repo.path(), 1).is_none());
        assert!(reopen(repo.path()).is_some());
    }

    /// A hook's handles read the push's quarantine and the repository's objects, which git
    /// names in its environment: a handle with readers of its own reads the same directories
    /// (and gives the same short ids), and their packs count against the bound.
    #[test]
    fn readers_apart_read_the_object_directories_gits_environment_names() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(dir.path().join("repo.git")).unwrap();
        let own = repo.blob(b"in the repository\n").unwrap();
        let elsewhere = |name: &str, contents: &[u8]| {
            let other = Repository::init_bare(dir.path().join(name)).unwrap();
            let id = other.blob(contents).unwrap();
            (dir.path().join(name).join("objects"), id)
        };
        let (quarantine, pushed) = elsewhere("quarantine.git", b"pushed\n");
        let (alternate, borrowed) = elsewhere("alternate.git", b"borrowed\n");
        let alternates =
            std::env::join_paths([alternate.as_path(), std::path::Path::new("")]).unwrap();
        let apart = reopen_apart_from(
            repo.path(),
            1,
            Some(quarantine.as_os_str()),
            Some(&alternates),
        )
        .unwrap();
        for id in [pushed, borrowed] {
            assert!(apart.find_blob(id).is_ok(), "{id}");
        }
        // GIT_OBJECT_DIRECTORY stands for the repository's own objects, as it does for git.
        assert!(apart.find_blob(own).is_err());
        let plain = reopen_apart_from(repo.path(), 1, None, None).unwrap();
        assert!(plain.find_blob(own).is_ok());
        assert!(plain.find_blob(pushed).is_err());

        // A quarantined pack over the bound sends the handle back to the shared readers.
        let packs = quarantine.join("pack");
        std::fs::create_dir_all(&packs).unwrap();
        let file = std::fs::File::create(packs.join("pack-q.pack")).unwrap();
        file.set_len(APART_PACKS_UP_TO + 1).unwrap();
        assert!(reopen_apart_from(repo.path(), 1, Some(quarantine.as_os_str()), None).is_none());
        assert!(reopen_apart_from(repo.path(), 1, None, None).is_some());
        // An empty GIT_OBJECT_DIRECTORY would be `/` spelled apart: no such handle.
        assert!(reopen_apart_from(repo.path(), 1, Some(std::ffi::OsStr::new("")), None).is_none());
    }
}
