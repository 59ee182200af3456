#!/usr/bin/env python3
"""The git pathspecs of what a merge ledger protects or reads, one per line: git's log over
them is the peer of `guard check` on a real history (`benches/run.sh`, group realhistory).

    benches/ledger_pathspec.py qa/merge_ledger.toml

The ledger itself, its freeze file and lockfile, the fixture and property paths and seeds,
`[protect]` and `[harness]` paths and the files `[harness.sections]` names, `[tests] paths`
(the test files weakened_test reads), every `.gitattributes` and `.lfsconfig`, and Rust files
(which may hold tests). A key the ledger leaves out takes guard's default, read from
`src/policy/ledger/defaults.rs` (the source states them). Globs become `:(glob)` pathspecs; a
directory, everything under it.
"""
import os
import re
import sys
import tomllib

DEFAULTS_RS = os.path.join(os.path.dirname(__file__), "..", "src", "policy", "ledger", "defaults.rs")


def rust_defaults() -> dict:
    """`pub const NAME: &str = "..."` and `&[&str] = &[...]` of defaults.rs; for
    DEFAULT_HARNESS_SECTIONS, the file globs it names."""
    text = open(DEFAULTS_RS, encoding="utf-8").read()
    found = {}
    for name, value in re.findall(r'pub const (DEFAULT_\w+): &str = "([^"]*)";', text):
        found[name] = value
    for name, body in re.findall(r"pub const (DEFAULT_\w+): &\[&str\] = &\[(.*?)\];", text, re.S):
        found[name] = re.findall(r'"([^"]*)"', re.sub(r"//[^\n]*", "", body))
    sections = re.search(r"pub const DEFAULT_HARNESS_SECTIONS[^=]*= &\[(.*?)\n\];", text, re.S)
    found["DEFAULT_HARNESS_SECTION_FILES"] = re.findall(r'\(\s*"([^"]*)"', sections.group(1)) if sections else []
    return found


def main() -> None:
    path = sys.argv[1]
    with open(path, "rb") as f:
        ledger = tomllib.load(f)
    d = rust_defaults()
    get = lambda table, key, default: ledger.get(table, {}).get(key, default)
    specs = [path, get("freeze", "file", d["DEFAULT_FREEZE_FILE"]), get("fixtures", "lockfile", d["DEFAULT_LOCKFILE"])]
    specs += get("fixtures", "paths", d["DEFAULT_FIXTURE_PATHS"])
    specs += get("properties", "paths", d["DEFAULT_PROPERTY_PATHS"])
    seeds = get("properties", "seeds", None)
    specs += [seeds] if seeds else []
    specs += get("protect", "paths", [])
    specs += get("harness", "paths", d["DEFAULT_HARNESS_PATHS"])
    sections = ledger.get("harness", {}).get("sections")
    specs += list(sections.keys()) if sections is not None else d["DEFAULT_HARNESS_SECTION_FILES"]
    specs += get("tests", "paths", d["DEFAULT_TEST_PATHS"])
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
