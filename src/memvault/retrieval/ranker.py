"""Candidates → ranked hits: fusion, conversation context, recency, threshold, diversity (pure)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from ..errors import ValidationError
from . import scoring
from .candidates import Candidates
from .relevance import POOL, conversational_features, models

CONVERSATIONAL = "conversational"
NAMED = ("speaker", "entity", "linked", "episode_lexical")
"""The entity columns of the candidates (:class:`Candidates`) a model reads."""


@dataclass(frozen=True, slots=True)
class RankSpec:
    """How candidates are scored and chosen. Weights need not sum to 1."""

    limit: int = 10
    lexical_weight: float = 0.5
    dense_weight: float = 0.5
    recency_weight: float = 0.0
    recency_half_life_s: float = 30 * 86_400
    fusion: Literal["weighted", "rrf"] = "weighted"
    neighbours: tuple[float, ...] = ()
    """Share of an entry's score given to the entries 1, 2, … places away in its episode."""
    episode_weight: float = 0.0
    """Share of its episode's best score added to each entry."""
    episode_gap_s: float = 1800
    """A gap longer than this between entries starts a new episode (30 minutes)."""
    diversity: float | None = None
    """MMR trade-off in [0, 1]; None keeps the relevance order."""
    min_score: float | None = None
    """Drop hits whose final score is below this."""
    time_weight: float = 0.0
    """Entries created inside one of ``windows`` (the query's time expressions) have their
    fused score multiplied by ``1 + time_weight``."""
    windows: tuple[tuple[int, int], ...] = ()
    """[start, end) in µs since the epoch (:func:`memvault.retrieval.when.windows`)."""
    model: str | None = None
    """The learned relevance (:mod:`memvault.retrieval.relevance`) that orders the best
    ``POOL`` by the fused score; a hit's score is then its probability."""
    wants: tuple[str, ...] = ()
    """The kinds of answer the query asks for (:func:`memvault.retrieval.traits.wanted`),
    for the model."""

    def __post_init__(self) -> None:
        weights = (
            self.lexical_weight,
            self.dense_weight,
            self.recency_weight,
            self.episode_weight,
            self.time_weight,
            *self.neighbours,
        )
        if any(w < 0 for w in weights):
            raise ValidationError("search weights must not be negative")
        if self.diversity is not None and not 0 <= self.diversity <= 1:
            raise ValidationError("diversity must be between 0 and 1")
        if self.recency_half_life_s <= 0 or self.episode_gap_s < 0:
            raise ValidationError("recency half-life must be positive, episode gap not negative")
        if self.fusion not in ("weighted", "rrf"):
            raise ValidationError("fusion must be 'weighted' or 'rrf'")


def conversational_spec(spec: RankSpec) -> RankSpec:
    """``spec`` for entries that are turns of conversations: neighbouring turns and the
    episode around a match share its relevance (measured on LoCoMo, docs/benchmarks.md)."""
    return replace(spec, neighbours=(0.2, 0.1), episode_weight=0.5, model=CONVERSATIONAL)


@dataclass(frozen=True, slots=True)
class Ranked:
    """A chosen candidate: its index in the Candidates, final score and component scores."""

    index: int
    score: float
    components: dict[str, float]


def _fused(c: Candidates, spec: RankSpec, now_us: int) -> dict[str, np.ndarray]:
    lexical = scoring.scale_to_max(c.lexical)
    dense = np.where(c.has_vector, np.maximum(c.dense, 0.0), 0.0)
    recency = scoring.recency(c.created_us, now_us, spec.recency_half_life_s)
    if spec.fusion == "rrf":
        rankings = [
            [int(i) for i in np.argsort(-c.lexical) if c.lexical[i] > 0],
            [int(i) for i in np.argsort(-c.dense) if c.has_vector[i]],
        ]
        fused = scoring.reciprocal_rank_fusion(rankings, len(c.entry_ids))
        fused = scoring.scale_to_max(fused) + spec.recency_weight * recency
    else:
        parts = {"lexical": lexical, "dense": dense, "recency": recency}
        weights = {
            "lexical": spec.lexical_weight,
            "dense": spec.dense_weight,
            "recency": spec.recency_weight,
        }
        fused = scoring.weighted_sum(parts, weights)
    # Relevant entries inside a window gain in proportion: a date alone lifts nothing.
    timely = scoring.in_windows(c.created_us, spec.windows) * spec.time_weight * fused
    return {"fused": fused + timely, "recency": recency, "time": timely}


