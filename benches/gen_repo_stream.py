#!/usr/bin/env python3
"""Write a `git fast-import` stream of a synthetic repository history to stdout.

Usage: gen_repo_stream.py COMMITS FILES [--protect-every N] [--mark-a N]

Used by gen_repo.sh; see there. The history, on `refs/heads/main`:
  - commit 1 adds FILES files: the guard policy files (qa/merge_ledger.toml, qa/freeze.toml,
    qa/fixtures.lock.json), fixtures under tests/fixtures/, property tests and seeds under
    tests/properties/, and ordinary files in nested directories (src/mNN/sNN/dNN/file_N.rs,
    lib/..., docs/..., tests/unit/...), about 30 per leaf directory;
  - every later commit edits 1 to 4 ordinary files chosen at random (1 in 50 also adds one
    new file), by a mix of human and agent authors (agents known by e-mail or by a
    `Co-authored-by:` trailer, as in the default ledger's [agents]);
  - about every N commits (default 300, jittered), a human edits protected paths with the
    trailer the default ledger asks for, cycling through the ledger, the freeze file, a
    fixture with its lockfile, and a property test with a seed;
  - the tag `refs/tags/bench/A` marks commit number --mark-a (default COMMITS/10).
Deterministic: a fixed seed and fixed timestamps, so the same arguments give the same ids.
Prints a summary to stderr.
"""

import argparse
import hashlib
import random
import sys

HUMANS = [
    ("Alice Moreau", "alice@example.com"),
    ("Bob Okafor", "bob@example.com"),
    ("Chen Wei", "chen@example.com"),
    ("Dana Ruiz", "dana@example.com"),
]
# (author, trailer) pairs: identities the default ledger's [agents] recognises.
AGENTS = [
    (("Cursor Agent", "cursoragent@cursor.com"), None),
    (("dependabot[bot]", "49699333+dependabot[bot]@users.noreply.github.com"), None),
    (("Alice Moreau", "alice@example.com"), "Co-authored-by: Claude <noreply@anthropic.com>"),
    (("Bob Okafor", "bob@example.com"), "Co-authored-by: Codex <codex@openai.com>"),
]
BASE_TIME = 1_735_689_600  # 2025-01-01T00:00:00Z

LEDGER = """\
version = 1

[properties]
paths = ["tests/properties/"]
seeds = "tests/properties/seeds"

[fixtures]
lockfile = "qa/fixtures.lock.json"
paths = ["tests/fixtures/"]

[freeze]
file = "qa/freeze.toml"

[coverage]
min_proven = {floor}.0
"""

FREEZE_HEAD = """\
version = 1
max_active_leases = 8
reject_if_expired = true
reject_if_agent_adds_lease = true
"""

LEASE = """
[[leases]]
nodeid = "tests/unit/test_flaky_{n}.py::test_timing"
reason = "intermittent timeout on shared CI runners"
owner = "platform"
expires = "2099-12-31"
"""

PROPERTY = """\
# Property test {n} (revision {rev}).
from hypothesis import given, strategies as st

from app.codec import decode, encode


@given(st.binary())
def test_roundtrip_{n}(data):
    assert decode(encode(data)) == data


@given(st.binary(), st.binary())
def test_concat_{n}(a, b):
    assert len(encode(a + b)) >= len(encode(a))
"""


class Stream:
    def __init__(self, out):
        self.out = out
        self.parts = []
        self.size = 0

    def raw(self, text):
        b = text.encode("utf-8") if isinstance(text, str) else text
        self.parts.append(b)
        self.size += len(b)
        if self.size > (4 << 20):
            self.flush()

    def data(self, payload):
        b = payload.encode("utf-8") if isinstance(payload, str) else payload
        self.raw(b"data %d\n" % len(b))
        self.raw(b)
        self.raw(b"\n")

    def flush(self):
        self.out.write(b"".join(self.parts))
        self.parts.clear()
        self.size = 0


