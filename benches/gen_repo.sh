#!/usr/bin/env bash
# Build a synthetic git repository for the history-scan benchmark with `git fast-import`.
#
#   benches/gen_repo.sh DIR COMMITS FILES
#
# DIR must not exist (or be an empty directory). The repository gets COMMITS commits on
# `main` over FILES files in nested directories, a human protected-path edit (merge ledger,
# freeze file, fixtures with their lockfile, property tests and seeds) about every 300
# commits, ordinary edits by human and agent authors in between, and the tag `bench/A` on
# commit COMMITS/10 (so `bench/A..main` spans 90% of the history). The work tree is checked
# out and a commit-graph is written (what `git gc` does by default), so `git log` runs as it
# would in a maintained clone. 20,000 commits over 30,000 files take a few seconds.
#
# The history is deterministic: the same arguments give the same commit ids.
set -euo pipefail

usage() {
    echo "usage: $0 DIR COMMITS FILES   (e.g. $0 target/bench-data/repo 20000 30000)" >&2
    exit 2
}

[[ $# -eq 3 ]] || usage
dir=$1
commits=$2
files=$3
[[ $commits =~ ^[0-9]+$ && $files =~ ^[0-9]+$ ]] || usage
if [[ -e $dir ]] && [[ -n $(ls -A "$dir") ]]; then
    echo "$0: $dir exists and is not empty; remove it first" >&2
    exit 2
fi

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
git init -q -b main "$dir"
# Fixed identities and no hooks or signing from the user's configuration.
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
python3 "$here/gen_repo_stream.py" "$commits" "$files" | git -C "$dir" fast-import --quiet
git -C "$dir" reset -q --hard main
git -C "$dir" commit-graph write --reachable
echo "$dir: A=$(git -C "$dir" rev-parse bench/A) B=$(git -C "$dir" rev-parse main)" >&2
