#!/usr/bin/env bash
# Quick start: run guard on a real git repository.
#
# Makes a small pytest project in a temp git repository, writes the starter policy with
# `guard init`, freezes one flaky test, runs pytest with JUnit output and scores it (MERGE).
# Then it plays an agent that re-writes a golden fixture and "fixes" the flaky test, and
# scores again (REJECT); then an agent breaks the code and hides it behind a decorator, and
# `guard retest` runs the humans' version of the test on the agent's code (REJECT).
# Uses $GUARD, else `guard` on PATH, else ~/.local/bin/guard.
set -euo pipefail

guard="${GUARD:-$(command -v guard || echo "$HOME/.local/bin/guard")}"
[ -x "$guard" ] || { echo "error: guard not found; run ./install.sh first" >&2; exit 2; }
python3 -m pytest --version >/dev/null 2>&1 || python3 -m pip install --quiet pytest

repo="$(mktemp -d "${TMPDIR:-/tmp}/guard-quickstart.XXXXXX")"
cd "$repo"
git init -q -b main
git config user.name "Human Dev"
git config user.email "dev@example.com"

mkdir -p src tests/runtime tests/properties/seeds tests/fixtures
cat > src/billing.py <<'PY'
from decimal import Decimal


def total_with_tax(invoice):
    net = Decimal(str(invoice["net"]))
    rate = Decimal(str(invoice.get("tax_rate", 0)))
    return (net * (1 + rate)).quantize(Decimal("0.01"))
PY
cat > tests/conftest.py <<'PY'
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
PY
cat > tests/test_billing.py <<'PY'
import json
from pathlib import Path

import pytest

from src.billing import total_with_tax

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize("net,rate,want", [(100, 0.19, "119.00"), (0, 0.19, "0.00")])
def test_total(net, rate, want):
    assert str(total_with_tax({"net": net, "tax_rate": rate})) == want


def test_golden_invoice():
    invoice = json.loads((FIXTURES / "invoice_v3.json").read_text())
    assert str(total_with_tax(invoice)) == "119.00"
PY
cat > tests/runtime/test_retry.py <<'PY'
def test_backoff_under_load():
    # A known flake, frozen in qa/freeze.toml: it fails here.
    assert False, "timing window missed"
PY
cat > tests/properties/test_invoice_properties.py <<'PY'
import json
from decimal import Decimal
from pathlib import Path

from src.billing import total_with_tax

SEEDS = Path(__file__).parent / "seeds"


def test_tax_never_negative_on_seeds():
    paths = sorted(SEEDS.glob("*.json"))
    assert paths, "property seed corpus is empty"
    for path in paths:
        payload = json.loads(path.read_text())
        result = total_with_tax(payload)
        assert result >= Decimal("0")
        assert result >= Decimal(str(payload["net"]))
PY
echo '{"net": 100, "tax_rate": 0.19}' > tests/properties/seeds/basic.json
echo '{"net": 100, "tax_rate": 0.19}' > tests/fixtures/invoice_v3.json

echo "== guard init"
"$guard" init
# Freeze the known flake for 30 days, within a budget of 2 leases.
expires="$(python3 -c 'import datetime; print(datetime.datetime.now(datetime.timezone.utc).date() + datetime.timedelta(days=30))')"
python3 - "$expires" <<'PY'
import sys
from pathlib import Path
p = Path("qa/freeze.toml")
text = p.read_text().replace("max_active_leases = 0", "max_active_leases = 2")
text += f'''
[[leases]]
nodeid = "tests/runtime/test_retry.py::test_backoff_under_load"
reason = "timing-dependent under load"
owner = "platform-runtime"
expires = "{sys.argv[1]}"
'''
p.write_text(text)
PY
git add -A && git commit -q -m "Add billing with a human-owned merge ledger"
"$guard" lint

run_tests() {
  python3 -m pytest --collect-only -q -p no:cacheprovider > collected.txt
  python3 -m pytest tests -q -p no:cacheprovider --junitxml=junit.xml >/dev/null || true
}

echo "== the human baseline: guard score"
run_tests
"$guard" score --junit junit.xml --collected collected.txt
echo "(exit 0: MERGE)"

echo
echo "== an agent re-writes the golden fixture and 'fixes' the flaky test"
echo '{"net": 100, "tax_rate": 0.19, "note": "regenerated"}' > tests/fixtures/invoice_v3.json
cat > tests/runtime/test_retry.py <<'PY'
def test_backoff_under_load():
    assert True
PY
run_tests
set +e
"$guard" score --junit junit.xml --collected collected.txt
code=$?
set -e
echo "(exit $code: REJECT)"

echo
echo "== the same patch as an agent's commit: guard check audits who changed what"
git add tests
git -c user.name="Cursor Agent" -c user.email=cursoragent@cursor.com commit -q -m "Fix the flaky retry test"
set +e
"$guard" check HEAD~1..HEAD
check_code=$?
set -e
echo "(exit $check_code: REJECT)"

echo
echo "== an agent breaks the tax and hides it behind a decorator of its own: guard retest runs the humans' test"
git reset -q --hard HEAD~1
python3 - <<'PY'
from pathlib import Path
p = Path("src/billing.py")
p.write_text(p.read_text().replace("    return (net", '    if not net:\n        return Decimal("1.00")\n    return (net'))
p = Path("tests/test_billing.py")
text = p.read_text().replace("import pytest\n", "import functools\n\nimport pytest\n", 1)
text = text.replace("\n\n@pytest.mark.parametrize", """

def _cached(test):
    @functools.wraps(test)
    def run(*args, **kwargs):
        pass
    return run


@pytest.mark.parametrize""", 1).replace("def test_total(", "@_cached\ndef test_total(", 1)
p.write_text(text)
PY
git add -A
git -c user.name="Cursor Agent" -c user.email=cursoragent@cursor.com commit -q -m "Cache the tax tests"
run_tests
"$guard" score --junit junit.xml --collected collected.txt >/dev/null && echo "(guard score of the agent's own run: MERGE, exit 0)"
set +e
"$guard" retest HEAD~1..HEAD --junit junit.xml -- python3 -m pytest -q -p no:cacheprovider --junitxml=junit.xml {files} >retest.txt 2>/dev/null
retest_code=$?
set -e
grep old_test_fails retest.txt
echo "(exit $retest_code: REJECT)"
echo
echo "The repository is in $repo"
[ "$code" -eq 1 ] && [ "$check_code" -eq 1 ] && [ "$retest_code" -eq 1 ]
