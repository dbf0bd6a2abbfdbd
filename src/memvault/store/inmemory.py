"""The in-memory reference backend: plain Python, exact semantics, no persistence."""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, ClassVar

from ..config import Settings
from ..errors import BackendError, ConflictError
from ..types import MemoryEntry
from . import ops
from .base import Backend, Capabilities

Key = tuple[str, str]
Undo = list[Callable[[], None]]


def matches(entry: MemoryEntry, where: ops.Filter) -> bool:
    """Whether ``entry`` (already known to be in ``where.tenant``) passes the filter."""
    if where.scopes is not None and entry.scope not in where.scopes:
        return False
    if where.tags and not set(where.tags).issubset(entry.tags):
        return False
    if where.since is not None and entry.created_at < where.since:
        return False
    return where.live_at is None or not entry.is_expired(where.live_at)


def _detached(entry: MemoryEntry) -> MemoryEntry:
    """A copy whose metadata the caller may mutate without touching the store."""
    return replace(entry, metadata=copy.deepcopy(dict(entry.metadata)))


class InMemoryBackend(Backend):
    """Keeps entries in a dict; every batch is atomic (undone on error) and thread-safe."""

    name: ClassVar[str] = "memory"
    capabilities: ClassVar[Capabilities] = Capabilities()

    def __init__(self) -> None:
        self._rows: dict[Key, MemoryEntry] = {}
        self._lock = threading.RLock()

    @classmethod
    def from_url(cls, url: str, settings: Settings) -> InMemoryBackend:
        if url.rstrip("/") != "memory:":
            raise BackendError(
                f"the memory backend takes no location; use 'memory://', not {url!r}"
            )
        return cls()

    def batch(self, ops: Sequence[ops.Op]) -> list[Any]:
        undo: Undo = []
        with self._lock:
            try:
                return [getattr(self, f"op_{op.kind}")(op, undo) for op in ops]
            except BaseException:
                for step in reversed(undo):
                    step()
                raise

    def _set(self, key: Key, entry: MemoryEntry, undo: Undo) -> None:
        previous = self._rows.get(key)
        self._rows[key] = _detached(entry)
        undo.append(lambda: self._restore(key, previous))

    def _remove(self, key: Key, undo: Undo) -> None:
        previous = self._rows.pop(key)
        undo.append(lambda: self._restore(key, previous))

    def _restore(self, key: Key, entry: MemoryEntry | None) -> None:
        if entry is None:
            self._rows.pop(key, None)
        else:
            self._rows[key] = entry

    def _select(self, where: ops.Filter) -> list[MemoryEntry]:
        return [
            entry
            for (tenant, _), entry in self._rows.items()
            if tenant == where.tenant and matches(entry, where)
        ]

    def op_put(self, op: ops.PutOp, undo: Undo) -> None:
        key = (op.tenant, op.entry.id)
        if key in self._rows:
            raise BackendError(f"an entry with id {op.entry.id} already exists")
        self._set(key, op.entry, undo)

    def op_get(self, op: ops.GetOp, undo: Undo) -> MemoryEntry | None:
        entry = self._rows.get((op.tenant, op.entry_id))
        return None if entry is None else _detached(entry)

    def op_list(self, op: ops.ListOp, undo: Undo) -> list[MemoryEntry]:
        newest = op.order == "newest"
        rows = sorted(self._select(op.filter), key=lambda e: (e.created_at, e.id), reverse=newest)
        if op.after is not None:
            after = op.after
            if newest:
                rows = [e for e in rows if (e.created_at, e.id) < after]
            else:
                rows = [e for e in rows if (e.created_at, e.id) > after]
        return [_detached(e) for e in rows[: op.limit]]

    def op_count(self, op: ops.CountOp, undo: Undo) -> int:
        return len(self._select(op.filter))

    def op_replace(self, op: ops.ReplaceOp, undo: Undo) -> None:
        key = (op.tenant, op.entry.id)
        current = self._rows.get(key)
        if current is None or current.revision != op.expected_revision:
            raise ConflictError(f"entry {op.entry.id} changed or was deleted concurrently")
        self._set(key, op.entry, undo)

    def op_delete(self, op: ops.DeleteOp, undo: Undo) -> bool:
        key = (op.tenant, op.entry_id)
        current = self._rows.get(key)
        if op.expected_revision is not None and (
            current is None or current.revision != op.expected_revision
        ):
            raise ConflictError(f"entry {op.entry_id} changed or was deleted concurrently")
        if current is None:
            return False
        self._remove(key, undo)
        return True

    def _remove_where(self, keep: Callable[[Key, MemoryEntry], bool], undo: Undo) -> int:
        doomed = [key for key, entry in self._rows.items() if not keep(key, entry)]
        for key in doomed:
            self._remove(key, undo)
        return len(doomed)

    def op_delete_scope(self, op: ops.DeleteScopeOp, undo: Undo) -> int:
        return self._remove_where(lambda k, e: k[0] != op.tenant or e.scope != op.scope, undo)

    def op_purge_expired(self, op: ops.PurgeExpiredOp, undo: Undo) -> int:
        return self._remove_where(lambda k, e: k[0] != op.tenant or not e.is_expired(op.now), undo)
