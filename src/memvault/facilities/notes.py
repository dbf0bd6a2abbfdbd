"""Session Memory, Findings and Global Memory, with pin and demote: plans on the scoped store."""

from __future__ import annotations

import builtins
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from .. import validation as check
from ..core import Plan, Planner, retried
from ..errors import ForbiddenError, SessionNotFoundError, ValidationError
from ..store.ops import Op, PutOp
from ..types import MemoryEntry, NewEntry, Provenance, Scope, ScopeKind
from .model import (
    FINDING,
    FINDING_SOURCES,
    GLOBAL_MEMORY,
    GLOBAL_MEMORY_SOURCES,
    SESSION_MEMORY,
    SESSION_MEMORY_SOURCES,
    Finding,
    Session,
    Source,
    duplicate_finding,
    finding_id,
    normalised,
    one_of,
)
from .sessions import SessionPlans


class NotePlans:
    """The three facilities that hold what was learned — Session Memory, Findings, Global
    Memory — and the moves between them, as plans on the store and session planners."""

    def __init__(self, store: Planner, sessions: SessionPlans) -> None:
        self.store, self.sessions = store, sessions

    # -- Session Memory -----------------------------------------------------------------------

    def add_session_memory(
        self,
        session_id: str,
        fact: str,
        *,
        category: str = "fact",
        source: str = Source.USER_TURN,
        native: str | None = None,
        source_turn_index: int | None = None,
        tool_originated: bool = False,
    ) -> Plan[MemoryEntry]:
        """Remember a ``fact``/``context`` of this session (FIFO cap ``max_session_memory``)."""
        yield from self.sessions.session_entry(session_id)
        one_of("category", category, SESSION_MEMORY)
        provenance = Provenance(
            source=one_of("source", source, SESSION_MEMORY_SOURCES),
            source_turn_index=source_turn_index,
            tool_originated=tool_originated,
        )
        entry = self._note(fact, Scope.session(session_id), category, provenance, native)
        return (yield from self.store.put(entry, duplicates=True, cap=self.cap_of(entry.scope)))

    def session_memory(self, session_id: str) -> Plan[builtins.list[MemoryEntry]]:
        """The session's Session Memory, newest first."""
        yield from self.sessions.session_entry(session_id)
        return (yield from self.live_notes(Scope.session(session_id), SESSION_MEMORY))

    # -- Findings -----------------------------------------------------------------------------

    def add_finding(
        self,
        session_id: str,
        content: str,
        *,
        tags: Iterable[str] = (),
        source: str = Source.LLM_PROMOTED,
        tool_originated: bool = False,
    ) -> Plan[Finding]:
        """Record a data-analysis finding; a repeat of one already there returns that one
        (``duplicate=True``). The source decides the gate: ``llm_promoted`` (the LLM's tool)
        needs the session's data loaded; ``manual`` (a person's, never a tool's) and
        ``analyze_data`` do not."""
        session = Session.from_entry((yield from self.sessions.session_entry(session_id)))
        _gate_finding(session, one_of("source", source, FINDING_SOURCES), tool_originated)
        content = check.content(content, self.store.settings)
        existing = yield from self.findings_in(Scope.session(session_id))
        twin = duplicate_finding(content, existing)
        if twin is not None:
            self.store.stats.add("finding_duplicate")
            return replace(twin, duplicate=True)
        now = self.store.now()
        same_day = [f for f in existing if f.id.startswith(f"f-{now:%Y%m%d}-")]
        sequence = 1 + max((int(f.id.split("-")[2]) for f in same_day), default=0)
        identity = {"finding_id": finding_id(now, sequence, secrets.token_hex(2))}
        provenance = Provenance(source=source, tool_originated=tool_originated)
        request = NewEntry(
            content,
            Scope.session(session_id),
            tags=tags,
            category=FINDING,
            metadata=identity,
            provenance=provenance,
        )
        entry = self.store.new_entry(request, now)
        self.store.admit(entry.content)
        stored = yield from self.store.put(
            entry, duplicates=True, cap=((FINDING,), self.store.settings.max_findings)
        )
        return Finding.from_entry(stored, duplicate=stored.id != entry.id)

    def findings(
        self, session_id: str, *, tags: Iterable[str] = (), text: str | None = None
    ) -> Plan[builtins.list[Finding]]:
        """The session's findings, newest first; with ALL ``tags`` and containing ``text``."""
        yield from self.sessions.session_entry(session_id)
        return (yield from self.findings_in(Scope.session(session_id), tags, text))

    def findings_in(
        self, scope: Scope, tags: Iterable[str] = (), text: str | None = None
    ) -> Plan[builtins.list[Finding]]:
        where = replace(
            self.store.where((scope,), tags, None, self.store.now()), categories=(FINDING,)
        )
        found = [Finding.from_entry(e) for e in (yield from self.store.every(where))]
        if text is not None and not isinstance(text, str):
            raise ValidationError(f"text must be a string, got {type(text).__name__}")
        if text:
            needle = normalised(text)
            found = [f for f in found if needle in normalised(f.content)]
        return found

    # -- Global Memory ------------------------------------------------------------------------

    def add_global_memory(
        self,
        user_id: str,
        fact: str,
        *,
        category: str = "preference",
        source: str = Source.MANUAL,
        native: str | None = None,
        session_id: str | None = None,
        source_turn_index: int | None = None,
        tool_originated: bool = False,
    ) -> Plan[MemoryEntry]:
        """Remember a ``preference``, ``decision`` or ``identity`` fact of a user across sessions
        (FIFO cap ``max_global_memory``). From a private ``session_id`` it is refused."""
        if session_id is not None:
            session = Session.from_entry((yield from self.sessions.session_entry(session_id)))
            self._check_may_reach_global(session, user_id)
        one_of("category", category, GLOBAL_MEMORY)
        provenance = Provenance(
            source=one_of("source", source, GLOBAL_MEMORY_SOURCES),
            created_in_session_id=session_id,
            source_turn_index=source_turn_index,
            tool_originated=tool_originated,
        )
        entry = self._note(fact, Scope.user(user_id), category, provenance, native)
        return (yield from self.store.put(entry, duplicates=True, cap=self.cap_of(entry.scope)))

    def global_memory(self, user_id: str) -> Plan[builtins.list[MemoryEntry]]:
        """The user's Global Memory, newest first."""
        return (yield from self.live_notes(Scope.user(user_id), GLOBAL_MEMORY))

    # -- moves --------------------------------------------------------------------------------

    def pin(self, entry_id: str, *, category: str = "decision") -> Plan[MemoryEntry]:
        """Copy a Session Memory entry or a Finding into its user's Global Memory (the original
        stays; the copy is current and starts no chain). Refused for private sessions and for
        superseded entries."""
        source = yield from self.store.live(entry_id)
        if source.scope.kind is not ScopeKind.SESSION or source.category not in (
            *SESSION_MEMORY,
            FINDING,
        ):
            raise ValidationError("only Session Memory entries and Findings can be pinned")
        session = Session.from_entry((yield from self.sessions.session_entry(source.scope.id)))
        self._check_may_reach_global(session, session.user_id)
        one_of("category", category, GLOBAL_MEMORY)
        origin = (
            Source.PROMOTED_FROM_FINDING
            if source.category == FINDING
            else Source.PROMOTED_FROM_SESSION_MEMORY
        )
        pinned = self.store.copy_of(
            source,
            "pin",
            scope=Scope.user(session.user_id),
            category=category,
            expires_at=None,
            provenance=replace(source.provenance, source=origin),
        )
        return (yield from self.store.put(pinned, duplicates=True, cap=self.cap_of(pinned.scope)))

    def demote(
        self, entry_id: str, session_id: str, *, category: str = "fact"
    ) -> Plan[MemoryEntry]:
        """Move a Global Memory entry into a session of the same user as Session Memory.

        A current entry that replaced others keeps its history: the moved copy takes its place
        in the chain (and is never merged into a restatement). Superseded entries are refused.
        """
        one_of("category", category, SESSION_MEMORY)
        return (
            yield from retried(
                lambda: self._demote(entry_id, session_id, category), f"entry {entry_id}"
            )
        )

    def _demote(self, entry_id: str, session_id: str, category: str) -> Plan[MemoryEntry]:
        source = yield from self.store.live(entry_id)
        if source.scope.kind is not ScopeKind.USER or source.category not in GLOBAL_MEMORY:
            raise ValidationError("only Global Memory entries can be demoted")
        session = Session.from_entry((yield from self.sessions.session_entry(session_id)))
        if session.user_id != source.scope.id:
            raise ValidationError(f"session {session_id} belongs to another user")
        copy = self.store.copy_of(
            source, "demote", scope=Scope.session(session_id), category=category
        )
        moved, removal = yield from self.store.removal([source], heir=copy)
        assert moved is not None
        cap = self.cap_of(moved.scope)
        return (
            yield from self.store.put(moved, duplicates=not moved.supersedes, cap=cap, also=removal)
        )

    # -- what a session learned ---------------------------------------------------------------

    def put_learned(
        self, session: Session, puts: Sequence[PutOp], also: Sequence[Op[Any]] = ()
    ) -> Plan[tuple[builtins.list[MemoryEntry | None], builtins.list[Any]]]:
        """Store what was learned in ``session`` — in its Session Memory and its user's Global
        Memory — in one transaction with ``also``, under the rules of every other door:
        nothing of a private session reaches Global Memory, each note in its facility's
        categories, each facility's FIFO cap. Each put's twin (None: stored), ``also``'s
        results."""
        for put in puts:
            self.check_learned(session, put.entry)
        caps = {put.entry.scope: self.cap_of(put.entry.scope) for put in puts}
        return (yield from self.store.put_many(puts, caps, also))

    def check_learned(self, session: Session, entry: MemoryEntry) -> None:
        """Refuse (ValidationError, ForbiddenError) a note learned in ``session`` that the notes'
        rules keep out: of another scope than the session's or its user's, of a category not
        its facility's, in Global Memory from a private session."""
        if entry.scope == Scope.session(session.id):
            one_of("category", entry.category or "", SESSION_MEMORY)
            return
        if entry.scope.kind is not ScopeKind.USER:
            raise ValidationError(f"a session learns into its notes, not into {entry.scope}")
        self._check_may_reach_global(session, entry.scope.id)
        one_of("category", entry.category or "", GLOBAL_MEMORY)

    def may_leave(self, entry: MemoryEntry) -> Plan[None]:
        """Refuse (ForbiddenError) to copy an entry of a private session out of its scope — a
        generic ``promote`` of one of its notes, findings, records, or of an entry made in it
        (``provenance.created_in_session_id``) — as :meth:`pin` refuses."""
        in_session = entry.scope.kind is ScopeKind.SESSION
        session_id = entry.scope.id if in_session else entry.provenance.created_in_session_id
        if session_id is None:
            return
        try:
            found = yield from self.sessions.session_entry(session_id)
        except SessionNotFoundError:
            return  # a session scope no session was created for: no rule of a session
        if Session.from_entry(found).private:
            raise ForbiddenError(
                f"session {session_id} is private: nothing made in it leaves its scope"
            )

    # -- helpers ------------------------------------------------------------------------------

    def cap_of(self, scope: Scope) -> tuple[tuple[str, ...], int]:
        """The FIFO cap of the notes of ``scope``: its categories and how many stay (Global
        Memory's for a user, Session Memory's for a session)."""
        settings = self.store.settings
        if scope.kind is ScopeKind.USER:
            return GLOBAL_MEMORY, settings.max_global_memory
        return SESSION_MEMORY, settings.max_session_memory

    @staticmethod
    def _check_may_reach_global(session: Session, user_id: str) -> None:
        if session.private:
            raise ForbiddenError(
                f"session {session.id} is private: nothing in it reaches Global Memory"
            )
        if session.user_id != user_id:
            raise ValidationError(f"session {session.id} belongs to another user")

    def _note(
        self, fact: str, scope: Scope, category: str, provenance: Provenance, native: str | None
    ) -> MemoryEntry:
        metadata = {} if native is None else {"native": native}
        entry = self.store.new_entry(
            NewEntry(fact, scope, category=category, metadata=metadata, provenance=provenance),
            self.store.now(),
        )
        self.store.admit(entry.content)
        return entry

    def live_notes(
        self, scope: Scope, categories: tuple[str, ...]
    ) -> Plan[builtins.list[MemoryEntry]]:
        now = self.store.now()
        where = replace(self.store.where((scope,), None, None, now), categories=categories)
        return (yield from self.store.every(where))


def _gate_finding(session: Session, source: str, tool_originated: bool) -> None:
    """Refuse a finding its source may not add: the LLM's without the session's data loaded
    (ForbiddenError, naming the ways through), a person's said to come from a tool."""
    if source == Source.MANUAL and tool_originated:
        raise ValidationError("a manual finding is a person's: it cannot be tool_originated")
    if source == Source.LLM_PROMOTED and not session.has_data:
        raise ForbiddenError(
            f"session {session.id} has no data loaded: a finding from the LLM (source "
            "llm_promoted) needs it. Mark the data loaded (set_data_loaded; CLI: memvault "
            f"session data-loaded {session.id}), or add a person's finding with source manual"
        )
