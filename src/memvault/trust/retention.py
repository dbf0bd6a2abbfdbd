"""Retention: what a tenant's policy (the ``retention`` setting) says may go, removed — records
older than N days, entries superseded more than N days ago, entries expired more than N days
ago, and sessions idle for N days with everything in them.

What is due is decided by a pure function (:func:`due`) over the tenant's entries; the plan
deletes it in one transaction, mending the supersession chains it leaves, or only lists it
(``dry_run``). Reports name ids, scopes and categories, never content.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ..config import Policy, retention_policy
from ..core import Plan, Planner, retried, run
from ..facilities.model import RECORD, SESSION, session_ids
from ..store.ops import Filter, ReachOp
from ..types import MemoryEntry, ScopeKind


@dataclass(frozen=True, slots=True)
class Due:
    """One entry retention removes, and the rule that removes it."""

    rule: str
    entry_id: str
    scope: str
    category: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "id": self.entry_id,
            "scope": self.scope,
            "category": self.category,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Due:
        return cls(data["rule"], data["id"], data["scope"], data["category"])


@dataclass(frozen=True, slots=True)
class RetentionReport:
    """What retention removed (or, with ``dry_run``, would remove), rule by rule."""

    tenant: str
    at: datetime
    dry_run: bool
    policy: Mapping[str, int] = field(default_factory=dict)
    items: tuple[Due, ...] = ()

    @property
    def counts(self) -> dict[str, int]:
        return dict(sorted(Counter(item.rule for item in self.items).items()))

    def to_dict(self) -> dict[str, Any]:
        return {
            "tenant": self.tenant,
            "at": self.at.isoformat(),
            "dry_run": self.dry_run,
            "policy": dict(self.policy),
            "counts": self.counts,
            "items": [item.to_dict() for item in self.items],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RetentionReport:
        return cls(
            data["tenant"],
            datetime.fromisoformat(data["at"]),
            bool(data["dry_run"]),
            dict(data["policy"]),
            tuple(Due.from_dict(item) for item in data["items"]),
        )


def due(entries: Iterable[MemoryEntry], policy: Policy, now: datetime) -> list[Due]:
    """What ``policy`` removes of a tenant's ``entries`` at ``now`` (pure): each entry once,
    under the first rule that takes it (idle sessions first: they take everything in them)."""
    every = list(entries)
    found: dict[str, Due] = {}

    def take(rule: str, chosen: Iterable[MemoryEntry]) -> None:
        for e in chosen:
            found.setdefault(e.id, Due(rule, e.id, str(e.scope), e.category))

    if "idle_sessions" in policy:
        take("idle_sessions", _in_idle_sessions(every, now - _days(policy["idle_sessions"])))
    if "records" in policy:
        before = now - _days(policy["records"])
        take("records", (e for e in every if e.category == RECORD and e.created_at < before))
    if "superseded" in policy:
        before = now - _days(policy["superseded"])
        take("superseded", (e for e in every if e.valid_to is not None and e.valid_to < before))
    if "expired" in policy:
        before = now - _days(policy["expired"])
        take("expired", (e for e in every if e.expires_at is not None and e.expires_at <= before))
    return list(found.values())


def _in_idle_sessions(entries: Sequence[MemoryEntry], before: datetime) -> list[MemoryEntry]:
    """Everything of the sessions whose last change (of anything in them) is before ``before``."""
    last: dict[str, datetime] = {}
    for e in entries:
        if e.scope.kind is ScopeKind.SESSION:
            last[e.scope.id] = max(last.get(e.scope.id, e.updated_at), e.updated_at)
    sessions = {e.scope.id for e in entries if e.category == SESSION}
    idle = {s for s in sessions if last[s] < before}
    return [e for e in entries if e.scope.kind is ScopeKind.SESSION and e.scope.id in idle]


def _days(days: int) -> timedelta:
    return timedelta(days=days)


class RetentionPlans:
    """Retention as plans on the store planner; the policy is the ``retention`` setting's for
    the planner's tenant."""

    def __init__(self, store: Planner) -> None:
        self.store = store

    def apply_retention(self, *, dry_run: bool = False) -> Plan[RetentionReport]:
        """Remove what the tenant's retention policy says may go (records older than N days,
        entries superseded or expired more than N days ago, sessions idle for N days with all
        in them), in one transaction; with ``dry_run``, only list it. The report names each
        item's rule, id, scope and category — never its content."""
        policy = retention_policy(self.store.settings.retention, self.store.tenant)
        return (yield from retried(lambda: self._apply(policy, dry_run), "retention"))

    def _apply(self, policy: Policy, dry_run: bool) -> Plan[RetentionReport]:
        now = self.store.now()
        items: list[Due] = []
        if not policy:  # nothing may go; still an operation on the whole tenant
            yield from run(ReachOp(self.store.tenant, None, changes=not dry_run))
        else:
            every = yield from self.store.every(Filter(self.store.tenant, None))
            items = due(every, policy, now)
            gone = {item.entry_id for item in items}
            if not dry_run:
                removed = [e for e in every if e.id in gone]
                yield from self.store.remove(removed)
                yield from self.store.forget_session_files(session_ids(removed))
        return RetentionReport(self.store.tenant, now, dry_run, policy, tuple(items))
