//! Signed human commits (`[humans]`, strict mode): real keys made with `ssh-keygen`, commits
//! signed by git itself (`gpg.format=ssh`), checked by `guard check` and through the
//! installed pre-receive hook.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::scenario::freeze_toml;
use crate::support::{Project, Run, hermetic};

const HUMAN: (&str, &str) = ("Human Dev", "dev@example.com");
const LEASE: &str = "tests/test_retry.py::test_backoff";

/// A key pair made with ssh-keygen: (private key path, public key line).
fn keygen(dir: &Path, name: &str, kind: &str) -> (PathBuf, String) {
    let key = dir.join(name);
    let mut args = vec![
        "-q",
        "-t",
        kind,
        "-N",
        "",
        "-C",
        name,
        "-f",
        key.to_str().unwrap(),
    ];
    if kind == "rsa" {
        args.extend(["-b", "2048"]);
    }
    assert!(
        Command::new("ssh-keygen")
            .args(&args)
            .status()
            .expect("ssh-keygen is installed")
            .success()
    );
    let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
    (
        key,
        public
            .split_whitespace()
            .take(2)
            .collect::<Vec<_>>()
            .join(" "),
    )
}

fn ledger(strict: bool) -> String {
    let agents = if strict {
        "[agents]\ndefault = \"agent\"\n"
    } else {
        ""
    };
    format!(
        "[properties]\nrequired = false\n\n[fixtures]\nlockfile = \"qa/fixtures.lock.json\"\n\n[freeze]\nfile = \"qa/freeze.toml\"\n\n[humans]\nallowed_signers = \"qa/allowed_signers\"\nrequire_signature = true\n{agents}"
    )
}

struct Keys {
    _dir: tempfile::TempDir,
    dev: PathBuf,
    dev_rsa: PathBuf,
    stranger: PathBuf,
    stranger_public: String,
    allowed: String,
}

fn keys() -> Keys {
    let dir = tempfile::tempdir().unwrap();
    let (dev, dev_public) = keygen(dir.path(), "dev", "ed25519");
    let (dev_rsa, dev_rsa_public) = keygen(dir.path(), "dev-rsa", "rsa");
    let (stranger, stranger_public) = keygen(dir.path(), "stranger", "ed25519");
    let allowed = format!(
        "# who may sign human commits\ndev@example.com namespaces=\"git\" {dev_public}\ndev@example.com {dev_rsa_public}\n"
    );
    Keys {
        _dir: dir,
        dev,
        dev_rsa,
        stranger,
        stranger_public,
        allowed,
    }
}

/// A repository whose base commit holds the ledger and the allowed signers.
fn repo(keys: &Keys, strict: bool) -> (Project, String) {
    let p = Project::git();
    p.write("qa/merge_ledger.toml", ledger(strict))
        .write("qa/allowed_signers", &keys.allowed)
        .write(
            "qa/freeze.toml",
            freeze_toml("max_active_leases = 4", &[(LEASE, "2099-01-31")]),
        )
        .write("qa/fixtures.lock.json", "{\"files\": {}}\n")
        .write("src/app.py", "VERSION = 1\n");
    let base = p.commit_as(HUMAN, "Start\n");
    (p, base)
}

/// Commits everything as the human, signed with `key` (None: unsigned).
fn commit(p: &Project, message: &str, key: Option<&Path>) -> String {
    p.git_cmd(&["add", "-A"]);
    match key {
        Some(key) => {
            let signing = format!("user.signingkey={}", key.display());
            p.commit_index_as(
                HUMAN,
                message,
                &["gpg.format=ssh", &signing, "commit.gpgSign=true"],
            )
        }
        None => p.commit_index_as(HUMAN, message, &[]),
    }
}

fn extend_lease(p: &Project) {
    p.write(
        "qa/freeze.toml",
        freeze_toml("max_active_leases = 4", &[(LEASE, "2099-06-30")]),
    );
}

fn check(p: &Project, range: &str) -> Run {
    p.guard_both_walks(&["check", range, "--format", "json"])
}

