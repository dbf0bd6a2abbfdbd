"""REST routes of the scoped store: every operation of ``Memory`` but ``reembed`` (which
re-embeds every tenant's store). ``compact`` comes in two steps, as its callback runs at the
caller's: read the sources, then store the text the callback made of them."""

from __future__ import annotations

from collections.abc import Sequence

from .. import validation as check
from ..api import store as api
from ..api import trust
from ..errors import (
    CompactionError,
    ConflictError,
    ForbiddenError,
    NotFoundError,
    ValidationError,
)
from ..memory import AsyncMemory
from ..rest.fields import fields
from ..types import ItemResult, MemoryEntry, NewEntry
from .routes import Answer, Call, Route


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
            requests.append(NewEntry(**fields(item, api.ENTRY, api.ENTRY_REQUIRED)))
            positions.append(index)
        except ValidationError as exc:
            if strict:
                raise ValidationError(f"items[{index}]: {exc}") from exc
            refused.append(ItemResult.refusal(index, exc))
    report = await memory.write_many(requests, strict=strict)
    merged = report.placed(positions, refused)
    return (201 if merged.stored else 200), merged.to_dict()


async def compaction_sources(memory: AsyncMemory, call: Call) -> Answer:
    """Check a compaction and read the entries it would merge (the caller's callback then
    makes their text); nothing changes."""
    check.arguments(call.args)
    plan = memory.planners.store.compaction_sources(**call.args)
    found = await memory.run_plan(plan, "compact", changes=False)  # it shows them: a read
    return 200, {"entries": [e.to_dict() for e in found]}


async def compact(memory: AsyncMemory, call: Call) -> Answer:
    """Merge entries of one scope into a new one with the given content; with revisions, only
    if the sources are still at them (their text was made from those)."""
    args = dict(call.args)
    content: str = args.pop("content")
    revisions = args.pop("revisions", None)

    def text(sources: Sequence[MemoryEntry]) -> str:
        if revisions is not None and [s.revision for s in sources] != revisions:
            raise ConflictError("the entries changed since they were read; compact again")
        return content

    try:
        return 201, (await memory.compact(callback=text, **args)).to_dict()
    except CompactionError as exc:
        if isinstance(exc.__cause__, ConflictError):
            raise exc.__cause__ from None
        raise


async def get_entry(memory: AsyncMemory, call: Call) -> Answer:
    """One live entry."""
    entry = await memory.get(call.path["entry_id"])
    if entry is None:
        raise NotFoundError(call.path["entry_id"])
    return 200, entry.to_dict()


async def tenant(memory: AsyncMemory, call: Call) -> Answer:
    """The tenant this request acts in (the API key's), the actor the audit log names, and
    what the key may read and write there (a field is null where it grants every scope)."""
    return 200, {"tenant": memory.tenant, "actor": memory.actor, "grant": memory.grant.to_dict()}


async def stats(memory: AsyncMemory, call: Call) -> Answer:
    """The server's counters (of the store it serves, all tenants: those of ``Memory.stats``)."""
    return 200, await memory.stats()


async def erase(memory: AsyncMemory, call: Call) -> Answer:
    """Erase a user, a scope, or the caller's own tenant (no key reaches another tenant)."""
    asked = call.args.get("tenant")
    if asked is not None and asked != memory.tenant:
        raise ForbiddenError(f"a key of tenant {memory.tenant!r} cannot erase another tenant")
    return 200, (await memory.erase(**call.args)).to_dict()


ROUTES = (
    Route(api.WRITE_MANY.sent_to, write_batch),
    Route(api.COMPACTION_SOURCES, compaction_sources),
    Route(api.COMPACT.sent_to, compact),
    Route(api.GET.sent_to, get_entry),
    Route(api.TENANT, tenant),
    Route(api.STATS, stats),
    Route(trust.ERASE.sent_to, erase),
)
