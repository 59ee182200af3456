#!/usr/bin/env bash
# A real project's history made ready for `guard check`, as BENCHMARKS.md's "weakened_test on
# real agents' commits" reads it:
#
#   benches/agent_history.sh REPO OUT [BRANCH]
#
# REPO is a git repository (a mirror: its largest blobs may be absent), BRANCH its branch
# (default main). OUT/hist.git gets BRANCH's history with the ledger `guard init` writes for
# the branch's tip in every root commit, so that any range of it is judged under that ledger
# and agent commits are those its `[agents]` names (nothing is re-authored). Blobs the source
# lacks become empty files. Then, for example:
#
#   guard -C OUT/hist.git check "$(git -C OUT/hist.git rev-list --max-parents=0 BRANCH | tail -1)..BRANCH" --format json
#
# Environment: GUARD (default target/release/guard, built if missing).
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
src="${1:?REPO}"
out="${2:?OUT}"
branch="${3:-main}"
guard="${GUARD:-$here/target/release/guard}"
if [[ ! -x "$guard" ]]; then
    (cd "$here" && cargo build --release --quiet)
fi
src="$(cd "$src" && pwd)"
objects="$(git -C "$src" rev-parse --path-format=absolute --git-path objects)"
rm -rf "$out"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
# The blobs the mirror lacks: written as empty files below.
git -C "$src" fsck --connectivity-only 2>&1 | awk '$1 == "missing" { print $3 }' >"$out/missing.txt" || true

# The history as it is (objects shared with the source), missing blobs filled in.
fill() {
    python3 -c '
import sys
missing = set(open(sys.argv[1]).read().split())
inp, out = sys.stdin.buffer, sys.stdout.buffer
while line := inp.readline():
    if line.startswith(b"data "):
        out.write(line)
        out.write(inp.read(int(line[5:])))
        continue
    if line.startswith(b"M "):
        mode, sha, path = line.split(b" ", 3)[1:]
        if sha.decode() in missing:
            out.write(b"M " + mode + b" inline " + path + b"data 0\n\n")
            continue
    out.write(line)
' "$out/missing.txt"
}
new_repo() {
    git init -q --bare "$1"
    echo "$objects" >"$1/objects/info/alternates"
}
new_repo "$out/plain.git"
git -C "$src" fast-export --no-data "$branch" | fill | git -C "$out/plain.git" fast-import --quiet

# The ledger `guard init` writes for the tip.
mkdir -p "$out/tip" "$out/root/qa"
git -C "$out/plain.git" archive "$branch" | tar -x -C "$out/tip"
(
    cd "$out/tip"
    git init -q
    git add -A
    git -c user.name=bench -c user.email=bench@example.com commit -qm tip
    "$guard" init >/dev/null
)
cp "$out/tip/qa/"* "$out/root/qa/"
files=$(cd "$out/root" && find qa -type f | sort)

new_repo "$out/hist.git"
# shellcheck disable=SC2086
git -C "$src" fast-export --no-data "$branch" | fill \
    | python3 "$here/benches/add_root_files.py" "$out/root" $files \
    | git -C "$out/hist.git" fast-import --quiet
rm -rf "$out/plain.git" "$out/tip"
echo "$out/hist.git: $(git -C "$out/hist.git" rev-list --count "$branch") commits of $branch, the ledger in every root"
