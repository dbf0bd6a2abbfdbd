"""The in-memory reference backend: plain Python, exact semantics, no persistence."""

from __future__ import annotations

import bisect
import copy
import itertools
import secrets
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

from ..config import Settings
from ..errors import BackendError, ConflictError
from ..retrieval.candidates import Candidates
from ..retrieval.traits import searchable
from ..types import AuditEvent, MemoryEntry
from . import ops
from .audit import DIRECT, Stamp
from .audit_chain import (
    HEAD_KEY,
    KEY_KEY,
    ChainState,
    Hasher,
    Head,
    Link,
    by_tenant,
    chained,
    check_key,
    checkpoint,
)
from .base import Backend, Capabilities
from .duplicates import fact_key, twins_among
from .residue import found_in, hashes_found_in, pending_erasures, pending_key, pending_value
from .scope_index import ChunkTable, search
from .timeconv import to_micros
from .use_log import merged

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
        entry.category not in where.hidden,
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
    fact_key: int
    use: ops.Use | None = None

    @classmethod
    def of(cls, entry: MemoryEntry, chunks: tuple[tuple[int, ops.ChunkRecord], ...]) -> _Row:
        """A stored copy of ``entry`` with its chunks and fact key."""
        return cls(_detached(entry), chunks, fact_key(entry.content))


def _surveyed(row: _Row) -> ops.Surveyed:
    e = row.entry
    first = next((chunk.vector for _, chunk in row.chunks if chunk.seq == 0), None)
    return ops.Surveyed(
        e.id,
        str(e.scope),
        e.category,
        e.content,
        e.updated_at,
        e.expires_at,
        e.valid_to is not None,
        row.fact_key,
        None if first is None else first.astype(np.float32).tobytes(),
        row.use,
    )


def _detached(entry: MemoryEntry) -> MemoryEntry:
    """A copy whose metadata the caller may mutate without touching the store."""
    return replace(entry, metadata=copy.deepcopy(dict(entry.metadata)))


