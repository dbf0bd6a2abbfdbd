"""Operations: the typed, immutable values a backend executes (its whole vocabulary).

A backend runs a sequence of ops in one transaction (:meth:`Backend.batch`). ``Op[R]`` is an
operation whose result is an ``R``: a plan writes ``entry = yield from run(GetOp(…))`` and the
type checker knows ``entry``. Backends implement one ``op_<name>(tx, op)`` handler per op.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, replace
from datetime import datetime
from typing import Any, ClassVar, Generic, Literal, NamedTuple, TypeVar

import numpy as np
import numpy.typing as npt

from ..retrieval.candidates import Candidates
from ..types import AuditEvent, MemoryEntry, Scope
from .audit_chain import ChainState, Link

Order = Literal["newest", "oldest"]
ListOrder = Literal["newest", "oldest", "updated"]
Superseded = Literal["hide", "show", "only"]
R_co = TypeVar("R_co", covariant=True)


class Removed(NamedTuple):
    """An entry a deleting op removed (what the audit log records of it)."""

    id: str
    scope: str


@dataclass(frozen=True, slots=True)
class Filter:
    """Which entries of one tenant an op sees.

    ``scopes=None`` means every scope of the tenant; ``tags`` must all be present; ``since``
    bounds ``created_at`` from below (inclusive); ``live_at`` hides entries expired at that instant
    (None shows expired entries too). By default it shows superseded entries: the store's read
    plans hide them.
    """

    tenant: str
    scopes: tuple[Scope, ...] | None
    _: KW_ONLY
    tags: tuple[str, ...] = ()
    since: datetime | None = None
    live_at: datetime | None = None
    until: datetime | None = None
    categories: tuple[str, ...] = ()
    metadata: tuple[tuple[str, Any], ...] = ()
    """Top-level metadata keys that must equal these JSON scalars."""
    provenance: tuple[tuple[str, Any], ...] = ()
    """Provenance fields that must equal these JSON scalars."""
    scope_kinds: tuple[str, ...] = ()
    """Only scopes of these kinds (any of them)."""
    superseded: Superseded = "show"
    """Entries a successor replaced: hidden, shown too, or the only ones shown."""
    valid_at: datetime | None = None
    """Only entries that held at that instant (valid_from <= it < valid_to)."""
    hidden: tuple[str, ...] = ()
    """Categories left out: internal entries a generic read does not show (never indexed, so
    a search, which finds chunks, never meets them either)."""

    def all_versions(self) -> Filter:
        """The same filter showing expired and superseded entries too (for engines that apply
        those conditions while scoring, see :class:`~memvault.store.vector_cache.Visibility`)."""
        return replace(self, live_at=None, superseded="show", valid_at=None)

    @property
    def single_scope(self) -> Scope | None:
        """The one scope this filter is only about, or None if it says more than that."""
        plain = not (
            self.tags
            or self.since
            or self.until
            or self.categories
            or self.metadata
            or self.provenance
            or self.scope_kinds
        )
        if plain and self.scopes is not None and len(self.scopes) == 1:
            return self.scopes[0]
        return None


@dataclass(frozen=True, slots=True, eq=False)
class ChunkRecord:
    """Where one chunk of an entry's content lies, and its vector (None: not embedded yet)."""

    seq: int
    start: int
    end: int
    vector: npt.NDArray[np.float32] | None = None


@dataclass(frozen=True, slots=True)
class Op(Generic[R_co]):
    """An operation whose result is an ``R``."""

    writes: ClassVar[bool] = False


@dataclass(frozen=True, slots=True)
class PutOp(Op[MemoryEntry | None]):
    """Insert a new entry. Result: None, or the live near-duplicate stored instead of it (as read
    in the same transaction: the caller needs no second one, and it cannot be gone meanwhile).

    With ``duplicate_threshold`` > 0 and a one-chunk entry, an unexpired entry of the same scope
    and category that it restates, with cosine >= the threshold, is looked for inside the same
    transaction, and if found nothing is inserted. Consecutive puts of a batch are checked
    together, against what was stored before them (:meth:`Backend.put_all`): a batch that may
    repeat itself removes its own repeats first, as ``write_many`` does.
    """

    writes: ClassVar[bool] = True
    tenant: str
    entry: MemoryEntry
    _: KW_ONLY
    chunks: tuple[ChunkRecord, ...] = ()
    duplicate_threshold: float = 0.0


