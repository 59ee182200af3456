#!/usr/bin/env bash
# How often `weakened_test` fires on real history, every commit treated as an agent's.
#
#   benches/weakened_precision.sh repo DIR [COMMITS]    the last COMMITS (default 300) commits of
#                                                        the git repository DIR
#   benches/weakened_precision.sh sdists DIR            a repository made from the sdists
#                                                        (*.tar.gz) in DIR, one commit per
#                                                        version, oldest first
#
# Both judge a scratch copy whose every commit is authored and committed by an agent
# identity of the embedded ledger (cursoragent@cursor.com); the source repository is never
# changed. It prints the number of commits judged and flagged, writes every finding to
# OUT/findings.tsv (commit, path:line, message) and, per flagged commit, the diff of the files
# it was flagged for to OUT/diffs/COMMIT.diff, for reading by hand: that reading is what tells
# a real weakening from a false positive (README, "Weakened tests"). The scratch repository is
# kept in OUT/repo.
#
# Environment: GUARD (default target/release/guard, built if missing), OUT (default
# target/weakened-precision/NAME).
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
mode="${1:-}"
src="${2:-}"
if [[ -z "$mode" || -z "$src" || ! -d "$src" ]]; then
    sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
guard="${GUARD:-$here/target/release/guard}"
if [[ ! -x "$guard" ]]; then
    (cd "$here" && cargo build --release --quiet)
fi
name="$(basename "$(cd "$src" && pwd)")"
out="${OUT:-$here/target/weakened-precision/$name}"
rm -rf "$out"
mkdir -p "$out/diffs"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# git without the caller's config, so that no hook, signing or identity of theirs applies.
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 HOME="$work"
export GIT_AUTHOR_NAME="Cursor Agent" GIT_AUTHOR_EMAIL="cursoragent@cursor.com"
export GIT_COMMITTER_NAME="Cursor Agent" GIT_COMMITTER_EMAIL="cursoragent@cursor.com"
# Kept for reading the flagged commits in full.
repo="$out/repo"

case "$mode" in
repo)
    count="${3:-300}"
    git clone -q --no-local "$src" "$repo"
    cd "$repo"
    # Every commit made by the agent; the trees stay as they were.
    FILTER_BRANCH_SQUELCH_WARNING=1 git filter-branch -f --env-filter '
        export GIT_AUTHOR_NAME="Cursor Agent" GIT_AUTHOR_EMAIL="cursoragent@cursor.com"
        export GIT_COMMITTER_NAME="Cursor Agent" GIT_COMMITTER_EMAIL="cursoragent@cursor.com"
    ' -- HEAD >/dev/null 2>&1
    total="$(git rev-list --count HEAD)"
    if (( total > count )); then
        base="$(git rev-list HEAD | sed -n "$((count + 1))p")"
    else
        # From the root: the root commit itself only adds.
        base="$(git rev-list --max-parents=0 HEAD | tail -1)"
    fi
    ;;
sdists)
    mkdir -p "$repo"
    cd "$repo"
    git init -q -b main
    first=1
    for version in $(for f in "$src"/*.tar.gz; do v="${f##*-}"; echo "${v%.tar.gz}"; done | sort -V); do
        archive="$(ls "$src"/*-"$version".tar.gz | head -1)"
        # A release whose sdist ships no tests is a packaging gap, not a commit that deleted
        # them: left out (and said so).
        tests="$(tar -tzf "$archive" | grep -Ec '(^|/)(test_[^/]*|[^/]*_test)\.py$' || true)"
        if [[ "$tests" == 0 ]]; then
            echo "left out: $(basename "$archive") ships no test files" >&2
            continue
        fi
        git rm -q -r --ignore-unmatch . >/dev/null
        find . -mindepth 1 -maxdepth 1 ! -name .git -exec rm -rf {} +
        tar -xzf "$archive" --strip-components=1
        git add -A
        git commit -q -m "$(basename "$archive" .tar.gz)"
        if (( first )); then
            base="$(git rev-parse HEAD)"
            first=0
        fi
    done
    ;;
*)
    echo "unknown mode $mode: repo or sdists" >&2
    exit 2
    ;;
esac

judged="$(git rev-list --count "$base..HEAD")"
# Exit 1 is expected: the agent also changes protected paths; only weakened_test counts here.
"$guard" check "$base..HEAD" --format json >"$out/report.json" || [[ $? -eq 1 ]]
python3 - "$out" <<'EOF'
import json, sys
out = sys.argv[1]
report = json.load(open(f"{out}/report.json"))
found = [f for f in report["findings"] + report["warnings"] if f["code"] == "weakened_test"]
with open(f"{out}/findings.tsv", "w") as tsv:
    for f in found:
        tsv.write(f'{f["commit"]}\t{f["path"]}:{f["line"]}\t{f["message"]}\n')
commits = {}
for f in found:
    commits.setdefault(f["commit"], set()).add(f["path"])
with open(f"{out}/flagged.txt", "w") as flagged:
    for commit, paths in commits.items():
        flagged.write(commit + "\t" + "\t".join(sorted(paths)) + "\n")
kinds = {}
for f in found:
    kind = f["message"].split(" in test ")[0]
    kinds[kind] = kinds.get(kind, 0) + 1
print(f"findings: {len(found)} in {len(commits)} commits")
for kind, n in sorted(kinds.items()):
    print(f"  {kind}: {n}")
EOF
while IFS=$'\t' read -r commit paths; do
    # shellcheck disable=SC2086
    git show --format='%h %s' "$commit" -- $paths >"$out/diffs/$commit.diff"
done <"$out/flagged.txt"
echo "commits judged: $judged (every one as an agent's)"
echo "commits flagged: $(wc -l <"$out/flagged.txt")"
echo "details: $out/findings.tsv, diffs in $out/diffs/"
