//! `install.sh --static`: a guard that needs no shared library, run where none is: a chroot
//! holding only Debian's static busybox, the binary and a bare repository, with no `git`,
//! no `/dev`, no HOME (GitHub Enterprise runs pre-receive hooks in such an environment).
//!
//! The release build takes minutes, so the test is ignored in `cargo test` and `.ci/run`
//! runs it in a step of its own. It builds into `target/static/` (kept between runs) and
//! needs root for `chroot`, and `busybox-static` (`.ci/run` installs both tools' packages).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::support::server::{AGENTS, ledger};
use crate::support::{Project, hermetic};

/// `ldd`'s verdict on `path`: glibc's ldd says "statically linked" for a static-pie and
/// "not a dynamic executable" for a static one; a dynamic one lists `lib => path` lines.
fn assert_not_dynamic(path: &Path) {
    let out = Command::new("ldd").arg(path).output().expect("ldd runs");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        (said.contains("statically linked") || said.contains("not a dynamic executable"))
            && !said.contains("=>"),
        "ldd {}: {said}",
        path.display()
    );
}

/// `./install.sh --static --prefix PREFIX`; the installed binary.
fn install_static(prefix: &Path) -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("bash")
        .arg(manifest.join("install.sh"))
        .args(["--static", "--prefix"])
        .arg(prefix)
        .env("CARGO_TARGET_DIR", manifest.join("target/static"))
        // cargo sets these for the test; the nested build must choose its own flags.
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_TARGET")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "install.sh --static failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    prefix.join("bin/guard")
}

/// A directory that holds only busybox (as /bin/busybox and /bin/sh) and guard.
fn busybox_root(guard: &Path) -> Project {
    let root = Project::new();
    let busybox = ["/bin/busybox", "/usr/bin/busybox"]
        .into_iter()
        .map(Path::new)
        .find(|p| p.is_file())
        .expect("busybox is installed (apt-get install busybox-static; .ci/run does)");
    // Debian's plain `busybox` package is dynamic and would fail in the chroot for that.
    assert_not_dynamic(busybox);
    std::fs::create_dir_all(root.path("bin")).unwrap();
    std::fs::create_dir_all(root.path("usr/local/bin")).unwrap();
    std::fs::copy(busybox, root.path("bin/busybox")).unwrap();
    std::os::unix::fs::symlink("busybox", root.path("bin/sh")).unwrap();
    std::fs::copy(guard, root.path("usr/local/bin/guard")).unwrap();
    root
}

