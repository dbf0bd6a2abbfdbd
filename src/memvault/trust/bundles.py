"""Session bundles: a session with everything it holds — the session, records, summaries,
Session Memory, findings, and the ``object:*`` entries created in it, superseded and expired ones
too — and their audit events, in one file (:mod:`memvault.trust.bundle_file`) that another
store (or this one) imports as a new session.

An import gives the session a fresh id and every entry a fresh id, and rewrites every reference
to them: scopes, supersession links, promotions, compactions, provenance, metadata (a summary's
records); a link to an entry or a session outside the bundle is dropped (it names nothing
here). An import teaches nothing: the session's extraction cursor is put at the end of its
records (history, not new turns), and no source says the user stated anything (this store did
not hear it). The private flag travels with the session. Vectors do not travel: the importing
store embeds with its own model. The whole import is one transaction: all of it, or nothing.
The checks and the rewriting (:func:`rebuilt`) are pure; :class:`BundlePlans` reads, writes and
stores.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from ..core import Plan, Planner, call, run, run_all
from ..errors import BundleError, ValidationError
from ..facilities.model import (
    LEARNED_THROUGH,
    RECORD,
    SESSION,
    SUMMARY,
    USER_STATED,
    Source,
    cursor_at,
)
from ..facilities.sessions import SessionPlans
from ..ids import new_id
from ..store.ops import AppendAuditOp, Filter, PutOp, StoredEmbeddingOp
from ..types import AuditEvent, MemoryEntry, Provenance, Scope, ScopeKind
from .bundle_file import (
    FORMAT,
    FORMAT_VERSION,
    BundleFile,
    bundle_bytes,
    parse_bundle,
    read_file,
    read_folder,
    write_folder,
    write_new_file,
)
from .erasure import counts_by_kind
from .untrusted import EVENT_CHANGES, check_owned, entry_of, event_of

UNINDEXED = frozenset({SESSION, SUMMARY})
"""Categories the store keeps without chunks or vectors (found by filters only)."""


@dataclass(frozen=True, slots=True)
class BundleReport:
    """What an export wrote or an import stored: the session (the new one, on import), how
    many entries per kind and audit events, and the bundle's SHA-256 (never content)."""

    session_id: str
    counts: Mapping[str, int] = field(default_factory=dict)
    events: int = 0
    sha256: str = ""
    path: str | None = None
    source_session_id: str | None = None
    """On import: the session's id in the store it was exported from."""
    files: int = 0
    """The files of the session's folder it carried."""

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "counts": dict(self.counts),
            "total": self.total,
            "events": self.events,
            "sha256": self.sha256,
            "path": self.path,
            "source_session_id": self.source_session_id,
            "files": self.files,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BundleReport:
        return cls(
            data["session_id"],
            dict(data["counts"]),
            data["events"],
            data["sha256"],
            data.get("path"),
            data.get("source_session_id"),
            data.get("files", 0),
        )


# -- import: checking and rewriting (pure) ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Rebuilt:
    """A bundle made ready to store: its entries and events under fresh ids."""

    session_id: str
    source_session_id: str
    entries: tuple[MemoryEntry, ...]
    events: tuple[AuditEvent, ...]


def _session_of(entries: Sequence[MemoryEntry]) -> str:
    sessions = [e for e in entries if e.category == SESSION and e.scope.kind is ScopeKind.SESSION]
    if len(sessions) != 1:
        raise BundleError(f"a bundle holds one session; this one holds {len(sessions)}")
    return sessions[0].scope.id


def _belongs(entry: MemoryEntry, session_id: str) -> bool:
    if entry.scope == Scope.session(session_id):
        return True
    made_here = entry.provenance.created_in_session_id == session_id
    return entry.scope.kind is ScopeKind.OBJECT and made_here


def _renamed(value: Any, names: Mapping[str, str]) -> Any:
    """``value`` with every string that is an old id (an entry's, the session's) renamed."""
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, Mapping):
        return {key: _renamed(item, names) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_renamed(item, names) for item in value]
    return value


def _heard(provenance: Provenance, old: str, new: str) -> Provenance:
    """Provenance as this store can vouch for it: made in the bundle's session (renamed) or
    in none, and never user-stated (this store did not hear the user say it)."""
    made_in = new if provenance.created_in_session_id == old else None
    source = Source.ASSISTANT_TURN if provenance.source in USER_STATED else provenance.source
    return replace(provenance, created_in_session_id=made_in, source=source)


