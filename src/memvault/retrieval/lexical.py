"""Okapi BM25 (pure): a plain scorer over tokenised documents, and an inverted index whose
statistics are those of the documents a search is allowed to see."""

from __future__ import annotations

import hashlib
import math
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from .entities import entity_keys
from .text import stems, tokens
from .traits import TRAITS, own_text, traits

K1 = 1.2
B = 0.75
MOST_SEGMENTS = 8
Floats = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]
Ints = npt.NDArray[np.int64]


def bm25(
    documents: Sequence[Sequence[str]], terms: Sequence[str], k1: float = K1, b: float = B
) -> Floats:
    """BM25 score of each tokenised document for the query terms (0 where none occurs)."""
    scores = np.zeros(len(documents))
    if not documents or not terms:
        return scores
    lengths = np.array([len(doc) for doc in documents], dtype=np.float64)
    average = max(lengths.mean(), 1e-9)
    counts = [Counter(doc) for doc in documents]
    n = len(documents)
    for term in dict.fromkeys(terms):
        frequency = np.array([c.get(term, 0) for c in counts], dtype=np.float64)
        containing = int((frequency > 0).sum())
        if not containing:
            continue
        idf = math.log(1 + (n - containing + 0.5) / (containing + 0.5))
        scores += idf * frequency * (k1 + 1) / (frequency + k1 * (1 - b + b * lengths / average))
    return scores


def term_key(term: str) -> int:
    """A stable 64-bit key of a term: the index keeps keys, never words."""
    digest = hashlib.blake2b(term.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def term_keys(terms: Sequence[str]) -> npt.NDArray[np.uint64]:
    return np.array([term_key(t) for t in terms], dtype=np.uint64)


@dataclass(frozen=True, slots=True, eq=False)
class LexicalIndex:
    """Postings of a sequence of documents, grouped by term (terms sorted by key)."""

    keys: npt.NDArray[np.uint64]
    """Sorted term keys (:func:`term_key`)."""
    starts: npt.NDArray[np.int64]
    """Postings of term ``i`` are ``starts[i]:starts[i + 1]``."""
    docs: npt.NDArray[np.int32]
    freqs: npt.NDArray[np.float32]
    lengths: npt.NDArray[np.float32]
    """Terms per document."""

    @classmethod
    def build(cls, documents: Sequence[str]) -> LexicalIndex:
        """Analyse (:mod:`memvault.retrieval.text`) and index the documents."""
        vocabulary: dict[str, int] = {}
        owners: list[int] = []
        folded: list[int] = []
        for position, document in enumerate(documents):
            found = [vocabulary.setdefault(t, len(vocabulary)) for t in tokens(document)]
            folded += found
            owners += [position] * len(found)
        return cls._indexed(stems(vocabulary), folded, owners, len(documents))

    @classmethod
    def of_keys(cls, documents: Sequence[Sequence[str]]) -> LexicalIndex:
        """Index documents given as their terms, already analysed (entity keys)."""
        vocabulary: dict[str, int] = {}
        owners: list[int] = []
        found: list[int] = []
        for position, keys in enumerate(documents):
            found += [vocabulary.setdefault(k, len(vocabulary)) for k in keys]
            owners += [position] * len(keys)
        return cls._indexed(list(vocabulary), found, owners, len(documents))

    @classmethod
    def _indexed(
        cls, terms: Sequence[str], found: Sequence[int], owners: Sequence[int], count: int
    ) -> LexicalIndex:
        """The index of ``count`` documents whose term occurrences are ``terms[found[i]]`` in
        document ``owners[i]`` (several of ``terms`` may be one term)."""
        unique = sorted(set(terms), key=term_key)
        rank = {term: i for i, term in enumerate(unique)}
        term_of_found = np.array([rank[t] for t in terms], np.int64)
        size = max(count, 1)
        pairs = term_of_found[np.array(found, np.int64)] * size + np.array(owners, np.int64)
        pairs, counts = np.unique(pairs, return_counts=True)
        term_of = pairs // size
        return cls(
            keys=term_keys(unique),
            starts=np.searchsorted(term_of, np.arange(len(unique) + 1)).astype(np.int64),
            docs=(pairs % size).astype(np.int32),
            freqs=counts.astype(np.float32),
            lengths=np.bincount(np.array(owners, np.int64), minlength=count).astype(np.float32),
        )

    def __len__(self) -> int:
        return len(self.lengths)

    @classmethod
    def merged(cls, segments: Sequence[LexicalIndex]) -> LexicalIndex:
        """One index of consecutive segments' documents (as :func:`segmented_scores` sees them)."""
        if len(segments) == 1:
            return segments[0]
        offsets = np.cumsum([0] + [len(s) for s in segments])
        keys = np.concatenate([np.repeat(s.keys, np.diff(s.starts)) for s in segments])
        docs = np.concatenate(
            [s.docs.astype(np.int64) + o for s, o in zip(segments, offsets, strict=False)]
        )
        freqs = np.concatenate([s.freqs for s in segments])
        order = np.lexsort((docs, keys))
        keys, docs, freqs = keys[order], docs[order], freqs[order]
        unique = np.unique(keys)
        return cls(
            keys=unique,
            starts=np.append(np.searchsorted(keys, unique), len(keys)).astype(np.int64),
            docs=docs.astype(np.int32),
            freqs=freqs,
            lengths=np.concatenate([s.lengths for s in segments]),
        )

    def without(self, keep: Mask) -> LexicalIndex:
        """The index of the documents ``keep`` marks, numbered anew in the same order."""
        if bool(keep.all()):
            return self
        kept = keep[self.docs]
        term_of = np.repeat(np.arange(len(self.keys)), np.diff(self.starts))[kept]
        counts = np.bincount(term_of, minlength=len(self.keys))
        renumbered = np.cumsum(keep) - 1
        return LexicalIndex(
            keys=self.keys[counts > 0],
            starts=np.concatenate([[0], np.cumsum(counts[counts > 0])]).astype(np.int64),
            docs=renumbered[self.docs[kept]].astype(np.int32),
            freqs=self.freqs[kept],
            lengths=self.lengths[keep],
        )

    def postings(self, key: int) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float32]]:
        """The documents holding the term with this key, and how often."""
        at = int(np.searchsorted(self.keys, np.uint64(key)))
        if at >= len(self.keys) or self.keys[at] != key:
            return np.zeros(0, np.int32), np.zeros(0, np.float32)
        span = slice(self.starts[at], self.starts[at + 1])
        return self.docs[span], self.freqs[span]

    def scores(self, terms: Sequence[str], shown: Mask | None = None) -> Floats:
        """BM25 of every document for the query terms, with the collection statistics (count,
        mean length, document frequency) of the documents ``shown`` (all when None); 0 for the
        others and where no term occurs."""
        return segmented_scores([self], terms, shown)


