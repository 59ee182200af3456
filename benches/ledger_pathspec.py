#!/usr/bin/env python3
"""The git pathspecs of what a merge ledger protects or reads, one per line: git's log over
them is the peer of `guard check` on a real history (`benches/run.sh`, group realhistory).

    benches/ledger_pathspec.py qa/merge_ledger.toml

The ledger itself, its freeze file and lockfile, the fixture and property paths and seeds,
`[protect]` and `[harness]` paths and the files `[harness.sections]` names, `[tests] paths`
(the test files weakened_test reads), every `.gitattributes` and `.lfsconfig`, and Rust files
(which may hold tests). Globs become `:(glob)` pathspecs; a directory, everything under it.
"""
import sys
import tomllib


def main() -> None:
    path = sys.argv[1]
    with open(path, "rb") as f:
        ledger = tomllib.load(f)
    get = lambda table, key, default: ledger.get(table, {}).get(key, default)
    specs = [path, get("freeze", "file", "qa/freeze.toml"), get("fixtures", "lockfile", "qa/fixtures.lock.json")]
    specs += get("fixtures", "paths", [])
    specs += get("properties", "paths", [])
    seeds = get("properties", "seeds", None)
    specs += [seeds] if seeds else []
    specs += get("protect", "paths", [])
    specs += get("harness", "paths", [])
    specs += list(ledger.get("harness", {}).get("sections", {}).keys())
    specs += get("tests", "paths", [])
    specs += ["**/.gitattributes", ".lfsconfig", "**/*.rs"]
    seen = set()
    for spec in specs:
        spec = spec.rstrip("/") + "/**" if spec.endswith("/") else spec
        line = f":(glob){spec}" if any(c in spec for c in "*?[") or spec.endswith("/**") else spec
        if line not in seen:
            seen.add(line)
            print(line)


if __name__ == "__main__":
    main()
