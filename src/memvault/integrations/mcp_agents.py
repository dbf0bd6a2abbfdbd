"""Agent memory's MCP tools (``docs/mcp.md``): record an execution, choose a strategy, suggest
and record a team, suggest and record a decomposition, check a request for failure patterns.

Their answers read as :mod:`.agent_text` writes them (agents' and tools' words quoted as data);
the structured content holds every value whole.

A tool is one function under :func:`~memvault.integrations.mcp.tool` in
:func:`add_agent_tools`: its arguments (annotated), a description an agent can act on, and one
line that calls the operation and renders its result (:func:`told`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal, TypeVar

from ..agents.choice import StrategyChoice
from ..agents.failure_rules import FailureMatch
from ..agents.model import Decomposition, Execution, Suggestion
from ..agents.team import TeamStats, TeamSuggestion
from ..agents.work_style import WorkStyle
from ..errors import extra_needed
from .agent_text import (
    choice_text,
    decomposition_text,
    execution_text,
    matches_text,
    suggestions_text,
    team_record_text,
    team_text,
    work_style_text,
)

try:
    from mcp.server import MCPServer
    from mcp.types import CallToolResult
    from pydantic import Field
except ImportError as missing:  # pragma: no cover - exercised without the extra
    raise extra_needed(missing, "mcp", "the MCP server") from None

from .mcp import READ_ONLY, WRITES, Answer, Ctx, Run, tool

T = TypeVar("T")


async def told(
    result: Awaitable[T], text: Callable[[T], str], data: Callable[[T], dict[str, Any]]
) -> Answer:
    """An operation's ``result`` as the answer of a tool: ``text`` and structured ``data``."""
    found = await result
    return text(found), data(found)


def listed(key: str, to_dict: Callable[[T], dict[str, Any]]) -> Callable[[list[T]], dict[str, Any]]:
    """The structured content of a list: ``{key: [item, …]}``."""
    return lambda items: {key: [to_dict(item) for item in items]}


# -- the tools ----------------------------------------------------------------------------------


AgentScope = Annotated[
    str | None,
    Field(
        description="Agent memory's scope, written kind:id (default workspace:agents); one "
        "per team, product or orchestrator keeps their records apart.",
        examples=["workspace:agents"],
    ),
]
Name = Annotated[str | None, Field(description="A name: 1 to 256 printable characters.")]
Strategy = Annotated[
    str | None,
    Field(description="The strategy it ran, as choose_strategy names it.", examples=["react"]),
]
Kind = Annotated[
    str | None,
    Field(
        description="The kind of request (lookup, coding, research…): statistics are kept per "
        "kind.",
        examples=["lookup"],
    ),
]
Tokens = Annotated[int, Field(description="Tokens (0 or more).", ge=0)]
Milliseconds = Annotated[float, Field(description="How long it took, in milliseconds.", ge=0)]
Request = Annotated[str, Field(description="The request, in its own words.")]
Prefer = Annotated[
    Literal["balanced", "speed", "accuracy"] | None,
    Field(
        description="What the best is best at: success alone (accuracy), also time (speed), or "
        "time and tokens (balanced); none: the user's leaning (with user), else balanced."
    ),
]
User = Annotated[
    str | None,
    Field(description="Whose request: their inferred speed/accuracy leaning applies."),
]


