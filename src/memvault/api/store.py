"""The scoped store's operations, each declared once: its plan, its endpoint, its answer.

``compact`` comes in two steps over the wire, as its callback runs at the caller's: read the
sources, then store the text the callback made of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from .. import validation as check
from ..core import Planner, summarised
from ..drivers import Steps
from ..errors import CompactionError, NotFoundError, ValidationError, restated
from ..rest.answers import Each, Value, Whole, Written
from ..rest.codec import decoded, entry_fields, request, wire
from ..rest.endpoints import Endpoint
from ..rest.fields import (
    FLAG,
    INTEGER,
    INTEGERS,
    NUMBER,
    OBJECT,
    SECONDS,
    TAG_PARAM,
    TEXT,
    TEXTS,
    TIMESTAMP,
    Field,
    typed,
)
from ..types import ItemResult, MemoryEntry, NewEntry, Page, SearchHit, WriteReport
from .operation import ENTRIES, Operation, local

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
ENTRY_IDS = replace(TEXTS, keyword="entry_ids")
"""A body's ``ids``: the plan's ``entry_ids``."""


def _get(op: Operation[Any, MemoryEntry | None], named: dict[str, Any]) -> Steps[Any]:
    sent = request(op.sent_to, named)
    try:
        body = yield sent
    except NotFoundError:
        return None
    return decoded(op.answer.decode, body, sent)


def _write_many(op: Operation[Any, WriteReport], named: dict[str, Any]) -> Steps[Any]:
    """Items that cannot be sent (not finite, not JSON) are refused here, as the core refuses
    them, and the server's report is told in the caller's numbering."""
    items, strict = named["items"], named.get("strict", False)
    if isinstance(items, str | bytes | Mapping) or not isinstance(items, Iterable):
        raise ValidationError(f"items must be a list of entries, got {type(items).__name__}")
    sent, positions, refused = [], [], []
    for index, item in enumerate(items):
        try:
            check.arguments({"": item})
            entry = isinstance(item, NewEntry | Mapping)
            sent.append(entry_fields(item, "item") if entry else wire(item, "item"))
            positions.append(index)
        except ValidationError as exc:
            if strict:
                raise restated(exc, f"item {index}", index) from exc
            refused.append(ItemResult.refusal(index, exc))
    batch = request(op.sent_to, {**named, "items": sent})
    report: WriteReport = decoded(op.answer.decode, (yield batch), batch)
    return report.placed(positions, refused)


COMPACTION_SOURCES = Endpoint(
    "POST",
    "/v1/memories/compact/sources",
    {"ids": ENTRY_IDS, "scope": TEXT},
    required=("ids",),
    answer="the entries a compaction would merge (nothing changes)",
    reads=True,
)


def _compact(op: Operation[Any, MemoryEntry], named: dict[str, Any]) -> Steps[Any]:
    """Read the sources (the server checks them), make their text with the callback here,
    then store it — if the sources are still at the revisions the text was made from."""
    callback = named.pop("callback")
    asked = request(COMPACTION_SOURCES, {k: named[k] for k in ("entry_ids", "scope") if k in named})
    sources: list[MemoryEntry] = decoded(ENTRIES.decode, (yield asked), asked)
    ids = [e.id for e in sources]
    text = yield from summarised(ids, callback, sources)
    if not isinstance(text, str):  # as the core says it: the server only checks text
        kind = type(text).__name__
        raise CompactionError(
            ids, f"the callback's result is unusable: content must be a string, got {kind}"
        )
    revisions = [e.revision for e in sources]
    store = request(op.sent_to, {**named, "content": text, "revisions": revisions})
    return decoded(op.answer.decode, (yield store), store)


WRITE = Operation(
    Planner.write,
    Endpoint(
        "POST",
        "/v1/memories",
        {**ENTRY, "ttl": SECONDS},
        required=ENTRY_REQUIRED,
        status=201,
        answer="the entry",
    ),
    Written(MemoryEntry),
)
WRITE_MANY = Operation(
    Planner.write_many,
    Endpoint(
        "POST",
        "/v1/memories/batch",
        {"items": ITEMS, "strict": FLAG},
        required=("items",),
        status=201,
        answer="counts stored/merged/refused and each item's outcome, in order",
    ),
    Whole(WriteReport),
    run=_write_many,
    special="each item is read as an entry and the report numbered as the caller's batch",
)
RETRIEVE = Operation(
    Planner.retrieve,
    Endpoint(
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
    ),
    ENTRIES,
)
GET = Operation(
    Planner.get,
    Endpoint("GET", ENTRY_ID, answer="the entry"),
    Whole(MemoryEntry),
    run=_get,
    special="no entry is a 404 on the wire (None here)",
)
UPDATE = Operation(
    Planner.update,
    Endpoint(
        "PATCH",
        ENTRY_ID,
        {
            "content": TEXT,
            "tags": TEXTS,
            "expires_at": replace(TIMESTAMP, nullable=True),
            "metadata": OBJECT,
        },
        answer="the updated entry",
    ),
    Whole(MemoryEntry),
)
DELETE = Operation(
    Planner.delete, Endpoint("DELETE", ENTRY_ID, answer="whether it existed"), Value("deleted")
)
DELETE_BY_SCOPE = Operation(
    Planner.delete_by_scope,
    Endpoint("DELETE", "/v1/scopes/{scope:path}", answer="how many were deleted"),
    Value("deleted"),
)
PROMOTE = Operation(
    Planner.promote,
    Endpoint(
        "POST",
        f"{ENTRY_ID}/promote",
        {"to": TEXT, "delete_original": FLAG, "content": TEXT, "tags": TEXTS},
        required=("to",),
        status=201,
        answer="the new entry",
    ),
    Written(MemoryEntry),
)
COMPACT = Operation(
    Planner.compact,
    Endpoint(
        "POST",
        "/v1/memories/compact",
        {
            "ids": ENTRY_IDS,
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
    ),
    Whole(MemoryEntry),
    run=_compact,
    kept=("callback",),
    special="the callback runs at the caller's: the server stores the text it made",
)
COUNT = Operation(
    Planner.count,
    Endpoint(
        "GET",
        "/v1/count",
        query={**SELECT, **NARROWER, **VERSIONS, "include_expired": FLAG},
        answer="the count",
    ),
    Value("count"),
)
LIST = Operation(
    Planner.list,
    Endpoint(
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
    ),
    Whole(Page),
)
PURGE_EXPIRED = Operation(
    Planner.purge_expired,
    Endpoint("POST", "/v1/purge-expired", {}, answer="how many were purged"),
    Value("purged"),
)
SEARCH = Operation(
    Planner.search,
    Endpoint(
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
            "min_relevance": NUMBER,
            "decay": FLAG,
        },
        required=("query", "scope"),
        answer="the hits",
        reads=True,
    ),
    Each("hits", SearchHit),
)
REINFORCE = Operation(
    Planner.reinforce,
    Endpoint(
        "POST",
        "/v1/memories/reinforce",
        {"ids": ENTRY_IDS},
        required=("ids",),
        answer="how many entries were reinforced",
    ),
    Value("reinforced"),
)
REEMBED = local(
    Planner.reembed,
    "it rewrites every tenant's vectors: run `memvault reembed` on the server's store",
)

OPERATIONS = (
    WRITE,
    WRITE_MANY,
    RETRIEVE,
    GET,
    UPDATE,
    DELETE,
    DELETE_BY_SCOPE,
    PROMOTE,
    COMPACT,
    COUNT,
    LIST,
    PURGE_EXPIRED,
    SEARCH,
    REINFORCE,
    REEMBED,
)

# -- what is not an operation of a planner ------------------------------------------------------

TENANT = Endpoint(
    "GET", "/v1/tenant", answer="the tenant the request acts in, and the actor its changes name"
)
STATS = Endpoint("GET", "/v1/stats", answer="the server's counters")


def tenant() -> Steps[tuple[str, str]]:
    """The tenant the server lets the key act in, and the actor its audit log names."""
    asked = request(TENANT, {})
    return decoded(lambda body: (str(body["tenant"]), str(body["actor"])), (yield asked), asked)


def stats() -> Steps[dict[str, int]]:
    asked = request(STATS, {})
    return decoded(dict, (yield asked), asked)
