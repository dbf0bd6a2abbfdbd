"""Commands of the facilities: sessions, records, findings, Global Memory, pin/demote, and the
prompt and context an agent sends to its LLM."""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import click

from ..facilities.model import GLOBAL_MEMORY, ROLES, SESSION_MEMORY, Record
from . import render
from .app import cli
from .common import (
    argument_text,
    confirm,
    emit,
    emit_written,
    json_object_option,
    open_memory,
    wants_json,
    yes_option,
)


def _zone(ctx: click.Context, param: click.Parameter, value: str) -> ZoneInfo:
    try:
        return ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise click.BadParameter(f"unknown time zone {value!r}, e.g. UTC or Europe/Paris") from None


# -- sessions ---------------------------------------------------------------------------------


@cli.group()
def session() -> None:
    """Sessions: create, list, show, rename, delete; their Session Memory."""


@session.command("create")
@click.argument("user_id")
@click.option("--title", default="New session", show_default=True, help="The session's title.")
@click.option("--private", is_flag=True, help="Nothing of it ever reaches Global Memory.")
@click.option("--profile", help="The LLM profile the session uses.")
@json_object_option("--metadata", help="A JSON object of extra fields.")
@click.option("--id", "session_id", help="Choose the id (default: a new s-… id).")
@click.pass_context
def session_create(
    ctx: click.Context,
    user_id: str,
    title: str,
    private: bool,
    profile: str | None,
    metadata: dict[str, Any] | None,
    session_id: str | None,
) -> None:
    """Start a session for USER_ID."""
    made = open_memory(ctx).create_session(
        user_id,
        title=title,
        private=private,
        profile=profile,
        metadata=metadata,
        session_id=session_id,
    )
    emit(ctx, made.to_dict(), made.id)


@session.command("list")
@click.option("--user", "user_id", help="Only this user's sessions.")
@click.option("--limit", type=int, default=100, show_default=True, help="Most sessions to show.")
@click.pass_context
def session_list(ctx: click.Context, user_id: str | None, limit: int) -> None:
    """List sessions, newest first."""
    found = open_memory(ctx).list_sessions(user_id, limit=limit)
    text = "\n".join(render.session_line(s) for s in found) or "(no sessions)"
    emit(ctx, [s.to_dict() for s in found], text)


@session.command("search")
@click.argument("query")
@click.option("--user", "user_id", required=True, help="Search this user's shared sessions.")
@click.option("--limit", type=int, default=5, show_default=True, help="Most sessions to return.")
@click.option("--turns", type=int, default=3, show_default=True, help="Best records per session.")
@click.pass_context
def session_search(ctx: click.Context, query: str, user_id: str, limit: int, turns: int) -> None:
    """A user's non-private sessions that best answer QUERY, ranked by their best record."""
    found = open_memory(ctx).search_sessions(query, user_id=user_id, limit=limit, turns=turns)
    lines = []
    for hit in found:
        lines.append(f"{hit.score:.3f}  {render.session_line(hit.session)}")
        lines += [f"    {render.record_line(Record.from_entry(t.entry))}" for t in hit.turns]
    emit(ctx, [s.to_dict() for s in found], "\n".join(lines) or "(no sessions)")


@session.command("show")
@click.argument("session_id")
@click.pass_context
def session_show(ctx: click.Context, session_id: str) -> None:
    """Show a session and its log."""
    memory = open_memory(ctx)
    found, records = memory.get_session(session_id), memory.records(session_id)
    text = "\n".join([render.session_line(found), *(render.record_line(r) for r in records)])
    emit(ctx, {**found.to_dict(), "records": [r.to_dict() for r in records]}, text)


@session.command("rename")
@click.argument("session_id")
@click.argument("title")
@click.pass_context
def session_rename(ctx: click.Context, session_id: str, title: str) -> None:
    """Give a session a new TITLE."""
    renamed = open_memory(ctx).rename_session(session_id, title)
    emit(ctx, renamed.to_dict(), render.session_line(renamed))


@session.command("data-loaded")
@click.argument("session_id")
@click.option("--off", is_flag=True, help="Say the session has no data loaded.")
@click.pass_context
def session_data_loaded(ctx: click.Context, session_id: str, off: bool) -> None:
    """Mark a session as having data loaded (LLM-created findings need it)."""
    changed = open_memory(ctx).set_data_loaded(session_id, not off)
    emit(ctx, changed.to_dict(), render.session_line(changed))


@session.command("delete")
@click.argument("session_id")
@yes_option
@click.pass_context
def session_delete(ctx: click.Context, session_id: str, yes: bool) -> None:
    """Delete a session with its records, notes, findings and objects (Global Memory stays)."""
    confirm(f"Delete session {session_id} and everything in it?", yes)
    count = open_memory(ctx).delete_session(session_id)
    emit(ctx, {"session_id": session_id, "deleted": count}, f"deleted {count}")


