//! Faults around the hook: each must reject the push (or refuse break-glass) with a clear
//! message and leave the repository, its refs and guard's own files as they were. The audit
//! log on a full disk, read-only, taking part of a line, or being appended to while another
//! push reads it; guard killed mid-run; CI artifacts that are there but cannot be read; a
//! malformed commit and a damaged pack; huge and deeply nested policy files; a tree of a
//! million entries; 100,000 commits at `guard.timeout`; `guard lock` killed mid-write or
//! unable to write. README's Reliability section lists them.

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
            let mode = if path.is_dir() { 0o555 } else { 0o444 };
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        let writable = if path.is_dir() {
            std::fs::File::create(path.join(".probe")).map(|_| ())
        } else {
            std::fs::OpenOptions::new()
                .append(true)
                .open(path)
                .map(|_| ())
        };
        assert!(writable.is_err(), "{} is still writable", path.display());
        ReadOnly(path)
    }
}

impl Drop for ReadOnly<'_> {
    fn drop(&mut self) {
        let _ = Command::new("chattr").arg("-i").arg(self.0).output();
        use std::os::unix::fs::PermissionsExt;
        let mode = if self.0.is_dir() { 0o755 } else { 0o644 };
        let _ = std::fs::set_permissions(self.0, std::fs::Permissions::from_mode(mode));
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

#[test]
fn an_audit_log_that_cannot_be_opened_is_not_read_as_no_log() {
    // The log tells which protected refs were deleted (a ref made again there is judged as
    // new, not as the old one's continuation). A log that exists but cannot be opened (here
    // a symlink to itself: ELOOP; as root, permissions do not stop a read) must not count as
    // an empty one: a push that creates a ref cannot be judged.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.log");
    let s = break_glass_server(&log);
    std::os::unix::fs::symlink(&log, &log).unwrap();
    assert!(std::fs::File::open(&log).is_err());
    s.human_change("NOTES.md", "Notes");
    let pushed = s.push(&["origin", "HEAD:refs/heads/topic"]);
    assert!(!pushed.ok, "accepted:\n{}", pushed.stderr);
    assert!(
        pushed.stderr.contains("cannot read the audit log")
            && pushed.stderr.contains("which says which refs were deleted"),
        "{}",
        pushed.stderr
    );
    assert_eq!(s.server_ref("refs/heads/topic"), None);
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

/// A break-glass push of an agent's freeze-file edit, judged by `guard hook pre-receive` run
/// under a file size limit of `fsize` bytes (prlimit) with the log holding `before`. Returns
/// the hook's exit status and standard error, and the log's text after.
fn break_glass_under_file_size_limit(before: &str, fsize: usize) -> (Option<i32>, String, String) {
    let log_dir = tempfile::tempdir().unwrap();
    let log = log_dir.path().join("audit.log");
    let s = break_glass_server(&log);
    std::fs::write(&log, before).unwrap();
    let agent = s.agent_edits_freeze("Emergency lease");
    s.push(&["origin", "HEAD:refs/scratch/agent"])
        .assert_accepted();

    let mut cmd = hermetic(Command::new("prlimit"), s.home());
    cmd.arg(format!("--fsize={fsize}"))
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
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("error: refs/heads/main: [agent_edit_protected]")),
        "the push is judged: {}\n{stderr}",
        out.status
    );
    (
        out.status.code(),
        stderr,
        std::fs::read_to_string(&log).unwrap(),
    )
}

#[test]
fn a_line_the_audit_log_takes_only_in_part_refuses_break_glass_and_is_removed() {
    // A file size limit (as a full disk would) lets the log take only the first 50 bytes of
    // the new line. Writing the rest with a second write would get the process killed
    // (SIGXFSZ) and leave half a line; guard writes the line once, cuts off what the file
    // took, and refuses break-glass.
    let before = logged_line(1000);
    let (code, stderr, after) = break_glass_under_file_size_limit(&before, before.len() + 50);
    assert_eq!(
        code,
        Some(1),
        "guard must refuse break-glass and judge the push (no code: it was killed mid-write)\n{stderr}"
    );
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("warning: guard: break-glass refused: ")
                && l.contains("took only 50 of the line's")
                && l.contains("the part written was removed")),
        "{stderr}"
    );
    assert_eq!(after, before);
}

