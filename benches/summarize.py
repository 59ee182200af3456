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
# Issue 15's.
SCAN_VS_GIT = 1.2
# Issue 33: a real project's history, and the agent-heavy synthetic one, against git's log.
REAL_VS_GIT = 2.0
AGENT_HEAVY_VS_GIT = 0.5
SCAN_RSS_MIB = 256.0
GIT_FIXTURES_VS_OPENSSL = 1.8
TAGS_PUSH_S = 1.0
HOOK_ADDS_MS = 5.0
MANY_PUSH_VS_PLAIN = 1.10

CHECK = "guard check A..B"
GIT_LOG = "git log -- <protected>"
GUARD = {"junit": "guard score", "fixtures": "guard lock --check", "history": CHECK,
         "push": "git push, guard's hook", "hook": "guard hook pre-receive",
         "tags": "git push, guard's hook", "taghook": "guard hook pre-receive",
         "pushmany": "git push, guard's hook", "manyhook": "guard hook pre-receive",
         "pushnew": "git push, guard's hook",
         "gitfixtures": CHECK, "articles": CHECK, "rejecting": CHECK, "merges": CHECK,
         "pytest": CHECK, "agentheavy": CHECK}
PEER = {"junit": "ElementTree", "fixtures": "openssl dgst -sha256", "history": GIT_LOG,
        "push": "git push, no hook", "tags": "git push, no hook", "pushmany": "git push, no hook",
        "pushnew": "git push, no hook",
        "gitfixtures": "openssl dgst -sha256", "articles": GIT_LOG, "rejecting": GIT_LOG,
        "merges": GIT_LOG, "pytest": GIT_LOG, "agentheavy": GIT_LOG}
