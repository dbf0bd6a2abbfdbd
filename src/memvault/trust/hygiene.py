"""The hygiene report (:meth:`HygienePlans.hygiene`): what a tenant's memory holds that it
would be better without — near-duplicates, junk, stale entries, secrets written directly,
superseded and expired entries — scope by scope, and its largest entries; and the safe part of
tidying it (:meth:`HygienePlans.tidy`): expired entries purged, the retention policy applied.

The report reads every entry of the tenant (or of one scope) once, in one statement
(:class:`~memvault.store.ops.SurveyOp`: only what the classes need); the classes are pure
(:mod:`memvault.trust.hygiene_rules`). It changes nothing: near-duplicates and secrets are
reported, never merged or redacted. It names ids and sizes, never content nor what a rule
matched.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import groupby
from typing import Any

from ..core import Plan, Planner, call, run
from ..errors import ValidationError
from ..security.redact import Redactor
from ..store.ops import Filter, PurgeExpiredOp, SurveyOp
from ..types import Scope
from .hygiene_rules import IDS_SHOWN, JUNK_FLOOR, HygieneReport, survey
from .retention import RetentionPlans, RetentionReport

MAX_STALE_DAYS = 36_500


@dataclass(frozen=True, slots=True)
class TidyReport:
    """What :meth:`HygienePlans.tidy` removed: expired entries (``expired``, the first
    :data:`~memvault.trust.hygiene_rules.IDS_SHOWN` of their ids in ``expired_ids``) and what
    the retention policy took (``retention``)."""

    tenant: str
    at: datetime
    expired: int = 0
    expired_ids: tuple[str, ...] = ()
    retention: RetentionReport | None = None

    @property
    def removed(self) -> int:
        return self.expired + (0 if self.retention is None else len(self.retention.items))

    def to_dict(self) -> dict[str, Any]:
        return {
            "tenant": self.tenant,
            "at": self.at.isoformat(),
            "expired": self.expired,
            "expired_ids": list(self.expired_ids),
            "retention": None if self.retention is None else self.retention.to_dict(),
            "removed": self.removed,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TidyReport:
        retention = data["retention"]
        return cls(
            data["tenant"],
            datetime.fromisoformat(data["at"]),
            int(data["expired"]),
            tuple(data["expired_ids"]),
            None if retention is None else RetentionReport.from_dict(retention),
        )


def _stale_days(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_STALE_DAYS:
        raise ValidationError(
            f"stale_days must be a whole number of days from 1 to {MAX_STALE_DAYS}, "
            f"got {value!r:.40}"
        )
    return value


class HygienePlans:
    """The hygiene report and its safe fix, as plans on the store planner."""

    def __init__(self, store: Planner, retention: RetentionPlans) -> None:
        self.store = store
        self.retention = retention

    def hygiene(
        self, scope: Scope | str | None = None, *, stale_days: int = 90
    ) -> Plan[HygieneReport]:
        """What the tenant's memory (or one scope's) holds that it would be better without,
        scope by scope: entries; restatements merged so far; near-duplicates (the same fact
        in other words, both stored); junk (error outputs, content under the saliency floor,
        boilerplate); stale entries (neither used nor written in ``stale_days`` days); secrets
        and PII the redaction rules find in stored content; superseded and expired entries;
        the largest entries. Counts are exact; ids are listed up to 100 a class; never any
        content. Changes nothing (see :meth:`tidy`)."""
        days = _stale_days(stale_days)
        scopes = None if scope is None else (Scope.coerce(scope),)
        where = Filter(self.store.tenant, scopes)
        rows = yield from run(SurveyOp(where))
        settings = self.store.settings
        redactor = Redactor.from_settings(settings)
        now = self.store.now()
        pending = yield from call(self.store.uses.pending, self.store.tenant, [r.id for r in rows])
        floor = settings.min_content_chars or JUNK_FLOOR
        holds = redactor.finds if redactor.rules else None
        rows.sort(key=lambda r: r.scope)
        found = tuple(
            survey(
                name,
                list(members),
                now=now,
                stale_before=now - timedelta(days=days),
                floor=floor,
                holds_secret=holds,
                pending=pending,
            )
            for name, members in groupby(rows, key=lambda r: r.scope)
        )
        return HygieneReport(self.store.tenant, now, days, found, bool(redactor.rules))

    def tidy(self) -> Plan[TidyReport]:
        """Do the safe part of tidying the tenant's memory: purge its expired entries, then
        apply its retention policy (:meth:`~memvault.trust.retention.RetentionPlans.
        apply_retention`). Nothing else: near-duplicates, junk, stale entries and secrets are
        for a person to decide. Says what it removed (counts and ids, never content)."""
        now = self.store.now()
        removed = yield from run(PurgeExpiredOp(self.store.tenant, now))
        ids = sorted(item.id for item in removed)
        retention = yield from self.retention.apply_retention()
        return TidyReport(self.store.tenant, now, len(ids), tuple(ids[:IDS_SHOWN]), retention)
