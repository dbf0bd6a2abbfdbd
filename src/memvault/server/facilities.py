"""REST routes of the facilities: sessions, records, notes, findings, Global Memory, pin and
demote, and the prompt and context an agent sends to its LLM."""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..errors import ValidationError
from ..memory import AsyncMemory
from .payload import FLAG, INTEGER, OBJECT, TAG_PARAM, TEXT, TEXTS, TIMESTAMP, Field
from .routes import Answer, Call, Route
from .store import written


def _zone(name: str, value: Any) -> ZoneInfo:
    if not isinstance(value, str):
        raise ValidationError(f"{name} must be a time zone name such as UTC")
    try:
        return ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValidationError(f"{name}: unknown time zone {value!r}, e.g. UTC") from None


ZONE = Field({"type": "string", "examples": ["UTC", "Europe/Paris"]}, _zone)


async def create_session(memory: AsyncMemory, call: Call) -> Answer:
    """Start a session of a user."""
    return 201, (await memory.create_session(**call.args)).to_dict()


async def list_sessions(memory: AsyncMemory, call: Call) -> Answer:
    """Sessions, newest first."""
    return 200, {"sessions": [s.to_dict() for s in await memory.list_sessions(**call.args)]}


async def get_session(memory: AsyncMemory, call: Call) -> Answer:
    """One session."""
    return 200, (await memory.get_session(call.path["session_id"])).to_dict()


async def change_session(memory: AsyncMemory, call: Call) -> Answer:
    """Rename a session or say whether it has data loaded."""
    session_id, args = call.path["session_id"], call.args
    if not args:
        raise ValidationError("nothing to change; give title or has_data")
    if "title" in args:
        await memory.rename_session(session_id, args["title"])
    if "has_data" in args:
        await memory.set_data_loaded(session_id, args["has_data"])
    return 200, (await memory.get_session(session_id)).to_dict()


async def delete_session(memory: AsyncMemory, call: Call) -> Answer:
    """Delete a session and everything it owns (Global Memory stays)."""
    return 200, {"deleted": await memory.delete_session(call.path["session_id"])}


async def append_record(memory: AsyncMemory, call: Call) -> Answer:
    """Append a record to the session's log."""
    return 201, (await memory.append_record(call.path["session_id"], **call.args)).to_dict()


async def list_records(memory: AsyncMemory, call: Call) -> Answer:
    """The session's log, oldest first."""
    records = await memory.records(call.path["session_id"])
    return 200, {"records": [r.to_dict() for r in records]}


async def search_records(memory: AsyncMemory, call: Call) -> Answer:
    """Hybrid search over the records of a session or of a user's shared sessions."""
    return 200, {"hits": [h.to_dict() for h in await memory.search_records(**call.args)]}


async def add_note(memory: AsyncMemory, call: Call) -> Answer:
    """Add to the session's Session Memory."""
    return written(await memory.add_session_memory(call.path["session_id"], **call.args))


async def list_notes(memory: AsyncMemory, call: Call) -> Answer:
    """The session's Session Memory, newest first."""
    notes = await memory.session_memory(call.path["session_id"])
    return 200, {"entries": [e.to_dict() for e in notes]}


async def add_finding(memory: AsyncMemory, call: Call) -> Answer:
    """Add a finding (a repeat answers 200 with the existing one)."""
    found = await memory.add_finding(call.path["session_id"], **call.args)
    return (200 if found.duplicate else 201), found.to_dict()


async def list_findings(memory: AsyncMemory, call: Call) -> Answer:
    """The session's findings, newest first, by tag and text."""
    found = await memory.findings(call.path["session_id"], **call.args)
    return 200, {"findings": [f.to_dict() for f in found]}


async def add_global(memory: AsyncMemory, call: Call) -> Answer:
    """Add to a user's Global Memory."""
    return written(await memory.add_global_memory(call.path["user_id"], **call.args))


async def list_global(memory: AsyncMemory, call: Call) -> Answer:
    """A user's Global Memory, newest first."""
    entries = await memory.global_memory(call.path["user_id"])
    return 200, {"entries": [e.to_dict() for e in entries]}


async def pin(memory: AsyncMemory, call: Call) -> Answer:
    """Copy a Session Memory entry or a Finding into Global Memory."""
    return written(await memory.pin(call.path["entry_id"], **call.args))


