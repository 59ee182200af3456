#!/usr/bin/env python3
"""Write a fixture corpus of random bytes for the benchmarks.

Usage: gen_fixtures.py DIR TOTAL_MIB FILES

Writes FILES files totalling TOTAL_MIB MiB under DIR (nested: DIR/set_NN/...), with mixed
sizes: log-uniform between 1 KiB and 16 MiB, scaled so they sum to the total. The bytes come
from os.urandom (incompressible, so nothing downstream can take a shortcut). The sizes are
deterministic (fixed seed); the bytes are not, and need not be.
"""

import math
import os
import random
import sys

CHUNK = 8 << 20


def main() -> int:
    if len(sys.argv) != 4:
        print(f"usage: {sys.argv[0]} DIR TOTAL_MIB FILES", file=sys.stderr)
        return 2
    root, total_mib, files = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    if total_mib < 1 or files < 1:
        print("TOTAL_MIB and FILES must be positive", file=sys.stderr)
        return 2
    total = total_mib << 20
    rng = random.Random(1_000_003)
    lo, hi = math.log(1 << 10), math.log(16 << 20)
    raw = [math.exp(rng.uniform(lo, hi)) for _ in range(files)]
    scale = total / sum(raw)
    sizes = [max(1, int(r * scale)) for r in raw]
    sizes[-1] += total - sum(sizes)  # exact total
    if sizes[-1] < 1:
        print("too many files for the total size", file=sys.stderr)
        return 2
    exts = [".bin", ".json", ".golden", ".parquet", ".png", ".txt"]
    for i, size in enumerate(sizes):
        sub = os.path.join(root, f"set_{i % 24:02d}", f"group_{i % 5}")
        os.makedirs(sub, exist_ok=True)
        path = os.path.join(sub, f"fixture_{i:05d}{exts[i % len(exts)]}")
        with open(path, "wb") as f:
            left = size
            while left:
                n = min(left, CHUNK)
                f.write(os.urandom(n))
                left -= n
    print(f"{root}: {files} files, {total} bytes (largest {max(sizes)}, smallest {min(sizes)})",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