#[test]
fn an_audit_log_at_its_file_size_limit_refuses_break_glass_with_the_reason() {
    // The log is already as long as the limit allows: the write takes nothing. The kernel
    // would kill a process that does not ignore SIGXFSZ (the push rejected with no reason
    // given); guard ignores it while it appends, and its write fails instead (EFBIG), once:
    // a write error is not retried.
    let before = logged_line(1000);
    let (code, stderr, after) = break_glass_under_file_size_limit(&before, before.len());
    assert_eq!(code, Some(1), "killed rather than refusing\n{stderr}");
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("warning: guard: break-glass refused: ")
                && l.contains("cannot write the audit log")
                && l.contains("File too large")),
        "{stderr}"
    );
    assert_eq!(after, before);
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

/// Installs, with `install.sh --server`, a wrapper in guard's place that records its process
/// id (the one guard then runs as: it `exec`s guard) in `pids`.
fn install_pid_recording_guard(s: &Server, pids: &Path) {
    let wrapper = s.tmp.path("guard-wrapper");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\necho $$ >>'{}'\nexec '{GUARD}' \"$@\"\n",
            pids.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = crate::support::server::run_install(
        &[
            "--server",
            s.bare.to_str().unwrap(),
            "--guard",
            wrapper.to_str().unwrap(),
        ],
        false,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A push that guard would accept, with guard killed by `signal` while it judges: it is
/// held mid-run by a lock the test takes on the audit log (guard reads the log while judging,
/// after it has read the push, opened the repository and loaded the policy), then killed.
fn push_with_guard_killed_by(signal: &str) {
    use std::os::unix::fs::MetadataExt;
    let log_dir = tempfile::tempdir().unwrap();
    let log = log_dir.path().join("audit.log");
    let s = Server::new("");
    s.config("guard.auditLog", log.to_str().unwrap());
    std::fs::write(&log, "").unwrap();
    let pids = s.tmp.path("guard.pids");
    install_pid_recording_guard(&s, &pids);
    let clean = s.human_change("README.md", "Clean, but guard is killed");

    let holder = std::fs::File::open(&log).unwrap();
    rustix::fs::flock(&holder, rustix::fs::FlockOperation::LockExclusive).unwrap();
    let ino = std::fs::metadata(&log).unwrap().ino();
    let pushed = std::thread::scope(|scope| {
        let push = scope.spawn(|| s.push(&["origin", "main"]));
        let mut killed = false;
        for _ in 0..2400 {
            let pid = std::fs::read_to_string(&pids).unwrap_or_default();
            let pid = pid.trim();
            if !pid.is_empty() && lock_waiter_on(ino) {
                let out = Command::new("kill")
                    .args([&format!("-{signal}"), pid])
                    .output()
                    .unwrap();
                assert!(
                    out.status.success(),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                killed = true;
                break;
            }
            if push.is_finished() {
                break;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        let pushed = push.join().unwrap();
        assert!(killed, "guard never waited on the log: {}", pushed.stderr);
        pushed
    });
    drop(holder);

    assert!(!pushed.ok, "{}", pushed.stderr);
    let number = if signal == "KILL" { 9 } else { 15 };
    assert!(
        pushed
            .lines()
            .iter()
            .any(|l| l.ends_with(&format!("hooks/pre-receive died of signal {number}"))),
        "{}",
        pushed.stderr
    );
    assert!(
        pushed.stderr.contains("(pre-receive hook declined)"),
        "{}",
        pushed.stderr
    );
    // Nothing of the push is left: the ref, the objects (git drops the quarantine), the log.
    assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));
    let present = s
        .git_cmd(&s.bare)
        .args(["cat-file", "-e", &clean])
        .status()
        .unwrap();
    assert!(!present.success(), "the killed push left its commit");
    assert_eq!(std::fs::read(&log).unwrap(), b"");
    crate::support::server::assert_fsck_clean(&s);

    // The same push, guard left alone: accepted.
    s.push(&["origin", "main"]).assert_accepted();
    assert_eq!(s.server_ref("refs/heads/main"), Some(clean));
}

#[test]
fn guard_killed_by_sigterm_mid_run_rejects_and_leaves_nothing() {
    push_with_guard_killed_by("TERM");
}

#[test]
fn guard_killed_by_sigkill_mid_run_rejects_and_leaves_nothing() {
    push_with_guard_killed_by("KILL");
}

/// A JUnit report with one passing test.
const REPORT: &str = "<?xml version=\"1.0\"?><testsuites><testsuite name=\"pytest\" tests=\"1\"><testcase classname=\"tests.test_app\" name=\"test_ok\" time=\"0.1\"/></testsuite></testsuites>\n";

#[test]
fn artifacts_that_are_there_but_cannot_be_read_reject_the_push() {
    // Reports are optional here (`required = false`): a directory CI has not written yet is
    // no evidence, and the push passes. Something there that cannot be read is evidence
    // guard cannot judge: it used to pass for "no reports" too.
    let s = Server::new("[artifacts]\njunit = [\"junit.xml\"]\n");
    let ci = s.artifacts_per_commit();
    let commit = s.human_change("README.md", "Change with CI");
    let dir = ci.join(&commit);
    let report = dir.join("junit.xml");
    std::fs::create_dir_all(&ci).unwrap();
    let reset = || {
        let _ = std::fs::remove_file(&dir);
        let _ = std::fs::remove_dir_all(&dir);
    };
    type Make<'a> = Box<dyn Fn() + 'a>;
    let cases: Vec<(&str, Make, String)> = vec![
        (
            "the directory is a file",
            Box::new(|| std::fs::write(&dir, "x").unwrap()),
            format!(
                "the artifact directory {} is not a directory",
                dir.display()
            ),
        ),
        (
            "the directory is a symlink to nothing",
            Box::new(|| std::os::unix::fs::symlink("/nonexistent/ci", &dir).unwrap()),
            format!(
                "cannot read {} (a symbolic link to nothing?)",
                dir.display()
            ),
        ),
        (
            "the report is a symlink to nothing",
            Box::new(|| {
                std::fs::create_dir_all(&dir).unwrap();
                std::os::unix::fs::symlink("/nonexistent/junit.xml", &report).unwrap()
            }),
            format!(
                "cannot read {} (a symbolic link to nothing?)",
                report.display()
            ),
        ),
        (
            "the report is a directory",
            Box::new(|| std::fs::create_dir_all(&report).unwrap()),
            format!("the report {} is not a regular file", report.display()),
        ),
        (
            "the report is a FIFO (reading it would wait for a writer)",
            Box::new(|| {
                std::fs::create_dir_all(&dir).unwrap();
                let made = Command::new("mkfifo").arg(&report).status().unwrap();
                assert!(made.success());
            }),
            format!("the report {} is not a regular file", report.display()),
        ),
        (
            "the report was cut off mid-write",
            Box::new(|| {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&report, &REPORT[..60]).unwrap();
            }),
            format!("{}:1:", report.display()),
        ),
    ];
    for (what, make, message) in &cases {
        reset();
        make();
        let pushed = s.push(&["origin", "main"]);
        pushed.assert_rejected_with(&format!(
            "remote: error: refs/heads/main: cannot judge: {message}"
        ));
        assert!(
            pushed.has_line_starting(
                "remote: error: guard: push rejected: part of it could not be judged"
            ),
            "{what}:\n{}",
            pushed.stderr
        );
        assert_eq!(
            s.server_ref("refs/heads/main"),
            Some(s.base.clone()),
            "{what}"
        );
    }
    // No reports yet: nothing to judge them by. The whole report: judged, accepted.
    reset();
    s.push(&["origin", "HEAD:refs/heads/no-reports"])
        .assert_accepted();
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(&report, REPORT).unwrap();
    s.push(&["origin", "main"]).assert_accepted();
    assert_eq!(s.server_ref("refs/heads/main"), Some(commit));
}

/// Writes `content` as a loose object of `kind` into the repository at `dir`, unchecked
/// (`hash-object --literally`, as a hand-made object would be); its id.
fn literal_object(s: &Server, dir: &Path, kind: &str, content: &str) -> String {
    let file = tempfile::NamedTempFile::new_in(s.home()).unwrap();
    std::fs::write(file.path(), content).unwrap();
    s.git_in(
        dir,
        &[
            "hash-object",
            "-t",
            kind,
            "--literally",
            "-w",
            file.path().to_str().unwrap(),
        ],
    )
}

#[test]
fn a_malformed_commit_in_the_push_is_refused_with_fsck_objects_on_and_off() {
    let s = Server::new("");
    let tree = s.git(&["rev-parse", "HEAD^{tree}"]);
    // An author line without an e-mail: git's fsck says `missingEmail`, libgit2 cannot parse
    // the commit.
    let bad = literal_object(
        &s,
        &s.work,
        "commit",
        &format!(
            "tree {tree}\nparent {}\nauthor nobody 1767225600 +0000\ncommitter Human Dev <dev@example.com> 1767225600 +0000\n\nHand-made\n",
            s.base
        ),
    );
    // A good commit on top of it: the malformed one is inside the pushed range.
    let on_top = s.git(&["commit-tree", &tree, "-p", &bad, "-m", "On top"]);

    // receive.fsckObjects on (install.sh sets it): git refuses the pack; guard never runs.
    for tip in [&bad, &on_top] {
        let pushed = s.push(&["origin", &format!("{tip}:refs/heads/main")]);
        assert!(!pushed.ok, "{}", pushed.stderr);
        assert!(
            pushed.stderr.contains("fsck error in packed object")
                && pushed.stderr.contains("(unpacker error)"),
            "{}",
            pushed.stderr
        );
        assert!(
            !pushed.has_line_starting("remote: guard:"),
            "{}",
            pushed.stderr
        );
        assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));
    }

    // Off: guard cannot read the commit and rejects, saying so.
    s.config("receive.fsckObjects", "false");
    let pushed = s.push(&["origin", &format!("{bad}:refs/heads/main")]);
    pushed.assert_rejected_with(&format!(
        "remote: error: refs/heads/main: cannot judge: new object {bad} is malformed (with receive.fsckObjects on, git refuses such objects before guard runs): failed to parse signature"
    ));
    assert!(
        pushed.has_line_starting("remote: warning: guard: receive.fsckObjects is off"),
        "{}",
        pushed.stderr
    );
    let pushed = s.push(&["origin", &format!("{on_top}:refs/heads/main")]);
    pushed.assert_rejected_with("remote: error: refs/heads/main: cannot judge: ");
    assert!(
        pushed.stderr.contains("failed to parse signature"),
        "{}",
        pushed.stderr
    );
    assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));
    for id in [&bad, &on_top] {
        let present = s
            .git_cmd(&s.bare)
            .args(["cat-file", "-e", id])
            .status()
            .unwrap();
        assert!(!present.success(), "the rejected push left {id}");
    }
    crate::support::server::assert_fsck_clean(&s);
}

