"""REST routes of the facilities: sessions, records, notes, findings, Global Memory, pin and
demote, and the prompt and context an agent sends to its LLM (errors: see ``app.endpoint``)."""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from starlette.requests import Request

from ..errors import ValidationError
from ..memory import AsyncMemory
from .payload import as_is, fields, flag, integer, query_fields, timestamp
from .request import read_json, request_query

Answer = tuple[int, Any]


def zone(name: str, value: Any) -> ZoneInfo:
    try:
        return ZoneInfo(str(value))
    except (ZoneInfoNotFoundError, ValueError):
        raise ValidationError(f"{name}: unknown time zone {value!r}, e.g. UTC") from None


def _session(request: Request) -> str:
    return str(request.path_params["session_id"])


async def create_session(request: Request, memory: AsyncMemory) -> Answer:
    accepted = {"user_id": as_is, "title": as_is, "private": flag, "profile": as_is,
                "metadata": as_is, "session_id": as_is}  # fmt: skip
    args = fields(await read_json(request), accepted, required=("user_id",))
    return 201, (await memory.create_session(**args)).to_dict()


async def list_sessions(request: Request, memory: AsyncMemory) -> Answer:
    args = query_fields(request_query(request), {"user_id": as_is, "limit": integer})
    return 200, {"sessions": [s.to_dict() for s in await memory.list_sessions(**args)]}


async def get_session(request: Request, memory: AsyncMemory) -> Answer:
    return 200, (await memory.get_session(_session(request))).to_dict()


async def change_session(request: Request, memory: AsyncMemory) -> Answer:
    args = fields(await read_json(request), {"title": as_is, "has_data": flag})
    if not args:
        raise ValidationError("nothing to change; give title or has_data")
    if "title" in args:
        await memory.rename_session(_session(request), args["title"])
    if "has_data" in args:
        await memory.set_data_loaded(_session(request), args["has_data"])
    return 200, (await memory.get_session(_session(request))).to_dict()


async def delete_session(request: Request, memory: AsyncMemory) -> Answer:
    return 200, {"deleted": await memory.delete_session(_session(request))}


async def append_record(request: Request, memory: AsyncMemory) -> Answer:
    accepted = {"role": as_is, "content": as_is, "tool_name": as_is, "call_id": as_is,
                "object_ids": as_is, "created_at": timestamp}  # fmt: skip
    args = fields(await read_json(request), accepted, required=("role", "content"))
    return 201, (await memory.append_record(_session(request), **args)).to_dict()


async def list_records(request: Request, memory: AsyncMemory) -> Answer:
    return 200, {"records": [r.to_dict() for r in await memory.records(_session(request))]}


async def search_records(request: Request, memory: AsyncMemory) -> Answer:
    accepted = {"query": as_is, "session_id": as_is, "user_id": as_is, "limit": integer}
    args = fields(await read_json(request), accepted, required=("query",))
    return 200, {"hits": [h.to_dict() for h in await memory.search_records(**args)]}


NOTE_FIELDS = {"fact": as_is, "category": as_is, "source": as_is, "native": as_is,
               "source_turn_index": integer, "tool_originated": flag}  # fmt: skip


async def add_note(request: Request, memory: AsyncMemory) -> Answer:
    args = fields(await read_json(request), NOTE_FIELDS, required=("fact",))
    return 201, (await memory.add_session_memory(_session(request), **args)).to_dict()


async def list_notes(request: Request, memory: AsyncMemory) -> Answer:
    notes = await memory.session_memory(_session(request))
    return 200, {"entries": [e.to_dict() for e in notes]}


async def add_finding(request: Request, memory: AsyncMemory) -> Answer:
    accepted = {"content": as_is, "tags": as_is, "source": as_is, "tool_originated": flag}
    args = fields(await read_json(request), accepted, required=("content",))
    found = await memory.add_finding(_session(request), **args)
    return (200 if found.duplicate else 201), found.to_dict()


async def list_findings(request: Request, memory: AsyncMemory) -> Answer:
    args = query_fields(request_query(request), {"tag": as_is, "text": as_is}, lists=("tag",))
    found = await memory.findings(_session(request), tags=args.get("tag", ()),
                                  text=args.get("text"))  # fmt: skip
    return 200, {"findings": [f.to_dict() for f in found]}


async def add_global(request: Request, memory: AsyncMemory) -> Answer:
    args = fields(await read_json(request), {**NOTE_FIELDS, "session_id": as_is},
                  required=("fact",))  # fmt: skip
    user_id = request.path_params["user_id"]
    return 201, (await memory.add_global_memory(user_id, **args)).to_dict()


async def list_global(request: Request, memory: AsyncMemory) -> Answer:
    entries = await memory.global_memory(request.path_params["user_id"])
    return 200, {"entries": [e.to_dict() for e in entries]}


async def pin(request: Request, memory: AsyncMemory) -> Answer:
    args = fields(await read_json(request), {"category": as_is})
    return 201, (await memory.pin(request.path_params["entry_id"], **args)).to_dict()


async def demote(request: Request, memory: AsyncMemory) -> Answer:
    accepted = {"session_id": as_is, "category": as_is}
    args = fields(await read_json(request), accepted, required=("session_id",))
    return 201, (await memory.demote(request.path_params["entry_id"], **args)).to_dict()


async def system_prompt(request: Request, memory: AsyncMemory) -> Answer:
    args = fields(await read_json(request), {"base": as_is})
    return 200, {"prompt": await memory.system_prompt(_session(request), **args)}


async def context(request: Request, memory: AsyncMemory) -> Answer:
    accepted = {"budget": integer, "query": as_is, "recall": flag, "limit": integer, "tz": zone}
    args = fields(await read_json(request), accepted, required=("budget",))
    if args.pop("recall", False) or "query" in args:
        built: Any = await memory.recall(_session(request), **args)
    else:
        if "limit" in args:
            raise ValidationError("limit applies to recall only")
        built = await memory.build_context(_session(request), **args)
    return 200, built.to_dict()


SESSION = "/v1/sessions/{session_id}"
ROUTES = (
    ("/v1/sessions", create_session, "POST"),
    ("/v1/sessions", list_sessions, "GET"),
    (SESSION, get_session, "GET"),
    (SESSION, change_session, "PATCH"),
    (SESSION, delete_session, "DELETE"),
    (f"{SESSION}/records", append_record, "POST"),
    (f"{SESSION}/records", list_records, "GET"),
    ("/v1/records/search", search_records, "POST"),
    (f"{SESSION}/notes", add_note, "POST"),
    (f"{SESSION}/notes", list_notes, "GET"),
    (f"{SESSION}/findings", add_finding, "POST"),
    (f"{SESSION}/findings", list_findings, "GET"),
    ("/v1/users/{user_id}/global", add_global, "POST"),
    ("/v1/users/{user_id}/global", list_global, "GET"),
    ("/v1/memories/{entry_id}/pin", pin, "POST"),
    ("/v1/memories/{entry_id}/demote", demote, "POST"),
    (f"{SESSION}/prompt", system_prompt, "POST"),
    (f"{SESSION}/context", context, "POST"),
)