@dataclass(frozen=True, slots=True, eq=False)
class FoldOp(Op["Folded"]):
    """Insert ``entry`` (with ``chunks``) if no entry of its id exists; else replace the
    stored one by ``fold(stored)`` (its revision one higher; its chunks kept) — or by
    ``entry`` if the stored one had expired at ``live_at`` (an expired record starts over) —,
    reading and writing it with every other writer of its scope held off: concurrent folds of
    one entry are never lost. Result: :class:`Folded`.

    ``fold`` is a pure function of the stored entry (running totals, counters)."""

    writes: ClassVar[bool] = True
    tenant: str
    entry: MemoryEntry
    fold: Callable[[MemoryEntry], MemoryEntry]
    _: KW_ONLY
    chunks: tuple[ChunkRecord, ...] = ()
    live_at: datetime | None = None


class Folded(NamedTuple):
    """What a :class:`FoldOp` stored, and whether it created the entry."""

    entry: MemoryEntry
    created: bool


@dataclass(frozen=True, slots=True)
class GetOp(Op[MemoryEntry | None]):
    """Fetch one entry, expired or not. Result: MemoryEntry | None."""

    tenant: str
    entry_id: str


@dataclass(frozen=True, slots=True)
class GetManyOp(Op[list[MemoryEntry]]):
    """Fetch entries by id, expired or not. Result: list[MemoryEntry], those found (any
    order)."""

    tenant: str
    entry_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ListOp(Op[list[MemoryEntry]]):
    """Entries matching a filter, ordered by (created_at, id) — or, ``updated``, the most
    recently updated first (by (updated_at, id)). Result: list[MemoryEntry].

    ``after`` is a keyset cursor: the (created_at, id) of the last entry of the previous page
    (not with ``updated``: a page of it is the first ``limit`` entries).
    """

    filter: Filter
    limit: int
    _: KW_ONLY
    order: ListOrder = "newest"
    after: tuple[datetime, str] | None = None

    def __post_init__(self) -> None:
        if self.order == "updated" and self.after is not None:
            raise ValueError("a list by update time has no cursor")


@dataclass(frozen=True, slots=True)
class CountOp(Op[int]):
    """How many entries match a filter. Result: int."""

    filter: Filter


@dataclass(frozen=True, slots=True)
class ReplaceOp(Op[None]):
    """Overwrite an entry if its stored revision is ``expected_revision``. Result: None.

    Raises ConflictError (rolling the batch back) when the entry is gone or has another revision.
    ``chunks`` replace the entry's chunks; None keeps them (the content did not change).
    """

    writes: ClassVar[bool] = True
    tenant: str
    entry: MemoryEntry
    expected_revision: int
    _: KW_ONLY
    chunks: tuple[ChunkRecord, ...] | None = None


@dataclass(frozen=True, slots=True)
class DeleteOp(Op[list[Removed]]):
    """Delete one entry. Result: list[Removed], the entry (or nothing: there was none).

    With ``expected_revision`` the entry must exist at that revision, else ConflictError.
    """

    writes: ClassVar[bool] = True
    tenant: str
    entry_id: str
    _: KW_ONLY
    expected_revision: int | None = None


@dataclass(frozen=True, slots=True)
class DeleteScopeOp(Op[list[Removed]]):
    """Delete every entry of one scope of one tenant. Result: list[Removed], those deleted."""

    writes: ClassVar[bool] = True
    tenant: str
    scope: Scope


@dataclass(frozen=True, slots=True)
class DeleteMatchingOp(Op[list[Removed]]):
    """Delete every entry that passes a filter (expired or not). Result: list[Removed]."""

    writes: ClassVar[bool] = True
    filter: Filter


@dataclass(frozen=True, slots=True)
class TrimOp(Op[list[Removed]]):
    """Keep only the newest ``keep`` entries that pass a filter of one scope (a FIFO cap).

    Result: list[Removed], the entries deleted, oldest first. Concurrent trims of one scope are
    serialised, so the cap holds under any number of writers.
    """

    writes: ClassVar[bool] = True
    filter: Filter
    keep: int

    def __post_init__(self) -> None:
        if self.filter.scopes is None or len(self.filter.scopes) != 1:
            raise ValueError("TrimOp needs a filter of exactly one scope")


@dataclass(frozen=True, slots=True)
class PurgeExpiredOp(Op[list[Removed]]):
    """Delete every entry of a tenant expired at ``now``. Result: list[Removed]."""

    writes: ClassVar[bool] = True
    tenant: str
    now: datetime


