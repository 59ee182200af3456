#!/usr/bin/env bash
# fuzz/run.sh [SECONDS] [TARGET...]
#
# Seeds each target's corpus from tests/data/ (the real runner output and the bad-input
# corpus the tests use), then fuzzes each target for SECONDS (default 900: the 15 minutes
# per target the reliability figures in the README are measured with). SECONDS=0 builds the
# targets and replays their corpora once, which is what .ci/run does.
#
# Limits are the gate's: an input that takes over 1 s (-timeout) or asks for more than 256 MB
# at once (-malloc_limit_mb) is a bug, as is any crash. The whole fuzzing process may hold
# more (-rss_limit_mb=1024): the corpus and AddressSanitizer's quarantine of freed memory
# grow with the run, not with one input. A failing input is left in fuzz/artifacts/TARGET/:
# turn it into a regression test and fix the bug. Every target runs; the script fails at the
# end if any did.
set -euo pipefail
cd "$(dirname "$0")"
seconds=${1:-900}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cargo +nightly fuzz list)
fi

data=../tests/data
seed() { # seed TARGET FILE...
  mkdir -p "corpus/$1"
  local f
  for f in "${@:2}"; do
    [ -f "$f" ] && cp "$f" "corpus/$1/seed-$(sha256sum "$f" | cut -c1-16)"
  done
  return 0
}
shopt -s nullglob globstar
seed junit "$data"/junit/* "$data"/bad/junit/*
seed coverage "$data"/coverage/* "$data"/bad/coverage/*
seed collected "$data"/collected/* "$data"/bad/collected/*
seed ledger ../policy/merge_ledger.toml ../tests/integration/snapshots/*ledger*.snap
seed freeze ../policy/freeze.toml
seed testid "$data"/collected/*
# Test files: the pytest project's tests (each input is two versions of a file).
seed test_source "$data"/pytest-project/**/*.py
mkdir -p corpus/junit_model corpus/signers corpus/trailers corpus/lockfile corpus/hook_input
# Tree objects: this repository's own, as git stores them (a clone; none outside one).
mkdir -p corpus/raw_tree corpus/pack_delta corpus/range_walk corpus/pack_inflate corpus/pack_objects
if git -C .. rev-parse -q --verify 'HEAD^{tree}' >/dev/null; then
  for tree in $(git -C .. ls-tree -r -d --format='%(objectname)' HEAD | head -20) "$(git -C .. rev-parse 'HEAD^{tree}')"; do
    git -C .. cat-file tree "$tree" >"corpus/raw_tree/seed-$tree"
  done
fi
# Commit objects, commit-graph files and pack indexes, each behind the byte that picks the
# object format (0 SHA-1, 1 SHA-256): this repository's own commits, and two small histories
# (a merge, an octopus merge) git writes in a temporary directory in either format. Seeding
# is best effort: without git, or with a git too old for SHA-256, there are fewer seeds.
mkdir -p corpus/commit_header corpus/commit_graph corpus/pack_index
seed_with() { # seed_with TARGET FORMAT-BYTE FILE: FILE behind the byte
  [ -s "$3" ] || return 0
  local f
  f=$(mktemp)
  { printf "\\$(printf %03o "$2")"; cat "$3"; } >"$f"
  chmod 644 "$f"
  cp "$f" "corpus/$1/seed-$(sha256sum "$f" | cut -c1-16)"
  rm -f "$f"
}
seed_history() { # seed_history DIR FORMAT-BYTE OBJECT-FORMAT
  local d=$1 c
  git init -q -b main --object-format="$3" "$d" || return 0
  for c in a x y z b; do
    case $c in x | y | z) git -C "$d" checkout -q -b "$c" main ;; esac
    echo "$c" >"$d/$c"
    git -C "$d" add "$c" && git -C "$d" commit -q -m "$c" || return 0
    case $c in x | y | z) git -C "$d" checkout -q main ;; esac
  done
  git -C "$d" merge -q --no-edit x && git -C "$d" merge -q --no-edit y z || return 0
  for c in $(git -C "$d" rev-list --all); do
    git -C "$d" cat-file commit "$c" >"$d/.commit" && seed_with commit_header "$2" "$d/.commit"
  done
  git -C "$d" commit-graph write --reachable &&
    seed_with commit_graph "$2" "$d/.git/objects/info/commit-graph"
  git -C "$d" repack -q -a -d && for c in "$d"/.git/objects/pack/*.idx; do
    seed_with pack_index "$2" "$c"
  done
  return 0
}
if command -v git >/dev/null; then
  if git -C .. rev-parse -q --verify HEAD >/dev/null; then
    tmp=$(mktemp)
    own=0
    [ "$(git -C .. rev-parse --show-object-format 2>/dev/null)" = sha256 ] && own=1
    for c in $(git -C .. rev-list -n 30 HEAD); do
      git -C .. cat-file commit "$c" >"$tmp" && seed_with commit_header "$own" "$tmp"
    done
    rm -f "$tmp"
  fi
  histories=$(mktemp -d)
  (
    export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
    export GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@example.com GIT_AUTHOR_DATE='1700000000 +0100'
    export GIT_COMMITTER_NAME=C GIT_COMMITTER_EMAIL=c@example.com
    export GIT_COMMITTER_DATE='1712345678 -0700'
    seed_history "$histories/sha1" 0 sha1
    seed_history "$histories/sha256" 1 sha256
  ) >/dev/null 2>&1 || true
  rm -rf "$histories"
fi

cargo +nightly fuzz build --release
export ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=64}
limits=(-timeout=1 -malloc_limit_mb=256 -rss_limit_mb=1024)
failed=()
for t in "${targets[@]}"; do
  if [ "$seconds" = 0 ]; then
    echo "fuzz: replaying corpus/$t"
    cargo +nightly fuzz run --release "$t" "corpus/$t" -- -runs=0 "${limits[@]}" || failed+=("$t")
  else
    echo "fuzz: $t for $seconds s"
    cargo +nightly fuzz run --release "$t" "corpus/$t" -- \
      -max_total_time="$seconds" "${limits[@]}" -print_final_stats=1 || failed+=("$t")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: failed: ${failed[*]} (inputs in fuzz/artifacts/)" >&2
  exit 1
fi
