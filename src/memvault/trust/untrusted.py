"""Entries and audit events read from an untrusted file (a session bundle), checked field by
field before anything is built from them (pure).

An entry passes only if it is what the store itself could have written: every field of the
right JSON type, every id an id, every time timezone-aware and within what UTC can hold,
content, tags, metadata and context within the settings' limits, and — for what the facilities
own (the session, records, summaries, findings) — the metadata the facilities read. Anything
else is a :class:`~memvault.errors.BundleError` naming the entry and the field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from .. import validation as check
from ..config import Settings
from ..errors import BundleError, MemvaultError
from ..facilities.model import FINDING, LEARNED_THROUGH, RECORD, ROLES, SESSION, SUMMARY
from ..patterns import lazy
from ..types import AuditEvent, MemoryEntry, Provenance, Scope

ENTRY_FIELDS = frozenset(
    {
        "id",
        "scope",
        "content",
        "tags",
        "category",
        "created_at",
        "updated_at",
        "expires_at",
        "promoted_from_id",
        "compacted_from_ids",
        "metadata",
        "provenance",
        "revision",
        "context",
        "valid_from",
        "valid_to",
        "superseded_by",
        "superseded_reason",
        "supersedes",
    }
)
SESSION_OWNED = frozenset({SESSION, RECORD, SUMMARY, FINDING})
"""Categories only a session's own scope holds."""
MAX_REASON_CHARS = 500


class _Refused(Exception):
    """A field that is not what the store writes (turned into a BundleError with its place)."""


