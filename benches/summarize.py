#!/usr/bin/env python3
"""Summarise one run of benches/run.sh as Markdown (the tables BENCHMARKS.md quotes).

Usage: summarize.py RESULTS_DIR

Reads RESULTS_DIR/groups.tsv (group, input bytes, description), the hyperfine JSON export of
each group (RESULTS_DIR/GROUP.json), rss.tsv (name, peak RSS in KiB) and machine.txt. Times are
hyperfine medians; MB and GB are decimal (10^6, 10^9 bytes); RSS is in MiB.
"""

import json
import os
import sys

# Issue 6's targets.
JUNIT_MBPS = 300.0
JUNIT_VS_ET = 15.0
JUNIT_RSS_MIB = 64.0
FIXTURES_VS_OPENSSL = 1.8
HISTORY_VS_GIT = 1.5
PUSH_MS = 50.0

GUARD = {"junit": "guard score", "fixtures": "guard lock --check", "history": "guard check A..B",
         "push": "git push, guard's hook", "hook": "guard hook pre-receive"}
PEER = {"junit": "ElementTree", "fixtures": "openssl dgst -sha256",
        "history": "git log -- <protected>", "push": "git push, no hook"}


def load(results):
    groups = []
    with open(os.path.join(results, "groups.tsv"), encoding="utf-8") as f:
        for line in f:
            name, size, desc, load = line.rstrip("\n").split("\t")
            with open(os.path.join(results, name + ".json"), encoding="utf-8") as j:
                runs = json.load(j)["results"]
            groups.append({
                "name": name, "kind": name.split("-")[0], "bytes": int(size), "desc": desc,
                "load": float(load),
                "runs": {r["command"]: r for r in runs},
            })
    rss = {}
    path = os.path.join(results, "rss.tsv")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                name, kib = line.rstrip("\n").split("\t")
                rss[name] = int(kib) / 1024
    return groups, rss


def rate(kind, nbytes, secs):
    if kind == "junit":
        return f"{nbytes / secs / 1e6:,.0f} MB/s"
    if kind == "fixtures":
        return f"{nbytes / secs / 1e9:.2f} GB/s"
    return ""


def verdict(ok):
    return "**met**" if ok else "**missed**"


