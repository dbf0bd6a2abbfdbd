"""Frozen value types: scopes, provenance, entries and the requests that create them."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field, fields, replace
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from . import validation as check
from .errors import InvalidScopeError, ValidationError, shown

MAX_SCOPE_ID_CHARS = 256
FACILITY_CATEGORIES = frozenset({"session", "record", "summary"})
"""Categories of the entries the facilities own: created, changed and deleted only through
their session."""
AGENT_CATEGORIES = frozenset(
    {"execution", "strategy_stats", "decomposition", "failure_pattern", "team_stats", "work_style"}
)
"""Categories of agent memory's entries: written only by its operations (they may be deleted)."""
RESERVED_CATEGORIES = FACILITY_CATEGORIES | AGENT_CATEGORIES
HIDDEN_CATEGORIES = ("work_style",)
"""Categories of internal entries that generic reads (list, retrieve, count, search) leave out:
inferences about a user kept in their scope, read through their own operation."""
"""Categories the generic store API refuses to create or change."""


class ScopeKind(StrEnum):
    """The five kinds of scope an entry can live in."""

    SESSION = "session"
    USER = "user"
    WORKSPACE = "workspace"
    ORG = "org"
    OBJECT = "object"


def _check_part(label: str, value: object) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidScopeError(f"{label} must be a non-empty string, got {shown(value)}")
    if len(value) > MAX_SCOPE_ID_CHARS:
        raise InvalidScopeError(f"{label} is longer than {MAX_SCOPE_ID_CHARS} characters")
    if value != value.strip():
        raise InvalidScopeError(f"{label} {shown(value)} must not start or end with whitespace")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise InvalidScopeError(f"{label} {shown(value)} contains a control character")
    return value


@dataclass(frozen=True, slots=True)
class Scope:
    """Where an entry lives: exactly one of session, user, workspace, org or object(type, id).

    The string form is ``session:ID``, ``user:ID``, ``workspace:ID``, ``org:ID`` or
    ``object:TYPE:ID``; :meth:`parse` reads it and ``str(scope)`` writes it.
    """

    kind: ScopeKind
    id: str
    object_type: str | None = None

    def __post_init__(self) -> None:
        try:
            kind = ScopeKind(self.kind)
        except ValueError:
            raise InvalidScopeError(
                f"unknown scope kind {self.kind!r}; use one of: {', '.join(ScopeKind)}"
            ) from None
        object.__setattr__(self, "kind", kind)
        _check_part(f"{kind} scope id", self.id)
        if kind is ScopeKind.OBJECT:
            _check_part("object scope type", self.object_type)
            if ":" in str(self.object_type):
                raise InvalidScopeError("object scope type must not contain ':'")
        elif self.object_type is not None:
            raise InvalidScopeError(f"only object scopes have a type, not {kind} scopes")

    @classmethod
    def session(cls, session_id: str) -> Scope:
        return cls(ScopeKind.SESSION, session_id)

    @classmethod
    def user(cls, user_id: str) -> Scope:
        return cls(ScopeKind.USER, user_id)

    @classmethod
    def workspace(cls, workspace_id: str) -> Scope:
        return cls(ScopeKind.WORKSPACE, workspace_id)

    @classmethod
    def org(cls, org_id: str) -> Scope:
        return cls(ScopeKind.ORG, org_id)

    @classmethod
    def object(cls, object_type: str, object_id: str) -> Scope:
        return cls(ScopeKind.OBJECT, object_id, object_type)

    @classmethod
    def parse(cls, text: str) -> Scope:
        """Read ``kind:id`` (or ``object:type:id``); raise InvalidScopeError if malformed."""
        if not isinstance(text, str):
            raise InvalidScopeError(f"a scope string is expected, got {type(text).__name__}")
        kind, sep, rest = text.partition(":")
        if not sep:
            raise InvalidScopeError(
                f"malformed scope {shown(text)}: expected 'kind:id' such as 'user:alice' "
                "or 'object:ticket:42'"
            )
        if kind == ScopeKind.OBJECT:
            object_type, sep, object_id = rest.partition(":")
            if not sep:
                raise InvalidScopeError(
                    f"malformed object scope {shown(text)}: use 'object:TYPE:ID'"
                )
            return cls(ScopeKind.OBJECT, object_id, object_type)
        return cls(kind, rest)  # type: ignore[arg-type]  # validated in __post_init__

    @classmethod
    def coerce(cls, value: Scope | str) -> Scope:
        """Accept a Scope or its string form."""
        return value if isinstance(value, Scope) else cls.parse(value)

    def __repr__(self) -> str:
        return f"Scope({str(self)!r})"

    def __str__(self) -> str:
        if self.kind is ScopeKind.OBJECT:
            return f"object:{self.object_type}:{self.id}"
        return f"{self.kind}:{self.id}"


