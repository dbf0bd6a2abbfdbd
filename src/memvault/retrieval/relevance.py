"""A learned relevance: the components of a hit, weighed by models fitted on labelled
questions, as probabilities (pure).

Three kinds of model, fitted by ``benchmarks/fit_relevance.py`` (shipped in
``data/ranking.json``) and ``benchmarks/calibrate_relevance.py`` (``data/relevance.json``),
with what they were fitted on and their figures (docs/benchmarks.md):

- **ranking models** (``conversational``, ``conversational+sparse``; forests of boosted
  trees, :class:`Forest`): a conversational search orders its best ``POOL`` candidates by
  the first, and the reranker's best by the second;
- **gates** (logistic regressions, :class:`Model`), one per kind of search (plain or
  conversational, reranked or not): the probability that a search found anything that bears
  on its query at all, from absolute signals of its hits (how close the best come, how much
  of the query they cover) — the "nothing relevant" case of a question the memory cannot
  answer;
- **calibrators** (logistic regressions), one per kind: the probability that each hit is
  what the query asks for, from its components, the ranking model's score and how much of
  the query it covers.

A hit's *relevance* is the gate's probability, scaled by its calibrated probability as a
share of the likeliest evidence among the best ``SEARCHED`` (to the power ``spread``, shipped
with them): that one carries the search's, and a hit below the threshold
(``Settings.min_relevance``) is noise that recall drops.
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

from ..errors import ConfigError
from ..patterns import lazy
from . import scoring, text
from .traits import ANSWERS, TRAITS

Floats = npt.NDArray[np.float64]
_CAPITALISED = lazy(r"\b[A-Z][\w'\u2019-]*")
POOL = 200
"""How many of the first stage's best the model reorders (the reranker reads the best
``RERANK_DEPTH`` of its order, and its sparse variant reorders those)."""
SEARCHED = 10
"""How many of a search's best hits its gate reads (whatever the limit asked for)."""
LINKS = 5
"""How many of the best entries by BM25 and cosine lend their rarer entities to a
conversational search (one hop: :class:`memvault.store.scope_index.ConversationSignals`)."""


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


@dataclass(frozen=True, slots=True)
class Forest:
    """Gradient-boosted trees (LightGBM's), their summed output made a probability
    by ``1 / (1 + exp(-(bias + scale * output)))`` (Platt scaling, fitted with them).

    The trees are flat arrays over every node of every tree: a node sends a candidate
    ``left`` when its ``feature`` is at most its ``threshold``, else ``right``; a leaf points
    to itself and holds its output in ``value``. Every tree is walked ``depth`` steps at once
    for every candidate."""

    names: tuple[str, ...]
    feature: npt.NDArray[np.intp]
    threshold: Floats
    left: npt.NDArray[np.intp]
    right: npt.NDArray[np.intp]
    value: Floats
    roots: npt.NDArray[np.intp]
    depth: int
    scale: float
    bias: float

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any]) -> Forest:
        """A forest as ``ranking.json`` holds it: its arrays under ``forest``, and the
        ``scale`` and ``bias`` that make its output a probability."""
        trees = spec["forest"]
        return cls(
            tuple(trees["features"]),
            np.array(trees["feature"], np.intp),
            np.array(trees["threshold"], float),
            np.array(trees["left"], np.intp),
            np.array(trees["right"], np.intp),
            np.array(trees["value"], float),
            np.array(trees["roots"], np.intp),
            int(trees["depth"]),
            float(spec["scale"]),
            float(spec["bias"]),
        )

    @classmethod
    def from_trees(
        cls, names: Sequence[str], trees: Sequence[Mapping[str, Any]], averaged: int = 1
    ) -> Forest:
        """LightGBM's dumped trees (each a ``tree_structure``) over the features ``names``,
        each leaf's output divided by ``averaged``; unscaled (``scale`` 1, ``bias`` 0)."""
        columns: dict[str, list[Any]] = {
            key: [] for key in ("feature", "threshold", "left", "right", "value")
        }
        deepest = 0

        def add(node: Mapping[str, Any], level: int) -> int:
            nonlocal deepest
            at = len(columns["feature"])
            for values in columns.values():
                values.append(0)
            if "leaf_value" in node:
                deepest = max(deepest, level)
                columns["left"][at] = columns["right"][at] = at
                columns["value"][at] = node["leaf_value"] / averaged
                return at
            if node["decision_type"] != "<=":
                raise ConfigError(f"a split of kind {node['decision_type']!r} is not supported")
            columns["feature"][at] = node["split_feature"]
            columns["threshold"][at] = node["threshold"]
            columns["left"][at] = add(node["left_child"], level + 1)
            columns["right"][at] = add(node["right_child"], level + 1)
            return at

        roots = [add(tree, 0) for tree in trees]
        forest = {"features": list(names), "roots": roots, "depth": deepest, **columns}
        return cls.from_spec({"forest": forest, "scale": 1.0, "bias": 0.0})

    @property
    def weights(self) -> dict[str, float]:
        """The features it reads (each weighing 1: trees have no per-feature weight)."""
        return dict.fromkeys(self.names, 1.0)

    def output(self, features: dict[str, Floats]) -> Floats:
        """The summed output of the trees for each candidate (absent features count 0)."""
        size = len(next(iter(features.values()))) if features else 0
        x = np.column_stack([features.get(n, np.zeros(size)) for n in self.names])
        node = np.broadcast_to(self.roots, (size, len(self.roots))).copy()
        rows = np.arange(size)[:, None]
        for _ in range(self.depth):
            goes_left = x[rows, self.feature[node]] <= self.threshold[node]
            node = np.where(goes_left, self.left[node], self.right[node])
        result: Floats = self.value[node].sum(axis=1)
        return result

    def probability(self, features: dict[str, Floats]) -> Floats:
        """The probability of each candidate, given its features (absent ones count 0)."""
        result: Floats = 1.0 / (1.0 + np.exp(-(self.bias + self.scale * self.output(features))))
        return result


