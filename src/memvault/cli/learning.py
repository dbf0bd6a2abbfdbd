"""Commands of learning: a turn in (and what it taught), extraction now, and the versions of a
fact — supersede, history, restore, the review list."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import click

from ..extraction import worker
from ..extraction.plans import Extraction
from ..extraction.worker import Failure
from . import render
from .app import cli
from .common import (
    EXIT_STORE,
    argument_text,
    datetime_option,
    emit,
    emit_written,
    open_memory,
    scope_option,
    wants_json,
)


def _learned(extraction: Extraction | Failure | None) -> str:
    """What an extraction did, one line per fact."""
    if extraction is None:
        return "nothing learned"
    if isinstance(extraction, Failure):
        return f"extraction failed: {extraction.error}"
    lines = [render.learned_line(e) for e in (*extraction.stored, *extraction.merged)]
    lines += [f"superseded {entry_id}" for entry_id in extraction.superseded]
    lines += [f"dropped  {d.fact!r}: {d.reason}" for d in extraction.dropped]
    lines += [
        f"unparsed reply of {f.model}: {f.reason}: {f.reply!r}" for f in extraction.parse_failures
    ]
    return "\n".join(lines) or f"nothing learned ({extraction.extractor})"


@contextmanager
def _said_here() -> Iterator[None]:
    """While a command says itself why an extraction failed: the worker's log line (printed by
    logging's last resort when nothing is configured) would say it a second time."""
    quiet = logging.NullHandler()
    worker.log.addHandler(quiet)
    try:
        yield
    finally:
        worker.log.removeHandler(quiet)


@cli.command()
@click.argument("session_id")
@click.option("--user", "user", help="What the user said ('-' reads standard input).")
@click.option("--assistant", help="What the assistant answered.")
@click.option("--tool", "tools", multiple=True, help="A tool output of the turn; repeat.")
@click.pass_context
def turn(
    ctx: click.Context,
    session_id: str,
    user: str | None,
    assistant: str | None,
    tools: tuple[str, ...],
) -> None:
    """Append a turn to SESSION_ID and print what was learned from it."""
    memory = open_memory(ctx)
    text = None if user is None else argument_text(user)
    with _said_here():
        result = memory.add_turn(session_id, user=text, assistant=assistant, tool_records=tools)
        memory.flush()
    learned = memory.last_extraction(session_id) if result.extraction != "off" else None
    data: dict[str, Any] = {**result.to_dict(), "learned": learned and learned.to_dict()}
    if isinstance(learned, Failure):  # the turn is stored; learning from it failed
        as_json = wants_json(ctx)
        click.echo(render.as_json(data) if as_json else _learned(learned), err=not as_json)
        ctx.exit(EXIT_STORE)
    emit(ctx, data, _learned(learned))


@cli.command()
@click.argument("session_id")
@click.pass_context
def extract(ctx: click.Context, session_id: str) -> None:
    """Learn from the latest turns of SESSION_ID now."""
    extraction = open_memory(ctx).extract(session_id)
    emit(ctx, extraction.to_dict(), _learned(extraction))


@cli.command()
@click.argument("entry_id")
@click.argument("content")
@click.option("--reason", help="Why the fact changed.")
@click.pass_context
def supersede(ctx: click.Context, entry_id: str, content: str, reason: str | None) -> None:
    """Replace the fact ENTRY_ID by CONTENT; the old entry is kept, linked and hidden."""
    entry = open_memory(ctx).supersede(entry_id, argument_text(content), reason=reason)
    emit_written(ctx, entry)


@cli.command()
@click.argument("entry_id")
@click.pass_context
def history(ctx: click.Context, entry_id: str) -> None:
    """Every version of the fact ENTRY_ID, oldest first, and what the audit log says
    happened to each (who created, changed, superseded or deleted it, when)."""
    found = open_memory(ctx).history(entry_id)
    versions = [f"{render.entry_line(e)}  {_state(e)}" for e in found.versions]
    events = [render.event_line(e) for e in found.events]
    text = "\n".join([*versions, *(["events:", *events] if events else [])])
    emit(ctx, found.to_dict(), text)


def _state(entry: Any) -> str:
    if not entry.superseded:
        return "(current)"
    return f"(superseded by {entry.superseded_by}: {entry.superseded_reason or 'no reason'})"


@cli.command()
@click.argument("entry_id")
@click.option(
    "--keep-successor", is_flag=True, help="Both facts hold: keep the successor current too."
)
@click.pass_context
def restore(ctx: click.Context, entry_id: str, keep_successor: bool) -> None:
    """Undo the supersession of ENTRY_ID."""
    entry = open_memory(ctx).restore(entry_id, keep_successor=keep_successor)
    emit(ctx, entry.to_dict(), entry.id)


@cli.command()
@scope_option("--scope", required=True, help="The scope to review, e.g. user:alice.")
@datetime_option("--since", help="Only supersessions at or after.")
@click.option("--limit", default=100, show_default=True, help="Most supersessions shown.")
@click.pass_context
def superseded(ctx: click.Context, scope: Any, since: datetime | None, limit: int) -> None:
    """Recent supersessions of a scope, latest first: what changed, into what, and why."""
    found = open_memory(ctx).superseded(scope, since=since, limit=limit)
    lines = [
        f"{s.at:%Y-%m-%d %H:%M}  {s.entry.id}  {s.entry.content!r} -> "
        f"{s.successor.content if s.successor else '(deleted)'!r}  ({s.reason or 'no reason'})"
        for s in found
    ]
    emit(ctx, [s.to_dict() for s in found], "\n".join(lines) or "no supersessions")
