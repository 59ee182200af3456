//! Faults around the hook: each must reject the push (or refuse break-glass) with a clear
//! message and leave the repository, its refs and guard's own files as they were. The audit
//! log on a full disk, a read-only file, a size limit that cuts a line short, and an append in
//! progress while another push reads it.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::hermetic;
use crate::support::server::{GUARD, Pushed, Server, ZERO_ID};

/// A server that honours break-glass by `alice` and logs it to `log`.
fn break_glass_server(log: &Path) -> Server {
    let s = Server::new("");
    s.config("receive.advertisePushOptions", "true");
    s.config("guard.bypass", "alice");
    s.config("guard.auditLog", log.to_str().unwrap());
    s
}

/// `git push -o guard.bypass=outage origin main` by `alice`.
fn break_glass_push(s: &Server) -> Pushed {
    s.push_from(
        &s.work,
        &["-o", "guard.bypass=outage 42", "origin", "main"],
        &[("REMOTE_USER", "alice")],
    )
}

/// The push was judged as usual after break-glass was refused for a reason naming `why`.
#[track_caller]
fn assert_break_glass_refused(pushed: &Pushed, why: &str) {
    pushed.assert_rejected_with("remote: error: refs/heads/main: [agent_edit_protected]");
    assert!(
        pushed.lines().iter().any(|l| {
            l.starts_with("remote: warning: guard: break-glass refused: ") && l.contains(why)
        }),
        "no refusal naming {why:?}:\n{}",
        pushed.stderr
    );
}

#[test]
fn break_glass_is_refused_when_the_audit_log_is_on_a_full_disk() {
    // `/dev/full` refuses every write, as a full disk does; reading it never ends (it was read
    // to the end, as a log is, until the hook was killed for its memory). guard takes only a
    // regular file for a log: a write the disk refuses is the size-limit test's below.
    let s = break_glass_server(Path::new("/dev/full"));
    s.agent_edits_freeze("Emergency lease");
    let pushed = break_glass_push(&s);
    assert_break_glass_refused(
        &pushed,
        "cannot write the audit log /dev/full: it is not a regular file",
    );
    assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));
}

/// Makes `path` unwritable for this process, and writable again when dropped: root ignores
/// permission bits, so as root the file is made immutable (`chattr +i`).
struct ReadOnly<'a>(&'a Path);

impl<'a> ReadOnly<'a> {
    fn new(path: &'a Path) -> ReadOnly<'a> {
        let root = Command::new("id").arg("-u").output().unwrap().stdout == b"0\n";
        if root {
            let out = Command::new("chattr").arg("+i").arg(path).output().unwrap();
            assert!(
                out.status.success(),
                "chattr +i (the file system must support it): {}",
                String::from_utf8_lossy(&out.stderr)
            );
        } else {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o444)).unwrap();
        }
        let writable = std::fs::OpenOptions::new().append(true).open(path);
        assert!(writable.is_err(), "{} is still writable", path.display());
        ReadOnly(path)
    }
}

impl Drop for ReadOnly<'_> {
    fn drop(&mut self) {
        let _ = Command::new("chattr").arg("-i").arg(self.0).output();
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(self.0, std::fs::Permissions::from_mode(0o644));
    }
}

#[test]
fn break_glass_is_refused_when_the_audit_log_is_read_only() {
    let log = tempfile::tempdir().unwrap();
    let log = log.path().join("audit.log");
    let s = break_glass_server(&log);
    std::fs::write(&log, "").unwrap();
    let read_only = ReadOnly::new(&log);
    s.agent_edits_freeze("Emergency lease");
    let pushed = break_glass_push(&s);
    assert_break_glass_refused(&pushed, "cannot open the audit log");
    assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));
    drop(read_only);
    assert_eq!(std::fs::read(&log).unwrap(), b"", "nothing was logged");
}

/// One earlier break-glass line, padded to `len` bytes with its reason.
fn logged_line(len: usize) -> String {
    let head = format!(
        "{{\"event\":\"guard.bypass\",\"pusher\":\"alice\",\"refs\":[{{\"ref\":\"refs/heads/x\",\"old\":null,\"new\":\"{}\"}}],\"reason\":\"",
        "a".repeat(40)
    );
    let tail = "\"}\n";
    format!("{head}{}{tail}", "r".repeat(len - head.len() - tail.len()))
}

