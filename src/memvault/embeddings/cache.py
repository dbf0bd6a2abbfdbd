"""An LRU cache in front of any embedder, keyed by (model, sha256 of the text)."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from .base import Embedder, Vectors


class CachedEmbedder(Embedder):
    """Wraps an embedder; texts seen recently are not embedded again."""

    def __init__(self, inner: Embedder, max_entries: int = 10_000) -> None:
        self.inner = inner
        self.name = inner.name
        self.dimension = inner.dimension
        self.batch_size = inner.batch_size
        self.max_entries = max_entries
        self._cache: OrderedDict[tuple[str, bytes], Vectors] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        """Texts not embedded: found in the cache, or repeated within one call."""
        self.misses = 0
        """Texts the inner embedder embedded."""

    def _key(self, text: str) -> tuple[str, bytes]:
        return (self.name, hashlib.sha256(text.encode("utf-8")).digest())

    def load(self) -> None:
        self.inner.load()

    @property
    def loaded(self) -> bool:
        return self.inner.loaded

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        return self.embed(texts)

    def forget(self, texts: Sequence[str]) -> None:
        with self._lock:
            for text in texts:
                self._cache.pop(self._key(text), None)
        self.inner.forget(texts)

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()
        self.inner.clear()

    def holding(self, texts: Sequence[str]) -> int:
        with self._lock:
            held = sum(self._key(text) in self._cache for text in texts)
        return held + self.inner.holding(texts)

    def embed(self, texts: Sequence[str]) -> Vectors:
        keys = [self._key(text) for text in texts]
        found: dict[tuple[str, bytes], Vectors] = {}
        with self._lock:
            for key in keys:
                if key in self._cache:
                    self._cache.move_to_end(key)
                    found[key] = self._cache[key]
            missing = list(dict.fromkeys(k for k in keys if k not in found))
            self.hits += len(keys) - len(missing)
        if missing:
            index = {key: i for i, key in enumerate(keys)}
            fresh = self.inner.embed([texts[index[key]] for key in missing])
            with self._lock:
                self.misses += len(missing)
                for key, vector in zip(missing, fresh, strict=True):
                    found[key] = vector
                    self._cache[key] = vector
                while len(self._cache) > self.max_entries:
                    self._cache.popitem(last=False)
        if not keys:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.vstack([found[key] for key in keys])
