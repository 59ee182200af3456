//! A real HTTP git server under load: lighttpd runs `git http-backend` behind HTTP basic
//! authentication (so the hook sees the pusher as `REMOTE_USER`), and 50 pushes by 10 users
//! arrive at once, to one branch and to branches of their own: clean human changes, agent
//! edits of a protected file, human edits with their trailer, break-glass by allowed and by
//! other pushers. Every decision must be what a sequential replay of the same pushes into a
//! fresh server decides, and what the push's kind says; no ref may ever hold a rejected
//! commit; `git fsck` must be clean; the audit log must hold one whole JSON line per
//! break-glass push.

use std::collections::{BTreeMap, BTreeSet};

use crate::support::daemons::Http;
use crate::support::server::{
    AGENT_EMAIL, AGENT_NAME, Pushed, Server, append_in, assert_fsck_clean, commit_in, dir_names,
    write_in,
};

const USERS: [&str; 10] = [
    "alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy",
];
/// The pushers on the server's `guard.bypass` list.
const BREAK_GLASS_USERS: [&str; 2] = ["alice", "bob"];
const PUSHES: usize = 50;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A human's change outside the protected paths: accepted.
    Clean,
    /// An agent's edit of the freeze file: rejected (`agent_edit_protected`).
    AgentEdit,
    /// A human's edit of the freeze file with `Freeze-Lease: human`: accepted.
    HumanWithTrailer,
    /// An agent's edit pushed with `-o guard.bypass=...` by an allowed pusher: accepted
    /// unchecked, and logged.
    BreakGlass,
    /// The same by a pusher not on the list: refused, then rejected as the agent edit it is.
    BreakGlassRefused,
}

struct Push {
    k: usize,
    user: &'static str,
    kind: Kind,
    /// `refs/heads/main` for some, `refs/heads/topic-K` for the others.
    target: String,
    commit: String,
}

impl Push {
    fn accepted(&self) -> bool {
        matches!(
            self.kind,
            Kind::Clean | Kind::HumanWithTrailer | Kind::BreakGlass
        )
    }

    fn args(&self, url: &str) -> Vec<String> {
        let mut args = Vec::new();
        if matches!(self.kind, Kind::BreakGlass | Kind::BreakGlassRefused) {
            args.extend([
                "-o".to_string(),
                format!("guard.bypass=load test {}", self.k),
            ]);
        }
        args.extend([url.to_string(), format!("{}:{}", self.commit, self.target)]);
        args
    }
}

/// Push `k`: by user `k % 10`; round `k / 10` alternates each user's kind; two in five go to
/// `main`.
fn plan(k: usize) -> (&'static str, Kind, String) {
    let user = USERS[k % 10];
    let even = (k / 10).is_multiple_of(2);
    let kind = match (k % 10, even) {
        (0 | 1, true) => Kind::BreakGlass,
        (0 | 1, false) => Kind::Clean,
        (2 | 3, true) => Kind::AgentEdit,
        (2 | 3, false) => Kind::HumanWithTrailer,
        (4 | 5, true) => Kind::BreakGlassRefused,
        (4 | 5, false) => Kind::Clean,
        (6 | 7, true) => Kind::Clean,
        (6 | 7, false) => Kind::AgentEdit,
        (_, true) => Kind::HumanWithTrailer,
        (_, false) => Kind::AgentEdit,
    };
    let target = if k % 5 < 2 {
        "refs/heads/main".to_string()
    } else {
        format!("refs/heads/topic-{k}")
    };
    (user, kind, target)
}