def ordinary_paths(count):
    """`count` paths spread over nested directories, about 30 per leaf."""
    leaves = max(1, count // 30)
    tops = [("src", "rs"), ("lib", "py"), ("docs", "md"), ("tests/unit", "py")]
    per_top = max(1, leaves // len(tops))
    fan = max(2, round(per_top ** (1 / 3) + 0.5))
    paths = []
    for i in range(count):
        leaf = i % leaves
        top, ext = tops[leaf % len(tops)]
        d = leaf // len(tops)
        a, b, c = d % fan, (d // fan) % fan, d // (fan * fan)
        name = f"test_{i}" if top == "tests/unit" else f"file_{i}"
        paths.append(f"{top}/m{a:02d}/s{b:02d}/d{c:02d}/{name}.{ext}")
    return paths


def body(path, rev, rng):
    lines = [f"// {path} revision {rev}"]
    for j in range(rng.randint(3, 12)):
        lines.append(f"fn item_{j}() -> u64 {{ {rng.randint(0, 1 << 30)} }}")
    return "\n".join(lines) + "\n"


def fixture_bytes(n, rev):
    return f'{{"case": {n}, "revision": {rev}, "expected": [1, 2, 3]}}\n'


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("commits", type=int)
    ap.add_argument("files", type=int)
    ap.add_argument("--protect-every", type=int, default=300)
    ap.add_argument("--mark-a", type=int, default=None)
    args = ap.parse_args()
    fixtures_n, props_n, seeds_n = 20, 6, 4
    fixed = 3 + fixtures_n + props_n + seeds_n
    if args.commits < 10 or args.files < fixed + 10:
        ap.error(f"need COMMITS >= 10 and FILES >= {fixed + 10}")
    mark_a = args.mark_a if args.mark_a is not None else args.commits // 10
    if not 1 <= mark_a < args.commits:
        ap.error("--mark-a must name a commit before the tip")

    rng = random.Random(424242)
    st = Stream(sys.stdout.buffer)
    ordinary = ordinary_paths(args.files - fixed)
    revs = {}

    def commit(n, who, message, trailers, changes):
        name, email = who
        ts = BASE_TIME + n * 97
        st.raw(f"commit refs/heads/main\nmark :{n}\n")
        st.raw(f"author {name} <{email}> {ts} +0000\ncommitter {name} <{email}> {ts} +0000\n")
        msg = message + "\n"
        if trailers:
            msg += "\n" + "\n".join(trailers) + "\n"
        st.data(msg)
        if n > 1:
            st.raw(f"from :{n - 1}\n")
        for path, content in changes:
            st.raw(f"M 100644 inline {path}\n")
            st.data(content)

    # The lockfile tracks the fixture digests, as guard lock would write them.
    fixture_paths = [f"tests/fixtures/case_{i:02d}.json" for i in range(fixtures_n)]
    fixture_rev = {p: 0 for p in fixture_paths}

    def lockfile():
        entries = ",\n".join(
            f'    "{p}": "{hashlib.sha256(fixture_bytes(i, fixture_rev[p]).encode()).hexdigest()}"'
            for i, p in enumerate(fixture_paths)
        )
        return '{\n  "files": {\n' + entries + "\n  }\n}\n"

    leases = 1
    floor = 70

    def freeze():
        return FREEZE_HEAD + "".join(LEASE.format(n=k) for k in range(leases))

    initial = [
        ("qa/merge_ledger.toml", LEDGER.format(floor=floor)),
        ("qa/freeze.toml", freeze()),
        ("qa/fixtures.lock.json", lockfile()),
    ]
    initial += [(p, fixture_bytes(i, 0)) for i, p in enumerate(fixture_paths)]
    initial += [(f"tests/properties/test_prop_{k}.py", PROPERTY.format(n=k, rev=0))
                for k in range(props_n)]
    initial += [(f"tests/properties/seeds/seed_{k}.bin", f"seed {k}\n") for k in range(seeds_n)]
    initial += [(p, body(p, 0, rng)) for p in ordinary]
    commit(1, HUMANS[0], "Initial import", [], initial)

    protected = 0
    next_protect = args.protect_every + rng.randint(-50, 50)
    kinds = ["ledger", "freeze", "fixtures", "properties"]
    for n in range(2, args.commits + 1):
        if n == next_protect:
            kind = kinds[protected % len(kinds)]
            protected += 1
            next_protect += max(2, args.protect_every + rng.randint(-100, 100))
            who = HUMANS[protected % len(HUMANS)]
            if kind == "ledger":
                floor = 70 + protected % 20
                changes = [("qa/merge_ledger.toml", LEDGER.format(floor=floor))]
                trailer = "Ledger-Change: human"
                msg = f"Raise the proven-coverage floor to {floor}%"
            elif kind == "freeze":
                leases = 1 + protected % 6
                changes = [("qa/freeze.toml", freeze())]
                trailer = "Freeze-Lease: human"
                msg = f"Freeze: {leases} active leases"
            elif kind == "fixtures":
                p = fixture_paths[protected % fixtures_n]
                fixture_rev[p] += 1
                changes = [(p, fixture_bytes(fixture_paths.index(p), fixture_rev[p])),
                           ("qa/fixtures.lock.json", lockfile())]
                trailer = "Fixture-Lock: human"
                msg = f"Regenerate golden fixture {p}"
            else:
                k = protected % props_n
                changes = [(f"tests/properties/test_prop_{k}.py",
                            PROPERTY.format(n=k, rev=protected)),
                           (f"tests/properties/seeds/seed_{protected % seeds_n}.bin",
                            f"seed {protected}\n")]
                trailer = "Property-Seeds: human"
                msg = f"Strengthen property test {k}"
            commit(n, who, msg, [trailer], changes)
            continue
        picks = rng.sample(range(len(ordinary)), rng.randint(1, 4))
        changes = []
        for i in picks:
            p = ordinary[i]
            revs[p] = revs.get(p, 0) + 1
            changes.append((p, body(p, revs[p], rng)))
        if rng.random() < 0.02:
            p = f"src/new/n{n % 97:02d}/added_{n}.rs"
            ordinary.append(p)
            changes.append((p, body(p, 0, rng)))
        if rng.random() < 0.4:
            who, trailer = AGENTS[rng.randrange(len(AGENTS))]
            trailers = [trailer] if trailer else []
        else:
            who, trailers = HUMANS[rng.randrange(len(HUMANS))], []
        commit(n, who, f"Change {len(changes)} file(s) ({n})", trailers, changes)

    st.raw(f"reset refs/tags/bench/A\nfrom :{mark_a}\n\n")
    st.flush()
    print(f"{args.commits} commits, {len(ordinary) + fixed} files at the tip, "
          f"{protected} protected-path commits, A = commit {mark_a}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