#[test]
fn signed_human_commit_with_its_trailer_passes() {
    let keys = keys();
    for key in [&keys.dev, &keys.dev_rsa] {
        let (p, base) = repo(&keys, false);
        extend_lease(&p);
        commit(&p, "Extend the lease\n\nFreeze-Lease: human\n", Some(key));
        let run = check(&p, &format!("{base}..HEAD"));
        assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
        let json = run.json();
        assert_eq!(json["commits"][0]["signature"]["status"], "verified");
        assert_eq!(
            json["commits"][0]["signature"]["principal"],
            "dev@example.com"
        );
        assert!(json["commits"][0]["agent"].is_null());
        let text = p.guard_both_walks(&["check", &format!("{base}..HEAD"), "--verbose"]);
        assert!(
            text.stdout
                .contains("signature: signed by dev@example.com (SHA256:"),
            "{}",
            text.stdout
        );
    }
}

#[test]
fn unsigned_human_commit_passes_when_the_ledger_names_signers_without_requiring_them() {
    // `allowed_signers` without `require_signature`: signatures are read and shown, and an
    // unsigned human commit with its trailer still counts as the human's.
    let keys = keys();
    let (p, _) = repo(&keys, false);
    p.write(
        "qa/merge_ledger.toml",
        ledger(false).replace("require_signature = true", "require_signature = false"),
    );
    let base = commit(
        &p,
        "Signatures optional\n\nLedger-Change: human\n",
        Some(&keys.dev),
    );
    extend_lease(&p);
    commit(&p, "Extend the lease\n\nFreeze-Lease: human\n", None);
    let run = check(&p, &format!("{base}..HEAD"));
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.json()["findings"], serde_json::json!([]));
}

#[test]
fn an_unsigned_commit_that_weakens_a_test_is_judged_as_an_agents_in_strict_mode() {
    // Strict mode: a commit no allowed signer signed is not proven human, whatever its
    // author says, so what it does to the tests is judged as an agent's would be. Signed by
    // the human, the same change is the human's to make.
    let keys = keys();
    for (key, weakened) in [(None, 1), (Some(keys.dev.as_path()), 0)] {
        let (p, _) = repo(&keys, true);
        p.write(
            "tests/test_app.py",
            "from app import VERSION\n\n\ndef test_version():\n    assert VERSION == 1\n",
        );
        let base = commit(&p, "Test the version\n", Some(&keys.dev));
        p.write(
            "tests/test_app.py",
            "from app import VERSION\n\n\ndef test_version():\n    assert True\n",
        );
        commit(&p, "Simplify the version test\n", key);
        let run = check(&p, &format!("{base}..HEAD"));
        let json = run.json();
        let found: Vec<&serde_json::Value> = json["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["code"] == "weakened_test" && f["path"] == "tests/test_app.py")
            .collect();
        assert_eq!(found.len(), weakened, "{json:#}");
        assert_eq!(run.code, weakened as i32, "{}{}", run.stdout, run.stderr);
    }
}

#[test]
fn unsigned_human_commit_in_strict_mode_is_rejected() {
    let keys = keys();
    let (p, base) = repo(&keys, true);
    extend_lease(&p);
    let c = commit(&p, "Extend the lease\n\nFreeze-Lease: human\n", None);
    let run = check(&p, &format!("{base}..HEAD"));
    assert_eq!(run.code, 1);
    // Unproven, so an agent's: the edit is an agent's and its human trailer a forgery.
    assert_eq!(
        run.reasons(),
        vec![
            "agent_edit_protected",
            "forged_human_trailer",
            "unsigned_human_commit"
        ]
    );
    let json = run.json();
    let unsigned = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "unsigned_human_commit")
        .unwrap();
    assert_eq!(unsigned["commit"], p.short(&c));
    assert_eq!(json["commits"][0]["signature"]["status"], "unsigned");
    // An unsigned commit that changes nothing protected is fine even in strict mode.
    let (p, base) = repo(&keys, true);
    p.write("src/app.py", "VERSION = 2\n");
    commit(&p, "Bump\n", None);
    assert_eq!(check(&p, &format!("{base}..HEAD")).code, 0);
}

#[test]
fn commit_signed_by_a_key_outside_the_allowed_signers_is_rejected() {
    let keys = keys();
    let (p, base) = repo(&keys, false);
    extend_lease(&p);
    commit(
        &p,
        "Extend the lease\n\nFreeze-Lease: human\n",
        Some(&keys.stranger),
    );
    let run = check(&p, &format!("{base}..HEAD"));
    assert_eq!(
        run.reasons(),
        vec![
            "agent_edit_protected",
            "forged_human_trailer",
            "unknown_signer"
        ]
    );
}

