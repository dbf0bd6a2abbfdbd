"""REST routes of learning: turns in (extraction in the background), and the versions of a
fact — supersede, history, restore, and the review list of recent supersessions."""

from __future__ import annotations

from typing import Any

from ..memory import AsyncMemory
from .payload import FLAG, INTEGER, OBJECT, TEXT, TEXTS, TIMESTAMP, Field, typed
from .routes import Answer, Call, Route
from .store import ENTRY_ID, written

TOOL_RECORDS = Field(
    {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "object"}]}},
    typed("array"),
)
SESSION = "/v1/sessions/{session_id}"
WAIT_SECONDS = 120.0
"""How long ``wait`` waits for the turn's extraction before answering without it."""


async def add_turn(memory: AsyncMemory, call: Call) -> Answer:
    """Append a turn (user message, tool outputs, answer); extraction runs in the background.
    With ``wait``, the answer comes once the extraction is done, with what it learned."""
    args: dict[str, Any] = dict(call.args)
    wait = args.pop("wait", False)
    turn = await memory.add_turn(call.path["session_id"], **args)
    body = turn.to_dict()
    if wait and turn.extraction != "off":
        if not await memory.flush(WAIT_SECONDS, session_id=turn.session_id):
            return 202, body | {"learned": None}  # still learning, in the background
        learned = memory.last_extraction(turn.session_id)
        body["learned"] = None if learned is None else learned.to_dict()
    return (201 if wait else 202), body


async def extract(memory: AsyncMemory, call: Call) -> Answer:
    """Learn from the session's latest turns now, and say what was stored, merged, superseded
    and dropped."""
    return 200, (await memory.extract(call.path["session_id"])).to_dict()


async def supersede(memory: AsyncMemory, call: Call) -> Answer:
    """Replace a fact by a changed one; the old entry is kept, linked and hidden."""
    return written(await memory.supersede(call.path["entry_id"], **call.args))


async def history(memory: AsyncMemory, call: Call) -> Answer:
    """Every version of the fact, oldest first."""
    return 200, {"entries": [e.to_dict() for e in await memory.history(call.path["entry_id"])]}


async def restore(memory: AsyncMemory, call: Call) -> Answer:
    """Undo the supersession of an entry."""
    return 200, (await memory.restore(call.path["entry_id"], **call.args)).to_dict()


async def superseded(memory: AsyncMemory, call: Call) -> Answer:
    """Recent supersessions of a scope, latest first, to confirm or undo."""
    found = await memory.superseded(**call.args)
    return 200, {"supersessions": [s.to_dict() for s in found]}


ROUTES = (
    Route(
        "POST",
        f"{SESSION}/turns",
        add_turn,
        {"user": TEXT, "assistant": TEXT, "tool_records": TOOL_RECORDS, "wait": FLAG},
        status=202,
        answer="the records appended and whether extraction was scheduled (201 with wait: "
        "what it learned)",
    ),
    Route("POST", f"{SESSION}/extract", extract, {}, answer="what the extraction did"),
    Route(
        "POST",
        f"{ENTRY_ID}/supersede",
        supersede,
        {
            "content": TEXT,
            "reason": TEXT,
            "tags": TEXTS,
            "metadata": OBJECT,
            "provenance": OBJECT,
            "created_at": TIMESTAMP,
        },
        required=("content",),
        status=201,
        answer="the new entry (200: the content restates it, nothing changed)",
    ),
    Route("GET", f"{ENTRY_ID}/history", history, answer="every version, oldest first"),
    Route(
        "POST",
        f"{ENTRY_ID}/restore",
        restore,
        {"keep_successor": FLAG},
        answer="the restored entry",
    ),
    Route(
        "GET",
        "/v1/superseded",
        superseded,
        query={"scope": TEXT, "since": TIMESTAMP, "limit": INTEGER},
        required=("scope",),
        answer="the supersessions, latest first",
    ),
)
