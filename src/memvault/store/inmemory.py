"""The in-memory reference backend: plain Python, exact semantics, no persistence."""

from __future__ import annotations

import copy
import itertools
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

from ..config import Settings
from ..errors import BackendError, ConflictError
from ..retrieval.candidates import Candidates
from ..retrieval.lexical import bm25
from ..retrieval.text import words
from ..types import MemoryEntry
from . import ops
from .base import Backend, Capabilities
from .duplicates import stored_duplicate
from .residue import found_in
from .timeconv import to_micros
from .vector_cache import ChunkTable, Visibility, exact_cosine, score_table

Key = tuple[str, str]
Undo = list[Callable[[], None]]


def _json_equal(value: Any, wanted: Any) -> bool:
    """JSON scalar equality: true is not 1, "1" is not 1, 1 is 1.0."""
    if isinstance(value, bool) or isinstance(wanted, bool) or value is None or wanted is None:
        return value is wanted
    if isinstance(value, str) or isinstance(wanted, str):
        return isinstance(value, str) and isinstance(wanted, str) and value == wanted
    return bool(value == wanted)


def matches(entry: MemoryEntry, where: ops.Filter) -> bool:
    """Whether ``entry`` (already known to be in ``where.tenant``) passes the filter."""
    checks = (
        where.scopes is None or entry.scope in where.scopes,
        not where.tags or set(where.tags).issubset(entry.tags),
        where.since is None or entry.created_at >= where.since,
        where.until is None or entry.created_at < where.until,
        not where.categories or entry.category in where.categories,
        not where.scope_kinds or entry.scope.kind in where.scope_kinds,
        where.live_at is None or not entry.is_expired(where.live_at),
        where.superseded == "show" or entry.superseded is (where.superseded == "only"),
        where.valid_at is None or entry.valid_at(where.valid_at),
    )
    return (
        all(checks)
        and all(_has(entry.metadata, key, value) for key, value in where.metadata)
        and (
            not where.provenance
            or all(_has(entry.provenance.to_dict(), key, value) for key, value in where.provenance)
        )
    )


def _has(document: Mapping[str, Any], key: str, value: Any) -> bool:
    return key in document and _json_equal(document[key], value)


@dataclass(frozen=True, slots=True)
class _Row:
    entry: MemoryEntry
    chunks: tuple[tuple[int, ops.ChunkRecord], ...]


def _detached(entry: MemoryEntry) -> MemoryEntry:
    """A copy whose metadata the caller may mutate without touching the store."""
    return replace(entry, metadata=copy.deepcopy(dict(entry.metadata)))


