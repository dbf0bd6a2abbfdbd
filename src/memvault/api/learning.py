"""Learning's operations, each declared once: turns in (extraction in the background), and
the versions of a fact — supersede, history, restore, the review list of supersessions."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from .. import validation as check
from ..drivers import Steps
from ..extraction.plans import Extraction, LearningPlans, TurnResult
from ..extraction.worker import Failure
from ..rest.answers import Each, Whole, Written
from ..rest.codec import decoded, request
from ..rest.endpoints import Endpoint
from ..rest.fields import FLAG, IDS, INTEGER, NUMBER, OBJECT, TEXT, TEXTS, TIMESTAMP, Field, typed
from ..types import MemoryEntry
from ..versions import History, Supersession, VersionPlans
from .facilities import SESSION
from .operation import Operation
from .store import ENTRY_ID

FLUSH_WAIT = 30.0
"""Seconds one flush request lets the server wait (a longer flush sends several)."""
TOOL_RECORDS = Field(
    {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "object"}]}},
    typed("array"),
)
SUPERSEDING = {
    "content": TEXT,
    "reason": TEXT,
    "tags": TEXTS,
    "metadata": OBJECT,
    "provenance": OBJECT,
    "created_at": TIMESTAMP,
}
SUPERSEDE_ONE = Endpoint(
    "POST",
    f"{ENTRY_ID}/supersede",
    SUPERSEDING,
    required=("content",),
    status=201,
    answer="the new entry (200: the content restates it, nothing changed)",
)
"""The route of one id in the path (the client sends one or several ids in the body)."""

ADD_TURN = Operation(
    LearningPlans.add_turn,
    Endpoint(
        "POST",
        f"{SESSION}/turns",
        {"user": TEXT, "assistant": TEXT, "tool_records": TOOL_RECORDS, "wait": FLAG},
        status=202,
        answer="the records appended and whether extraction was scheduled (201 with wait: "
        "what it learned)",
    ),
    Whole(TurnResult),
    special="with wait, the answer waits for what the turn's extraction learned",
)
EXTRACT = Operation(
    LearningPlans.extract,
    Endpoint("POST", f"{SESSION}/extract", {}, answer="what the extraction did"),
    Whole(Extraction),
)
SUPERSEDE = Operation(
    VersionPlans.supersede,
    Endpoint(
        "POST",
        "/v1/memories/supersede",
        {"ids": replace(IDS, keyword="entry_ids"), **SUPERSEDING},
        required=("ids", "content"),
        status=201,
        answer="the new entry that replaces one or several (200: it restates them)",
    ),
    Written(MemoryEntry),
    special="served on two routes: several ids in the body, or one in the path",
)
HISTORY = Operation(
    VersionPlans.history,
    Endpoint(
        "GET", f"{ENTRY_ID}/history", answer="versions (oldest first) and the audit log's events"
    ),
    Whole(History),
)
RESTORE = Operation(
    VersionPlans.restore,
    Endpoint("POST", f"{ENTRY_ID}/restore", {"keep_successor": FLAG}, answer="the restored entry"),
    Whole(MemoryEntry),
)
SUPERSEDED = Operation(
    VersionPlans.superseded,
    Endpoint(
        "GET",
        "/v1/superseded",
        query={"scope": TEXT, "since": TIMESTAMP, "limit": INTEGER},
        required=("scope",),
        answer="the supersessions, latest first",
    ),
    Each("supersessions", Supersession),
)

OPERATIONS = (ADD_TURN, EXTRACT, SUPERSEDE, HISTORY, RESTORE, SUPERSEDED)

# -- what is not an operation of a planner ------------------------------------------------------

LAST_EXTRACTION = Endpoint(
    "GET",
    f"{SESSION}/extraction",
    answer="what the last background extraction did, or its error (null: none yet)",
)
FLUSH = Endpoint(
    "POST",
    "/v1/flush",
    {"timeout": NUMBER, "session_id": TEXT},
    answer="whether every background extraction (or the session's) is done",
    reads=True,
)


def last_extraction(session_id: str) -> Steps[Extraction | Failure | None]:
    asked = request(LAST_EXTRACTION, {"session_id": session_id})
    return decoded(_extraction, (yield asked), asked)


def _extraction(body: Any) -> Extraction | Failure | None:
    found = body["extraction"]
    if found is None:
        return None
    return Failure.from_dict(found) if set(found) == {"error"} else Extraction.from_dict(found)


def flush(timeout: float | None, session_id: str | None) -> Steps[bool]:
    """Wait until the server's background extractions (or the session's) are done, asking
    in requests of at most :data:`FLUSH_WAIT` seconds; False if ``timeout`` came first."""
    timeout = check.timeout(timeout)
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        left = FLUSH_WAIT if deadline is None else deadline - time.monotonic()
        wait = min(max(left, 0.0), FLUSH_WAIT)
        asked = request(FLUSH, {"timeout": wait, "session_id": session_id}, wait)
        done = decoded(lambda body: bool(body["done"]), (yield asked), asked)
        if done or (deadline is not None and left <= FLUSH_WAIT):
            return done