@dataclass(frozen=True, slots=True, eq=False)
class SearchOp(Op[Candidates]):
    """Score the entries that pass the filter. Result: :class:`Candidates`.

    ``terms`` are the query's terms (:func:`memvault.retrieval.text.query_terms`); ``vector``
    the unit-length query embedding.
    """

    filter: Filter
    _: KW_ONLY
    terms: tuple[str, ...]
    vector: npt.NDArray[np.float32] | None
    with_vectors: bool = False
    depth: int = 200
    """How many of the best entries by each signal are candidates (an engine that cannot
    score everything fetches as many chunks from each of its indexes)."""
    around: int = 0
    """Entries this many places before and after each of those are candidates too."""
    recent: int = 0
    """The newest entries that are candidates too (for a ranking that values recency)."""
    windows: tuple[tuple[int, int], ...] = ()
    """The best entries created inside each of these [start, end) µs windows are candidates
    too (for a ranking that values the query's time expressions)."""
    entities: tuple[str, ...] = ()
    """The query's entity keys (:func:`memvault.retrieval.entities.query_entity_keys`): the
    entries that name them (``s:`` keys: that speak as them) score, and are candidates."""
    links: int = 0
    """This many of the best entries by BM25 and cosine lend their rarer entity keys: the
    entries that share them score (``linked``), and are candidates too (one hop)."""
    episode_gap_us: int = 0
    """When positive: the entries shown, in order, form episodes broken by gaps longer than
    this, and each episode's text is scored by BM25 as one document (``episode_lexical``)."""


@dataclass(frozen=True, slots=True, eq=False)
class TwinsOp(Op[list[list[str]]]):
    """For each row: the ids of the entries that pass the filter, whose fact key is the row's
    key (:func:`~memvault.store.duplicates.fact_key`) and that have a chunk at cosine >=
    ``threshold`` with the row's vector (unit length), closest first, then by id. Result:
    list[list[str]], one list per row. The entries of a key are found by an index, whatever
    the size of the scope."""

    filter: Filter
    keys: tuple[int, ...]
    vectors: npt.NDArray[np.float32]
    _: KW_ONLY
    threshold: float


@dataclass(frozen=True, slots=True)
class StoredEmbeddingOp(Op[tuple[str, int] | None]):
    """The store's recorded embedding model. Result: (name, dimension) or None (none yet)."""


@dataclass(frozen=True, slots=True)
class EmbeddingInfoOp(Op[tuple[str, int]]):
    """Record the store's embedding model if it has none. Result: (name, dimension) stored."""

    writes: ClassVar[bool] = True
    name: str
    dimension: int
    _: KW_ONLY
    replace: bool = False


@dataclass(frozen=True, slots=True)
class ChunkPageOp(Op[list["ChunkText"]]):
    """A page of every chunk in the store, after chunk key ``after``. Result: list[ChunkText].

    Used to re-embed a whole store (every tenant).
    """

    after: int
    limit: int


@dataclass(frozen=True, slots=True)
class ChunkText:
    key: int
    text: str
    context: str | None


@dataclass(frozen=True, slots=True, eq=False)
class SetVectorsOp(Op[None]):
    """Store vectors for chunks by key. Result: None."""

    writes: ClassVar[bool] = True
    keys: tuple[int, ...]
    vectors: npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class AppendAuditOp(Op[None]):
    """Append events to the audit log (the store numbers them). Result: None.

    A backend appends the events of every transaction itself (:mod:`memvault.store.audit`);
    this op carries events recorded elsewhere (a bundle's history, on import).
    """

    writes: ClassVar[bool] = True
    events: tuple[AuditEvent, ...]
    _: KW_ONLY
    checkpoints: tuple[str | None, ...] = ()
    """An erasure's :class:`~memvault.store.audit_chain.Checkpoint` (as text) of each event,
    or none of any (empty)."""


@dataclass(frozen=True, slots=True)
class AuditQuery:
    """Which events of one tenant's audit log to read; every given field must match."""

    tenant: str
    _: KW_ONLY
    entry_ids: tuple[str, ...] | None = None
    scope: str | None = None
    actor: str | None = None
    operation: str | None = None
    change: str | None = None
    since: datetime | None = None
    until: datetime | None = None


@dataclass(frozen=True, slots=True)
class AuditOp(Op[list[AuditEvent]]):
    """Events of the audit log, ordered by ``seq``. Result: list[AuditEvent].

    ``after`` is a keyset cursor: the ``seq`` of the last event of the previous page.
    """

    query: AuditQuery
    limit: int
    _: KW_ONLY
    order: Order = "newest"
    after: int | None = None


@dataclass(frozen=True, slots=True)
class AuditLinksOp(Op[list[Link]]):
    """A page of one tenant's audit log as its hash chain holds it (oldest first, after seq
    ``after``); only the erasures' events with ``checkpoints``.
    Result: list[:class:`~memvault.store.audit_chain.Link`]."""

    tenant: str
    after: int
    limit: int
    _: KW_ONLY
    checkpoints: bool = False