class InMemoryBackend(Backend):
    """Keeps entries in a dict; every batch is atomic (undone on error) and thread-safe."""

    name: ClassVar[str] = "memory"
    capabilities = Capabilities()

    def __init__(self) -> None:
        self._rows: dict[Key, _Row] = {}
        self._chunk_owner: dict[int, Key] = {}
        self._chunk_keys = itertools.count(1)
        self._info: dict[str, Any] = {}
        self._lock = threading.RLock()

    @classmethod
    def from_url(cls, url: str, settings: Settings) -> InMemoryBackend:
        if url.rstrip("/") != "memory:":
            raise BackendError(f"the memory backend takes no location; use memory://, not {url!r}")
        return cls()

    def residue(self, ids: Sequence[str], contents: Sequence[str]) -> int | None:
        with self._lock:
            held = repr((self._rows, self._info))
            live = [row.entry.content for row in self._rows.values()]
        unique = [c for c in contents if not any(c in text for text in live)]
        return found_in([held.encode("utf-8", "surrogatepass")], ids, unique)

    def batch(self, ops: Sequence[ops.Op[Any]]) -> list[Any]:
        undo: Undo = []
        with self._lock:
            try:
                return [self.execute(undo, op) for op in ops]
            except BaseException:
                for step in reversed(undo):
                    step()
                raise

    def _set(self, key: Key, row: _Row, undo: Undo) -> None:
        previous = self._rows.get(key)
        self._rows[key] = row
        for chunk_key, _ in row.chunks:
            self._chunk_owner[chunk_key] = key
        undo.append(lambda: self._restore(key, previous))

    def _remove(self, key: Key, undo: Undo) -> None:
        previous = self._rows.pop(key)
        undo.append(lambda: self._restore(key, previous))

    def _restore(self, key: Key, row: _Row | None) -> None:
        if row is None:
            self._rows.pop(key, None)
        else:
            self._rows[key] = row

    def _numbered(
        self, chunks: Sequence[ops.ChunkRecord]
    ) -> tuple[tuple[int, ops.ChunkRecord], ...]:
        return tuple((next(self._chunk_keys), chunk) for chunk in chunks)

    def _select(self, where: ops.Filter) -> list[_Row]:
        return [
            row
            for (tenant, _), row in self._rows.items()
            if tenant == where.tenant and matches(row.entry, where)
        ]

    def op_put(self, undo: Undo, op: ops.PutOp) -> str | None:
        duplicate = stored_duplicate(self, undo, op)
        if duplicate is not None:
            return duplicate
        key = (op.tenant, op.entry.id)
        if key in self._rows:
            raise BackendError(f"an entry with id {op.entry.id} already exists")
        self._set(key, _Row(_detached(op.entry), self._numbered(op.chunks)), undo)
        return None

    def op_get(self, undo: Undo, op: ops.GetOp) -> MemoryEntry | None:
        row = self._rows.get((op.tenant, op.entry_id))
        return None if row is None else _detached(row.entry)

    def op_list(self, undo: Undo, op: ops.ListOp) -> list[MemoryEntry]:
        newest = op.order == "newest"
        rows = sorted(
            (r.entry for r in self._select(op.filter)),
            key=lambda e: (e.created_at, e.id),
            reverse=newest,
        )
        if op.after is not None:
            after = op.after
            if newest:
                rows = [e for e in rows if (e.created_at, e.id) < after]
            else:
                rows = [e for e in rows if (e.created_at, e.id) > after]
        return [_detached(e) for e in rows[: op.limit]]

    def op_count(self, undo: Undo, op: ops.CountOp) -> int:
        return len(self._select(op.filter))

    def _current(self, tenant: str, entry_id: str, revision: int | None) -> _Row | None:
        row = self._rows.get((tenant, entry_id))
        if revision is not None and (row is None or row.entry.revision != revision):
            raise ConflictError(f"entry {entry_id} changed or was deleted concurrently")
        return row

    def op_replace(self, undo: Undo, op: ops.ReplaceOp) -> None:
        row = self._current(op.tenant, op.entry.id, op.expected_revision)
        assert row is not None
        chunks = row.chunks if op.chunks is None else self._numbered(op.chunks)
        self._set((op.tenant, op.entry.id), _Row(_detached(op.entry), chunks), undo)

    def op_delete(self, undo: Undo, op: ops.DeleteOp) -> bool:
        if self._current(op.tenant, op.entry_id, op.expected_revision) is None:
            return False
        self._remove((op.tenant, op.entry_id), undo)
        return True

    def _remove_where(self, doomed: Callable[[Key, MemoryEntry], bool], undo: Undo) -> int:
        keys = [key for key, row in self._rows.items() if doomed(key, row.entry)]
        for key in keys:
            self._remove(key, undo)
        return len(keys)

    def op_delete_scope(self, undo: Undo, op: ops.DeleteScopeOp) -> int:
        return self._remove_where(lambda k, e: k[0] == op.tenant and e.scope == op.scope, undo)

    def op_delete_matching(self, undo: Undo, op: ops.DeleteMatchingOp) -> int:
        return self._remove_where(
            lambda k, e: k[0] == op.filter.tenant and matches(e, op.filter), undo
        )

    def op_trim(self, undo: Undo, op: ops.TrimOp) -> list[str]:
        newest = sorted(
            (r.entry for r in self._select(op.filter)),
            key=lambda e: (e.created_at, e.id),
            reverse=True,
        )
        doomed = [e.id for e in reversed(newest[op.keep :])]
        for entry_id in doomed:
            self._remove((op.filter.tenant, entry_id), undo)
        return doomed

    def op_purge_expired(self, undo: Undo, op: ops.PurgeExpiredOp) -> int:
        return self._remove_where(lambda k, e: k[0] == op.tenant and e.is_expired(op.now), undo)

    def op_search(self, undo: Undo, op: ops.SearchOp) -> Candidates:
        where = op.filter.all_versions()
        rows = sorted(self._select(where), key=lambda r: (r.entry.created_at, r.entry.id))
        dimension = 0 if op.vector is None else len(op.vector)
        table = ChunkTable.from_rows(
            (
                (
                    key,
                    row.entry.id,
                    to_micros(row.entry.created_at),
                    None if row.entry.expires_at is None else to_micros(row.entry.expires_at),
                    to_micros(row.entry.valid_from),
                    None if row.entry.valid_to is None else to_micros(row.entry.valid_to),
                    None if chunk.vector is None else chunk.vector.astype(np.float32).tobytes(),
                )
                for row in rows
                for key, chunk in row.chunks
            ),
            dimension,
        )
        documents = [
            words(row.entry.content[chunk.start : chunk.end] + " " + (row.entry.context or ""))
            for row in rows
            for _, chunk in row.chunks
        ]
        lexical = bm25(documents, op.terms)
        dense = None if op.vector is None else exact_cosine(table, op.vector)
        return score_table(table, lexical, dense, Visibility.of(op.filter), op.with_vectors)

    def op_stored_embedding(self, undo: Undo, op: ops.StoredEmbeddingOp) -> tuple[str, int] | None:
        return (self._info["model"], self._info["dimension"]) if "model" in self._info else None

    def op_embedding_info(self, undo: Undo, op: ops.EmbeddingInfoOp) -> tuple[str, int]:
        if "model" not in self._info or op.replace:
            self._info.update(model=op.name, dimension=op.dimension)
        return self._info["model"], self._info["dimension"]

    def op_chunk_page(self, undo: Undo, op: ops.ChunkPageOp) -> list[ops.ChunkText]:
        found = []
        for key in sorted(k for k in self._chunk_owner if k > op.after):
            row = self._rows.get(self._chunk_owner[key])
            chunk = dict(row.chunks).get(key) if row else None
            if row is not None and chunk is not None:
                text = row.entry.content[chunk.start : chunk.end]
                found.append(ops.ChunkText(key, text, row.entry.context))
            if len(found) == op.limit:
                break
        return found

    def op_set_vectors(self, undo: Undo, op: ops.SetVectorsOp) -> None:
        for key, vector in zip(op.keys, op.vectors, strict=True):
            owner = self._chunk_owner.get(key)
            row = self._rows.get(owner) if owner else None
            if row is None:
                continue
            chunks = tuple((k, replace(c, vector=vector) if k == key else c) for k, c in row.chunks)
            self._set(owner, _Row(row.entry, chunks), undo)  # type: ignore[arg-type]
