//! Small file-system helpers shared by commands that write files a human owns (the fixture
//! lockfile, a starter ledger). Owns how bytes reach the disk, not what they mean.

use std::io::{self, Write};
use std::path::Path;

/// Replaces `path` with `bytes` so that a crash or a full disk never leaves a half-written
/// file: the bytes go to a temporary file in the same directory (a rename is only atomic
/// within one file system), are flushed to disk, and the temporary file is then renamed over
/// the target. The target keeps its permissions; a new file gets `0o666` minus the umask,
/// like any file an editor creates.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    // A dot-prefixed name keeps the leftover of a killed process out of `ls` and out of
    // fixture globs such as `*.json`.
    builder.prefix(".guard-").suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // tempfile's default is 0o600, which would make a lockfile unreadable to the other
        // users of a shared server repository once it replaced the original.
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(dir)?;
    if let Ok(meta) = std::fs::metadata(path) {
        tmp.as_file().set_permissions(meta.permissions())?;
    }
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    sync_dir(dir);
    Ok(())
}

/// Flushes the directory entry so the rename itself survives a power cut. Best effort: the
/// new content is already in place, and some file systems refuse `fsync` on a directory, so a
/// failure here must not make the caller believe the write failed.
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_content_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("fixtures.lock");
        std::fs::write(&target, b"old old old old\n").unwrap();
        write_atomic(&target, b"new\n").unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"new\n");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("fixtures.lock")]);
    }

    #[test]
    fn creates_a_new_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("new.lock");
        write_atomic(&target, b"x").unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"x");
    }

    #[cfg(unix)]
    #[test]
    fn keeps_the_targets_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("fixtures.lock");
        std::fs::write(&target, b"old").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&target, b"new").unwrap();
        let mode = std::fs::metadata(&target).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
    }

    #[test]
    fn missing_directory_is_an_error_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("no/such/dir/fixtures.lock");
        assert!(write_atomic(&target, b"x").is_err());
        assert!(!target.exists());
    }
}