class InMemoryBackend(Backend):
    """Keeps entries in a dict; every batch is atomic (undone on error) and thread-safe."""

    name: ClassVar[str] = "memory"
    capabilities = Capabilities()

    def __init__(self, settings: Settings | None = None) -> None:
        self.chain = Hasher((settings or Settings()).audit_key)
        self._rows: dict[Key, _Row] = {}
        self._chunk_owner: dict[int, Key] = {}
        self._chunk_keys = itertools.count(1)
        self._info: dict[str, Any] = {}
        self._audit: list[Link] = []
        self._audit_seq = itertools.count(1)
        self._lock = threading.RLock()

    @classmethod
    def from_url(cls, url: str, settings: Settings) -> InMemoryBackend:
        if url.rstrip("/") != "memory:":
            raise BackendError(f"the memory backend takes no location; use memory://, not {url!r}")
        return cls(settings)

    def residue(
        self, ids: Sequence[str], contents: Sequence[str], hashed: Sequence[str] = ()
    ) -> int | None:
        with self._lock:
            held = [repr((self._rows, self._info, self._audit)).encode("utf-8", "surrogatepass")]
            live = [row.entry.content for row in self._rows.values()]
        unique = [c for c in contents if not any(c in text for text in live)]
        return found_in(held, ids, unique) + hashes_found_in(held, hashed)

    def batch(self, ops: Sequence[ops.Op[Any]], stamp: Stamp = DIRECT) -> list[Any]:
        undo: Undo = []
        with self._lock:
            try:
                return self.run_batch(undo, ops, stamp)
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

    def op_put(self, undo: Undo, op: ops.PutOp) -> None:
        key = (op.tenant, op.entry.id)
        if key in self._rows:
            raise BackendError(f"an entry with id {op.entry.id} already exists")
        self._set(key, _Row.of(op.entry, self._numbered(op.chunks)), undo)

    def op_get_many(self, undo: Undo, op: ops.GetManyOp) -> list[MemoryEntry]:
        rows = (self._rows.get((op.tenant, i)) for i in op.entry_ids)
        return [_detached(row.entry) for row in rows if row is not None]

    def op_list(self, undo: Undo, op: ops.ListOp) -> list[MemoryEntry]:
        if op.order == "updated":
            latest = sorted(
                (r.entry for r in self._select(op.filter)),
                key=lambda e: (e.updated_at, e.id),
                reverse=True,
            )
            return [_detached(e) for e in latest[: op.limit]]
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
        if row.entry.scope != op.entry.scope:  # an entry never changes scope (see replace_sql)
            raise ConflictError(f"entry {op.entry.id} is not in scope {op.entry.scope}")
        chunks = row.chunks if op.chunks is None else self._numbered(op.chunks)
        self._set((op.tenant, op.entry.id), replace(_Row.of(op.entry, chunks), use=row.use), undo)

    def op_delete(self, undo: Undo, op: ops.DeleteOp) -> list[ops.Removed]:
        row = self._current(op.tenant, op.entry_id, op.expected_revision)
        if row is None:
            return []
        self._remove((op.tenant, op.entry_id), undo)
        return [ops.Removed(row.entry.id, str(row.entry.scope))]

    def _remove_where(
        self, doomed: Callable[[Key, MemoryEntry], bool], undo: Undo
    ) -> list[ops.Removed]:
        gone = [(key, row.entry) for key, row in self._rows.items() if doomed(key, row.entry)]
        for key, _ in gone:
            self._remove(key, undo)
        return [ops.Removed(entry.id, str(entry.scope)) for _, entry in gone]

    def op_delete_matching(self, undo: Undo, op: ops.DeleteMatchingOp) -> list[ops.Removed]:
        return self._remove_where(
            lambda k, e: k[0] == op.filter.tenant and matches(e, op.filter), undo
        )

    def op_trim(self, undo: Undo, op: ops.TrimOp) -> list[ops.Removed]:
        newest = sorted(
            (r.entry for r in self._select(op.filter)),
            key=lambda e: (e.created_at, e.id),
            reverse=True,
        )
        doomed = [ops.Removed(e.id, str(e.scope)) for e in reversed(newest[op.keep :])]
        for gone in doomed:
            self._remove((op.filter.tenant, gone.id), undo)
        return doomed

    def op_purge_expired(self, undo: Undo, op: ops.PurgeExpiredOp) -> list[ops.Removed]:
        return self._remove_where(lambda k, e: k[0] == op.tenant and e.is_expired(op.now), undo)

    def op_search(self, undo: Undo, op: ops.SearchOp) -> Candidates:
        return search(self._table(op.filter, 0 if op.vector is None else len(op.vector)), op)

    def op_twins(self, undo: Undo, op: ops.TwinsOp) -> list[list[str]]:
        keys = set(op.keys)
        rows = (
            (row.entry.id, row.fact_key, chunk.vector)
            for row in self._select(op.filter)
            if row.fact_key in keys
            for _, chunk in row.chunks
            if chunk.vector is not None
        )
        return twins_among(rows, op)

    def _table(self, where: ops.Filter, dimension: int) -> ChunkTable:
        """Every version of the entries a filter may see, as a chunk table."""
        rows = sorted(
            self._select(where.all_versions()), key=lambda r: (r.entry.created_at, r.entry.id)
        )
        return ChunkTable.from_rows(
            (
                (
                    key,
                    row.entry.id,
                    to_micros(row.entry.created_at),
                    None if row.entry.expires_at is None else to_micros(row.entry.expires_at),
                    to_micros(row.entry.valid_from),
                    None if row.entry.valid_to is None else to_micros(row.entry.valid_to),
                    None if chunk.vector is None else chunk.vector.astype(np.float32).tobytes(),
                    searchable(row.entry.content[chunk.start : chunk.end], row.entry.context),
                )
                for row in rows
                for key, chunk in row.chunks
            ),
            dimension,
        )

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
            self._set(owner, replace(row, chunks=chunks), undo)  # type: ignore[arg-type]

    # -- the audit log ------------------------------------------------------------------------

    def op_append_audit(self, undo: Undo, op: ops.AppendAuditOp) -> None:
        kept = len(self._audit)
        undo.append(lambda: self._set_audit(self._audit[:kept]))
        for tenant, events, checkpoints in by_tenant(op.events, op.checkpoints):
            state = self.op_chain_state(undo, ops.ChainStateOp(tenant))
            check_key(self.chain, state.key)
            numbered = [replace(event, seq=next(self._audit_seq)) for event in events]
            links = chained(self.chain, tenant, state.head, numbered, checkpoints)
            self._audit.extend(links)
            self._set_info(HEAD_KEY + tenant, Head(links[-1].event.seq, str(links[-1].hash)), undo)
            if state.key is None:
                self._set_info(KEY_KEY, self.chain.fingerprint, undo)

    def _set_audit(self, links: list[Link]) -> None:
        self._audit = links

    def op_audit(self, undo: Undo, op: ops.AuditOp) -> list[AuditEvent]:
        found = [link.event for link in self._audit if audit_matches(link.event, op.query)]
        if op.order == "newest":
            found.reverse()
        if op.after is not None:
            after = op.after
            newer = op.order == "oldest"
            found = [e for e in found if (e.seq > after if newer else e.seq < after)]
        return found[: op.limit]

    def op_audit_links(self, undo: Undo, op: ops.AuditLinksOp) -> list[Link]:
        found = [
            self.chain.checked(link)
            for link in self._audit
            if link.event.tenant == op.tenant
            and link.event.seq > op.after
            and (link.checkpoint is not None or not op.checkpoints)
        ]
        return found[: op.limit]

    def op_chain_state(self, undo: Undo, op: ops.ChainStateOp) -> ChainState:
        return self.chain.state(
            op.tenant, self._info.get(HEAD_KEY + op.tenant), self._info.get(KEY_KEY)
        )

    # -- erasure: copies of content, pending purges -------------------------------------------

    def forgetting_mark(self, undo: Undo) -> str:
        return str(self._info.get("forgetting", ""))

    def op_forget_copies(self, undo: Undo, op: ops.ForgetCopiesOp) -> None:
        self._set_info("forgetting", secrets.token_hex(8), undo)

    def op_pending_erasures(
        self, undo: Undo, op: ops.PendingErasuresOp
    ) -> list[ops.PendingErasure]:
        prefix = pending_key(op.tenant, "")
        return pending_erasures(v for k, v in self._info.items() if k.startswith(prefix))

    def op_uses(self, undo: Undo, op: ops.UsesOp) -> dict[str, ops.Use]:
        rows = (self._rows.get((op.tenant, i)) for i in op.entry_ids)
        return {row.entry.id: row.use for row in rows if row is not None and row.use is not None}

    def op_survey(self, undo: Undo, op: ops.SurveyOp) -> list[ops.Surveyed]:
        return [_surveyed(row) for row in self._select(op.filter.all_versions())]

    def op_record_uses(self, undo: Undo, op: ops.RecordUsesOp) -> None:
        for use in op.uses:
            row = self._rows.get((op.tenant, use.entry_id))
            if row is not None:
                self._set((op.tenant, use.entry_id), replace(row, use=merged(row.use, use)), undo)

    def op_pend_erasure(self, undo: Undo, op: ops.PendErasureOp) -> None:
        value = None if op.done else pending_value(op.pending)
        self._set_info(pending_key(op.tenant, op.pending.ids_sha256), value, undo)

    def _set_info(self, key: str, value: Any, undo: Undo) -> None:
        """Set (None: delete) a key of the store's info, undone with the transaction."""
        previous = self._info.pop(key, None)
        if value is not None:
            self._info[key] = value
        undo.append(lambda: self._restore_info(key, previous))

    def _restore_info(self, key: str, value: Any) -> None:
        self._info.pop(key, None)
        if value is not None:
            self._info[key] = value

    def op_forget_audit(self, undo: Undo, op: ops.ForgetAuditOp) -> ops.Forgotten:
        before = self._audit
        self._audit = [link for link in before if not forgotten(link.event, op)]
        undo.append(lambda: self._set_audit(before))
        gone = [link.event.seq for link in before if forgotten(link.event, op)]
        mine = [link for link in self._audit if link.event.tenant == op.tenant]
        seqs = [link.event.seq for link in mine]

        def earlier(seq: int) -> str | None:
            at = bisect.bisect_left(seqs, seq)
            return mine[at - 1].hash if at else None

        def later(seq: int) -> tuple[int, str | None] | None:
            at = bisect.bisect_right(seqs, seq)
            return (seqs[at], mine[at].prev) if at < len(mine) else None

        state = self.op_chain_state(undo, ops.ChainStateOp(op.tenant))
        made = checkpoint(gone, earlier, later, state.head, state.genesis)
        return ops.Forgotten(len(gone), made.to_text())


def audit_matches(event: AuditEvent, query: ops.AuditQuery) -> bool:
    """Whether ``event`` is one ``query`` asks for."""
    return (
        event.tenant == query.tenant
        and (query.entry_ids is None or event.entry_id in query.entry_ids)
        and (query.scope is None or event.scope == query.scope)
        and (query.actor is None or event.actor == query.actor)
        and (query.operation is None or event.operation == query.operation)
        and (query.change is None or event.change == query.change)
        and (query.since is None or event.at >= query.since)
        and (query.until is None or event.at < query.until)
    )


def forgotten(event: AuditEvent, op: ops.ForgetAuditOp) -> bool:
    """Whether an erasure ``op`` deletes ``event``."""
    return event.tenant == op.tenant and (
        op.everything or event.entry_id in op.ids or event.scope in op.scopes
    )
