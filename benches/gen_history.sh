#!/usr/bin/env bash
# Build a bare repository for the history-scan benchmarks with `git fast-import`, packed as
# `git gc --aggressive` packs it, with a commit-graph.
#
#   benches/gen_history.sh DIR COMMITS [gen_history_stream.py options]
#
# DIR must not exist (or be an empty directory). The history comes from
# benches/gen_history_stream.py (see there: --layout articles|bench, --shape linear|merges,
# --reject, --scale F); the tag `bench/A` marks main's commit at about COMMITS/10. The
# repository is bare (guard check and git log need no work tree), repacked with
# `git repack -adf --depth=50 --window=250` (what `git gc --aggressive` runs), and has a
# commit-graph without changed-path Bloom filters (what `git gc` writes by default). The
# history is deterministic: the same arguments give the same commit ids.
set -euo pipefail

usage() {
    echo "usage: $0 DIR COMMITS [--layout articles|bench] [--shape linear|merges] [--reject] [--scale F]" >&2
    exit 2
}

[[ $# -ge 2 ]] || usage
dir=$1
commits=$2
shift 2
[[ $commits =~ ^[0-9]+$ ]] || usage
if [[ -e $dir ]] && [[ -n $(ls -A "$dir") ]]; then
    echo "$0: $dir exists and is not empty; remove it first" >&2
    exit 2
fi

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Fixed identities and no hooks or signing from the user's configuration.
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
git init -q --bare -b main "$dir"
python3 "$here/gen_history_stream.py" "$commits" "$@" | git -C "$dir" fast-import --quiet
# The scratch ref the pull-request branches were written on (merged, so deleted).
git -C "$dir" update-ref -d refs/heads/pr 2>/dev/null || true
git -C "$dir" repack -q -adf --depth=50 --window=250
git -C "$dir" commit-graph write --reachable
echo "$dir: A=$(git -C "$dir" rev-parse bench/A) B=$(git -C "$dir" rev-parse main)" >&2