#[test]
fn signer_whose_principal_is_not_the_committer_is_rejected() {
    let keys = keys();
    let (p, base) = repo(&keys, false);
    extend_lease(&p);
    p.git_cmd(&["add", "-A"]);
    let signing = format!("user.signingkey={}", keys.dev.display());
    p.commit_index_as(
        ("Someone Else", "else@example.com"),
        "Extend the lease\n\nFreeze-Lease: human\n",
        &["gpg.format=ssh", &signing, "commit.gpgSign=true"],
    );
    let run = check(&p, &format!("{base}..HEAD"));
    assert_eq!(
        run.reasons(),
        vec![
            "agent_edit_protected",
            "forged_human_trailer",
            "signer_not_committer"
        ]
    );
}

#[test]
fn tampered_signed_commit_is_rejected() {
    let keys = keys();
    let (p, base) = repo(&keys, false);
    extend_lease(&p);
    let signed = commit(
        &p,
        "Extend the lease\n\nFreeze-Lease: human\n",
        Some(&keys.dev),
    );
    // Rewrite the message but keep the signature header (named after the repository's hash):
    // the signature no longer covers it.
    let object = p.git_cmd(&["cat-file", "commit", &signed]);
    let header = match p.git_cmd(&["rev-parse", "--show-object-format"]).trim() {
        "sha256" => "gpgsig-sha256",
        _ => "gpgsig",
    };
    assert!(
        object.contains(&format!("\n{header} -----BEGIN SSH SIGNATURE-----")),
        "{object}"
    );
    let forged = object.replace("Extend the lease", "Extend the lease for good");
    let path = p.path(".git/forged-commit");
    std::fs::write(&path, forged).unwrap();
    let id = p
        .git_cmd(&["hash-object", "-w", "-t", "commit", path.to_str().unwrap()])
        .trim()
        .to_string();
    let run = check(&p, &format!("{base}..{id}"));
    assert_eq!(
        run.reasons(),
        vec![
            "agent_edit_protected",
            "bad_signature",
            "forged_human_trailer"
        ]
    );
    assert_eq!(run.json()["commits"][0]["signature"]["status"], "bad");
}

#[test]
fn signature_outside_valid_before_is_rejected() {
    let keys = keys();
    // The hermetic committer date is 2026-01-01; this key stopped being valid in 2025.
    let expired = keys.allowed.replace(
        "dev@example.com namespaces",
        "dev@example.com valid-before=\"20251231\",namespaces",
    );
    let p = Project::git();
    p.write("qa/merge_ledger.toml", ledger(false))
        .write("qa/allowed_signers", expired)
        .write(
            "qa/freeze.toml",
            freeze_toml("max_active_leases = 4", &[(LEASE, "2099-01-31")]),
        )
        .write("qa/fixtures.lock.json", "{\"files\": {}}\n");
    let base = p.commit_as(HUMAN, "Start\n");
    extend_lease(&p);
    commit(
        &p,
        "Extend the lease\n\nFreeze-Lease: human\n",
        Some(&keys.dev),
    );
    let run = check(&p, &format!("{base}..HEAD"));
    assert_eq!(
        run.reasons(),
        vec![
            "agent_edit_protected",
            "forged_human_trailer",
            "signature_expired"
        ]
    );
}

#[test]
fn a_push_cannot_bring_its_own_key() {
    // The range adds the stranger's key to qa/allowed_signers and, signed with it, edits the
    // freeze file: the allowed signers of the base apply, which do not know the key.
    let keys = keys();
    let (p, base) = repo(&keys, false);
    p.write(
        "qa/allowed_signers",
        format!("{}dev@example.com {}\n", keys.allowed, keys.stranger_public),
    );
    extend_lease(&p);
    commit(
        &p,
        "Trust my key, extend the lease\n\nLedger-Change: human\nFreeze-Lease: human\n",
        Some(&keys.stranger),
    );
    let run = check(&p, &format!("{base}..HEAD"));
    assert_eq!(run.code, 1);
    assert_eq!(
        run.reasons(),
        vec![
            "agent_edit_protected",
            "forged_human_trailer",
            "unknown_signer"
        ]
    );
    let json = run.json();
    let paths: Vec<&str> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "agent_edit_protected")
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, vec!["qa/allowed_signers", "qa/freeze.toml"]);
}

