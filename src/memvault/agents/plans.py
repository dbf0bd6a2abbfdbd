"""Agent memory as plans on the scoped store: executions, strategy statistics and choice,
decompositions, failure patterns.

Everything lives in one scope (``settings.agent_scope``, or the ``scope`` a call names) of the
tenant, as entries: the store's search, retention (each entry expires ``agent_*_days`` after
its last use), erasure and audit log apply. An execution is written in one transaction with
the folds of its strategy's statistics (over every kind, and over its kind) and, for a failure,
of its error class's learned pattern (:class:`~memvault.store.FoldOp`), so concurrent recorders
never lose an update. Text that came from agents and tools — inputs, outputs, tool calls, error
messages — is redacted like learned facts and kept as derived data, never as instructions.
"""

from __future__ import annotations

import builtins
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from .. import validation as check
from ..core import Plan, Planner, run, run_all
from ..errors import ConfigError, InvalidScopeError, ValidationError
from ..ids import new_id
from ..security.redact import Redactor
from ..store.ops import Filter, FoldOp, GetManyOp, ListOp, Op, PutOp, ReachOp
from ..types import MemoryEntry, Provenance, Scope, SearchHit
from .choice import PREFERENCES, Prefer, StrategyChoice, choose
from .failures import BUILT_IN, FailureMatch, FailurePattern, learned_from, matching, with_recent
from .model import (
    DECOMPOSITION,
    EXECUTION,
    FAILURE_PATTERN,
    SOURCE,
    STRATEGY_STATS,
    Decomposition,
    Execution,
    Suggestion,
    ToolCall,
    decomposition_metadata,
    derived_id,
    execution_content,
    execution_metadata,
    pooled,
)
from .stats import ANY_KIND, Sample, StrategyStats

MAX_LABEL_CHARS = 256
"""Longest workflow, agent, task, strategy, kind, model or error class name."""
KIND_RUNS = 5
"""Runs of a strategy on a kind of request before its statistics on that kind are used
(before: its statistics over every kind)."""
SIMILAR = 0.8
"""Cosine at which a past request counts as similar (decomposition reuse, request kinds)."""
SEARCH_DEPTH = 50
"""Past requests a similarity lookup ranks."""
RECENT_FAILURES = 500
"""Failed executions (the newest) whose requests give learned patterns their indicators."""
MAX_AMOUNT = 10**12
"""Largest cost, duration (ms) or token count of one run: sums of them stay finite (and
64-bit)."""


