"""The store's logic, free of I/O: every operation is a *plan*.

How to read a plan: it is a generator method that returns the operation's result. Each
``x = yield from run(SomeOp(...))`` is one transaction against the backend, and ``x`` is that
op's result (``Op[R]`` → ``R``, checked by mypy); ``run(a, b, c)`` runs several ops in one
transaction and returns ``a``'s result, ``run_all(ops)`` returns all of theirs.
``y = yield from call(fn, *args)`` calls a function (an embedder, a caller's callback; awaited if
it returns an awaitable). An error of either is raised at that line, so ``try``/``except``
around it works as for a call. Everything between the ``yield``s is pure logic. The drivers in
:mod:`memvault.memory` run the same plans with blocking calls or with ``await``: the logic exists
exactly once.
"""

from __future__ import annotations

import base64
import bisect
import builtins
import functools
import inspect
import json
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Collection, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, Self, TypeVar, cast

import numpy as np

from . import validation as check
from .config import Settings, decay_policy
from .embeddings import splade
from .embeddings.base import Embedder
from .errors import (
    CompactionError,
    ConfigError,
    ConflictError,
    EmbeddingMismatchError,
    FilteredError,
    ForbiddenError,
    NotFoundError,
    ValidationError,
    restated,
    shown,
)
from .ids import new_id
from .retrieval import chunking, filters, relevance, text, when
from .retrieval.decay import factor, half_life
from .retrieval.entities import query_entity_keys
from .retrieval.parts import interleaved, questions
from .retrieval.ranker import RankSpec, conversational_spec, rank
from .retrieval.rerank import RERANK_DEPTH, blended
from .retrieval.traits import wanted
from .scopes import check_promotion, expand_scopes
from .store import chains, duplicates
from .store.ops import (
    AuditOp,
    AuditQuery,
    ChunkPageOp,
    ChunkRecord,
    CountOp,
    DeleteOp,
    DeleteScopeOp,
    EmbeddingInfoOp,
    Filter,
    GetManyOp,
    GetOp,
    ListOp,
    Op,
    PurgeExpiredOp,
    PutOp,
    RecordUsesOp,
    ReplaceOp,
    SearchOp,
    SetVectorsOp,
    StoredEmbeddingOp,
    TrimOp,
    TwinsOp,
    Use,
    UsesOp,
)
from .store.session_files import SessionFiles
from .store.timeconv import to_micros
from .store.use_log import UseLog, merged
from .types import (
    AGENT_CATEGORIES,
    FACILITY_CATEGORIES,
    HIDDEN_CATEGORIES,
    AuditEvent,
    ItemResult,
    MemoryEntry,
    NewEntry,
    Outcome,
    Page,
    Provenance,
    Scope,
    ScopeKind,
    SearchHit,
    WriteReport,
)

T = TypeVar("T")
Order = Literal["newest", "oldest"]
CompactionCallback = Callable[[Sequence[MemoryEntry]], Any]
"""Receives the source entries; returns the compacted content (a str, or an awaitable of one)."""

PAGE = 1000
"""Entries read per transaction when a plan reads a whole selection."""
UPDATE_ATTEMPTS = 30
"""Optimistic update attempts before ConflictError; between them, jittered exponential backoff."""


def backoff(attempt: int) -> float:
    """Seconds to wait before retry ``attempt`` (1-based): 1 ms doubling to 200 ms, jittered
    (a tenant's write transactions take turns at their audit events on PostgreSQL: a hot entry's
    writers spread over more time than a commit)."""
    return float(min(0.001 * 2.0 ** (attempt - 1), 0.2) * random.uniform(0.5, 1.5))


@dataclass(frozen=True, slots=True)
class Invoke:
    """A step that calls a function; the driver awaits its result if it is awaitable.

    ``blocking`` marks CPU- or I/O-bound work (embedding) that an async driver runs in a thread.
    ``slow`` marks a blocking call that may wait long on another service (an LLM): an async
    driver runs it on a pool of its own, so that such calls never hold the threads the store's
    calls and embeddings need. A step calling ``time.sleep`` is awaited as ``asyncio.sleep``.
    """

    fn: Callable[..., Any]
    args: tuple[Any, ...]
    blocking: bool = False
    slow: bool = False


Step = tuple[Op[Any], ...] | Invoke
Plan = Generator[Step, Any, T]
R = TypeVar("R")
S = TypeVar("S")


def run(op: Op[R], *also: Op[Any]) -> Plan[R]:
    """Run ``op`` — with ``also`` in the same transaction — and return ``op``'s result."""
    results = yield (op, *also)
    return cast(R, results[0])


def run_pair(first: Op[R], second: Op[S], *also: Op[Any]) -> Plan[tuple[R, S]]:
    """Run ``first`` and ``second`` — with ``also`` — in one transaction; their two results."""
    results = yield (first, second, *also)
    return cast(R, results[0]), cast(S, results[1])


def run_all(ops: Iterable[Op[R]]) -> Plan[builtins.list[R]]:
    """Run ``ops`` in one transaction and return their results, in order."""
    results = yield tuple(ops)
    return cast("builtins.list[R]", results)


def call(
    fn: Callable[..., Any], *args: Any, blocking: bool = False, slow: bool = False
) -> Plan[Any]:
    """Call ``fn(*args)`` (awaited if it returns an awaitable); ``blocking`` runs it in a
    thread under the async driver (embedding, CPU-bound work), ``slow`` on the pool of calls
    that wait on another service (an LLM)."""
    return (yield Invoke(fn, args, blocking or slow, slow))


def retried(attempt: Callable[[], Plan[T]], subject: str) -> Plan[T]:
    """Run the plan ``attempt()`` makes; each time it loses a race (ConflictError), wait a
    jittered backoff and run a fresh one. ConflictError after ``UPDATE_ATTEMPTS`` tries."""
    for n in range(UPDATE_ATTEMPTS):
        if n:
            yield Invoke(time.sleep, (backoff(n),), blocking=True)
        try:
            return (yield from attempt())
        except ConflictError:
            continue
    raise ConflictError(f"{subject} kept changing; gave up after {UPDATE_ATTEMPTS} tries")


def summarised(
    ids: Sequence[str], callback: CompactionCallback, sources: Sequence[MemoryEntry]
) -> Plan[Any]:
    """What a compaction ``callback`` returns for ``sources`` (a thread runs a blocking one
    under the async driver); CompactionError if it raises."""
    asynchronous = inspect.iscoroutinefunction(callback) or inspect.iscoroutinefunction(
        getattr(callback, "__call__", None)  # noqa: B004  (an object with an async __call__)
    )
    try:
        return (yield from call(callback, tuple(sources), slow=not asynchronous))  # an LLM, often
    except Exception as exc:
        raise CompactionError(ids, f"the callback raised {type(exc).__name__}: {exc}") from exc


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()
"""Marks an update field as "leave unchanged" (None is a value: it clears ``expires_at``)."""


def utc_now() -> datetime:
    return datetime.now(UTC)