def _moved(
    entry: MemoryEntry, ids: Mapping[str, str], names: Mapping[str, str], old: str, new: str
) -> MemoryEntry:
    scope = Scope.session(new) if entry.scope.kind is ScopeKind.SESSION else entry.scope
    return replace(
        entry,
        id=ids[entry.id],
        scope=scope,
        promoted_from_id=ids.get(entry.promoted_from_id or ""),
        compacted_from_ids=tuple(ids[i] for i in entry.compacted_from_ids if i in ids),
        superseded_by=ids.get(entry.superseded_by or ""),
        supersedes=tuple(ids[i] for i in entry.supersedes if i in ids),
        metadata=_renamed(dict(entry.metadata), names),
        provenance=_heard(entry.provenance, old, new),
        duplicate=False,
    )


def _read(entries: Sequence[MemoryEntry]) -> list[MemoryEntry]:
    """The entries with the session's extraction cursor at the end of its records (none without
    records): imported records are history, never turns to learn from."""
    last = max((e for e in entries if e.category == RECORD), key=_place, default=None)
    cursor = None if last is None else cursor_at(*_place(last))
    return [
        replace(e, metadata={**e.metadata, LEARNED_THROUGH: cursor}) if e.category == SESSION else e
        for e in entries
    ]


def _place(entry: MemoryEntry) -> tuple[datetime, str]:
    return entry.created_at, entry.id


def rebuilt(
    bundle: BundleFile,
    settings: Any,
    tenant: str,
    fresh_id: Callable[[], str],
    fresh_session: str,
) -> Rebuilt:
    """The bundle's entries and events checked and moved to fresh ids (``fresh_id()`` for each
    entry, ``fresh_session`` for the session) in ``tenant``; BundleError if it is not a whole,
    consistent session."""
    entries = [entry_of(i, raw, settings) for i, raw in enumerate(bundle.entries())]
    if len({e.id for e in entries}) != len(entries):
        raise BundleError("the bundle holds an entry id twice")
    old_session = _session_of(entries)
    for index, entry in enumerate(entries):
        if not _belongs(entry, old_session):
            raise BundleError(f"entry {index} of the bundle is not of the bundle's session")
        check_owned(index, entry, Scope.session(old_session))
    ids = {e.id: fresh_id() for e in entries}
    names = {**ids, old_session: fresh_session}
    moved = {e.id: _moved(e, ids, names, old_session, fresh_session) for e in entries}
    events = _events(bundle, moved, tenant)
    _check_manifest(bundle.manifest, entries, events, old_session)
    return Rebuilt(fresh_session, old_session, tuple(_read(list(moved.values()))), events)


def since_created(events: Sequence[AuditEvent]) -> list[AuditEvent]:
    """The events (in ``seq`` order) of each entry as it now is: from its latest creation on —
    an id written again (a LangGraph item put, deleted and put) starts over — and only its
    creation and changes (a deletion read while exporting is of an entry no longer there)."""
    latest = {e.entry_id: n for n, e in enumerate(events) if e.change == "created"}
    return [
        e
        for n, e in enumerate(events)
        if e.change in EVENT_CHANGES and n >= latest.get(e.entry_id, 0)
    ]


def _check_manifest(
    manifest: Mapping[str, Any],
    entries: Sequence[MemoryEntry],
    events: Sequence[AuditEvent],
    session_id: str,
) -> None:
    """The manifest says what the members hold: the session, the counts, the events."""
    if manifest.get("session_id") != session_id:
        raise BundleError("the bundle's session is not the one its manifest names")
    if manifest.get("counts") != counts_by_kind(entries):
        raise BundleError("the bundle's entries are not those its manifest counts")
    counted = manifest.get("events")
    if type(counted) is not int or counted != len(events):
        raise BundleError("the bundle's audit events are not those its manifest counts")


def _events(
    bundle: BundleFile, moved: Mapping[str, MemoryEntry], tenant: str
) -> tuple[AuditEvent, ...]:
    """The bundle's audit events of its entries, checked, under their entries' new ids and
    scopes, in ``tenant``; each says which bundle it came from."""
    found = []
    note = f"from bundle {bundle.sha256[:16]}"
    for index, raw in enumerate(bundle.events()):
        event = event_of(index, raw, tenant)
        entry = moved.get(str(event.entry_id))
        if entry is None:
            raise BundleError(f"audit event {index} of the bundle is not of one of its entries")
        found.append(replace(event, entry_id=entry.id, scope=str(entry.scope), note=note))
    return tuple(found)


# -- the plans -----------------------------------------------------------------------------------