def _best(scores: np.ndarray, count: int, min_score: float | None) -> np.ndarray:
    """Indices of the ``count`` best scores, best first (ties: earlier index first)."""
    if min_score is not None:
        eligible = np.flatnonzero(scores >= min_score)
    else:
        eligible = np.arange(len(scores))
    if len(eligible) > count * 4:
        cut = -np.partition(-scores[eligible], count - 1)[count - 1]
        eligible = eligible[scores[eligible] >= cut]
    return eligible[np.argsort(-scores[eligible], kind="stable")][:count]


def rank(c: Candidates, spec: RankSpec, now_us: int) -> list[Ranked]:
    """Choose up to ``spec.limit`` candidates, best first."""
    if not len(c.entry_ids):
        return []
    parts = _fused(c, spec, now_us)
    fused = parts["fused"]
    episode = scoring.episodes(c.timeline, int(spec.episode_gap_s * 1e6))[c.places]
    final = scoring.neighbour_smoothing(fused, c.places, episode, spec.neighbours)
    final = final + (scoring.episode_boost(fused, episode, spec.episode_weight) - fused)
    shown = ("recency", "time") if spec.time_weight else ("recency",)
    dense = np.where(c.has_vector, c.dense, 0.0)
    closeness = np.maximum(dense, 0.0)
    base = {
        "lexical": c.lexical,
        "dense": dense,
        **{name: parts[name] for name in shown},
        "fused": fused,
        "lexical_share": scoring.scale_to_max(c.lexical),
        "closeness": closeness,
        "dense_gap": closeness - closeness.max(initial=0.0),
    }
    if spec.model is not None:
        return _modelled(c, spec, final, base, episode)
    pool = max(spec.limit * 5, 50) if spec.diversity is not None else spec.limit
    order = [int(i) for i in _best(final, pool, spec.min_score)]
    if spec.diversity is not None and c.vectors is not None:
        order = scoring.mmr(order, final, c.vectors, spec.limit, spec.diversity)
    return _chosen(order[: spec.limit], final, base)


def _chosen(
    order: list[int], scores: np.ndarray, components: dict[str, np.ndarray]
) -> list[Ranked]:
    return [
        Ranked(i, float(scores[i]), {name: float(v[i]) for name, v in components.items()})
        for i in order
    ]


def _modelled(
    c: Candidates,
    spec: RankSpec,
    final: np.ndarray,
    base: dict[str, np.ndarray],
    episode: np.ndarray,
) -> list[Ranked]:
    """The best ``POOL`` (at least ``limit``) by ``final``, ordered by the model."""
    assert spec.model is not None
    pool = _best(final, max(spec.limit, POOL), None)
    fused = base["fused"]
    features = conversational_features(
        base,
        near=(
            scoring.nearby_best(fused, c.places, episode, 1),
            scoring.nearby_best(fused, c.places, episode, 2),
        ),
        episode_best=scoring.episode_best(fused, episode),
        named={name: c.column(name) for name in NAMED},
        traits=c.traits,
        wants=spec.wants,
    )
    mine = {name: values[pool] for name, values in features.items()}
    probability = np.zeros(len(final))
    probability[pool] = models()[spec.model].probability(mine)
    eligible = pool if spec.min_score is None else pool[probability[pool] >= spec.min_score]
    order = [int(i) for i in eligible[np.argsort(-probability[eligible], kind="stable")]]
    if spec.diversity is not None and c.vectors is not None:
        order = scoring.mmr(order, probability, c.vectors, spec.limit, spec.diversity)
    return _chosen(order[: spec.limit], probability, {**features, **base, "first": final})
