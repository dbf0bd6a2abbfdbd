"""What each user prefers in how work is done, kept per user as plans on the store.

One entry per user, of category ``work_style`` in the user's scope (an erasure of the user
takes it; a key must be granted the user's scope to read or feed it). Every message the user
adds to one of their sessions (not a private one) and every run recorded for them
(``record_execution(user_id=…)``) folds what it shows into it, in the same transaction. It is
never indexed (no search finds it) nor shown in a prompt. It resets after 24 hours without
activity (it expires, and the next message starts it over) unless the user opted in:
``remember_work_style(user, True)``, or a session created with ``metadata=
{"remember_work_style": True}``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from .. import validation as check
from ..core import Plan, run
from ..errors import ValidationError
from ..facilities.model import Session
from ..store.ops import FoldOp, GetOp, Op
from ..types import MemoryEntry, Scope
from .choice import PREFERENCES, Prefer
from .model import WORK_STYLE, derived_id
from .wing import AgentWing, label, owned
from .work_style import Evidence, WorkStyle, read_run, read_turn

RESET = timedelta(hours=24)
"""Inactivity after which a user's work style starts over (unless remembered)."""
OPT_IN = "remember_work_style"
"""The session metadata key that opts the session's user in."""


class WorkStylePlans(AgentWing):
    """Each user's inferred expertise and speed/accuracy leaning, with their evidence."""

    def user_preferences(self, user_id: str) -> Plan[WorkStyle]:
        """What ``user_id`` prefers in how work is done, as inferred from their messages and
        runs: ``expertise`` (novice, intermediate, expert) and ``leaning`` (speed, accuracy,
        balanced), each with its evidence and confidence; nothing known yet: intermediate and
        balanced at confidence 0. Inferences, never the user's words."""
        user = label("user_id", user_id)
        now = self.store.now()
        found = yield from run(GetOp(self.store.tenant, self._id(user)))
        if found is None or found.is_expired(now):
            return WorkStyle.of(user, Evidence(), False, None, None)
        return _style(found)

    def remember_work_style(self, user_id: str, remember: bool = True) -> Plan[WorkStyle]:
        """Keep ``user_id``'s work style across inactivity (``remember``), or let it reset
        24 hours after their last activity again."""
        user, keep = label("user_id", user_id), check.flag("remember", remember)
        now = self.store.now()
        folded = yield from run(self._fold(user, Evidence(), now, keep, remembering=True))
        return _style(folded.entry)

    def prefer(self, prefer: Prefer | None, user_id: str | None) -> Plan[Prefer]:
        """The preference a choice is made for: ``prefer`` if given, else the leaning of
        ``user_id``'s work style when confident enough, else balanced."""
        if prefer is not None:
            if prefer not in PREFERENCES:
                raise ValidationError(
                    f"prefer must be one of {', '.join(PREFERENCES)}, got {prefer!r}"
                )
            return prefer
        if user_id is None:
            return "balanced"
        style = yield from self.user_preferences(user_id)
        return style.prefer

    def from_turns(self, session: MemoryEntry, records: Sequence[MemoryEntry]) -> list[Op[Any]]:
        """The fold of the user's messages among ``records`` of ``session`` into their work
        style (none for a private session, or without a message of the user)."""
        if not self.store.settings.work_style:
            return []
        owner = Session.from_entry(session)
        said = [r.content for r in records if r.metadata.get("role") == "user"]
        if owner.private or not said:
            return []
        evidence = Evidence()
        for text in said:
            evidence = evidence + read_turn(text)
        opted = owner.metadata.get(OPT_IN) is True
        return [self._fold(owner.user_id, evidence, self.store.now(), opted)]

    def from_run(self, user_id: str, request: str, success: bool, now: datetime) -> FoldOp:
        """The fold of one run of ``user_id``'s ``request`` into their work style."""
        return self._fold(user_id, None, now, False, run=(request, success))

    def _fold(
        self,
        user_id: str,
        evidence: Evidence | None,
        now: datetime,
        remember: bool,
        *,
        remembering: bool = False,
        run: tuple[str, bool] | None = None,
    ) -> FoldOp:
        """Add ``evidence`` (or what a ``run`` shows) to the user's work style: ``remember``
        opts in; with ``remembering`` it is set, opted in or out."""

        def adding(before: Evidence) -> Evidence:
            return before + (read_run(before, *run) if run is not None else evidence or Evidence())

        def metadata(before: Evidence, remembered: bool) -> dict[str, Any]:
            return {
                "user_id": user_id,
                "evidence": adding(before).to_dict(),
                "remembered": remembered,
                "last_active": now.isoformat(),
            }

        first = self._entry(user_id, metadata(Evidence(), remember), now)

        def fold(stored: MemoryEntry) -> MemoryEntry:
            before = Evidence.from_dict(stored.metadata["evidence"])
            kept = bool(stored.metadata.get("remembered"))
            remembered = remember if remembering else kept or remember
            data = metadata(before, remembered)
            if remembering:  # an opt-in or out is no activity of the user
                data["last_active"] = stored.metadata["last_active"]
            active = datetime.fromisoformat(data["last_active"])
            return replace(
                stored,
                metadata=data,
                updated_at=now,
                expires_at=None if remembered else active + RESET,
            )

        return FoldOp(self.store.tenant, first, fold, live_at=now)

    def _entry(self, user_id: str, metadata: dict[str, Any], now: datetime) -> MemoryEntry:
        remembered = bool(metadata["remembered"])
        return owned(
            self._id(user_id),
            Scope.user(user_id),
            f"work style of user {user_id} (inferred)",
            WORK_STYLE,
            now,
            None if remembered else now + RESET,
            metadata,
        )

    def _id(self, user_id: str) -> str:
        return derived_id("work_style", self.store.tenant, str(Scope.user(user_id)))


def _style(entry: MemoryEntry) -> WorkStyle:
    meta = entry.metadata
    return WorkStyle.of(
        str(meta["user_id"]),
        Evidence.from_dict(meta["evidence"]),
        bool(meta["remembered"]),
        datetime.fromisoformat(meta["last_active"]),
        entry.expires_at,
    )