class BundlePlans:
    """Session bundles as plans on the store planner and the sessions planner."""

    def __init__(self, store: Planner, sessions: SessionPlans) -> None:
        self.store = store
        self.sessions = sessions

    def export_session(self, session_id: str, path: str | Path) -> Plan[BundleReport]:
        """Write the session — with its records, summaries, Session Memory, findings, the
        object entries created in it (superseded and expired ones too) and their audit
        events — to a new bundle file at ``path`` (never over an existing file)."""
        if not isinstance(path, str | Path) or not str(path):
            raise ValidationError("path must name the bundle file to write")
        data, report = yield from self.session_bundle(session_id)
        written = yield from call(write_new_file, path, data, blocking=True)
        return replace(report, path=written)

    def session_bundle(self, session_id: str) -> Plan[tuple[bytes, BundleReport]]:
        """The bundle of a session, as bytes (what :meth:`export_session` writes)."""
        yield from self.sessions.session_entry(session_id)  # SessionNotFoundError
        tenant = self.store.tenant
        inside = yield from self.store.every(Filter(tenant, (Scope.session(session_id),)), "oldest")
        made_here = Filter(
            tenant,
            None,
            scope_kinds=(ScopeKind.OBJECT.value,),
            provenance=(("created_in_session_id", session_id),),
        )
        objects = yield from self.store.every(made_here, "oldest")
        entries = [*inside, *objects]
        events = since_created((yield from self.store.events(e.id for e in entries)))
        model = yield from run(StoredEmbeddingOp())
        files: dict[str, bytes] = {}
        if self.store.files is not None:
            folder = self.store.files.folder(tenant, session_id)
            files = yield from call(read_folder, folder, blocking=True)
        from importlib import metadata  # slow to import: only when a bundle is made

        manifest = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "memvault_version": metadata.version("memvault"),
            "embedding_model": None if model is None else {"name": model[0], "dimension": model[1]},
            "exported_at": self.store.now().isoformat(),
            "session_id": session_id,
            "counts": counts_by_kind(entries),
            "events": len(events),
            "files": len(files),
        }
        data = yield from call(
            bundle_bytes,
            manifest,
            [e.to_dict() for e in entries],
            [e.to_dict() | {"tenant": None} for e in events],
            files,
            blocking=True,
        )
        digest = yield from call(_sha256, data, blocking=True)
        counts = counts_by_kind(entries)
        return data, BundleReport(session_id, counts, len(events), digest, files=len(files))

    def import_session(self, path: str | Path) -> Plan[BundleReport]:
        """Import the bundle file at ``path`` as a new session (fresh ids, every reference
        rewritten, the private flag kept), in one transaction; a bundle that is corrupt,
        truncated, oversize, tampered with, of another format version or not a whole session
        is refused (BundleError) and nothing is stored."""
        if not isinstance(path, str | Path) or not str(path):
            raise ValidationError("path must name the bundle file to read")
        data = yield from call(read_file, path, blocking=True)
        return (yield from self.import_bundle(data))

    def import_bundle(self, data: bytes) -> Plan[BundleReport]:
        """Import a bundle's bytes (what :meth:`import_session` reads) as a new session."""
        if not isinstance(data, bytes | bytearray):
            raise ValidationError("a bundle is bytes")
        bundle = yield from call(parse_bundle, bytes(data), blocking=True)
        if bundle.files and self.store.files is None:
            raise BundleError(
                f"the bundle carries {len(bundle.files)} file(s) of its session's folder, and "
                "this store keeps no session folders (a store opened by URL does): nothing "
                "was imported"
            )
        now = self.store.now()
        ready = rebuilt(
            bundle,
            self.store.settings,
            self.store.tenant,
            lambda: new_id(now),
            f"s-{new_id(now).lower()}",
        )
        indexed = [e for e in ready.entries if e.category not in UNINDEXED]
        chunks = yield from self.store.index(indexed)
        chunked = dict(zip((e.id for e in indexed), chunks, strict=True))
        puts = [PutOp(self.store.tenant, e, chunks=chunked.get(e.id, ())) for e in ready.entries]
        yield from run_all([*puts, AppendAuditOp(ready.events)])
        if bundle.files and self.store.files is not None:
            folder = self.store.files.folder(self.store.tenant, ready.session_id)
            yield from call(write_folder, folder, bundle.files, blocking=True)
        return BundleReport(
            ready.session_id,
            counts_by_kind(ready.entries),
            len(ready.events),
            bundle.sha256,
            source_session_id=ready.source_session_id,
            files=len(bundle.files),
        )


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