def merge_provenance(entries: Sequence[MemoryEntry]) -> Provenance:
    """Provenance of a compacted entry: each field the sources agree on is kept.

    Confidence keeps the lowest source value; ``tool_originated`` is true if any source was.
    Fields the sources disagree on stay reachable through ``compacted_from_ids``.
    """

    def agreed(name: str) -> Any:
        values = {getattr(e.provenance, name) for e in entries}
        return values.pop() if len(values) == 1 else None

    confidences = [e.provenance.confidence for e in entries if e.provenance.confidence is not None]
    return Provenance(
        source=agreed("source"),
        agent_id=agreed("agent_id"),
        confidence=min(confidences) if confidences else None,
        created_in_session_id=agreed("created_in_session_id"),
        source_turn_index=agreed("source_turn_index"),
        tool_originated=any(e.provenance.tool_originated for e in entries),
    )


def encode_cursor(entry: MemoryEntry, order: str) -> str:
    raw = json.dumps([entry.created_at.isoformat(), entry.id, order]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, order: str) -> tuple[datetime, str]:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        created, entry_id, cursor_order = json.loads(base64.urlsafe_b64decode(padded))
        when = check.aware("cursor", datetime.fromisoformat(created))
    except (ValueError, TypeError) as exc:
        raise ValidationError(f"invalid cursor {shown(cursor)}: pass back a next_cursor") from exc
    if cursor_order != order:
        raise ValidationError(f"this cursor belongs to order={cursor_order!r}, not {order!r}")
    return when, str(entry_id)


LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""Upper bounds, in seconds, of the latency histograms :class:`Stats` keeps (then +Inf)."""


@dataclass(frozen=True, slots=True)
class Timing:
    """A latency histogram: how many durations fell in each bucket of ``LATENCY_BUCKETS``
    (at most its bound; the last bucket is +Inf), and their sum in seconds."""

    buckets: tuple[int, ...] = (0,) * (len(LATENCY_BUCKETS) + 1)
    seconds: float = 0.0

    @property
    def count(self) -> int:
        return sum(self.buckets)

    def plus(self, seconds: float) -> Timing:
        slot = bisect.bisect_left(LATENCY_BUCKETS, seconds)
        buckets = (*self.buckets[:slot], self.buckets[slot] + 1, *self.buckets[slot + 1 :])
        return Timing(buckets, self.seconds + seconds)


class Stats:
    """Thread-safe counters of what the write filters and searches did, and latency
    histograms (``search``, ``embedding``)."""

    def __init__(self) -> None:
        self._counts: Counter[str] = Counter()
        self._timings: dict[str, Timing] = {}
        self._lock = threading.Lock()

    def add(self, name: str, amount: int = 1) -> None:
        if amount:
            with self._lock:
                self._counts[name] += amount

    def observe(self, name: str, seconds: float) -> None:
        """Count one duration of ``name`` in its histogram."""
        with self._lock:
            self._timings[name] = self._timings.get(name, Timing()).plus(seconds)

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)

    def timings(self) -> dict[str, Timing]:
        with self._lock:
            return dict(self._timings)


def _may_leave(entry: MemoryEntry) -> Plan[None]:
    """Any entry may be copied out of its scope (no facility's rule says otherwise)."""
    yield from ()


def metadata_filter(metadata: Mapping[str, Any] | None) -> tuple[tuple[str, Any], ...]:
    """Metadata equality filters: top-level keys mapped to JSON scalars."""
    if not metadata:
        return ()
    if not isinstance(metadata, Mapping):
        raise ValidationError("metadata filters must be a mapping of key to value")
    for key, value in metadata.items():
        if not isinstance(key, str) or not (value is None or isinstance(value, str | int | float)):
            raise ValidationError(f"metadata filter {shown(key)} must map a string key to a scalar")
    return tuple(sorted(metadata.items()))


class Planner:
    """Builds the plans of one tenant's store operations."""

    def __init__(
        self,
        tenant: str,
        settings: Settings,
        clock: Callable[[], datetime],
        embedder: Embedder,
        *,
        stats: Stats | None = None,
        uses: UseLog | None = None,
    ) -> None:
        self.tenant = check.tenant(tenant)
        self.settings = settings
        self.embedder = embedder
        self.stats = stats or Stats()
        self.uses = uses if uses is not None else UseLog()
        """The uses of entries seen in this process and not yet stored (every tenant's)."""
        self._clock = clock
        self.leaving: Callable[[MemoryEntry], Plan[None]] = _may_leave
        """The facilities' rule for an entry copied out of its scope (:meth:`promote`): it
        raises to refuse (:class:`~memvault.Planners` sets it: a private session's notes stay)."""
        self.files: SessionFiles | None = None
        """The store's session folders (a memory on a local store sets them)."""

    def now(self) -> datetime:
        return check.aware("the clock's time", self._clock())

    def for_tenant(self, tenant: str) -> Self:
        other = type(self)(
            tenant, self.settings, self._clock, self.embedder, stats=self.stats, uses=self.uses
        )
        other.files = self.files
        return other

    def forget_session_files(self, session_ids: Iterable[str]) -> Plan[None]:
        """After a transaction that deleted these sessions: their folders go too."""
        ids = sorted(set(session_ids))
        if self.files is not None and ids:
            yield Invoke(self.files.remove, (self.tenant, ids), blocking=True)

    # -- indexing ---------------------------------------------------------------------------

    def admit(self, content: str) -> None:
        """Apply the write filters that need no vectors; count and raise on refusal."""
        if self.settings.skip_error_responses and filters.is_error_response(content):
            self.stats.add("filtered_error_response")
            raise FilteredError(
                "error_response",
                "content looks like an error response and is not stored "
                "(MEMVAULT_SKIP_ERROR_RESPONSES=false keeps such content)",
            )
        if filters.is_too_short(content, self.settings.min_content_chars):
            self.stats.add("filtered_too_short")
            limit = self.settings.min_content_chars
            raise FilteredError("too_short", f"content is shorter than {limit} characters")

    def _embed(self, texts: Sequence[str]) -> Plan[Any]:
        """Embed texts in one blocking step; the embedder's answer is checked, not trusted."""
        started = time.perf_counter()
        vectors: Any = yield from call(self.embedder.embed, list(texts), blocking=True)
        self.stats.observe("embedding", time.perf_counter() - started)
        expected = (len(texts), self.embedder.dimension)
        if getattr(vectors, "shape", None) != expected:
            raise ConfigError(
                f"embedder {self.embedder.name!r} returned an array of shape "
                f"{getattr(vectors, 'shape', type(vectors).__name__)}, expected {expected}"
            )
        return vectors

    def _chunk_spec(self) -> chunking.ChunkSpec:
        settings = self.settings
        return chunking.ChunkSpec(
            settings.chunk_tokens, settings.chunk_overlap, settings.chunk_min_tokens
        )

    def forget_texts(self, entries: Iterable[MemoryEntry]) -> Plan[None]:
        """Drop every text the store embedded for ``entries`` (each content and its chunks)
        from the embedding caches, before they are erased or deleted."""
        texts: dict[str, None] = {}
        for entry in entries:
            texts[entry.content] = None
            layout = chunking.split(entry.content, self._chunk_spec())
            texts.update(dict.fromkeys(chunking.texts(entry.content, layout)))
        if texts:
            yield from call(self.embedder.forget, list(texts), blocking=True)

    def index(
        self, entries: Sequence[MemoryEntry], known: Sequence[Any] = ()
    ) -> Plan[list[tuple[ChunkRecord, ...]]]:
        """Chunk each entry's content and embed every chunk (one embedding step); an entry of
        one chunk whose embedding by this store's model is ``known`` (by position) keeps it."""
        spec = self._chunk_spec()
        layouts = [chunking.split(e.content, spec) for e in entries]
        given = [*known, *[None] * (len(entries) - len(known))]
        texts = [
            t
            for e, lay, vector in zip(entries, layouts, given, strict=True)
            for t in chunking.texts(e.content, lay)
            if vector is None or len(lay) != 1
        ]
        embedded = iter((yield from self._embed(texts)) if texts else ())
        vectors = [
            vector if vector is not None and len(lay) == 1 else next(embedded)
            for lay, vector in zip(layouts, given, strict=True)
            for _ in lay
        ]
        result, position = [], 0
        for layout in layouts:
            result.append(
                tuple(
                    ChunkRecord(c.seq, c.start, c.end, vectors[position + i])
                    for i, c in enumerate(layout)
                )
            )
            position += len(layout)
        return result

    def check_embedding(self) -> Plan[None]:
        """Record this store's embedding model, or fail if it was built with another one."""
        name, dimension = self.embedder.name, self.embedder.dimension
        stored = yield from run(StoredEmbeddingOp())  # a read: opening a store takes no lock
        if stored is None:
            stored = yield from run(EmbeddingInfoOp(name, dimension))  # the first opener records
        if tuple(stored) != (name, dimension):
            raise EmbeddingMismatchError(
                f"this store was embedded with {stored[0]!r} ({stored[1]} dimensions) but is "
                f"opened with {name!r} ({dimension} dimensions); open it with the model it was "
                f"built with, or re-embed it: memvault --store URL reembed"
            )

    # -- building entries -------------------------------------------------------------------

    def new_entry(
        self,
        request: NewEntry,
        now: datetime,
        ttl: timedelta | float | None = None,
    ) -> MemoryEntry:
        scope = Scope.coerce(request.scope)
        provenance = Provenance.coerce(request.provenance)
        if scope.kind is ScopeKind.SESSION and provenance.created_in_session_id is None:
            provenance = replace(provenance, created_in_session_id=scope.id)
        created = (
            now if request.created_at is None else check.past("created_at", request.created_at, now)
        )
        return MemoryEntry(
            id=new_id(created),
            scope=scope,
            content=check.content(request.content, self.settings),
            tags=check.tags(request.tags, self.settings),
            category=check.category(request.category),
            created_at=created,
            updated_at=now,
            valid_from=created,
            expires_at=check.expiry(request.expires_at, ttl, now),
            metadata=check.metadata(request.metadata, self.settings),
            provenance=provenance,
            context=None
            if request.context is None
            else check.context(request.context, self.settings),
        )

    def where(
        self,
        scopes: tuple[Scope, ...] | None,
        tags: Iterable[str] | None,
        since: datetime | None,
        now: datetime | None,
        *,
        as_of: datetime | None = None,
        include_superseded: bool = False,
    ) -> Filter:
        """The filter of a read: current entries (live at ``now`` unless None), or the versions
        that held at ``as_of``, or every version (``include_superseded``)."""
        if as_of is not None and include_superseded:
            raise ValidationError(
                "as_of and include_superseded exclude each other: as_of shows the versions "
                "that held at that instant, include_superseded every version"
            )
        return Filter(
            tenant=self.tenant,
            scopes=scopes,
            tags=check.tags(tags, self.settings),
            since=None if since is None else check.aware("since", since),
            live_at=now,
            superseded="show" if as_of is not None or include_superseded else "hide",
            valid_at=None if as_of is None else check.aware("as_of", as_of),
            hidden=HIDDEN_CATEGORIES,
        )

    def live(self, entry_id: str) -> Plan[MemoryEntry]:
        """Fetch an unexpired entry or raise NotFoundError."""
        found = yield from self.get(entry_id)
        if found is None:
            raise NotFoundError(entry_id)
        return found

    def put(
        self,
        entry: MemoryEntry,
        *,
        indexed: bool = True,
        duplicates: bool = False,
        cap: tuple[tuple[str, ...], int] | None = None,
        also: Sequence[Op[Any]] = (),
        chunks: tuple[ChunkRecord, ...] | None = None,
    ) -> Plan[MemoryEntry]:
        """Store a new entry, in one transaction with ``also``.

        ``indexed`` chunks and embeds it (else it is found by filters only), unless its
        ``chunks`` are given; ``duplicates`` returns a live near-duplicate of the same scope
        instead; ``cap`` (categories, n) keeps only the newest n entries of those categories in
        the entry's scope (the chains of those it evicts are mended after).
        """
        if chunks is None and indexed:
            (chunks,) = yield from self.index([entry])
        threshold = self.settings.near_duplicate_threshold if duplicates else 0.0
        put = PutOp(self.tenant, entry, chunks=chunks or (), duplicate_threshold=threshold)
        caps = {} if cap is None else {entry.scope: cap}
        (twin,), _ = yield from self.put_many([put], caps, also)
        return entry if twin is None else replace(twin, duplicate=True)

    def put_many(
        self,
        puts: Sequence[PutOp],
        caps: Mapping[Scope, tuple[tuple[str, ...], int]],
        also: Sequence[Op[Any]] = (),
    ) -> Plan[tuple[builtins.list[MemoryEntry | None], builtins.list[Any]]]:
        """Run ``puts`` and ``also`` in one transaction, then the FIFO ``caps``: in each scope
        named, only the newest n current entries of those categories stay (the chains of those
        evicted are mended after). Each put's twin (None: stored), and ``also``'s results."""
        trims = [
            (scope, TrimOp(Filter(self.tenant, (scope,), categories=kept, superseded="hide"), n))
            for scope, (kept, n) in sorted(caps.items(), key=lambda cap: str(cap[0]))
        ]
        results = yield from run_all([*puts, *also, *(trim for _, trim in trims)])
        twins, evictions = results[: len(puts)], results[len(results) - len(trims) :]
        for (scope, _), evicted in zip(trims, evictions, strict=True):
            self.stats.add("evicted", len(evicted))  # the FIFO cap's oldest entries
            yield from self.relink_evicted(scope, [gone.id for gone in evicted])
        stored = sum(twin is None for twin in twins)
        yield from self.used((twin.id for twin in twins if twin is not None), restated=True)
        self.stats.add("written", stored)
        self.stats.add("near_duplicate", len(twins) - stored)
        return twins, results[len(puts) : len(results) - len(trims)]

    def twin(self, entry: MemoryEntry, chunks: tuple[ChunkRecord, ...]) -> Plan[MemoryEntry | None]:
        """A live, current entry of ``entry``'s scope and category that it restates, found by
        the probe writes use (but outside a write transaction), or None."""
        threshold = self.settings.near_duplicate_threshold
        op = PutOp(self.tenant, entry, chunks=chunks, duplicate_threshold=threshold)
        where = duplicates.probe_filter(op)
        if where is None:
            return None
        vectors = np.stack([c.vector for c in chunks if c.vector is not None])
        keys = (duplicates.fact_key(entry.content),)
        (ids,) = yield from run(TwinsOp(where, keys, vectors, threshold=threshold))
        found = yield from run(GetManyOp(self.tenant, tuple(ids)))
        now = self.now()
        live = {e.id: e for e in found if not e.superseded and not e.is_expired(now)}
        return next((live[i] for i in ids if duplicates.same_fact(live.get(i), entry)), None)

    def copy_of(self, source: MemoryEntry, verb: str, **changes: Any) -> MemoryEntry:
        """A fresh current copy of ``source`` (promote, pin, demote) with ``changes``: a new id,
        created and updated now, revision 1, ``promoted_from_id`` the source, no version links.
        A superseded source is refused (ValidationError)."""
        if source.superseded:
            by = f" by {source.superseded_by}" if source.superseded_by else ""
            raise ValidationError(f"entry {source.id} is superseded{by}; {verb} the current one")
        now = self.now()
        return replace(
            source,
            id=new_id(now),
            created_at=now,
            updated_at=now,
            revision=1,
            promoted_from_id=source.id,
            valid_to=None,
            superseded_by=None,
            superseded_reason=None,
            supersedes=(),
            **changes,
        )

    def removal(
        self, gone: Sequence[MemoryEntry], heir: MemoryEntry | None = None
    ) -> Plan[tuple[MemoryEntry | None, builtins.list[Op[Any]]]]:
        """The ops that delete ``gone`` and mend the chains they leave (see
        :mod:`memvault.store.chains`), each at the revision read, in the order of their ids (so
        concurrent removals lock rows in one order); and ``heir``, the copy that takes the
        place of a moved entry, linked."""
        ids = sorted(chains.neighbour_ids(gone))
        found = (yield from run_all(GetOp(self.tenant, i) for i in ids)) if ids else []
        changed = chains.unlink(gone, [e for e in found if e is not None], heir)
        if heir is not None:
            heir = changed.pop(heir.id, heir)
        deletes = {e.id: DeleteOp(self.tenant, e.id, expected_revision=e.revision) for e in gone}
        writes = {**deletes, **{i: self._relinked(e) for i, e in changed.items()}}
        return heir, [writes[i] for i in sorted(writes)]

    def remove(self, gone: Sequence[MemoryEntry], also: Sequence[Op[Any]] = ()) -> Plan[None]:
        """Delete ``gone`` and mend the chains they leave, in one transaction with ``also``
        (see :meth:`removal`; ConflictError if one changed since it was read)."""
        writes: builtins.list[Op[Any]] = []
        if gone:
            _, writes = yield from self.removal(gone)
        if writes or also:
            yield from run_all([*writes, *also])

    def relink_evicted(self, scope: Scope, evicted: Sequence[str]) -> Plan[None]:
        """After a FIFO cap deleted the current entries ``evicted`` of ``scope``, the entries
        they had replaced stay superseded with no successor (a transaction of its own)."""
        if evicted:
            yield from retried(lambda: self._orphan(scope, evicted), f"the chains of {scope}")

    def _orphan(self, scope: Scope, evicted: Sequence[str]) -> Plan[None]:
        found = yield from self.every(Filter(self.tenant, (scope,), superseded="only"))
        relinks = [self._relinked(e) for e in chains.orphaned(found, evicted)]
        if relinks:
            yield from run_all(relinks)

    def _relinked(self, entry: MemoryEntry) -> ReplaceOp:
        """Store ``entry``'s new links, if it is still at the revision it was read at."""
        return ReplaceOp(self.tenant, replace(entry, revision=entry.revision + 1), entry.revision)

    def events(self, entry_ids: Iterable[str]) -> Plan[builtins.list[AuditEvent]]:
        """Every audit event of the entries ``entry_ids``, oldest first (read page by page,
        :data:`PAGE` ids a query)."""
        ids = sorted(set(entry_ids))
        found: builtins.list[AuditEvent] = []
        for start in range(0, len(ids), PAGE):
            query = AuditQuery(self.tenant, entry_ids=tuple(ids[start : start + PAGE]))
            after = None
            while True:
                page = yield from run(AuditOp(query, PAGE, order="oldest", after=after))
                found += page
                if len(page) < PAGE:
                    break
                after = page[-1].seq
        return sorted(found, key=lambda event: event.seq)

    def every(self, where: Filter, order: Order = "newest") -> Plan[builtins.list[MemoryEntry]]:
        """Every entry ``where`` selects, read page by page."""
        found: builtins.list[MemoryEntry] = []
        after = None
        while True:
            page = yield from run(ListOp(where, PAGE, order=order, after=after))
            found += page
            if len(page) < PAGE:
                return found
            after = (page[-1].created_at, page[-1].id)

    @staticmethod
    def editable(entry: MemoryEntry) -> MemoryEntry:
        """Refuse to create or change the entries the facilities (records, sessions,
        summaries) and agent memory own directly."""
        if entry.category in AGENT_CATEGORIES:
            raise ForbiddenError(
                f"entry {entry.id} is agent memory's ({entry.category}): only its operations "
                "write it (record_execution, record_decomposition); it may be deleted"
            )
        return Planner.deletable(entry)

    @staticmethod
    def deletable(entry: MemoryEntry) -> MemoryEntry:
        """Refuse to delete facility-owned entries (records, sessions, summaries) one by one."""
        if entry.category in FACILITY_CATEGORIES:
            raise ForbiddenError(
                f"entry {entry.id} is a {entry.category}: records are immutable, and sessions "
                "and summaries change only through their session (e.g. delete_session)"
            )
        return entry

    # -- operations -------------------------------------------------------------------------

    def write(
        self,
        content: str,
        *,
        scope: Scope | str,
        tags: Iterable[str] | None = None,
        category: str | None = None,
        expires_at: datetime | None = None,
        ttl: timedelta | float | None = None,
        metadata: Mapping[str, Any] | None = None,
        provenance: Provenance | Mapping[str, Any] | None = None,
        context: str | None = None,
        created_at: datetime | None = None,
    ) -> Plan[MemoryEntry]:
        """Store one entry in ``scope`` and return it with its id and timestamps.

        ``ttl`` (seconds or a timedelta) is a shorthand for ``expires_at``. A session-scoped entry
        records its session as ``provenance.created_in_session_id`` unless one is given.
        ``context`` (e.g. the turn before this one) is searched with the entry but is not its
        content; ``created_at`` back-dates an imported memory (never into the future).
        If an unexpired entry of the same scope and category states the same fact (a close
        embedding *and* the same content words, see :mod:`memvault.store.duplicates`), that
        entry is returned with ``duplicate=True`` and nothing new is stored. Content that a
        write filter refuses raises FilteredError.
        """
        request = NewEntry(
            content,
            scope,
            tags=tags,
            category=category,
            expires_at=expires_at,
            metadata=metadata,
            provenance=provenance,
            context=context,
            created_at=created_at,
        )
        entry = self.editable(self.new_entry(request, self.now(), ttl))
        self.admit(entry.content)
        return (yield from self.put(entry, duplicates=True))

    @check.checked_per_item("items")
    def write_many(
        self, items: Iterable[NewEntry | Mapping[str, Any]], *, strict: bool = False
    ) -> Plan[WriteReport]:
        """Store several entries in one transaction and report what became of each item.

        Items are :class:`NewEntry` values or mappings with the same keys. Each item is stored,
        merged (it restates an entry already there, or an earlier item of the batch: nothing new
        is stored) or refused (invalid, filtered, not allowed: the others are still stored).
        With ``strict=True`` the first refused item raises its error and nothing is stored.
        """
        if isinstance(items, str | bytes | Mapping) or not isinstance(items, Iterable):
            raise ValidationError(f"items must be a list of entries, got {type(items).__name__}")
        now = self.now()
        results: builtins.list[ItemResult | None] = []
        entries: builtins.list[MemoryEntry] = []
        for index, item in enumerate(items):
            try:
                entries.append(self._admitted_item(item, now))
                results.append(None)
            except (ValidationError, ForbiddenError) as exc:
                if strict:
                    raise restated(exc, f"item {index}", index) from exc
                if not isinstance(exc, FilteredError):  # the filters count their own
                    self.stats.add("refused")
                results.append(ItemResult.refusal(index, exc))
        outcomes = yield from self._put_batch(entries)
        fate = iter(outcomes)
        return WriteReport(
            tuple(
                r if r is not None else replace(next(fate), index=i) for i, r in enumerate(results)
            )
        )

    def _admitted_item(self, item: NewEntry | Mapping[str, Any], now: datetime) -> MemoryEntry:
        """The entry an item asks for, checked and admitted by the write filters."""
        check.arguments({"": item})
        if not isinstance(item, NewEntry | Mapping):
            raise ValidationError(f"expected a NewEntry or a mapping, got {type(item).__name__}")
        request = item if isinstance(item, NewEntry) else NewEntry.from_mapping(item)
        entry = self.editable(self.new_entry(request, now))
        self.admit(entry.content)
        return entry

    def _put_batch(self, entries: Sequence[MemoryEntry]) -> Plan[builtins.list[ItemResult]]:
        """Store admitted entries in one transaction; the result of each (index unset)."""
        if not entries:
            return []
        chunks = yield from self.index(entries)
        threshold = self.settings.near_duplicate_threshold
        same_batch = self._duplicates_within(entries, chunks, threshold)
        puts = (
            PutOp(self.tenant, entry, chunks=entry_chunks, duplicate_threshold=threshold)
            for entry, entry_chunks, twin in zip(entries, chunks, same_batch, strict=True)
            if twin is None
        )
        outcomes: Iterator[MemoryEntry | None] = iter((yield from run_all(puts)))
        kept: builtins.list[MemoryEntry] = []
        for entry, twin in zip(entries, same_batch, strict=True):
            kept.append(kept[twin] if twin is not None else next(outcomes) or entry)
        results = []
        for entry, stored in zip(entries, kept, strict=True):
            merged = stored.id != entry.id
            outcome = Outcome.MERGED if merged else Outcome.STORED
            results.append(ItemResult(-1, outcome, entry=replace(stored, duplicate=merged)))
        written = sum(1 for r in results if r.outcome is Outcome.STORED)
        merged_into = (r.entry.id for r in results if r.entry and r.outcome is Outcome.MERGED)
        yield from self.used(merged_into, restated=True)
        self.stats.add("written", written)
        self.stats.add("near_duplicate", len(results) - written)
        return results

    def _duplicates_within(
        self,
        entries: Sequence[MemoryEntry],
        chunks: Sequence[tuple[ChunkRecord, ...]],
        threshold: float,
    ) -> builtins.list[int | None]:
        """For each entry, the earlier one-chunk entry of the batch (same scope and category) it
        repeats."""
        if threshold <= 0:
            return [None] * len(entries)
        eligible = np.array([len(c) == 1 and c[0].vector is not None for c in chunks])
        dimension = self.embedder.dimension
        zero = np.zeros(dimension, np.float32)
        vectors = np.vstack(
            [c[0].vector if c and c[0].vector is not None else zero for c in chunks]
        )
        groups: builtins.list[object] = [(e.scope, e.category) for e in entries]
        texts = [e.content for e in entries]
        return duplicates.earlier_duplicates(vectors, texts, groups, eligible, threshold=threshold)

    def retrieve(
        self,
        scope: Scope | str,
        *,
        tags: Iterable[str] | None = None,
        since: datetime | None = None,
        limit: int = 20,
        order: Order = "newest",
        include_narrower: bool = False,
        session_id: str | None = None,
        as_of: datetime | None = None,
        include_superseded: bool = False,
    ) -> Plan[builtins.list[MemoryEntry]]:
        """Unexpired current entries of ``scope`` that carry ALL ``tags``, newest first by default.

        ``include_narrower=True`` on a user scope also returns the entries of the one session
        named by ``session_id`` (never discovered implicitly). ``as_of`` returns what held at
        that instant instead (entries superseded since included); ``include_superseded`` returns
        every version.
        """
        scopes = expand_scopes(
            Scope.coerce(scope), include_narrower=include_narrower, session_id=session_id
        )
        op = ListOp(
            self.where(
                scopes,
                tags,
                since,
                self.now(),
                as_of=as_of,
                include_superseded=include_superseded,
            ),
            check.limit(limit, self.settings),
            order=check.order(order),
        )
        return (yield from run(op))

    def get(self, entry_id: str) -> Plan[MemoryEntry | None]:
        """The entry with this id, or None if it does not exist or has expired."""
        found = yield from run(GetOp(self.tenant, check.entry_id(entry_id)))
        if found is None or found.is_expired(self.now()):
            return None
        return found

    def update(
        self,
        entry_id: str,
        *,
        content: str = UNSET,
        tags: Iterable[str] = UNSET,
        expires_at: datetime | None = UNSET,
        metadata: Mapping[str, Any] = UNSET,
    ) -> Plan[MemoryEntry]:
        """Change content, tags, expiry (None clears it) or metadata (replaced whole).

        Scope, provenance and ``promoted_from_id`` never change. Concurrent updates are
        serialised by revision: a lost race is retried on the fresh entry.
        """
        asked = {"content": content, "tags": tags, "expires_at": expires_at, "metadata": metadata}
        if all(value is UNSET for value in asked.values()):
            raise ValidationError("nothing to update; give content, tags, expires_at or metadata")
        return (yield from retried(lambda: self._update(entry_id, asked), f"entry {entry_id}"))

    def _update(self, entry_id: str, asked: Mapping[str, Any]) -> Plan[MemoryEntry]:
        current = self.editable((yield from self.live(entry_id)))
        now = self.now()
        changes: dict[str, Any] = {"updated_at": now, "revision": current.revision + 1}
        if asked["content"] is not UNSET:
            changes["content"] = check.content(asked["content"], self.settings)
            self.admit(changes["content"])
        if asked["tags"] is not UNSET:
            changes["tags"] = check.tags(asked["tags"], self.settings)
        if asked["expires_at"] is not UNSET:
            changes["expires_at"] = check.expiry(asked["expires_at"], None, now)
        if asked["metadata"] is not UNSET:
            changes["metadata"] = check.metadata(asked["metadata"], self.settings)
        updated = replace(current, **changes)
        chunks = None
        if updated.content != current.content:
            (chunks,) = yield from self.index([updated])
        yield from run(ReplaceOp(self.tenant, updated, current.revision, chunks=chunks))
        return updated

    def delete(self, entry_id: str) -> Plan[bool]:
        """Delete an entry; True if it existed. Deleting a missing entry is not an error.

        Its supersession chain is mended in the same transaction: what it replaced now points
        to its successor (see :mod:`memvault.store.chains`). Records, sessions and summaries
        cannot be deleted one by one (ForbiddenError).
        """
        entry_id = check.entry_id(entry_id)
        return (yield from retried(lambda: self._delete(entry_id), f"entry {entry_id}"))

    def _delete(self, entry_id: str) -> Plan[bool]:
        found = yield from run(GetOp(self.tenant, entry_id))
        if found is None:
            return False
        yield from self.remove([self.deletable(found)])
        return True

    def delete_all(self, entry_ids: Sequence[str]) -> Plan[int]:
        """Delete these entries in one transaction, all or none (NotFoundError if one is not
        there; ForbiddenError, deleting none, if the caller may not delete one); how many."""
        ids = tuple(dict.fromkeys(check.entry_ids("entry_ids", entry_ids)))
        return (yield from retried(lambda: self._delete_all(ids), "the entries"))

    def _delete_all(self, ids: tuple[str, ...]) -> Plan[int]:
        found = yield from run(GetManyOp(self.tenant, ids))
        missing = set(ids) - {e.id for e in found}
        if missing:
            raise NotFoundError(sorted(missing)[0])
        yield from self.remove([self.deletable(e) for e in found])
        return len(found)

    def delete_by_scope(self, scope: Scope | str) -> Plan[int]:
        """Delete every entry of exactly this scope (no other scope, no other tenant); a
        session's scope takes its folder too."""
        scope = Scope.coerce(scope)
        removed = yield from run(DeleteScopeOp(self.tenant, scope))
        if scope.kind is ScopeKind.SESSION:
            yield from self.forget_session_files([scope.id])
        return len(removed)

    def promote(
        self,
        entry_id: str,
        to: Scope | str,
        *,
        delete_original: bool = False,
        content: str | None = None,
        tags: Iterable[str] | None = None,
    ) -> Plan[MemoryEntry]:
        """Copy an entry into a broader scope (narrow → broad only) with ``promoted_from_id``.

        Content and tags may be overridden; category, expiry, metadata and provenance carry over.
        The copy is current and starts no chain; a superseded entry is refused (ValidationError).
        If the target scope already holds an entry stating the same fact, that entry is returned
        (``duplicate=True``) and no copy is made. With ``delete_original`` the source is removed
        in the same transaction (and its chain mended, as :meth:`delete` does).
        """
        target = Scope.coerce(to)
        content = None if content is None else check.content(content, self.settings)
        tags = None if tags is None else check.tags(tags, self.settings)
        return (
            yield from retried(
                lambda: self._promote(entry_id, target, delete_original, content, tags),
                f"entry {entry_id}",
            )
        )

    def _promote(
        self,
        entry_id: str,
        target: Scope,
        delete_original: bool,
        content: str | None,
        tags: tuple[str, ...] | None,
    ) -> Plan[MemoryEntry]:
        source = self.editable((yield from self.live(entry_id)))
        check_promotion(source.scope, target)
        yield from self.leaving(source)
        promoted = self.copy_of(
            source,
            "promote",
            scope=target,
            content=source.content if content is None else content,
            tags=source.tags if tags is None else tags,
        )
        also: builtins.list[Op[Any]] = []
        if delete_original:
            _, also = yield from self.removal([source])
        return (yield from self.put(promoted, duplicates=True, also=also))

    def compact(
        self,
        entry_ids: Sequence[str],
        callback: CompactionCallback,
        *,
        scope: Scope | str | None = None,
        delete_sources: bool = False,
        tags: Iterable[str] | None = None,
        category: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Plan[MemoryEntry]:
        """Merge entries of one scope into a new one whose content ``callback(entries)`` returns.

        All sources must live in ``scope`` (default: their common scope). Tags default to the
        union of the sources' tags. If the callback fails, a CompactionError is raised and nothing
        changes; with ``delete_sources`` the sources go in the same transaction as the write,
        their chains mended (as :meth:`delete` does; ConflictError if a source changed meanwhile).
        """
        sources = yield from self.compaction_sources(entry_ids, scope)
        ids = [e.id for e in sources]
        target = sources[0].scope if scope is None else Scope.coerce(scope)
        text = yield from self._compacted_text(ids, callback, sources)
        merged = {tag: None for e in sources for tag in e.tags}
        request = NewEntry(
            text,
            target,
            tags=tuple(merged) if tags is None else tags,
            category=category,
            metadata=metadata,
            provenance=merge_provenance(sources),
        )
        entry = self.editable(self.new_entry(request, self.now()))
        entry = replace(entry, compacted_from_ids=tuple(ids))
        (chunks,) = yield from self.index([entry])
        put = PutOp(self.tenant, entry, chunks=chunks)
        if not delete_sources:
            yield from run(put)
        else:
            subject = f"the chains of {', '.join(ids)}"
            if not (yield from retried(lambda: self._put_replacing(put, sources), subject)):
                raise ConflictError(f"entries {', '.join(ids)} changed meanwhile; compact again")
        return entry

    def compaction_sources(
        self, entry_ids: Sequence[str], scope: Scope | str | None = None
    ) -> Plan[builtins.list[MemoryEntry]]:
        """The entries :meth:`compact` would merge, checked: distinct, live, editable, all in
        ``scope`` (default: the first one's)."""
        ids = check.entry_ids("entry_ids", entry_ids)
        if not ids or len(set(ids)) != len(ids):
            raise ValidationError("compact needs a non-empty list of distinct entry ids")
        found = yield from run_all(GetOp(self.tenant, i) for i in ids)
        now = self.now()
        sources: builtins.list[MemoryEntry] = []
        for entry_id, entry in zip(ids, found, strict=True):
            if entry is None or entry.is_expired(now):
                raise NotFoundError(entry_id)
            sources.append(self.editable(entry))
        target = sources[0].scope if scope is None else Scope.coerce(scope)
        strays = [e.id for e in sources if e.scope != target]
        if strays:
            raise ValidationError(
                f"all compacted entries must be in the target scope {target}; "
                f"not: {', '.join(strays)}"
            )
        return sources

    def _put_replacing(self, put: PutOp, sources: Sequence[MemoryEntry]) -> Plan[bool]:
        """Store ``put`` and delete ``sources``, mending their chains; False if a source
        changed since it was read (else a race lost to a chain neighbour is retried)."""
        fresh = yield from run_all(GetOp(self.tenant, e.id) for e in sources)
        if fresh != list(sources):
            return False
        _, removal = yield from self.removal(sources)
        yield from run(put, *removal)
        return True

    def _compacted_text(
        self, ids: Sequence[str], callback: CompactionCallback, sources: Sequence[MemoryEntry]
    ) -> Plan[str]:
        text = yield from summarised(ids, callback, sources)
        try:
            return check.content(text, self.settings)
        except ValidationError as exc:
            raise CompactionError(ids, f"the callback's result is unusable: {exc}") from exc

    def count(
        self,
        scope: Scope | str | None = None,
        *,
        tags: Iterable[str] | None = None,
        since: datetime | None = None,
        include_narrower: bool = False,
        session_id: str | None = None,
        as_of: datetime | None = None,
        include_superseded: bool = False,
        include_expired: bool = False,
    ) -> Plan[int]:
        """How many unexpired current entries match (in every scope of the tenant if ``scope`` is
        None); ``as_of`` and ``include_superseded`` as for :meth:`retrieve`;
        ``include_expired`` counts expired entries too, until they are purged."""
        scopes = None
        if scope is not None:
            scopes = expand_scopes(
                Scope.coerce(scope), include_narrower=include_narrower, session_id=session_id
            )
        now = None if include_expired else self.now()
        where = self.where(
            scopes, tags, since, now, as_of=as_of, include_superseded=include_superseded
        )
        return (yield from run(CountOp(where)))

    def purge_expired(self) -> Plan[int]:
        """Really delete this tenant's expired entries (retrieval already hides them)."""
        return len((yield from run(PurgeExpiredOp(self.tenant, self.now()))))

    def search(
        self,
        query: str,
        scope: Scope | str,
        *,
        limit: int = 10,
        tags: Iterable[str] | None = None,
        categories: Iterable[str] | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        metadata: Mapping[str, Any] | None = None,
        include_narrower: bool = False,
        session_id: str | None = None,
        lexical_weight: float = 0.5,
        dense_weight: float = 0.5,
        recency_weight: float = 0.0,
        recency_half_life: timedelta = timedelta(days=30),
        fusion: Literal["weighted", "rrf"] = "weighted",
        diversity: float | None = None,
        min_score: float | None = None,
        conversational: bool = False,
        rerank: bool = False,
        time_weight: float = 0.0,
        as_of: datetime | None = None,
        include_superseded: bool = False,
        min_relevance: float | None = None,
        decay: bool | None = None,
    ) -> Plan[builtins.list[SearchHit]]:
        """Hybrid search: BM25 + embedding similarity (+ optional recency), fused, best first.

        Scope, tenant and every filter (tags ALL-of, categories ANY-of, ``since`` ≤ created <
        ``until``, metadata equality) apply before ranking. ``fusion`` is a weighted sum of
        min-max normalised scores or reciprocal rank fusion; ``diversity`` (0..1) turns on MMR;
        ``min_score`` drops weak hits. ``conversational=True`` treats entries as turns of
        conversations: turns next to a match, and the episode (turns less than 30 minutes apart)
        around it, share its relevance. ``rerank=True`` reorders the best 50 by a blend with
        the packaged SPLADE model's relevance (component ``sparse``; tens of milliseconds
        more, docs/benchmarks.md). Entries created inside what the query's time expressions
        name ("last week", "in May 2023"; resolved against ``as_of``, else now) have their
        score multiplied by ``1 + time_weight`` (component ``time``). Each hit carries its
        component scores and its ``relevance`` (0 to 1, read from the best 10 whatever the
        ``limit``: :class:`SearchHit`); ``min_relevance`` drops the hits below it
        (``Settings.min_relevance`` is the shipped threshold that tells noise).
        Superseded entries are left out unless ``include_superseded``; ``as_of`` searches
        what held at that instant. A question about several things at once ("What do Ann and
        Bob both play?") is also searched by its parts, and the results are taken in turn.
        ``decay=True`` (default: ``Settings.decay_by_default``) multiplies each score by how
        much the entry has faded since it was last used (component ``decay``: a half-life
        per category, ``Settings.decay``; :mod:`memvault.retrieval.decay`).
        """
        check.query(query)
        spec = RankSpec(
            limit=check.limit(limit, self.settings),
            lexical_weight=check.finite("lexical_weight", lexical_weight, 0),
            dense_weight=check.finite("dense_weight", dense_weight, 0),
            recency_weight=check.finite("recency_weight", recency_weight, 0),
            recency_half_life_s=check.duration("recency_half_life", recency_half_life),
            fusion=fusion,
            diversity=None if diversity is None else check.finite("diversity", diversity, 0, 1),
            min_score=None if min_score is None else check.finite("min_score", min_score),
            time_weight=check.finite("time_weight", time_weight, 0),
        )
        if conversational:
            spec = conversational_spec(spec)
        scopes = expand_scopes(
            Scope.coerce(scope), include_narrower=include_narrower, session_id=session_id
        )
        now = self.now()
        current = self.where(
            scopes, tags, since, now, as_of=as_of, include_superseded=include_superseded
        )
        where = replace(
            current,
            until=None if until is None else check.aware("until", until),
            categories=check.categories(categories),
            metadata=metadata_filter(metadata),
        )
        if spec.time_weight:
            named = yield from call(when.windows, query, as_of or now, blocking=True)
            spec = replace(spec, windows=tuple((to_micros(a), to_micros(b)) for a, b in named))
        fading = self.settings.decay_by_default if decay is None else check.flag("decay", decay)
        hits = yield from self.ranked(query, where, spec, now, rerank=rerank, decay=fading)
        if min_relevance is not None:
            floor = check.finite("min_relevance", min_relevance, 0, 1)
            hits = [hit for hit in hits if hit.relevance >= floor]
        return hits

    def ranked(
        self,
        query: str,
        where: Filter,
        spec: RankSpec,
        now: datetime,
        *,
        rerank: bool = False,
        only: Collection[str] | None = None,
        decay: bool = False,
    ) -> Plan[builtins.list[SearchHit]]:
        """Search the entries ``where`` selects (and of them ``only`` those ids, a filter the
        store cannot apply) and rank them by ``spec`` (then ``rerank``, then ``decay``)."""
        started = time.perf_counter()
        asked = questions(query)
        vectors = yield from self._embed(asked)
        ops = [self._search_op(q, v, where, spec) for q, v in zip(asked, vectors, strict=True)]
        found = yield from run_all(ops)
        depth = RERANK_DEPTH if rerank else relevance.SEARCHED  # what the reranker, the gate read
        pool = replace(spec, limit=max(spec.limit, depth))
        now_us = int(now.timestamp() * 1_000_000)
        lists = [
            [
                (str(c.entry_ids[r.index]), r)
                for r in rank(c, replace(pool, wants=wanted(q)), now_us)
            ]
            for q, c in zip(
                asked, (c if only is None else c.only(only) for c in found), strict=True
            )
        ]
        ids = tuple(dict.fromkeys(entry_id for ranked in lists for entry_id, _ in ranked))
        get = GetManyOp(self.tenant, ids)
        got, stored = yield from run_pair(get, UsesOp(self.tenant, ids if decay else ()))
        entries = {e.id: e for e in got}
        self.stats.add("searches")
        answers = []
        for question, ranked in zip(asked, lists, strict=True):
            hits = [SearchHit(entries[i], r.score, r.components) for i, r in ranked if i in entries]
            if rerank and hits:
                hits = yield from self._reranked(question, hits, spec.model)
            if decay:
                hits = self._decayed(hits, stored, now)
            answers.append(hits)
        merged = interleaved(answers, key=lambda hit: hit.entry.id)
        hits = _with_relevance(
            query, merged[: max(spec.limit, relevance.SEARCHED)], relevance.kind(spec.model, rerank)
        )
        self.stats.observe("search", time.perf_counter() - started)
        return hits[: spec.limit]

    def _decayed(
        self, hits: builtins.list[SearchHit], stored: Mapping[str, Use], now: datetime
    ) -> builtins.list[SearchHit]:
        """``hits`` with their scores faded by disuse (component ``decay``), best first."""
        policy = decay_policy(self.settings.decay)
        pending = self.uses.pending(self.tenant, [hit.entry.id for hit in hits])
        faded = []
        for hit in hits:
            use = merged(stored.get(hit.entry.id), pending.get(hit.entry.id))
            since = (
                hit.entry.updated_at if use is None else max(use.last_used_at, hit.entry.updated_at)
            )
            kept = factor(half_life(policy, hit.entry.category), since, now)
            components = {**hit.components, "decay": kept}
            faded.append(replace(hit, score=hit.score * kept, components=components))
        return sorted(faded, key=lambda hit: -hit.score)

    def used(self, entry_ids: Iterable[str], *, restated: bool = False) -> Plan[None]:
        """Count a use of these entries now (returned to an agent; ``restated``: a write
        restated it and was merged into it): kept in this process and stored in batches by the
        memory that runs the plan (:mod:`memvault.store.use_log`)."""
        ids = tuple(entry_ids)
        if ids:
            yield Invoke(
                functools.partial(self.uses.add, restated=restated), (self.tenant, ids, self.now())
            )

    def reinforce(self, entry_ids: Sequence[str]) -> Plan[int]:
        """Count a use of each of these entries now, as ``recall`` does of what it returns:
        a search with ``decay=True`` then ranks them as fresh. Ids that are not live entries
        of the tenant are skipped; how many were reinforced."""
        ids = check.entry_ids("entry_ids", entry_ids)
        found = yield from run(GetManyOp(self.tenant, tuple(dict.fromkeys(ids))))
        now = self.now()
        live = [e.id for e in found if not e.is_expired(now)]
        yield from self.used(live)
        return len(live)

    def store_uses(self) -> Plan[int]:
        """Store the uses this process saw (every tenant's), one transaction per tenant; how
        many entries' uses were stored."""
        taken = yield from call(self.uses.take)
        for tenant, uses in sorted(taken.items()):
            yield from run(RecordUsesOp(tenant, uses))
        return sum(len(uses) for uses in taken.values())

    def _search_op(self, query: str, vector: np.ndarray, where: Filter, spec: RankSpec) -> SearchOp:
        """The store's search for ``query`` (its embedding ``vector``) under ``spec``."""
        depth = min(self.settings.ann_candidates, max(spec.limit * 10, 100))
        return SearchOp(
            where,
            terms=tuple(text.query_terms(query)),
            vector=vector,
            with_vectors=spec.diversity is not None,
            depth=depth,
            around=2 * len(spec.neighbours),
            recent=depth if spec.recency_weight > 0 else 0,
            windows=spec.windows if spec.time_weight > 0 else (),
            entities=tuple(query_entity_keys(query)) if spec.model else (),
            links=relevance.LINKS if spec.model else 0,
            episode_gap_us=int(spec.episode_gap_s * 1e6) if spec.model else 0,
        )

    def _reranked(
        self, query: str, hits: builtins.list[SearchHit], model: str | None
    ) -> Plan[builtins.list[SearchHit]]:
        """``hits`` reordered by SPLADE's relevance: with ``model``, by that model's sparse
        variant (a hit's score its probability); else by a blend with their scores."""
        texts = [hit.entry.content for hit in hits]
        sparse = yield from call(splade.relevance, query, texts, blocking=True)
        if model is None:
            scores = blended(np.array([hit.score for hit in hits]), sparse)
        else:
            features = {
                name: np.array([hit.components.get(name, 0.0) for hit in hits])
                for name in hits[0].components
            }
            scores = relevance.models()[f"{model}+sparse"].probability(
                features | {"sparse": relevance.share(sparse)}
            )
        return [
            SearchHit(
                hits[i].entry, float(scores[i]), {**hits[i].components, "sparse": float(sparse[i])}
            )
            for i in np.argsort(-scores, kind="stable")
        ]

    def reembed(
        self, batch_size: int = 256, progress: Callable[[int], None] | None = None
    ) -> Plan[int]:
        """Re-embed every chunk of the store (all tenants) with this Memory's embedder.

        Each batch is its own transaction; an interrupted run can simply be started again.
        ``progress`` is called with the number of chunks done so far. Returns that number.
        """
        check.limit(batch_size, self.settings)
        done, after = 0, 0
        while True:
            page = yield from run(ChunkPageOp(after, batch_size))
            if not page:
                break
            vectors = yield from self._embed([c.text for c in page])
            yield from run(SetVectorsOp(tuple(c.key for c in page), vectors))
            done, after = done + len(page), page[-1].key
            if progress is not None:
                progress(done)
        yield from run(EmbeddingInfoOp(self.embedder.name, self.embedder.dimension, replace=True))
        return done

    def list(
        self,
        scope: Scope | str | None = None,
        *,
        tags: Iterable[str] | None = None,
        since: datetime | None = None,
        order: Order = "newest",
        limit: int = 100,
        cursor: str | None = None,
        include_expired: bool = False,
        include_superseded: bool = False,
    ) -> Plan[Page]:
        """One page of entries (of ``scope``, or of every scope); follow ``next_cursor``.
        Expired and superseded entries are left out unless asked for."""
        order = check.order(order)
        scopes = None if scope is None else (Scope.coerce(scope),)
        now = None if include_expired else self.now()
        op = ListOp(
            self.where(scopes, tags, since, now, include_superseded=include_superseded),
            check.limit(limit, self.settings) + 1,
            order=order,
            after=None if cursor is None else decode_cursor(cursor, order),
        )
        rows = yield from run(op)
        entries = tuple(rows[: op.limit - 1])
        more = len(rows) >= op.limit
        return Page(entries, encode_cursor(entries[-1], order) if more else None)


def _with_relevance(query: str, hits: list[SearchHit], kind: str) -> list[SearchHit]:
    """``hits`` (best first) with their relevance to ``query`` (a search of ``kind``)."""
    found = relevance.relevances(
        query,
        [hit.entry.content for hit in hits],
        [hit.components for hit in hits],
        np.array([hit.score for hit in hits]),
        kind,
    )
    return [replace(hit, relevance=float(r)) for hit, r in zip(hits, found, strict=True)]
