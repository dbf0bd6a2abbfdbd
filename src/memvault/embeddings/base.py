"""The embedder interface: one abstract method, ``embed_batch``; everything else builds on it."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]


class Embedder(ABC):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension."""

    #: Identifies the model; a store remembers it and refuses vectors from another.
    name: str
    #: Length of every vector.
    dimension: int
    #: How many texts one ``embed_batch`` call takes at most.
    batch_size: int = 32

    @abstractmethod
    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        """Embed at most ``batch_size`` texts; return an array of shape (len(texts), dimension)."""

    def load(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Load now what the first embedding would load (a model); by default nothing."""

    @property
    def loaded(self) -> bool:
        """Whether embedding would load nothing first (a server warms up until it is)."""
        return True

    def forget(self, texts: Sequence[str]) -> None:  # noqa: B027 - a hook: most keep nothing
        """Drop whatever is kept of ``texts`` (a cache's vectors): erasure calls it."""

    def clear(self) -> None:  # noqa: B027 - a hook: most keep nothing
        """Drop every vector kept in this process (an erasure elsewhere: which texts it took
        is not known here)."""

    def holding(self, texts: Sequence[str]) -> int:
        """How many of ``texts`` a cache still holds vectors of (an erasure's scan)."""
        return 0

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed any number of texts, in batches."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        parts = [
            self.embed_batch(texts[start : start + self.batch_size])
            for start in range(0, len(texts), self.batch_size)
        ]
        return np.vstack(parts)

    def embed_one(self, text: str) -> Vectors:
        """One text's vector, shape (dimension,)."""
        vector: Vectors = self.embed([text])[0]
        return vector


def normalize_rows(matrix: npt.NDArray[np.floating]) -> Vectors:
    """Scale each row to unit length (zero rows stay zero)."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    result: Vectors = (matrix / np.maximum(norms, 1e-12)).astype(np.float32)
    return result
