#!/usr/bin/env bash
# Regenerates the real coverage and collected-id samples from tests/data/coverage-project/.
#
#   tests/data/coverage/coverage.json    coverage.py JSON (pytest-cov --cov-report=json)
#   tests/data/coverage/coverage.lcov    LCOV (pytest-cov --cov-report=lcov)
#   tests/data/coverage/cobertura.xml    Cobertura XML (pytest-cov --cov-report=xml)
#   tests/data/collected/pytest-q.txt    pytest --collect-only -q
#
# the reports cut short in tests/data/bad/coverage/cut-short.{lcov,xml}, and the pytest
# outputs guard must refuse, in tests/data/bad/collected/ (cut-short.txt among them):
#   pytest-qq.txt                 --collect-only -qq (counts per file, no ids)
#   pytest-no-q.txt               --collect-only without -q (a tree, no ids)
#   pytest-none.txt               -q with a -k that selects nothing
#   pytest-collection-error.txt   -q with a test module that fails to import
#
# The other samples are not regenerated here: tests/data/collected/{nextest-*,cargo-test-list}
# were captured once from a throwaway crate (see the tests in src/evidence/collected.rs), and
# the rest of tests/data/bad/ is written by hand.
#
# Needs python3 with pytest and pytest-cov (python3 -m pip install pytest pytest-cov).
# Branch coverage is on, so the JSON percent counts branches and differs from the LCOV and
# Cobertura line figures. After regenerating, update the hard-coded figures in the tests of
# src/evidence/coverage/ and the id list in src/evidence/collected.rs, checking them by hand.
set -euo pipefail

data="$(cd "$(dirname "$0")" && pwd)"
project="$data/coverage-project"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Keep the data file, bytecode and pytest's cache out of the repository.
export COVERAGE_FILE="$work/.coverage"
export PYTHONDONTWRITEBYTECODE=1
pytest=(python3 -m pytest -p no:cacheprovider)

cd "$project"
"${pytest[@]}" -q \
    --cov=calc --cov-branch \
    --cov-report="json:$data/coverage/coverage.json" \
    --cov-report="lcov:$data/coverage/coverage.lcov" \
    --cov-report="xml:$data/coverage/cobertura.xml"

# --collect-only exits 0 with the ids on stdout, and the warnings summary there too (the
# project has an unregistered mark on purpose, so the sample shows that block).
"${pytest[@]}" --collect-only -q > "$data/collected/pytest-q.txt"

bad="$data/bad/collected"
"${pytest[@]}" --collect-only -qq > "$bad/pytest-qq.txt"
"${pytest[@]}" --collect-only > "$bad/pytest-no-q.txt"
# pytest exits 5 when it collects nothing and 2 on collection errors: the output is the point.
"${pytest[@]}" --collect-only -q -k no_such_test > "$bad/pytest-none.txt" || true
cp -r "$project" "$work/broken"
printf 'import no_such_module\n\n\ndef test_never():\n    pass\n' > "$work/broken/tests/test_broken.py"
(cd "$work/broken" && "${pytest[@]}" --collect-only -q > "$bad/pytest-collection-error.txt") || true

# Cobertura's <source> and pytest's warning and tree lines name absolute paths; write them
# relative to the repository so the samples do not change with where it was checked out.
# Nothing else is edited.
sed -i -e "s|$work/broken|tests/data/coverage-project|g" -e "s|$project|tests/data/coverage-project|g" \
    "$data/coverage/cobertura.xml" "$data/collected/pytest-q.txt" "$bad"/pytest-*.txt

# Reports cut short, as a run killed while writing them leaves them: inside the LCOV's second
# record, and inside the Cobertura XML's first <class>.
head -n 10 "$data/coverage/coverage.lcov" > "$data/bad/coverage/cut-short.lcov"
head -n 12 "$data/coverage/cobertura.xml" > "$data/bad/coverage/cut-short.xml"
# ... and a collected list cut inside its third id.
head -c 101 "$data/collected/pytest-q.txt" > "$bad/cut-short.txt"

echo "regenerated:"
ls -l "$data/coverage" "$data/collected/pytest-q.txt" "$bad"/pytest-*.txt "$bad/cut-short.txt" "$data"/bad/coverage/cut-short.*