/// A server set up for the load: break-glass by [`BREAK_GLASS_USERS`] logged to
/// `audit.log`, every ref update kept in a reflog (so a ref that ever held a commit shows
/// it), and a chained pre-receive hook that holds each push until `expected` pushes have
/// reached their hooks (when the file `barrier/expected` exists): then all of them are being
/// judged at once, and none moved a ref before every other had read the refs.
fn load_server() -> Server {
    let s = Server::with_ledger(
        &crate::support::server::ledger(crate::support::server::AGENTS, ""),
        |bare| {
            let barrier = bare.parent().unwrap().join("barrier");
            std::fs::create_dir_all(&barrier).unwrap();
            let hook = format!(
                r#"#!/bin/sh
# Test barrier: wait (at most 60 s) until every push of the round has reached its hook.
dir='{}'
[ -f "$dir/expected" ] || exit 0
expected=$(cat "$dir/expected")
: > "$dir/arrived.$$"
i=0
while :; do
  set -- "$dir"/arrived.*
  [ $# -ge "$expected" ] && exit 0
  i=$((i + 1)); [ $i -gt 300 ] && exit 0
  sleep 0.2
done
"#,
                barrier.display()
            );
            let path = bare.join("hooks/pre-receive");
            std::fs::write(&path, hook).unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        },
    );
    assert!(
        s.bare.join("hooks/pre-receive.guard-chained").is_file(),
        "install.sh keeps the barrier as the chained hook"
    );
    s.config("receive.advertisePushOptions", "true");
    s.config("core.logAllRefUpdates", "always");
    for user in BREAK_GLASS_USERS {
        s.bare_git(&["config", "--add", "guard.bypass", user]);
    }
    let log = s.tmp.path("audit.log");
    s.config("guard.auditLog", log.to_str().unwrap());
    s
}

/// receive-pack's line when a push whose hook accepted it finds the ref moved by another
/// (`is at ... but expected ...`), or still locked by the one moving it (`Unable to create
/// ...lock`).
const LOST_RACE: &str = "remote: error: cannot lock ref 'refs/heads/main': ";

/// What the hook said about a push: its own lines (`remote: error:`, `warning:`, `hint:`,
/// `guard:`), in order, without receive-pack's.
fn guard_lines(pushed: &Pushed) -> Vec<String> {
    pushed
        .lines()
        .iter()
        .filter(|l| !l.starts_with(LOST_RACE))
        .filter_map(|l| l.strip_prefix("remote: "))
        .filter(|l| {
            ["error:", "warning:", "hint:", "guard:"]
                .iter()
                .any(|p| l.starts_with(p))
        })
        .map(str::to_string)
        .collect()
}

/// Whether the hook accepted the push (whether or not git then moved the ref).
fn hook_accepted(pushed: &Pushed) -> bool {
    !pushed.stderr.contains("pre-receive hook declined")
        && guard_lines(pushed).iter().any(|l| {
            l.starts_with("guard: 1 ref update accepted")
                || l.starts_with("warning: guard: break-glass by ")
        })
}

fn push_as(s: &Server, p: &Push, url: &str) -> Pushed {
    let args = p.args(url);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    s.push_from(&s.work, &args, &[("GIT_TERMINAL_PROMPT", "0")])
}

/// The pushes' commits, each a child of the server's base made in its working clone.
fn make_pushes(s: &Server) -> Vec<Push> {
    (0..PUSHES)
        .map(|k| {
            let (user, kind, target) = plan(k);
            s.git(&["checkout", "-q", "--detach", &s.base]);
            let message = format!("Push {k} by {user}");
            let commit = match kind {
                Kind::Clean => {
                    write_in(&s.work, &format!("notes/{k}.md"), &format!("note {k}\n"));
                    commit_in(s, &s.work, None, &message)
                }
                Kind::HumanWithTrailer => {
                    append_in(&s.work, "qa/freeze.toml", &format!("# reviewed {k}\n"));
                    commit_in(
                        s,
                        &s.work,
                        None,
                        &format!("{message}\n\nFreeze-Lease: human"),
                    )
                }
                Kind::AgentEdit | Kind::BreakGlass | Kind::BreakGlassRefused => {
                    append_in(&s.work, "qa/freeze.toml", &format!("# parked {k}\n"));
                    commit_in(s, &s.work, Some((AGENT_NAME, AGENT_EMAIL)), &message)
                }
            };
            Push {
                k,
                user,
                kind,
                target,
                commit,
            }
        })
        .collect()
}

#[test]
fn fifty_concurrent_http_pushes_decide_as_a_sequential_replay() {
    let s = load_server();
    let http = Http::start(s.home(), s.home(), &USERS);
    let pushes = make_pushes(&s);
    let barrier = s.tmp.path("barrier");
    std::fs::write(barrier.join("expected"), PUSHES.to_string()).unwrap();

    let results: Vec<Pushed> = std::thread::scope(|scope| {
        let handles: Vec<_> = pushes
            .iter()
            .map(|p| {
                let (s, http) = (&s, &http);
                scope.spawn(move || push_as(s, p, &http.url(p.user, "bare.git")))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    std::fs::remove_file(barrier.join("expected")).unwrap();
    let arrived = dir_names(&barrier).len();
    assert_eq!(arrived, PUSHES, "every push reached the hook");

    // Each push decided as its kind says, by the hook, with the reason and path.
    for (p, pushed) in pushes.iter().zip(&results) {
        let what = format!("push {} ({:?} by {} to {})", p.k, p.kind, p.user, p.target);
        assert_eq!(
            hook_accepted(pushed),
            p.accepted(),
            "{what}:\n{}",
            pushed.stderr
        );
        let lines = guard_lines(pushed);
        let has = |prefix: &str, text: &str| {
            lines
                .iter()
                .any(|l| l.starts_with(prefix) && l.contains(text))
        };
        match p.kind {
            Kind::AgentEdit | Kind::BreakGlassRefused => assert!(
                has(
                    &format!(
                        "error: {}: [agent_edit_protected] {}",
                        p.target,
                        &p.commit[..7]
                    ),
                    "qa/freeze.toml"
                ),
                "{what}:\n{}",
                pushed.stderr
            ),
            Kind::BreakGlass => assert!(
                has(
                    &format!("warning: guard: break-glass by {}:", p.user),
                    &format!("(reason: load test {})", p.k)
                ),
                "{what}:\n{}",
                pushed.stderr
            ),
            Kind::Clean | Kind::HumanWithTrailer => assert!(
                has("guard: 1 ref update accepted, 1 commit judged", ""),
                "{what}:\n{}",
                pushed.stderr
            ),
        }
        if p.kind == Kind::BreakGlassRefused {
            assert!(
                has(
                    "warning: guard: break-glass refused: ",
                    &format!("{} is not in the server's guard.bypass list", p.user)
                ),
                "{what}:\n{}",
                pushed.stderr
            );
        }
    }

    // Refs: a branch of its own holds its commit exactly when the hook accepted it; of the
    // accepted pushes to main, the one git applied first holds it, the others found main
    // moved; a rejected commit is in no ref's history and not even in the repository.
    let mut main_winners = Vec::new();
    for (p, pushed) in pushes.iter().zip(&results) {
        if p.target == "refs/heads/main" {
            if pushed.ok {
                main_winners.push(p.commit.clone());
            } else if p.accepted() {
                assert!(
                    pushed.has_line_starting(LOST_RACE),
                    "push {}: {}",
                    p.k,
                    pushed.stderr
                );
            }
            assert!(pushed.ok <= p.accepted(), "push {}: {}", p.k, pushed.stderr);
        } else {
            assert_eq!(pushed.ok, p.accepted(), "push {}: {}", p.k, pushed.stderr);
            let expected = p.accepted().then(|| p.commit.clone());
            assert_eq!(s.server_ref(&p.target), expected, "push {}", p.k);
        }
    }
    assert_eq!(
        main_winners.len(),
        1,
        "one push moved main: {main_winners:?}"
    );
    assert_eq!(
        s.server_ref("refs/heads/main"),
        main_winners.first().cloned()
    );
    let ever_held: BTreeSet<String> = s
        .bare_git(&["log", "-g", "--all", "--format=%H"])
        .lines()
        .map(str::to_string)
        .collect();
    for p in pushes.iter().filter(|p| !p.accepted()) {
        assert!(!ever_held.contains(&p.commit), "push {} held by a ref", p.k);
        let present = s
            .git_cmd(&s.bare)
            .args(["cat-file", "-e", &p.commit])
            .status()
            .unwrap();
        assert!(!present.success(), "rejected push {} left its commit", p.k);
    }
    assert_fsck_clean(&s);

    // The audit log: one whole JSON line per break-glass push, naming it.
    let log = std::fs::read_to_string(s.tmp.path("audit.log")).unwrap();
    let mut logged: Vec<(String, String, String, String)> = log
        .lines()
        .map(|line| {
            let entry: serde_json::Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("audit log line is not JSON ({e}): {line:?}"));
            assert_eq!(entry["event"], "guard.bypass", "{line}");
            let refs = entry["refs"].as_array().unwrap();
            assert_eq!(refs.len(), 1, "{line}");
            assert!(entry["time_utc"].as_str().unwrap().ends_with('Z'), "{line}");
            let field = |v: &serde_json::Value| v.as_str().unwrap().to_string();
            (
                field(&entry["pusher"]),
                field(&entry["reason"]),
                field(&refs[0]["ref"]),
                field(&refs[0]["new"]),
            )
        })
        .collect();
    logged.sort();
    let mut expected: Vec<(String, String, String, String)> = pushes
        .iter()
        .filter(|p| p.kind == Kind::BreakGlass)
        .map(|p| {
            (
                p.user.to_string(),
                format!("load test {}", p.k),
                p.target.clone(),
                p.commit.clone(),
            )
        })
        .collect();
    expected.sort();
    assert_eq!(logged, expected);
    drop(http);

    // The same pushes one at a time into a fresh server, each into the state every push of
    // the round saw (main at the base): the hook says the same, line for line.
    let fresh = load_server();
    assert_eq!(fresh.base, s.base, "the same bootstrap commit");
    let http = Http::start(fresh.home(), fresh.home(), &USERS);
    // A new branch is judged against main as it is then: the hint to drop a commit names
    // main's tip (`git rebase -i TIP`), which under load may already be the winner's.
    let main_tips = [s.short(&s.base), s.short(&main_winners[0])];
    let mut differ = BTreeMap::new();
    for (p, pushed) in pushes.iter().zip(&results) {
        fresh.bare_git(&["update-ref", "refs/heads/main", &fresh.base]);
        let replayed = push_as(&s, p, &http.url(p.user, "bare.git"));
        assert_eq!(
            replayed.ok,
            p.accepted(),
            "replay {}: {}",
            p.k,
            replayed.stderr
        );
        let (under_load, alone) = (
            decision(pushed, &main_tips),
            decision(&replayed, &main_tips[..1]),
        );
        if under_load != alone {
            differ.insert(p.k, (under_load, alone));
        }
    }
    assert!(
        differ.is_empty(),
        "decisions under load (left) and in the replay (right): {differ:#?}"
    );
    assert_fsck_clean(&fresh);
}

/// The hook's lines with the id in a `git rebase -i ID` hint replaced by `TIP`, which must be
/// one of `tips` (abbreviated).
#[track_caller]
fn decision(pushed: &Pushed, tips: &[String]) -> Vec<String> {
    guard_lines(pushed)
        .into_iter()
        .map(|line| match line.split_once("`git rebase -i ") {
            Some((head, rest)) if line.starts_with("hint: ") => {
                let (id, tail) = rest.split_once('`').unwrap();
                assert!(tips.iter().any(|t| t == id), "{id} in {line}");
                format!("{head}`git rebase -i TIP`{tail}")
            }
            _ => line,
        })
        .collect()
}
