import json
from pathlib import Path

import pytest

from billing import decode, encode

SEEDS = sorted((Path(__file__).parent / "seeds").glob("*.json"))


def test_seed_corpus_is_present():
    assert len(SEEDS) >= 2


@pytest.mark.parametrize("seed", SEEDS, ids=lambda p: p.stem)
def test_roundtrip(seed):
    record = json.loads(seed.read_text(encoding="utf-8"))
    text = encode(record)
    assert decode(text) == {k: str(v) for k, v in record.items()}
    # Encoding is canonical: decoding and re-encoding gives the same text.
    assert encode(decode(text)) == text


@pytest.mark.parametrize("seed", SEEDS, ids=lambda p: p.stem)
def test_separators_are_escaped(seed):
    record = json.loads(seed.read_text(encoding="utf-8"))
    text = encode(record)
    assert text.count("=") - text.count("\\=") == len(record)