/// A pkt-line of git's protocol.
fn pkt_line(data: &[u8]) -> Vec<u8> {
    let mut out = format!("{:04x}", data.len() + 4).into_bytes();
    out.extend_from_slice(data);
    out
}

#[test]
fn a_corrupt_pack_is_refused_before_guard_runs_with_fsck_objects_on_and_off() {
    // A pack damaged in transit (one byte changed): the push goes to `git receive-pack`, as
    // every transport hands it, with the pack as sent.
    let s = Server::new("");
    let clean = s.human_change("README.md", "Clean, but its pack is damaged");
    let mut pack = {
        let mut cmd = s.git_cmd(&s.work);
        cmd.args(["pack-objects", "--stdout", "--revs"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(format!("{clean}\n^{}\n", s.base).as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        out.stdout
    };
    assert_eq!(&pack[..4], b"PACK");
    let middle = pack.len() / 2;
    pack[middle] ^= 0x55;

    // A client names the object format it speaks unless it is SHA-1.
    let format = s.bare_git(&["rev-parse", "--show-object-format"]);
    let caps = match format.trim() {
        "sha1" => "report-status".to_string(),
        other => format!("report-status object-format={other}"),
    };
    for fsck in ["true", "false"] {
        s.config("receive.fsckObjects", fsck);
        let mut input =
            pkt_line(format!("{} {clean} refs/heads/main\0{caps}\n", s.base).as_bytes());
        input.extend_from_slice(b"0000");
        input.extend_from_slice(&pack);
        let mut cmd = s.git_cmd(s.home());
        cmd.arg("receive-pack")
            .arg(&s.bare)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        child.stdin.take().unwrap().write_all(&input).unwrap();
        let out = child.wait_with_output().unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(
            stdout.contains("unpack ") && !stdout.contains("unpack ok"),
            "fsckObjects {fsck}: {stdout}\n{stderr}"
        );
        assert!(
            stdout.contains("ng refs/heads/main unpacker error"),
            "fsckObjects {fsck}: {stdout}"
        );
        assert!(!stderr.contains("guard:"), "guard ran: {stderr}");
        assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));
        crate::support::server::assert_fsck_clean(&s);
    }
}

/// A human's commit (with the trailer) that makes the ledger a blob of `size` zero bytes
/// (`zeros_blob`); the push is rejected from the blob's header, before it is read.
fn push_a_huge_ledger(size: u64) {
    let s = Server::new("");
    let blob = zeros_blob(&s, size);
    s.git(&[
        "update-index",
        "--cacheinfo",
        &format!("100644,{blob},qa/merge_ledger.toml"),
    ]);
    s.git(&["commit", "-q", "-m", "A big ledger\n\nLedger-Change: human"]);
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with(&format!(
        "remote: error: refs/heads/main: cannot judge: qa/merge_ledger.toml is {size} bytes in git (blob {blob}); {TEXT_LIMIT}"
    ));
    assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));
    crate::support::server::assert_fsck_clean(&s);
}