def _text(value: Any, name: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise _Refused(f"{name} must be text")
    return value


def _when(value: Any, name: str, *, optional: bool = False) -> datetime | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise _Refused(f"{name} must be an ISO-8601 time")
    return check.aware(name, check.iso_time(name, value))


def _id(value: Any, name: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    return check.entry_id(_text(value, name))


def _ids(value: Any, name: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise _Refused(f"{name} must be a list of ids")
    return tuple(str(_id(item, name)) for item in value)


def _revision(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= check.LARGEST_INT:
        raise _Refused("revision must be a whole number from 1")
    return value


def _metadata(value: Any, settings: Settings) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Refused("metadata must be an object")
    return check.metadata(value, settings)


def _provenance(value: Any) -> Provenance:
    if not isinstance(value, dict):
        raise _Refused("provenance must be an object")
    return Provenance.from_dict(value)


def _reason(value: Any) -> str | None:
    reason = _text(value, "superseded_reason", optional=True)
    if reason is not None and len(reason) > MAX_REASON_CHARS:
        raise _Refused(f"superseded_reason is over {MAX_REASON_CHARS} characters")
    return reason


def _decoded(raw: Mapping[str, Any], settings: Settings) -> MemoryEntry:
    check.arguments({"entry": raw})  # encodable text, 64-bit integers, nesting as the API's
    unknown = sorted(set(raw) - ENTRY_FIELDS)
    if unknown:
        raise _Refused(f"unknown fields {unknown[:3]}")
    missing = sorted(ENTRY_FIELDS - set(raw))
    if missing:
        raise _Refused(f"missing fields {missing[:3]}")
    tags = raw["tags"]
    if not isinstance(tags, list):
        raise _Refused("tags must be a list of text")
    context = _text(raw["context"], "context", optional=True)
    return MemoryEntry(
        id=str(_id(raw["id"], "id")),
        scope=Scope.parse(str(_text(raw["scope"], "scope"))),
        content=check.content(raw["content"], settings),
        tags=check.tags(tags, settings),
        category=check.category(_text(raw["category"], "category", optional=True)),
        created_at=_when(raw["created_at"], "created_at"),  # type: ignore[arg-type]
        updated_at=_when(raw["updated_at"], "updated_at"),  # type: ignore[arg-type]
        valid_from=_when(raw["valid_from"], "valid_from"),  # type: ignore[arg-type]
        expires_at=_when(raw["expires_at"], "expires_at", optional=True),
        valid_to=_when(raw["valid_to"], "valid_to", optional=True),
        promoted_from_id=_id(raw["promoted_from_id"], "promoted_from_id", optional=True),
        compacted_from_ids=_ids(raw["compacted_from_ids"], "compacted_from_ids"),
        superseded_by=_id(raw["superseded_by"], "superseded_by", optional=True),
        supersedes=_ids(raw["supersedes"], "supersedes"),
        superseded_reason=_reason(raw["superseded_reason"]),
        metadata=_metadata(raw["metadata"], settings),
        provenance=_provenance(raw["provenance"]),
        revision=_revision(raw["revision"]),
        context=None if context is None else check.context(context, settings),
    )


def _needs(metadata: Mapping[str, Any], name: str, test: Callable[[Any], bool]) -> None:
    if not test(metadata.get(name)):
        raise _Refused(f"metadata.{name} is not what the facilities write")


def _is_text(value: Any) -> bool:
    return isinstance(value, str)


FINDING_ID = lazy(r"f-\d{8}-\d{3,}-[0-9a-f]+")
"""What :func:`memvault.facilities.model.finding_id` makes."""


def _read_through(value: Any) -> bool:
    """A session's extraction cursor: none, or ``{"at": aware time, "id": text}``."""
    if value is None:
        return True
    if not isinstance(value, dict) or set(value) != {"at", "id"} or not _is_text(value["id"]):
        return False
    try:
        _when(value["at"], "learned_through.at")
    except (_Refused, MemvaultError):
        return False
    return True


def _no_or_texts(value: Any) -> bool:
    return value is None or (isinstance(value, list) and all(map(_is_text, value)))


def _owned(entry: MemoryEntry, session_scope: Scope) -> None:
    """What the facilities read of the entries they own, checked."""
    if entry.category not in SESSION_OWNED:
        return
    if entry.scope != session_scope:
        raise _Refused(f"a {entry.category} entry outside the bundle's session")
    m = entry.metadata
    if entry.category == SESSION:
        _needs(m, "user_id", lambda v: isinstance(v, str) and bool(Scope.user(v)))
        _needs(m, "private", lambda v: isinstance(v, bool))
        _needs(m, "has_data", lambda v: v is None or isinstance(v, bool))
        _needs(m, "profile", lambda v: v is None or isinstance(v, str))
        _needs(m, "extra", lambda v: v is None or isinstance(v, dict))
        _needs(m, LEARNED_THROUGH, _read_through)
    elif entry.category == RECORD:
        _needs(m, "role", lambda v: v in ROLES)
        _needs(m, "tool_name", lambda v: v is None or isinstance(v, str))
        _needs(m, "call_id", lambda v: v is None or isinstance(v, str))
        _needs(m, "object_ids", _no_or_texts)
    elif entry.category == SUMMARY:
        for name in ("key", "first_record_id", "last_record_id", "summarizer"):
            _needs(m, name, _is_text)
    else:
        _needs(m, "finding_id", lambda v: isinstance(v, str) and bool(FINDING_ID.fullmatch(v)))


_BROKEN = (_Refused, MemvaultError, OverflowError, RecursionError, UnicodeError)


def entry_of(index: int, raw: Any, settings: Settings) -> MemoryEntry:
    """Bundle entry ``index`` as an entry, checked field by field (see the module)."""
    try:
        if not isinstance(raw, dict):
            raise _Refused("not an object")
        return _decoded(raw, settings)
    except _BROKEN as exc:
        raise BundleError(f"entry {index} of the bundle: {exc}") from None


def check_owned(index: int, entry: MemoryEntry, session_scope: Scope) -> None:
    """Bundle entry ``index``, if the facilities own its kind, is in the bundle's session and
    holds the metadata they read."""
    try:
        _owned(entry, session_scope)
    except _BROKEN as exc:
        raise BundleError(f"entry {index} of the bundle: {exc}") from None


EVENT_CHANGES = ("created", "changed")
"""What the events of an entry that still exists can say."""


def event_of(index: int, raw: Any, tenant: str) -> AuditEvent:
    """Bundle audit event ``index`` as an event of ``tenant``, checked: its time, actor,
    operation and change (``created`` or ``changed``: the entries exist); its entry id is
    mapped by the caller, its scope is its entry's."""
    try:
        if not isinstance(raw, dict):
            raise _Refused("not an object")
        change = raw.get("change")
        if change not in EVENT_CHANGES:
            raise _Refused(f"change must be one of {', '.join(EVENT_CHANGES)}")
        return AuditEvent(
            tenant,
            _when(raw.get("at"), "at"),  # type: ignore[arg-type]
            check.actor(raw.get("actor")),
            check.actor(raw.get("operation")),
            change,
            str(_id(raw.get("entry_id"), "entry_id")),
        )
    except _BROKEN as exc:
        raise BundleError(f"audit event {index} of the bundle: {exc}") from None
