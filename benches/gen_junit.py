#!/usr/bin/env python3
"""Write a pytest-style (xunit2) JUnit report of N <testcase> records for the benchmarks.

Usage: gen_junit.py OUT.xml CASES [--freeze FILE] [--out-every N]

The report has one <testsuites><testsuite name="pytest"> like `pytest --junitxml` writes, with:
  - ~2% failures: <failure message="..."> holding a multi-line pytest traceback
    (with the `&gt;` and `&lt;` escapes pytest's writer produces);
  - ~3% skips: <skipped type="pytest.skip" message="...">;
  - ~1% property tests under `tests.properties.*` classnames, all passing;
  - parametrised names with brackets (`test_x[int-3]`);
  - captured <system-out> on some records; its size is tuned so that the average record is
    about 170 bytes (1M cases: about 170 MB).

With --freeze FILE, the first few failing test ids are written to FILE, one per line (the
first article's plain freeze list), so the report can be scored as MERGE.

Deterministic (fixed seed). Uses only the standard library and writes in large chunks, so
a million records take a few seconds.
"""

import argparse
import random
import sys

TRACEBACK = """\
self = &lt;tests.{mod}.{cls} object at 0x7f3a2c1d{n:04x}&gt;
value = {v}

    def {fn}(self, value):
        expected = compute_expected(value)
        result = subject.run(value, retries=3)
&gt;       assert result == expected
E       AssertionError: assert {v} == {w}
E        +  where {v} = &lt;function run at 0x7f3a2c1e0040&gt;({v}, retries=3)

tests/{path}.py:{line}: AssertionError"""

CAPTURED = (
    "------------------------------- Captured log call -------------------------------\n"
    "INFO     app.worker:worker.py:88 processing batch {n} of 64 (size={v})\n"
    "DEBUG    app.cache:cache.py:141 cache miss for key user:{v}:profile\n"
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="path of the XML report to write")
    ap.add_argument("cases", type=int, help="number of <testcase> records")
    ap.add_argument("--freeze", help="write a plain freeze list of a few failing ids here")
    ap.add_argument(
        "--out-every",
        type=int,
        default=4,
        help="one passing record in this many carries <system-out> (default 4, tuned so "
        "1M cases make about 170 MB)",
    )
    args = ap.parse_args()
    if args.cases < 100:
        ap.error("CASES must be at least 100")

    rng = random.Random(20261106)
    failed = skipped = 0
    frozen = []
    chunk = []
    # Kinds decided up front in one pass: 0 pass, 1 fail, 2 skip, 3 property (pass).
    rolls = [rng.random() for _ in range(args.cases)]
    params = ["int", "str", "float", "none", "utf8-ü", "empty", "neg", "big"]
    with open(args.out, "w", encoding="utf-8", newline="\n") as out:
        # pytest writes the suite's counts up front; the rolls give them before any record.
        n_fail = sum(1 for r in rolls if 0.01 <= r < 0.03)
        n_skip = sum(1 for r in rolls if 0.03 <= r < 0.06)
        out.write('<?xml version="1.0" encoding="utf-8"?>\n<testsuites>'
                  f'<testsuite name="pytest" errors="0" failures="{n_fail}" '
                  f'skipped="{n_skip}" tests="{args.cases}" time="1234.567" '
                  'timestamp="2026-11-06T10:00:00.000000" hostname="bench">\n')
        for i, roll in enumerate(rolls):
            pkg = i % 37
            mod = (i // 37) % 211
            modname = f"pkg_{pkg}.test_mod_{mod}"
            fn = f"test_case_{i // 8}"
            name = f"{fn}[{params[i % 8]}-{i % 13}]"
            time = f"{(i % 997) / 1000:.3f}"
            if roll < 0.01:
                # Property test: all pass.
                chunk.append(
                    f'<testcase classname="tests.properties.test_invariant_{i % 17}" '
                    f'name="test_prop_{i}[seed-{i % 5}]" time="{time}" />\n'
                )
            elif roll < 0.03:
                failed += 1
                v = i % 1000
                cls = f"TestGroup{i % 23}"
                tb = TRACEBACK.format(
                    mod=modname, cls=cls, n=i & 0xFFFF, v=v, w=v + 1, fn=fn,
                    path=modname.replace(".", "/"), line=40 + i % 300,
                )
                chunk.append(
                    f'<testcase classname="tests.{modname}.{cls}" name="{name}" '
                    f'time="{time}"><failure message="AssertionError: assert {v} == {v + 1}">'
                    f"{tb}</failure><system-out>"
                    f"{CAPTURED.format(n=i % 64, v=v)}</system-out></testcase>\n"
                )
                if len(frozen) < 5:
                    frozen.append(f"tests.{modname}.{cls}::{name}")
            elif roll < 0.06:
                skipped += 1
                chunk.append(
                    f'<testcase classname="tests.{modname}" name="{name}" time="0.000">'
                    f'<skipped type="pytest.skip" message="needs network &amp; credentials">'
                    f"tests/{modname.replace('.', '/')}.py:{12 + i % 90}: "
                    f"needs network &amp; credentials</skipped></testcase>\n"
                )
            elif i % args.out_every == 0:
                chunk.append(
                    f'<testcase classname="tests.{modname}" name="{name}" time="{time}">'
                    f"<system-out>{CAPTURED.format(n=i % 64, v=i % 1000)}</system-out>"
                    f"</testcase>\n"
                )
            else:
                chunk.append(
                    f'<testcase classname="tests.{modname}" name="{name}" time="{time}" />\n'
                )
            if len(chunk) >= 20000:
                out.write("".join(chunk))
                chunk.clear()
        out.write("".join(chunk))
        out.write("</testsuite></testsuites>\n")
    if args.freeze:
        with open(args.freeze, "w", encoding="utf-8") as f:
            f.write("# known-flaky tests (benchmark): failing ids, so they are allowed\n")
            for test_id in frozen:
                f.write(test_id + "\n")
    print(
        f"{args.out}: {args.cases} cases, {failed} failed, {skipped} skipped",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
