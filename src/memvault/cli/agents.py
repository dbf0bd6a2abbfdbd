"""Commands of agent memory: executions, strategies, teams, decompositions, failure patterns;
and ``memvault stats strategies``/``teams``, the tables of their records."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from ..agents.choice import PREFERENCES
from ..agents.failure_rules import FailureMatch
from ..agents.model import Execution, Suggestion
from ..agents.stats import StrategyStats, Tally
from ..agents.team import Member, TeamStats
from .app import cli
from .common import datetime_option, emit, json_object, open_memory


def _json_objects(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> list[dict[str, Any]]:
    return [parsed for value in values if (parsed := json_object(ctx, param, value)) is not None]


scope_flag = click.option("--scope", help="Agent memory's scope (default: workspace:agents).")


def _number(value: float | None, unit: str = "") -> str:
    return "-" if value is None else f"{value:,.0f}{unit}"


FIGURES = ("runs", "success", "tokens", "p95 tokens", "ms", "p95 ms")


def _figures(row: Tally) -> tuple[str, ...]:
    return (
        str(row.runs),
        "-" if row.success_rate is None else f"{row.success_rate:.0%}",
        _number(row.tokens.mean),
        _number(row.tokens.quantile(0.95)),
        _number(row.duration_ms.mean),
        _number(row.duration_ms.quantile(0.95)),
    )


def _table(header: tuple[str, ...], lines: list[tuple[str, ...]], named: int = 2) -> str:
    """Columns aligned: the first ``named`` to the left, the figures to the right."""
    lines = [header, *lines]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    return "\n".join(
        "  ".join(
            cell.ljust(w) if i < named else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(line, widths, strict=True))
        ).rstrip()
        for line in lines
    )


def strategy_table(rows: Sequence[StrategyStats]) -> str:
    """Each strategy's record, one line per strategy and kind (``*``: every kind)."""
    if not rows:
        return "no strategy has run yet"
    return _table(
        ("strategy", "kind", *FIGURES), [(s.strategy, s.kind, *_figures(s)) for s in rows]
    )


def team_table(rows: Sequence[TeamStats]) -> str:
    """Each team composition's record, one line per composition and kind."""
    if not rows:
        return "no team has run yet"
    return _table(("kind", "team", *FIGURES), [(t.kind, str(t.team), *_figures(t)) for t in rows])


