//! gitolite over SSH as a second real server: sshd on a free port of 127.0.0.1 runs
//! `gitolite-shell`, which names the pusher in `GL_USER`, and git runs guard's hook (installed
//! by `install.sh --server`) under gitolite's own `update` hook.

use crate::support::daemons::Gitolite;
use crate::support::server::Server;

#[test]
fn pushes_through_gitolite_over_ssh_are_judged_with_the_pusher_from_gl_user() {
    let s = Server::new("");
    s.config("receive.advertisePushOptions", "true");
    s.config("guard.bypass", "alice");
    let log = s.tmp.path("audit.log");
    s.config("guard.auditLog", log.to_str().unwrap());
    let gitolite = Gitolite::start(s.home(), &s.bare, &["alice", "bob"]);
    assert!(
        s.bare.join("hooks/update").exists(),
        "gitolite installed its update hook"
    );
    let url = gitolite.url("testing");
    let push_as = |user: &str, args: &[&str]| {
        let ssh = gitolite.ssh_as(user);
        let mut all = args.to_vec();
        all.extend([url.as_str(), "main"]);
        s.push_from(&s.work, &all, &[("GIT_SSH_COMMAND", ssh.as_str())])
    };

    // An agent's edit of the freeze file: rejected, main untouched.
    s.agent_edits_freeze("Agent lease over ssh");
    push_as("bob", &[])
        .assert_rejected_with("remote: error: refs/heads/main: [agent_edit_protected]");
    assert_eq!(s.server_ref("refs/heads/main"), Some(s.base.clone()));

    // Break-glass names the pusher gitolite authenticated: bob is not on the list ...
    let pushed = push_as("bob", &["-o", "guard.bypass=outage"]);
    pushed.assert_rejected_with("remote: error: refs/heads/main: [agent_edit_protected]");
    assert!(
        pushed.has_line_starting(
            "remote: warning: guard: break-glass refused: bob is not in the server's guard.bypass list"
        ),
        "{}",
        pushed.stderr
    );
    assert!(!log.exists(), "{}", pushed.stderr);

    // ... a clean human change is accepted ...
    s.git(&["reset", "-q", "--hard", &s.base]);
    let clean = s.human_change("README.md", "Clean over ssh");
    let pushed = push_as("bob", &[]);
    pushed.assert_accepted();
    assert!(
        pushed.has_line_starting("remote: guard: 1 ref update accepted, 1 commit judged"),
        "{}",
        pushed.stderr
    );
    assert_eq!(s.server_ref("refs/heads/main"), Some(clean.clone()));

    // ... and alice may break glass, logged under her gitolite name.
    let agent = s.agent_edits_freeze("Emergency lease over ssh");
    let pushed = push_as("alice", &["-o", "guard.bypass=outage"]);
    pushed.assert_accepted();
    assert!(
        pushed.has_line_starting("remote: warning: guard: break-glass by alice: "),
        "{}",
        pushed.stderr
    );
    assert_eq!(s.server_ref("refs/heads/main"), Some(agent.clone()));
    let text = std::fs::read_to_string(&log).unwrap();
    let entry: serde_json::Value = serde_json::from_str(text.trim_end()).unwrap();
    assert_eq!(entry["pusher"], "alice");
    assert_eq!(
        entry["refs"],
        serde_json::json!([{"ref": "refs/heads/main", "old": clean, "new": agent}])
    );
    // gitolite's own log saw both users.
    let logs = std::fs::read_dir(gitolite.home.join(".gitolite/logs"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect::<String>();
    assert!(
        logs.contains("\talice\t") && logs.contains("\tbob\t"),
        "{logs}"
    );
}
