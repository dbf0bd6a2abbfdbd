"""REST routes of the facilities: sessions, records, notes, findings, Global Memory, pin and
demote, and the prompt and context an agent sends to its LLM."""

from __future__ import annotations

import base64
from typing import Any

from ..errors import ValidationError
from ..memory import AsyncMemory
from ..rest import endpoints as api
from .routes import Answer, Call, Route
from .store import written


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
    if "loaded" in args:
        await memory.set_data_loaded(session_id, args["loaded"])
    return 200, (await memory.get_session(session_id)).to_dict()


async def delete_session(memory: AsyncMemory, call: Call) -> Answer:
    """Delete a session and everything it owns (Global Memory stays)."""
    return 200, {"deleted": await memory.delete_session(call.path["session_id"])}


async def session_bundle(memory: AsyncMemory, call: Call) -> Answer:
    """The session's bundle (base64 of the zip), and what it holds."""
    data, report = await memory.session_bundle(call.path["session_id"])
    return 200, {"bundle": base64.b64encode(data).decode("ascii"), "report": report.to_dict()}


async def import_bundle(memory: AsyncMemory, call: Call) -> Answer:
    """Import a bundle (base64 of the zip) as a new session."""
    try:
        data = base64.b64decode(call.args["bundle"], validate=True)
    except ValueError as exc:  # not base64 (binascii.Error), or not ASCII
        raise ValidationError(f"bundle must be the base64 of a bundle file: {exc}") from None
    return 201, (await memory.import_bundle(data)).to_dict()


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


async def search_sessions(memory: AsyncMemory, call: Call) -> Answer:
    """A user's shared sessions ranked by their best records."""
    found = await memory.search_sessions(**call.args)
    return 200, {"sessions": [s.to_dict() for s in found]}


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


ROUTES = (
    Route(api.CREATE_SESSION, create_session),
    Route(api.LIST_SESSIONS, list_sessions),
    Route(api.GET_SESSION, get_session),
    Route(api.CHANGE_SESSION, change_session),
    Route(api.DELETE_SESSION, delete_session),
    Route(api.SESSION_BUNDLE, session_bundle),
    Route(api.IMPORT_BUNDLE, import_bundle),
    Route(api.APPEND_RECORD, append_record),
    Route(api.RECORDS, list_records),
    Route(api.SEARCH_RECORDS, search_records),
    Route(api.SEARCH_SESSIONS, search_sessions),
    Route(api.ADD_NOTE, add_note),
    Route(api.NOTES, list_notes),
    Route(api.ADD_FINDING, add_finding),
    Route(api.FINDINGS, list_findings),
    Route(api.ADD_GLOBAL, add_global),
    Route(api.GLOBAL, list_global),
    Route(api.PIN, pin),
    Route(api.DEMOTE, demote),
    Route(api.PROMPT, system_prompt),
    Route(api.CONTEXT, context),
)
