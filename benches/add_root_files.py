#!/usr/bin/env python3
"""Adds files to every root commit of a `git fast-export` stream.

    git fast-export --all | benches/add_root_files.py DIR PATH... | git fast-import

Each PATH (relative to DIR) is written, with its bytes in DIR, into every commit that has no
`from` line (a root): the rewritten history holds those files from its first commit on. Used
to give a real project's history a ledger from the start, so that `guard check` judges any
range of it under that ledger and git can still write a commit-graph (which it refuses while
`info/grafts` exists).
"""
import sys


def main() -> None:
    root, paths = sys.argv[1], sys.argv[2:]
    files = [(p.encode(), open(f"{root}/{p}", "rb").read()) for p in paths]
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    in_commit = saw_from = False
    while line := inp.readline():
        if line.startswith(b"commit "):
            in_commit, saw_from = True, False
        elif line.startswith(b"data "):
            out.write(line)
            out.write(inp.read(int(line[5:])))
            continue
        elif in_commit and line.startswith(b"from "):
            saw_from = True
        elif in_commit and (line[:2] in (b"M ", b"D ") or line == b"\n" or line.startswith(b"deleteall")):
            # The first file command (or the end) of a commit: its header is over.
            if not saw_from:
                for path, data in files:
                    out.write(b"M 100644 inline " + path + b"\n")
                    out.write(b"data %d\n" % len(data) + data + b"\n")
            in_commit = False
        out.write(line)


if __name__ == "__main__":
    main()
