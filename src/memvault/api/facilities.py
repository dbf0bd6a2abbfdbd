"""The facilities' operations, each declared once: sessions and records, Session Memory,
Findings, Global Memory, pin and demote, and the prompt and context an agent sends its LLM."""

from __future__ import annotations

from dataclasses import replace

from ..context.builder import ContextWindow
from ..context.plans import ContextPlans, HierarchicalContext
from ..facilities.model import Finding, Record, Session, SessionHit
from ..facilities.notes import NotePlans
from ..facilities.sessions import SessionPlans
from ..rest.answers import Each, Value, Whole, Written
from ..rest.endpoints import Endpoint
from ..rest.fields import FLAG, INTEGER, OBJECT, TAG_PARAM, TEXT, TEXTS, TIMESTAMP, ZONE
from ..types import MemoryEntry, SearchHit
from .operation import ENTRIES, Operation
from .store import ENTRY_ID

NOTE = {
    "fact": TEXT,
    "category": TEXT,
    "source": TEXT,
    "native": TEXT,
    "source_turn_index": INTEGER,
    "tool_originated": FLAG,
}
SESSION = "/v1/sessions/{session_id}"
USER = "/v1/users/{user_id:path}/global"  # a user id may hold "/"
SUMMARIZER = "a summariser object cannot be sent to a server: the server summarises with its own"

CHANGE_SESSION = Endpoint(
    "PATCH",
    SESSION,
    {"title": TEXT, "has_data": replace(FLAG, keyword="loaded")},
    answer="the session",
)
CONTEXT = Endpoint(
    "POST",
    f"{SESSION}/context",
    {"budget": INTEGER, "query": TEXT, "recall": FLAG, "limit": INTEGER, "tz": ZONE},
    required=("budget",),
    answer="the window, or the hierarchical context",
    reads=True,
)

CREATE_SESSION = Operation(
    SessionPlans.create_session,
    Endpoint(
        "POST",
        "/v1/sessions",
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
    Whole(Session),
)
GET_SESSION = Operation(
    SessionPlans.get_session, Endpoint("GET", SESSION, answer="the session"), Whole(Session)
)
LIST_SESSIONS = Operation(
    SessionPlans.list_sessions,
    Endpoint(
        "GET", "/v1/sessions", query={"user_id": TEXT, "limit": INTEGER}, answer="the sessions"
    ),
    Each("sessions", Session),
)
RENAME_SESSION = Operation(
    SessionPlans.rename_session,
    CHANGE_SESSION,
    Whole(Session),
    special="one PATCH of a session renames it and says whether it has data",
)
SET_DATA_LOADED = Operation(
    SessionPlans.set_data_loaded,
    CHANGE_SESSION,
    Whole(Session),
    defaults=True,
    special="one PATCH of a session renames it and says whether it has data",
)
DELETE_SESSION = Operation(
    SessionPlans.delete_session,
    Endpoint("DELETE", SESSION, answer="how many entries were deleted"),
    Value("deleted"),
)
APPEND_RECORD = Operation(
    SessionPlans.append_record,
    Endpoint(
        "POST",
        f"{SESSION}/records",
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
    Whole(Record),
)
RECORDS = Operation(
    SessionPlans.records,
    Endpoint("GET", f"{SESSION}/records", answer="the records"),
    Each("records", Record),
)
SEARCH_RECORDS = Operation(
    SessionPlans.search_records,
    Endpoint(
        "POST",
        "/v1/records/search",
        {"query": TEXT, "session_id": TEXT, "user_id": TEXT, "limit": INTEGER},
        required=("query",),
        answer="the hits",
        reads=True,
    ),
    Each("hits", SearchHit),
)
SEARCH_SESSIONS = Operation(
    SessionPlans.search_sessions,
    Endpoint(
        "POST",
        "/v1/sessions/search",
        {"query": TEXT, "user_id": TEXT, "limit": INTEGER, "turns": INTEGER},
        required=("query", "user_id"),
        answer="the sessions, each with its best records",
        reads=True,
    ),
    Each("sessions", SessionHit),
)
ADD_SESSION_MEMORY = Operation(
    NotePlans.add_session_memory,
    Endpoint(
        "POST",
        f"{SESSION}/notes",
        NOTE,
        required=("fact",),
        status=201,
        answer="the Session Memory entry",
    ),
    Written(MemoryEntry),
)
SESSION_MEMORY = Operation(
    NotePlans.session_memory,
    Endpoint("GET", f"{SESSION}/notes", answer="the Session Memory"),
    ENTRIES,
)
ADD_FINDING = Operation(
    NotePlans.add_finding,
    Endpoint(
        "POST",
        f"{SESSION}/findings",
        {"content": TEXT, "tags": TEXTS, "source": TEXT, "tool_originated": FLAG},
        required=("content",),
        status=201,
        answer="the finding (200: an existing one it repeats)",
    ),
    Written(Finding),
)
FINDINGS = Operation(
    NotePlans.findings,
    Endpoint(
        "GET",
        f"{SESSION}/findings",
        query={"tag": TAG_PARAM, "text": TEXT},
        answer="the findings",
    ),
    Each("findings", Finding),
)
ADD_GLOBAL_MEMORY = Operation(
    NotePlans.add_global_memory,
    Endpoint(
        "POST",
        USER,
        {**NOTE, "session_id": TEXT},
        required=("fact",),
        status=201,
        answer="the Global Memory entry",
    ),
    Written(MemoryEntry),
)
GLOBAL_MEMORY = Operation(
    NotePlans.global_memory, Endpoint("GET", USER, answer="the Global Memory"), ENTRIES
)
PIN = Operation(
    NotePlans.pin,
    Endpoint(
        "POST",
        f"{ENTRY_ID}/pin",
        {"category": TEXT},
        status=201,
        answer="the Global Memory entry",
    ),
    Written(MemoryEntry),
)
DEMOTE = Operation(
    NotePlans.demote,
    Endpoint(
        "POST",
        f"{ENTRY_ID}/demote",
        {"session_id": TEXT, "category": TEXT},
        required=("session_id",),
        status=201,
        answer="the Session Memory entry",
    ),
    Written(MemoryEntry),
)
BUILD_CONTEXT = Operation(
    ContextPlans.build_context,
    CONTEXT,
    Whole(ContextWindow),
    refused={"summarizer": SUMMARIZER},
    special="one endpoint builds the window, or with recall the hierarchical context",
)
SYSTEM_PROMPT = Operation(
    ContextPlans.system_prompt,
    Endpoint("POST", f"{SESSION}/prompt", {"base": TEXT}, answer="the prompt", reads=True),
    Value("prompt"),
)
RECALL = Operation(
    ContextPlans.recall,
    CONTEXT,
    Whole(HierarchicalContext),
    fixed={"recall": True},
    refused={"summarizer": SUMMARIZER},
    special="one endpoint builds the window, or with recall the hierarchical context",
)

OPERATIONS = (
    CREATE_SESSION,
    GET_SESSION,
    LIST_SESSIONS,
    RENAME_SESSION,
    SET_DATA_LOADED,
    DELETE_SESSION,
    APPEND_RECORD,
    RECORDS,
    SEARCH_RECORDS,
    SEARCH_SESSIONS,
    ADD_SESSION_MEMORY,
    SESSION_MEMORY,
    ADD_FINDING,
    FINDINGS,
    ADD_GLOBAL_MEMORY,
    GLOBAL_MEMORY,
    PIN,
    DEMOTE,
    BUILD_CONTEXT,
    SYSTEM_PROMPT,
    RECALL,
)
