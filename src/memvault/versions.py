"""Supersession: a changed fact replaces the old one, which is kept, linked and hidden.

A superseded entry gets ``valid_to`` (when its successor's validity began), ``superseded_by``
and ``superseded_reason``; its successor lists it in ``supersedes``. Default reads, searches
and prompts leave superseded entries out; ``as_of`` reads what held at an instant;
:meth:`VersionPlans.history` walks the chain and :meth:`VersionPlans.restore` undoes a
supersession. A restatement of the same fact is not a change: it merges (see
:mod:`memvault.store.duplicates`). Deleting an entry mends its chain (see
:mod:`memvault.store.chains`). Superseding an entry that is superseded already — by a
concurrent caller or long ago — raises ConflictError naming its current version.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from . import validation as check
from .core import Plan, Planner, merge_provenance, run, run_all
from .errors import ConflictError, NotFoundError, ValidationError
from .store import duplicates
from .store.ops import ChunkRecord, Filter, GetOp, ReplaceOp
from .types import AuditEvent, MemoryEntry, NewEntry, Provenance, Scope


def _lineage(olds: Sequence[MemoryEntry]) -> Provenance:
    """What a successor inherits of its predecessors' provenance when given none: where they
    came from (the session they were made in; a tool's output stays a tool's), not who vouched
    for them (source, agent, confidence belong to what the caller says now)."""
    merged = merge_provenance(olds)
    return Provenance(
        created_in_session_id=merged.created_in_session_id,
        tool_originated=merged.tool_originated,
    )


MAX_CHAIN = 1000
"""Most entries :meth:`VersionPlans.history` follows."""
MAX_REASON_CHARS = 500


@dataclass(frozen=True, slots=True)
class History:
    """A fact's history: the versions the store still holds (oldest first), and what the
    audit log says happened to each of them — and to versions deleted since."""

    versions: tuple[MemoryEntry, ...]
    events: tuple[AuditEvent, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "versions": [e.to_dict() for e in self.versions],
            "events": [e.to_dict() for e in self.events],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> History:
        return cls(
            tuple(MemoryEntry.from_dict(e) for e in data["versions"]),
            tuple(AuditEvent.from_dict(e) for e in data["events"]),
        )


@dataclass(frozen=True, slots=True)
class Supersession:
    """One entry a successor replaced: what it said, what replaced it, why and when."""

    entry: MemoryEntry
    successor: MemoryEntry | None
    """None when the successor has been deleted since."""
    reason: str | None
    at: datetime

    def to_dict(self) -> dict[str, Any]:
        return {
            "entry": self.entry.to_dict(),
            "successor": None if self.successor is None else self.successor.to_dict(),
            "reason": self.reason,
            "at": self.at.isoformat(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Supersession:
        successor = data["successor"]
        return cls(
            MemoryEntry.from_dict(data["entry"]),
            None if successor is None else MemoryEntry.from_dict(successor),
            data["reason"],
            datetime.fromisoformat(data["at"]),
        )


def reason_text(reason: object) -> str | None:
    """A supersession reason: None, or one line of at most 500 characters."""
    if reason is None:
        return None
    if not isinstance(reason, str) or not reason.strip():
        raise ValidationError("reason must be a non-empty string or None")
    if len(reason) > MAX_REASON_CHARS:
        raise ValidationError(f"reason is longer than {MAX_REASON_CHARS} characters")
    return " ".join(reason.split())


def retire(
    tenant: str,
    old: MemoryEntry,
    successor: MemoryEntry,
    reason: str | None,
    now: datetime,
    *,
    since: datetime | None = None,
) -> ReplaceOp:
    """The op that marks ``old`` superseded by ``successor`` (checked against its revision),
    from ``since`` (default: when the successor's validity began)."""
    retired = replace(
        old,
        valid_to=max(successor.valid_from if since is None else since, old.valid_from),
        superseded_by=successor.id,
        superseded_reason=reason,
        updated_at=now,
        revision=old.revision + 1,
    )
    return ReplaceOp(tenant, retired, old.revision)


def superseded_error(entry: MemoryEntry, head: MemoryEntry | None) -> ConflictError:
    """What superseding ``entry``, superseded already, raises: it names the current version."""
    if head is None:
        return ConflictError(
            f"entry {entry.id} was superseded meanwhile and no current version is left; "
            f"restore {entry.id} to change it"
        )
    return ConflictError(
        f"entry {entry.id} was superseded by {head.id} meanwhile; supersede {head.id}"
    )


class VersionPlans:
    """Plans that supersede, restore and trace entries; composed on the store planner."""

    def __init__(self, store: Planner) -> None:
        self.store = store

    def supersede(
        self,
        entry_ids: str | Sequence[str],
        content: str,
        *,
        reason: str | None = None,
        tags: Iterable[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        provenance: Provenance | Mapping[str, Any] | None = None,
        created_at: datetime | None = None,
    ) -> Plan[MemoryEntry]:
        """Replace current entries of one scope by a new entry stating the changed fact.

        The new entry takes their scope and category (tags default to the first one's; its
        provenance keeps the old ones' lineage — the session they were made in, whether a tool
        made them — never who vouched for them); the old ones are
        kept, hidden from default reads, linked to it with ``reason``, in one transaction. If
        ``content`` restates an old entry, nothing changes and that entry is returned with
        ``duplicate=True``; if it restates another current entry of the scope and category,
        the old ones are retired in favour of that one, returned with ``duplicate=True``. An
        entry superseded already (by a concurrent caller too) raises ConflictError naming its
        current version.
        """
        reason = reason_text(reason)
        olds = yield from self.current(entry_ids)
        scope = olds[0].scope
        if any(old.scope != scope for old in olds):
            raise ValidationError("superseded entries must all be in one scope")
        now = self.store.now()
        request = NewEntry(
            content,
            scope,
            tags=olds[0].tags if tags is None else tags,
            category=olds[0].category,
            metadata=metadata,
            provenance=_lineage(olds) if provenance is None else provenance,
            created_at=created_at,
        )
        entry = self.store.new_entry(request, now)
        self.store.admit(entry.content)
        same = next((old for old in olds if duplicates.restates(old.content, entry.content)), None)
        if same is not None:
            self.store.stats.add("near_duplicate")
            return replace(same, duplicate=True)
        (chunks,) = yield from self.store.index([entry])
        twin = yield from self.store.twin(entry, chunks)
        try:
            if twin is not None:
                return (yield from self._adopt(twin, olds, reason, entry.valid_from))
            return (yield from self.replace_with(entry, olds, reason, chunks=chunks))
        except ConflictError:
            yield from self.current([old.id for old in olds])  # names a successor, if one won
            raise

    def replace_with(
        self,
        entry: MemoryEntry,
        olds: Sequence[MemoryEntry],
        reason: str | None,
        *,
        chunks: tuple[ChunkRecord, ...] | None = None,
    ) -> Plan[MemoryEntry]:
        """Store ``entry`` and retire ``olds`` in its favour, in one transaction."""
        entry = replace(entry, supersedes=tuple(old.id for old in olds))
        now = self.store.now()
        retirements = [retire(self.store.tenant, old, entry, reason, now) for old in olds]
        stored = yield from self.store.put(entry, also=retirements, chunks=chunks)
        self.store.stats.add("superseded", len(olds))
        return stored

    def _adopt(
        self, twin: MemoryEntry, olds: Sequence[MemoryEntry], reason: str | None, since: datetime
    ) -> Plan[MemoryEntry]:
        """Retire ``olds`` (from ``since``) in favour of ``twin``, a current entry stating the
        new fact already, in one transaction."""
        now = self.store.now()
        linked = replace(
            twin,
            supersedes=(*twin.supersedes, *(old.id for old in olds)),
            revision=twin.revision + 1,
        )
        tenant = self.store.tenant
        retirements = [retire(tenant, old, linked, reason, now, since=since) for old in olds]
        yield from run(ReplaceOp(tenant, linked, twin.revision), *retirements)
        self.store.stats.add("near_duplicate")
        self.store.stats.add("superseded", len(olds))
        return replace(linked, duplicate=True)

    def current(self, entry_ids: str | Sequence[str]) -> Plan[builtins.list[MemoryEntry]]:
        """The live, current entries with these ids (NotFoundError; ConflictError naming the
        current version of one that is superseded already)."""
        ids = check.entry_ids("entry_ids", [entry_ids] if isinstance(entry_ids, str) else entry_ids)
        if not ids or len(set(ids)) != len(ids):
            raise ValidationError("supersede needs a non-empty list of distinct entry ids")
        found = []
        for entry_id in ids:
            entry = Planner.editable((yield from self.store.live(entry_id)))
            if entry.superseded:
                raise superseded_error(entry, (yield from self._head(entry)))
            found.append(entry)
        return found

    def history(self, entry_id: str) -> Plan[History]:
        """The fact ``entry_id`` belongs to: every version the store holds, oldest first (the
        entries it replaced and those that replaced it, transitively), and every audit event
        of them — and of versions they still name that are gone — oldest first (who created,
        changed, superseded, restored each, when). An entry deleted since has its events only;
        NotFoundError if the store knows nothing of it."""
        entry_id = check.entry_id(entry_id)
        start = yield from run(GetOp(self.store.tenant, entry_id))
        if start is None:
            events = yield from self.store.events([entry_id])
            if not events:
                raise NotFoundError(entry_id)
            return History((), tuple(events))
        seen = {start.id: start}
        linked_ids = {start.id}
        frontier = [start]
        while frontier and len(seen) < MAX_CHAIN:
            linked = {i for e in frontier for i in (*e.supersedes, e.superseded_by) if i}
            linked_ids |= linked
            fresh = sorted(linked - seen.keys())
            found = yield from run_all(GetOp(self.store.tenant, i) for i in fresh)
            frontier = [e for e in found if e is not None]
            seen.update((e.id, e) for e in frontier)
        versions = sorted(seen.values(), key=lambda e: (e.valid_from, e.created_at, e.id))
        events = yield from self.store.events(linked_ids)
        return History(tuple(versions), tuple(events))

    def restore(self, entry_id: str, *, keep_successor: bool = False) -> Plan[MemoryEntry]:
        """Undo the supersession of ``entry_id``: it is current again.

        By default the update was wrong: the current end of its chain is retired in its favour
        (kept, linked, reason ``restored``); a chain whose current end was deleted has none.
        With ``keep_successor=True`` both facts hold: the successor stays current and no longer
        claims to replace it. Where a successor is missing from the chain (expired entries are
        purged without mending it), the entry of the scope that lists it in ``supersedes``
        continues the chain.
        """
        entry = yield from self.store.live(entry_id)
        if not entry.superseded:
            raise ValidationError(f"entry {entry_id} is current: there is nothing to restore")
        now = self.store.now()
        restored = replace(
            entry,
            valid_to=None,
            superseded_by=None,
            superseded_reason=None,
            updated_at=now,
            revision=entry.revision + 1,
        )
        successor = yield from run(GetOp(self.store.tenant, str(entry.superseded_by)))
        ops = []
        if keep_successor and successor is not None:
            kept = tuple(i for i in successor.supersedes if i != entry.id)
            ops.append(self._relinked(successor, kept, now))
        head = None if keep_successor else (yield from self._head(entry))
        if head is not None and head.id != entry.id:
            kept = tuple(i for i in entry.supersedes if i != head.id)
            restored = replace(restored, supersedes=(*kept, head.id))
            ops.append(retire(self.store.tenant, head, restored, f"restored {entry.id}", now))
        yield from run(ReplaceOp(self.store.tenant, restored, entry.revision), *ops)
        self.store.stats.add("restored")
        return restored

    def _relinked(self, entry: MemoryEntry, supersedes: tuple[str, ...], now: datetime) -> Any:
        changed = replace(entry, supersedes=supersedes, updated_at=now, revision=entry.revision + 1)
        return ReplaceOp(self.store.tenant, changed, entry.revision)

    def _head(self, entry: MemoryEntry) -> Plan[MemoryEntry | None]:
        """The current entry at the end of ``entry``'s chain (None if the chain has none)."""
        for _ in range(MAX_CHAIN):
            if not entry.superseded or entry.superseded_by is None:
                return None if entry.superseded else entry
            after = yield from run(GetOp(self.store.tenant, entry.superseded_by))
            if after is None:
                after = yield from self._claimant(entry)
            if after is None:
                return None
            entry = after
        return None

    def _claimant(self, entry: MemoryEntry) -> Plan[MemoryEntry | None]:
        """The entry of ``entry``'s scope that lists its missing successor in ``supersedes``."""
        found = yield from self.store.every(Filter(self.store.tenant, (entry.scope,)))
        missing = entry.superseded_by
        return next((e for e in found if missing in e.supersedes and e.id != entry.id), None)

    def superseded(
        self, scope: Scope | str, *, since: datetime | None = None, limit: int = 100
    ) -> Plan[builtins.list[Supersession]]:
        """The review list: entries of ``scope`` superseded (since ``since``), latest first,
        each with its successor and reason, to confirm or undo with :meth:`restore`."""
        limit = check.limit(limit, self.store.settings)
        since = None if since is None else check.aware("since", since)
        where = Filter(self.store.tenant, (Scope.coerce(scope),), superseded="only")
        found = yield from self.store.every(where)
        recent = [e for e in found if since is None or e.updated_at >= since]
        recent.sort(key=lambda e: (e.updated_at, e.id), reverse=True)
        recent = recent[:limit]
        successors = yield from run_all(
            GetOp(self.store.tenant, str(e.superseded_by)) for e in recent
        )
        return [
            Supersession(e, s, e.superseded_reason, e.updated_at)
            for e, s in zip(recent, successors, strict=True)
        ]
