"""REST routes of the scoped store: every operation of ``Memory`` but ``compact`` and
``reembed`` (which take callbacks or the whole store)."""

from __future__ import annotations

from dataclasses import replace

from ..errors import NotFoundError, ValidationError
from ..memory import AsyncMemory
from ..types import ItemResult, MemoryEntry, NewEntry
from .payload import (
    FLAG,
    INTEGER,
    NUMBER,
    OBJECT,
    SECONDS,
    TAG_PARAM,
    TEXT,
    TEXTS,
    TIMESTAMP,
    Field,
    fields,
    typed,
)
from .routes import Answer, Call, Route

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
WRITE = ("content", "scope")
ITEMS = Field({"type": "array", "items": {"type": "object"}}, typed("array"))
NARROWER = {"include_narrower": FLAG, "session_id": TEXT}
SELECT = {"scope": TEXT, "tag": TAG_PARAM, "since": TIMESTAMP}
VERSIONS = {"as_of": TIMESTAMP, "include_superseded": FLAG}
"""What held at an instant, or every version (superseded entries are left out by default)."""


async def write(memory: AsyncMemory, call: Call) -> Answer:
    """Store one entry; an entry already stating the same fact is returned instead (200)."""
    return written(await memory.write(**call.args))


def written(entry: MemoryEntry) -> Answer:
    """201 and the new entry, or 200 and the existing one it restates (``duplicate``)."""
    return (200 if entry.duplicate else 201), {**entry.to_dict(), "duplicate": entry.duplicate}


async def write_batch(memory: AsyncMemory, call: Call) -> Answer:
    """Store several entries in one transaction; report each item: stored, merged or refused."""
    items, strict = call.args["items"], call.args.get("strict", False)
    most = memory.settings.max_batch_items
    if len(items) > most:
        raise ValidationError(
            f"a batch may hold at most {most:,} items, got {len(items):,} "
            "(send several batches, or raise MEMVAULT_MAX_BATCH_ITEMS)"
        )
    requests, positions, refused = [], [], []
    for index, item in enumerate(items):
        try:
            requests.append(NewEntry(**fields(item, ENTRY, WRITE)))
            positions.append(index)
        except ValidationError as exc:
            if strict:
                raise ValidationError(f"items[{index}]: {exc}") from exc
            refused.append(ItemResult.refusal(index, exc))
    report = await memory.write_many(requests, strict=strict)
    merged = report.placed(positions, refused)
    return (201 if merged.stored else 200), merged.to_dict()


async def list_entries(memory: AsyncMemory, call: Call) -> Answer:
    """One page of entries, newest first; follow next_cursor."""
    page = await memory.list(**call.args)
    return 200, {"entries": [e.to_dict() for e in page.entries], "next_cursor": page.next_cursor}


async def get_entry(memory: AsyncMemory, call: Call) -> Answer:
    """One live entry."""
    entry = await memory.get(call.path["entry_id"])
    if entry is None:
        raise NotFoundError(call.path["entry_id"])
    return 200, entry.to_dict()


async def update_entry(memory: AsyncMemory, call: Call) -> Answer:
    """Change content, tags, expiry (null clears it) or metadata."""
    if not call.args:
        raise ValidationError("nothing to update; give content, tags, expires_at or metadata")
    return 200, (await memory.update(call.path["entry_id"], **call.args)).to_dict()


async def delete_entry(memory: AsyncMemory, call: Call) -> Answer:
    """Delete one entry (not an error if it is already gone)."""
    return 200, {"deleted": await memory.delete(call.path["entry_id"])}


async def promote_entry(memory: AsyncMemory, call: Call) -> Answer:
    """Copy an entry into a broader scope (200 if the scope already states the same fact)."""
    return written(await memory.promote(call.path["entry_id"], **call.args))


async def delete_scope(memory: AsyncMemory, call: Call) -> Answer:
    """Delete every entry of exactly one scope."""
    return 200, {"deleted": await memory.delete_by_scope(call.path["scope"])}


async def retrieve(memory: AsyncMemory, call: Call) -> Answer:
    """Unexpired entries of a scope with all the tags."""
    return 200, {"entries": [e.to_dict() for e in await memory.retrieve(**call.args)]}


async def search(memory: AsyncMemory, call: Call) -> Answer:
    """Hybrid search, best first, with component scores."""
    return 200, {"hits": [hit.to_dict() for hit in await memory.search(**call.args)]}


async def count(memory: AsyncMemory, call: Call) -> Answer:
    """How many unexpired entries match."""
    return 200, {"count": await memory.count(**call.args)}


async def purge_expired(memory: AsyncMemory, call: Call) -> Answer:
    """Really delete expired entries."""
    return 200, {"purged": await memory.purge_expired()}


SEARCH = {
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
    **VERSIONS,
}
ENTRY_ID = "/v1/memories/{entry_id}"
ROUTES = (
    Route(
        "POST",
        "/v1/memories",
        write,
        {**ENTRY, "ttl": SECONDS},
        required=WRITE,
        status=201,
        answer="the entry",
    ),
    Route(
        "GET",
        "/v1/memories",
        list_entries,
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
    Route(
        "POST",
        "/v1/memories/batch",
        write_batch,
        {"items": ITEMS, "strict": FLAG},
        required=("items",),
        status=201,
        answer="counts stored/merged/refused and each item's outcome, in order",
    ),
    Route("GET", ENTRY_ID, get_entry, answer="the entry"),
    Route(
        "PATCH",
        ENTRY_ID,
        update_entry,
        {
            "content": TEXT,
            "tags": TEXTS,
            "expires_at": replace(TIMESTAMP, nullable=True),
            "metadata": OBJECT,
        },
        answer="the updated entry",
    ),
    Route("DELETE", ENTRY_ID, delete_entry, answer="whether it existed"),
    Route(
        "POST",
        f"{ENTRY_ID}/promote",
        promote_entry,
        {"to": TEXT, "delete_original": FLAG, "content": TEXT, "tags": TEXTS},
        required=("to",),
        status=201,
        answer="the new entry",
    ),
    Route("DELETE", "/v1/scopes/{scope:path}", delete_scope, answer="how many were deleted"),
    Route(
        "POST",
        "/v1/retrieve",
        retrieve,
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
    ),
    Route("POST", "/v1/search", search, SEARCH, required=("query", "scope"), answer="the hits"),
    Route("GET", "/v1/count", count, query={**SELECT, **NARROWER, **VERSIONS}, answer="the count"),
    Route("POST", "/v1/purge-expired", purge_expired, {}, answer="how many were purged"),
)