@session.command("note")
@click.argument("session_id")
@click.argument("fact")
@click.option(
    "--category",
    type=click.Choice(SESSION_MEMORY),
    default="fact",
    show_default=True,
    help="fact or context.",
)
@click.option(
    "--source",
    type=click.Choice(["user_turn", "assistant_turn"]),
    default="user_turn",
    show_default=True,
    help="Who said it.",
)
@click.option("--native", help="The fact in the user's own language.")
@click.pass_context
def session_note(
    ctx: click.Context,
    session_id: str,
    fact: str,
    category: str,
    source: str,
    native: str | None,
) -> None:
    """Add FACT to the session's Session Memory."""
    entry = open_memory(ctx).add_session_memory(
        session_id, argument_text(fact), category=category, source=source, native=native
    )
    emit_written(ctx, entry)


@session.command("notes")
@click.argument("session_id")
@click.pass_context
def session_notes(ctx: click.Context, session_id: str) -> None:
    """List the session's Session Memory, newest first."""
    notes = open_memory(ctx).session_memory(session_id)
    text = "\n".join(render.note_line(e) for e in notes) or "(no notes)"
    emit(ctx, [e.to_dict() for e in notes], text)


# -- records ----------------------------------------------------------------------------------


@cli.group()
def record() -> None:
    """Records: the append-only log of a session."""


@record.command("append")
@click.argument("session_id")
@click.argument("role", type=click.Choice(ROLES))
@click.argument("content")
@click.option("--tool-name", help="The tool that produced it (tool records).")
@click.option("--call-id", help="The tool call it answers.")
@click.option("--object-id", "object_ids", multiple=True, help="An object it refers to; repeat.")
@click.pass_context
def record_append(
    ctx: click.Context,
    session_id: str,
    role: str,
    content: str,
    tool_name: str | None,
    call_id: str | None,
    object_ids: tuple[str, ...],
) -> None:
    """Append a ROLE record with CONTENT ('-' reads standard input)."""
    added = open_memory(ctx).append_record(
        session_id,
        role,
        argument_text(content),
        tool_name=tool_name,
        call_id=call_id,
        object_ids=object_ids,
    )
    emit(ctx, added.to_dict(), added.id)


@record.command("list")
@click.argument("session_id")
@click.pass_context
def record_list(ctx: click.Context, session_id: str) -> None:
    """The session's records, oldest first."""
    records = open_memory(ctx).records(session_id)
    text = "\n".join(render.record_line(r) for r in records) or "(no records)"
    emit(ctx, [r.to_dict() for r in records], text)


@record.command("search")
@click.argument("query")
@click.option("--session", "session_id", help="Search this session's records.")
@click.option("--user", "user_id", help="Search the records of this user's shared sessions.")
@click.option("--limit", type=int, default=10, show_default=True, help="Most hits to return.")
@click.pass_context
def record_search(
    ctx: click.Context,
    query: str,
    session_id: str | None,
    user_id: str | None,
    limit: int,
) -> None:
    """Hybrid search over records (of --session, or of --user's non-private sessions)."""
    hits = open_memory(ctx).search_records(
        query, session_id=session_id, user_id=user_id, limit=limit
    )
    lines = [
        f"{h.score:.3f}  {h.entry.scope.id}  {render.record_line(Record.from_entry(h.entry))}"
        for h in hits
    ]
    emit(ctx, [h.to_dict() for h in hits], "\n".join(lines) or "(no hits)")


# -- findings, global memory, pin, demote ----------------------------------------------------


@cli.group()
def findings() -> None:
    """Findings: data-analysis discoveries of a session."""


@findings.command("add")
@click.argument("session_id")
@click.argument("content")
@click.option("--tag", "tags", multiple=True, help="A tag (e.g. a severity); repeat.")
@click.option(
    "--source",
    type=click.Choice(["manual", "llm_promoted", "analyze_data"]),
    default="manual",
    show_default=True,
    help="manual: yours, by hand; llm_promoted (an LLM's tool) needs the session's data "
    "loaded (session data-loaded).",
)
@click.pass_context
def findings_add(
    ctx: click.Context,
    session_id: str,
    content: str,
    tags: tuple[str, ...],
    source: str,
) -> None:
    """Add a finding by hand (a repeat of an existing one returns that one)."""
    found = open_memory(ctx).add_finding(
        session_id, argument_text(content), tags=tags, source=source
    )
    emit(ctx, found.to_dict(), f"duplicate of {found.id}" if found.duplicate else found.id)


