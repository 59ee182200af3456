//! Real servers for the hook tests, each started on a free port of 127.0.0.1 and killed when
//! dropped: lighttpd running `git http-backend` behind HTTP basic authentication (the pusher
//! arrives as `REMOTE_USER`), and OpenSSH's sshd in front of gitolite (the pusher arrives as
//! `GL_USER`). Each runs from a config in the test's temp dir; nothing of the system's is
//! read or changed, except that sshd run as root needs its privilege-separation directory.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::hermetic;
use super::server::git_ok;

/// A server process, killed when dropped.
pub(crate) struct Daemon {
    child: Child,
    pub(crate) port: u16,
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The program `name` in the usual system directories, or a failure that says which Debian
/// package brings it (`.ci/run` installs them).
pub(crate) fn system_program(name: &str, package: &str) -> PathBuf {
    ["/usr/sbin", "/usr/bin", "/sbin", "/bin", "/usr/local/sbin"]
        .iter()
        .map(|dir| Path::new(dir).join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!("{name} is not installed: `apt-get install {package}` (.ci/run does)")
        })
}

/// Starts the server `make(port)` builds on a free port, its stdout and stderr going to
/// `log`, which it may also write itself.
///
/// Any way of picking a port races with other processes: a port found free (by binding port
/// 0 and letting it go) may be taken before the server binds it. So the server is started on
/// it, and when it cannot bind (it exits, and its log says `in_use`) another port is tried.
/// It is ready when its log says `ready`, which it writes only once it listens: a successful
/// connect() alone could reach whoever took the port.
pub(crate) fn start_on_free_port(
    what: &str,
    log: &Path,
    ready: &str,
    in_use: &str,
    make: impl Fn(u16) -> Command,
) -> Daemon {
    for _ in 0..20 {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        std::fs::write(log, "").unwrap();
        let out = std::fs::OpenOptions::new().append(true).open(log).unwrap();
        let mut cmd = make(port);
        cmd.stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out);
        let mut daemon = Daemon {
            child: cmd
                .spawn()
                .unwrap_or_else(|e| panic!("{what} does not start: {e}")),
            port,
        };
        // Up to 60 s: a loaded machine may be slow to start it, and a late start is no
        // failure.
        for _ in 0..2400 {
            let logged = std::fs::read_to_string(log).unwrap_or_default();
            if logged.contains(ready) {
                return daemon;
            }
            if let Some(status) = daemon.child.try_wait().unwrap() {
                let logged = std::fs::read_to_string(log).unwrap_or_default();
                assert!(
                    logged.contains(in_use),
                    "{what} exited ({status}): {logged}"
                );
                break;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        if daemon.child.try_wait().unwrap().is_none() {
            panic!(
                "{what} did not get ready on port {port}: {}",
                std::fs::read_to_string(log).unwrap_or_default()
            );
        }
    }
    panic!("{what} found no free port in 20 tries");
}

/// The users of [`Http`] and their passwords.
pub(crate) fn password(user: &str) -> String {
    format!("{user}-secret")
}

/// lighttpd serving every repository under `root` through `git http-backend` at
/// `http://USER:PASSWORD@127.0.0.1:PORT/git/NAME`, every request behind HTTP basic
/// authentication, so that git runs the hook with `REMOTE_USER` set to the user.
pub(crate) struct Http {
    pub(crate) daemon: Daemon,
}

impl Http {
    /// `home` holds the config, the password file and the logs; `users` may push.
    pub(crate) fn start(home: &Path, root: &Path, users: &[&str]) -> Http {
        let lighttpd = system_program("lighttpd", "lighttpd");
        let exec_path = git_ok(Path::new("/"), Path::new("/"), &["--exec-path"]);
        let backend = Path::new(&exec_path).join("git-http-backend");
        assert!(backend.is_file(), "{} is missing", backend.display());
        let dir = home.join("lighttpd");
        std::fs::create_dir_all(dir.join("www")).unwrap();
        std::fs::create_dir_all(dir.join("uploads")).unwrap();
        let users_file = dir.join("users");
        let lines: String = users
            .iter()
            .map(|u| format!("{u}:{}\n", password(u)))
            .collect();
        std::fs::write(&users_file, lines).unwrap();
        let log = dir.join("lighttpd.log");
        let d = |p: &Path| p.display().to_string();
        let config = |port: u16| {
            format!(
                r#"server.document-root = "{www}"
server.bind = "127.0.0.1"
server.port = {port}
server.errorlog = "{log}"
server.upload-dirs = ("{uploads}")
server.max-connections = 256
server.modules = ("mod_alias", "mod_setenv", "mod_auth", "mod_authn_file", "mod_cgi")
auth.backend = "plain"
auth.backend.plain.userfile = "{users}"
auth.require = ("/" => ("method" => "basic", "realm" => "git", "require" => "valid-user"))
alias.url = ("/git" => "{backend}")
$HTTP["url"] =~ "^/git" {{
  cgi.assign = ("" => "")
  setenv.add-environment = (
    "GIT_PROJECT_ROOT" => "{root}",
    "GIT_HTTP_EXPORT_ALL" => "",
    "HOME" => "{home}",
    "GIT_CONFIG_GLOBAL" => "/dev/null",
    "GIT_CONFIG_NOSYSTEM" => "1",
    "LC_ALL" => "C"
  )
}}
"#,
                www = d(&dir.join("www")),
                log = d(&log),
                uploads = d(&dir.join("uploads")),
                users = d(&users_file),
                backend = d(&backend),
                root = d(root),
                home = d(home),
            )
        };
        let daemon = start_on_free_port(
            "lighttpd",
            &log,
            "server started",
            "Address already in use",
            |port| {
                let file = dir.join("lighttpd.conf");
                std::fs::write(&file, config(port)).unwrap();
                let mut cmd = hermetic(Command::new(&lighttpd), home);
                cmd.arg("-D").arg("-f").arg(file);
                cmd
            },
        );
        Http { daemon }
    }

    /// The URL at which `user` pushes to the repository `name` (relative to the root).
    pub(crate) fn url(&self, user: &str, name: &str) -> String {
        format!(
            "http://{user}:{}@127.0.0.1:{}/git/{name}",
            password(user),
            self.daemon.port
        )
    }
}

/// gitolite (Debian's `gitolite3`) in its own HOME under the test's temp dir, reached over
/// SSH: an sshd of its own on a free port lets the current user in with each gitolite user's
/// key only, and runs `gitolite-shell USER` for it, so git runs the hook with `GL_USER` set.
pub(crate) struct Gitolite {
    pub(crate) daemon: Daemon,
    /// gitolite's HOME: `.gitolite/`, `.gitolite.rc`, `repositories/`.
    pub(crate) home: PathBuf,
    keys: PathBuf,
    login: String,
}

const GITOLITE_SHELL: &str = "/usr/share/gitolite3/gitolite-shell";

impl Gitolite {
    /// gitolite with the repository `testing` (which its default config lets every user
    /// push to) as `testing` (a bare repository that is already set up, linked into
    /// gitolite's repositories), and `users` with keys of their own.
    pub(crate) fn start(dir: &Path, testing: &Path, users: &[&str]) -> Gitolite {
        let sshd = system_program("sshd", "openssh-server");
        system_program("gitolite", "gitolite3");
        assert!(
            Path::new(GITOLITE_SHELL).is_file(),
            "{GITOLITE_SHELL} is missing: `apt-get install gitolite3` (.ci/run does)"
        );
        let root = Command::new("id").arg("-u").output().unwrap().stdout == b"0\n";
        if root {
            assert!(
                Path::new("/run/sshd").is_dir(),
                "sshd run as root needs its privilege separation directory /run/sshd: `install -d -m 0755 /run/sshd` (.ci/run does)"
            );
        }
        let home = dir.join("gitolite");
        let keys = dir.join("ssh-keys");
        std::fs::create_dir_all(home.join("repositories")).unwrap();
        std::fs::create_dir_all(&keys).unwrap();
        std::os::unix::fs::symlink(testing, home.join("repositories/testing.git")).unwrap();
        let keygen = |name: &str| {
            let path = keys.join(name);
            let out = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
                .arg(&path)
                .output()
                .expect("ssh-keygen (openssh-client) is installed");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            std::fs::read_to_string(path.with_extension("pub")).unwrap()
        };
        keygen("admin");
        let setup = hermetic(Command::new("gitolite"), &home)
            .args(["setup", "-pk"])
            .arg(keys.join("admin.pub"))
            .output()
            .unwrap();
        assert!(
            setup.status.success(),
            "gitolite setup: {}",
            String::from_utf8_lossy(&setup.stderr)
        );
        // Written here rather than by gitolite's key trigger, to give gitolite-shell its HOME
        // (sshd gives the login's) and a git without the system's config.
        let authorized: String = users
            .iter()
            .map(|user| {
                format!(
                    "command=\"env HOME={} GIT_CONFIG_NOSYSTEM=1 {GITOLITE_SHELL} {user}\",restrict {}",
                    home.display(),
                    keygen(user)
                )
            })
            .collect();
        let authorized_file = dir.join("authorized_keys");
        std::fs::write(&authorized_file, authorized).unwrap();
        keygen("host");
        let login = String::from_utf8(Command::new("id").arg("-un").output().unwrap().stdout)
            .unwrap()
            .trim()
            .to_string();
        let log = dir.join("sshd.log");
        let daemon = start_on_free_port(
            "sshd",
            &log,
            "Server listening on",
            "Address already in use",
            |port| {
                let config = dir.join("sshd_config");
                std::fs::write(
                &config,
                format!(
                    "ListenAddress 127.0.0.1\nPort {port}\nHostKey {host}\nAuthorizedKeysFile {authorized}\nAllowUsers {login}\nPermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nUseDNS no\nPidFile none\nLogLevel VERBOSE\n",
                    host = keys.join("host").display(),
                    authorized = authorized_file.display(),
                ),
            )
            .unwrap();
                let mut cmd = Command::new(&sshd);
                cmd.args(["-D", "-e", "-f"]).arg(config);
                cmd
            },
        );
        Gitolite {
            daemon,
            home,
            keys,
            login,
        }
    }

    /// The URL of gitolite's repository `name`.
    pub(crate) fn url(&self, name: &str) -> String {
        format!("ssh://{}@127.0.0.1:{}/{name}", self.login, self.daemon.port)
    }

    /// `GIT_SSH_COMMAND` that logs in with `user`'s key.
    pub(crate) fn ssh_as(&self, user: &str) -> String {
        format!(
            "ssh -F /dev/null -i {} -o IdentitiesOnly=yes -o BatchMode=yes -o UserKnownHostsFile=/dev/null -o StrictHostKeyChecking=no -o LogLevel=ERROR",
            self.keys.join(user).display()
        )
    }
}