#[test]
fn malformed_allowed_signers_in_the_base_cannot_be_judged() {
    let keys = keys();
    let p = Project::git();
    p.write("qa/merge_ledger.toml", ledger(false))
        .write(
            "qa/allowed_signers",
            "dev@example.com ssh-ed25519 not-a-key\n",
        )
        .write("qa/freeze.toml", freeze_toml("max_active_leases = 4", &[]))
        .write("qa/fixtures.lock.json", "{\"files\": {}}\n");
    let base = p.commit_as(HUMAN, "Start\n");
    p.write("src/x.py", "x = 1\n");
    commit(&p, "Add x\n", Some(&keys.dev));
    let run = p.guard_both_walks(&["check", &format!("{base}..HEAD")]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("qa/allowed_signers") && run.stderr.contains(":1:"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_installed_pre_receive_hook_checks_signatures() {
    let keys = keys();
    let (p, _) = repo(&keys, true);
    let _server = serve(&p);
    extend_lease(&p);
    commit(&p, "Extend the lease\n\nFreeze-Lease: human\n", None);
    let (ok, stderr) = push(&p, "HEAD:refs/heads/main");
    assert!(!ok, "{stderr}");
    assert!(
        stderr.contains("remote: error: refs/heads/main: [unsigned_human_commit]"),
        "{stderr}"
    );

    p.git_cmd(&["reset", "-q", "--hard", "HEAD~"]);
    extend_lease(&p);
    commit(
        &p,
        "Extend the lease\n\nFreeze-Lease: human\n",
        Some(&keys.dev),
    );
    let (ok, stderr) = push(&p, "HEAD:refs/heads/main");
    assert!(ok, "{stderr}");
}

#[test]
fn the_hook_names_the_signer_of_every_commit_it_judges() {
    // The hooks describe every commit when they check signatures, so that the pusher learns
    // who signed each, even a commit that changes nothing protected (without signers they
    // describe only the commits that do: there is no signer to name).
    let keys = keys();
    let (p, _) = repo(&keys, false);
    let _server = serve(&p);
    p.write("src/app.py", "VERSION = 2\n");
    let signed = commit(&p, "Bump the version\n", Some(&keys.dev));
    p.write("src/app.py", "VERSION = 3\n");
    let unsigned = commit(&p, "Bump it again\n", None);
    let (ok, stderr) = push(&p, "HEAD:refs/heads/main");
    assert!(ok, "{stderr}");
    let line = |id: &str| format!("remote: guard: refs/heads/main: {} ", p.short(id));
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with(&line(&signed))
                && l.contains("signed by dev@example.com (SHA256:")),
        "{stderr}"
    );
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with(&line(&unsigned)) && l.contains("not signed")),
        "{stderr}"
    );
}

// Issue 10: the time and the allowed signers a push is judged by.