@cache
def _shipped(name: str = "relevance") -> dict[str, Any]:
    """A shipped file: ``relevance`` (gates, calibrators, threshold) or ``ranking`` (the
    forests, a megabyte: read by the first conversational search only)."""
    text = resources.files(__package__).joinpath(f"data/{name}.json").read_text("utf-8")
    result: dict[str, Any] = json.loads(text)
    return result


def _model(spec: Mapping[str, Any]) -> Model | Forest:
    if "forest" in spec:
        return Forest.from_spec(spec)
    return Model({k: float(v) for k, v in spec["weights"].items()}, float(spec["bias"]))


def _models(kind: str, shipped: str = "relevance") -> dict[str, Any]:
    return {name: _model(spec) for name, spec in _shipped(shipped)[kind].items()}


@cache
def models() -> dict[str, Model | Forest]:
    """The shipped ranking models by name (``conversational``, ``conversational+sparse``)."""
    return _models("models", "ranking")


@cache
def calibrators() -> dict[str, Model]:
    """The shipped calibrators by kind of search (:func:`kind`)."""
    return _models("calibrators")


@cache
def gates() -> dict[str, Model]:
    """The shipped gates by kind of search (:func:`kind`)."""
    return _models("gates")


def threshold() -> float:
    """The relevance below which the shipped fit found a hit to be noise."""
    return float(_shipped()["threshold"])


def kind(model: str | None, reranked: bool) -> str:
    """The kind of a search: ``plain`` or its ranking model's name, ``+sparse`` if reranked."""
    return f"{model or 'plain'}{'+sparse' if reranked else ''}"


def spread() -> float:
    """How sharply a hit's share of the search's relevance falls with its evidence
    probability (:func:`combined`)."""
    return float(_shipped()["spread"])


def relevances(
    query: str,
    texts: Sequence[str],
    components: Sequence[Mapping[str, float]],
    scores: Floats,
    of: str,
) -> Floats:
    """The relevance of each hit (best first) of a search of kind ``of`` for ``query``, given
    its text, its components and its score (a probability when a ranking model ranked it):
    the gate's probability that the best ``SEARCHED`` hold anything relevant, shared out by
    the calibrator (:func:`combined`). The hits after the first ``SEARCHED`` change nothing
    before them."""
    if not len(texts):
        return np.zeros(0)
    hits = hit_inputs(query, texts, components, scores)
    found = gates()[of].probability(search_inputs(query, texts, hits))
    return combined(float(found[0]), calibrators()[of].probability(hits), spread())


def combined(found: float, evidence: Floats, spread: float) -> Floats:
    """Each hit's relevance: ``found`` times its ``evidence`` probability as a share of the
    highest of the first ``SEARCHED`` (at most 1), to the power ``spread``: the likeliest
    evidence among them carries ``found``."""
    result: Floats = found * head_share(evidence) ** spread
    return result


