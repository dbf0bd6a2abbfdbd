"""Reading the audit log: pages of events by entry, scope, actor, operation, change and time.
The events are written by the store, in the transaction of each change
(:mod:`memvault.store.audit`); :meth:`memvault.core.Planner.events` reads every event of some
entries (what :meth:`memvault.versions.VersionPlans.history` shows)."""

from __future__ import annotations

from datetime import datetime

from .. import validation as check
from ..core import Plan, Planner, run
from ..errors import ValidationError
from ..store.ops import AuditOp, AuditQuery, Order
from ..types import CHANGES, AuditPage, Scope


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
