"""The audit log: its events, and the events a transaction appends (pure).

Every transaction that changes memory appends, in the same transaction, one event per entry it
created, changed or deleted: when, who (the *actor*: an API key's name, an agent, ``local``),
which operation of the API (``write``, ``pin``, ``erase``…), what happened to the entry, and
the entry's id and scope — never its content. A backend derives the events from the ops it ran
and their results (:func:`events`) under the :class:`Stamp` of the operation that ran them, so
no write can skip the log. Events are never updated; only an erasure deletes them (those of
what it erased), leaving one event that says an erasure happened, with the checkpoint that
bridges the gaps it left in the hash chain (:mod:`memvault.store.audit_chain`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ..types import AuditEvent, Change
from . import ops
from .grants import EVERYTHING, Grant


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class Stamp:
    """Who runs which operation: what every event of its transactions says, and what the
    caller may reach (:class:`~memvault.store.grants.Grant`, checked for every op)."""

    operation: str
    actor: str
    clock: Callable[[], datetime] = _utc_now
    grant: Grant = EVERYTHING
    changes: bool = True
    """Whether the operation changes memory (a read of a scope the caller may only write is
    then allowed: a write finds what it restates)."""


DIRECT = Stamp("direct", "backend")
"""The stamp of ops run on a backend without one (tools and tests driving it by hand)."""


def events(stamp: Stamp, batch: Sequence[ops.Op[Any]], results: Sequence[Any]) -> list[AuditEvent]:
    """The events a transaction that ran ``batch`` (with these ``results``) appends: one per
    entry created, changed or deleted, and one per :class:`~memvault.store.ops.ForgetAuditOp`
    (an erasure); none for an entry the same transaction erased."""
    return [event for event, _ in logged(stamp, batch, results)]


def logged(
    stamp: Stamp, batch: Sequence[ops.Op[Any]], results: Sequence[Any]
) -> list[tuple[AuditEvent, str | None]]:
    """:func:`events`, each with its checkpoint (an erasure's, as text; else None)."""
    at = stamp.clock()
    erased = {i for op in batch if isinstance(op, ops.ForgetAuditOp) for i in op.ids}
    return [
        (AuditEvent(tenant, at, stamp.actor, stamp.operation, change, entry_id, scope, note), cp)
        for op, result in zip(batch, results, strict=True)
        for tenant, change, entry_id, scope, note, cp in _changes(op, result)
        if entry_id is None or entry_id not in erased
    ]


Fact = tuple[str, Change, str | None, str | None, str | None, str | None]


def _changes(op: ops.Op[Any], result: Any) -> Iterator[Fact]:
    """(tenant, change, entry id, scope, note, checkpoint) of what ``op`` did, given its
    ``result``."""
    match op:
        case ops.PutOp(tenant=tenant, entry=entry) if result is None:
            yield tenant, "created", entry.id, str(entry.scope), None, None
        case ops.ReplaceOp(tenant=tenant, entry=entry):
            yield tenant, "changed", entry.id, str(entry.scope), None, None
        case ops.FoldOp(tenant=tenant):
            change: Change = "created" if result.created else "changed"
            yield tenant, change, result.entry.id, str(result.entry.scope), None, None
        case ops.DeleteOp(tenant=tenant) | ops.DeleteScopeOp(tenant=tenant):
            yield from ((tenant, "deleted", r.id, r.scope, None, None) for r in result)
        case ops.PurgeExpiredOp(tenant=tenant):
            yield from ((tenant, "deleted", r.id, r.scope, None, None) for r in result)
        case ops.DeleteMatchingOp(filter=where) | ops.TrimOp(filter=where):
            yield from ((where.tenant, "deleted", r.id, r.scope, None, None) for r in result)
        case ops.ForgetAuditOp(tenant=tenant, note=note):
            yield tenant, "erased", None, None, note, result.checkpoint
        case ops.AppendAuditOp() | ops.RecordUsesOp():  # a use is not a change of memory
            return
