#!/usr/bin/env python3
"""Peer for `guard score --junit`: what the articles' scripts do with a JUnit report.

Usage: et_peer.py REPORT.xml

`xml.etree.ElementTree.parse(path)`, then `tree.iter("testcase")`, checking each record's
children for failure/error/skipped, and counting outcomes (and property tests by classname).
Prints the counts as one JSON line.
"""

import json
import sys
import xml.etree.ElementTree as ET


def main() -> int:
    if len(sys.argv) != 2:
        print(f"usage: {sys.argv[0]} REPORT.xml", file=sys.stderr)
        return 2
    tree = ET.parse(sys.argv[1])
    counts = {"cases": 0, "passed": 0, "failed": 0, "errors": 0, "skipped": 0, "properties": 0}
    failing = []
    for case in tree.iter("testcase"):
        counts["cases"] += 1
        if case.get("classname", "").startswith("tests.properties."):
            counts["properties"] += 1
        if case.find("error") is not None:
            counts["errors"] += 1
        elif case.find("failure") is not None:
            counts["failed"] += 1
            failing.append(f'{case.get("classname")}::{case.get("name")}')
        elif case.find("skipped") is not None:
            counts["skipped"] += 1
        else:
            counts["passed"] += 1
    counts["failing_ids"] = len(failing)
    print(json.dumps(counts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
