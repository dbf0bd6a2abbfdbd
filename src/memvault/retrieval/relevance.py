"""A learned relevance: the components of a hit, weighed by models fitted on labelled
questions, as probabilities (pure).

Two kinds of logistic regression, fitted by ``benchmarks/fit_relevance.py`` and shipped in
``data/relevance.json`` with what they were fitted on and their figures (docs/benchmarks.md):

- **ranking models** (``conversational``, ``conversational+sparse``): a conversational search
  orders its best ``POOL`` candidates by the first, and the reranker's best by the second;
- **calibrators**, one per kind of search (plain or conversational, reranked or not): every
  hit's *relevance*, the probability that it bears on the query, from its components, the
  ranking model's score and how much of the query it covers. A hit below the threshold
  (``Settings.min_relevance``) is noise: recall drops it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import numpy as np
import numpy.typing as npt

from ..patterns import lazy
from . import scoring, text
from .traits import ANSWERS, TRAITS

Floats = npt.NDArray[np.float64]
_CAPITALISED = lazy(r"\b[A-Z][\w'\u2019-]*")
POOL = 200
"""How many of the first stage's best the model reorders (the reranker reads the best
``RERANK_DEPTH`` of its order, and its sparse variant reorders those)."""
BEST_OF = ("closeness", "coverage", "model")
"""Inputs whose best over a search's hits a calibrator also reads."""
LINKS = 5
"""How many of the best entries by BM25 and cosine lend their rarer entities to a
conversational search (one hop: :class:`memvault.store.scope_index.Named`)."""


@dataclass(frozen=True, slots=True)
class Model:
    """``P(relevant) = 1 / (1 + exp(-(bias + sum of weight * feature)))``."""

    weights: dict[str, float]
    bias: float

    def probability(self, features: dict[str, Floats]) -> Floats:
        """The probability of each candidate, given its features (absent ones count 0)."""
        size = len(next(iter(features.values()))) if features else 0
        logit = np.full(size, self.bias)
        for name, weight in self.weights.items():
            if name in features:
                logit += weight * features[name]
        result: Floats = 1.0 / (1.0 + np.exp(-logit))
        return result


@cache
def _shipped() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("data/relevance.json").read_text("utf-8")
    result: dict[str, Any] = json.loads(text)
    return result


def _models(kind: str) -> dict[str, Model]:
    return {
        name: Model({k: float(v) for k, v in spec["weights"].items()}, float(spec["bias"]))
        for name, spec in _shipped()[kind].items()
    }


@cache
def models() -> dict[str, Model]:
    """The shipped ranking models by name (``conversational``, ``conversational+sparse``)."""
    return _models("models")


@cache
def calibrators() -> dict[str, Model]:
    """The shipped calibrators by kind of search (:func:`kind`)."""
    return _models("calibrators")


def threshold() -> float:
    """The relevance below which the shipped fit found a hit to be noise."""
    return float(_shipped()["threshold"])


def kind(model: str | None, reranked: bool) -> str:
    """The kind of a search: ``plain`` or its ranking model's name, ``+sparse`` if reranked."""
    return f"{model or 'plain'}{'+sparse' if reranked else ''}"


def calibrated(
    components: Sequence[Mapping[str, float]], scores: Floats, coverage: Floats, of: str
) -> Floats:
    """The relevance of each hit of a search of kind ``of``, given its components, its score
    (a probability when a ranking model ranked it) and its :func:`coverage`, and the best of
    those of the search's hits (``best_closeness``…: a hit is weak when the best one is)."""
    if not len(components):
        return np.zeros(0)
    names = {"lexical_share", "closeness", "dense_gap", "sparse"}
    features = {n: np.array([c.get(n, 0.0) for c in components]) for n in names}
    features["sparse_level"] = np.log1p(np.maximum(features["sparse"], 0.0))
    features["sparse"] = share(features["sparse"])
    features["coverage"] = coverage
    clipped = np.clip(scores, 1e-9, 1 - 1e-9)
    features["model"] = np.log(clipped / (1 - clipped))
    for name in BEST_OF:
        features[f"best_{name}"] = np.full(len(components), features[name].max())
    return calibrators()[of].probability(features)


def share(values: Floats) -> Floats:
    """Each value over the largest (0 where none is positive)."""
    return scoring.scale_to_max(values)


def conversational_features(
    lexical: Floats,
    dense: Floats,
    fused: Floats,
    *,
    near: tuple[Floats, Floats],
    episode_best: Floats,
    named: dict[str, Floats],
    traits: Floats | None,
    wants: tuple[str, ...] = (),
) -> dict[str, Floats]:
    """The features of every candidate of a conversational search: its BM25 as a share of
    the best, its cosine (and how far below the best), the fused score of the turns one
    and two places away, its episode's best, the entity scores (and its episode's BM25) as
    shares, and how it
    is said (:mod:`memvault.retrieval.traits`; ``named``: its entity keys, up to ten, over
    ten), and whether it says what the question ``wants`` (``answers_time``…)."""
    lexical_share = share(lexical)
    closeness = np.maximum(dense, 0.0)
    said = np.zeros((len(lexical), len(TRAITS) + 1)) if traits is None else traits
    return {
        **{name: said[:, n] for n, name in enumerate(TRAITS)},
        "named": np.minimum(said[:, len(TRAITS)], 10) / 10,
        **{f"answers_{kind}": said[:, TRAITS.index(kind)] * (kind in wants) for kind in ANSWERS},
        "lexical_share": lexical_share,
        "closeness": closeness,
        "dense_gap": closeness - closeness.max(initial=0.0),
        "agreement": lexical_share * closeness,
        "near": near[0],
        "near2": near[1],
        "episode": episode_best,
        **{name: share(values) for name, values in named.items()},
        "fused": fused,
    }


def coverage(query: str, texts: Sequence[str]) -> Floats:
    """The share of the query's terms each text has, its names left out (every line of a
    conversation has them): "What is Nadia's favourite opera?" is covered by "opera", not by
    "Nadia"."""
    named = set(text.terms(" ".join(_CAPITALISED.findall(query[1:]))))
    terms = text.query_terms(query)
    wanted = [t for t in terms if t not in named] or terms
    return np.array([text.coverage(wanted, t) for t in texts])