#[test]
fn an_agents_test_file_over_the_text_limit_is_refused_unread() {
    // The weakened-test judge reads an agent commit's test files: one of 40 MiB of zeros
    // (a few KiB pushed) is refused from its header, not inflated and parsed.
    agent_adds_a_file_of_zeros("tests/test_big.py");
}

#[test]
fn a_file_a_commit_rule_reads_over_the_text_limit_is_refused_unread() {
    // `coverage_excluded` reads an agent commit's Python sources for exclusion markers: one
    // of 40 MiB of zeros is refused from its header too.
    agent_adds_a_file_of_zeros("src/big.py");
}

/// An agent's commit that adds `path` as a blob of 40 MiB of zeros (a few KiB pushed): the
/// push is rejected from the blob's header, before it is read.
fn agent_adds_a_file_of_zeros(path: &str) {
    let s = Server::new("");
    let size: u64 = 40 << 20;
    let blob = zeros_blob(&s, size);
    s.git(&[
        "update-index",
        "--add",
        "--cacheinfo",
        &format!("100644,{blob},{path}"),
    ]);
    s.git(&["commit", "-q", "-m", "Add a file"]);
    s.git(&[
        "commit",
        "-q",
        "--amend",
        "--no-edit",
        "--author",
        "Cursor Agent <cursoragent@cursor.com>",
    ]);
    let pushed = s.push(&["origin", "main"]);
    pushed.assert_rejected_with(&format!(
        "remote: error: refs/heads/main: cannot judge: {path} is {size} bytes in git (blob {blob}); {TEXT_LIMIT}"
    ));
    assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));
}