class AgentPlans:
    """The memory an orchestrator keeps of its own work, as plans on the store planner."""

    def __init__(self, store: Planner) -> None:
        self.store = store
        self.redactor = Redactor.from_settings(store.settings)
        try:
            self.default_scope = Scope.parse(store.settings.agent_scope)
        except InvalidScopeError as exc:
            raise ConfigError(f"setting agent_scope: {exc}") from None

    # -- executions ---------------------------------------------------------------------------

    def record_execution(
        self,
        *,
        workflow_id: str,
        agent_id: str,
        input: str,
        success: bool,
        output: str = "",
        strategy: str | None = None,
        kind: str | None = None,
        task_id: str | None = None,
        parent_id: str | None = None,
        model: str | None = None,
        tokens_in: int = 0,
        tokens_out: int = 0,
        cost: float = 0.0,
        duration_ms: float = 0.0,
        error_class: str | None = None,
        error_message: str | None = None,
        tool_calls: Iterable[ToolCall | Mapping[str, Any]] = (),
        session_id: str | None = None,
        user_id: str | None = None,
        scope: Scope | str | None = None,
    ) -> Plan[Execution]:
        """Record one run of an agent or a tool: searchable by its input and output, and
        folded, in the same transaction, into its ``strategy``'s statistics (over every kind of
        request, and over ``kind``) and, when it failed with an ``error_class``, into that
        class's learned failure pattern. ``session_id``/``user_id`` say whose request it served
        (an erasure of the user takes it). Text is redacted (the ``redact`` setting)."""
        now, where = self.store.now(), self._scope(scope)
        labels = {
            "workflow_id": _label("workflow_id", workflow_id),
            "agent_id": _label("agent_id", agent_id),
            **{
                name: _label(name, value, optional=True)
                for name, value in (
                    ("task_id", task_id),
                    ("parent_id", parent_id),
                    ("model", model),
                    ("session_id", session_id),
                    ("user_id", user_id),
                )
            },
            **{  # the names the aggregates keep: redacted like text
                name: self._redacted_label(name, value)
                for name, value in (
                    ("strategy", strategy),
                    ("kind", kind),
                    ("error_class", error_class),
                )
            },
        }
        execution = Execution(
            id=new_id(now),
            scope=str(where),
            created_at=now,
            input=self._redacted(check.content(input, self.store.settings)),
            output=self._redacted(_text("output", output)),
            success=check.flag("success", success),
            tokens_in=_count("tokens_in", tokens_in),
            tokens_out=_count("tokens_out", tokens_out),
            cost=check.finite("cost", cost, 0, MAX_AMOUNT),
            duration_ms=check.finite("duration_ms", duration_ms, 0, MAX_AMOUNT),
            error_message=None
            if error_message is None
            else self._redacted(_text("error_message", error_message)),
            tool_calls=tuple(self._tool_call(c) for c in _listed("tool_calls", tool_calls)),
            **labels,
        )
        entry = self._execution_entry(execution, where)
        (chunks,) = yield from self.store.index([entry])
        ops: list[Op[Any]] = [PutOp(self.store.tenant, entry, chunks=chunks)]
        ops += self._stats_folds(execution, where, now)
        if not execution.success and execution.error_class is not None:
            ops.append(self._failure_fold(execution, where, now))
        yield from run_all(ops)
        self.store.stats.add("executions")
        return execution

    def executions(
        self,
        *,
        workflow_id: str | None = None,
        agent_id: str | None = None,
        task_id: str | None = None,
        strategy: str | None = None,
        kind: str | None = None,
        success: bool | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 100,
        scope: Scope | str | None = None,
    ) -> Plan[builtins.list[Execution]]:
        """Recorded executions, newest first, matching every filter given (``since`` <=
        recorded < ``until``)."""
        equal = _equal(
            {
                "workflow_id": workflow_id,
                "agent_id": agent_id,
                "task_id": task_id,
                "strategy": strategy,
                "kind": kind,
            },
            success,
        )
        where = replace(
            self._where(scope, EXECUTION),
            metadata=tuple(sorted(equal.items())),
            since=None if since is None else check.aware("since", since),
            until=None if until is None else check.aware("until", until),
        )
        entries = yield from run(ListOp(where, check.limit(limit, self.store.settings)))
        return [Execution.from_entry(e) for e in entries]

    def search_executions(
        self,
        query: str,
        *,
        limit: int = 10,
        agent_id: str | None = None,
        workflow_id: str | None = None,
        success: bool | None = None,
        scope: Scope | str | None = None,
    ) -> Plan[builtins.list[tuple[Execution, float]]]:
        """Past executions like ``query`` (hybrid search over their inputs and outputs), best
        first, each with its score: "have we answered something like this before?"."""
        equal = _equal({"agent_id": agent_id, "workflow_id": workflow_id}, success)
        hits = yield from self._search(query, scope, EXECUTION, limit, equal)
        return [(Execution.from_entry(hit.entry), hit.score) for hit in hits]

    # -- strategies ---------------------------------------------------------------------------

    def strategy_stats(
        self, *, kind: str | None = None, scope: Scope | str | None = None
    ) -> Plan[builtins.list[StrategyStats]]:
        """Every strategy's statistics (over every kind of request, and per kind; ``kind``:
        only those of that kind), by strategy then kind."""
        where = self._where(scope, STRATEGY_STATS)
        if kind is not None:
            where = replace(where, metadata=(("kind", _label("kind", kind)),))
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
        prefer: Prefer = "balanced",
        seed: int | None = None,
        scope: Scope | str | None = None,
    ) -> Plan[StrategyChoice]:
        """Which of ``candidates`` to run, epsilon-greedy: a candidate never run first, else
        with probability ``epsilon`` one at random, else the best for ``prefer`` (``speed``,
        ``accuracy`` or ``balanced``; :mod:`memvault.agents.choice`). On ``kind`` requests
        (or, given a ``query`` and no kind, the kind of most similar past requests), a
        strategy's statistics on that kind once it has run on it 5 times; else over every
        kind. ``seed`` makes the draw repeatable. The choice explains itself."""
        names = list(
            dict.fromkeys(_label("candidate", c) for c in _listed("candidates", candidates))
        )
        if not names:
            raise ValidationError("choose_strategy needs at least one candidate")
        if prefer not in PREFERENCES:
            raise ValidationError(f"prefer must be one of {', '.join(PREFERENCES)}, got {prefer!r}")
        epsilon = check.finite("epsilon", epsilon, 0, 1)
        where = self._scope(scope)
        if kind is None and query is not None:
            kind = yield from self._kind_of(query, scope)
        kind = self._redacted_label("kind", kind) or ANY_KIND
        stored = {name: self._redacted(name) for name in names}  # as record_execution keeps it
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
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise ValidationError(f"seed must be an integer, got {type(seed).__name__}")
        rng = random.Random(seed)
        return choose(names, stats, epsilon=epsilon, prefer=prefer, rng=rng, kind=kind)

    def _kind_of(self, query: str, scope: Scope | str | None) -> Plan[str | None]:
        """The commonest kind of the past requests similar to ``query`` (None: none)."""
        hits = yield from self._search(query, scope, EXECUTION, SEARCH_DEPTH, {})
        kinds = Counter(
            hit.entry.metadata.get("kind")
            for hit in hits
            if hit.components.get("dense", 0.0) >= SIMILAR and hit.entry.metadata.get("kind")
        )
        return kinds.most_common(1)[0][0] if kinds else None

    # -- decompositions -----------------------------------------------------------------------

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
        now, where = self.store.now(), self._scope(scope)
        query = self._redacted(check.content(query, self.store.settings))
        steps = tuple(self._redacted(_text("subtask", s)) for s in _listed("subtasks", subtasks))
        if not steps or not all(s.strip() for s in steps):
            raise ValidationError("subtasks must be a non-empty list of non-empty strings")
        strategy = self._redacted_label("strategy", strategy)
        user_id = _label("user_id", user_id, optional=True)
        session_id = _label("session_id", session_id, optional=True)
        sample = (check.flag("success", success), _count("tokens", tokens))
        duration = check.finite("duration_ms", duration_ms, 0, MAX_AMOUNT)
        meta = decomposition_metadata(steps, strategy, 1, int(sample[0]), sample[1], duration, now)
        if user_id is not None:
            meta["user_id"] = user_id
        entry = _owned(
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
            _expiry(now, self.store.settings.agent_pattern_days),
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
        hits = yield from self._search(query, scope, DECOMPOSITION, SEARCH_DEPTH, {})
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

    # -- failures -----------------------------------------------------------------------------

    def failure_patterns(
        self, *, scope: Scope | str | None = None
    ) -> Plan[builtins.list[FailurePattern]]:
        """The built-in failure patterns, then those learned from recorded failures (most
        frequent first), each with the terms recurring in its recent failed requests."""
        entries = yield from self.store.every(self._where(scope, FAILURE_PATTERN))
        failed = replace(self._where(scope, EXECUTION), metadata=(("success", False),))
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
        query = _text("query", query)
        if not query.strip():
            raise ValidationError("query must not be empty")
        steps = None
        if plan is not None:
            listed = [plan] if isinstance(plan, str) else _listed("plan", plan)
            steps = [_text("a step of the plan", step) for step in listed]
        patterns = yield from self.failure_patterns(scope=scope)
        return matching(query, steps, patterns)

    # -- building blocks ----------------------------------------------------------------------

    def _stats_id(self, scope: Scope, strategy: str, kind: str) -> str:
        return derived_id("strategy", self.store.tenant, str(scope), strategy, kind)

    def _scope(self, scope: Scope | str | None) -> Scope:
        return self.default_scope if scope is None else Scope.coerce(scope)

    def _where(self, scope: Scope | str | None, category: str) -> Filter:
        return Filter(
            self.store.tenant,
            (self._scope(scope),),
            categories=(category,),
            live_at=self.store.now(),
        )

    def _search(
        self,
        query: str,
        scope: Scope | str | None,
        category: str,
        limit: int,
        equal: Mapping[str, Any],
    ) -> Plan[builtins.list[SearchHit]]:
        hits = yield from self.store.search(
            query,
            self._scope(scope),
            limit=limit,
            categories=(category,),
            metadata=dict(equal) or None,
        )
        return hits

    def _redacted(self, text: str) -> str:
        redaction = self.redactor.redact(text)
        for rule, n in redaction.counts.items():
            self.store.stats.add(f"redacted_{rule}", n)
        return redaction.text

    def _redacted_label(self, name: str, value: object) -> str | None:
        """An optional name that aggregates keep (strategy, kind, error class), redacted."""
        label: str | None = _label(name, value, optional=True)
        return None if label is None else self._redacted(label)

    def _redacted_tree(self, value: Any) -> Any:
        """``value`` (a tool call's parameters) with every string in it checked (no NUL) and
        redacted; a mapping's keys must be strings (as JSON's are: none is silently turned
        into one)."""
        if isinstance(value, str):
            return self._redacted(_text("a tool call's parameter", value))
        if isinstance(value, Mapping):
            for key in value:
                if not isinstance(key, str):
                    raise ValidationError(f"a tool call's parameter names must be strings: {key!r}")
                _text("a tool call's parameter name", key)
            return {key: self._redacted_tree(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self._redacted_tree(item) for item in value]
        return value

    def _tool_call(self, value: ToolCall | Mapping[str, Any]) -> ToolCall:
        call = ToolCall.coerce(value)
        return ToolCall(
            _label("tool name", call.name),
            self._redacted_tree(call.parameters),
            self._redacted(_text("tool output", call.output)),
            check.flag("tool success", call.success),
            check.finite("tool duration_ms", call.duration_ms, 0, MAX_AMOUNT),
        )

    def _execution_entry(self, execution: Execution, where: Scope) -> MemoryEntry:
        content, split = execution_content(execution.input, execution.output)
        settings = self.store.settings
        try:
            content = check.content(content, settings)
        except ValidationError as exc:
            raise ValidationError(f"an execution's input and output together: {exc}") from None
        try:
            metadata = check.metadata({**execution_metadata(execution), **split}, settings)
        except ValidationError as exc:
            raise ValidationError(
                f"an execution's tool calls, error message and fields: {exc} (keep large tool "
                "outputs elsewhere, or raise MEMVAULT_MAX_METADATA_BYTES)"
            ) from None
        return _owned(
            execution.id,
            where,
            content,
            EXECUTION,
            execution.created_at,
            _expiry(execution.created_at, settings.agent_execution_days),
            metadata,
            Provenance(
                source=SOURCE,
                agent_id=execution.agent_id,
                created_in_session_id=execution.session_id,
                tool_originated=True,
            ),
        )

    def _stats_folds(self, execution: Execution, where: Scope, now: datetime) -> list[FoldOp]:
        """The folds of the execution into its strategy's statistics (any kind; its kind)."""
        if execution.strategy is None:
            return []
        sample = Sample(
            execution.success, execution.tokens, execution.duration_ms, execution.cost, now
        )
        kinds = dict.fromkeys([ANY_KIND, execution.kind or ANY_KIND])
        expires = _expiry(now, self.store.settings.agent_aggregate_days)
        folds = []
        for kind in kinds:
            first = StrategyStats(execution.strategy, kind).adding(sample)
            entry = _owned(
                self._stats_id(where, execution.strategy, kind),
                where,
                f"statistics of strategy {execution.strategy} on {kind} requests",
                STRATEGY_STATS,
                now,
                expires,
                first.to_dict(),
            )
            fold = _adding(sample, now, expires)
            folds.append(FoldOp(self.store.tenant, entry, fold, live_at=now))
        return folds

    def _failure_fold(self, execution: Execution, where: Scope, now: datetime) -> FoldOp:
        """The fold of a failed execution into its error class's learned pattern."""
        error_class = execution.error_class
        assert error_class is not None
        first = learned_from(None, error_class)
        expires = _expiry(now, self.store.settings.agent_pattern_days)
        entry = _owned(
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


def _owned(  # noqa: PLR0917 - one per field an agent-memory entry sets
    entry_id: str,
    scope: Scope,
    content: str,
    category: str,
    now: datetime,
    expires: datetime | None,
    metadata: dict[str, Any],
    provenance: Provenance | None = None,
) -> MemoryEntry:
    """An entry of agent memory, created ``now``."""
    return MemoryEntry(
        id=entry_id,
        scope=scope,
        content=content,
        category=category,
        created_at=now,
        updated_at=now,
        valid_from=now,
        expires_at=expires,
        metadata=metadata,
        provenance=provenance or Provenance(source=SOURCE),
    )


def _adding(sample: Sample, now: datetime, expires: datetime | None) -> Any:
    def fold(stored: MemoryEntry) -> MemoryEntry:
        stats = StrategyStats.from_dict(stored.metadata).adding(sample)
        return replace(stored, metadata=stats.to_dict(), updated_at=now, expires_at=expires)

    return fold


def _equal(labels: Mapping[str, str | None], success: bool | None) -> dict[str, Any]:
    """The metadata an execution must hold: the labels given, and the outcome if given."""
    equal: dict[str, Any] = {k: _label(k, v) for k, v in labels.items() if v is not None}
    if success is not None:
        equal["success"] = check.flag("success", success)
    return equal


def _expiry(now: datetime, days: int) -> datetime | None:
    return None if days <= 0 else now + timedelta(days=days)


def _label(name: str, value: object, *, optional: bool = False) -> Any:
    """A name (workflow, agent, strategy…): 1 to 256 printable characters."""
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_LABEL_CHARS:
        raise ValidationError(
            f"{name} must be a non-empty string of at most {MAX_LABEL_CHARS} characters"
        )
    if not value.isprintable():
        raise ValidationError(
            f"{name} must be printable (no control, format or separator characters)"
        )
    return value


def _text(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise ValidationError(f"{name} must be a string, got {type(value).__name__}")
    if "\x00" in value:
        raise ValidationError(f"{name} must not contain NUL characters")
    return value


def _count(name: str, value: object) -> int:
    """A count of one run (tokens): 0 to 10¹², so that sums of them stay 64-bit."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_AMOUNT:
        raise ValidationError(f"{name} must be an integer from 0 to 10**12, got {value!r}")
    return value


def _listed(name: str, values: object) -> list[Any]:
    if isinstance(values, str | bytes | Mapping) or not isinstance(values, Iterable):
        raise ValidationError(f"{name} must be a list, got {type(values).__name__}")
    return list(values)
