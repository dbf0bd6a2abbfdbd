"""Scorers, fusion and diversity: pure functions over numpy arrays (one value per entry).

The ranker (:mod:`memvault.retrieval.ranker`) composes them; each is tested alone.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

Scores = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


def scale_to_max(scores: Scores, present: npt.NDArray[np.bool_] | None = None) -> Scores:
    """Divide by the largest present value (negatives and absent values become 0).

    Unlike min-max, proportions survive: in a scope of two entries a slightly weaker match
    keeps most of its score instead of dropping to 0.
    """
    present = np.ones(len(scores), bool) if present is None else present
    clipped = np.where(present, np.maximum(scores, 0.0), 0.0)
    top = clipped.max(initial=0.0)
    result: Scores = clipped / top if top > 0 else clipped
    return result


def weighted_sum(components: dict[str, Scores], weights: dict[str, float]) -> Scores:
    """Σ weight * component, over the components that have a weight."""
    total = np.zeros(len(next(iter(components.values()))))
    for name, values in components.items():
        total += weights.get(name, 0.0) * values
    return total


def reciprocal_rank_fusion(rankings: Sequence[Sequence[int]], size: int, k: float = 60) -> Scores:
    """RRF: Σ 1 / (k + rank) over the rankings each index appears in (rank from 1)."""
    fused = np.zeros(size)
    for ranking in rankings:
        for rank, index in enumerate(ranking, start=1):
            fused[index] += 1.0 / (k + rank)
    return fused


def recency(created_us: Ints, now_us: int, half_life_s: float) -> Scores:
    """Exponential decay in [0, 1]: 1 now, 0.5 one half-life ago."""
    age_s = np.maximum(now_us - created_us, 0) / 1e6
    result: Scores = np.power(0.5, age_s / half_life_s)
    return result


def in_windows(created_us: Ints, windows: Sequence[tuple[int, int]]) -> Scores:
    """1 for each entry created inside one of the [start, end) windows (µs), else 0."""
    inside = np.zeros(len(created_us), bool)
    for start, end in windows:
        inside |= (created_us >= start) & (created_us < end)
    return inside.astype(np.float64)


def episodes(created_us: Ints, gap_us: int) -> Ints:
    """Episode number of each entry (entries in time order): a new one after each gap > gap_us."""
    if len(created_us) == 0:
        return np.zeros(0, np.int64)
    breaks = np.diff(created_us) > gap_us
    result: Ints = np.concatenate([[0], np.cumsum(breaks)]).astype(np.int64)
    return result


def neighbour_smoothing(
    scores: Scores, position: Ints, episode: Ints, weights: Sequence[float]
) -> Scores:
    """Add weights[d-1] * the score of the entry d places away in the same episode, for the
    entries at those places (``position``, ascending).

    In a conversation the answer often sits next to the turn that matches the question.
    """
    result = scores.copy()
    if not len(scores):
        return result
    for distance, weight in enumerate(weights, start=1):
        if weight == 0:
            continue
        for step in (distance, -distance):
            target = position + step
            near = np.minimum(np.searchsorted(position, target), len(position) - 1)
            found = (position[near] == target) & (episode[near] == episode)
            result[found] += weight * scores[near[found]]
    return result


def nearby_best(scores: Scores, position: Ints, episode: Ints, distance: int) -> Scores:
    """The better score of the entries ``distance`` places before and after each entry in
    its episode (0 where there is none)."""
    result = np.zeros(len(scores))
    if not len(scores):
        return result
    for step in (distance, -distance):
        target = position + step
        near = np.minimum(np.searchsorted(position, target), len(position) - 1)
        found = (position[near] == target) & (episode[near] == episode)
        result[found] = np.maximum(result[found], scores[near[found]])
    return result


def episode_best(scores: Scores, episode: Ints) -> Scores:
    """The best score of each entry's episode."""
    if not len(scores):
        return np.zeros(0)
    best = np.full(int(episode.max()) + 1, -np.inf)
    np.maximum.at(best, episode, scores)
    result: Scores = best[episode]
    return result


def episode_boost(scores: Scores, episode: Ints, weight: float) -> Scores:
    """Add weight * the best score of each entry's episode (hierarchical retrieval)."""
    if len(scores) == 0 or weight == 0:
        return scores.copy()
    result: Scores = scores + weight * episode_best(scores, episode)
    return result


def mmr(
    candidates: Sequence[int],
    relevance: Scores,
    vectors: npt.NDArray[np.float32],
    k: int,
    diversity: float,
) -> list[int]:
    """Maximal marginal relevance: pick k of the candidates, trading relevance for novelty.

    ``diversity`` 0 keeps the relevance order; 1 picks only for novelty. ``vectors`` are
    unit-length rows indexed like ``relevance``.
    """
    pool = list(candidates)
    chosen: list[int] = []
    if not pool:
        return chosen
    rel = scale_to_max(relevance[pool])
    sims = vectors[pool] @ vectors[pool].T
    best_sim = np.full(len(pool), -np.inf)
    available = np.ones(len(pool), bool)
    for _ in range(min(k, len(pool))):
        novelty = np.where(np.isinf(best_sim), 0.0, best_sim)
        value = (1 - diversity) * rel - diversity * novelty
        value[~available] = -np.inf
        pick = int(np.argmax(value))
        chosen.append(pool[pick])
        available[pick] = False
        best_sim = np.maximum(best_sim, sims[pick])
    return chosen
