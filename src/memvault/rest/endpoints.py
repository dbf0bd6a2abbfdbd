"""The REST API as values (pure): every endpoint's method, path and fields, once.

The server pairs each endpoint with a handler (``memvault.server``) and reads requests with its
fields; the remote client (:mod:`memvault.rest.client`) writes requests with the same fields; the
OpenAPI document is built from them too. So what the server accepts and what the client sends
cannot drift apart.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from urllib.parse import quote

from ..patterns import lazy
from .fields import (
    FLAG,
    IDS,
    INTEGER,
    INTEGERS,
    NUMBER,
    OBJECT,
    SECONDS,
    TAG_PARAM,
    TEXT,
    TEXT_OR_TEXTS,
    TEXTS,
    TIMESTAMP,
    ZONE,
    Field,
    typed,
)

IDEMPOTENT_METHODS = frozenset({"GET", "PUT", "DELETE"})
_PARAMETER = lazy(r"{(\w+)(?::\w+)?}")


@dataclass(frozen=True, slots=True, eq=False)
class Endpoint:
    """One route of the API: what it accepts and what it answers (each one a value of its
    own: equal only to itself)."""

    method: str
    path: str
    """With ``{parameters}`` (``{name:path}`` may hold slashes)."""
    body: Mapping[str, Field] | None = None
    """Fields of the JSON body (None: the endpoint takes no body)."""
    query: Mapping[str, Field] | None = None
    """Fields of the query string."""
    required: tuple[str, ...] = ()
    status: int = 200
    answer: str = "the result"
    reads: bool = False
    """A POST that only reads: sending it again changes nothing."""

    @property
    def idempotent(self) -> bool:
        """Whether a client may send it again when the answer was lost."""
        return self.reads or self.method in IDEMPOTENT_METHODS

    @property
    def fields(self) -> Mapping[str, Field]:
        return self.body if self.body is not None else self.query or {}

    @property
    def parameters(self) -> tuple[str, ...]:
        """The path parameters, in order."""
        return tuple(_PARAMETER.findall(self.path))

    @property
    def template(self) -> str:
        """The path as OpenAPI writes it (``{scope}``, not ``{scope:path}``)."""
        return _PARAMETER.sub(r"{\1}", self.path)

    def url(self, values: Mapping[str, str]) -> str:
        """The path with each parameter's value, percent-encoded."""

        def value(match: re.Match[str]) -> str:
            text = values[match[1]]
            parts = text.split("/") if match[0].endswith(":path}") else [text]
            return "/".join(_segment(part) for part in parts)

        return _PARAMETER.sub(value, self.path)


def _segment(text: str) -> str:
    """One segment of a path, percent-encoded; ``.`` and ``..`` too, so that no client or proxy
    takes them for steps up the path (the server reads them back as they were)."""
    return text.replace(".", "%2E") if text in {".", ".."} else quote(text, safe=":")


# -- the scoped store ------------------------------------------------------------------------

ENTRY = {
    "content": TEXT,
    "scope": TEXT,
    "tags": TEXTS,
    "category": TEXT,
    "expires_at": TIMESTAMP,
    "metadata": OBJECT,
    "provenance": OBJECT,
    "context": TEXT,
    "created_at": TIMESTAMP,
}
"""The fields of one entry to write (also each item of a batch)."""
ENTRY_REQUIRED = ("content", "scope")
NARROWER = {"include_narrower": FLAG, "session_id": TEXT}
SELECT = {"scope": TEXT, "tag": TAG_PARAM, "since": TIMESTAMP}
VERSIONS = {"as_of": TIMESTAMP, "include_superseded": FLAG}
"""What held at an instant, or every version (superseded entries are left out by default)."""
ENTRY_ID = "/v1/memories/{entry_id}"
ITEMS = Field({"type": "array", "items": {"type": "object"}}, typed("array"))
COMPACTED = replace(TEXTS, keyword="entry_ids")

