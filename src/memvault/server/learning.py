"""REST routes of learning: turns in (extraction in the background), and the versions of a
fact — supersede, history, restore, and the review list of recent supersessions."""

from __future__ import annotations

from typing import Any

from ..api import learning as api
from ..memory import AsyncMemory
from .routes import Answer, Call, Route, answered

WAIT_SECONDS = 120.0
"""How long a turn sent with ``wait`` (REST) or ``remember_turn`` (MCP) waits for its extraction
before the answer goes without it."""


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
        learned = await memory.last_extraction(turn.session_id)
        body["learned"] = None if learned is None else learned.to_dict()
    return (201 if wait else 202), body


async def last_extraction(memory: AsyncMemory, call: Call) -> Answer:
    """What the session's last background extraction did, or the error it raised."""
    found = await memory.last_extraction(call.path["session_id"])
    return 200, {"extraction": None if found is None else found.to_dict()}


async def flush(memory: AsyncMemory, call: Call) -> Answer:
    """Wait (at most ``timeout`` seconds, capped) until the background extractions — or the
    session's — are done."""
    timeout = min(call.args.get("timeout", WAIT_SECONDS), WAIT_SECONDS)  # the memory checks it
    done = await memory.flush(timeout, session_id=call.args.get("session_id"))
    return 200, {"done": done}


async def supersede(memory: AsyncMemory, call: Call) -> Answer:
    """Replace a fact (or several) by a changed one; the old entries are kept, linked and
    hidden."""
    ids = call.path.get("entry_id")
    if ids is None:
        return answered(api.SUPERSEDE, await memory.supersede(**call.args))
    return answered(api.SUPERSEDE, await memory.supersede(ids, **call.args))


ROUTES = (
    Route(api.ADD_TURN.sent_to, add_turn),
    Route(api.LAST_EXTRACTION, last_extraction),
    Route(api.FLUSH, flush),
    Route(api.SUPERSEDE_ONE, supersede),
    Route(api.SUPERSEDE.sent_to, supersede),
)
