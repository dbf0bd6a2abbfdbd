"""Okapi BM25 (pure): a plain scorer over tokenised documents, and an inverted index whose
statistics are those of the documents a search is allowed to see."""

from __future__ import annotations

import hashlib
import math
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .text import stems, tokens

K1 = 1.2
B = 0.75
Floats = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]


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
        stemmed = stems(vocabulary)
        unique = sorted(set(stemmed), key=term_key)
        rank = {stem: i for i, stem in enumerate(unique)}
        stem_of = np.array([rank[s] for s in stemmed], np.int64)
        size = max(len(documents), 1)
        pairs = stem_of[np.array(folded, np.int64)] * size + np.array(owners, np.int64)
        pairs, counts = np.unique(pairs, return_counts=True)
        term_of = pairs // size
        return cls(
            keys=term_keys(unique),
            starts=np.searchsorted(term_of, np.arange(len(unique) + 1)).astype(np.int64),
            docs=(pairs % size).astype(np.int32),
            freqs=counts.astype(np.float32),
            lengths=np.bincount(np.array(owners, np.int64), minlength=len(documents)).astype(
                np.float32
            ),
        )

    def __len__(self) -> int:
        return len(self.lengths)

    def scores(self, terms: Sequence[str], shown: Mask | None = None) -> Floats:
        """BM25 of every document for the query terms, with the collection statistics (count,
        mean length, document frequency) of the documents ``shown`` (all when None); 0 for the
        others and where no term occurs."""
        result = np.zeros(len(self))
        if not terms or not len(self):
            return result
        lengths = self.lengths if shown is None else self.lengths[shown]
        count = len(lengths)
        if not count:
            return result
        norm = K1 * (1 - B + B * self.lengths / max(float(lengths.mean()), 1e-9))
        wanted = term_keys(list(dict.fromkeys(terms)))
        found = np.minimum(np.searchsorted(self.keys, wanted), len(self.keys) - 1)
        for term in found[self.keys[found] == wanted] if len(self.keys) else ():
            docs = self.docs[self.starts[term] : self.starts[term + 1]]
            freqs = self.freqs[self.starts[term] : self.starts[term + 1]]
            if shown is not None:
                keep = shown[docs]
                docs, freqs = docs[keep], freqs[keep]
            if not len(docs):
                continue
            idf = math.log(1 + (count - len(docs) + 0.5) / (len(docs) + 0.5))
            result[docs] += idf * freqs * (K1 + 1) / (freqs + norm[docs])
        return result


class Postings:
    """A :class:`LexicalIndex` built from its documents the first time a query needs it (a
    search with no terms, such as a write's near-duplicate probe, never pays for it)."""

    __slots__ = ("_documents", "_index", "_lock")

    def __init__(
        self, documents: Sequence[str] | None = None, index: LexicalIndex | None = None
    ) -> None:
        self._documents = documents
        self._index = index
        self._lock = threading.Lock()

    @property
    def index(self) -> LexicalIndex:
        with self._lock:
            if self._index is None:
                self._index = LexicalIndex.build(self._documents or ())
                self._documents = None
            return self._index