@dataclass(frozen=True, slots=True)
class ChainStateOp(Op[ChainState]):
    """What the store keeps beside a tenant's hash chain: its head, the fingerprint of the
    store's audit key, where chains began. Result: :class:`~memvault.store.audit_chain.
    ChainState`."""

    tenant: str


class Forgotten(NamedTuple):
    """What a :class:`ForgetAuditOp` deleted: how many events, and the checkpoint (as text)
    that bridges the gaps it left in the tenant's chain."""

    deleted: int
    checkpoint: str


@dataclass(frozen=True, slots=True)
class ForgetAuditOp(Op[Forgotten]):
    """An erasure's trace in the audit log: delete the events of entries ``ids`` and of
    ``scopes`` (with ``everything``, every event of the tenant); the transaction then appends
    one event of change ``erased`` saying ``note``, with the checkpoint of what it deleted.
    Result: :class:`Forgotten`."""

    writes: ClassVar[bool] = True
    tenant: str
    ids: frozenset[str]
    scopes: frozenset[str] = frozenset()
    _: KW_ONLY
    everything: bool = False
    note: str | None = None


@dataclass(frozen=True, slots=True)
class ForgetCopiesOp(Op[None]):
    """Tell every process serving the store to drop the copies of content it keeps (caches):
    the store's forgetting mark changes, and each process drops its copies at its next
    transaction (:meth:`~memvault.store.Backend.run_batch`). An erasure and a session's
    deletion run it. Result: None."""

    writes: ClassVar[bool] = True


@dataclass(frozen=True, slots=True)
class PendingErasure:
    """An erasure whose purge left something behind: the hash of its ids (as on its receipt)
    and a short hash of each erased id — what a later purge looks for, never the ids."""

    ids_sha256: str
    id_hashes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PendingErasuresOp(Op[list[PendingErasure]]):
    """The tenant's pending erasures, oldest first. Result: list[PendingErasure]."""

    tenant: str


@dataclass(frozen=True, slots=True)
class PendErasureOp(Op[None]):
    """Record ``pending`` as pending for the tenant, or (``done``) drop it. Result: None."""

    writes: ClassVar[bool] = True
    tenant: str
    pending: PendingErasure
    _: KW_ONLY
    done: bool = False


@dataclass(frozen=True, slots=True)
class ReachOp(Op[None]):
    """Nothing but a claim checked against the caller's grant: the operation reaches
    ``scopes`` (None: every scope of the tenant), to change them or only to read, though it
    found nothing to touch (retention with no policy). Result: None."""

    tenant: str
    scopes: tuple[str, ...] | None
    _: KW_ONLY
    changes: bool = False


@dataclass(frozen=True, slots=True)
class Use:
    """How often an entry was used (returned to an agent, reinforced) and when last."""

    entry_id: str
    last_used_at: datetime
    uses: int = 1
    restated: int = 0
    """Of the uses, how many were writes that restated it (merged into it)."""


@dataclass(frozen=True, slots=True)
class UsesOp(Op[dict[str, Use]]):
    """The recorded use of entries ``entry_ids`` (those never used are absent). Result:
    dict[str, Use]."""

    tenant: str
    entry_ids: tuple[str, ...]


class Surveyed(NamedTuple):
    """What a hygiene report reads of one entry (:class:`SurveyOp`)."""

    id: str
    scope: str
    category: str | None
    content: str
    updated_at: datetime
    expires_at: datetime | None
    superseded: bool
    fact_key: int | None
    vector: bytes | None
    """Its first chunk's vector (float32 bytes; None: not embedded)."""
    use: Use | None
    """Its recorded use (None: never used, as far as the store knows)."""


@dataclass(frozen=True, slots=True)
class SurveyOp(Op[list[Surveyed]]):
    """Every entry that passes a filter (expired and superseded ones too, whatever it says of
    them), in no order: what a hygiene report reads of each, in one pass (a statement with no
    sort: paging by id made SQLite sort the scope again for every page). Result:
    list[:class:`Surveyed`]."""

    filter: Filter


@dataclass(frozen=True, slots=True)
class RecordUsesOp(Op[None]):
    """Add ``uses`` to what is recorded of their entries (counts add up, the latest time
    stays); an entry that is gone is skipped. Not a change of memory: no audit event, no
    revision. Result: None."""

    writes: ClassVar[bool] = True
    tenant: str
    uses: tuple[Use, ...]