/// `chroot ROOT ARGS` with nothing of this environment but `env`, `stdin` on its input.
fn chroot(root: &Path, args: &[&str], env: &[(&str, &str)], stdin: &str) -> Output {
    use std::io::Write as _;
    // coreutils' chroot lives in sbin, which a non-login PATH may lack.
    let chroot = ["/usr/sbin/chroot", "/sbin/chroot", "/usr/bin/chroot"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
        .expect("chroot (coreutils) is installed");
    let mut child = Command::new(chroot)
        .arg(root)
        .args(args)
        .env_clear()
        .env("PATH", "/usr/local/bin:/bin")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chroot runs (it needs root)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("chroot: cannot change root"),
        "chroot needs root: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `git ARGS` in `dir`, hermetic; its trimmed stdout.
fn git(home: &Path, dir: &Path, args: &[&str]) -> String {
    let out = hermetic(Command::new("git"), home)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
    text(&out.stdout).trim().to_string()
}

#[test]
#[ignore = "builds a release binary (minutes); .ci/run runs it in a step of its own"]
fn static_binary_runs_and_judges_a_push_in_a_busybox_chroot() {
    let prefix = Project::new();
    let guard = install_static(prefix.root());
    assert_not_dynamic(&guard);
    let root = busybox_root(&guard);

    let out = chroot(root.root(), &["guard", "--version"], &[], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!("guard {}\n", env!("CARGO_PKG_VERSION"))
    );

    // `score` in a plain directory, by the embedded ledger: a passing run with a property
    // test holds, a failing property rejects.
    let case = |outcome: &str| {
        format!(
            "<testcase classname=\"tests.properties.test_p\" name=\"test_holds\" file=\"tests/properties/test_p.py\">{outcome}</testcase>"
        )
    };
    let report = |cases: &str| {
        format!(
            "<?xml version=\"1.0\"?>\n<testsuites><testsuite name=\"pytest\">{cases}<testcase classname=\"tests.test_a\" name=\"test_ok\" file=\"tests/test_a.py\"/></testsuite></testsuites>\n"
        )
    };
    root.write("work/pass.xml", report(&case("")));
    root.write("work/fail.xml", report(&case("<failure message=\"x\"/>")));
    let score = |file: &str| {
        chroot(
            root.root(),
            &[
                "/bin/sh",
                "-c",
                &format!("cd /work && guard score --junit {file}"),
            ],
            &[],
            "",
        )
    };
    let pass = score("pass.xml");
    assert_eq!(pass.status.code(), Some(0), "{}", text(&pass.stderr));
    assert!(
        text(&pass.stdout).contains("decision: MERGE"),
        "{}",
        text(&pass.stdout)
    );
    let fail = score("fail.xml");
    assert_eq!(fail.status.code(), Some(1), "{}", text(&fail.stderr));
    assert!(
        text(&fail.stdout)
            .contains("error[property_hold]: property tests.properties.test_p::test_holds failed"),
        "{}",
        text(&fail.stdout)
    );

    // pre-receive on a bare repository inside the chroot, as a server hook: main holds the
    // policy; the pushed commits are in the object store and on no ref, as git leaves them
    // for the hook.
    let home = Project::new();
    let h = home.root();
    git(h, h, &["init", "-q", "-b", "main", "work"]);
    let work = home.path("work");
    home.write("work/qa/merge_ledger.toml", ledger(AGENTS, ""));
    home.write(
        "work/qa/freeze.toml",
        "version = 1\nmax_active_leases = 2\n",
    );
    home.write("work/qa/fixtures.lock.json", "{\"files\": {}}\n");
    git(h, &work, &["add", "-A"]);
    git(
        h,
        &work,
        &[
            "commit",
            "-q",
            "-m",
            "Add the merge ledger\n\nLedger-Change: human\nFreeze-Lease: human\nFixture-Lock: human",
        ],
    );
    let base = git(h, &work, &["rev-parse", "HEAD"]);
    home.write(
        "work/qa/freeze.toml",
        "version = 1\nmax_active_leases = 2\n# parked\n",
    );
    let agent_env = hermetic(Command::new("git"), h)
        .args(["commit", "-q", "-am", "Park a flaky test"])
        .current_dir(&work)
        .env("GIT_AUTHOR_NAME", "Cursor Agent")
        .env("GIT_AUTHOR_EMAIL", "cursoragent@cursor.com")
        .env("GIT_COMMITTER_NAME", "Cursor Agent")
        .env("GIT_COMMITTER_EMAIL", "cursoragent@cursor.com")
        .output()
        .unwrap();
    assert!(agent_env.status.success());
    let agent = git(h, &work, &["rev-parse", "HEAD"]);
    let short = git(h, &work, &["rev-parse", "--short=7", "HEAD"]);
    git(h, &work, &["checkout", "-q", "-b", "clean", &base]);
    home.write("work/README.md", "Human work.\n");
    git(h, &work, &["add", "-A"]);
    git(h, &work, &["commit", "-q", "-m", "Human work"]);
    let clean = git(h, &work, &["rev-parse", "HEAD"]);

    let bare = root.path("srv/repo.git");
    git(
        h,
        h,
        &["init", "-q", "--bare", "-b", "main", bare.to_str().unwrap()],
    );
    git(h, &bare, &["config", "receive.fsckObjects", "true"]);
    git(
        h,
        &work,
        &[
            "push",
            "-q",
            bare.to_str().unwrap(),
            &format!("{base}:refs/heads/main"),
            "main:refs/heads/a",
            "clean:refs/heads/c",
        ],
    );
    git(h, &bare, &["update-ref", "-d", "refs/heads/a"]);
    git(h, &bare, &["update-ref", "-d", "refs/heads/c"]);

    let receive = |new: &str| {
        chroot(
            root.root(),
            &["guard", "hook", "pre-receive"],
            &[("GIT_DIR", "/srv/repo.git")],
            &format!("{base} {new} refs/heads/main\n"),
        )
    };
    let rejected = receive(&agent);
    assert_eq!(
        rejected.status.code(),
        Some(1),
        "{}",
        text(&rejected.stderr)
    );
    assert!(
        text(&rejected.stderr)
            .lines()
            .any(|l| l.starts_with(&format!(
                "error: refs/heads/main: [agent_edit_protected] {short}"
            ))),
        "{}",
        text(&rejected.stderr)
    );
    let accepted = receive(&clean);
    assert_eq!(
        accepted.status.code(),
        Some(0),
        "{}",
        text(&accepted.stderr)
    );
    assert!(
        !text(&accepted.stderr).contains("error"),
        "{}",
        text(&accepted.stderr)
    );
}
