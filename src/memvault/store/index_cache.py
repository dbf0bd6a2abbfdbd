"""Scope indexes kept in process memory, each with the version of the scope it was built from."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, NamedTuple, TypeVar

T = TypeVar("T")


class ScopeKey(NamedTuple):
    tenant: str
    scope: str
    dimension: int
    """Of the query vectors (0: none)."""


class IndexCache(Generic[T]):
    """The most recently used scope indexes; one is returned only for the version it was built
    from, so a change to a scope (by this process or another) rebuilds that scope's alone.

    It keeps at most ``max_scopes`` indexes weighing at most ``max_weight`` together (for
    chunk tables: chunks, 1.5 KB each at 384 dimensions: ~1.5 GB), dropping the least
    recently used; the last one put always stays.
    """

    def __init__(
        self,
        max_scopes: int = 64,
        max_weight: int = 1_000_000,
        weigh: Callable[[T], int] = lambda _: 1,
    ) -> None:
        self._items: dict[ScopeKey, tuple[object, T]] = {}
        self._weights: dict[ScopeKey, int] = {}
        self._lock = threading.Lock()
        self.max_scopes = max_scopes
        self.max_weight = max_weight
        self._weigh = weigh

    def get(self, key: ScopeKey, version: object) -> T | None:
        with self._lock:
            found = self._items.get(key)
            if found is None or found[0] != version:
                return None
            self._items[key] = self._items.pop(key)  # most recently used last
            return found[1]

    def latest(self, key: ScopeKey) -> tuple[object, T] | None:
        """The index kept for ``key`` whatever its version, and that version."""
        with self._lock:
            return self._items.get(key)

    def put(self, key: ScopeKey, version: object, index: T) -> T:
        with self._lock:
            self._items.pop(key, None)
            self._weights.pop(key, None)
            self._items[key] = (version, index)
            self._weights[key] = self._weigh(index)
            while len(self._items) > 1 and (
                len(self._items) > self.max_scopes or sum(self._weights.values()) > self.max_weight
            ):
                oldest = next(iter(self._items))
                self._items.pop(oldest)
                self._weights.pop(oldest)
        return index

    def scopes(self) -> list[ScopeKey]:
        with self._lock:
            return list(self._items)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._weights.clear()