/// What guard says of a text file over its limit.
const TEXT_LIMIT: &str =
    "guard reads the files it judges as text (policy, tests, what commit rules check) up to 32 MiB";

/// A blob of `size` zero bytes in the working clone, hashed from a sparse file: nothing of
/// that size is written to disk, and a pushed pack holding it is small (zeros compress).
fn zeros_blob(s: &Server, size: u64) -> String {
    let sparse = s.tmp.path("zeros");
    std::fs::File::create(&sparse)
        .unwrap()
        .set_len(size)
        .unwrap();
    let blob = s.git(&["hash-object", "-w", sparse.to_str().unwrap()]);
    std::fs::remove_file(&sparse).unwrap();
    blob
}

#[test]
fn a_ledger_blob_over_the_text_limit_is_refused_unread() {
    push_a_huge_ledger(40 << 20);
}

#[test]
#[ignore = "a 1 GiB blob: about a minute of git's own hashing and packing; run by .ci/run"]
fn a_one_gigabyte_ledger_blob_is_refused_unread() {
    push_a_huge_ledger(1 << 30);
}

#[test]
fn deeply_nested_policy_files_are_refused() {
    // TOML nested 100,000 deep in the ledger and the freeze file, JSON in the lockfile: each
    // parser stops at its recursion limit (no stack overflow), and the push is rejected.
    let s = Server::new("");
    let depth = 100_000;
    for (path, text, code) in [
        (
            "qa/merge_ledger.toml",
            format!(
                "version = 1\nx = {}{}\n",
                "[".repeat(depth),
                "]".repeat(depth)
            ),
            "ledger_invalid",
        ),
        (
            "qa/freeze.toml",
            format!(
                "version = 1\nx = {}1{}\n",
                "{a = ".repeat(depth),
                "}".repeat(depth)
            ),
            "freeze_file_invalid",
        ),
        (
            "qa/fixtures.lock.json",
            format!("{}{}\n", "[".repeat(depth), "]".repeat(depth)),
            "lockfile_invalid",
        ),
    ] {
        s.git(&["reset", "-q", "--hard", &s.base]);
        crate::support::server::write_in(&s.work, path, &text);
        s.commit(&format!(
            "Nest {path}\n\nLedger-Change: human\nFreeze-Lease: human\nFixture-Lock: human"
        ));
        let pushed = s.push(&["origin", "main"]);
        pushed.assert_rejected_with(&format!("remote: error: refs/heads/main: [{code}]"));
        assert!(
            pushed.stderr.contains(&format!("{path}:")),
            "names {path}:\n{}",
            pushed.stderr
        );
        assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));
    }
}

