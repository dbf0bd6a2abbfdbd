"""The inspector's pages of agent memory (``docs/inspector.md``): executions, the strategy table
and failure patterns of one scope of agent memory (``?scope=``, else the ``agent_scope``
setting), read through the caller's view — its tenant, and its key's grant (a scope beyond it
is a 403 page). What agents and tools wrote is shown escaped, as data."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from . import view
from .pages import Caller

EXECUTIONS_SHOWN = 100
"""The newest executions the page shows at first (a link shows more)."""


def _scope(caller: Caller, request: Request) -> tuple[str | None, dict[str, Any]]:
    """The scope asked for (None: agent memory's own), and the values every page shows."""
    scope = request.query_params.get("scope") or None
    default = caller.memory.settings.agent_scope
    return scope, {"tenant": caller.memory.tenant, "scope": scope or "", "default_scope": default}


async def executions_page(caller: Caller, request: Request) -> tuple[str, dict[str, Any]]:
    """Recorded executions, newest first (``?workflow=``, ``?agent=``, ``?outcome=success`` or
    ``failure``; ``?limit=`` for more)."""
    query = request.query_params
    scope, shown_with = _scope(caller, request)
    workflow, agent = query.get("workflow", ""), query.get("agent", "")
    outcome = query.get("outcome", "")
    most = caller.memory.settings.max_limit
    shown = view.page_size(query.get("limit"), EXECUTIONS_SHOWN, most - 1)
    found = await caller.memory.executions(
        workflow_id=workflow or None,
        agent_id=agent or None,
        success=view.outcome(outcome),
        limit=shown + 1,
        scope=scope,
    )
    filters = {"scope": scope or "", "workflow": workflow, "agent": agent, "outcome": outcome}
    return "agent_executions.html", {
        **shown_with,
        "executions": found[:shown],
        "more": len(found) > shown,
        "more_url": view.agents_url("executions", **filters, limit=str(min(shown * 2, most - 1))),
        "workflow": workflow,
        "agent": agent,
        "outcome": outcome,
        "filtered": bool(workflow or agent or outcome),
    }


async def strategies_page(caller: Caller, request: Request) -> tuple[str, dict[str, Any]]:
    """Each strategy's record, then each team composition's, over every kind of request and
    per kind (``?kind=`` for one)."""
    scope, shown_with = _scope(caller, request)
    kind = request.query_params.get("kind", "")
    rows = await caller.memory.strategy_stats(kind=kind or None, scope=scope)
    teams = await caller.memory.team_stats(kind=kind or None, scope=scope)
    return "agent_strategies.html", {**shown_with, "rows": rows, "teams": teams, "kind": kind}


async def failures_page(caller: Caller, request: Request) -> tuple[str, dict[str, Any]]:
    """The failure patterns: built in, then learned from recorded failures (most frequent
    first), with their recurring terms and mitigations."""
    scope, shown_with = _scope(caller, request)
    patterns = await caller.memory.failure_patterns(scope=scope)
    return "agent_failures.html", {**shown_with, "patterns": patterns}
