"""Executions as plans on the store: one run of an agent or a tool, written in one transaction
with the folds it makes — its strategy's statistics, its error class's learned pattern — so
that concurrent recorders never lose an update; listed and searched by what they did."""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from .. import validation as check
from ..core import Plan, Planner, run, run_all
from ..errors import ValidationError
from ..ids import new_id
from ..store.ops import ListOp, Op, PutOp
from ..types import MemoryEntry, Provenance, Scope
from .failures import FailurePlans
from .model import (
    EXECUTION,
    SOURCE,
    Execution,
    ToolCall,
    execution_content,
    execution_metadata,
)
from .stats import Sample
from .strategies import StrategyPlans
from .team import Member
from .teams import TeamPlans
from .wing import MAX_AMOUNT, AgentWing, count, expiry, label, listed, owned, text
from .work_styles import WorkStylePlans


class ExecutionPlans(AgentWing):
    """The runs of agents and tools, and what each teaches the other wings."""

    def __init__(
        self,
        store: Planner,
        strategies: StrategyPlans,
        teams: TeamPlans,
        failures: FailurePlans,
        styles: WorkStylePlans,
    ) -> None:
        super().__init__(store)
        self.strategies, self.teams, self.failures = strategies, teams, failures
        self.styles = styles

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
        team: Iterable[Member | Mapping[str, Any]] | None = None,
        session_id: str | None = None,
        user_id: str | None = None,
        scope: Scope | str | None = None,
    ) -> Plan[Execution]:
        """Record one run of an agent or a tool: searchable by its input and output, and
        folded, in the same transaction, into its ``strategy``'s statistics (over every kind of
        request, and over ``kind``) and, when it failed with an ``error_class``, into that
        class's learned failure pattern, and into the statistics of the ``team`` that ran it
        (as :meth:`record_team`). ``session_id``/``user_id`` say whose request it served (an
        erasure of the user takes it; a retry or a dropped request of the user's teaches
        their work style, in their scope). Text is redacted (the ``redact`` setting)."""
        now, where = self.store.now(), self.scope(scope)
        crew = None if team is None else self.teams.team(team)
        labels = {
            "workflow_id": label("workflow_id", workflow_id),
            "agent_id": label("agent_id", agent_id),
            **{
                name: label(name, value, optional=True)
                for name, value in (
                    ("task_id", task_id),
                    ("parent_id", parent_id),
                    ("model", model),
                    ("session_id", session_id),
                    ("user_id", user_id),
                )
            },
            **{  # the names the aggregates keep: redacted like text
                name: self.redacted_label(name, value)
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
            input=self.redacted(check.content(input, self.store.settings)),
            output=self.redacted(text("output", output)),
            success=check.flag("success", success),
            tokens_in=count("tokens_in", tokens_in),
            tokens_out=count("tokens_out", tokens_out),
            cost=check.finite("cost", cost, 0, MAX_AMOUNT),
            duration_ms=check.finite("duration_ms", duration_ms, 0, MAX_AMOUNT),
            error_message=None
            if error_message is None
            else self.redacted(text("error_message", error_message)),
            tool_calls=tuple(self._tool_call(c) for c in listed("tool_calls", tool_calls)),
            **labels,
        )
        entry = self._entry(execution, where)
        (chunks,) = yield from self.store.index([entry])
        ops: list[Op[Any]] = [PutOp(self.store.tenant, entry, chunks=chunks)]
        ops += self.strategies.folds(execution, where, now)
        if crew is not None:
            sample = Sample(
                execution.success, execution.tokens, execution.duration_ms, execution.cost, now
            )
            ops += self.teams.folds(crew, execution.kind, sample, where, execution.workflow_id)
        if not execution.success and execution.error_class is not None:
            ops.append(self.failures.fold(execution, where, now))
        if execution.user_id is not None and self.store.settings.work_style:
            ops.append(
                self.styles.from_run(execution.user_id, execution.input, execution.success, now)
            )
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
            self.where(scope, EXECUTION),
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
        hits = yield from self.search(query, scope, EXECUTION, limit, equal)
        return [(Execution.from_entry(hit.entry), hit.score) for hit in hits]

    def _redacted_tree(self, value: Any) -> Any:
        """``value`` (a tool call's parameters) with every string in it checked (no NUL) and
        redacted; a mapping's keys must be strings (as JSON's are: none is silently turned
        into one)."""
        if isinstance(value, str):
            return self.redacted(text("a tool call's parameter", value))
        if isinstance(value, Mapping):
            for key in value:
                if not isinstance(key, str):
                    raise ValidationError(f"a tool call's parameter names must be strings: {key!r}")
                text("a tool call's parameter name", key)
            return {key: self._redacted_tree(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self._redacted_tree(item) for item in value]
        return value

    def _tool_call(self, value: ToolCall | Mapping[str, Any]) -> ToolCall:
        call = ToolCall.coerce(value)
        return ToolCall(
            label("tool name", call.name),
            self._redacted_tree(call.parameters),
            self.redacted(text("tool output", call.output)),
            check.flag("tool success", call.success),
            check.finite("tool duration_ms", call.duration_ms, 0, MAX_AMOUNT),
        )

    def _entry(self, execution: Execution, where: Scope) -> MemoryEntry:
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
        return owned(
            execution.id,
            where,
            content,
            EXECUTION,
            execution.created_at,
            expiry(execution.created_at, settings.agent_execution_days),
            metadata,
            Provenance(
                source=SOURCE,
                agent_id=execution.agent_id,
                created_in_session_id=execution.session_id,
                tool_originated=True,
            ),
        )


def _equal(labels: Mapping[str, str | None], success: bool | None) -> dict[str, Any]:
    """The metadata an execution must hold: the labels given, and the outcome if given."""
    equal: dict[str, Any] = {k: label(k, v) for k, v in labels.items() if v is not None}
    if success is not None:
        equal["success"] = check.flag("success", success)
    return equal