def hit_inputs(
    query: str, texts: Sequence[str], components: Sequence[Mapping[str, float]], scores: Floats
) -> dict[str, Floats]:
    """What a calibrator reads of each hit: its components, its :func:`coverage` of the
    query, its sparse relevance (as a :func:`head_share`, and how high it is) and its score
    as a logit."""
    names = ("lexical_share", "closeness", "dense_gap", "sparse")
    features = {n: np.array([c.get(n, 0.0) for c in components]) for n in names}
    features["sparse_level"] = np.log1p(np.maximum(features["sparse"], 0.0))
    features["sparse"] = head_share(features["sparse"])
    features["coverage"] = coverage(query, texts)
    clipped = np.clip(scores, 1e-9, 1 - 1e-9)
    features["model"] = np.log(clipped / (1 - clipped))
    return features


def search_inputs(query: str, texts: Sequence[str], hits: dict[str, Floats]) -> dict[str, Floats]:
    """What a gate reads of a search's best ``SEARCHED`` hits (``texts`` and their
    :func:`hit_inputs`, best first; each answer a one-element array): how close the best two
    come, how much of the query the best one and all of them together cover, how many terms
    the query has, and the best sparse level and model score."""
    head = {name: values[:SEARCHED] for name, values in hits.items()}
    closeness = np.sort(head["closeness"])[::-1]
    found = {
        "best_closeness": closeness.max(initial=0.0),
        "second_closeness": closeness[1] if len(closeness) > 1 else 0.0,
        "best_coverage": head["coverage"].max(initial=0.0),
        "union_coverage": coverage(query, [" ".join(texts[:SEARCHED])])[0],
        "terms": np.log1p(len(text.query_terms(query))),
        "best_sparse_level": head["sparse_level"].max(initial=0.0),
        "best_model": head["model"].max(initial=-20.0),
    }
    return {name: np.array([value], float) for name, value in found.items()}


def head_share(values: Floats) -> Floats:
    """Each value over the largest of the first ``SEARCHED``, at most 1 (negatives become
    0; all 0 where none of those is positive)."""
    clipped = np.maximum(values, 0.0)
    top = clipped[:SEARCHED].max(initial=0.0)
    result: Floats = np.minimum(clipped / top, 1.0) if top > 0 else np.zeros(len(values))
    return result


def share(values: Floats) -> Floats:
    """Each value over the largest (0 where none is positive)."""
    return scoring.scale_to_max(values)


def conversational_features(
    base: Mapping[str, Floats],
    *,
    near: tuple[Floats, Floats],
    episode_best: Floats,
    named: dict[str, Floats],
    traits: Floats | None,
    wants: tuple[str, ...] = (),
) -> dict[str, Floats]:
    """The features of every candidate of a conversational search: of its ``base``
    components, its BM25 as a share of the best, its cosine and how far below the best, and
    its fused score; the fused score of the turns one and two places away, its episode's
    best, the entity scores (and its episode's BM25) as shares, how it is said
    (:mod:`memvault.retrieval.traits`; ``named``: its entity keys, up to ten, over ten), and
    whether it says what the question ``wants`` (``answers_time``…)."""
    size = len(base["fused"])
    said = np.zeros((size, len(TRAITS) + 1)) if traits is None else traits
    return {
        **{name: said[:, n] for n, name in enumerate(TRAITS)},
        "named": np.minimum(said[:, len(TRAITS)], 10) / 10,
        **{f"answers_{kind}": said[:, TRAITS.index(kind)] * (kind in wants) for kind in ANSWERS},
        **{name: base[name] for name in ("lexical_share", "closeness", "dense_gap", "fused")},
        "agreement": base["lexical_share"] * base["closeness"],
        "near": near[0],
        "near2": near[1],
        "episode": episode_best,
        **{name: share(values) for name, values in named.items()},
    }


def coverage(query: str, texts: Sequence[str]) -> Floats:
    """The share of the query's terms each text has, its names left out (every line of a
    conversation has them): "What is Nadia's favourite opera?" is covered by "opera", not by
    "Nadia"."""
    named = set(text.terms(" ".join(_CAPITALISED.findall(query[1:]))))
    terms = text.query_terms(query)
    wanted = [t for t in terms if t not in named] or terms
    return np.array([text.coverage(wanted, t) for t in texts])
