#!/usr/bin/env bash
# Regenerates the real runner samples in tests/data/junit/ from the sample projects beside this
# script: pytest (xunit1, xunit2, and with pytest-rerunfailures), cargo-nextest, and the lists of
# collected test ids. Needs python3 with pytest, cargo-nextest, and for pytest-rerun.xml the
# pytest-rerunfailures plugin (`python3 -m pip install pytest-rerunfailures`; without it that
# sample is kept as it is).
#
# The runs exit non-zero on purpose (each project has a failing test); only "tests failed" is
# tolerated, any other exit status (usage error, crash, build failure) stops the script.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$here/junit"
mkdir -p "$out"

# run EXPECTED_STATUS COMMAND...: runs COMMAND and fails unless it exits 0 or EXPECTED_STATUS.
run() {
    local expected="$1"
    shift
    local status=0
    "$@" || status=$?
    if [ "$status" -ne 0 ] && [ "$status" -ne "$expected" ]; then
        echo "regen-junit: '$*' exited with $status" >&2
        exit 1
    fi
}

# --- pytest -------------------------------------------------------------------------------
cd "$here/pytest-project"
export PYTHONDONTWRITEBYTECODE=1
# Only the plugins named below, so the reports do not depend on what else is installed.
export PYTEST_DISABLE_PLUGIN_AUTOLOAD=1
# pytest writes absolute paths into skip messages; keep the samples independent of the checkout.
project="$PWD"
relative() { sed -e "s#$project/##g" "$1" >"$2" && rm -f "$1"; }

for family in xunit1 xunit2; do
    run 1 python3 -m pytest -q -o junit_family="$family" --junitxml="$out/.pytest-$family.xml" >/dev/null
    relative "$out/.pytest-$family.xml" "$out/pytest-$family.xml"
done

python3 -m pytest --collect-only -q >"$out/pytest-collected.txt"

if python3 -c 'import pytest_rerunfailures' 2>/dev/null; then
    # The whole suite plus flaky/ (outside testpaths), one rerun: the failing tests fail twice
    # and the flaky test passes on its rerun.
    run 1 python3 -m pytest -q -p pytest_rerunfailures --reruns 1 tests flaky \
        --junitxml="$out/.pytest-rerun.xml" >/dev/null
    relative "$out/.pytest-rerun.xml" "$out/pytest-rerun.xml"
else
    echo "regen-junit: pytest-rerunfailures is not installed; keeping pytest-rerun.xml" >&2
fi

# --- cargo-nextest ------------------------------------------------------------------------
cd "$here/nextest-crate"
export RUST_BACKTRACE=0 CARGO_TERM_COLOR=never NEXTEST_HIDE_PROGRESS_BAR=1
# nextest exits 100 when tests fail.
run 100 cargo nextest run --profile ci >/dev/null 2>&1
cp target/nextest/ci/junit.xml "$out/nextest.xml"
cargo nextest list 2>/dev/null >"$out/nextest-list.txt"

echo "regen-junit: wrote $(cd "$out" && ls pytest-*.xml pytest-collected.txt nextest.xml nextest-list.txt | tr '\n' ' ')"