WRITE = Endpoint(
    "POST",
    "/v1/memories",
    {**ENTRY, "ttl": SECONDS},
    required=ENTRY_REQUIRED,
    status=201,
    answer="the entry",
)
LIST = Endpoint(
    "GET",
    "/v1/memories",
    query={
        **SELECT,
        "order": TEXT,
        "limit": INTEGER,
        "cursor": TEXT,
        "include_expired": FLAG,
        "include_superseded": FLAG,
    },
    answer="entries and next_cursor",
)
WRITE_BATCH = Endpoint(
    "POST",
    "/v1/memories/batch",
    {"items": ITEMS, "strict": FLAG},
    required=("items",),
    status=201,
    answer="counts stored/merged/refused and each item's outcome, in order",
)
COMPACTION_SOURCES = Endpoint(
    "POST",
    "/v1/memories/compact/sources",
    {"ids": COMPACTED, "scope": TEXT},
    required=("ids",),
    answer="the entries a compaction would merge (nothing changes)",
    reads=True,
)
COMPACT = Endpoint(
    "POST",
    "/v1/memories/compact",
    {
        "ids": COMPACTED,
        "content": TEXT,
        "revisions": INTEGERS,
        "scope": TEXT,
        "delete_sources": FLAG,
        "tags": TEXTS,
        "category": TEXT,
        "metadata": OBJECT,
    },
    required=("ids", "content"),
    status=201,
    answer="the new entry (409 if a source's revision is not one of revisions)",
)
GET = Endpoint("GET", ENTRY_ID, answer="the entry")
UPDATE = Endpoint(
    "PATCH",
    ENTRY_ID,
    {
        "content": TEXT,
        "tags": TEXTS,
        "expires_at": replace(TIMESTAMP, nullable=True),
        "metadata": OBJECT,
    },
    answer="the updated entry",
)
DELETE = Endpoint("DELETE", ENTRY_ID, answer="whether it existed")
PROMOTE = Endpoint(
    "POST",
    f"{ENTRY_ID}/promote",
    {"to": TEXT, "delete_original": FLAG, "content": TEXT, "tags": TEXTS},
    required=("to",),
    status=201,
    answer="the new entry",
)
DELETE_SCOPE = Endpoint("DELETE", "/v1/scopes/{scope:path}", answer="how many were deleted")
RETRIEVE = Endpoint(
    "POST",
    "/v1/retrieve",
    {
        "scope": TEXT,
        "tags": TEXTS,
        "since": TIMESTAMP,
        "limit": INTEGER,
        "order": TEXT,
        **NARROWER,
        **VERSIONS,
    },
    required=("scope",),
    answer="the entries",
    reads=True,
)
SEARCH = Endpoint(
    "POST",
    "/v1/search",
    {
        "query": TEXT,
        "scope": TEXT,
        "limit": INTEGER,
        "tags": TEXTS,
        "categories": TEXTS,
        "since": TIMESTAMP,
        "until": TIMESTAMP,
        "metadata": OBJECT,
        **NARROWER,
        "lexical_weight": NUMBER,
        "dense_weight": NUMBER,
        "recency_weight": NUMBER,
        "recency_half_life": SECONDS,
        "fusion": TEXT,
        "diversity": NUMBER,
        "min_score": NUMBER,
        "conversational": FLAG,
        "rerank": FLAG,
        "time_weight": NUMBER,
        **VERSIONS,
    },
    required=("query", "scope"),
    answer="the hits",
    reads=True,
)
COUNT = Endpoint("GET", "/v1/count", query={**SELECT, **NARROWER, **VERSIONS}, answer="the count")
PURGE_EXPIRED = Endpoint("POST", "/v1/purge-expired", {}, answer="how many were purged")
TENANT = Endpoint(
    "GET", "/v1/tenant", answer="the tenant the request acts in, and the actor its changes name"
)
STATS = Endpoint("GET", "/v1/stats", answer="the server's counters")
RETENTION = Endpoint(
    "POST",
    "/v1/retention",
    {"dry_run": FLAG},
    answer="what the tenant's retention policy removed (or would remove), item by item",
)
ERASE = Endpoint(
    "POST",
    "/v1/erase",
    {"user": TEXT, "scope": TEXT, "tenant": TEXT},
    answer="the receipt: counts per kind, a hash of the erased ids, residue (0; else 503 "
    "ErasureIncompleteError with the receipt: the erasure is pending)",
)
FINISH_ERASURES = Endpoint(
    "POST",
    "/v1/erase/finish",
    {},
    answer="the tenant's pending erasures finished, and still pending (then 503 "
    "ErasureIncompleteError)",
)
AUDIT = Endpoint(
    "GET",
    "/v1/audit",
    query={
        "entry_id": TEXT,
        "scope": TEXT,
        "actor": TEXT,
        "operation": TEXT,
        "change": TEXT,
        "since": TIMESTAMP,
        "until": TIMESTAMP,
        "order": TEXT,
        "limit": INTEGER,
        "cursor": TEXT,
    },
    answer="events (who changed which entry, how, when; never content) and next_cursor",
)