async def demote(memory: AsyncMemory, call: Call) -> Answer:
    """Move a Global Memory entry into a session."""
    return written(await memory.demote(call.path["entry_id"], **call.args))


async def system_prompt(memory: AsyncMemory, call: Call) -> Answer:
    """The session's system prompt."""
    return 200, {"prompt": await memory.system_prompt(call.path["session_id"], **call.args)}


async def context(memory: AsyncMemory, call: Call) -> Answer:
    """The messages for the next LLM call (with recall: and the relevant memories)."""
    args = dict(call.args)
    if args.pop("recall", False) or "query" in args:
        built: Any = await memory.recall(call.path["session_id"], **args)
    elif "limit" in args:
        raise ValidationError("limit applies to recall only")
    else:
        built = await memory.build_context(call.path["session_id"], **args)
    return 200, built.to_dict()


NOTE = {
    "fact": TEXT,
    "category": TEXT,
    "source": TEXT,
    "native": TEXT,
    "source_turn_index": INTEGER,
    "tool_originated": FLAG,
}
SESSION = "/v1/sessions/{session_id}"
USER = "/v1/users/{user_id}/global"
ROUTES = (
    Route(
        "POST",
        "/v1/sessions",
        create_session,
        {
            "user_id": TEXT,
            "title": TEXT,
            "private": FLAG,
            "profile": TEXT,
            "metadata": OBJECT,
            "session_id": TEXT,
        },
        required=("user_id",),
        status=201,
        answer="the session",
    ),
    Route(
        "GET",
        "/v1/sessions",
        list_sessions,
        query={"user_id": TEXT, "limit": INTEGER},
        answer="the sessions",
    ),
    Route("GET", SESSION, get_session, answer="the session"),
    Route(
        "PATCH", SESSION, change_session, {"title": TEXT, "has_data": FLAG}, answer="the session"
    ),
    Route("DELETE", SESSION, delete_session, answer="how many entries were deleted"),
    Route(
        "POST",
        f"{SESSION}/records",
        append_record,
        {
            "role": TEXT,
            "content": TEXT,
            "tool_name": TEXT,
            "call_id": TEXT,
            "object_ids": TEXTS,
            "created_at": TIMESTAMP,
        },
        required=("role", "content"),
        status=201,
        answer="the record",
    ),
    Route("GET", f"{SESSION}/records", list_records, answer="the records"),
    Route(
        "POST",
        "/v1/records/search",
        search_records,
        {"query": TEXT, "session_id": TEXT, "user_id": TEXT, "limit": INTEGER},
        required=("query",),
        answer="the hits",
    ),
    Route(
        "POST",
        f"{SESSION}/notes",
        add_note,
        NOTE,
        required=("fact",),
        status=201,
        answer="the Session Memory entry",
    ),
    Route("GET", f"{SESSION}/notes", list_notes, answer="the Session Memory"),
    Route(
        "POST",
        f"{SESSION}/findings",
        add_finding,
        {"content": TEXT, "tags": TEXTS, "source": TEXT, "tool_originated": FLAG},
        required=("content",),
        status=201,
        answer="the finding (200: an existing one it repeats)",
    ),
    Route(
        "GET",
        f"{SESSION}/findings",
        list_findings,
        query={"tag": TAG_PARAM, "text": TEXT},
        answer="the findings",
    ),
    Route(
        "POST",
        USER,
        add_global,
        {**NOTE, "session_id": TEXT},
        required=("fact",),
        status=201,
        answer="the Global Memory entry",
    ),
    Route("GET", USER, list_global, answer="the Global Memory"),
    Route(
        "POST",
        "/v1/memories/{entry_id}/pin",
        pin,
        {"category": TEXT},
        status=201,
        answer="the Global Memory entry",
    ),
    Route(
        "POST",
        "/v1/memories/{entry_id}/demote",
        demote,
        {"session_id": TEXT, "category": TEXT},
        required=("session_id",),
        status=201,
        answer="the Session Memory entry",
    ),
    Route("POST", f"{SESSION}/prompt", system_prompt, {"base": TEXT}, answer="the prompt"),
    Route(
        "POST",
        f"{SESSION}/context",
        context,
        {"budget": INTEGER, "query": TEXT, "recall": FLAG, "limit": INTEGER, "tz": ZONE},
        required=("budget",),
        answer="the window, or the hierarchical context",
    ),
)
