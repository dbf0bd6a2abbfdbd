"""Failure patterns as plans on the store: the built-in ones and those learned from recorded
failures (one per error class, folded in the execution's transaction), and the check of a
request against them before it runs."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from ..core import Plan, run
from ..errors import ValidationError
from ..store.ops import FoldOp, ListOp
from ..types import MemoryEntry, Scope
from .failure_rules import (
    BUILT_IN,
    FailureMatch,
    FailurePattern,
    learned_from,
    matching,
    with_recent,
)
from .model import EXECUTION, FAILURE_PATTERN, Execution, derived_id
from .wing import AgentWing, expiry, listed, owned, text

RECENT_FAILURES = 500
"""Failed executions (the newest) whose requests give learned patterns their indicators."""


class FailurePlans(AgentWing):
    """What tends to go wrong, learned from failed executions, and how to see it coming."""

    def failure_patterns(
        self, *, scope: Scope | str | None = None
    ) -> Plan[builtins.list[FailurePattern]]:
        """The built-in failure patterns, then those learned from recorded failures (most
        frequent first), each with the terms recurring in its recent failed requests."""
        entries = yield from self.store.every(self.where(scope, FAILURE_PATTERN))
        failed = replace(self.where(scope, EXECUTION), metadata=(("success", False),))
        recent = yield from run(ListOp(failed, RECENT_FAILURES))
        requests: dict[str, list[str]] = {}
        for run_ in map(Execution.from_entry, recent):
            if run_.error_class is not None:
                requests.setdefault(run_.error_class, []).append(run_.input)
        learned = [FailurePattern.from_dict(e.metadata) for e in entries]
        learned = [with_recent(p, requests.get(p.error_classes[0], ())) for p in learned]
        learned.sort(key=lambda p: (-p.occurrences, p.name))
        return [*BUILT_IN, *learned]

    def check_failures(
        self,
        query: str,
        plan: str | Sequence[str] | None = None,
        *,
        scope: Scope | str | None = None,
    ) -> Plan[builtins.list[FailureMatch]]:
        """The failure patterns ``query`` (and its ``plan``: text or steps) shows signs of,
        with their mitigations: to check before a run. The request may be of any length (a
        long one may overflow a context window)."""
        query = text("query", query)
        if not query.strip():
            raise ValidationError("query must not be empty")
        steps = None
        if plan is not None:
            given = [plan] if isinstance(plan, str) else listed("plan", plan)
            steps = [text("a step of the plan", step) for step in given]
        patterns = yield from self.failure_patterns(scope=scope)
        return matching(query, steps, patterns)

    def fold(self, execution: Execution, where: Scope, now: datetime) -> FoldOp:
        """The fold of a failed execution into its error class's learned pattern."""
        error_class = execution.error_class
        assert error_class is not None
        first = learned_from(None, error_class)
        expires = expiry(now, self.store.settings.agent_pattern_days)
        entry = owned(
            derived_id("failure", self.store.tenant, str(where), error_class),
            where,
            f"failure pattern: {error_class}",
            FAILURE_PATTERN,
            now,
            expires,
            first.to_dict(),
        )

        def seen_again(stored: MemoryEntry) -> MemoryEntry:
            known = FailurePattern.from_dict(stored.metadata)
            again = learned_from(known, error_class)
            return replace(stored, metadata=again.to_dict(), updated_at=now, expires_at=expires)

        return FoldOp(self.store.tenant, entry, seen_again, live_at=now)
