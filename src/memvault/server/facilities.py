"""REST routes of the facilities: sessions, records, notes, findings, Global Memory, pin and
demote, and the prompt and context an agent sends to its LLM."""

from __future__ import annotations

import base64
from typing import Any

from ..api import facilities, trust
from ..errors import ValidationError
from ..memory import AsyncMemory
from .routes import Answer, Call, Route


async def change_session(memory: AsyncMemory, call: Call) -> Answer:
    """Rename a session or say whether it has data loaded."""
    session_id, args = call.path["session_id"], call.args
    if not args:
        raise ValidationError("nothing to change; give title or has_data")
    if "title" in args:
        session = await memory.rename_session(session_id, args["title"])
    if "loaded" in args:
        session = await memory.set_data_loaded(session_id, args["loaded"])
    return 200, session.to_dict()


async def import_bundle(memory: AsyncMemory, call: Call) -> Answer:
    """Import a bundle (base64 of the zip) as a new session."""
    try:
        data = base64.b64decode(call.args["bundle"], validate=True)
    except ValueError as exc:  # not base64 (binascii.Error), or not ASCII
        raise ValidationError(f"bundle must be the base64 of a bundle file: {exc}") from None
    return 201, (await memory.import_bundle(data)).to_dict()


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
    Route(facilities.CHANGE_SESSION, change_session),
    Route(trust.IMPORT, import_bundle),
    Route(facilities.CONTEXT, context),
)