/// `git mktree` fed `entries` lines by a generator in `dir`; the tree's id.
fn mktree(s: &Server, dir: &Path, entries: impl Iterator<Item = String>) -> String {
    let mut cmd = s.git_cmd(dir);
    cmd.arg("mktree")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = std::io::BufWriter::new(child.stdin.take().unwrap());
    for line in entries {
        stdin.write_all(line.as_bytes()).unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
#[ignore = "a tree of a million entries: about 30 s of git's own work in a debug build; run by .ci/run"]
fn a_tree_of_a_million_entries_is_judged() {
    // One commit adds a directory of 1,000,000 files (one empty blob under a million names,
    // a 32 MB tree object). guard reads the root and the directories on the way to protected
    // paths, not every entry: the push is judged as any other, well within guard.timeout.
    let s = Server::new("");
    s.config("guard.timeout", "120");
    let empty = s.git(&["hash-object", "-w", "--stdin"]);
    let many = mktree(
        &s,
        &s.work,
        (0..1_000_000).map(|i| format!("100644 blob {empty}\tf{i:07}\n")),
    );
    let root = |base: &str| {
        let listing = s.git(&["ls-tree", base]);
        mktree(
            &s,
            &s.work,
            listing
                .lines()
                .map(|l| format!("{l}\n"))
                .chain(std::iter::once(format!("040000 tree {many}\tmany\n"))),
        )
    };
    // A human's: accepted.
    let tree = root(&s.base);
    let human = s.git(&["commit-tree", &tree, "-p", &s.base, "-m", "A million files"]);
    let pushed = s.push(&["origin", &format!("{human}:refs/heads/main")]);
    pushed.assert_accepted();
    assert!(
        pushed.has_line_starting("remote: guard: 1 ref update accepted, 1 commit judged"),
        "{}",
        pushed.stderr
    );
    // An agent's on top, which also edits the freeze file (made without a checkout of the
    // million files): rejected for that edit.
    let freeze = format!(
        "{}# parked by the agent\n",
        s.git(&["show", "main:qa/freeze.toml"])
    );
    let freeze = crate::support::server::blob_in(&s, &s.work, &freeze);
    let replace = |listing: String, name: &str, entry: String| -> Vec<String> {
        listing
            .lines()
            .map(|l| {
                if l.ends_with(&format!("\t{name}")) {
                    format!("{entry}\t{name}\n")
                } else {
                    format!("{l}\n")
                }
            })
            .collect()
    };
    let qa = mktree(
        &s,
        &s.work,
        replace(
            s.git(&["ls-tree", &format!("{human}:qa")]),
            "freeze.toml",
            format!("100644 blob {freeze}"),
        )
        .into_iter(),
    );
    let tree = mktree(
        &s,
        &s.work,
        replace(
            s.git(&["ls-tree", &human]),
            "qa",
            format!("040000 tree {qa}"),
        )
        .into_iter(),
    );
    let out = s
        .git_cmd(&s.work)
        .args(["commit-tree", &tree, "-p", &human, "-m", "A lease"])
        .env("GIT_AUTHOR_NAME", crate::support::server::AGENT_NAME)
        .env("GIT_AUTHOR_EMAIL", crate::support::server::AGENT_EMAIL)
        .output()
        .unwrap();
    assert!(out.status.success());
    let agent = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let pushed = s.push(&["origin", &format!("{agent}:refs/heads/topic")]);
    pushed.assert_rejected_with(&format!(
        "remote: error: refs/heads/topic: [agent_edit_protected] {}",
        &agent[..7]
    ));
    assert_eq!(s.server_ref("refs/heads/topic"), None);
    assert_eq!(s.server_ref("refs/heads/main"), Some(human));
}

#[test]
#[ignore = "100,000 commits: 15 to 30 s of git's own importing and packing; run by .ci/run"]
fn a_push_of_a_hundred_thousand_commits_fails_closed_at_the_timeout() {
    // A push of 100,000 commits (made with `git fast-import`) with guard.timeout at 1 s: guard
    // gives up when its time is out, rejects the push and says why, whatever its worker
    // thread is still reading; git's own work on the pack is not part of guard's time.
    let s = Server::new("");
    let count = 100_000;
    let mut stream = String::with_capacity(count * 200);
    for i in 0..count {
        let message = format!("Note {i}\n");
        let note = format!("note {i}\n");
        stream.push_str(&format!(
            "commit refs/heads/many\nauthor Human Dev <dev@example.com> 1767225600 +0000\ncommitter Human Dev <dev@example.com> 1767225600 +0000\ndata {}\n{message}",
            message.len()
        ));
        if i == 0 {
            stream.push_str(&format!("from {}\n", s.base));
        }
        stream.push_str(&format!(
            "M 644 inline notes.txt\ndata {}\n{note}\n",
            note.len()
        ));
    }
    crate::support::run_fast_import(s.git_cmd(&s.work), &stream);
    assert_eq!(
        s.git(&["rev-list", "--count", &format!("{}..many", s.base)]),
        count.to_string()
    );

    s.config("guard.timeout", "1");
    let pushed = s.push(&["origin", "many:main"]);
    pushed.assert_rejected_with(
        "remote: error: guard: checking the push took longer than 1s (guard.timeout); push rejected",
    );
    assert!(
        pushed.has_line_starting("remote: hint: retry; if it keeps happening, ask the server admin to raise guard.timeout"),
        "{}",
        pushed.stderr
    );
    assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));
    crate::support::server::assert_fsck_clean(&s);
}

