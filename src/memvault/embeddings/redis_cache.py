"""A shared embedding cache in Redis (``MEMVAULT_REDIS_URL``), off by default.

Several workers embedding the same texts (one per process, or one per machine) pay for each
text once. Keys are ``memvault:embedding:<model>:<sha256 of the text>``; values are the raw
float32 vector. A Redis failure never fails a write or a search: the cache is bypassed (and
counted in ``errors``) and the model embeds the texts.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import BackendError
from .base import Embedder, Vectors


class RedisCachedEmbedder(Embedder):
    """Looks texts up in Redis before asking ``inner``; stores what ``inner`` computed."""

    def __init__(
        self,
        inner: Embedder,
        url: str,
        *,
        ttl_seconds: int | None = None,
        prefix: str = "memvault:embedding",
        client: Any = None,
    ) -> None:
        if client is None:
            import redis

            client = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
        self.client = client
        self.inner = inner
        self.name, self.dimension, self.batch_size = inner.name, inner.dimension, inner.batch_size
        self.ttl_seconds = ttl_seconds
        self.prefix = prefix
        self.hits = self.misses = self.errors = 0
        self._lock = threading.Lock()  # guards the counters

    def _key(self, text: str) -> str:
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        return f"{self.prefix}:{self.name}:{digest}"

    def load(self) -> None:
        self.inner.load()

    @property
    def loaded(self) -> bool:
        return self.inner.loaded

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        return self.embed(texts)

    def forget(self, texts: Sequence[str]) -> None:
        """Delete the texts' vectors from Redis; a Redis that cannot be reached is a
        BackendError here (an erasure must not pass over a cache it could not clear)."""
        keys = [self._key(text) for text in texts]
        try:
            for start in range(0, len(keys), 1000):
                self.client.delete(*keys[start : start + 1000])
        except Exception as exc:
            raise BackendError(
                f"cannot delete erased texts' vectors from the Redis cache: {type(exc).__name__}"
            ) from None
        self.inner.forget(texts)

    def clear(self) -> None:
        """Nothing of Redis: it is shared, and the erasing process deleted what it erased."""
        self.inner.clear()

    def holding(self, texts: Sequence[str]) -> int:
        """How many of ``texts`` Redis holds vectors of (BackendError if it cannot tell)."""
        try:
            held = int(self.client.exists(*[self._key(t) for t in texts])) if texts else 0
        except Exception as exc:
            raise BackendError(
                f"cannot scan the Redis cache for erased texts: {type(exc).__name__}"
            ) from None
        return held + self.inner.holding(texts)

    def _lookup(self, keys: list[str]) -> list[Any]:
        try:
            return list(self.client.mget(keys))
        except Exception:  # any Redis failure: work without the cache
            with self._lock:
                self.errors += 1
            return [None] * len(keys)

    def _store(self, keys: list[str], vectors: Vectors) -> None:
        try:
            with self.client.pipeline(transaction=False) as pipe:
                for key, vector in zip(keys, vectors, strict=True):
                    pipe.set(key, vector.astype(np.float32).tobytes(), ex=self.ttl_seconds)
                pipe.execute()
        except Exception:
            with self._lock:
                self.errors += 1

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dimension), np.float32)
        keys = [self._key(text) for text in texts]
        size = self.dimension * 4
        found = {
            i: np.frombuffer(raw, np.float32)
            for i, raw in enumerate(self._lookup(keys))
            if isinstance(raw, bytes) and len(raw) == size
        }
        missing = [i for i in range(len(texts)) if i not in found]
        with self._lock:
            self.hits += len(found)
            self.misses += len(missing)
        if missing:
            fresh = self.inner.embed([texts[i] for i in missing])
            self._store([keys[i] for i in missing], fresh)
            found.update(zip(missing, fresh, strict=True))
        return np.vstack([found[i] for i in range(len(texts))]).astype(np.float32)
