"""The facilities' vocabulary and rules (pure): categories, sources and trust, the views of
sessions, records and findings over store entries, and findings' de-duplication.

Every facility item is an ordinary entry of the scoped store: a session is a ``session``
entry in ``session:ID``; its records (``record``), summary cache (``summary``), Session Memory
(``fact``/``context``) and Findings (``finding``) live in that scope too; Global Memory is
``preference``/``decision``/``identity`` entries in ``user:ID``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from ..errors import ValidationError, shown
from ..patterns import lazy
from ..store.duplicates import restates
from ..types import MemoryEntry, ScopeKind, SearchHit

SESSION, RECORD, SUMMARY, FINDING = "session", "record", "summary", "finding"
"""Categories only the facilities write; the generic store API refuses to write or change them."""
LEARNED_THROUGH = "learned_through"
"""Session metadata: the last record an extraction read (``{"at": time, "id": record id}``)."""
SESSION_MEMORY = ("fact", "context")
GLOBAL_MEMORY = ("preference", "decision", "identity")
"""Global Memory holds who the user is for good: preferences, decisions, and identity facts
(name, home, work…) that extraction recognises as durable."""
ROLES = ("user", "assistant", "tool", "report", "system")


class Source(StrEnum):
    """Where a Session Memory, Finding or Global Memory item came from (seed 002 §9)."""

    USER_TURN = "user_turn"
    ASSISTANT_TURN = "assistant_turn"
    MANUAL = "manual"
    PROMOTED_FROM_SESSION_MEMORY = "promoted_from_session_memory"
    PROMOTED_FROM_FINDING = "promoted_from_finding"
    LLM_PROMOTED = "llm_promoted"
    ANALYZE_DATA = "analyze_data"


USER_STATED_ORDER = (
    Source.USER_TURN,
    Source.MANUAL,
    Source.PROMOTED_FROM_SESSION_MEMORY,
    Source.PROMOTED_FROM_FINDING,
)
USER_STATED = frozenset(USER_STATED_ORDER)
SESSION_MEMORY_SOURCES = (Source.USER_TURN, Source.ASSISTANT_TURN)
FINDING_SOURCES = (Source.LLM_PROMOTED, Source.ANALYZE_DATA, Source.MANUAL)
"""``llm_promoted``: the LLM's tool, gated to sessions with data loaded; ``analyze_data``: an
analysis' own output; ``manual``: a person's, by hand (user-stated)."""
GLOBAL_MEMORY_SOURCES = (*USER_STATED_ORDER, Source.ASSISTANT_TURN)


def trust_tag(source: str | None) -> str:
    """``[user-stated]`` for what the user said or chose, ``[derived]`` for the rest (and none)."""
    return "[user-stated]" if source in USER_STATED else "[derived]"


def cursor_at(created_at: datetime, record_id: str) -> dict[str, str]:
    """The session metadata :data:`LEARNED_THROUGH` that says its log is read up to the record
    at this place (records are in ``(created_at, id)`` order)."""
    return {"at": created_at.isoformat(), "id": record_id}


def one_of(name: str, value: object, allowed: Iterable[str]) -> str:
    """``value`` if it is one of ``allowed``, else a ValidationError naming them."""
    choices = [str(a) for a in allowed]
    if value not in choices:
        raise ValidationError(f"{name} must be one of {', '.join(choices)}; got {shown(value)}")
    return str(value)


@dataclass(frozen=True, slots=True)
class Session:
    """A conversation of one user. ``private`` is fixed at creation."""

    id: str
    user_id: str
    title: str
    private: bool
    created_at: datetime
    has_data: bool = False
    profile: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    entry_id: str = ""

    @classmethod
    def from_entry(cls, entry: MemoryEntry) -> Session:
        m = entry.metadata
        return cls(
            entry.scope.id,
            m["user_id"],
            entry.content,
            bool(m["private"]),
            entry.created_at,
            bool(m.get("has_data")),
            m.get("profile"),
            dict(m.get("extra") or {}),
            entry.id,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "user_id": self.user_id,
            "title": self.title,
            "private": self.private,
            "created_at": self.created_at.isoformat(),
            "has_data": self.has_data,
            "profile": self.profile,
            "metadata": dict(self.metadata),
            "entry_id": self.entry_id,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Session:
        return cls(
            data["id"],
            data["user_id"],
            data["title"],
            data["private"],
            datetime.fromisoformat(data["created_at"]),
            data["has_data"],
            data["profile"],
            data["metadata"],
            data.get("entry_id", ""),
        )


@dataclass(frozen=True, slots=True)
class SessionHit:
    """A session found by a search: ranked by its best record (its ``score``), with its best
    records (``turns``, best first) as the evidence."""

    session: Session
    score: float
    turns: tuple[SearchHit, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "session": self.session.to_dict(),
            "score": self.score,
            "turns": [t.to_dict() for t in self.turns],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SessionHit:
        turns = tuple(SearchHit.from_dict(t) for t in data["turns"])
        return cls(Session.from_dict(data["session"]), float(data["score"]), turns)


def by_best_turn(
    hits: Sequence[SearchHit], limit: int, turns: int
) -> list[tuple[str, tuple[SearchHit, ...]]]:
    """The sessions of ranked record ``hits`` (best first), each ranked by its best record —
    never by an average, which would sink a session with one exact answer among small talk —,
    with its best ``turns`` records: (session id, records) for at most ``limit`` sessions."""
    grouped: dict[str, list[SearchHit]] = {}
    for hit in hits:
        grouped.setdefault(hit.entry.scope.id, []).append(hit)
    return [(sid, tuple(found[:turns])) for sid, found in list(grouped.items())[:limit]]


def session_ids(entries: Iterable[MemoryEntry]) -> set[str]:
    """The sessions whose own entries are among ``entries`` (the sessions a deletion took)."""
    return {
        e.scope.id for e in entries if e.category == SESSION and e.scope.kind is ScopeKind.SESSION
    }


@dataclass(frozen=True, slots=True)
class Record:
    """One immutable turn of a session's log."""

    id: str
    session_id: str
    role: str
    content: str
    created_at: datetime
    tool_name: str | None = None
    call_id: str | None = None
    object_ids: tuple[str, ...] = ()

    @property
    def is_tool_call(self) -> bool:
        """Whether this is an assistant's call of a tool (its content: the arguments, as the
        model wrote them; the ``tool`` record with the same ``call_id`` answers it)."""
        return self.role == "assistant" and bool(self.call_id)

    @classmethod
    def from_entry(cls, entry: MemoryEntry) -> Record:
        m = entry.metadata
        objects = tuple(m.get("object_ids") or ())
        return cls(
            entry.id,
            entry.scope.id,
            m["role"],
            entry.content,
            entry.created_at,
            m.get("tool_name"),
            m.get("call_id"),
            objects,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "session_id": self.session_id,
            "role": self.role,
            "content": self.content,
            "created_at": self.created_at.isoformat(),
            "tool_name": self.tool_name,
            "call_id": self.call_id,
            "object_ids": list(self.object_ids),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Record:
        return cls(
            data["id"],
            data["session_id"],
            data["role"],
            data["content"],
            datetime.fromisoformat(data["created_at"]),
            data["tool_name"],
            data["call_id"],
            tuple(data["object_ids"]),
        )


@dataclass(frozen=True, slots=True)
class Finding:
    """A data-analysis discovery of one session. ``duplicate``: an add found it already there."""

    id: str
    entry_id: str
    session_id: str
    content: str
    tags: tuple[str, ...]
    created_at: datetime
    source: str
    tool_originated: bool = False
    duplicate: bool = False

    @classmethod
    def from_entry(cls, entry: MemoryEntry, duplicate: bool = False) -> Finding:
        return cls(
            entry.metadata["finding_id"],
            entry.id,
            entry.scope.id,
            entry.content,
            entry.tags,
            entry.created_at,
            entry.provenance.source or "",
            entry.provenance.tool_originated,
            duplicate,
        )

    @property
    def created_label(self) -> str:
        """E.g. ``2026-05-03 (Sunday)``."""
        return self.created_at.strftime("%Y-%m-%d (%A)")

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "entry_id": self.entry_id,
            "session_id": self.session_id,
            "content": self.content,
            "tags": list(self.tags),
            "created_at": self.created_at.isoformat(),
            "created_label": self.created_label,
            "source": self.source,
            "trust": trust_tag(self.source),
            "tool_originated": self.tool_originated,
            "duplicate": self.duplicate,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Finding:
        """The finding of :meth:`to_dict` (its derived ``created_label`` and ``trust`` aside)."""
        return cls(
            data["id"],
            data["entry_id"],
            data["session_id"],
            data["content"],
            tuple(data["tags"]),
            datetime.fromisoformat(data["created_at"]),
            data["source"],
            data["tool_originated"],
            data["duplicate"],
        )


def finding_id(created_at: datetime, sequence: int, suffix: str) -> str:
    """``f-YYYYMMDD-NNN-hex``: the day, the session's count of findings that day, a random tail."""
    return f"f-{created_at:%Y%m%d}-{sequence:03d}-{suffix}"


_PUNCTUATION = lazy(r"[^\w\s]", re.UNICODE)


def normalised(text: str) -> str:
    """Case-, width- and punctuation-insensitive form, whitespace collapsed."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_PUNCTUATION.sub(" ", folded).split())


def duplicate_finding(content: str, existing: Sequence[Finding]) -> Finding | None:
    """The finding ``content`` repeats: the same text, or the same fact restated (see
    :func:`memvault.store.duplicates.restates`: case, punctuation, filler, a moved opening
    phrase). Seed 001's lower tiers — text equal once punctuation is gone, word-set Jaccard >=
    0.5 — merged "€450" into "$450" and "week 10" into "week 11": different findings."""
    for tier in (
        lambda f: f.content == content,
        lambda f: restates(f.content, content),
    ):
        found = next((f for f in existing if tier(f)), None)
        if found is not None:
            return found
    return None
