"""Okapi BM25 in plain Python (pure): the lexical scorer of engines without a full-text index."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt


def bm25(
    documents: Sequence[Sequence[str]], terms: Sequence[str], k1: float = 1.2, b: float = 0.75
) -> npt.NDArray[np.float64]:
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
