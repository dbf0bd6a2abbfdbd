"""The store's logic, free of I/O: every operation is a *plan*.

A plan is a generator that yields steps and returns the operation's result. A step is either a
tuple of ops (one transaction, answered with the list of their results) or an :class:`Invoke` of
a caller's callback (answered with its return value). Errors are thrown back into the plan at
the ``yield``. The drivers in :mod:`memvault.memory` run the same plans synchronously or with
``await``, so the logic exists exactly once.
"""

from __future__ import annotations

import base64
import builtins
import json
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, TypeVar

from . import validation as check
from .config import Settings
from .errors import CompactionError, ConflictError, NotFoundError, ValidationError
from .ids import new_id
from .scopes import check_promotion, expand_scopes
from .store.ops import (
    CountOp,
    DeleteOp,
    DeleteScopeOp,
    Filter,
    GetOp,
    ListOp,
    Op,
    PurgeExpiredOp,
    PutOp,
    ReplaceOp,
)
from .types import MemoryEntry, NewEntry, Page, Provenance, Scope, ScopeKind

T = TypeVar("T")
Order = Literal["newest", "oldest"]
CompactionCallback = Callable[[Sequence[MemoryEntry]], Any]
"""Receives the source entries; returns the compacted content (a str, or an awaitable of one)."""

UPDATE_ATTEMPTS = 5


@dataclass(frozen=True, slots=True)
class Invoke:
    """A step that calls a caller-supplied function; the driver awaits it if needed."""

    fn: Callable[..., Any]
    args: tuple[Any, ...]


Step = tuple[Op, ...] | Invoke
Plan = Generator[Step, Any, T]


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()
"""Marks an update field as "leave unchanged" (None is a value: it clears ``expires_at``)."""


def utc_now() -> datetime:
    return datetime.now(UTC)


def merge_provenance(entries: Sequence[MemoryEntry]) -> Provenance:
    """Provenance of a compacted entry: each field the sources agree on is kept.

    Confidence keeps the lowest source value; ``tool_originated`` is true if any source was.
    Fields the sources disagree on stay reachable through ``compacted_from_ids``.
    """

    def agreed(name: str) -> Any:
        values = {getattr(e.provenance, name) for e in entries}
        return values.pop() if len(values) == 1 else None

    confidences = [e.provenance.confidence for e in entries if e.provenance.confidence is not None]
    return Provenance(
        source=agreed("source"),
        agent_id=agreed("agent_id"),
        confidence=min(confidences) if confidences else None,
        created_in_session_id=agreed("created_in_session_id"),
        source_turn_index=agreed("source_turn_index"),
        tool_originated=any(e.provenance.tool_originated for e in entries),
    )


def encode_cursor(entry: MemoryEntry, order: str) -> str:
    raw = json.dumps([entry.created_at.isoformat(), entry.id, order]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, order: str) -> tuple[datetime, str]:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        created, entry_id, cursor_order = json.loads(base64.urlsafe_b64decode(padded))
        when = check.aware("cursor", datetime.fromisoformat(created))
    except (ValueError, TypeError) as exc:
        raise ValidationError(f"invalid cursor {cursor!r}: pass back a next_cursor") from exc
    if cursor_order != order:
        raise ValidationError(f"this cursor belongs to order={cursor_order!r}, not {order!r}")
    return when, str(entry_id)


