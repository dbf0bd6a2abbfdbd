"""Scope indexes kept in process memory, each with the version of the scope it was built from."""

from __future__ import annotations

import threading
from typing import Generic, NamedTuple, TypeVar

T = TypeVar("T")


class ScopeKey(NamedTuple):
    tenant: str
    scope: str
    dimension: int
    """Of the query vectors (0: none)."""


class IndexCache(Generic[T]):
    """The most recently used scope indexes; one is returned only for the version it was built
    from, so a change to a scope (by this process or another) rebuilds that scope's alone."""

    def __init__(self, max_scopes: int = 64) -> None:
        self._items: dict[ScopeKey, tuple[object, T]] = {}
        self._lock = threading.Lock()
        self.max_scopes = max_scopes

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
            while len(self._items) >= self.max_scopes:
                self._items.pop(next(iter(self._items)))
            self._items[key] = (version, index)
        return index

    def scopes(self) -> list[ScopeKey]:
        with self._lock:
            return list(self._items)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
