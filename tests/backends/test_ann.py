"""The optional ANN index agrees with exact search and never crosses scopes."""

import random
import subprocess
import sys
from pathlib import Path

import pytest

from memvault import Memory, NewEntry, Settings
from memvault.store import ann

pytest.importorskip("usearch")

WORDS = (
    "tea coffee berlin lisbon budget launch garden violin chess river mountain code review "
    "database index painting concert recipe bicycle kitten puppy"
).split()


def _sentences(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choices(WORDS, k=6)) + f" item {n}" for n in range(count)]


def test_ann_results_match_exact_search(tmp_path: Path) -> None:
    assert ann.available()
    url = f"sqlite:///{tmp_path / 'ann.db'}"
    texts = _sentences(600, 1)
    settings = Settings(near_duplicate_threshold=0)
    with Memory(url, settings=settings) as memory:
        memory.write_many([NewEntry(t, "workspace:big") for t in texts])
        memory.write_many([NewEntry(t, "workspace:other") for t in _sentences(50, 2)])
    queries = [" ".join(random.Random(q).choices(WORDS, k=3)) for q in range(20)]
    exact_settings = settings.with_overrides(ann_min_chunks=0)
    ann_settings = settings.with_overrides(ann_min_chunks=100, ann_candidates=200)
    with (
        Memory(url, settings=exact_settings) as exact,
        Memory(url, settings=ann_settings) as approx,
    ):
        overlap = []
        for query in queries:
            want = {
                h.entry.id
                for h in exact.search(query, "workspace:big", dense_weight=1, lexical_weight=0)
            }
            got = approx.search(query, "workspace:big", dense_weight=1, lexical_weight=0)
            assert {h.entry.scope.id for h in got} == {"big"}
            overlap.append(len(want & {h.entry.id for h in got}) / len(want))
        assert approx.backend._cache._indexes  # type: ignore[attr-defined]
    assert sum(overlap) / len(overlap) >= 0.9


def test_usearch_and_onnxruntime_load_in_either_order() -> None:
    code = "import usearch.index, onnxruntime; print('ok')"
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    assert done.returncode == 0, "usearch >= 2.20 crashes onnxruntime; keep the pin in pyproject"