def segmented_scores(
    segments: Sequence[LexicalIndex], terms: Sequence[str], shown: Mask | None = None
) -> Floats:
    """BM25 over documents indexed in consecutive segments (a segment's document ``i`` is
    document ``i`` + the sizes of the segments before it), statistics over all of them."""
    return keyed_scores(segments, term_keys(list(dict.fromkeys(terms))), shown)


def postings_of(segments: Sequence[LexicalIndex], key: int) -> tuple[Ints, Floats]:
    """The documents of consecutive segments (numbered across them) holding the term
    ``key``, and how often."""
    offsets = np.cumsum([0] + [len(s) for s in segments])
    found = [segment.postings(key) for segment in segments]
    docs = np.concatenate(
        [d.astype(np.int64) + o for (d, _), o in zip(found, offsets, strict=False)]
    )
    freqs = np.concatenate([f for _, f in found]).astype(np.float64)
    return docs, freqs


def keyed_scores(
    segments: Sequence[LexicalIndex],
    keys: npt.NDArray[np.uint64],
    shown: Mask | None = None,
    *,
    b: float = B,
    least_idf: float = 0.0,
) -> Floats:
    """:func:`segmented_scores` of the (distinct) term ``keys``; ``b`` 0 ignores documents'
    lengths; terms whose IDF is below ``least_idf`` (common in the documents shown) count
    for nothing."""
    lengths = np.concatenate([s.lengths for s in segments]) if segments else np.zeros(0)
    result = np.zeros(len(lengths))
    seen = lengths if shown is None else lengths[shown]
    if not len(keys) or not len(seen):
        return result
    norm = K1 * (1 - b + b * lengths / max(float(seen.mean()), 1e-9))
    for key in keys:
        docs, freqs = postings_of(segments, int(key))
        if shown is not None:
            keep = shown[docs]
            docs, freqs = docs[keep], freqs[keep]
        if not len(docs):
            continue
        idf = math.log(1 + (len(seen) - len(docs) + 0.5) / (len(docs) + 0.5))
        if idf >= least_idf:
            result[docs] += idf * freqs * (K1 + 1) / (freqs + norm[docs])
    return result


