"""Agent memory's operations, each declared once: executions, strategies, teams,
decompositions and failure patterns."""

from __future__ import annotations

from ..agents.choice import StrategyChoice
from ..agents.decompositions import DecompositionPlans
from ..agents.executions import ExecutionPlans
from ..agents.failure_rules import FailureMatch, FailurePattern
from ..agents.failures import FailurePlans
from ..agents.model import Decomposition, Execution, Suggestion
from ..agents.stats import StrategyStats
from ..agents.strategies import StrategyPlans
from ..agents.team import TeamStats, TeamSuggestion
from ..agents.teams import TeamPlans
from ..agents.work_style import WorkStyle
from ..agents.work_styles import WorkStylePlans
from ..rest.answers import Each, Scored, Whole
from ..rest.endpoints import Endpoint
from ..rest.fields import (
    FLAG,
    INTEGER,
    LISTS_OF_OBJECTS,
    NUMBER,
    OBJECTS,
    TEXT,
    TEXT_OR_TEXTS,
    TEXTS,
    TIMESTAMP,
)
from .operation import Operation

AGENTS = "/v1/agents"

RECORD_EXECUTION = Operation(
    ExecutionPlans.record_execution,
    Endpoint(
        "POST",
        f"{AGENTS}/executions",
        {
            "workflow_id": TEXT,
            "agent_id": TEXT,
            "input": TEXT,
            "success": FLAG,
            "output": TEXT,
            "strategy": TEXT,
            "kind": TEXT,
            "task_id": TEXT,
            "parent_id": TEXT,
            "model": TEXT,
            "tokens_in": INTEGER,
            "tokens_out": INTEGER,
            "cost": NUMBER,
            "duration_ms": NUMBER,
            "error_class": TEXT,
            "error_message": TEXT,
            "tool_calls": OBJECTS,
            "team": OBJECTS,
            "session_id": TEXT,
            "user_id": TEXT,
            "scope": TEXT,
        },
        required=("workflow_id", "agent_id", "input", "success"),
        status=201,
        answer="the execution as recorded (redacted)",
    ),
    Whole(Execution),
)
EXECUTIONS = Operation(
    ExecutionPlans.executions,
    Endpoint(
        "GET",
        f"{AGENTS}/executions",
        query={
            "workflow_id": TEXT,
            "agent_id": TEXT,
            "task_id": TEXT,
            "strategy": TEXT,
            "kind": TEXT,
            "success": FLAG,
            "since": TIMESTAMP,
            "until": TIMESTAMP,
            "limit": INTEGER,
            "scope": TEXT,
        },
        answer="the executions, newest first",
    ),
    Each("executions", Execution),
)
SEARCH_EXECUTIONS = Operation(
    ExecutionPlans.search_executions,
    Endpoint(
        "POST",
        f"{AGENTS}/executions/search",
        {
            "query": TEXT,
            "limit": INTEGER,
            "agent_id": TEXT,
            "workflow_id": TEXT,
            "success": FLAG,
            "scope": TEXT,
        },
        required=("query",),
        answer="past executions like the query, best first, with their scores",
        reads=True,
    ),
    Scored("hits", Execution),
)
STRATEGY_STATS = Operation(
    StrategyPlans.strategy_stats,
    Endpoint(
        "GET",
        f"{AGENTS}/strategies",
        query={"kind": TEXT, "scope": TEXT},
        answer="each strategy's statistics, overall and per kind of request",
    ),
    Each("strategies", StrategyStats),
)
CHOOSE_STRATEGY = Operation(
    StrategyPlans.choose_strategy,
    Endpoint(
        "POST",
        f"{AGENTS}/strategies/choose",
        {
            "candidates": TEXTS,
            "query": TEXT,
            "kind": TEXT,
            "epsilon": NUMBER,
            "prefer": TEXT,
            "user": TEXT,
            "seed": INTEGER,
            "scope": TEXT,
        },
        required=("candidates",),
        answer="the strategy to run, and why",
        reads=True,
    ),
    Whole(StrategyChoice),
)
RECORD_TEAM = Operation(
    TeamPlans.record_team,
    Endpoint(
        "POST",
        f"{AGENTS}/teams",
        {
            "kind": TEXT,
            "agents": OBJECTS,
            "success": FLAG,
            "tokens": INTEGER,
            "duration_ms": NUMBER,
            "cost": NUMBER,
            "workflow_id": TEXT,
            "scope": TEXT,
        },
        required=("kind", "agents", "success"),
        status=201,
        answer="the composition's statistics on that kind of request, this run counted",
    ),
    Whole(TeamStats),
)
TEAM_STATS = Operation(
    TeamPlans.team_stats,
    Endpoint(
        "GET",
        f"{AGENTS}/teams",
        query={"kind": TEXT, "scope": TEXT},
        answer="each team composition's statistics, overall and per kind of request",
    ),
    Each("teams", TeamStats),
)
SUGGEST_TEAM = Operation(
    TeamPlans.suggest_team,
    Endpoint(
        "POST",
        f"{AGENTS}/teams/suggest",
        {
            "kind": TEXT,
            "query": TEXT,
            "candidates": LISTS_OF_OBJECTS,
            "epsilon": NUMBER,
            "prefer": TEXT,
            "user": TEXT,
            "limit": INTEGER,
            "seed": INTEGER,
            "scope": TEXT,
        },
        answer="the team to run, why, and the compositions that worked, best first",
        reads=True,
    ),
    Whole(TeamSuggestion),
)
USER_PREFERENCES = Operation(
    WorkStylePlans.user_preferences,
    Endpoint(
        "GET",
        f"{AGENTS}/users/{{user_id}}/preferences",
        answer="the user's inferred expertise and speed/accuracy leaning, with their evidence",
    ),
    Whole(WorkStyle),
)
REMEMBER_WORK_STYLE = Operation(
    WorkStylePlans.remember_work_style,
    Endpoint(
        "POST",
        f"{AGENTS}/users/{{user_id}}/preferences/remember",
        {"remember": FLAG},
        answer="the user's work style, kept across inactivity (or not)",
    ),
    Whole(WorkStyle),
)
RECORD_DECOMPOSITION = Operation(
    DecompositionPlans.record_decomposition,
    Endpoint(
        "POST",
        f"{AGENTS}/decompositions",
        {
            "query": TEXT,
            "subtasks": TEXTS,
            "strategy": TEXT,
            "success": FLAG,
            "tokens": INTEGER,
            "duration_ms": NUMBER,
            "session_id": TEXT,
            "user_id": TEXT,
            "scope": TEXT,
        },
        required=("query", "subtasks"),
        status=201,
        answer="the decomposition, with every use of it so far",
    ),
    Whole(Decomposition),
)
SUGGEST_DECOMPOSITION = Operation(
    DecompositionPlans.suggest_decomposition,
    Endpoint(
        "POST",
        f"{AGENTS}/decompositions/suggest",
        {"query": TEXT, "limit": INTEGER, "min_similarity": NUMBER, "scope": TEXT},
        required=("query",),
        answer="past decompositions of similar requests that worked (empty: none fits)",
        reads=True,
    ),
    Each("suggestions", Suggestion),
)
FAILURE_PATTERNS = Operation(
    FailurePlans.failure_patterns,
    Endpoint(
        "GET",
        f"{AGENTS}/failures",
        query={"scope": TEXT},
        answer="the built-in failure patterns, then the learned ones",
    ),
    Each("patterns", FailurePattern),
)
CHECK_FAILURES = Operation(
    FailurePlans.check_failures,
    Endpoint(
        "POST",
        f"{AGENTS}/failures/check",
        {"query": TEXT, "plan": TEXT_OR_TEXTS, "scope": TEXT},
        required=("query",),
        answer="the failure patterns the request (and plan) shows signs of, with mitigations",
        reads=True,
    ),
    Each("matches", FailureMatch),
)

OPERATIONS = (
    RECORD_EXECUTION,
    EXECUTIONS,
    SEARCH_EXECUTIONS,
    STRATEGY_STATS,
    CHOOSE_STRATEGY,
    RECORD_TEAM,
    TEAM_STATS,
    SUGGEST_TEAM,
    USER_PREFERENCES,
    REMEMBER_WORK_STYLE,
    RECORD_DECOMPOSITION,
    SUGGEST_DECOMPOSITION,
    FAILURE_PATTERNS,
    CHECK_FAILURES,
)
