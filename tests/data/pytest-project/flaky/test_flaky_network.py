# Run only for the rerun sample (outside testpaths): fails on the first attempt of a pytest
# session and passes on the rerun, which is what pytest-rerunfailures records as a rerun.
import atexit
import os
import tempfile
from pathlib import Path

# One counter file per pytest process, so every regeneration starts from a failing attempt.
COUNTER = Path(tempfile.gettempdir()) / f"merge-guard-flaky-{os.getpid()}"
atexit.register(COUNTER.unlink, missing_ok=True)


def test_fetch_eventually_succeeds():
    attempts = int(COUNTER.read_text()) + 1 if COUNTER.exists() else 1
    COUNTER.write_text(str(attempts))
    assert attempts >= 2, f"attempt {attempts}: upstream timed out"
