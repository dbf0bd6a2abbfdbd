"""A scope's search index: the coarse pass, the choice of candidates and the index cache."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from memvault import Memory, NewEntry, Settings
from memvault.retrieval.ranker import RankSpec, conversational_spec, rank
from memvault.retrieval.text import query_terms
from memvault.store import scope_index
from memvault.store.coarse import Coarse
from memvault.store.index_cache import IndexCache, ScopeKey
from memvault.store.ops import Filter, SearchOp
from memvault.store.scope_index import ChunkTable, search
from memvault.store.spare import COLUMNS
from memvault.types import Scope

WORDS = "tea lisbon budget garden violin chess river code review painting recipe kitten".split()


def _clustered(count: int, seed: int, dimension: int = 384) -> np.ndarray:
    """Unit vectors around 50 centres, anisotropic like a text model's (a few directions carry
    most of the variance); the coarse pass relies on such structure (docs/benchmarks.md)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(50, dimension))
    spread = rng.normal(size=(count, dimension)) * np.geomspace(1.0, 0.05, dimension)
    rows = centres[rng.integers(0, 50, count)] + 0.8 * spread * np.sqrt(dimension / 40)
    unit: np.ndarray = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
    return unit


@pytest.mark.slow
def test_the_coarse_pass_keeps_most_of_the_exact_nearest() -> None:
    """Synthetic vectors; on a text model's it keeps them all (tests/integration, benchmarks)."""
    matrix = _clustered(30_000, 1)
    coarse = Coarse.build(matrix, np.ones(len(matrix), bool))
    assert coarse is not None
    queries = _clustered(40, 2)
    found = []
    for query in queries:
        truth = set(np.argsort(-(matrix @ query))[:10].tolist())
        rows = coarse.nearest(query, np.ones(len(matrix), bool), depth=100)
        found.append(len(truth & set(rows.tolist())) / 10)
    assert np.mean(found) >= 0.9


def test_the_coarse_pass_only_returns_usable_rows_and_skips_small_tables() -> None:
    matrix = _clustered(25_000, 3)
    usable = np.zeros(len(matrix), bool)
    usable[::7] = True
    coarse = Coarse.build(matrix, np.ones(len(matrix), bool))
    assert coarse is not None
    rows = coarse.nearest(matrix[0], usable, depth=10)
    assert len(rows) and usable[rows].all()
    assert not len(coarse.nearest(matrix[0], np.zeros(len(matrix), bool), depth=10))
    assert Coarse.build(matrix[:100], np.ones(100, bool)) is None


def _table(count: int, seed: int) -> ChunkTable:
    rng = random.Random(seed)
    vectors = _clustered(count, seed)
    created, rows = 1_700_000_000_000_000, []
    for n in range(count):
        created += rng.choice([60, 120, 7200]) * 1_000_000  # turns, and gaps between episodes
        expires = created + 1 if n % 50 == 0 else None  # a few already expired
        text = " ".join(rng.choices(WORDS, k=5))
        rows.append((n, f"E{n:06d}", created, expires, created, None, vectors[n].tobytes(), text))
    return ChunkTable.from_rows(rows, 384).with_coarse_pass(least=1_000)


@pytest.mark.slow
@pytest.mark.parametrize("conversational", [False, True])
def test_candidates_rank_as_an_exhaustive_ranking_does(
    monkeypatch: pytest.MonkeyPatch, conversational: bool
) -> None:
    """The choice of candidates alone (exact cosines): the coarse pass is tested on its own."""
    table = dataclasses.replace(_table(12_000, 4), coarse=None)
    spec = RankSpec(limit=10)
    spec = conversational_spec(spec) if conversational else spec
    where = Filter("default", (Scope.parse("user:a"),), live_at=None)
    rng = random.Random(5)
    overlap = []
    for query, vector in zip(range(30), _clustered(30, 6), strict=True):
        terms = tuple(query_terms(" ".join(rng.choices(WORDS, k=2)) + f" q{query}"))
        op = SearchOp(where, terms=terms, vector=vector, depth=100, around=2 * len(spec.neighbours))
        fast = search(table, op)
        with monkeypatch.context() as patched:
            patched.setattr(scope_index, "ALL_CANDIDATES", 10**9)
            slow = search(table, op)
        assert len(fast.entry_ids) < len(slow.entry_ids) / (2 if conversational else 10)
        got = [str(fast.entry_ids[r.index]) for r in rank(fast, spec, 0)]
        want = [str(slow.entry_ids[r.index]) for r in rank(slow, spec, 0)]
        overlap.append(len(set(got) & set(want)) / len(want))
    # The conversational model also weighs an entry's episode: a turn of a strong episode
    # that is far from every match is not a candidate, and can rank when all are (the
    # ranking forest's steps make that a hit or two of these 300 more than a logistic did).
    assert np.mean(overlap) >= (0.97 if conversational else 0.99)