/// A bare clone of `p` with guard's pre-receive hook installed by `install.sh`, as remote
/// `server` of `p`; the temp dir that holds it. (`hermetic` leaves out the forge variables,
/// so no pusher identity leaks into the hook from the surroundings.)
fn serve(p: &Project) -> tempfile::TempDir {
    let server = tempfile::tempdir().unwrap();
    let bare = server.path().join("server.git");
    let status = hermetic(Command::new("git"), server.path())
        .args([
            "clone",
            "-q",
            "--bare",
            p.root().to_str().unwrap(),
            bare.to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert!(status.success());
    let install = hermetic(
        Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/install.sh")),
        server.path(),
    )
    .args([
        "--server",
        bare.to_str().unwrap(),
        "--guard",
        env!("CARGO_BIN_EXE_guard"),
    ])
    .output()
    .unwrap();
    assert!(
        install.status.success(),
        "{}",
        String::from_utf8_lossy(&install.stderr)
    );
    // The default 4 s budget is for a release build on an idle server; a debug build beside
    // the whole test suite must not be rejected for being slow.
    let status = hermetic(Command::new("git"), server.path())
        .args([
            "-C",
            bare.to_str().unwrap(),
            "config",
            "guard.timeout",
            "300",
        ])
        .status()
        .unwrap();
    assert!(status.success());
    p.git_cmd(&["remote", "add", "server", bare.to_str().unwrap()]);
    server
}

/// `git push server REFSPEC` from `p`: (accepted, stderr).
fn push(p: &Project, refspec: &str) -> (bool, String) {
    let out = hermetic(Command::new("git"), p.root())
        .args(["push", "server", refspec])
        .current_dir(p.root())
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_retired_key_cannot_sign_a_push_with_a_backdated_commit() {
    let keys = keys();
    // The key was retired at the start of 2020; the commit claims to be from 2019.
    let retired = keys.allowed.replace(
        "dev@example.com namespaces",
        "dev@example.com valid-before=\"20200101\",namespaces",
    );
    let (p, _) = repo(&keys, false);
    p.write("qa/allowed_signers", &retired);
    commit(
        &p,
        "Retire the key\n\nLedger-Change: human\n",
        Some(&keys.dev_rsa),
    );
    let _server = serve(&p);
    extend_lease(&p);
    p.git_cmd(&["add", "-A"]);
    let signing = format!("user.signingkey={}", keys.dev.display());
    let out = hermetic(Command::new("git"), p.root())
        .args(["-c", "gpg.format=ssh", "-c", &signing, "commit", "-q", "-S"])
        .args(["-m", "Extend the lease\n\nFreeze-Lease: human\n"])
        .env("GIT_COMMITTER_DATE", "2019-06-01T00:00:00Z")
        .env("GIT_AUTHOR_DATE", "2019-06-01T00:00:00Z")
        .current_dir(p.root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // An audit verifies at the committer date, as git does: then the key was valid.
    let run = check(&p, "HEAD~..HEAD");
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    // The push is today, after the key was retired.
    let (ok, stderr) = push(&p, "HEAD:refs/heads/main");
    assert!(!ok, "{stderr}");
    assert!(
        stderr.contains("remote: error: refs/heads/main: [signature_expired]"),
        "{stderr}"
    );
}

#[test]
fn a_branch_made_before_a_key_was_removed_is_judged_by_todays_signers() {
    let keys = keys();
    let (p, start) = repo(&keys, false);
    let _server = serve(&p);
    // A human removes the ed25519 key on main (signed with the RSA key, which stays).
    let without_dev = keys
        .allowed
        .lines()
        .filter(|l| !l.contains("namespaces"))
        .collect::<Vec<_>>()
        .join("\n");
    p.write("qa/allowed_signers", format!("{without_dev}\n"));
    commit(
        &p,
        "Remove the laptop key\n\nLedger-Change: human\n",
        Some(&keys.dev_rsa),
    );
    let (ok, stderr) = push(&p, "HEAD:refs/heads/main");
    assert!(ok, "{stderr}");

    // A branch made at the commit before still lists the key; the key signs there.
    p.git_cmd(&["checkout", "-q", "-b", "hot", &start]);
    let (ok, stderr) = push(&p, "hot");
    assert!(ok, "{stderr}");
    extend_lease(&p);
    commit(
        &p,
        "Extend the lease\n\nFreeze-Lease: human\n",
        Some(&keys.dev),
    );
    let (ok, stderr) = push(&p, "hot");
    assert!(!ok, "{stderr}");
    assert!(
        stderr.contains("remote: error: refs/heads/hot: [unknown_signer]"),
        "{stderr}"
    );
}

#[test]
fn allowed_signers_that_do_not_parse_are_refused_before_they_land() {
    let keys = keys();
    let (p, base) = repo(&keys, false);
    p.write(
        "qa/allowed_signers",
        format!("{}dev@example.com ssh-ed25519 not-a-key\n", keys.allowed),
    );
    let c = commit(&p, "Add a key\n\nLedger-Change: human\n", Some(&keys.dev));
    let run = check(&p, &format!("{base}..HEAD"));
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.reasons(), vec!["ledger_invalid"]);
    let json = run.json();
    let f = &json["findings"][0];
    assert_eq!(f["path"], "qa/allowed_signers");
    assert_eq!(f["commit"], p.short(&c));
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("qa/allowed_signers:4:"),
        "{f}"
    );
}
