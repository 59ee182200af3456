//! The server's audit log (`guard.auditLog`): how its lines reach the file and how it is read
//! back, with concurrent pushes writing and reading it at once. What the lines say is
//! `pre_receive`'s.
//!
//! Every writer takes an exclusive `flock` on the log and every reader a shared one: a write
//! in progress is never read half-done (a `read` running beside a `write` of the same file is
//! not atomic, and a torn last line would read as a line that is not JSON), and a write that
//! the disk or a size limit cut short can be undone before anyone sees it. Each line is one
//! `write` call on a file opened for appending, so even a writer that does not lock (an admin's
//! `echo >>`) cannot land inside it.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read as _, Write as _};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};

/// Appends `entry` as one JSON line. Waits at most `wait` for other writers and readers (each
/// holds the lock for the time of one read or one write); a line the file took only part of
/// (a full disk, a file size limit) is cut off again and reported, so the log never holds half
/// a line and the caller refuses what needed the line.
pub fn append(log: &Path, entry: &serde_json::Value, wait: Duration) -> anyhow::Result<()> {
    let mut line = entry.to_string();
    line.push('\n');
    // Made readable by the server's user only: it names pushers and what they did.
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(log)
        .with_context(|| format!("cannot open the audit log {}", log.display()))?;
    regular_file(&file).with_context(|| format!("cannot write the audit log {}", log.display()))?;
    lock_within(&file, wait)
        .with_context(|| format!("cannot lock the audit log {}", log.display()))?;
    // Every writer holds the lock, so the line goes where the file ends now.
    let start = file
        .metadata()
        .with_context(|| format!("cannot read the audit log {}", log.display()))?
        .len();
    // Past a file size limit the kernel kills the writer (SIGXFSZ) unless it ignores the
    // signal: the push would be rejected with no reason given. Ignored, the write fails
    // (EFBIG) or takes part of the line, and both are reported below.
    // SAFETY: setting a signal's disposition to "ignore" installs no handler.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    let written = loop {
        match file.write(line.as_bytes()) {
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            r => break r,
        }
    };
    match written {
        Ok(n) if n == line.len() => Ok(()),
        Ok(n) => {
            let undone = file.set_len(start);
            match undone {
                Ok(()) => bail!(
                    "the audit log {} took only {n} of the line's {} bytes (is its disk full, or a file size limit reached?); the part written was removed",
                    log.display(),
                    line.len()
                ),
                Err(e) => bail!(
                    "the audit log {} took only {n} of the line's {} bytes (is its disk full, or a file size limit reached?), and cutting off that part failed ({e}): a server admin removes the last, incomplete line",
                    log.display(),
                    line.len()
                ),
            }
        }
        Err(e) => Err(e).with_context(|| format!("cannot write the audit log {}", log.display())),
    }
}

/// The log's text, read under the shared lock (waiting as long as a writer holds it: the
/// hook's own timeout bounds the wait); `None` when there is no log yet.
pub fn read(log: &Path) -> std::io::Result<Option<String>> {
    let mut file = match File::open(log) {
        Ok(f) => f,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    regular_file(&file)?;
    lock::shared(&file)?;
    let mut text = String::new();
    file.read_to_string(&mut text)?;
    Ok(Some(text))
}

/// Refuses a log that is not a regular file: `/dev/null` would take every line and keep none,
/// and reading a device (`/dev/zero`, `/dev/full`) never ends.
fn regular_file(file: &File) -> std::io::Result<()> {
    if file.metadata()?.is_file() {
        Ok(())
    } else {
        Err(std::io::Error::new(
            ErrorKind::InvalidInput,
            "it is not a regular file",
        ))
    }
}

/// Takes the exclusive lock, trying for at most `wait`: a stopped process that holds it must
/// not hang the push (git has no hook timeout, and break-glass is decided before guard's own
/// timeout starts).
fn lock_within(file: &File, wait: Duration) -> std::io::Result<()> {
    let deadline = Instant::now() + wait;
    while !lock::try_exclusive(file)? {
        if Instant::now() >= deadline {
            return Err(std::io::Error::new(
                ErrorKind::TimedOut,
                format!("another process held it for more than {wait:?}"),
            ));
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    Ok(())
}

/// `flock(2)`; the lock goes with the file's last descriptor. (std's `File::lock` needs a
/// newer Rust than the crate's `rust-version`.)
#[cfg(unix)]
mod lock {
    use rustix::fs::{FlockOperation, flock};
    use std::fs::File;

    pub(super) fn shared(file: &File) -> std::io::Result<()> {
        Ok(flock(file, FlockOperation::LockShared)?)
    }

    /// `Ok(false)` when another process holds a lock.
    pub(super) fn try_exclusive(file: &File) -> std::io::Result<bool> {
        match flock(file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => Ok(true),
            Err(rustix::io::Errno::WOULDBLOCK) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }
}

/// Elsewhere the log is not locked: each line is still one append.
#[cfg(not(unix))]
mod lock {
    use std::fs::File;

    pub(super) fn shared(_: &File) -> std::io::Result<()> {
        Ok(())
    }

    pub(super) fn try_exclusive(_: &File) -> std::io::Result<bool> {
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_whole_lines() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("audit.log");
        let wait = Duration::from_secs(1);
        append(&log, &serde_json::json!({"n": 1}), wait).unwrap();
        append(&log, &serde_json::json!({"n": 2}), wait).unwrap();
        assert_eq!(read(&log).unwrap().unwrap(), "{\"n\":1}\n{\"n\":2}\n");
        assert_eq!(read(&dir.path().join("none.log")).unwrap(), None);
    }

    #[cfg(unix)]
    #[test]
    fn a_held_lock_is_waited_for_then_refused() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("audit.log");
        std::fs::write(&log, "").unwrap();
        let holder = File::open(&log).unwrap();
        assert!(lock::try_exclusive(&holder).unwrap());
        let e = append(&log, &serde_json::json!({}), Duration::from_millis(50)).unwrap_err();
        assert!(
            format!("{e:#}").starts_with("cannot lock the audit log ")
                && format!("{e:#}").contains("held it for more than 50ms"),
            "{e:#}"
        );
        assert_eq!(std::fs::read(&log).unwrap(), b"");
        drop(holder);
        append(&log, &serde_json::json!({}), Duration::from_millis(50)).unwrap();
        assert_eq!(std::fs::read(&log).unwrap(), b"{}\n");
        // A lock let go within the wait is waited for, not refused at once.
        let holder = File::open(&log).unwrap();
        assert!(lock::try_exclusive(&holder).unwrap());
        let releaser = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            drop(holder);
        });
        append(&log, &serde_json::json!({}), Duration::from_secs(30)).unwrap();
        releaser.join().unwrap();
        assert_eq!(std::fs::read(&log).unwrap(), b"{}\n{}\n");
    }

    #[cfg(unix)]
    #[test]
    fn a_log_that_is_not_a_regular_file_is_refused() {
        for device in ["/dev/null", "/dev/full"] {
            let e = append(
                Path::new(device),
                &serde_json::json!({}),
                Duration::from_secs(1),
            )
            .unwrap_err();
            assert_eq!(
                format!("{e:#}"),
                format!("cannot write the audit log {device}: it is not a regular file")
            );
        }
        // Reading /dev/zero would never end.
        let e = read(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(e.to_string(), "it is not a regular file");
        let dir = tempfile::tempdir().unwrap();
        assert!(read(dir.path()).is_err());
    }
}