def main() -> int:
    if len(sys.argv) != 2:
        print(f"usage: {sys.argv[0]} RESULTS_DIR", file=sys.stderr)
        return 2
    results = sys.argv[1]
    groups, rss = load(results)

    print("| group | input | others' load | command | median s (± sd) | runs | throughput "
          "| vs guard | peak RSS |")
    print("|---|---|---|---|---|---|---|---|---|")
    for g in groups:
        guard = g["runs"].get(GUARD[g["kind"]])
        size = (f"{g['bytes'] / 1e6:,.0f} MB, " if g["bytes"] else "") + g["desc"]
        for k, (cmd, r) in enumerate(g["runs"].items()):
            others = f"{g['load']:.2f} cores" if k == 0 else ""
            med = r["median"]
            vs = f"{med / guard['median']:.2f}x" if guard and r is not guard else ""
            mem = rss.get(f"{g['name']} {cmd}")
            mem = f"{mem:.1f} MiB" if mem is not None else ""
            print(f"| {g['name']} | {size} | {others} | `{cmd}` | {med:.3f} (± {r['stddev'] or 0:.3f}) "
                  f"| {len(r['times'])} | {rate(g['kind'], g['bytes'], med)} | {vs} | {mem} |")
    print()
    print("`vs guard`: the peer's time over guard's (above 1: guard is faster; for the push, "
          "the push without the hook over the push through it). "
          "`others' load`: CPU other processes used while the group ran, in cores "
          f"(of {os.cpu_count()}); above about 0.2 the group's times are inflated.")
    print()
    shown = {f"{g['name']} {cmd}" for g in groups for cmd in g["runs"]}
    others = [(name, mib) for name, mib in rss.items() if name not in shown]
    if others:
        print("Peak RSS of other single runs:")
        print()
        for name, mib in others:
            print(f"- {name}: {mib:.1f} MiB")
        print()

    def largest(kind):
        found = [g for g in groups if g["kind"] == kind]
        return max(found, key=lambda g: g["bytes"] or int(g["name"].split("-")[1])) if found else None

    print("| target (issue 6) | measured | verdict |")
    print("|---|---|---|")
    j = largest("junit")
    if j:
        guard, et = j["runs"][GUARD["junit"]], j["runs"][PEER["junit"]]
        mbps = j["bytes"] / guard["median"] / 1e6
        ratio = et["median"] / guard["median"]
        mem = rss.get(f"{j['name']} guard score")
        print(f"| JUnit >= {JUNIT_MBPS:.0f} MB/s ({j['name']}) | {mbps:,.0f} MB/s "
              f"| {verdict(mbps >= JUNIT_MBPS)} |")
        print(f"| JUnit >= {JUNIT_VS_ET:.0f}x ElementTree | {ratio:.1f}x | "
              f"{verdict(ratio >= JUNIT_VS_ET)} |")
        if mem is not None:
            print(f"| JUnit peak RSS <= {JUNIT_RSS_MIB:.0f} MB on the {j['bytes'] / 1e6:,.0f} MB "
                  f"report | {mem:.1f} MiB | {verdict(mem <= JUNIT_RSS_MIB)} |")
    f = largest("fixtures")
    if f:
        guard, ossl = f["runs"][GUARD["fixtures"]], f["runs"][PEER["fixtures"]]
        ratio = ossl["median"] / guard["median"]
        print(f"| fixtures >= {FIXTURES_VS_OPENSSL}x single-core openssl ({f['name']}) "
              f"| {ratio:.2f}x | {verdict(ratio >= FIXTURES_VS_OPENSSL)} |")
    h = largest("history")
    if h:
        guard, git = h["runs"].get(GUARD["history"]), h["runs"][PEER["history"]]
        ratio = guard["median"] / git["median"]
        print(f"| history scan within {HISTORY_VS_GIT}x of git log ({h['name']}) "
              f"| {guard['median'] * 1e3:.0f} ms, {ratio:.2f}x git's {git['median'] * 1e3:.0f} ms "
              f"| {verdict(ratio <= HISTORY_VS_GIT)} |")
    p = largest("push")
    if p:
        hooked, plain = p["runs"][GUARD["push"]], p["runs"][PEER["push"]]
        hook = next((g for g in groups if g["kind"] == "hook"), None)
        alone = ""
        if hook:
            alone = f"; the hook alone {hook['runs'][GUARD['hook']]['median'] * 1e3:.1f} ms"
        print(f"| single-commit push through the hook <= {PUSH_MS:.0f} ms ({p['name']}) "
              f"| {hooked['median'] * 1e3:.0f} ms; the same push without the hook "
              f"{plain['median'] * 1e3:.0f} ms{alone} "
              f"| {verdict(hooked['median'] * 1e3 <= PUSH_MS)} |")
    print()

    print("Growth between the two sizes (time ratio for the input ratio):")
    print()
    for kind in ("junit", "fixtures", "history"):
        gs = [g for g in groups if g["kind"] == kind]
        if len(gs) < 2:
            continue
        lo, hi = gs[0], gs[-1]
        if kind == "history":
            scale = int(hi["name"].split("-")[1]) / int(lo["name"].split("-")[1])
            what = "commits"
        else:
            scale = hi["bytes"] / lo["bytes"]
            what = "bytes"
        parts = []
        for cmd in hi["runs"]:
            if cmd in lo["runs"]:
                parts.append(f"`{cmd}` x{hi['runs'][cmd]['median'] / lo['runs'][cmd]['median']:.1f}")
        print(f"- {kind}: {lo['name']} -> {hi['name']}, {what} x{scale:.1f}: " + ", ".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
