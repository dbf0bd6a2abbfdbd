"""Task decompositions as plans on the store: how a request was broken into subtasks and how
that went each time (folded into one entry per request, subtasks and strategy), and the reuse
of those that worked for similar requests."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import replace

from .. import validation as check
from ..core import Plan, run
from ..errors import ValidationError
from ..store.ops import FoldOp
from ..types import MemoryEntry, Provenance, Scope
from .model import (
    DECOMPOSITION,
    SOURCE,
    Decomposition,
    Suggestion,
    decomposition_metadata,
    derived_id,
    pooled,
)
from .wing import (
    MAX_AMOUNT,
    SEARCH_DEPTH,
    SIMILAR,
    AgentWing,
    count,
    expiry,
    label,
    listed,
    owned,
    text,
)


class DecompositionPlans(AgentWing):
    """Decompositions of requests into subtasks, and their reuse."""

    def record_decomposition(
        self,
        query: str,
        subtasks: Sequence[str],
        *,
        strategy: str | None = None,
        success: bool = True,
        tokens: int = 0,
        duration_ms: float = 0.0,
        session_id: str | None = None,
        user_id: str | None = None,
        scope: Scope | str | None = None,
    ) -> Plan[Decomposition]:
        """Record how a request was broken into ``subtasks`` and how that went; the same
        request broken the same way again adds to its runs and successes."""
        now, where = self.store.now(), self.scope(scope)
        query = self.redacted(check.content(query, self.store.settings))
        steps = tuple(self.redacted(text("subtask", s)) for s in listed("subtasks", subtasks))
        if not steps or not all(s.strip() for s in steps):
            raise ValidationError("subtasks must be a non-empty list of non-empty strings")
        strategy = self.redacted_label("strategy", strategy)
        user_id = label("user_id", user_id, optional=True)
        session_id = label("session_id", session_id, optional=True)
        sample = (check.flag("success", success), count("tokens", tokens))
        duration = check.finite("duration_ms", duration_ms, 0, MAX_AMOUNT)
        meta = decomposition_metadata(steps, strategy, 1, int(sample[0]), sample[1], duration, now)
        if user_id is not None:
            meta["user_id"] = user_id
        entry = owned(
            derived_id(
                "decomposition",
                self.store.tenant,
                str(where),
                query,
                "\x1f".join(steps),
                strategy or "",
                user_id or "",
            ),
            where,
            query,
            DECOMPOSITION,
            now,
            expiry(now, self.store.settings.agent_pattern_days),
            check.metadata(meta, self.store.settings),
            Provenance(source=SOURCE, created_in_session_id=session_id),
        )
        (chunks,) = yield from self.store.index([entry])

        def used_again(stored: MemoryEntry) -> MemoryEntry:
            old = Decomposition.from_entry(stored)
            again = decomposition_metadata(
                old.subtasks,
                strategy,
                old.runs + 1,
                old.successes + int(sample[0]),
                old.tokens + sample[1],
                old.duration_ms + duration,
                now,
            )
            return replace(
                stored,
                metadata={**stored.metadata, **again},
                updated_at=now,
                expires_at=entry.expires_at,
            )

        fold = FoldOp(self.store.tenant, entry, used_again, chunks=chunks, live_at=now)
        folded = yield from run(fold)
        return Decomposition.from_entry(folded.entry)

    def suggest_decomposition(
        self,
        query: str,
        *,
        limit: int = 5,
        min_similarity: float = SIMILAR,
        scope: Scope | str | None = None,
    ) -> Plan[builtins.list[Suggestion]]:
        """Past decompositions that worked (at least once) for requests similar to ``query``
        (cosine >= ``min_similarity`` with the configured embedder), by success rate, then
        similarity; empty when nothing fits. One request broken the same way for several
        users is one suggestion, its record pooled."""
        least = check.finite("min_similarity", min_similarity, -1, 1)
        hits = yield from self.search(query, scope, DECOMPOSITION, SEARCH_DEPTH, {})
        found = pooled(
            Suggestion(Decomposition.from_entry(hit.entry), hit.components.get("dense", 0.0))
            for hit in hits
            if hit.components.get("dense", 0.0) >= least
        )
        fitting = [s for s in found if s.decomposition.successes]
        fitting.sort(
            key=lambda s: (-s.decomposition.success_rate, -s.similarity, s.decomposition.id)
        )
        return fitting[: check.limit(limit, self.store.settings)]