# -- the facilities ---------------------------------------------------------------------------

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

CREATE_SESSION = Endpoint(
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
)
LIST_SESSIONS = Endpoint(
    "GET", "/v1/sessions", query={"user_id": TEXT, "limit": INTEGER}, answer="the sessions"
)
GET_SESSION = Endpoint("GET", SESSION, answer="the session")
CHANGE_SESSION = Endpoint(
    "PATCH",
    SESSION,
    {"title": TEXT, "has_data": replace(FLAG, keyword="loaded")},
    answer="the session",
)
DELETE_SESSION = Endpoint("DELETE", SESSION, answer="how many entries were deleted")
SESSION_BUNDLE = Endpoint(
    "GET",
    f"{SESSION}/bundle",
    answer="the session's bundle (base64 of the zip) and what it holds (docs/trust.md)",
)
IMPORT_BUNDLE = Endpoint(
    "POST",
    "/v1/sessions/import",
    {"bundle": TEXT},
    required=("bundle",),
    status=201,
    answer="what the import stored: the new session's id, counts, events",
)
APPEND_RECORD = Endpoint(
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
)
RECORDS = Endpoint("GET", f"{SESSION}/records", answer="the records")
SEARCH_RECORDS = Endpoint(
    "POST",
    "/v1/records/search",
    {"query": TEXT, "session_id": TEXT, "user_id": TEXT, "limit": INTEGER},
    required=("query",),
    answer="the hits",
    reads=True,
)
SEARCH_SESSIONS = Endpoint(
    "POST",
    "/v1/sessions/search",
    {"query": TEXT, "user_id": TEXT, "limit": INTEGER, "turns": INTEGER},
    required=("query", "user_id"),
    answer="the sessions, each with its best records",
    reads=True,
)
ADD_NOTE = Endpoint(
    "POST",
    f"{SESSION}/notes",
    NOTE,
    required=("fact",),
    status=201,
    answer="the Session Memory entry",
)
NOTES = Endpoint("GET", f"{SESSION}/notes", answer="the Session Memory")
ADD_FINDING = Endpoint(
    "POST",
    f"{SESSION}/findings",
    {"content": TEXT, "tags": TEXTS, "source": TEXT, "tool_originated": FLAG},
    required=("content",),
    status=201,
    answer="the finding (200: an existing one it repeats)",
)
FINDINGS = Endpoint(
    "GET",
    f"{SESSION}/findings",
    query={"tag": TAG_PARAM, "text": TEXT},
    answer="the findings",
)
ADD_GLOBAL = Endpoint(
    "POST",
    USER,
    {**NOTE, "session_id": TEXT},
    required=("fact",),
    status=201,
    answer="the Global Memory entry",
)
GLOBAL = Endpoint("GET", USER, answer="the Global Memory")
PIN = Endpoint(
    "POST",
    f"{ENTRY_ID}/pin",
    {"category": TEXT},
    status=201,
    answer="the Global Memory entry",
)
DEMOTE = Endpoint(
    "POST",
    f"{ENTRY_ID}/demote",
    {"session_id": TEXT, "category": TEXT},
    required=("session_id",),
    status=201,
    answer="the Session Memory entry",
)
PROMPT = Endpoint("POST", f"{SESSION}/prompt", {"base": TEXT}, answer="the prompt", reads=True)
CONTEXT = Endpoint(
    "POST",
    f"{SESSION}/context",
    {"budget": INTEGER, "query": TEXT, "recall": FLAG, "limit": INTEGER, "tz": ZONE},
    required=("budget",),
    answer="the window, or the hierarchical context",
    reads=True,
)

# -- learning: turns in, the versions of a fact -----------------------------------------------

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

ADD_TURN = Endpoint(
    "POST",
    f"{SESSION}/turns",
    {"user": TEXT, "assistant": TEXT, "tool_records": TOOL_RECORDS, "wait": FLAG},
    status=202,
    answer="the records appended and whether extraction was scheduled (201 with wait: "
    "what it learned)",
)
EXTRACT = Endpoint("POST", f"{SESSION}/extract", {}, answer="what the extraction did")
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
SUPERSEDE = Endpoint(
    "POST",
    f"{ENTRY_ID}/supersede",
    SUPERSEDING,
    required=("content",),
    status=201,
    answer="the new entry (200: the content restates it, nothing changed)",
)
SUPERSEDE_MANY = Endpoint(
    "POST",
    "/v1/memories/supersede",
    {"ids": replace(IDS, keyword="entry_ids"), **SUPERSEDING},
    required=("ids", "content"),
    status=201,
    answer="the new entry that replaces one or several (200: it restates them)",
)
HISTORY = Endpoint(
    "GET", f"{ENTRY_ID}/history", answer="versions (oldest first) and the audit log's events"
)
RESTORE = Endpoint(
    "POST", f"{ENTRY_ID}/restore", {"keep_successor": FLAG}, answer="the restored entry"
)
SUPERSEDED = Endpoint(
    "GET",
    "/v1/superseded",
    query={"scope": TEXT, "since": TIMESTAMP, "limit": INTEGER},
    required=("scope",),
    answer="the supersessions, latest first",
)