@findings.command("list")
@click.argument("session_id")
@click.option("--tag", "tags", multiple=True, help="Only findings with ALL these tags.")
@click.option("--text", help="Only findings containing this text.")
@click.pass_context
def findings_list(
    ctx: click.Context, session_id: str, tags: tuple[str, ...], text: str | None
) -> None:
    """List a session's findings, newest first."""
    found = open_memory(ctx).findings(session_id, tags=tags, text=text)
    lines = "\n".join(render.finding_line(f) for f in found) or "(no findings)"
    emit(ctx, [f.to_dict() for f in found], lines)


@cli.group("global")
def global_() -> None:
    """Global Memory: a user's preferences, decisions and identity, across sessions."""


@global_.command("add")
@click.argument("user_id")
@click.argument("fact")
@click.option(
    "--category",
    type=click.Choice(GLOBAL_MEMORY),
    default="preference",
    show_default=True,
    help="preference, decision or identity.",
)
@click.option(
    "--source",
    type=click.Choice(["manual", "user_turn", "assistant_turn"]),
    default="manual",
    show_default=True,
    help="Where it came from.",
)
@click.option("--native", help="The fact in the user's own language.")
@click.option("--session", "session_id", help="The session it came from (never a private one).")
@click.pass_context
def global_add(
    ctx: click.Context,
    user_id: str,
    fact: str,
    category: str,
    source: str,
    native: str | None,
    session_id: str | None,
) -> None:
    """Add FACT to USER_ID's Global Memory."""
    entry = open_memory(ctx).add_global_memory(
        user_id,
        argument_text(fact),
        category=category,
        source=source,
        native=native,
        session_id=session_id,
    )
    emit_written(ctx, entry)


@global_.command("list")
@click.argument("user_id")
@click.pass_context
def global_list(ctx: click.Context, user_id: str) -> None:
    """List USER_ID's Global Memory, newest first."""
    entries = open_memory(ctx).global_memory(user_id)
    text = "\n".join(render.note_line(e) for e in entries) or "(no global memory)"
    emit(ctx, [e.to_dict() for e in entries], text)


@cli.command()
@click.argument("entry_id")
@click.option(
    "--category",
    type=click.Choice(GLOBAL_MEMORY),
    default="decision",
    show_default=True,
    help="Category in Global Memory.",
)
@click.pass_context
def pin(ctx: click.Context, entry_id: str, category: str) -> None:
    """Pin a Session Memory entry or a Finding (its entry id) to Global Memory."""
    entry = open_memory(ctx).pin(entry_id, category=category)
    emit_written(ctx, entry)


@cli.command()
@click.argument("entry_id")
@click.option("--session", "session_id", required=True, help="The session to move it into.")
@click.option(
    "--category",
    type=click.Choice(SESSION_MEMORY),
    default="fact",
    show_default=True,
    help="Category in Session Memory.",
)
@click.pass_context
def demote(ctx: click.Context, entry_id: str, session_id: str, category: str) -> None:
    """Move a Global Memory entry into a session's Session Memory."""
    entry = open_memory(ctx).demote(entry_id, session_id, category=category)
    emit_written(ctx, entry)


# -- what the LLM sees ------------------------------------------------------------------------


@cli.command()
@click.argument("session_id")
@click.option("--base", default="", help="The base system prompt.")
@click.option("--base-file", type=click.File(encoding="utf-8"), help="Read the base prompt.")
@click.pass_context
def prompt(ctx: click.Context, session_id: str, base: str, base_file: Any) -> None:
    """Print the session's system prompt (byte-identical for the same memory state)."""
    if base_file is not None:
        base = base_file.read()
    text = open_memory(ctx).system_prompt(session_id, base=base)
    if wants_json(ctx):
        emit(ctx, {"session_id": session_id, "prompt": text}, text)
    else:
        click.echo(text, nl=False)


@cli.command()
@click.argument("session_id")
@click.option("--budget", type=click.IntRange(1), required=True, help="Token budget.")
@click.option("--query", help="With --recall: what to find memories for (default: last user turn).")
@click.option(
    "--recall",
    "with_recall",
    is_flag=True,
    help="Add the most relevant memories (hierarchical context).",
)
@click.option(
    "--tz", callback=_zone, default="UTC", show_default=True, help="Time zone of the time markers."
)
@click.pass_context
def context(
    ctx: click.Context,
    session_id: str,
    budget: int,
    query: str | None,
    with_recall: bool,
    tz: ZoneInfo,
) -> None:
    """Print the messages for the session's next LLM call within --budget tokens."""
    memory = open_memory(ctx)
    if with_recall or query:
        built: Any = memory.recall(session_id, budget, query=query, tz=tz)
    else:
        built = memory.build_context(session_id, budget, tz=tz)
    text = "\n\n".join(f"## {m.role}\n{m.content}" for m in built.messages) or "(no records)"
    emit(ctx, built.to_dict(), text)