def add_agent_tools(server: MCPServer[Any], run: Run) -> None:
    """record_execution, choose_strategy, suggest_team, record_team, user_preferences,
    suggest_decomposition, record_decomposition, check_failures: the memory an orchestrator
    keeps of its own work."""

    @tool(server, WRITES)
    async def record_execution(
        *,
        workflow_id: Annotated[
            str, Field(description="The workflow (job, conversation) the run belonged to.")
        ],
        agent_id: Annotated[
            str, Field(description="Who ran: you, a sub-agent, or a tool, by a stable name.")
        ],
        input: Annotated[str, Field(description="What it was asked (searchable later).")],
        success: Annotated[bool, Field(description="Whether it worked.")],
        ctx: Ctx,
        output: Annotated[str, Field(description="What it answered (searchable later).")] = "",
        strategy: Strategy = None,
        kind: Kind = None,
        task_id: Name = None,
        parent_id: Annotated[
            str | None, Field(description="The id of the execution that started this one.")
        ] = None,
        model: Annotated[str | None, Field(description="The model it used.")] = None,
        tokens_in: Tokens = 0,
        tokens_out: Tokens = 0,
        cost: Annotated[
            float, Field(description="What it cost, in one currency throughout.", ge=0)
        ] = 0.0,
        duration_ms: Milliseconds = 0.0,
        error_class: Annotated[
            str | None,
            Field(
                description="On failure, the error's class: failures are learned per class.",
                examples=["RateLimitError", "ContextLengthExceeded"],
            ),
        ] = None,
        error_message: Annotated[str | None, Field(description="On failure, its message.")] = None,
        tool_calls: Annotated[
            list[dict[str, Any]] | None,
            Field(
                description='The tools it called, each {"name", "parameters" (an object), '
                '"output", "success", "duration_ms"}; only "name" is required.',
            ),
        ] = None,
        session_id: Annotated[
            str | None, Field(description="The memvault session whose request it served.")
        ] = None,
        user_id: Annotated[
            str | None, Field(description="The user whose request it served (erasable).")
        ] = None,
        scope: AgentScope = None,
    ) -> CallToolResult:
        """Record one run of an agent or a tool (yours, a sub-agent's) so agent memory learns
        from it.

        Call it after each run that matters, whether it worked or not: its strategy's
        statistics (which choose_strategy reads) and, for a failure with an error_class, the
        failure patterns (which check_failures reads) learn from it, and its input and output
        become searchable. Personal data in the text is redacted.
        Example: {"workflow_id": "wf-42", "agent_id": "researcher", "input": "Find the three
        largest customers", "output": "ACME, Globex, Initech", "success": true, "strategy":
        "react", "kind": "lookup", "tokens_in": 1200, "tokens_out": 80, "duration_ms": 2150}.
        Returns the execution's id and what it was counted in.
        """
        return await run(
            ctx,
            lambda m: told(
                m.record_execution(
                    workflow_id=workflow_id,
                    agent_id=agent_id,
                    input=input,
                    success=success,
                    output=output,
                    strategy=strategy,
                    kind=kind,
                    task_id=task_id,
                    parent_id=parent_id,
                    model=model,
                    tokens_in=tokens_in,
                    tokens_out=tokens_out,
                    cost=cost,
                    duration_ms=duration_ms,
                    error_class=error_class,
                    error_message=error_message,
                    tool_calls=tool_calls or (),
                    session_id=session_id,
                    user_id=user_id,
                    scope=scope,
                ),
                execution_text,
                Execution.to_dict,
            ),
        )

    @tool(server, READ_ONLY)
    async def choose_strategy(
        *,
        candidates: Annotated[
            list[str],
            Field(
                description="The strategies you could run, in order of preference.", min_length=1
            ),
        ],
        ctx: Ctx,
        query: Annotated[
            str | None,
            Field(description="The request: without a kind, that of similar past requests."),
        ] = None,
        kind: Kind = None,
        epsilon: Annotated[
            float, Field(description="How often to pick at random, to keep learning.", ge=0, le=1)
        ] = 0.1,
        prefer: Prefer = None,
        user: User = None,
        seed: Annotated[int | None, Field(description="Makes the random draw repeatable.")] = None,
        scope: AgentScope = None,
    ) -> CallToolResult:
        """Choose which strategy to run for a request, from how each has done before.

        Call it before a task you can solve more than one way: pass the candidate strategies and
        the request's kind (or the request). A candidate never run is tried first; otherwise
        mostly the best on record, sometimes (epsilon) one at random to keep learning.
        Example: {"candidates": ["react", "plan_and_execute"], "kind": "lookup"}.
        Returns the strategy to run and why; after the run, call record_execution with it.
        """
        return await run(
            ctx,
            lambda m: told(
                m.choose_strategy(
                    candidates,
                    query=query,
                    kind=kind,
                    epsilon=epsilon,
                    prefer=prefer,
                    user=user,
                    seed=seed,
                    scope=scope,
                ),
                choice_text,
                StrategyChoice.to_dict,
            ),
        )

    @tool(server, READ_ONLY)
    async def suggest_team(
        *,
        ctx: Ctx,
        kind: Kind = None,
        query: Annotated[
            str | None,
            Field(description="The request: without a kind, that of similar past requests."),
        ] = None,
        candidates: Annotated[
            list[list[dict[str, Any]]] | None,
            Field(
                description="Teams you could run, each a list of members "
                '{"role", "agent_id", "model"?}; none: among those that worked before.'
            ),
        ] = None,
        epsilon: Annotated[
            float, Field(description="How often to pick at random, to keep learning.", ge=0, le=1)
        ] = 0.0,
        prefer: Prefer = None,
        user: User = None,
        limit: Annotated[int, Field(description="Most compositions to rank.", ge=1, le=100)] = 5,
        seed: Annotated[int | None, Field(description="Makes the random draw repeatable.")] = None,
        scope: AgentScope = None,
    ) -> CallToolResult:
        """Suggest which team of agents to run for a kind of request, from how teams did before.

        Call it before assembling agents (roles, which agent fills each, on which model) for a
        task: the compositions that worked on this kind of request are ranked, best first; with
        candidates, one never run is tried first. Example: {"kind": "code_review",
        "candidates": [[{"role": "coder", "agent_id": "c-1"}, {"role": "reviewer", "agent_id":
        "r-1"}]]}. Returns the team to run and why; after the run, call record_team.
        """
        return await run(
            ctx,
            lambda m: told(
                m.suggest_team(
                    kind=kind,
                    query=query,
                    candidates=candidates,
                    epsilon=epsilon,
                    prefer=prefer,
                    user=user,
                    limit=limit,
                    seed=seed,
                    scope=scope,
                ),
                team_text,
                TeamSuggestion.to_dict,
            ),
        )

    @tool(server, WRITES)
    async def record_team(
        *,
        kind: Annotated[str, Field(description="The kind of request the team ran on.")],
        agents: Annotated[
            list[dict[str, Any]],
            Field(
                description='Its members, each {"role", "agent_id", "model"?}, in any order.',
                min_length=1,
            ),
        ],
        success: Annotated[bool, Field(description="Whether the team's run worked.")],
        ctx: Ctx,
        tokens: Tokens = 0,
        duration_ms: Milliseconds = 0.0,
        cost: Annotated[
            float, Field(description="What it cost, in one currency throughout.", ge=0)
        ] = 0.0,
        workflow_id: Annotated[str | None, Field(description="The workflow it ran.")] = None,
        scope: AgentScope = None,
    ) -> CallToolResult:
        """Record how a team of agents did on a request, so that suggest_team learns.

        Call it after a run of several agents, whether it worked or not. Example: {"kind":
        "code_review", "agents": [{"role": "coder", "agent_id": "c-1"}, {"role": "reviewer",
        "agent_id": "r-1", "model": "large"}], "success": true, "tokens": 5400, "duration_ms":
        61000}. Returns the team's record on that kind so far.
        """
        return await run(
            ctx,
            lambda m: told(
                m.record_team(
                    kind=kind,
                    agents=agents,
                    success=success,
                    tokens=tokens,
                    duration_ms=duration_ms,
                    cost=cost,
                    workflow_id=workflow_id,
                    scope=scope,
                ),
                team_record_text,
                TeamStats.to_dict,
            ),
        )

    @tool(server, READ_ONLY)
    async def user_preferences(
        user_id: Annotated[str, Field(description="The user whose way of working to read.")],
        ctx: Ctx,
    ) -> CallToolResult:
        """Read how a user prefers work done: their inferred expertise and speed/accuracy
        leaning.

        Call it at the start of a task for a user, to pitch answers to their level (novice,
        intermediate, expert) and to decide between a quick answer and a careful one. Inferred
        from their own messages and runs, with the evidence; reset after a day of inactivity
        unless they opted in. Example: {"user_id": "alice"}. Returns each inference with its
        confidence and evidence.
        """
        return await run(
            ctx,
            lambda m: told(m.user_preferences(user_id), work_style_text, WorkStyle.to_dict),
        )

    @tool(server, READ_ONLY)
    async def suggest_decomposition(
        query: Request,
        ctx: Ctx,
        limit: Annotated[int, Field(description="Most suggestions.", ge=1, le=100)] = 5,
        min_similarity: Annotated[
            float, Field(description="Least cosine to a past request.", ge=-1, le=1)
        ] = 0.8,
        scope: AgentScope = None,
    ) -> CallToolResult:
        """Find how similar requests were broken into subtasks before, and which breakdowns
        worked.

        Call it before planning a request of several steps: a decomposition that worked for a
        similar request can be reused or adapted. Example: {"query": "Plan a three-day trip to
        Kyoto in May"}. Returns past decompositions with their subtasks, similarity and record,
        best first; none means plan it yourself (then call record_decomposition).
        """
        return await run(
            ctx,
            lambda m: told(
                m.suggest_decomposition(
                    query, limit=limit, min_similarity=min_similarity, scope=scope
                ),
                suggestions_text,
                listed("suggestions", Suggestion.to_dict),
            ),
        )

    @tool(server, WRITES)
    async def record_decomposition(
        *,
        query: Request,
        subtasks: Annotated[
            list[str], Field(description="The subtasks it was broken into, in order.", min_length=1)
        ],
        ctx: Ctx,
        strategy: Strategy = None,
        success: Annotated[bool, Field(description="Whether the plan worked.")] = True,
        tokens: Tokens = 0,
        duration_ms: Milliseconds = 0.0,
        session_id: Annotated[
            str | None, Field(description="The memvault session whose request it was.")
        ] = None,
        user_id: Annotated[
            str | None, Field(description="The user whose request it was (erasable).")
        ] = None,
        scope: AgentScope = None,
    ) -> CallToolResult:
        """Record how a request was broken into subtasks, and how that went.

        Call it after running a plan of subtasks, whether it worked or not: suggest_decomposition
        offers the breakdowns that worked for similar requests later. The same request broken
        the same way again adds to its runs. Example: {"query": "Plan a three-day trip to Kyoto
        in May", "subtasks": ["find flights", "book a hotel near Gion", "draft a day-by-day
        plan"], "success": true}. Returns its record so far.
        """
        return await run(
            ctx,
            lambda m: told(
                m.record_decomposition(
                    query,
                    subtasks,
                    strategy=strategy,
                    success=success,
                    tokens=tokens,
                    duration_ms=duration_ms,
                    session_id=session_id,
                    user_id=user_id,
                    scope=scope,
                ),
                decomposition_text,
                Decomposition.to_dict,
            ),
        )

    @tool(server, READ_ONLY)
    async def check_failures(
        query: Request,
        ctx: Ctx,
        plan: Annotated[
            str | list[str] | None, Field(description="Your plan for it: a text or its steps.")
        ] = None,
        scope: AgentScope = None,
    ) -> CallToolResult:
        """Check a request (and your plan for it) against known failure patterns before running.

        Call it before a run that would be costly to fail: built-in patterns (rate limits,
        context overflow, ambiguous requests) and those learned from recorded failures
        (record_execution with an error_class) are matched against the request and plan.
        Example: {"query": "Summarise every page of the wiki in parallel", "plan": ["list the
        pages", "summarise each page"]}. Returns each matching pattern, what matched and its
        mitigation; none means no known risk.
        """
        return await run(
            ctx,
            lambda m: told(
                m.check_failures(query, plan, scope=scope),
                matches_text,
                listed("matches", FailureMatch.to_dict),
            ),
        )