class Planner:
    """Builds the plans of one tenant's store operations."""

    def __init__(self, tenant: str, settings: Settings, clock: Callable[[], datetime]) -> None:
        self.tenant = tenant
        self.settings = settings
        self._clock = clock

    def now(self) -> datetime:
        return check.aware("the clock's time", self._clock())

    # -- building entries -------------------------------------------------------------------

    def _new_entry(
        self,
        request: NewEntry,
        now: datetime,
        ttl: timedelta | float | None = None,
    ) -> MemoryEntry:
        scope = Scope.coerce(request.scope)
        provenance = Provenance.coerce(request.provenance)
        if scope.kind is ScopeKind.SESSION and provenance.created_in_session_id is None:
            provenance = replace(provenance, created_in_session_id=scope.id)
        return MemoryEntry(
            id=new_id(now),
            scope=scope,
            content=check.content(request.content, self.settings),
            tags=check.tags(request.tags, self.settings),
            category=check.category(request.category),
            created_at=now,
            updated_at=now,
            expires_at=check.expiry(request.expires_at, ttl, now),
            metadata=check.metadata(request.metadata, self.settings),
            provenance=provenance,
        )

    def _filter(
        self,
        scopes: tuple[Scope, ...] | None,
        tags: Iterable[str] | None,
        since: datetime | None,
        now: datetime | None,
    ) -> Filter:
        return Filter(
            tenant=self.tenant,
            scopes=scopes,
            tags=check.tags(tags, self.settings),
            since=None if since is None else check.aware("since", since),
            live_at=now,
        )

    def _live(self, entry_id: str) -> Plan[MemoryEntry]:
        """Fetch an unexpired entry or raise NotFoundError."""
        found = yield from self.get(entry_id)
        if found is None:
            raise NotFoundError(entry_id)
        return found

    # -- operations -------------------------------------------------------------------------

    def write(
        self,
        content: str,
        *,
        scope: Scope | str,
        tags: Iterable[str] | None = None,
        category: str | None = None,
        expires_at: datetime | None = None,
        ttl: timedelta | float | None = None,
        metadata: Mapping[str, Any] | None = None,
        provenance: Provenance | Mapping[str, Any] | None = None,
    ) -> Plan[MemoryEntry]:
        """Store one entry in ``scope`` and return it with its id and timestamps.

        ``ttl`` (seconds or a timedelta) is a shorthand for ``expires_at``. A session-scoped entry
        records its session as ``provenance.created_in_session_id`` unless one is given.
        """
        request = NewEntry(content, scope, tags, category, expires_at, metadata, provenance)
        entry = self._new_entry(request, self.now(), ttl)
        yield (PutOp(self.tenant, entry),)
        return entry

    def write_many(self, items: Iterable[NewEntry | Mapping[str, Any]]) -> Plan[list[MemoryEntry]]:
        """Store several entries in one transaction: all are written, or none (on any error).

        Items are :class:`NewEntry` values or mappings with the same keys.
        """
        now = self.now()
        entries = []
        for index, item in enumerate(items):
            try:
                request = item if isinstance(item, NewEntry) else NewEntry(**item)
                entries.append(self._new_entry(request, now))
            except (ValidationError, TypeError) as exc:
                raise ValidationError(f"item {index}: {exc}") from exc
        if entries:
            yield tuple(PutOp(self.tenant, entry) for entry in entries)
        return entries

    def retrieve(
        self,
        scope: Scope | str,
        *,
        tags: Iterable[str] | None = None,
        since: datetime | None = None,
        limit: int = 20,
        order: Order = "newest",
        include_narrower: bool = False,
        session_id: str | None = None,
    ) -> Plan[builtins.list[MemoryEntry]]:
        """Unexpired entries of ``scope`` that carry ALL ``tags``, newest first by default.

        ``include_narrower=True`` on a user scope also returns the entries of the one session
        named by ``session_id`` (never discovered implicitly).
        """
        scopes = expand_scopes(
            Scope.coerce(scope), include_narrower=include_narrower, session_id=session_id
        )
        op = ListOp(
            self._filter(scopes, tags, since, self.now()),
            check.limit(limit, self.settings),
            check.order(order),  # type: ignore[arg-type]
        )
        (found,) = yield (op,)
        return found  # type: ignore[no-any-return]

    def get(self, entry_id: str) -> Plan[MemoryEntry | None]:
        """The entry with this id, or None if it does not exist or has expired."""
        (found,) = yield (GetOp(self.tenant, check.entry_id(entry_id)),)
        if found is None or found.is_expired(self.now()):
            return None
        return found  # type: ignore[no-any-return]

    def update(
        self,
        entry_id: str,
        *,
        content: str = UNSET,
        tags: Iterable[str] = UNSET,
        expires_at: datetime | None = UNSET,
        metadata: Mapping[str, Any] = UNSET,
    ) -> Plan[MemoryEntry]:
        """Change content, tags, expiry (None clears it) or metadata (replaced whole).

        Scope, provenance and ``promoted_from_id`` never change. Concurrent updates are
        serialised by revision: a lost race is retried on the fresh entry.
        """
        for _ in range(UPDATE_ATTEMPTS):
            current = yield from self._live(entry_id)
            now = self.now()
            changes: dict[str, Any] = {"updated_at": now, "revision": current.revision + 1}
            if content is not UNSET:
                changes["content"] = check.content(content, self.settings)
            if tags is not UNSET:
                changes["tags"] = check.tags(tags, self.settings)
            if expires_at is not UNSET:
                changes["expires_at"] = check.expiry(expires_at, None, now)
            if metadata is not UNSET:
                changes["metadata"] = check.metadata(metadata, self.settings)
            updated = replace(current, **changes)
            try:
                yield (ReplaceOp(self.tenant, updated, current.revision),)
            except ConflictError:
                continue
            return updated
        raise ConflictError(
            f"entry {entry_id} kept changing; gave up after {UPDATE_ATTEMPTS} tries"
        )

    def delete(self, entry_id: str) -> Plan[bool]:
        """Delete an entry; True if it existed. Deleting a missing entry is not an error."""
        (deleted,) = yield (DeleteOp(self.tenant, check.entry_id(entry_id)),)
        return bool(deleted)

    def delete_by_scope(self, scope: Scope | str) -> Plan[int]:
        """Delete every entry of exactly this scope (no other scope, no other tenant)."""
        (count,) = yield (DeleteScopeOp(self.tenant, Scope.coerce(scope)),)
        return int(count)

    def promote(
        self,
        entry_id: str,
        to: Scope | str,
        *,
        delete_original: bool = False,
        content: str | None = None,
        tags: Iterable[str] | None = None,
    ) -> Plan[MemoryEntry]:
        """Copy an entry into a broader scope (narrow → broad only) with ``promoted_from_id``.

        Content and tags may be overridden; category, expiry, metadata and provenance carry over.
        With ``delete_original`` the source is removed in the same transaction.
        """
        target = Scope.coerce(to)
        source = yield from self._live(entry_id)
        check_promotion(source.scope, target)
        now = self.now()
        promoted = replace(
            source,
            id=new_id(now),
            scope=target,
            content=source.content if content is None else check.content(content, self.settings),
            tags=source.tags if tags is None else check.tags(tags, self.settings),
            created_at=now,
            updated_at=now,
            promoted_from_id=source.id,
            revision=1,
        )
        ops: list[Op] = [PutOp(self.tenant, promoted)]
        if delete_original:
            ops.append(DeleteOp(self.tenant, source.id, expected_revision=source.revision))
        yield tuple(ops)
        return promoted

    def compact(
        self,
        entry_ids: Sequence[str],
        callback: CompactionCallback,
        *,
        scope: Scope | str | None = None,
        delete_sources: bool = False,
        tags: Iterable[str] | None = None,
        category: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Plan[MemoryEntry]:
        """Merge entries of one scope into a new one whose content ``callback(entries)`` returns.

        All sources must live in ``scope`` (default: their common scope). Tags default to the
        union of the sources' tags. If the callback fails, a CompactionError is raised and nothing
        changes; with ``delete_sources`` the sources go in the same transaction as the write.
        """
        ids = [check.entry_id(i) for i in entry_ids]
        if not ids or len(set(ids)) != len(ids):
            raise ValidationError("compact needs a non-empty list of distinct entry ids")
        found = yield tuple(GetOp(self.tenant, i) for i in ids)
        now = self.now()
        sources: builtins.list[MemoryEntry] = []
        for entry_id, entry in zip(ids, found, strict=True):
            if entry is None or entry.is_expired(now):
                raise NotFoundError(entry_id)
            sources.append(entry)
        target = sources[0].scope if scope is None else Scope.coerce(scope)
        strays = [e.id for e in sources if e.scope != target]
        if strays:
            raise ValidationError(
                f"all compacted entries must be in the target scope {target}; "
                f"not: {', '.join(strays)}"
            )
        text = yield from self._compacted_text(ids, callback, sources)
        merged = {tag: None for e in sources for tag in e.tags}
        request = NewEntry(
            text,
            target,
            tuple(merged) if tags is None else tags,
            category,
            None,
            metadata,
            merge_provenance(sources),
        )
        entry = replace(self._new_entry(request, now), compacted_from_ids=tuple(ids))
        ops: list[Op] = [PutOp(self.tenant, entry)]
        if delete_sources:
            ops += [DeleteOp(self.tenant, e.id, expected_revision=e.revision) for e in sources]
        yield tuple(ops)
        return entry

    def _compacted_text(
        self, ids: Sequence[str], callback: CompactionCallback, sources: Sequence[MemoryEntry]
    ) -> Plan[str]:
        try:
            text = yield Invoke(callback, (tuple(sources),))
        except Exception as exc:
            raise CompactionError(ids, f"the callback raised {type(exc).__name__}: {exc}") from exc
        try:
            return check.content(text, self.settings)
        except ValidationError as exc:
            raise CompactionError(ids, f"the callback's result is unusable: {exc}") from exc

    def count(
        self,
        scope: Scope | str | None = None,
        *,
        tags: Iterable[str] | None = None,
        since: datetime | None = None,
        include_narrower: bool = False,
        session_id: str | None = None,
    ) -> Plan[int]:
        """How many unexpired entries match (in every scope of the tenant if ``scope`` is None)."""
        scopes = None
        if scope is not None:
            scopes = expand_scopes(
                Scope.coerce(scope), include_narrower=include_narrower, session_id=session_id
            )
        (count,) = yield (CountOp(self._filter(scopes, tags, since, self.now())),)
        return int(count)

    def purge_expired(self) -> Plan[int]:
        """Really delete this tenant's expired entries (retrieval already hides them)."""
        (count,) = yield (PurgeExpiredOp(self.tenant, self.now()),)
        return int(count)

    def list(
        self,
        scope: Scope | str | None = None,
        *,
        tags: Iterable[str] | None = None,
        since: datetime | None = None,
        order: Order = "newest",
        limit: int = 100,
        cursor: str | None = None,
        include_expired: bool = False,
    ) -> Plan[Page]:
        """One page of entries (of ``scope``, or of every scope); follow ``next_cursor``."""
        order = check.order(order)  # type: ignore[assignment]
        scopes = None if scope is None else (Scope.coerce(scope),)
        op = ListOp(
            self._filter(scopes, tags, since, None if include_expired else self.now()),
            check.limit(limit, self.settings) + 1,
            order,
            None if cursor is None else decode_cursor(cursor, order),
        )
        (rows,) = yield (op,)
        entries = tuple(rows[: op.limit - 1])
        more = len(rows) >= op.limit
        return Page(entries, encode_cursor(entries[-1], order) if more else None)
