//! Objects git keeps in pack files: a repository after `git gc` or `git fast-import`, and a
//! push of 100 objects or more, which reaches the pre-receive hook's quarantine as a pack
//! (`receive.unpackLimit`). guard reads packed trees, commits and test files itself
//! (`git::pack`), following deltas by offset and by id; these tests hold it to the verdicts
//! it gives on the same objects loose, which libgit2 reads.

use std::process::Command;

use crate::check::{CURSOR, HUMAN, repo, since};
use crate::support::server::{Server, write_in};
use crate::support::{Project, fast_import, hermetic};

/// Appends 300 commits to `p` with `git fast-import` (which writes them as one pack, deltas
/// on the previous versions): each rewrites one of 40 files in the busy `tests/` directory,
/// every seventh by the agent; at 150 the agent empties the assertion of
/// `tests/test_retry.py`, and at 200 it parks a test in the freeze file.
fn agent_history(p: &Project) {
    let freeze = p.read("qa/freeze.toml");
    let who = |i| {
        if i % 7 == 3 || i == 150 || i == 200 {
            CURSOR
        } else {
            HUMAN
        }
    };
    fast_import(p, 300, who, |i| match i {
        150 => (
            "tests/test_retry.py".to_string(),
            "def test_backoff():\n    pass\n".to_string(),
        ),
        200 => ("qa/freeze.toml".to_string(), format!("{freeze}# parked\n")),
        _ => (
            format!("tests/test_mod_{:02}.py", i % 40),
            (0..=i % 12)
                .map(|k| format!("def test_{k}():\n    assert {i} + {k} == {}\n", i + k))
                .collect(),
        ),
    });
}

/// The pack files of `p`'s repository.
fn packs(p: &Project) -> Vec<std::path::PathBuf> {
    let Ok(dir) = std::fs::read_dir(p.path(".git/objects/pack")) else {
        return Vec::new();
    };
    dir.map(|e| e.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "pack"))
        .collect()
}

/// Unpacks every pack of `p`'s repository into loose objects.
fn unpack_all(p: &Project) {
    for pack in packs(p) {
        let moved = p.path("moved.pack");
        std::fs::rename(&pack, &moved).unwrap();
        std::fs::remove_file(pack.with_extension("idx")).unwrap();
        let _ = std::fs::remove_file(pack.with_extension("rev"));
        let status = hermetic(Command::new("git"), p.root())
            .args(["unpack-objects", "-q"])
            .current_dir(p.root())
            .stdin(std::fs::File::open(&moved).unwrap())
            .status()
            .unwrap();
        assert!(status.success());
        std::fs::remove_file(&moved).unwrap();
    }
    assert!(packs(p).is_empty());
}

#[test]
fn a_history_is_judged_the_same_loose_and_packed_every_way_git_packs() {
    let (p, base) = repo();
    agent_history(&p);
    let args = ["check", &since(&base), "--format", "json"];
    let imported = p.guard_both_walks(&args);
    unpack_all(&p);
    let loose = p.guard_both_walks(&args);
    // What libgit2 reads from loose objects is the reference; it must find both attacks.
    let codes: Vec<String> = loose.json()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_string())
        .collect();
    assert!(codes.contains(&"weakened_test".to_string()), "{codes:?}");
    assert!(
        codes.contains(&"agent_edit_protected".to_string()),
        "{codes:?}"
    );
    let same = |packed: &crate::support::Run, how: &str| {
        assert_eq!(
            (packed.code, &packed.stdout, &packed.stderr),
            (loose.code, &loose.stdout, &loose.stderr),
            "{how}"
        );
    };
    same(&imported, "as git fast-import packed it");
    // Long delta chains by offset (as `git gc --aggressive` packs), then deltas on bases named
    // by id (as a server that does not offer offsets sends them).
    for repack in [
        &["repack", "-adfq", "--depth=50", "--window=250"][..],
        &["-c", "repack.useDeltaBaseOffset=false", "repack", "-adfq"],
    ] {
        p.git_cmd(repack);
        assert_eq!(packs(&p).len(), 1);
        same(&p.guard_both_walks(&args), &format!("git {repack:?}"));
    }
}

const CALC: &str = "from calc import total\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n";

#[test]
fn a_push_that_arrives_as_a_pack_is_judged_as_one_that_arrives_loose() {
    // Below git's `receive.unpackLimit` (100 objects) a push is unpacked into loose objects in
    // the quarantine; at 1, every push stays a pack, and the server's own objects are packed.
    for unpack_limit in ["100", "1"] {
        let s = Server::new("");
        s.config("receive.unpackLimit", unpack_limit);
        // Under 100 objects: 2 commits of 30 files and 2 trees each.
        for round in 0..2 {
            for i in 0..30 {
                let body = format!(
                    "def test_{i}():\n    assert {round} + {i} == {}\n",
                    round + i
                );
                write_in(&s.work, &format!("tests/test_mod_{i:02}.py"), &body);
            }
            write_in(&s.work, "tests/test_calc.py", CALC);
            s.commit(&format!("Round {round}\n"));
        }
        s.push(&["origin", "main"]).assert_accepted();
        // The push was kept as a pack (the bootstrap commit before it came loose).
        let in_pack = s.bare_git(&["count-objects", "-v"]);
        assert_eq!(
            in_pack.contains("in-pack: 0\n"),
            unpack_limit == "100",
            "{in_pack}"
        );
        if unpack_limit == "1" {
            s.bare_git(&["repack", "-adfq"]);
        }
        write_in(
            &s.work,
            "tests/test_calc.py",
            &CALC.replace("    assert total([1, 2]) == 3\n", "    pass\n"),
        );
        let weakened = s.agent_commit("Tidy test_total\n");
        let parked = s.agent_edits_freeze("Park the flaky test\n");
        let pushed = s.push(&["origin", "main"]);
        pushed.assert_rejected_with(&format!(
            "remote: error: refs/heads/main: [weakened_test] {} \"Tidy test_total\" tests/test_calc.py:",
            s.short(&weakened)
        ));
        pushed.assert_rejected_with(&format!(
            "remote: error: refs/heads/main: [agent_edit_protected] {}",
            s.short(&parked)
        ));
    }
}
