"""A scope's search index: its chunks' vectors and postings, with the per-entry columns that
visibility needs, in (created_at, id, seq) order (pure).

A search scores every chunk it may see by BM25 (:class:`~memvault.retrieval.lexical.LexicalIndex`)
and by cosine (one matrix product, or a coarse pass rescored exactly for large tables, see
:mod:`memvault.store.coarse`), then keeps as candidates only the entries that can rank: the best
``depth`` by either signal, the newest when recency counts, and the entries around each of them.
So ranking costs the same in a scope of a thousand entries or of a million.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from ..retrieval.candidates import Candidates
from ..retrieval.lexical import Postings
from ..retrieval.scoring import episodes, scale_to_max
from .coarse import COARSE_MIN_CHUNKS, Coarse
from .ops import Filter, SearchOp, Superseded
from .spare import CHUNK_COLUMNS, COLUMNS, ENTRY_COLUMNS, Spare
from .timeconv import to_micros

NO_EXPIRY = np.iinfo(np.int64).max
GONE = np.iinfo(np.int64).min
"""The expiry of an entry deleted since its table was built: never visible (see
:mod:`memvault.store.catch_up`)."""
ALL_CANDIDATES = 2048
"""Up to this many entries searched, every one is a candidate (ranking is exhaustive), unless
the search has nothing but a vector: then its nearest are."""
LEXICAL_DEPTH = 4
"""BM25 nominates this many times ``depth`` entries: its scores are flat (many entries share a
term), and a run of moderate matches next to each other can outrank a single strong one."""
Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
Mask = npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True, eq=False)
class ChunkTable:
    """Chunks of a set of entries, in (created_at, id, seq) order, with per-entry columns."""

    chunk_keys: Ints
    chunk_entry: Ints
    matrix: npt.NDArray[np.float32]
    has_vector: Mask
    entry_ids: npt.NDArray[np.str_]
    created_us: Ints
    expires_us: Ints
    valid_from_us: Ints
    valid_to_us: Ints
    entry_start: Ints
    """Chunks of entry ``i`` are ``entry_start[i]:entry_start[i + 1]``."""
    lexical: Postings | None
    """None when the engine scores text itself (the table was built without texts)."""
    coarse: Coarse | None = None
    """The coarse pass over the vectors of a large table (None: exact search only)."""
    spare: Spare | None = None
    """The buffers its columns are views of, with room to append (None: not grown yet)."""

    @classmethod
    def from_rows(cls, rows: Iterable[Sequence[Any]], dimension: int) -> ChunkTable:
        """Rows of (chunk key, entry id, created µs, expires µs | None, valid_from µs,
        valid_to µs | None, vector bytes | None, searchable text | None), in table order."""
        keys, owners, vectors, present, texts = [], [], [], [], []
        ids: list[str] = []
        created: list[int] = []
        expires: list[int] = []
        valid_from: list[int] = []
        valid_to: list[int] = []
        zero = np.zeros(dimension, np.float32)
        for key, entry_id, created_us, expires_us, from_us, to_us, blob, text in rows:
            if not ids or ids[-1] != entry_id:
                ids.append(entry_id)
                created.append(created_us)
                expires.append(NO_EXPIRY if expires_us is None else expires_us)
                valid_from.append(from_us)
                valid_to.append(NO_EXPIRY if to_us is None else to_us)
            keys.append(key)
            owners.append(len(ids) - 1)
            vector = zero if blob is None else np.frombuffer(blob, np.float32)
            present.append(blob is not None and len(vector) == dimension)
            vectors.append(vector if present[-1] else zero)
            texts.append(text)
        chunk_entry = np.array(owners, np.int64)
        matrix = np.vstack(vectors) if vectors else np.zeros((0, dimension), np.float32)
        has_vector = np.array(present, bool)
        return cls(
            chunk_keys=np.array(keys, np.int64),
            chunk_entry=chunk_entry,
            matrix=matrix,
            has_vector=has_vector,
            entry_ids=np.array(ids, dtype=str),
            created_us=np.array(created, np.int64),
            expires_us=np.array(expires, np.int64),
            valid_from_us=np.array(valid_from, np.int64),
            valid_to_us=np.array(valid_to, np.int64),
            entry_start=np.searchsorted(chunk_entry, np.arange(len(ids) + 1)).astype(np.int64),
            lexical=None if None in texts else Postings(texts),
        )

    @classmethod
    def of(
        cls,
        columns: Mapping[str, npt.NDArray[Any]],
        lexical: Postings | None,
        coarse: Coarse | None = None,
        spare: Spare | None = None,
    ) -> ChunkTable:
        """A table of these :data:`~memvault.store.spare.COLUMNS`."""
        c = columns
        return cls(
            chunk_keys=c["chunk_keys"],
            chunk_entry=c["chunk_entry"],
            matrix=c["matrix"],
            has_vector=c["has_vector"],
            entry_ids=c["entry_ids"],
            created_us=c["created_us"],
            expires_us=c["expires_us"],
            valid_from_us=c["valid_from_us"],
            valid_to_us=c["valid_to_us"],
            entry_start=c["entry_start"],
            lexical=lexical,
            coarse=coarse,
            spare=spare,
        )

    def __len__(self) -> int:
        """Its chunks (what it weighs in memory, but for spare room: :meth:`weight`)."""
        return len(self.chunk_keys)

    def weight(self) -> int:
        """The chunks it holds memory for: its own, and the spare rows behind them."""
        return len(self.chunk_keys) if self.spare is None else self.spare.capacity

    def appended(self, later: ChunkTable, *, in_place: bool = True) -> ChunkTable | None:
        """This table followed by ``later``'s entries, or None unless every one of them sorts
        after this table's last (the common case: new entries; anything else is rebuilt).
        ``in_place``: into this table's spare room when it is the newest there (else copied,
        as for a table that may not outlive its transaction)."""
        if not len(later.entry_ids):
            return self
        if len(self.entry_ids):
            last = (int(self.created_us[-1]), str(self.entry_ids[-1]))
            if (int(later.created_us[0]), str(later.entry_ids[0])) <= last:
                return None
        if self.lexical is None or later.lexical is None:
            return None
        chunks, entries = len(self.chunk_keys), len(self.entry_ids)
        rows = {name: getattr(later, name) for name in COLUMNS} | {
            "chunk_entry": later.chunk_entry + entries,
            "entry_start": later.entry_start[1:] + chunks,
        }
        mine = {name: getattr(self, name) for name in COLUMNS}
        spare = self.spare if in_place else None
        columns = None if spare is None else spare.extended(mine, rows)
        if spare is None or columns is None:
            spare = Spare.around(mine, rows)
            columns = spare.views()
        coarse = None if self.coarse is None else self.coarse.appended(later.matrix)
        return ChunkTable.of(columns, self.lexical.then(later.lexical), coarse, spare)

    def positions(self, ids: Sequence[str]) -> Ints:
        """The positions of those of the entries ``ids`` that the table holds."""
        if not ids or not len(self.entry_ids):
            return np.zeros(0, np.int64)
        result: Ints = np.flatnonzero(np.isin(self.entry_ids, np.asarray(ids, dtype=str)))
        return result

    def patched(self, entries: Ints, values: Mapping[str, Ints], *, in_place: bool) -> ChunkTable:
        """This table with the per-entry ``values`` (of ``expires_us``, ``valid_from_us``,
        ``valid_to_us``) at the positions ``entries``; its buffers' spare room passes to the
        result when ``in_place`` (the columns it changes are copied either way)."""
        mine = {name: getattr(self, name) for name in COLUMNS}
        handed = (
            None
            if self.spare is None or not in_place
            else self.spare.patched(mine, entries, values)
        )
        if handed is None:
            columns = dict(mine)
            for name, value in values.items():
                columns[name] = mine[name].copy()
                columns[name][entries] = value
            return ChunkTable.of(columns, self.lexical, self.coarse)
        spare, columns = handed
        return ChunkTable.of(columns, self.lexical, self.coarse, spare)

    @property
    def gone(self) -> int:
        """Entries deleted since the table was built (kept, hidden, until :meth:`compacted`)."""
        return int(np.count_nonzero(self.expires_us == GONE))

    def compacted(self) -> ChunkTable:
        """This table without its deleted entries (new arrays)."""
        keep = self.expires_us != GONE
        if bool(keep.all()):
            return self
        chunk_keep = keep[self.chunk_entry]
        renumbered = np.cumsum(keep) - 1
        chunk_entry = renumbered[self.chunk_entry[chunk_keep]]
        entries = int(keep.sum())
        columns = {name: getattr(self, name)[chunk_keep] for name in CHUNK_COLUMNS} | {
            name: getattr(self, name)[keep] for name in ENTRY_COLUMNS
        }
        columns |= {
            "chunk_entry": chunk_entry,
            "entry_start": np.searchsorted(chunk_entry, np.arange(entries + 1)).astype(np.int64),
        }
        lexical = None if self.lexical is None else self.lexical.without(chunk_keep)
        coarse = None if self.coarse is None else self.coarse.without(chunk_keep)
        return ChunkTable.of(columns, lexical, coarse)

    def with_coarse_pass(self, least: int = COARSE_MIN_CHUNKS) -> ChunkTable:
        """This table, with a coarse pass over its vectors if it has at least ``least`` chunks
        (0: never) and none yet; worth building for a table that many searches will use."""
        if not least or self.coarse is not None or len(self) < least:
            return self
        return replace(self, coarse=Coarse.build(self.matrix, self.has_vector, least))

    def per_entry_max(self, values: Floats) -> Floats:
        """The largest chunk value of each entry, NaN ignored (an entry's chunks are contiguous)."""
        if len(values) == len(self.entry_ids):
            return values
        if not len(values):
            return np.zeros(0)
        result: Floats = np.fmax.reduceat(values, self.entry_start[:-1])
        return result

    def chunks_of(self, entries: Ints) -> Ints:
        """The chunk positions of the given entries."""
        starts, stops = self.entry_start[entries], self.entry_start[entries + 1]
        counts = stops - starts
        offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
        result: Ints = np.repeat(starts, counts) + offsets
        return result


@dataclass(frozen=True, slots=True)
class Visibility:
    """The conditions of a filter that a chunk table applies while scoring: expiry,
    supersession and validity (a cached table holds every version of its scope)."""

    live_at_us: int | None = None
    superseded: Superseded = "show"
    valid_at_us: int | None = None

    @classmethod
    def of(cls, where: Filter) -> Visibility:
        return cls(
            None if where.live_at is None else to_micros(where.live_at),
            where.superseded,
            None if where.valid_at is None else to_micros(where.valid_at),
        )

    def mask(self, table: ChunkTable) -> Mask:
        """Which entries of ``table`` are visible."""
        shown: Mask = table.expires_us != GONE
        if self.live_at_us is not None:
            shown &= table.expires_us > self.live_at_us
        if self.superseded != "show":
            current = table.valid_to_us == NO_EXPIRY
            shown &= current if self.superseded == "hide" else ~current
        if self.valid_at_us is not None:
            at = self.valid_at_us
            shown &= (table.valid_from_us <= at) & (table.valid_to_us > at)
        return shown


def _best(values: Floats, count: int) -> Ints:
    """Positions of the ``count`` largest positive values."""
    keep = np.flatnonzero(values > 0) if count else np.zeros(0, np.int64)
    if len(keep) > count:
        keep = keep[np.argpartition(-values[keep], count - 1)[:count]]
    return keep


def _around(core: Ints, size: int, reach: int) -> Ints:
    """``core`` places and the places up to ``reach`` away from them, within ``size``."""
    steps = np.arange(-reach, reach + 1)
    near = (core[:, None] + steps[None, :]).ravel()
    return np.unique(near[(near >= 0) & (near < size)])


Cosines = Callable[[Ints], Floats]
"""Chunk positions → their cosine to the query (NaN where a chunk has no vector)."""


@dataclass(frozen=True, slots=True)
class Dense:
    """The dense side of a search: the entries nearest the query, and chunks' cosines."""

    nearest: Ints
    cosine: Cosines


def search(table: ChunkTable, op: SearchOp, allowed: Mask | None = None) -> Candidates:
    """The candidates of ``table`` for ``op``: entries the op's visibility (and ``allowed``,
    when given) lets it see, scored; only those that can rank once there are many."""
    shown = Visibility.of(op.filter).mask(table)
    if allowed is not None:
        shown &= allowed
    chunk_shown = shown[table.chunk_entry]
    mask = None if bool(chunk_shown.all()) else chunk_shown
    lexical = np.zeros(len(table.chunk_keys))
    signals = None
    if table.lexical is not None and op.terms:
        lexical = table.lexical.scores(op.terms, mask)
    if table.lexical is not None and (op.entities or op.links or op.episode_gap_us):
        signals = ConversationSignals.of(table, op, shown, mask)
    if op.vector is None:
        return select(table, op, shown, lexical, None, signals=signals)
    vector = op.vector

    def cosine(chunks: Ints) -> Floats:
        exact = (table.matrix[chunks] @ vector).astype(np.float64)
        result: Floats = np.where(table.has_vector[chunks], exact, np.nan)
        return result

    nearest = _nearest(table, op, chunk_shown & table.has_vector, cosine)
    return select(table, op, shown, lexical, Dense(nearest, cosine), signals=signals)


def _episode_lexical(table: ChunkTable, op: SearchOp, shown: Mask) -> Floats:
    """Per entry: the BM25 of its episode's text (0 unless ``op.episode_gap_us``)."""
    if not op.episode_gap_us or not op.terms or table.lexical is None:
        return np.zeros(len(table.entry_ids))
    order = np.flatnonzero(shown)
    episode = np.full(len(table.entry_ids), -1, np.int64)
    episode[order] = episodes(table.created_us[order], op.episode_gap_us)
    groups = int(episode.max()) + 1 if len(order) else 0
    scores = table.lexical.grouped_scores(op.terms, episode[table.chunk_entry], groups)
    return np.where(episode >= 0, scores[np.maximum(episode, 0)], 0.0) if groups else scores


LINK_RARITY = 3.0
"""An entity key lends a link only if its IDF is at least this (it names at most about one
entry in twenty of the scope)."""


@dataclass(frozen=True, slots=True)
class ConversationSignals:
    """What a conversational search reads of each entry beyond its words and vector:
    speaking as the query's names, naming its entities, its episode's BM25, and (once the
    best entries are known) sharing their entities."""

    speaker: Floats
    entity: Floats
    episode_lexical: Floats
    mask: Mask | None
    """The chunks shown (None: all)."""

    @classmethod
    def of(
        cls, table: ChunkTable, op: SearchOp, shown: Mask, mask: Mask | None
    ) -> ConversationSignals:
        assert table.lexical is not None
        said = [k for k in op.entities if k.startswith("s:")]
        other = [k for k in op.entities if not k.startswith("s:")]
        speaker = table.lexical.entity_scores(said, mask) if said else None
        entity = table.lexical.entity_scores(other, mask) if other else None
        zeros = np.zeros(len(table.entry_ids))
        return cls(
            zeros if speaker is None else table.per_entry_max(speaker),
            zeros if entity is None else table.per_entry_max(entity),
            _episode_lexical(table, op, shown),
            mask,
        )

    def linked(self, table: ChunkTable, op: SearchOp, sources: Ints) -> Floats:
        """Per entry: how much it shares the rarer entity keys of the entries ``sources``
        (theirs not counted)."""
        assert table.lexical is not None
        chunks = table.lexical.linked_scores(
            table.chunks_of(sources), op.entities, self.mask, least_idf=LINK_RARITY
        )
        result = table.per_entry_max(chunks)
        result[sources] = 0.0
        return result


def _nearest(table: ChunkTable, op: SearchOp, usable: Mask, cosine: Cosines) -> Ints:
    """The entries of the ``depth`` nearest ``usable`` chunks (the coarse pass nominates
    chunks for a large table; their exact cosines decide)."""
    assert op.vector is not None
    if table.coarse is None:  # one product over the whole matrix: no copy of its rows
        closeness = np.where(usable, table.matrix @ op.vector + 1.0, 0.0)
        chunks = _best(closeness, op.depth * 4)
    else:
        chunks = table.coarse.nearest(op.vector, usable, op.depth)
        chunks = chunks[_best(cosine(chunks) + 1.0, op.depth * 4)] if len(chunks) else chunks
    return np.unique(table.chunk_entry[chunks])


def select(
    table: ChunkTable,
    op: SearchOp,
    shown: Mask,
    lexical: Floats,
    dense: Dense | None,
    *,
    signals: ConversationSignals | None = None,
) -> Candidates:
    """The candidates among the ``shown`` entries, given each chunk's BM25 score, the dense
    side (None: the query has no vector) and the entity side (None: not asked)."""
    lexical_e = table.per_entry_max(lexical)
    order = np.flatnonzero(shown)
    nearest_only = dense is not None and not (op.terms or op.recent or op.windows or signals)
    exhaustive = len(order) <= ALL_CANDIDATES and not nearest_only
    if exhaustive:
        places = np.arange(len(order))
    else:
        recent = order[len(order) - op.recent :][: op.recent]
        core = [_best(np.where(shown, lexical_e, 0.0), op.depth * LEXICAL_DEPTH), recent]
        if dense is not None:
            core.append(dense.nearest[shown[dense.nearest]])
        if signals is not None:
            core.append(_best(np.where(shown, signals.entity, 0.0), op.depth))
        timeline = table.created_us[order]
        for start, end in op.windows:
            inside = order[np.searchsorted(timeline, start) : np.searchsorted(timeline, end)]
            core.append(inside[_best(lexical_e[inside], op.depth)])
        places = np.unique(np.searchsorted(order, np.concatenate(core)))
    cosine = None if dense is None else dense.cosine
    linked = None
    if signals is not None and op.links:
        sources = _link_sources(table, order[places], lexical_e, cosine, op.links)
        linked = np.where(shown, signals.linked(table, op, sources), 0.0)
        if not exhaustive:
            places = np.union1d(places, np.searchsorted(order, _best(linked, op.depth)))
    if not exhaustive:
        places = _around(places, len(order), op.around)
    found = _candidates(table, order[places], places, order, lexical_e, cosine=cosine, op=op)
    if signals is None:
        return found
    picked = order[places]
    assert table.lexical is not None
    return replace(
        found,
        speaker=signals.speaker[picked],
        entity=signals.entity[picked],
        linked=None if linked is None else linked[picked],
        episode_lexical=signals.episode_lexical[picked],
        traits=table.lexical.traits()[table.entry_start[picked]].astype(np.float64),
    )


def _link_sources(
    table: ChunkTable, picked: Ints, lexical_e: Floats, cosine: Cosines | None, count: int
) -> Ints:
    """The ``count`` best of the entries ``picked`` by BM25 (scaled to the best) + cosine."""
    score = scale_to_max(lexical_e[picked])
    if cosine is not None:
        best = _per_entry(table, picked, cosine(table.chunks_of(picked)))
        score = score + np.maximum(np.nan_to_num(best, nan=0.0), 0.0)
    return picked[_best(score + 1e-9, count)]


def _candidates(
    table: ChunkTable,
    picked: Ints,
    places: Ints,
    order: Ints,
    lexical_e: Floats,
    *,
    cosine: Cosines | None,
    op: SearchOp,
) -> Candidates:
    chunks = table.chunks_of(picked)
    dense_c = np.full(len(chunks), np.nan) if cosine is None else cosine(chunks)
    dense_or_nan = _per_entry(table, picked, dense_c)
    has_vector = ~np.isnan(dense_or_nan)
    vectors = None
    if op.with_vectors:
        owner = np.repeat(np.arange(len(picked)), np.diff(table.entry_start)[picked])
        best = np.lexsort((-np.nan_to_num(dense_c, nan=-np.inf), owner))
        first = best[np.r_[True, np.diff(owner[best]) != 0]] if len(best) else best
        vectors = table.matrix[chunks[first]]
    return Candidates(
        entry_ids=table.entry_ids[picked],
        created_us=table.created_us[picked],
        lexical=lexical_e[picked],
        dense=np.where(has_vector, dense_or_nan, -1.0),
        has_vector=has_vector,
        vectors=vectors,
        position=places,
        timeline_us=table.created_us[order],
    )


def _per_entry(table: ChunkTable, entries: Ints, values: Floats) -> Floats:
    """The largest value (NaN ignored) of each entry's chunks, given values for the chunks of
    ``entries`` in :meth:`ChunkTable.chunks_of` order."""
    counts = np.diff(table.entry_start)[entries]
    if not len(values) or bool((counts == 1).all()):
        return values
    starts = np.cumsum(counts) - counts
    result: Floats = np.fmax.reduceat(values, starts)
    return result