@dataclass(frozen=True, slots=True, eq=False)
class TextIndex:
    """The postings of a segment of documents (:func:`memvault.retrieval.traits.searchable`):
    of their words (BM25, the context's too), of the entity keys of their own text
    (:mod:`memvault.retrieval.entities`), and its :data:`~memvault.retrieval.traits.TRAITS`."""

    words: LexicalIndex
    entities: LexicalIndex
    traits: npt.NDArray[np.float32]
    """One row of traits per document."""
    _forward: list[tuple[Ints, Ints]] = field(default_factory=list, repr=False)
    """Built on first use: the entity postings in document order, and where each document's
    begin (for :meth:`keys_of`)."""

    @classmethod
    def build(cls, documents: Sequence[str]) -> TextIndex:
        own = [own_text(d) for d in documents]
        return cls(
            LexicalIndex.build(documents),
            LexicalIndex.of_keys([entity_keys(t) for t in own]),
            np.array([traits(t) for t in own], np.float32).reshape(len(own), len(TRAITS)),
        )

    def __len__(self) -> int:
        return len(self.words)

    @classmethod
    def merged(cls, segments: Sequence[TextIndex]) -> TextIndex:
        if len(segments) == 1:
            return segments[0]
        return cls(
            LexicalIndex.merged([s.words for s in segments]),
            LexicalIndex.merged([s.entities for s in segments]),
            np.concatenate([s.traits for s in segments]),
        )

    def without(self, keep: Mask) -> TextIndex:
        if bool(keep.all()):
            return self
        return TextIndex(self.words.without(keep), self.entities.without(keep), self.traits[keep])

    def keys_of(self, docs: Ints) -> npt.NDArray[np.uint64]:
        """The entity keys of the documents ``docs`` (with repeats)."""
        if not self._forward:
            index = self.entities
            order = np.argsort(index.docs, kind="stable").astype(np.int64)
            begins = np.searchsorted(index.docs[order], np.arange(len(index) + 1))
            self._forward.append((order, begins.astype(np.int64)))
        order, begins = self._forward[0]
        if not len(docs):
            return np.zeros(0, np.uint64)
        spans = [order[begins[d] : begins[d + 1]] for d in docs]
        postings = np.concatenate(spans)
        owner = np.searchsorted(self.entities.starts, postings, side="right") - 1
        result: npt.NDArray[np.uint64] = self.entities.keys[owner]
        return result


def tiered(segments: Sequence[TextIndex]) -> list[TextIndex]:
    """The segments with the newest merged into one: at least two, and as many more as it
    takes for the merged one to outweigh the segment before it. Sizes stay roughly geometric,
    so a document is merged a logarithmic number of times and a large old segment is left
    alone (merging everything each time cost a write to a 100k scope 100+ ms)."""
    start, total = len(segments) - 1, len(segments[-1])
    while start > 0 and (len(segments) - start < 2 or len(segments[start - 1]) <= total):
        start -= 1
        total += len(segments[start])
    return [*segments[:start], TextIndex.merged(segments[start:])]