def test_hidden_entries_are_never_candidates() -> None:
    table = _table(5_000, 7)
    where = Filter("default", (Scope.parse("user:a"),), live_at=datetime.now(UTC))
    op = SearchOp(where, terms=tuple(WORDS), vector=_clustered(1, 8)[0], depth=50, around=4)
    found = search(table, op)
    expired = {f"E{n:06d}" for n in range(0, 5_000, 50)}
    assert not expired & set(found.entry_ids.tolist())
    assert len(found.entry_ids) > 0


def _entries(numbers: Iterable[int], dimension: int = 8) -> ChunkTable:
    """Entries ``n`` of 1 to 3 chunks each, created in the order of ``n``."""
    rows = []
    for n in numbers:
        for seq in range(n % 3 + 1):
            rng = np.random.default_rng(n * 10 + seq)
            vector = rng.normal(size=dimension).astype(np.float32).tobytes()
            rows.append((n * 10 + seq, f"E{n:05d}", n, None, n, None, vector, f"word{n}"))
    return ChunkTable.from_rows(rows, dimension)


def _same_columns(table: ChunkTable, want: ChunkTable) -> None:
    for name in COLUMNS:
        np.testing.assert_array_equal(getattr(table, name), getattr(want, name), err_msg=name)


def test_appends_grow_in_place_and_never_change_an_older_table() -> None:
    first = _entries(range(100)).appended(_entries(range(100, 110)))
    assert first is not None
    kept = {name: getattr(first, name).copy() for name in COLUMNS}
    second = first.appended(_entries(range(110, 120)))
    assert second is not None and second.matrix.base is first.matrix.base  # no copy
    branch = first.appended(_entries(range(200, 205)))  # not the newest: copied
    assert branch is not None and branch.matrix.base is not first.matrix.base
    _same_columns(second, _entries(range(120)))
    _same_columns(branch, _entries([*range(110), *range(200, 205)]))
    for name, column in kept.items():
        np.testing.assert_array_equal(getattr(first, name), column, err_msg=name)


def test_the_index_cache_keeps_what_fits_its_weight() -> None:
    cache: IndexCache[str] = IndexCache(max_scopes=100, max_weight=10, weigh=len)
    keys = [ScopeKey("t", f"user:{n}", 384) for n in range(5)]
    for key, index in zip(keys[:3], ["aaaa", "bbbb", "cc"], strict=True):
        cache.put(key, 1, index)
    assert cache.scopes() == keys[:3]  # weight 10: all fit
    cache.put(keys[3], 1, "d" * 16)
    assert cache.scopes() == [keys[3]]  # too heavy for the others, but the last put stays
    cache.put(keys[4], 1, "e")
    assert cache.scopes() == [keys[4]]
    many: IndexCache[str] = IndexCache(max_scopes=3, max_weight=10**6)
    for key in keys:
        many.put(key, 1, "x")
    assert many.scopes() == keys[2:]


def test_the_index_cache_returns_an_index_only_for_its_version() -> None:
    cache: IndexCache[str] = IndexCache(max_scopes=2)
    a, b, c = (ScopeKey("t", s, 384) for s in ("user:a", "user:b", "user:c"))
    cache.put(a, 1, "A")
    assert cache.get(a, 1) == "A" and cache.get(a, 2) is None
    cache.put(a, 2, "A2")
    cache.put(b, 1, "B")
    assert cache.get(a, 2) == "A2"  # a is now the most recently used
    cache.put(c, 1, "C")
    assert cache.get(b, 1) is None and cache.get(a, 2) == "A2"


def test_a_write_rebuilds_only_its_scope_and_reembedding_rebuilds_all(tmp_path: Path) -> None:
    settings = Settings(near_duplicate_threshold=0)
    with Memory(str(tmp_path / "m.db"), settings=settings) as memory:
        memory.write_many([NewEntry(f"{w} note", "user:a") for w in WORDS])
        memory.write_many([NewEntry(f"{w} memo", "user:b") for w in WORDS])
        backend = memory.backend
        memory.search("tea", "user:a")
        key = ScopeKey("default", "user:a", memory.embedder.dimension)
        version = backend.scope_version(backend._conn, "default", "user:a")  # type: ignore[attr-defined]
        cached = backend._cache.get(key, version)  # type: ignore[attr-defined]
        assert cached is not None
        memory.write("kitten memo two", scope="user:b")
        same = backend.scope_version(backend._conn, "default", "user:a")  # type: ignore[attr-defined]
        assert same == version
        memory.write("kitten note two", scope="user:a")
        moved = backend.scope_version(backend._conn, "default", "user:a")  # type: ignore[attr-defined]
        assert moved[0] == version[0] and moved[1] > version[1]
        memory.reembed()
        after = backend.scope_version(backend._conn, "default", "user:a")  # type: ignore[attr-defined]
        assert after[0] != version[0]
        best = memory.search("kitten note two", "user:a")[0]
        assert best.entry.content == "kitten note two"
