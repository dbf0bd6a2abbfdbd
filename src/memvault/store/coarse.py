"""A coarse first pass over many vectors: one bit per dimension, rescored exactly (pure).

Each vector is centred on the table's mean, turned by a fixed random rotation (which spreads
the variance of an anisotropic model over every bit) and reduced to its signs: 384 bits for
MiniLM, stored column by column so that the Hamming distance to a query is a few vectorised
XOR and popcount passes over contiguous memory. The nearest by Hamming distance (``OVERSAMPLE``
per entry asked, at least ``LEAST`` and a ``SHARE`` of the table) are then scored exactly by
the caller. On real MiniLM vectors this keeps all of the exact top 10 and 99.5 % of the top 100
at 2,000 candidates of 120,000, for a sixth of the memory traffic of a full product; vectors
without a text model's structure (random ones) lose more (docs/benchmarks.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt

COARSE_MIN_CHUNKS = 20_000
"""Tables with fewer chunks are scored exactly (a product of at most ~30 MB)."""
OVERSAMPLE = 20
LEAST = 2_000
SHARE = 1 / 64
_SEED = 20261123
FAR = np.uint16(np.iinfo(np.uint16).max)


@dataclass(frozen=True, slots=True, eq=False)
class Coarse:
    """Sign bits of the centred vectors of a table, one row of 64-bit words per 64 dimensions."""

    center: npt.NDArray[np.float32]
    rotation: npt.NDArray[np.float32]
    bits: npt.NDArray[np.uint64]
    """(words, chunks): word ``j`` of every chunk is contiguous."""

    @classmethod
    def build(
        cls,
        matrix: npt.NDArray[np.float32],
        present: npt.NDArray[np.bool_],
        least: int = COARSE_MIN_CHUNKS,
    ) -> Coarse | None:
        """The coarse pass of a table, or None when it is small enough to score exactly."""
        if len(matrix) < least or not present.any() or matrix.shape[1] % 64:
            return None
        center = matrix[present].mean(axis=0).astype(np.float32)
        rotation = rotation_for(matrix.shape[1])
        bits = np.vstack(
            [
                _signs(matrix[start : start + 8192] - center, rotation)
                for start in range(0, len(matrix), 8192)
            ]
        )
        return cls(center, rotation, np.ascontiguousarray(bits.T))

    def appended(self, matrix: npt.NDArray[np.float32]) -> Coarse:
        """This pass with rows for ``matrix`` after its own (same centre and rotation)."""
        bits = _signs(matrix - self.center, self.rotation).T
        return Coarse(
            self.center, self.rotation, np.ascontiguousarray(np.hstack([self.bits, bits]))
        )

    def without(self, keep: npt.NDArray[np.bool_]) -> Coarse:
        """This pass over the rows ``keep`` marks."""
        return Coarse(self.center, self.rotation, np.ascontiguousarray(self.bits[:, keep]))

    def distances(self, vector: npt.NDArray[np.float32]) -> npt.NDArray[np.uint16]:
        """Hamming distance of every row to ``vector``'s signs."""
        query = _signs((vector - self.center)[None, :], self.rotation)[0]
        total = np.bitwise_count(self.bits[0] ^ query[0]).astype(np.uint16)
        for word in range(1, len(query)):
            total += np.bitwise_count(self.bits[word] ^ query[word])
        result: npt.NDArray[np.uint16] = total
        return result

    def nearest(
        self, vector: npt.NDArray[np.float32], usable: npt.NDArray[np.bool_], depth: int
    ) -> npt.NDArray[np.int64]:
        """Rows among ``usable`` to score exactly: the ``OVERSAMPLE * depth`` (at least
        ``LEAST``, and ``SHARE`` of the rows) nearest by Hamming distance."""
        distance = np.where(usable, self.distances(vector), FAR)
        count = min(max(depth * OVERSAMPLE, LEAST, int(len(usable) * SHARE)), int(usable.sum()))
        if count <= 0:
            return np.zeros(0, np.int64)
        # The smallest distance that ``count`` rows reach: a histogram, not a partial sort.
        reached = np.cumsum(
            np.bincount(distance, minlength=int(FAR) + 1)[: self.bits.shape[0] * 64 + 1]
        )
        cut = int(np.searchsorted(reached, count))
        result: npt.NDArray[np.int64] = np.flatnonzero(distance <= cut)
        return result


@cache
def rotation_for(dimension: int) -> npt.NDArray[np.float32]:
    """The same random orthogonal matrix for every table of a dimension."""
    normal = np.random.default_rng(_SEED).normal(size=(dimension, dimension))
    rotation, _ = np.linalg.qr(normal)
    return rotation.astype(np.float32)


def _signs(
    rows: npt.NDArray[np.float32], rotation: npt.NDArray[np.float32]
) -> npt.NDArray[np.uint64]:
    packed = np.packbits((rows @ rotation) > 0, axis=-1)
    return packed.view(np.uint64)