#[test]
fn a_line_the_audit_log_takes_only_in_part_refuses_break_glass_and_is_removed() {
    // A file size limit (as a full disk would) lets the log take only the first 50 bytes of
    // the new line. Writing the rest with a second write would get the process killed
    // (SIGXFSZ) and leave half a line; guard writes the line once, cuts off what the file
    // took, and refuses break-glass.
    let log_dir = tempfile::tempdir().unwrap();
    let log = log_dir.path().join("audit.log");
    let s = break_glass_server(&log);
    let before = logged_line(1000);
    std::fs::write(&log, &before).unwrap();
    let agent = s.agent_edits_freeze("Emergency lease");
    s.push(&["origin", "HEAD:refs/scratch/agent"])
        .assert_accepted();

    let mut cmd = hermetic(Command::new("prlimit"), s.home());
    cmd.arg(format!("--fsize={}", before.len() + 50))
        .args([GUARD, "hook", "pre-receive"])
        .current_dir(s.home())
        .env("GIT_DIR", &s.bare)
        .env("REMOTE_USER", "alice")
        .env("GIT_PUSH_OPTION_COUNT", "1")
        .env("GIT_PUSH_OPTION_0", "guard.bypass=outage 42");
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("prlimit (util-linux) is installed");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("{} {agent} refs/heads/main\n", s.base).as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "guard must refuse break-glass and judge the push (a signal means it was killed mid-write): {}\n{stderr}",
        out.status
    );
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("warning: guard: break-glass refused: ")
                && l.contains("took only 50 of the line's")
                && l.contains("the part written was removed")),
        "{stderr}"
    );
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("error: refs/heads/main: [agent_edit_protected]")),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&log).unwrap(), before);
}

/// Whether `/proc/locks` shows a process waiting for a lock on the file with inode `ino`.
fn lock_waiter_on(ino: u64) -> bool {
    let locks = std::fs::read_to_string("/proc/locks").unwrap();
    locks.lines().any(|l| {
        l.contains("->")
            && l.split_whitespace()
                .any(|field| field.rsplit(':').next() == Some(&ino.to_string()))
    })
}

#[test]
fn a_push_that_reads_the_audit_log_waits_for_an_append_in_progress() {
    // Another push's guard is appending a line: its first half is in the file, the rest is
    // still to come. A push that makes a ref reads the log (for deletions it recorded) and
    // must not take the half line for a broken log: it waits for the writer's lock.
    use std::os::unix::fs::MetadataExt;
    let log_dir = tempfile::tempdir().unwrap();
    let log = log_dir.path().join("audit.log");
    let s = break_glass_server(&log);
    let line = logged_line(300);
    std::fs::write(&log, &line).unwrap();
    let clean = s.human_change("README.md", "Clean");
    s.push(&["origin", "HEAD:refs/scratch/clean"])
        .assert_accepted();

    let mut writer = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    rustix::fs::flock(&writer, rustix::fs::FlockOperation::LockExclusive).unwrap();
    writer.write_all(&line.as_bytes()[..100]).unwrap();

    let mut cmd = hermetic(Command::new(GUARD), s.home());
    cmd.args(["hook", "pre-receive"])
        .current_dir(s.home())
        .env("GIT_DIR", &s.bare)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("{ZERO_ID} {clean} refs/heads/topic\n").as_bytes())
        .unwrap();
    let ino = std::fs::metadata(&log).unwrap().ino();
    // Up to 60 s for a loaded machine to get guard that far; no time is asserted.
    let mut waited = false;
    for _ in 0..2400 {
        if lock_waiter_on(ino) {
            waited = true;
            break;
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    writer.write_all(&line.as_bytes()[100..]).unwrap();
    drop(writer);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        waited,
        "guard read the log without waiting for the append in progress: {}\n{stderr}",
        out.status
    );
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("guard: 1 ref update accepted, 1 commit judged"),
        "{stderr}"
    );
}