def _members(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> list[Member]:
    """``ROLE=AGENT`` or ``ROLE=AGENT@MODEL`` members."""
    members = []
    for value in values:
        role, _, agent = value.partition("=")
        agent_id, _, model = agent.partition("@")
        if not role or not agent_id:
            raise click.BadParameter(f"{value!r}: expected ROLE=AGENT or ROLE=AGENT@MODEL")
        members.append(Member(role, agent_id, model or None))
    return members


member_option = click.option(
    "--member",
    "agents",
    multiple=True,
    required=True,
    callback=_members,
    metavar="ROLE=AGENT[@MODEL]",
    help="A member of the team (repeat for each).",
)


def execution_line(execution: Execution) -> str:
    outcome = "ok" if execution.success else f"FAILED {execution.error_class or ''}".rstrip()
    text = " ".join(execution.input.split())
    text = text if len(text) <= 60 else text[:59] + "…"
    return (
        f"{execution.id}  {execution.created_at:%Y-%m-%d %H:%M}  {execution.workflow_id}/"
        f"{execution.agent_id}  {execution.strategy or '-'}  {outcome}  "
        f"{execution.tokens} tok  {execution.duration_ms:,.0f} ms  {text}"
    )


def suggestion_block(suggestion: Suggestion) -> str:
    found = suggestion.decomposition
    steps = "\n".join(f"  {n}. {step}" for n, step in enumerate(found.subtasks, 1))
    return (
        f"{found.query}  (similarity {suggestion.similarity:.2f}, "
        f"{found.successes}/{found.runs} succeeded)\n{steps}"
    )


def match_block(match: FailureMatch) -> str:
    return (
        f"{match.pattern.name}: {match.pattern.description} (seen in: {', '.join(match.matched)})"
        f"\n  mitigation: {match.mitigation}"
    )


@cli.group()
def stats() -> None:
    """Tables of what the store has learned."""


@stats.command("strategies")
@click.option("--kind", help="Only this kind of request.")
@scope_flag
@click.pass_context
def stats_strategies(ctx: click.Context, kind: str | None, scope: str | None) -> None:
    """Each strategy's runs, success rate, mean and p95 tokens and duration."""
    rows = open_memory(ctx).strategy_stats(kind=kind, scope=scope)
    emit(ctx, [row.to_dict() for row in rows], strategy_table(rows))


@stats.command("teams")
@click.option("--kind", help="Only this kind of request.")
@scope_flag
@click.pass_context
def stats_teams(ctx: click.Context, kind: str | None, scope: str | None) -> None:
    """Each team composition's runs, success rate, mean and p95 tokens and duration."""
    rows = open_memory(ctx).team_stats(kind=kind, scope=scope)
    emit(ctx, [row.to_dict() for row in rows], team_table(rows))


@cli.group()
def agents() -> None:
    """Agent memory: executions, strategies, teams, decompositions, failure patterns."""


@agents.command("record")
@click.option("--workflow", "workflow_id", required=True, help="The workflow's id.")
@click.option("--agent", "agent_id", required=True, help="The agent's (or tool's) id.")
@click.option("--input", "input_text", required=True, help="What it was asked.")
@click.option("--output", default="", help="What it answered.")
@click.option("--success/--failure", required=True, help="Whether it worked.")
@click.option("--strategy", help="The strategy it ran.")
@click.option("--kind", help="The kind of request.")
@click.option("--task", "task_id", help="The task's id.")
@click.option("--parent", "parent_id", help="The parent execution's id.")
@click.option("--model", help="The model it used.")
@click.option("--tokens-in", type=click.IntRange(min=0), default=0, help="Tokens sent.")
@click.option("--tokens-out", type=click.IntRange(min=0), default=0, help="Tokens received.")
@click.option("--cost", type=click.FloatRange(min=0), default=0.0, help="What it cost.")
@click.option("--duration-ms", type=click.FloatRange(min=0), default=0.0, help="How long.")
@click.option("--error-class", help="The class of error it failed with.")
@click.option("--error-message", help="The error's message.")
@click.option(
    "--tool-call",
    "tool_calls",
    multiple=True,
    callback=_json_objects,
    metavar="JSON",
    help='A tool call as JSON, e.g. {"name": "sql", "parameters": {…}, "output": "…"} (repeat).',
)
@click.option("--session", "session_id", help="The session whose request it served.")
@click.option("--user", "user_id", help="The user whose request it served.")
@scope_flag
@click.pass_context
def record(ctx: click.Context, /, input_text: str, **fields: Any) -> None:
    """Record one run of an agent or a tool; print its id."""
    execution = open_memory(ctx).record_execution(input=input_text, **fields)
    emit(ctx, execution.to_dict(), execution.id)


@agents.command("executions")
@click.option("--workflow", "workflow_id", help="Only this workflow's.")
@click.option("--agent", "agent_id", help="Only this agent's.")
@click.option("--task", "task_id", help="Only this task's.")
@click.option("--strategy", help="Only this strategy's.")
@click.option("--kind", help="Only this kind of request.")
@click.option("--success/--failure", default=None, help="Only those that worked (or failed).")
@datetime_option("--since", help="Recorded at or after.")
@datetime_option("--until", help="Recorded before.")
@click.option("--limit", type=int, default=20, show_default=True, help="Most to show.")
@scope_flag
@click.pass_context
def executions(ctx: click.Context, /, **filters: Any) -> None:
    """Recorded executions, newest first."""
    found = open_memory(ctx).executions(**filters)
    text = "\n".join(execution_line(e) for e in found) or "no executions"
    emit(ctx, [e.to_dict() for e in found], text)


@agents.command("search")
@click.argument("query")
@click.option("--limit", type=int, default=10, show_default=True, help="Most to show.")
@click.option("--agent", "agent_id", help="Only this agent's.")
@click.option("--workflow", "workflow_id", help="Only this workflow's.")
@click.option("--success/--failure", default=None, help="Only those that worked (or failed).")
@scope_flag
@click.pass_context
def search(ctx: click.Context, /, query: str, **options: Any) -> None:
    """Past executions like QUERY: have we answered something like this before?"""
    found = open_memory(ctx).search_executions(query, **options)
    text = "\n".join(f"{score:.3f}  {execution_line(e)}" for e, score in found)
    emit(ctx, [{"score": s, **e.to_dict()} for e, s in found], text or "nothing like it")


@agents.command("choose")
@click.argument("candidates", nargs=-1, required=True)
@click.option("--query", help="The request (its kind: that of similar past requests).")
@click.option("--kind", help="The kind of request.")
@click.option(
    "--epsilon",
    type=click.FloatRange(0, 1),
    default=0.1,
    show_default=True,
    help="How often to explore: pick at random.",
)
@click.option(
    "--prefer",
    type=click.Choice(PREFERENCES),
    help="What the best strategy is best at (default: --user's leaning, else balanced).",
)
@click.option("--user", help="Whose request: their leaning decides when --prefer is not given.")
@click.option("--seed", type=int, help="Make the random draw repeatable.")
@scope_flag
@click.pass_context
def choose(ctx: click.Context, /, candidates: tuple[str, ...], **options: Any) -> None:
    """Which of CANDIDATES to run (epsilon-greedy on their record), and why."""
    choice = open_memory(ctx).choose_strategy(list(candidates), **options)
    emit(ctx, choice.to_dict(), f"{choice.strategy}\n{choice.explanation}")


@agents.command("team")
@member_option
@click.option("--kind", required=True, help="The kind of request it ran on.")
@click.option("--success/--failure", required=True, help="Whether it worked.")
@click.option("--tokens", type=click.IntRange(min=0), default=0, help="Tokens it took.")
@click.option("--duration-ms", type=click.FloatRange(min=0), default=0.0, help="How long.")
@click.option("--cost", type=click.FloatRange(min=0), default=0.0, help="What it cost.")
@click.option("--workflow", "workflow_id", help="The workflow it ran.")
@scope_flag
@click.pass_context
def team(ctx: click.Context, /, **fields: Any) -> None:
    """Record one run of a team; print its composition's record on that kind."""
    row = open_memory(ctx).record_team(**fields)
    emit(ctx, row.to_dict(), f"{row.team}: {row.successes}/{row.runs} succeeded on {row.kind}")


@agents.command("suggest-team")
@click.option("--kind", help="The kind of request.")
@click.option("--query", help="The request (its kind: that of similar past requests).")
@click.option(
    "--epsilon",
    type=click.FloatRange(0, 1),
    default=0.0,
    show_default=True,
    help="How often to explore: pick at random.",
)
@click.option(
    "--prefer",
    type=click.Choice(PREFERENCES),
    help="What the best team is best at (default: --user's leaning, else balanced).",
)
@click.option("--user", help="Whose request: their leaning decides when --prefer is not given.")
@click.option("--limit", type=int, default=5, show_default=True, help="Most to rank.")
@click.option("--seed", type=int, help="Make the random draw repeatable.")
@scope_flag
@click.pass_context
def suggest_team(ctx: click.Context, /, **options: Any) -> None:
    """The team composition to run on a kind of request, and why."""
    found = open_memory(ctx).suggest_team(**options)
    lines = [str(found.team) if found.team else "-", found.explanation]
    lines += [f"  {r.utility:.3f}  {r.stats.team}" for r in found.ranked]
    emit(ctx, found.to_dict(), "\n".join(lines))


@agents.command("work-style")
@click.argument("user_id")
@click.option(
    "--remember/--no-remember",
    default=None,
    help="Keep it across inactivity (opt in), or let it reset after 24 h again.",
)
@click.pass_context
def work_style(ctx: click.Context, user_id: str, remember: bool | None) -> None:
    """What USER_ID prefers in how work is done (inferred), with the evidence."""
    memory = open_memory(ctx)
    if remember is not None:
        style = memory.remember_work_style(user_id, remember)
    else:
        style = memory.user_preferences(user_id)
    lines = []
    for name, judged in (("expertise", style.expertise), ("leaning", style.leaning)):
        lines.append(f"{name}: {judged.value} (confidence {judged.confidence:.2f})")
        lines += [f"  {line}" for line in judged.evidence]
    lines.append("remembered" if style.remembered else f"resets at {style.resets_at or '-'}")
    emit(ctx, style.to_dict(), "\n".join(lines))


@agents.command("decompose")
@click.argument("query")
@click.argument("subtasks", nargs=-1, required=True)
@click.option("--strategy", help="The strategy that ran it.")
@click.option("--success/--failure", default=True, show_default=True, help="How it went.")
@click.option("--tokens", type=click.IntRange(min=0), default=0, help="Tokens it took.")
@click.option("--duration-ms", type=click.FloatRange(min=0), default=0.0, help="How long.")
@click.option("--session", "session_id", help="The session whose request it was.")
@click.option("--user", "user_id", help="The user whose request it was.")
@scope_flag
@click.pass_context
def decompose(ctx: click.Context, /, query: str, subtasks: tuple[str, ...], **options: Any) -> None:
    """Record that QUERY was broken into SUBTASKS (and how that went)."""
    found = open_memory(ctx).record_decomposition(query, list(subtasks), **options)
    emit(ctx, found.to_dict(), f"{found.id}: {found.successes}/{found.runs} succeeded")


@agents.command("suggest")
@click.argument("query")
@click.option("--limit", type=int, default=5, show_default=True, help="Most to show.")
@click.option(
    "--min-similarity",
    type=click.FloatRange(-1, 1),
    default=0.8,
    show_default=True,
    help="Least cosine between QUERY and a past request.",
)
@scope_flag
@click.pass_context
def suggest(ctx: click.Context, /, query: str, **options: Any) -> None:
    """Past decompositions that worked for requests like QUERY."""
    found = open_memory(ctx).suggest_decomposition(query, **options)
    text = "\n".join(suggestion_block(s) for s in found) or "no similar request was decomposed"
    emit(ctx, [s.to_dict() for s in found], text)


@agents.command("failures")
@scope_flag
@click.pass_context
def failures(ctx: click.Context, scope: str | None) -> None:
    """The failure patterns: built in, then learned from recorded failures."""
    patterns = open_memory(ctx).failure_patterns(scope=scope)
    text = "\n".join(
        f"{p.name}{f' ({p.occurrences}x)' if p.learned else ''}: {p.description}" for p in patterns
    )
    emit(ctx, [p.to_dict() for p in patterns], text)


@agents.command("check")
@click.argument("query")
@click.option("--plan", "steps", multiple=True, help="A step of the plan (repeat for more).")
@scope_flag
@click.pass_context
def check(ctx: click.Context, query: str, steps: tuple[str, ...], scope: str | None) -> None:
    """The failure patterns QUERY (and its plan) shows signs of, with their mitigations."""
    found = open_memory(ctx).check_failures(query, list(steps) or None, scope=scope)
    text = "\n".join(match_block(m) for m in found) or "no known failure pattern"
    emit(ctx, [m.to_dict() for m in found], text)
