"""Reading the audit log: pages of events by entry, scope, actor, operation, change and time.
The events are written by the store, in the transaction of each change
(:mod:`memvault.store.audit`); :meth:`memvault.core.Planner.events` reads every event of some
entries (what :meth:`memvault.versions.VersionPlans.history` shows); :meth:`AuditPlans.
verify_audit` checks the log against its hash chain (:mod:`memvault.store.audit_chain`)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from .. import validation as check
from ..core import Plan, Planner, run
from ..errors import ValidationError
from ..store.audit_chain import Link
from ..store.ops import AuditLinksOp, AuditOp, AuditQuery, ChainStateOp, Order
from ..types import CHANGES, AuditPage, Scope
from .audit_verify import AuditVerification, Walk

VERIFY_PAGE = 2_000
"""Events read per transaction when verifying a log (it is streamed, never read whole)."""
VERIFY_ATTEMPTS = 3
"""Verifications at most while the log's head moves during one (a write meanwhile can make
the log end past the head read before it, an erasure a gap before its checkpoint): the last
one's result stands."""


def _cursor(cursor: str | None) -> int | None:
    if cursor is None:
        return None
    digits = isinstance(cursor, str) and cursor.isascii() and cursor.isdigit()
    if not digits or len(cursor) > 19 or int(cursor) > check.LARGEST_INT:
        raise ValidationError(f"cursor must be one that an audit page returned, got {cursor!r:.40}")
    return int(cursor)


def _name(name: str, value: str | None) -> str | None:
    if value is not None and (not isinstance(value, str) or not value or len(value) > 128):
        raise ValidationError(f"{name} must be a non-empty string of at most 128 characters")
    return value


class AuditPlans:
    """The audit log as plans on the store planner."""

    def __init__(self, store: Planner) -> None:
        self.store = store

    def audit(
        self,
        *,
        entry_id: str | None = None,
        scope: Scope | str | None = None,
        actor: str | None = None,
        operation: str | None = None,
        change: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        order: Order = "newest",
        limit: int = 100,
        cursor: str | None = None,
    ) -> Plan[AuditPage]:
        """One page of the tenant's audit log — who changed which entry, how and when, never
        what it says — newest first by default; every given field must match (``since``
        inclusive, ``until`` exclusive). Follow ``next_cursor`` for the next page."""
        if change is not None and change not in CHANGES:
            raise ValidationError(f"change must be one of {', '.join(CHANGES)}, got {change!r:.40}")
        query = AuditQuery(
            self.store.tenant,
            entry_ids=None if entry_id is None else (check.entry_id(entry_id),),
            scope=None if scope is None else str(Scope.coerce(scope)),
            actor=_name("actor", actor),
            operation=_name("operation", operation),
            change=change,
            since=None if since is None else check.aware("since", since),
            until=None if until is None else check.aware("until", until),
        )
        op = AuditOp(
            query,
            check.limit(limit, self.store.settings) + 1,
            order=check.order(order),
            after=_cursor(cursor),
        )
        rows = yield from run(op)
        events = tuple(rows[: op.limit - 1])
        more = len(rows) >= op.limit
        return AuditPage(events, str(events[-1].seq) if more else None)

    def verify_audit(self) -> Plan[AuditVerification]:
        """Check the tenant's audit log against its hash chain, oldest event first, with the
        store's key (the ``audit_key`` setting it was opened with): ``intact`` (with how many
        events, and what erasures removed), or the first event that does not fit
        (``first_bad_seq``) and why — edited, removed, reordered, forged, or the newest
        removed. Not intact is a result, not an error."""
        tenant, found = self.store.tenant, None
        state = yield from run(ChainStateOp(tenant))
        for _ in range(VERIFY_ATTEMPTS):
            walk = Walk(tenant, state)
            yield from _pages(walk.learn, tenant, checkpoints=True)
            yield from _pages(walk.step, tenant, checkpoints=False)
            after = yield from run(ChainStateOp(tenant))
            found = walk.result(after)
            if found.intact or after == state:
                return found
            state = after
        assert found is not None
        return found


def _pages(take: Callable[[list[Link]], object], tenant: str, *, checkpoints: bool) -> Plan[None]:
    """Feed ``take`` the tenant's events (or its erasures'), a page a transaction; stop
    early when it returns False."""
    after = 0
    while True:
        page = yield from run(AuditLinksOp(tenant, after, VERIFY_PAGE, checkpoints=checkpoints))
        if take(page) is False or len(page) < VERIFY_PAGE:
            return
        after = page[-1].event.seq
