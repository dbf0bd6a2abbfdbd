"""Operations: the typed, immutable values a backend executes (its whole vocabulary).

A backend runs a sequence of ops in one transaction (:meth:`Backend.batch`). Each op names its
``kind``; backends implement one ``op_<kind>`` method per op.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar, Literal

from ..types import MemoryEntry, Scope

Order = Literal["newest", "oldest"]


@dataclass(frozen=True, slots=True)
class Filter:
    """Which entries of one tenant an op sees.

    ``scopes=None`` means every scope of the tenant; ``tags`` must all be present; ``since``
    bounds ``created_at`` from below (inclusive); ``live_at`` hides entries expired at that instant
    (None shows expired entries too).
    """

    tenant: str
    scopes: tuple[Scope, ...] | None
    tags: tuple[str, ...] = ()
    since: datetime | None = None
    live_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Op:
    kind: ClassVar[str]
    writes: ClassVar[bool] = False


@dataclass(frozen=True, slots=True)
class PutOp(Op):
    """Insert a new entry. Result: None."""

    kind: ClassVar[str] = "put"
    writes: ClassVar[bool] = True
    tenant: str
    entry: MemoryEntry


@dataclass(frozen=True, slots=True)
class GetOp(Op):
    """Fetch one entry, expired or not. Result: MemoryEntry | None."""

    kind: ClassVar[str] = "get"
    tenant: str
    entry_id: str


@dataclass(frozen=True, slots=True)
class ListOp(Op):
    """Entries matching a filter, ordered by (created_at, id). Result: list[MemoryEntry].

    ``after`` is a keyset cursor: the (created_at, id) of the last entry of the previous page.
    """

    kind: ClassVar[str] = "list"
    filter: Filter
    limit: int
    order: Order = "newest"
    after: tuple[datetime, str] | None = None


@dataclass(frozen=True, slots=True)
class CountOp(Op):
    """How many entries match a filter. Result: int."""

    kind: ClassVar[str] = "count"
    filter: Filter


@dataclass(frozen=True, slots=True)
class ReplaceOp(Op):
    """Overwrite an entry if its stored revision is ``expected_revision``. Result: None.

    Raises ConflictError (rolling the batch back) when the entry is gone or has another revision.
    """

    kind: ClassVar[str] = "replace"
    writes: ClassVar[bool] = True
    tenant: str
    entry: MemoryEntry
    expected_revision: int


@dataclass(frozen=True, slots=True)
class DeleteOp(Op):
    """Delete one entry. Result: bool (whether it existed).

    With ``expected_revision`` the entry must exist at that revision, else ConflictError.
    """

    kind: ClassVar[str] = "delete"
    writes: ClassVar[bool] = True
    tenant: str
    entry_id: str
    expected_revision: int | None = None


@dataclass(frozen=True, slots=True)
class DeleteScopeOp(Op):
    """Delete every entry of one scope of one tenant. Result: int (how many)."""

    kind: ClassVar[str] = "delete_scope"
    writes: ClassVar[bool] = True
    tenant: str
    scope: Scope


@dataclass(frozen=True, slots=True)
class PurgeExpiredOp(Op):
    """Delete every entry of a tenant expired at ``now``. Result: int (how many)."""

    kind: ClassVar[str] = "purge_expired"
    writes: ClassVar[bool] = True
    tenant: str
    now: datetime