class Postings:
    """The postings of a table's documents, in segments built the first time a query needs
    them (a search with no terms, such as a write's near-duplicate probe, never pays for
    them); documents appended later become a segment of their own."""

    __slots__ = ("_lock", "_segments")

    def __init__(
        self, documents: Sequence[str] | None = None, index: TextIndex | None = None
    ) -> None:
        self._segments: list[TextIndex | Sequence[str]] = [
            index if index is not None else (documents or ())
        ]
        self._lock = threading.Lock()

    def then(self, later: Postings) -> Postings:
        """These postings and ``later``'s after them (both unchanged)."""
        with self._lock, later._lock:
            result = Postings()
            result._segments = [*self._segments, *later._segments]
        return result

    def _built(self) -> list[TextIndex]:
        """The segments, built; the newest merged (:func:`tiered`) when there are more than
        ``MOST_SEGMENTS`` (each query reads every segment's postings of its terms)."""
        with self._lock:
            built = [s if isinstance(s, TextIndex) else TextIndex.build(s) for s in self._segments]
            if len(built) > MOST_SEGMENTS:
                built = tiered(built)
            self._segments = list(built)
            return built

    def without(self, keep: Mask) -> Postings:
        """The postings of the documents ``keep`` marks (each segment's share of them)."""
        segments = self._built()
        offsets = np.cumsum([0] + [len(s) for s in segments])
        return Postings.of(
            [s.without(keep[a:b]) for s, a, b in zip(segments, offsets, offsets[1:], strict=False)]
        )

    @classmethod
    def of(cls, segments: Sequence[TextIndex]) -> Postings:
        result = cls()
        result._segments = list(segments)
        return result

    @property
    def indexes(self) -> list[TextIndex]:
        """The segments, each built."""
        return self._built()

    def traits(self) -> npt.NDArray[np.float32]:
        """The traits of every document (one row each), and how many entity keys it has."""
        built = self._built()
        if not built:
            return np.zeros((0, len(TRAITS) + 1), np.float32)
        named = np.concatenate([s.entities.lengths for s in built])[:, None]
        return np.hstack([np.concatenate([s.traits for s in built]), named])

    def scores(self, terms: Sequence[str], shown: Mask | None = None) -> Floats:
        """BM25 of every document for the query's terms (:func:`segmented_scores`)."""
        return segmented_scores([s.words for s in self._built()], terms, shown)

    def grouped_scores(self, terms: Sequence[str], group: Ints, groups: int) -> Floats:
        """BM25 of groups of documents as documents of their own (``group[d]``: the group of
        document ``d``, -1 for one not shown): a session's text for the query's terms."""
        words = [s.words for s in self._built()]
        lengths = np.concatenate([w.lengths for w in words]) if words else np.zeros(0)
        result = np.zeros(groups)
        shown = group >= 0
        sizes = np.bincount(group[shown], weights=lengths[shown], minlength=groups)
        if not terms or not groups:
            return result
        norm = K1 * (1 - B + B * sizes / max(float(sizes.mean()), 1e-9))
        for key in term_keys(list(dict.fromkeys(terms))):
            docs, freqs = postings_of(words, int(key))
            keep = shown[docs]
            counts = np.bincount(group[docs[keep]], weights=freqs[keep], minlength=groups)
            having = int(np.count_nonzero(counts))
            if having:
                idf = math.log(1 + (groups - having + 0.5) / (having + 0.5))
                result += idf * counts * (K1 + 1) / (counts + norm)
        return result

    def entity_scores(
        self, keys: Sequence[str], shown: Mask | None = None, *, least_idf: float = 0.0
    ) -> Floats:
        """How much of the entity ``keys`` each document names, rarer keys weighing more (BM25
        without length normalisation: an entry that names many things is not penalised)."""
        segments = [s.entities for s in self._built()]
        hashed = term_keys(list(dict.fromkeys(keys)))
        return keyed_scores(segments, hashed, shown, b=0.0, least_idf=least_idf)

    def linked_scores(
        self, docs: Ints, skip: Sequence[str], shown: Mask | None = None, *, least_idf: float
    ) -> Floats:
        """:meth:`entity_scores` of the entity keys the documents ``docs`` name (bar those in
        ``skip``, and those commoner than ``least_idf``): the documents linked to them."""
        segments = self._built()
        offsets = np.cumsum([0] + [len(s) for s in segments])
        found = [
            s.keys_of(docs[(docs >= a) & (docs < b)] - a)
            for s, a, b in zip(segments, offsets, offsets[1:], strict=False)
        ]
        keys = np.setdiff1d(np.concatenate(found), term_keys(list(skip)))
        entity_segments = [s.entities for s in segments]
        return keyed_scores(entity_segments, keys, shown, b=0.0, least_idf=least_idf)