# -- agent memory -------------------------------------------------------------------------------

AGENTS = "/v1/agents"
RECORD_EXECUTION = Endpoint(
    "POST",
    f"{AGENTS}/executions",
    {
        "workflow_id": TEXT,
        "agent_id": TEXT,
        "input": TEXT,
        "success": FLAG,
        "output": TEXT,
        "strategy": TEXT,
        "kind": TEXT,
        "task_id": TEXT,
        "parent_id": TEXT,
        "model": TEXT,
        "tokens_in": INTEGER,
        "tokens_out": INTEGER,
        "cost": NUMBER,
        "duration_ms": NUMBER,
        "error_class": TEXT,
        "error_message": TEXT,
        "tool_calls": Field({"type": "array", "items": {"type": "object"}}, typed("array")),
        "session_id": TEXT,
        "user_id": TEXT,
        "scope": TEXT,
    },
    required=("workflow_id", "agent_id", "input", "success"),
    status=201,
    answer="the execution as recorded (redacted)",
)
EXECUTIONS = Endpoint(
    "GET",
    f"{AGENTS}/executions",
    query={
        "workflow_id": TEXT,
        "agent_id": TEXT,
        "task_id": TEXT,
        "strategy": TEXT,
        "kind": TEXT,
        "success": FLAG,
        "since": TIMESTAMP,
        "until": TIMESTAMP,
        "limit": INTEGER,
        "scope": TEXT,
    },
    answer="the executions, newest first",
)
SEARCH_EXECUTIONS = Endpoint(
    "POST",
    f"{AGENTS}/executions/search",
    {
        "query": TEXT,
        "limit": INTEGER,
        "agent_id": TEXT,
        "workflow_id": TEXT,
        "success": FLAG,
        "scope": TEXT,
    },
    required=("query",),
    answer="past executions like the query, best first, with their scores",
    reads=True,
)
STRATEGIES = Endpoint(
    "GET",
    f"{AGENTS}/strategies",
    query={"kind": TEXT, "scope": TEXT},
    answer="each strategy's statistics, overall and per kind of request",
)
CHOOSE_STRATEGY = Endpoint(
    "POST",
    f"{AGENTS}/strategies/choose",
    {
        "candidates": TEXTS,
        "query": TEXT,
        "kind": TEXT,
        "epsilon": NUMBER,
        "prefer": TEXT,
        "seed": INTEGER,
        "scope": TEXT,
    },
    required=("candidates",),
    answer="the strategy to run, and why",
    reads=True,
)
RECORD_DECOMPOSITION = Endpoint(
    "POST",
    f"{AGENTS}/decompositions",
    {
        "query": TEXT,
        "subtasks": TEXTS,
        "strategy": TEXT,
        "success": FLAG,
        "tokens": INTEGER,
        "duration_ms": NUMBER,
        "session_id": TEXT,
        "user_id": TEXT,
        "scope": TEXT,
    },
    required=("query", "subtasks"),
    status=201,
    answer="the decomposition, with every use of it so far",
)
SUGGEST_DECOMPOSITION = Endpoint(
    "POST",
    f"{AGENTS}/decompositions/suggest",
    {"query": TEXT, "limit": INTEGER, "min_similarity": NUMBER, "scope": TEXT},
    required=("query",),
    answer="past decompositions of similar requests that worked (empty: none fits)",
    reads=True,
)
FAILURE_PATTERNS = Endpoint(
    "GET",
    f"{AGENTS}/failures",
    query={"scope": TEXT},
    answer="the built-in failure patterns, then the learned ones",
)
CHECK_FAILURES = Endpoint(
    "POST",
    f"{AGENTS}/failures/check",
    {"query": TEXT, "plan": TEXT_OR_TEXTS, "scope": TEXT},
    required=("query",),
    answer="the failure patterns the request (and plan) shows signs of, with mitigations",
    reads=True,
)
