"""The learned stage of the offline extractor: whether a statement the parse found is a fact
worth keeping, and what kind — who the user is, what they like, what they chose, what holds of
them, what they are doing now.

A multinomial logistic regression over the statement's parse features
(:func:`~memvault.extraction.clauses.Statement.features`), trained by
``benchmarks/train_judge.py`` on the labelled turns of ``benchmarks/data/extraction_train.jsonl``
and shipped as ``data/judge.json``, checked by sha256 before it is loaded. It only weighs what
the rules let through: it never overrides their veto.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from ..embeddings.local import shared_model
from ..shipped import verified
from .clauses import SOON, Statement
from .facts import FactCategory

MODEL = Path(__file__).parent / "data" / "judge.json"
MODEL_SHA256 = "46057f3cfb19b91a85c0d8e15253d7a09e64ce97f9ea1e46d786b17688d2af68"
NONE, IDENTITY = "none", "identity"
LABELS = (NONE, IDENTITY, *(c.value for c in FactCategory))


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the judge makes of a statement it keeps."""

    category: FactCategory
    identity: bool
    confidence: float
    vector: np.ndarray
    """The statement's embedding by the packaged MiniLM (what the judge weighed)."""


@dataclass(frozen=True, slots=True)
class _Model:
    labels: tuple[str, ...]
    bias: np.ndarray
    weights: dict[str, np.ndarray]
    """Each named feature's weights, one per label, already times :func:`weight_of`."""
    embedding: np.ndarray
    """Weights of the statement's MiniLM embedding (384 by labels)."""


@cache
def _model() -> _Model:
    data = json.loads(verified(MODEL, MODEL_SHA256, "the extractor's judge").read_text("utf-8"))
    return _Model(
        tuple(data["labels"]),
        np.asarray(data["bias"]),
        {name: np.asarray(row) * weight_of(name) for name, row in data["weights"].items()},
        np.asarray(data["embedding"], dtype=np.float32),
    )


THRESHOLD = 0.75
"""The least probability that a statement is a fact (of any kind) for it to be kept."""
CUE_WEIGHT = 3.0
"""How much more a cue of the rules' word lists weighs than a word (``cue=…``, ``who=…``)."""


def weight_of(feature: str) -> float:
    """A feature's value: a cue weighs more than a word, so that few examples teach it."""
    return CUE_WEIGHT if feature.startswith(("cue=", "who=", "tense=")) else 1.0


def probabilities(statements: Sequence[Statement]) -> list[dict[str, float]]:
    """Each label's probability, for every statement (their texts embedded in one batch)."""
    return [found for found, _ in _weighed(statements)]


def _weighed(statements: Sequence[Statement]) -> list[tuple[dict[str, float], np.ndarray]]:
    """Each statement's label probabilities, with its embedding."""
    if not statements:
        return []
    model = _model()
    texts = [s.fact for s in statements]
    embedded = shared_model().embed(texts)  # the packaged MiniLM, whatever the store's embedder
    found = []
    for statement, vector, dense in zip(
        statements, embedded, embedded @ model.embedding, strict=True
    ):
        scores = model.bias + dense
        for name in statement.features:
            row = model.weights.get(name)
            if row is not None:
                scores = scores + row
        exps = np.exp(scores - scores.max())
        found.append((dict(zip(model.labels, (exps / exps.sum()).tolist(), strict=True)), vector))
    return found


def verdicts(statements: Sequence[Statement]) -> list[Verdict | None]:
    """Each statement's kind, or ``None`` when it is not a fact to keep: the probability that
    it is one (of any kind) is below :data:`THRESHOLD`, chosen for precision."""
    weighed = _weighed(statements)
    return [_verdict(s, *w) for s, w in zip(statements, weighed, strict=True)]


def _verdict(statement: Statement, found: dict[str, float], vector: np.ndarray) -> Verdict | None:
    """Kept when it is likely a fact; of its likeliest kind — but what holds now or in the days
    ahead ("… tomorrow", "this week") is a context, never who the user is or what they like."""
    kept = 1.0 - found[NONE]
    if kept < THRESHOLD:
        return None
    if SOON in statement.features:
        return Verdict(FactCategory.CONTEXT, False, kept, vector)
    label = max((label for label in found if label != NONE), key=found.__getitem__)
    category = FactCategory.FACT if label == IDENTITY else FactCategory(label)
    return Verdict(category, label == IDENTITY, kept, vector)
