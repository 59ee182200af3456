#!/usr/bin/env python3
"""Write a `git fast-import` stream of a synthetic history to stdout: the articles' layout or
the one gen_repo_stream.py writes, in a straight line or grown as GitHub projects grow.

Usage: gen_history_stream.py COMMITS [--layout articles|bench] [--shape linear|merges]
                             [--reject] [--protect-every N] [--scale F] [--mark-a N]

Used by gen_history.sh; see there. Layouts (the policy files, the ledger and the kinds of
protected edit are gen_repo_stream.py's in both):
  - articles: the layout of the two articles, where ordinary tests and the protected
    tests/fixtures/ and tests/properties/ are siblings under one busy tests/ directory:
    10,000 test files in 200 directories directly under tests/ (tests/area_NNN/test_N.py),
    20,000 files under src/ (src/pNN/mNN/file_N.py, 50 to a directory), 40 fixtures with
    their lockfile, 6 property tests and 4 seeds. Half of the ordinary edits are to tests, so
    nearly every commit changes tests/.
  - bench: gen_repo_stream.py's 30,000 files in quiet nested directories.
  --scale F multiplies the ordinary file counts (0.1 for quick runs).
Shapes (COMMITS counts every commit, merges included):
  - linear: every commit on main, each editing 1 to 4 ordinary files (1 in 50 also adds one).
  - merges: every change is a branch of 1 to 5 such commits, forked from main's tip or from
    one of the 3 merges before it (changes under review at the same time), merged into main
    with a `--no-ff` merge commit (committer GitHub, as the web UI makes them); 1 in 5 of the
    branches main moved past first merges main back in (its first parent the branch). A merge's tree is main's tip
    with the branch's files, as git would resolve it.
In both, 40% of ordinary commits are agents' (known by e-mail or a `Co-authored-by:`
trailer, as the default ledger lists them), and about every N commits (default 300,
jittered) a human edits protected paths with the trailer the ledger asks for (in `merges`,
on a branch of its own); with --reject those commits carry no trailer, so `guard check`
rejects the range (a finding per protected commit). The tag refs/tags/bench/A marks main's
commit at or after commit number --mark-a (default COMMITS/10), so bench/A..main spans about
90% of the history. Deterministic: the same arguments give the same ids. Prints a summary to
stderr.
"""

import argparse
import hashlib
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_repo_stream import (  # noqa: E402  (the bench layout and the policy files)
    AGENTS,
    BASE_TIME,
    FREEZE_HEAD,
    HUMANS,
    LEASE,
    LEDGER,
    PROPERTY,
    Stream,
    body,
    fixture_bytes,
    ordinary_paths,
)

MERGER = ("GitHub", "noreply@github.com")