/// `guard lock` in the project `p` run under a file size limit of `limit` bytes (prlimit).
fn lock_with_size_limit(p: &crate::support::Project, limit: usize) -> std::process::Output {
    hermetic(Command::new("prlimit"), p.root())
        .arg(format!("--fsize={limit}"))
        .args([GUARD, "lock"])
        .current_dir(p.root())
        .stdin(Stdio::null())
        .output()
        .expect("prlimit (util-linux) is installed")
}

#[test]
fn guard_lock_killed_mid_write_leaves_the_old_lockfile_whole() {
    // 200 new fixtures make a lockfile of about 20 KB; a 4 KiB file size limit lets the
    // first write of it take 4 KiB, and the next write gets the process killed (SIGXFSZ):
    // killed in the middle of writing. The lockfile is written to a temporary file and
    // renamed over the old one, so the old one is whole and untouched.
    let p = crate::scenario::clean();
    for i in 0..200 {
        p.write(
            &format!("tests/fixtures/batch/case_{i:03}.json"),
            format!("{{\"case\": {i}}}\n"),
        );
    }
    let before = p.read("qa/fixtures.lock.json");
    assert!(before.len() < 4096, "{}", before.len());
    let out = lock_with_size_limit(&p, 4096);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        out.status.signal(),
        Some(25),
        "killed by SIGXFSZ while writing: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(p.read("qa/fixtures.lock.json"), before);
    // What the killed process left: its temporary file, half written, under a dot name that
    // no fixture glob or `ls` picks up, beside the lockfile.
    let leftovers: Vec<String> = crate::support::server::dir_names(&p.path("qa"))
        .into_iter()
        .filter(|n| n.starts_with(".guard-") && n.ends_with(".tmp"))
        .collect();
    assert_eq!(leftovers.len(), 1, "{leftovers:?}");
    let half = std::fs::read(p.path("qa").join(&leftovers[0])).unwrap();
    assert_eq!(half.len(), 4096);
    // The old lockfile still judges: the new fixtures are unlocked, the old ones match.
    let run = p.guard(&["lock", "--check"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("added    tests/fixtures/batch/case_000.json"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("changed"), "{}", run.stdout);
    // Without the limit the lock is rewritten whole.
    assert_eq!(p.guard(&["lock"]).code, 0);
    assert_eq!(p.guard(&["lock", "--check"]).code, 0);
}

#[test]
fn guard_lock_in_a_directory_it_cannot_write_leaves_the_old_lockfile_whole() {
    let p = crate::scenario::clean();
    p.write("tests/fixtures/new.json", "{}\n");
    let before = p.read("qa/fixtures.lock.json");
    let qa = p.path("qa");
    let read_only = ReadOnly::new(&qa);
    let run = p.guard(&["lock"]);
    drop(read_only);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .starts_with("error: cannot write qa/fixtures.lock.json: "),
        "{}",
        run.stderr
    );
    assert_eq!(p.read("qa/fixtures.lock.json"), before);
    assert_eq!(
        crate::support::server::dir_names(&qa)
            .iter()
            .filter(|n| n.starts_with(".guard-"))
            .count(),
        0
    );
}

#[test]
fn a_corrupt_object_store_is_an_internal_error_not_the_inputs() {
    // The tip's tree object, overwritten with bytes that do not inflate: guard cannot read
    // the repository, which is not the range's fault.
    let p = crate::support::Project::git();
    p.write("README.md", "x\n");
    p.git_cmd(&["add", "-A"]);
    p.git_cmd(&["commit", "-qm", "Start"]);
    p.write("src/app.py", "X = 1\n");
    p.git_cmd(&["add", "-A"]);
    p.git_cmd(&["commit", "-qm", "More"]);
    let tree = p.rev("HEAD^{tree}");
    let object = p
        .root()
        .join(".git/objects")
        .join(&tree[..2])
        .join(&tree[2..]);
    let mut perms = std::fs::metadata(&object).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(&object, perms).unwrap();
    std::fs::write(&object, b"not zlib at all").unwrap();

    let run = p.guard(&["check", "HEAD~1..HEAD", "--format", "json"]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    let error = &run.json()["error"];
    assert_eq!(error["kind"], "internal", "{}", run.stdout);
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("the repository's object store could not be read"),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr.starts_with("error: internal: "),
        "{}",
        run.stderr
    );
    // A bad revision stays the input's.
    let run = p.guard(&["check", "nosuchbranch..HEAD", "--format", "json"]);
    assert_eq!(run.json()["error"]["kind"], "input", "{}", run.stdout);
}
