"""Sessions and their Records: plans on the scoped store (no I/O of their own)."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from .. import validation as check
from ..core import Plan, Planner, run, run_pair
from ..errors import InvalidScopeError, SessionNotFoundError, ValidationError, shown
from ..ids import new_id
from ..retrieval.ranker import RankSpec
from ..store.ops import (
    DeleteMatchingOp,
    DeleteScopeOp,
    Filter,
    ForgetCopiesOp,
    ListOp,
    Op,
    ReachOp,
    ReplaceOp,
)
from ..types import MemoryEntry, NewEntry, Provenance, Scope, ScopeKind, SearchHit
from .model import RECORD, ROLES, SESSION, Record, Session, SessionHit, by_best_turn, one_of

SESSION_SEARCH_RECORDS = 200
"""A session search ranks this many of the best records (at least) to find its sessions."""


Observer = Callable[[MemoryEntry, Sequence[MemoryEntry]], list[Op[Any]]]
"""Ops made of records appended to a session (the session's entry, the records)."""


class SessionPlans:
    """Sessions (create, list, get, rename, mark data loaded, delete) and Records, as plans on
    the store planner."""

    def __init__(self, store: Planner) -> None:
        self.store = store
        self.observers: list[Observer] = []
        """What else learns from the records appended to a session, in their transaction."""

    # -- sessions -----------------------------------------------------------------------------

    def create_session(
        self,
        user_id: str,
        *,
        title: str = "New session",
        private: bool = False,
        profile: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Plan[Session]:
        """Start a session of ``user_id``. ``private`` is fixed for the session's life."""
        Scope.user(user_id)
        if not isinstance(private, bool):
            raise ValidationError("private must be true or false")
        now = self.store.now()
        if isinstance(session_id, str) and ("/" in session_id or session_id in {".", ".."}):
            raise InvalidScopeError(
                f"session id {shown(session_id)} holds a '/' or is a dot segment: a session is "
                "named in URLs (REST, the inspector, MCP resources), where neither can stand as "
                "one part"
            )
        sid = session_id if session_id is not None else f"s-{new_id(now).lower()}"
        scope = Scope.session(sid)
        existing = yield from run(ListOp(self._session_filter(scope), 1))
        if existing:
            raise ValidationError(f"session {sid} already exists")
        extra = check.metadata(metadata, self.store.settings)
        attributes = {
            "user_id": user_id,
            "private": private,
            "has_data": False,
            "profile": profile,
            "extra": extra,
        }
        request = NewEntry(title, scope, category=SESSION, metadata=attributes)
        entry = yield from self.store.put(self.store.new_entry(request, now), indexed=False)
        return Session.from_entry(entry)

    def get_session(self, session_id: str) -> Plan[Session]:
        """The session, or SessionNotFoundError."""
        return Session.from_entry((yield from self.session_entry(session_id)))

    def list_sessions(
        self, user_id: str | None = None, *, limit: int = 100
    ) -> Plan[builtins.list[Session]]:
        """Sessions, newest first (of one user, or of every user of the tenant)."""
        where = Filter(
            self.store.tenant,
            None,
            categories=(SESSION,),
            metadata=(("user_id", user_id),) if user_id is not None else (),
            scope_kinds=(ScopeKind.SESSION,),  # where sessions live: what a grant must cover
        )
        found = yield from run(ListOp(where, check.limit(limit, self.store.settings)))
        return [Session.from_entry(e) for e in found]

    def rename_session(self, session_id: str, title: str) -> Plan[Session]:
        entry = yield from self.session_entry(session_id)
        revised = yield from self._revise(entry, content=check.content(title, self.store.settings))
        return Session.from_entry(revised)

    def set_data_loaded(self, session_id: str, loaded: bool = True) -> Plan[Session]:
        """Say whether the session has data loaded (the gate of LLM-created Findings)."""
        entry = yield from self.session_entry(session_id)
        revised = yield from self._revise(entry, metadata={**entry.metadata, "has_data": loaded})
        return Session.from_entry(revised)

    def delete_session(self, session_id: str) -> Plan[int]:
        """Delete the session with its records, summaries, Session Memory, Findings and the
        object-scoped entries it created, in one transaction, then its folder of files
        (:mod:`memvault.store.session_files`); Global Memory stays. Their texts
        leave the embedding caches first, and every process drops its copies of content
        (caches: :class:`~memvault.store.ops.ForgetCopiesOp`). Returns the number of entries
        deleted (0: no such session)."""
        scope = Scope.session(session_id)
        owned = Filter(
            self.store.tenant,
            None,
            scope_kinds=(ScopeKind.OBJECT.value,),
            provenance=(("created_in_session_id", session_id),),
        )
        held = yield from self.store.every(Filter(self.store.tenant, (scope,)))
        yield from self.store.forget_texts([*held, *(yield from self.store.every(owned))])
        removed, objects = yield from run_pair(
            DeleteScopeOp(self.store.tenant, scope), DeleteMatchingOp(owned), ForgetCopiesOp()
        )
        yield from self.store.forget_session_files([session_id])
        return len(removed) + len(objects)

    def _session_filter(self, scope: Scope) -> Filter:
        return Filter(self.store.tenant, (scope,), categories=(SESSION,))

    def session_entry(self, session_id: str) -> Plan[MemoryEntry]:
        found = yield from run(ListOp(self._session_filter(Scope.session(session_id)), 1))
        if not found:
            raise SessionNotFoundError(session_id)
        return found[0]

    def _revise(self, entry: MemoryEntry, **changes: Any) -> Plan[MemoryEntry]:
        """Replace a facility-owned entry at its current revision (ConflictError if it moved)."""
        revised = replace(
            entry, updated_at=self.store.now(), revision=entry.revision + 1, **changes
        )
        yield from run(ReplaceOp(self.store.tenant, revised, entry.revision))
        return revised

    # -- records ------------------------------------------------------------------------------

    def append_record(
        self,
        session_id: str,
        role: str,
        content: str,
        *,
        tool_name: str | None = None,
        call_id: str | None = None,
        object_ids: Iterable[str] = (),
        created_at: datetime | None = None,
    ) -> Plan[Record]:
        """Append one turn to the session's log. Records are never changed or deleted alone."""
        session = yield from self.session_entry(session_id)
        entry = self.record_entry(
            session_id,
            role,
            content,
            tool_name=tool_name,
            call_id=call_id,
            object_ids=object_ids,
            created_at=created_at,
        )
        also = self.teaches(session, [entry])
        return Record.from_entry((yield from self.store.put(entry, also=also)))

    def teaches(self, session: MemoryEntry, records: Sequence[MemoryEntry]) -> list[Op[Any]]:
        """What ``records`` appended to ``session`` change besides it, in its transaction:
        its user's scope is reached, where extraction learns from them (a key that may not
        write there may not feed it either), and what :attr:`observers` make of them (the
        user's work style)."""
        owner = Scope.user(Session.from_entry(session).user_id)
        ops: list[Op[Any]] = [ReachOp(self.store.tenant, (str(owner),), changes=True)]
        for observe in self.observers:
            ops += observe(session, records)
        return ops

    def record_entry(
        self,
        session_id: str,
        role: str,
        content: str,
        *,
        tool_name: str | None = None,
        call_id: str | None = None,
        object_ids: Iterable[str] = (),
        created_at: datetime | None = None,
    ) -> MemoryEntry:
        """The (checked, not yet stored) entry of one record of a session's log."""
        one_of("role", role, ROLES)
        attributes = {
            "role": role,
            "tool_name": _optional_text("tool_name", tool_name),
            "call_id": _optional_text("call_id", call_id),
            "object_ids": check.entry_ids("object_ids", object_ids),
        }
        request = NewEntry(
            content,
            Scope.session(session_id),
            category=RECORD,
            metadata=attributes,
            provenance=Provenance(tool_originated=role == "tool"),
            created_at=created_at,
        )
        return self.store.new_entry(request, self.store.now())

    def records(self, session_id: str) -> Plan[builtins.list[Record]]:
        """The session's whole log, oldest first."""
        yield from self.session_entry(session_id)
        return (yield from self.record_log(Scope.session(session_id)))

    def record_log(self, scope: Scope) -> Plan[builtins.list[Record]]:
        where = Filter(self.store.tenant, (scope,), categories=(RECORD,))
        return [Record.from_entry(e) for e in (yield from self.store.every(where, "oldest"))]

    def search_records(
        self,
        query: str,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        limit: int = 10,
    ) -> Plan[builtins.list[SearchHit]]:
        """Hybrid search over the records of one session, or of every non-private session of
        a user. Hits carry the record entries (``Record.from_entry`` gives the view)."""
        if (session_id is None) == (user_id is None):
            raise ValidationError("search records of a session_id or of a user_id (one of them)")
        if session_id is not None:
            yield from self.session_entry(session_id)
            scopes: tuple[Scope, ...] = (Scope.session(session_id),)
        else:
            scopes = yield from self.shared_sessions(str(user_id))
        return (yield from self.search_scopes(query, scopes, (RECORD,), limit))

    def search_sessions(
        self, query: str, *, user_id: str, limit: int = 5, turns: int = 3
    ) -> Plan[builtins.list[SessionHit]]:
        """The user's non-private sessions that best answer ``query``, each ranked by its best
        record (not an average of them), with its best ``turns`` records as evidence. Sessions
        are found among the best :data:`SESSION_SEARCH_RECORDS` records (or ``limit`` times
        ``turns``, if more)."""
        limit = check.limit(limit, self.store.settings)
        if isinstance(turns, bool) or not isinstance(turns, int) or not 1 <= turns <= 100:
            raise ValidationError(f"turns must be an integer from 1 to 100, got {shown(turns)}")
        Scope.user(user_id)  # a valid user id, or InvalidScopeError
        sessions = {s.id: s for s in (yield from self._shared(user_id))}
        scopes = tuple(Scope.session(s) for s in sessions)
        depth = min(max(SESSION_SEARCH_RECORDS, limit * turns), self.store.settings.max_limit)
        hits = yield from self.search_scopes(query, scopes, (RECORD,), depth)
        return [
            SessionHit(sessions[sid], best[0].score, best)
            for sid, best in by_best_turn(hits, limit, turns)
        ]

    def shared_sessions(self, user_id: str, but: str | None = None) -> Plan[tuple[Scope, ...]]:
        """The scopes of the user's sessions that are not private (and not ``but``)."""
        sessions = yield from self._shared(user_id, but)
        return tuple(Scope.session(s.id) for s in sessions)

    def _shared(self, user_id: str, but: str | None = None) -> Plan[builtins.list[Session]]:
        """The user's sessions that are not private (and not ``but``), newest first."""
        sessions = yield from self.list_sessions(user_id, limit=self.store.settings.max_limit)
        return [s for s in sessions if not s.private and s.id != but]

    def search_scopes(
        self, query: str, scopes: tuple[Scope, ...], categories: tuple[str, ...], limit: int
    ) -> Plan[builtins.list[SearchHit]]:
        check.query(query)
        if not scopes:
            return []
        now = self.store.now()
        where = replace(self.store.where(scopes, None, None, now), categories=categories)
        spec = RankSpec(limit=check.limit(limit, self.store.settings))
        return (yield from self.store.ranked(query, where, spec, self.store.now()))


def _optional_text(name: str, value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > 256:
        raise ValidationError(f"{name} must be a non-empty string of at most 256 characters")
    return value