def _check_optional_str(name: str, value: object) -> None:
    if value is not None and not (isinstance(value, str) and value):
        raise ValidationError(f"provenance.{name} must be a non-empty string or None")


@dataclass(frozen=True, slots=True, kw_only=True)
class Provenance:
    """Where an entry came from. Every operation carries it forward; none strips it."""

    source: str | None = None
    agent_id: str | None = None
    confidence: float | None = None
    created_in_session_id: str | None = None
    source_turn_index: int | None = None
    tool_originated: bool = False

    def __post_init__(self) -> None:
        for name in ("source", "agent_id", "created_in_session_id"):
            _check_optional_str(name, getattr(self, name))
        if self.confidence is not None:
            if isinstance(self.confidence, bool) or not isinstance(self.confidence, int | float):
                raise ValidationError("provenance.confidence must be a number between 0 and 1")
            if not (math.isfinite(self.confidence) and 0.0 <= self.confidence <= 1.0):
                raise ValidationError("provenance.confidence must be between 0 and 1")
        turn = self.source_turn_index
        if turn is not None and (isinstance(turn, bool) or not isinstance(turn, int) or turn < 0):
            raise ValidationError("provenance.source_turn_index must be an integer >= 0")
        if not isinstance(self.tool_originated, bool):
            raise ValidationError("provenance.tool_originated must be a bool")

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Provenance:
        known = {f.name for f in fields(cls)}
        unknown = {str(key) for key in data} - known
        if unknown or not all(isinstance(key, str) for key in data):
            raise ValidationError(f"unknown provenance fields: {', '.join(sorted(unknown))}")
        return cls(**data)

    @classmethod
    def coerce(cls, value: Provenance | Mapping[str, Any] | None) -> Provenance:
        if value is None:
            return cls()
        if isinstance(value, Provenance):
            return value
        if not isinstance(value, Mapping):
            raise ValidationError(f"provenance must be a mapping, got {type(value).__name__}")
        return cls.from_dict(value)


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _time(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryEntry:
    """One stored memory. Returned by the store; never built by hand except in backends."""

    id: str
    scope: Scope
    content: str
    created_at: datetime
    updated_at: datetime
    valid_from: datetime
    """Since when the entry holds: its creation (back-dated with it)."""
    tags: tuple[str, ...] = ()
    category: str | None = None
    expires_at: datetime | None = None
    promoted_from_id: str | None = None
    compacted_from_ids: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    provenance: Provenance = field(default_factory=Provenance)
    revision: int = 1
    context: str | None = None
    """Text that situates the entry (e.g. the turn before it): searched, never content."""
    valid_to: datetime | None = None
    """When a successor replaced it; None while it is current."""
    superseded_by: str | None = None
    """The id of the entry that replaced it (see :meth:`Memory.history`)."""
    superseded_reason: str | None = None
    """Why it was replaced."""
    supersedes: tuple[str, ...] = ()
    """The ids of the entries this one replaced."""
    duplicate: bool = field(default=False, compare=False)
    """Set on what a write returns when the write stored nothing because this entry, already
    there, states the same fact (never stored; always False on reads)."""

    def is_expired(self, now: datetime) -> bool:
        """True when the entry has an expiry at or before ``now``."""
        return self.expires_at is not None and self.expires_at <= now

    @property
    def superseded(self) -> bool:
        """True once a successor replaced it (it is kept, and hidden from default reads)."""
        return self.valid_to is not None

    def valid_at(self, when: datetime) -> bool:
        """True when the entry held at ``when``: valid_from <= when < valid_to."""
        return self.valid_from <= when and (self.valid_to is None or when < self.valid_to)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (timestamps as ISO-8601 strings)."""
        return {
            "id": self.id,
            "scope": str(self.scope),
            "content": self.content,
            "tags": list(self.tags),
            "category": self.category,
            "created_at": _iso(self.created_at),
            "updated_at": _iso(self.updated_at),
            "expires_at": _iso(self.expires_at),
            "promoted_from_id": self.promoted_from_id,
            "compacted_from_ids": list(self.compacted_from_ids),
            "metadata": dict(self.metadata),
            "provenance": self.provenance.to_dict(),
            "revision": self.revision,
            "context": self.context,
            "valid_from": _iso(self.valid_from),
            "valid_to": _iso(self.valid_to),
            "superseded_by": self.superseded_by,
            "superseded_reason": self.superseded_reason,
            "supersedes": list(self.supersedes),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MemoryEntry:
        """The entry of :meth:`to_dict` (and ``duplicate``, which a write's answer adds)."""
        return cls(
            id=data["id"],
            scope=Scope.parse(data["scope"]),
            content=data["content"],
            created_at=datetime.fromisoformat(data["created_at"]),
            updated_at=datetime.fromisoformat(data["updated_at"]),
            valid_from=datetime.fromisoformat(data["valid_from"]),
            tags=tuple(data["tags"]),
            category=data["category"],
            expires_at=_time(data["expires_at"]),
            promoted_from_id=data["promoted_from_id"],
            compacted_from_ids=tuple(data["compacted_from_ids"]),
            metadata=data["metadata"],
            provenance=Provenance.from_dict(data["provenance"]),
            revision=data["revision"],
            context=data["context"],
            valid_to=_time(data["valid_to"]),
            superseded_by=data["superseded_by"],
            superseded_reason=data["superseded_reason"],
            supersedes=tuple(data["supersedes"]),
            duplicate=bool(data.get("duplicate", False)),
        )


@dataclass(frozen=True, slots=True)
class NewEntry:
    """A request to write one entry (the unit of :meth:`Memory.write_many`)."""

    content: str
    scope: Scope | str
    _: KW_ONLY
    tags: Iterable[str] | None = None
    category: str | None = None
    expires_at: datetime | None = None
    metadata: Mapping[str, Any] | None = None
    provenance: Provenance | Mapping[str, Any] | None = None
    context: str | None = None
    created_at: datetime | None = None

    @classmethod
    def from_mapping(cls, item: Mapping[str, Any]) -> NewEntry:
        """The request a mapping of its fields makes; a key it has no field for, or no
        ``content`` or ``scope``, is a ValidationError naming it."""
        accepted = [f.name for f in fields(cls)]
        return cls(**check.known_fields(item, accepted, ("content", "scope")))


@dataclass(frozen=True, slots=True)
class Page:
    """One page of :meth:`Memory.list`; pass ``next_cursor`` back to get the next page."""

    entries: tuple[MemoryEntry, ...]
    next_cursor: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"entries": [e.to_dict() for e in self.entries], "next_cursor": self.next_cursor}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Page:
        entries = tuple(MemoryEntry.from_dict(e) for e in data["entries"])
        return cls(entries, data["next_cursor"])


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One search result: the entry, its score (what ranks it), each component score behind
    it, and its ``relevance`` (0 to 1): for the hit likeliest to be what the query asks for,
    the fitted probability that the search found anything that bears on it; for the others,
    a share of that by how likely each is (:mod:`memvault.retrieval.relevance`)."""

    entry: MemoryEntry
    score: float
    components: Mapping[str, float]
    relevance: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "score": self.score,
            "relevance": self.relevance,
            "components": dict(self.components),
            **self.entry.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SearchHit:
        return cls(
            MemoryEntry.from_dict(data),
            data["score"],
            dict(data["components"]),
            float(data.get("relevance", 0.0)),
        )


class Outcome(StrEnum):
    """What a bulk write did with one item."""

    STORED = "stored"
    MERGED = "merged"
    """Not stored: it restates an entry already there (or an earlier item of the batch)."""
    REFUSED = "refused"
    """Not stored: invalid, filtered or not allowed; ``error`` says why."""


@dataclass(frozen=True, slots=True)
class ItemResult:
    """The fate of item ``index`` of a bulk write."""

    index: int
    outcome: Outcome
    _: KW_ONLY
    entry: MemoryEntry | None = None
    """The stored entry, or the entry a merged item restates (None when refused)."""
    error: str | None = None
    """The refusal's error type (e.g. ``ValidationError``, ``FilteredError``)."""
    reason: str | None = None
    """The refusal's message."""

    @classmethod
    def refusal(cls, index: int, error: Exception) -> ItemResult:
        """Item ``index`` refused because of ``error``."""
        return cls(index, Outcome.REFUSED, error=type(error).__name__, reason=str(error))

    def to_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = {"index": self.index, "outcome": str(self.outcome)}
        if self.outcome is Outcome.REFUSED:
            return result | {"error": self.error, "reason": self.reason}
        if self.outcome is Outcome.MERGED and self.entry is not None:
            result["merged_into"] = self.entry.id
        return result | {"entry": None if self.entry is None else self.entry.to_dict()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ItemResult:
        """The item of :meth:`to_dict`; a merged item's entry has ``duplicate`` set."""
        outcome = Outcome(data["outcome"])
        found = data.get("entry")
        entry = None
        if found is not None:
            entry = replace(MemoryEntry.from_dict(found), duplicate=outcome is Outcome.MERGED)
        return cls(
            data["index"], outcome, entry=entry, error=data.get("error"), reason=data.get("reason")
        )


@dataclass(frozen=True, slots=True)
class WriteReport:
    """What :meth:`Memory.write_many` did with each item, in the order of the items."""

    items: tuple[ItemResult, ...]

    def _with(self, outcome: Outcome) -> tuple[ItemResult, ...]:
        return tuple(item for item in self.items if item.outcome is outcome)

    @property
    def stored(self) -> tuple[ItemResult, ...]:
        return self._with(Outcome.STORED)

    @property
    def merged(self) -> tuple[ItemResult, ...]:
        return self._with(Outcome.MERGED)

    @property
    def refused(self) -> tuple[ItemResult, ...]:
        return self._with(Outcome.REFUSED)

    @property
    def entries(self) -> tuple[MemoryEntry, ...]:
        """The entry of every item that was not refused (stored, or merged into), in order."""
        return tuple(item.entry for item in self.items if item.entry is not None)

    def placed(self, positions: Sequence[int], refused: Iterable[ItemResult] = ()) -> WriteReport:
        """This report of a sub-batch told in the caller's numbering: item ``i`` was the
        caller's ``positions[i]``; ``refused`` (already in that numbering) are the items the
        caller refused before the write. Ordered by that numbering."""
        moved = [replace(item, index=positions[item.index]) for item in self.items]
        return WriteReport(tuple(sorted((*moved, *refused), key=lambda item: item.index)))

    def counts(self) -> dict[str, int]:
        return {str(o): len(self._with(o)) for o in Outcome}

    def to_dict(self) -> dict[str, Any]:
        return {**self.counts(), "items": [item.to_dict() for item in self.items]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> WriteReport:
        return cls(tuple(ItemResult.from_dict(item) for item in data["items"]))


Change = Literal["created", "changed", "deleted", "erased"]
CHANGES: tuple[Change, ...] = ("created", "changed", "deleted", "erased")


@dataclass(frozen=True, slots=True)
class AuditEvent:
    """One change to memory: what happened (``change``) to which entry, by which operation
    and actor, when. ``seq`` orders the events of a store (given by the store)."""

    tenant: str
    at: datetime
    actor: str
    operation: str
    change: Change
    entry_id: str | None = None
    scope: str | None = None
    note: str | None = None
    """A few words where an entry id cannot say it (an erasure's counts and id hash)."""
    seq: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "tenant": self.tenant,
            "at": self.at.isoformat(),
            "actor": self.actor,
            "operation": self.operation,
            "change": self.change,
            "entry_id": self.entry_id,
            "scope": self.scope,
            "note": self.note,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AuditEvent:
        return cls(
            data["tenant"],
            datetime.fromisoformat(data["at"]),
            data["actor"],
            data["operation"],
            data["change"],
            data.get("entry_id"),
            data.get("scope"),
            data.get("note"),
            int(data.get("seq", 0)),
        )


@dataclass(frozen=True, slots=True)
class AuditPage:
    """One page of :meth:`Memory.audit`; pass ``next_cursor`` back to get the next page."""

    events: tuple[AuditEvent, ...]
    next_cursor: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"events": [e.to_dict() for e in self.events], "next_cursor": self.next_cursor}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AuditPage:
        return cls(tuple(AuditEvent.from_dict(e) for e in data["events"]), data["next_cursor"])
