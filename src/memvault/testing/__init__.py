"""Helpers for testing memvault and code built on it."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import numpy as np

from ..embeddings.base import Embedder, Vectors, normalize_rows


class ManualClock:
    """A clock that only moves when told to; pass it as ``Memory(..., clock=clock)``."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
        self._lock = threading.Lock()

    def __call__(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, delta: timedelta | None = None, **kwargs: float) -> datetime:
        """Move forward by ``delta`` or by ``timedelta(**kwargs)``; return the new time."""
        with self._lock:
            self._now += delta if delta is not None else timedelta(**kwargs)
            return self._now


class HashEmbedder(Embedder):
    """A deterministic, dependency-free stand-in embedder for unit tests of the layers above.

    Words are hashed into ``dimension`` signed buckets, so texts sharing words are similar.
    It is a fake: the real default is the packaged local model.
    """

    batch_size = 256

    def __init__(self, dimension: int = 64) -> None:
        self.name = f"hash-{dimension}"
        self.dimension = dimension

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        matrix = np.zeros((len(texts), self.dimension), np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
                bucket = int.from_bytes(digest[:4], "little") % self.dimension
                matrix[row, bucket] += 1.0 if digest[4] & 1 else -1.0
        return normalize_rows(matrix + 1e-6)


__all__ = ["HashEmbedder", "ManualClock"]
