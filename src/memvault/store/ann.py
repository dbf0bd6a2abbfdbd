"""Optional approximate nearest-neighbour search (the ``ann`` extra: usearch HNSW).

An index is built per scope (so scope and tenant filtering still happen before ranking) once the
scope holds at least ``Settings.ann_min_chunks`` chunks; smaller scopes, and stores without
usearch, use exact numpy search. The index answers the ``candidates`` nearest chunks; the other
chunks count as having no dense evidence.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

CONNECTIVITY = 16
EXPANSION_ADD = 128
EXPANSION_SEARCH = 256


def available() -> bool:
    return importlib.util.find_spec("usearch") is not None


@dataclass(frozen=True, slots=True, eq=False)
class AnnIndex:
    """HNSW over the rows of one chunk matrix (keys are row positions)."""

    index: object

    @classmethod
    def build(cls, matrix: npt.NDArray[np.float32], present: npt.NDArray[np.bool_]) -> AnnIndex:
        from usearch.index import Index

        index = Index(
            ndim=matrix.shape[1],
            metric="cos",
            dtype="f32",
            connectivity=CONNECTIVITY,
            expansion_add=EXPANSION_ADD,
            expansion_search=EXPANSION_SEARCH,
        )
        rows = np.flatnonzero(present).astype(np.uint64)
        if len(rows):
            index.add(rows, np.ascontiguousarray(matrix[rows]))
        return cls(index)

    def cosine(
        self, vector: npt.NDArray[np.float32], size: int, candidates: int
    ) -> npt.NDArray[np.float64]:
        """Cosine of the ``candidates`` nearest rows; NaN for every other row of ``size``."""
        result = np.full(size, np.nan)
        matches = self.index.search(vector, min(candidates, size))  # type: ignore[attr-defined]
        keys = np.asarray(matches.keys, dtype=np.int64)
        result[keys] = 1.0 - np.asarray(matches.distances, dtype=np.float64)
        return result
