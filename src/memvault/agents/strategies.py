"""Strategy statistics and choice as plans on the store: each execution of a strategy folds
into its statistics over every kind of request and over its kind (in the execution's
transaction), and the epsilon-greedy choice among candidates reads them."""

from __future__ import annotations

import builtins
import random
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from .. import validation as check
from ..core import Plan, Planner, run
from ..errors import ValidationError
from ..store.ops import FoldOp, GetManyOp, ReachOp
from ..types import MemoryEntry, Scope
from .choice import Prefer, StrategyChoice, choose
from .model import STRATEGY_STATS, Execution, derived_id
from .stats import ANY_KIND, Sample, StrategyStats
from .wing import AgentWing, expiry, label, listed, owned, seeded
from .work_styles import WorkStylePlans

KIND_RUNS = 5
"""Runs of a strategy on a kind of request before its statistics on that kind are used
(before: its statistics over every kind)."""


class StrategyPlans(AgentWing):
    """How each strategy has done, and which to run next."""

    def __init__(self, store: Planner, styles: WorkStylePlans) -> None:
        super().__init__(store)
        self.styles = styles

    def strategy_stats(
        self, *, kind: str | None = None, scope: Scope | str | None = None
    ) -> Plan[builtins.list[StrategyStats]]:
        """Every strategy's statistics (over every kind of request, and per kind; ``kind``:
        only those of that kind), by strategy then kind."""
        where = self.where(scope, STRATEGY_STATS)
        if kind is not None:
            where = replace(where, metadata=(("kind", label("kind", kind)),))
        entries = yield from self.store.every(where)
        rows = [StrategyStats.from_dict(e.metadata) for e in entries]
        return sorted(rows, key=lambda s: (s.strategy, s.kind != ANY_KIND, s.kind))

    def choose_strategy(
        self,
        candidates: Sequence[str],
        *,
        query: str | None = None,
        kind: str | None = None,
        epsilon: float = 0.1,
        prefer: Prefer | None = None,
        user: str | None = None,
        seed: int | None = None,
        scope: Scope | str | None = None,
    ) -> Plan[StrategyChoice]:
        """Which of ``candidates`` to run, epsilon-greedy: a candidate never run first, else
        with probability ``epsilon`` one at random, else the best for ``prefer`` (``speed``,
        ``accuracy`` or ``balanced``; :mod:`memvault.agents.choice`; not given: the leaning
        of ``user``'s work style when confident enough, else balanced). On ``kind`` requests
        (or, given a ``query`` and no kind, the kind of most similar past requests), a
        strategy's statistics on that kind once it has run on it 5 times; else over every
        kind. ``seed`` makes the draw repeatable. The choice explains itself."""
        names = list(dict.fromkeys(label("candidate", c) for c in listed("candidates", candidates)))
        if not names:
            raise ValidationError("choose_strategy needs at least one candidate")
        epsilon = check.finite("epsilon", epsilon, 0, 1)
        rng = random.Random(seeded(seed))
        prefer = yield from self.styles.prefer(prefer, user)
        where = self.scope(scope)
        if kind is None and query is not None:
            kind = yield from self.kind_of(query, scope)
        kind = self.redacted_label("kind", kind) or ANY_KIND
        stored = {name: self.redacted(name) for name in names}  # as record_execution keeps it
        ids = tuple(self._stats_id(where, stored[n], k) for n in names for k in {ANY_KIND, kind})
        reach = ReachOp(self.store.tenant, (str(where),))  # none found says something too
        found = yield from run(GetManyOp(self.store.tenant, ids), reach)
        now = self.store.now()
        rows = [StrategyStats.from_dict(e.metadata) for e in found if not e.is_expired(now)]
        known = {(s.strategy, s.kind): s for s in rows}
        stats = {}
        for name in names:
            own = known.get((stored[name], kind))
            usable = own if own is not None and own.runs >= KIND_RUNS else None
            usable = usable or known.get((stored[name], ANY_KIND))
            if usable is not None:
                stats[name] = usable
        return choose(names, stats, epsilon=epsilon, prefer=prefer, rng=rng, kind=kind)

    def folds(self, execution: Execution, where: Scope, now: datetime) -> list[FoldOp]:
        """The folds of an execution into its strategy's statistics (any kind; its kind)."""
        if execution.strategy is None:
            return []
        sample = Sample(
            execution.success, execution.tokens, execution.duration_ms, execution.cost, now
        )
        expires = expiry(now, self.store.settings.agent_aggregate_days)
        folds = []
        for kind in dict.fromkeys([ANY_KIND, execution.kind or ANY_KIND]):
            first = StrategyStats(execution.strategy, kind=kind).adding(sample)
            entry = owned(
                self._stats_id(where, execution.strategy, kind),
                where,
                f"statistics of strategy {execution.strategy} on {kind} requests",
                STRATEGY_STATS,
                now,
                expires,
                first.to_dict(),
            )
            fold = adding(StrategyStats.from_dict, sample, now, expires)
            folds.append(FoldOp(self.store.tenant, entry, fold, live_at=now))
        return folds

    def _stats_id(self, scope: Scope, strategy: str, kind: str) -> str:
        return derived_id("strategy", self.store.tenant, str(scope), strategy, kind)


def adding(read: Any, sample: Sample, now: datetime, expires: datetime | None) -> Any:
    """The fold of one run into the statistics an entry keeps (``read`` from its metadata)."""

    def fold(stored: MemoryEntry) -> MemoryEntry:
        stats = read(stored.metadata).adding(sample)
        return replace(stored, metadata=stats.to_dict(), updated_at=now, expires_at=expires)

    return fold