def articles_paths(scale):
    """(ordinary paths, fixture count): tests/area_NNN/test_N.py and src/pNN/mNN/file_N.py."""
    test_files = max(20, int(10_000 * scale))
    test_dirs = max(2, int(200 * scale))
    src_files = max(40, int(20_000 * scale))
    tests = [f"tests/area_{i % test_dirs:03d}/test_{i}.py" for i in range(test_files)]
    src_dirs = max(1, src_files // 50)
    src = []
    for i in range(src_files):
        d = i % src_dirs
        src.append(f"src/p{d // 20:02d}/m{d % 20:02d}/file_{i}.py")
    return tests, src


class History:
    """The stream, with marks for commits and blobs, and the policy files' state."""

    def __init__(self, args):
        self.args = args
        self.rng = random.Random(515151)
        self.st = Stream(sys.stdout.buffer)
        self.mark = 0
        self.commits = 0
        self.protected = 0
        self.fixtures_n = 40 if args.layout == "articles" else 20
        self.fixture_paths = [f"tests/fixtures/case_{i:02d}.json" for i in range(self.fixtures_n)]
        self.fixture_rev = {p: 0 for p in self.fixture_paths}
        self.props_n, self.seeds_n = 6, 4
        self.leases = 1
        self.floor = 70
        if args.layout == "articles":
            tests, src = articles_paths(args.scale)
            # Edits go half to tests, half to src.
            self.pools = [tests, src]
        else:
            count = max(50, int(30_000 * args.scale)) - 3 - self.fixtures_n - 10
            self.pools = [ordinary_paths(count)]
        self.revs = {}

    def next_mark(self):
        self.mark += 1
        return self.mark

    def blob(self, content):
        m = self.next_mark()
        self.st.raw(f"blob\nmark :{m}\n")
        self.st.data(content)
        return m

    def commit(self, ref, who, message, trailers, parents, files, committer=None):
        """Writes a commit on `ref` with `parents` (marks) and `files` (path -> blob mark)."""
        self.commits += 1
        m = self.next_mark()
        name, email = who
        cname, cemail = committer or who
        ts = BASE_TIME + self.commits * 97
        self.st.raw(f"commit {ref}\nmark :{m}\n")
        self.st.raw(f"author {name} <{email}> {ts} +0000\n")
        self.st.raw(f"committer {cname} <{cemail}> {ts} +0000\n")
        msg = message + "\n"
        if trailers:
            msg += "\n" + "\n".join(trailers) + "\n"
        self.st.data(msg)
        if parents:
            self.st.raw(f"from :{parents[0]}\n")
            for p in parents[1:]:
                self.st.raw(f"merge :{p}\n")
        for path, blob in files.items():
            self.st.raw(f"M 100644 :{blob} {path}\n")
        self.st.raw("\n")
        return m

    # The policy files, as gen_repo_stream.py writes them.
    def lockfile(self):
        entries = ",\n".join(
            f'    "{p}": "{hashlib.sha256(fixture_bytes(i, self.fixture_rev[p]).encode()).hexdigest()}"'
            for i, p in enumerate(self.fixture_paths)
        )
        return '{\n  "files": {\n' + entries + "\n  }\n}\n"

    def freeze(self):
        return FREEZE_HEAD + "".join(LEASE.format(n=k) for k in range(self.leases))

    def initial_files(self):
        files = {
            "qa/merge_ledger.toml": LEDGER.format(floor=self.floor),
            "qa/freeze.toml": self.freeze(),
            "qa/fixtures.lock.json": self.lockfile(),
        }
        for i, p in enumerate(self.fixture_paths):
            files[p] = fixture_bytes(i, 0)
        for k in range(self.props_n):
            files[f"tests/properties/test_prop_{k}.py"] = PROPERTY.format(n=k, rev=0)
        for k in range(self.seeds_n):
            files[f"tests/properties/seeds/seed_{k}.bin"] = f"seed {k}\n"
        for pool in self.pools:
            for p in pool:
                files[p] = body(p, 0, self.rng)
        return {p: self.blob(c) for p, c in files.items()}

    def protected_edit(self):
        """(author, message, trailers, files) of the next human edit of protected paths."""
        kinds = ["ledger", "freeze", "fixtures", "properties"]
        kind = kinds[self.protected % len(kinds)]
        self.protected += 1
        n = self.protected
        who = HUMANS[n % len(HUMANS)]
        if kind == "ledger":
            self.floor = 70 + n % 20
            changes = {"qa/merge_ledger.toml": LEDGER.format(floor=self.floor)}
            trailer, msg = "Ledger-Change: human", f"Raise the proven-coverage floor to {self.floor}%"
        elif kind == "freeze":
            self.leases = 1 + n % 6
            changes = {"qa/freeze.toml": self.freeze()}
            trailer, msg = "Freeze-Lease: human", f"Freeze: {self.leases} active leases"
        elif kind == "fixtures":
            i = n % self.fixtures_n
            p = self.fixture_paths[i]
            self.fixture_rev[p] += 1
            changes = {p: fixture_bytes(i, self.fixture_rev[p]), "qa/fixtures.lock.json": self.lockfile()}
            trailer, msg = "Fixture-Lock: human", f"Regenerate golden fixture {p}"
        else:
            k = n % self.props_n
            changes = {
                f"tests/properties/test_prop_{k}.py": PROPERTY.format(n=k, rev=n),
                f"tests/properties/seeds/seed_{n % self.seeds_n}.bin": f"seed {n}\n",
            }
            trailer, msg = "Property-Seeds: human", f"Strengthen property test {k}"
        trailers = [] if self.args.reject else [trailer]
        return who, msg, trailers, {p: self.blob(c) for p, c in changes.items()}

    def ordinary_edit(self, label):
        """(author, message, trailers, files) of an ordinary change of 1 to 4 files."""
        rng = self.rng
        files = {}
        for _ in range(rng.randint(1, 4)):
            pool = self.pools[rng.randrange(len(self.pools))]
            p = pool[rng.randrange(len(pool))]
            self.revs[p] = self.revs.get(p, 0) + 1
            files[p] = self.blob(body(p, self.revs[p], rng))
        if rng.random() < 0.02:
            pool = self.pools[-1]
            top = pool[0].rsplit("/", 1)[0]
            p = f"{top}/added_{self.commits}.py"
            pool.append(p)
            files[p] = self.blob(body(p, 0, rng))
        if rng.random() < 0.4:
            who, trailer = AGENTS[rng.randrange(len(AGENTS))]
            trailers = [trailer] if trailer else []
        else:
            who, trailers = HUMANS[rng.randrange(len(HUMANS))], []
        return who, f"Change {len(files)} file(s) ({label})", trailers, files


def linear(h, total, protect_every, mark_a):
    rng = h.rng
    tip = h.commit("refs/heads/main", HUMANS[0], "Initial import", [], [], h.initial_files())
    a = tip if mark_a <= 1 else None
    next_protect = protect_every + rng.randint(-50, 50)
    while h.commits < total:
        n = h.commits + 1
        if n >= next_protect:
            next_protect += max(2, protect_every + rng.randint(-100, 100))
            who, msg, trailers, files = h.protected_edit()
        else:
            who, msg, trailers, files = h.ordinary_edit(n)
        tip = h.commit("refs/heads/main", who, msg, trailers, [tip], files)
        if a is None and h.commits >= mark_a:
            a = tip
    return a


def merges(h, total, protect_every, mark_a):
    rng = h.rng
    tip = h.commit("refs/heads/main", HUMANS[0], "Initial import", [], [], h.initial_files())
    a = tip if mark_a <= 1 else None
    # Main's commits, and what each merge brought (path -> blob), newest last.
    main_tips = [tip]
    brought = [{}]
    next_protect = protect_every + rng.randint(-50, 50)
    pr = 0
    while h.commits < total:
        if total - h.commits < 2:
            # No room for a branch and its merge: the last commit goes on main directly.
            who, msg, trailers, files = h.ordinary_edit(h.commits + 1)
            tip = h.commit("refs/heads/main", who, msg, trailers, [main_tips[-1]], files)
            main_tips.append(tip)
            brought.append(files)
            continue
        pr += 1
        lag = min(rng.choice([0, 0, 1, 2, 3]), len(main_tips) - 1)
        fork = main_tips[-1 - lag]
        # Main's changes since the fork: the branch does not have them.
        since = {}
        for b in brought[len(brought) - lag:] if lag else []:
            since.update(b)
        size = min(rng.randint(1, 5), total - h.commits - 1)
        changed = {}
        branch_tip = fork
        # One scratch ref for every branch (each commit names its parents): gen_history.sh
        # deletes it, as a merged pull request's branch is.
        ref = "refs/heads/pr"
        for k in range(size):
            n = h.commits + 1
            if n >= next_protect:
                next_protect += max(2, protect_every + rng.randint(-100, 100))
                who, msg, trailers, files = h.protected_edit()
            else:
                who, msg, trailers, files = h.ordinary_edit(n)
            branch_tip = h.commit(ref, who, msg, trailers, [branch_tip], files)
            changed.update(files)
        if lag and h.commits + 2 <= total and rng.random() < 0.2:
            # The author merges main back in; the branch's own files win.
            merged = {p: b for p, b in since.items() if p not in changed}
            who = HUMANS[rng.randrange(len(HUMANS))]
            branch_tip = h.commit(ref, who, "Merge branch 'main' into pr", [],
                                  [branch_tip, main_tips[-1]], merged)
        who = HUMANS[rng.randrange(len(HUMANS))]
        tip = h.commit("refs/heads/main", who,
                       f"Merge pull request #{pr} from contributor/pr-{pr}\n\nChange {pr}", [],
                       [main_tips[-1], branch_tip], changed, committer=MERGER)
        main_tips.append(tip)
        brought.append(changed)
        if a is None and h.commits >= mark_a:
            a = tip
        # Only the last few are forked from: keep the lists short.
        if len(main_tips) > 8:
            del main_tips[0]
            del brought[0]
    return a


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("commits", type=int)
    ap.add_argument("--layout", choices=["articles", "bench"], default="articles")
    ap.add_argument("--shape", choices=["linear", "merges"], default="linear")
    ap.add_argument("--reject", action="store_true")
    ap.add_argument("--protect-every", type=int, default=300)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--mark-a", type=int, default=None)
    args = ap.parse_args()
    if args.commits < 10:
        ap.error("need COMMITS >= 10")
    if not 0 < args.scale <= 10:
        ap.error("--scale must be in (0, 10]")
    mark_a = args.mark_a if args.mark_a is not None else args.commits // 10
    if not 1 <= mark_a < args.commits:
        ap.error("--mark-a must name a commit before the tip")
    h = History(args)
    grow = linear if args.shape == "linear" else merges
    a = grow(h, args.commits, args.protect_every, mark_a)
    if a is None:
        print("the history has no main commit after --mark-a", file=sys.stderr)
        return 2
    h.st.raw(f"reset refs/tags/bench/A\nfrom :{a}\n\n")
    h.st.flush()
    files = sum(len(p) for p in h.pools) + 3 + h.fixtures_n + h.props_n + h.seeds_n
    print(f"{h.commits} commits ({args.shape}, {args.layout} layout), about {files} files, "
          f"{h.protected} protected-path commits{' without trailers' if args.reject else ''}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
