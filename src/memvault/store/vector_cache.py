"""Per-scope arrays of chunk vectors kept in process memory, so exact search is one matmul."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..retrieval.candidates import Candidates
from .ann import AnnIndex
from .ops import Filter, Superseded
from .timeconv import to_micros

NO_EXPIRY = np.iinfo(np.int64).max
CacheKey = tuple[str, str, int]
"""(tenant, scope, vector dimension)."""


@dataclass(frozen=True, slots=True, eq=False)
class ChunkTable:
    """Chunks of a set of entries, in (created_at, id, seq) order, with per-entry columns."""

    chunk_keys: npt.NDArray[np.int64]
    chunk_entry: npt.NDArray[np.int64]
    matrix: npt.NDArray[np.float32]
    has_vector: npt.NDArray[np.bool_]
    entry_ids: npt.NDArray[np.object_]
    created_us: npt.NDArray[np.int64]
    expires_us: npt.NDArray[np.int64]
    valid_from_us: npt.NDArray[np.int64]
    valid_to_us: npt.NDArray[np.int64]
    key_order: npt.NDArray[np.int64]

    @classmethod
    def from_rows(cls, rows: Iterable[Sequence[Any]], dimension: int) -> ChunkTable:
        """Rows of (chunk key, entry id, created µs, expires µs | None, valid_from µs,
        valid_to µs | None, vector bytes | None)."""
        keys, owners, vectors, present = [], [], [], []
        ids: list[str] = []
        created: list[int] = []
        expires: list[int] = []
        valid_from: list[int] = []
        valid_to: list[int] = []
        zero = np.zeros(dimension, np.float32)
        for key, entry_id, created_us, expires_us, from_us, to_us, blob in rows:
            if not ids or ids[-1] != entry_id:
                ids.append(entry_id)
                created.append(created_us)
                expires.append(NO_EXPIRY if expires_us is None else expires_us)
                valid_from.append(from_us)
                valid_to.append(NO_EXPIRY if to_us is None else to_us)
            keys.append(key)
            owners.append(len(ids) - 1)
            vector = zero if blob is None else np.frombuffer(blob, np.float32)
            present.append(blob is not None and len(vector) == dimension)
            vectors.append(vector if present[-1] else zero)
        chunk_keys = np.array(keys, np.int64)
        return cls(
            chunk_keys=chunk_keys,
            chunk_entry=np.array(owners, np.int64),
            matrix=np.vstack(vectors) if vectors else np.zeros((0, dimension), np.float32),
            has_vector=np.array(present, bool),
            entry_ids=np.array(ids, dtype=object),
            created_us=np.array(created, np.int64),
            expires_us=np.array(expires, np.int64),
            valid_from_us=np.array(valid_from, np.int64),
            valid_to_us=np.array(valid_to, np.int64),
            key_order=np.argsort(chunk_keys).astype(np.int64),
        )

    def per_entry_max(self, values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """The largest chunk value of each entry, NaN ignored (an entry's chunks are contiguous)."""
        if len(values) == len(self.entry_ids):
            return values
        if not len(values):
            return np.zeros(0)
        starts = np.flatnonzero(np.r_[True, np.diff(self.chunk_entry) != 0])
        result: npt.NDArray[np.float64] = np.fmax.reduceat(values, starts)
        return result

    def positions(self, keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Chunk positions of the given chunk keys (-1 for keys not in the table)."""
        sorted_keys = self.chunk_keys[self.key_order]
        if not len(sorted_keys):
            return np.full(len(keys), -1, np.int64)
        found = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
        result: npt.NDArray[np.int64] = np.where(
            sorted_keys[found] == keys, self.key_order[found], -1
        )
        return result


class VectorCache:
    """Chunk tables (and their ANN indexes) by key, dropped whenever the store's version moves."""

    def __init__(self, max_scopes: int = 64) -> None:
        self._tables: dict[CacheKey, ChunkTable] = {}
        self._indexes: dict[CacheKey, AnnIndex] = {}
        self._version: object = None
        self.max_scopes = max_scopes

    def get(self, key: CacheKey, version: object) -> ChunkTable | None:
        if version != self._version:
            self._tables.clear()
            self._indexes.clear()
            self._version = version
        return self._tables.get(key)

    def put(self, key: CacheKey, table: ChunkTable) -> None:
        if len(self._tables) >= self.max_scopes:
            oldest = next(iter(self._tables))
            self._tables.pop(oldest)
            self._indexes.pop(oldest, None)
        self._tables[key] = table

    def ann(self, key: CacheKey, table: ChunkTable) -> AnnIndex:
        """The ANN index of a cached table, built on first use."""
        if key not in self._indexes:
            self._indexes[key] = AnnIndex.build(table.matrix, table.has_vector)
        return self._indexes[key]


def exact_cosine(table: ChunkTable, vector: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
    """Cosine of every chunk (NaN where a chunk has no vector)."""
    if not len(table.chunk_keys):
        return np.zeros(0)
    result: npt.NDArray[np.float64] = np.where(
        table.has_vector, table.matrix @ vector, np.nan
    ).astype(np.float64)
    return result


@dataclass(frozen=True, slots=True)
class Visibility:
    """The conditions of a filter that a chunk table applies while scoring: expiry,
    supersession and validity (a cached table holds every version of its scope)."""

    live_at_us: int | None = None
    superseded: Superseded = "show"
    valid_at_us: int | None = None

    @classmethod
    def of(cls, where: Filter) -> Visibility:
        return cls(
            None if where.live_at is None else to_micros(where.live_at),
            where.superseded,
            None if where.valid_at is None else to_micros(where.valid_at),
        )

    def mask(self, table: ChunkTable) -> npt.NDArray[np.bool_]:
        """Which entries of ``table`` are visible."""
        shown = np.ones(len(table.entry_ids), bool)
        if self.live_at_us is not None:
            shown &= table.expires_us > self.live_at_us
        if self.superseded != "show":
            current = table.valid_to_us == NO_EXPIRY
            shown &= current if self.superseded == "hide" else ~current
        if self.valid_at_us is not None:
            at = self.valid_at_us
            shown &= (table.valid_from_us <= at) & (table.valid_to_us > at)
        return shown


def score_table(
    table: ChunkTable,
    lexical_by_chunk: npt.NDArray[np.float64],
    dense_c: npt.NDArray[np.float64] | None,
    visibility: Visibility,
    with_vectors: bool,
) -> Candidates:
    """Per-entry candidates: each entry scores as its best chunk; entries ``visibility`` hides
    (expired, superseded, not valid at the instant asked) are dropped.

    ``dense_c`` is each chunk's cosine (NaN: no dense score), or None when the query has no
    vector.
    """
    if dense_c is None:
        dense_c = np.full(len(table.chunk_keys), np.nan)
    lexical = table.per_entry_max(lexical_by_chunk)
    dense_or_nan = table.per_entry_max(dense_c)
    has_vector = ~np.isnan(dense_or_nan)
    dense = np.where(has_vector, dense_or_nan, -1.0)
    live = visibility.mask(table)
    vectors = None
    if with_vectors:
        best = np.lexsort((-np.nan_to_num(dense_c, nan=-np.inf), table.chunk_entry))
        first = best[np.r_[True, np.diff(table.chunk_entry[best]) != 0]] if len(best) else best
        vectors = table.matrix[first][live]
    return Candidates(
        entry_ids=table.entry_ids[live],
        created_us=table.created_us[live],
        lexical=lexical[live],
        dense=dense[live],
        has_vector=has_vector[live],
        vectors=vectors,
    )