# The history scans, named KIND-COMMITS, and KIND-COMMITS-nograph without a commit-graph.
SCANS = ("history", "articles", "rejecting", "merges")


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
        found = [g for g in groups if g["kind"] == kind and not g["name"].endswith("-nograph")]
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
    def hook_alone(kind, digits):
        """"; the hook alone N ms" from the group of `kind` that ran the hook by hand, if any."""
        hook = next((g for g in groups if g["kind"] == kind), None)
        if not hook:
            return ""
        return f"; the hook alone {hook['runs'][GUARD[kind]]['median'] * 1e3:.{digits}f} ms"

    p = largest("push")
    if p:
        hooked, plain = p["runs"][GUARD["push"]], p["runs"][PEER["push"]]
        alone = hook_alone("hook", 1)
        print(f"| single-commit push through the hook <= {PUSH_MS:.0f} ms ({p['name']}) "
              f"| {hooked['median'] * 1e3:.0f} ms; the same push without the hook "
              f"{plain['median'] * 1e3:.0f} ms{alone} "
              f"| {verdict(hooked['median'] * 1e3 <= PUSH_MS)} |")
    print()

    issue15 = []
    for g in groups:
        if g["kind"] not in SCANS:
            continue
        guard, git = g["runs"].get(CHECK), g["runs"].get(GIT_LOG)
        if not guard or not git:
            continue
        ratio = guard["median"] / git["median"]
        issue15.append(f"| history scan within {SCAN_VS_GIT}x of git log ({g['name']}) "
                       f"| {guard['median'] * 1e3:,.0f} ms, {ratio:.2f}x git's "
                       f"{git['median'] * 1e3:,.0f} ms | {verdict(ratio <= SCAN_VS_GIT)} |")
        mem = rss.get(f"{g['name']} {CHECK}")
        if mem is not None and int(g["name"].split("-")[1]) >= 100_000:
            issue15.append(f"| peak RSS under {SCAN_RSS_MIB:.0f} MB ({g['name']}) | {mem:.1f} MiB "
                           f"| {verdict(mem * 1.048576 < SCAN_RSS_MIB)} |")
    f = largest("gitfixtures")
    if f:
        guard, ossl = f["runs"][CHECK], f["runs"][PEER["gitfixtures"]]
        ratio = ossl["median"] / guard["median"]
        issue15.append(f"| fixtures from git blobs >= {GIT_FIXTURES_VS_OPENSSL}x single-core "
                       f"openssl ({f['name']}) | {ratio:.2f}x "
                       f"| {verdict(ratio >= GIT_FIXTURES_VS_OPENSSL)} |")
    t = largest("tags")
    if t:
        hooked, plain = t["runs"][GUARD["tags"]], t["runs"][PEER["tags"]]
        alone = hook_alone("taghook", 1)
        issue15.append(f"| a push of many tags lands within {TAGS_PUSH_S:.0f} s ({t['name']}: "
                       f"{t['desc'].split(' new tags')[0]} tags) | {hooked['median']:.2f} s; "
                       f"without the hook {plain['median']:.2f} s{alone} "
                       f"| {verdict(hooked['median'] <= TAGS_PUSH_S)} |")
    p = largest("push")
    if p:
        hooked, plain = p["runs"][GUARD["push"]], p["runs"][PEER["push"]]
        added = (hooked["median"] - plain["median"]) * 1e3
        issue15.append(f"| the hook adds at most {HOOK_ADDS_MS:.0f} ms to a one-commit push "
                       f"({p['name']}) | {added:+.1f} ms ({hooked['median'] * 1e3:.0f} against "
                       f"{plain['median'] * 1e3:.0f} ms) | {verdict(added <= HOOK_ADDS_MS)} |")
    m = largest("pushmany")
    if m:
        hooked, plain = m["runs"][GUARD["pushmany"]], m["runs"][PEER["pushmany"]]
        ratio = hooked["median"] / plain["median"]
        alone = hook_alone("manyhook", 0)
        issue15.append(f"| a {m['desc'].split(' commits')[0]}-commit push within "
                       f"{MANY_PUSH_VS_PLAIN:.2f}x of the push without the hook ({m['name']}) "
                       f"| {ratio:.2f}x: {hooked['median'] * 1e3:.0f} against "
                       f"{plain['median'] * 1e3:.0f} ms{alone} "
                       f"| {verdict(ratio <= MANY_PUSH_VS_PLAIN)} |")
    n = largest("pushnew")
    if n:
        hooked, plain = n["runs"][GUARD["pushnew"]], n["runs"][PEER["pushnew"]]
        ratio = hooked["median"] / plain["median"]
        issue15.append(f"| the same push of {n['desc'].split(' new commits')[0]} commits the "
                       f"server lacks within {MANY_PUSH_VS_PLAIN:.2f}x ({n['name']}) "
                       f"| {ratio:.2f}x: {hooked['median'] * 1e3:.0f} against "
                       f"{plain['median'] * 1e3:.0f} ms "
                       f"| {verdict(ratio <= MANY_PUSH_VS_PLAIN)} |")
    if issue15:
        print("| target (issue 15) | measured | verdict |")
        print("|---|---|---|")
        for row in issue15:
            print(row)
        print()

    # Issue 33: a real history within 2x of git's log over the same paths; the agent-heavy
    # synthetic history (the articles' layout, 40% agent commits, against git's log over its
    # ledger's paths) at or below 0.5x.
    issue33 = []
    for g in groups:
        guard, git = g["runs"].get(CHECK), g["runs"].get(GIT_LOG)
        if not guard or not git:
            continue
        ratio = guard["median"] / git["median"]
        if g["kind"] == "pytest":
            bound = REAL_VS_GIT
        elif g["kind"] == "agentheavy" and int(g["name"].split("-")[1]) >= 20_000:
            bound = AGENT_HEAVY_VS_GIT
        else:
            continue
        issue33.append(f"| {g['name']} within {bound}x of git's same-paths log "
                       f"| {guard['median']:.2f} s, {ratio:.2f}x git's {git['median']:.2f} s "
                       f"| {verdict(ratio <= bound)} |")
    if issue33:
        print("| target (issue 33) | measured | verdict |")
        print("|---|---|---|")
        for row in issue33:
            print(row)
        print()

    print("Growth between the sizes (time ratio for the input ratio; for the history scans,")
    print("peak RSS too):")
    print()
    for kind in ("junit", "fixtures", "gitfixtures") + SCANS:
        for variant in ("", "-nograph"):
            gs = [g for g in groups if g["kind"] == kind and g["name"].endswith("-nograph") == bool(variant)]
            if len(gs) < 2:
                continue
            lo, hi = gs[0], gs[-1]
            if kind in SCANS:
                scale = int(hi["name"].split("-")[1]) / int(lo["name"].split("-")[1])
                what = "commits"
            else:
                scale = hi["bytes"] / lo["bytes"]
                what = "bytes"
            parts = []
            for cmd in hi["runs"]:
                if cmd in lo["runs"]:
                    part = f"`{cmd}` x{hi['runs'][cmd]['median'] / lo['runs'][cmd]['median']:.1f}"
                    m_lo, m_hi = rss.get(f"{lo['name']} {cmd}"), rss.get(f"{hi['name']} {cmd}")
                    if kind in SCANS and m_lo and m_hi:
                        part += f" (RSS {m_lo:.1f} to {m_hi:.1f} MiB)"
                    parts.append(part)
            print(f"- {kind}{variant}: {lo['name']} -> {hi['name']}, {what} x{scale:.1f}: "
                  + ", ".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
