"""Second-stage reranking: blending the first stage's scores with a reranker's (pure)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

RERANK_DEPTH = 50
"""How many of the first stage's best a reranker reorders."""
RERANK_WEIGHT = 0.5
"""The reranker's share of the blended score (measured on LoCoMo, docs/benchmarks.md)."""
Floats = npt.NDArray[np.float64]


def min_max(values: Floats) -> Floats:
    """Scaled to [0, 1]; all ones when the values do not differ (each is as good as the best:
    a single hit keeps a score of 1, not 0)."""
    if not len(values):
        return np.zeros(0)
    low, high = float(values.min()), float(values.max())
    if high <= low:
        return np.ones(len(values))
    result: Floats = (values - low) / (high - low)
    return result


def blended(first: Floats, second: Floats, weight: float = RERANK_WEIGHT) -> Floats:
    """``(1 - weight)`` times the first stage's min-max scaled scores + ``weight`` times the
    reranker's."""
    result: Floats = (1 - weight) * min_max(first) + weight * min_max(second)
    return result
