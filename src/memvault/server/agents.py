"""REST routes of agent memory: executions, strategies, decompositions, failure patterns."""

from __future__ import annotations

from ..memory import AsyncMemory
from ..rest import endpoints as api
from .routes import Answer, Call, Route


async def record_execution(memory: AsyncMemory, call: Call) -> Answer:
    """Record a run of an agent or a tool (and fold it into its strategy's statistics)."""
    return 201, (await memory.record_execution(**call.args)).to_dict()


async def executions(memory: AsyncMemory, call: Call) -> Answer:
    """Recorded executions, newest first."""
    return 200, {"executions": [e.to_dict() for e in await memory.executions(**call.args)]}


async def search_executions(memory: AsyncMemory, call: Call) -> Answer:
    """Past executions like a query."""
    found = await memory.search_executions(**call.args)
    return 200, {"hits": [{"score": score, **e.to_dict()} for e, score in found]}


async def strategies(memory: AsyncMemory, call: Call) -> Answer:
    """Each strategy's statistics."""
    return 200, {"strategies": [s.to_dict() for s in await memory.strategy_stats(**call.args)]}


async def choose_strategy(memory: AsyncMemory, call: Call) -> Answer:
    """The strategy to run, epsilon-greedy, and why."""
    args = dict(call.args)
    return 200, (await memory.choose_strategy(args.pop("candidates"), **args)).to_dict()


async def record_decomposition(memory: AsyncMemory, call: Call) -> Answer:
    """Record how a request was broken into subtasks, and how that went."""
    args = dict(call.args)
    query, subtasks = args.pop("query"), args.pop("subtasks")
    return 201, (await memory.record_decomposition(query, subtasks, **args)).to_dict()


async def suggest_decomposition(memory: AsyncMemory, call: Call) -> Answer:
    """Past decompositions of similar requests."""
    args = dict(call.args)
    found = await memory.suggest_decomposition(args.pop("query"), **args)
    return 200, {"suggestions": [s.to_dict() for s in found]}


async def failure_patterns(memory: AsyncMemory, call: Call) -> Answer:
    """The failure patterns, built-in and learned."""
    return 200, {"patterns": [p.to_dict() for p in await memory.failure_patterns(**call.args)]}


async def check_failures(memory: AsyncMemory, call: Call) -> Answer:
    """The failure patterns a request shows signs of."""
    args = dict(call.args)
    found = await memory.check_failures(args.pop("query"), **args)
    return 200, {"matches": [m.to_dict() for m in found]}


ROUTES = (
    Route(api.RECORD_EXECUTION, record_execution),
    Route(api.EXECUTIONS, executions),
    Route(api.SEARCH_EXECUTIONS, search_executions),
    Route(api.STRATEGIES, strategies),
    Route(api.CHOOSE_STRATEGY, choose_strategy),
    Route(api.RECORD_DECOMPOSITION, record_decomposition),
    Route(api.SUGGEST_DECOMPOSITION, suggest_decomposition),
    Route(api.FAILURE_PATTERNS, failure_patterns),
    Route(api.CHECK_FAILURES, check_failures),
)
