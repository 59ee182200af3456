#!/usr/bin/env bash
# mutants/run.sh [--iterate] [FILE...]
#
# Mutation testing of the gate's security logic with cargo-mutants
# (`cargo install cargo-mutants --locked`). Each FILE is mutated on its own and judged by the
# unit tests of its module and the integration modules that exercise it (the table below),
# so one file takes minutes, not the whole suite per mutant. With no FILE, every file in the
# table runs. Results go to mutants/out/NAME/mutants.out/ (caught.txt, missed.txt,
# timeout.txt, unviable.txt); the score printed is caught / (caught + missed + timeout).
#
# --iterate tests again only the mutants the last run of that file did not catch (and any new
# ones): after adding a test, this takes seconds per survivor, not the whole file again.
#
# It mutates the working tree in place (and puts each file back): run it in a clean checkout
# or worktree, not beside edits of your own.
set -euo pipefail
cd "$(dirname "$0")/.."

# FILE -> test name filters (libtest substrings: unit-test module paths, integration modules).
declare -A tests=(
  [src/policy/agents.rs]="policy::agents score:: check:: signatures:: hooks_pushers::"
  [src/policy/freeze.rs]="policy::freeze score:: check:: bad_input:: evidence:: hooks_ledger::"
  [src/policy/signers.rs]="policy::signers signatures:: hooks_pushers::"
  [src/git/protected.rs]="git::protected check:: harness:: hooks_protected:: hooks_merges:: hooks_ledger:: tree_names::"
  [src/git/range.rs]="git::range check:: hooks_refs:: hooks_merges:: hooks_pre_push:: hooks_pre_receive:: hooks_protected::"
  [src/engine/audit.rs]="engine::audit check:: signatures:: hooks_merges:: hooks_ledger:: baseline:: weakened:: tree_names::"
  [src/engine/ref_update.rs]="engine::ref_update hooks_ check:: faults::"
  [src/hooks/pre_receive.rs]="hooks::pre_receive hooks_ faults:: signatures:: server_"
  [src/hooks/pre_push.rs]="hooks::pre_push hooks_pre_push:: hooks_refs:: pre_commit::"
  [src/hooks/pre_commit.rs]="hooks::pre_commit pre_commit::"
  [src/hooks/server.rs]="hooks::server hooks_ faults:: server_"
  [src/hooks/audit_log.rs]="hooks::audit_log hooks_ faults:: server_"
  [src/hooks/mod.rs]="hooks:: hooks_ faults:: pre_commit::"
)
# The rules: their unit tests and the modules that reach each rule's finding (a file not
# listed here gets them all, which takes minutes per mutant).
rules_all="rules:: score:: check:: evidence:: baseline:: weakened:: harness:: hooks_artifacts:: hooks_ledger:: faults:: bad_input:: coverage_contexts::"
for f in src/rules/*.rs src/rules/*/*.rs; do
  tests[$f]=$rules_all
done
tests[src/rules/push.rs]="rules:: hooks_refs:: hooks_pre_push:: hooks_pre_receive::"
tests[src/rules/lint.rs]="rules:: engine::lint commands:: snapshots::"
tests[src/rules/evidence/baseline.rs]="rules:: baseline:: score:: hooks_artifacts::"
tests[src/rules/evidence/test_failures.rs]="rules:: score:: evidence:: baseline:: formats:: hooks_artifacts::"
tests[src/rules/evidence/coverage.rs]="rules:: score:: evidence:: coverage_contexts:: check::"
tests[src/rules/evidence/weakened.rs]="rules:: engine::weakened weakened::"
tests[src/rules/history/malformed.rs]="rules:: git::raw_tree tree_names:: check::"
tests[src/rules/history/mod.rs]="rules:: check:: hooks_ledger:: hooks_merges:: hooks_refs:: hooks_pre_push::"

iterate=()
if [ "${1:-}" = --iterate ]; then
  iterate=(--iterate)
  shift
fi
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  mapfile -t files < <(printf '%s\n' "${!tests[@]}" | sort)
fi
for f in "${files[@]}"; do
  filters=${tests[$f]:-}
  if [ -z "$filters" ]; then
    echo "mutants: no tests listed for $f in mutants/run.sh" >&2
    exit 2
  fi
  name=$(echo "${f#src/}" | tr / _ | sed 's/\.rs$//')
  out=mutants/out/$name
  mkdir -p "$out"
  # shellcheck disable=SC2086 # the filters are words on purpose
  cargo mutants --in-place --baseline skip --timeout 120 "${iterate[@]}" -f "$f" -o "$out" -- -- $filters || true
  dir=$out/mutants.out
  caught=("$dir/caught.txt")
  [ -f "$dir/previously_caught.txt" ] && caught+=("$dir/previously_caught.txt")
  c=$(sort -u "${caught[@]}" | wc -l)
  m=$(wc -l <"$dir/missed.txt"); t=$(wc -l <"$dir/timeout.txt")
  u=$(wc -l <"$dir/unviable.txt")
  echo "mutants: $f caught $c, missed $m, timeout $t, unviable $u: $(( 100 * (c + t) / (c + m + t > 0 ? c + m + t : 1) ))% caught"
done
