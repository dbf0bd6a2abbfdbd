"""Train the offline extractor's judge (:mod:`memvault.extraction.judge`) on labelled turns.

Run by hand: ``python benchmarks/train_judge.py [--data FILE …] [--folds K] [--write]``.

Each user turn of the labelled sets is read the way ``add_turn`` reads it (the heuristic's
sentence veto, then the parse's statements); a statement takes the category of the expected
fact it contains (every ``fact_contains`` string, one statement per fact), else ``none``. A
multinomial logistic regression with an L2 penalty is fitted on the statements' parse features
and their MiniLM embeddings by gradient descent (numpy, full batch, classes evened out by
``--balance``). ``--folds`` reports cross-validated figures over turns before the final fit:
kept statements (``1 - p(none)`` at least the threshold), strict precision and recall (the
category must agree), and the same ignoring the category. ``--write`` ships the fit as
``src/memvault/extraction/data/judge.json`` and sets its sha256 in ``judge.py``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memvault.embeddings.local import LocalEmbedder
from memvault.extraction import heuristic, judge

ROOT = Path(__file__).resolve().parents[1]
DATA = [
    ROOT / "benchmarks/data/extraction_train.jsonl",
    ROOT / "benchmarks/data/extraction_train2.jsonl",
    ROOT / "benchmarks/data/extraction_train3.jsonl",
]
LABELS = judge.LABELS
DIMENSION = 384
SCALE = 3.0
"""The embedding's weight against the sparse features (its L2 penalty is divided by its square)."""


@dataclass(frozen=True)
class Example:
    features: tuple[str, ...]
    vector: np.ndarray
    label: int


def load(paths: list[Path]) -> list[dict[str, Any]]:
    rows = []
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line) if line.strip() else None
            if row and "expected" in row:
                rows.append(row)
    return rows


def examples(row: dict[str, Any], embedder: LocalEmbedder) -> list[Example]:
    """The row's statements, each with its label."""
    statements = heuristic._parsed(list(heuristic._sentences_of(row["text"])))
    if not statements:
        return []
    wanted = list(row["expected"])
    vectors = embedder.embed([s.fact for s in statements])
    found = []
    for statement, vector in zip(statements, vectors, strict=True):
        fact = heuristic._shown(statement.fact).lower()
        match = next(
            (e for e in wanted if all(c.lower() in fact for c in e["fact_contains"])), None
        )
        if match is not None:
            wanted.remove(match)
        label = LABELS.index(match["category"] if match else judge.NONE)
        found.append(Example(statement.features, vector, label))
    return found


def matrix(data: list[Example], vocabulary: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """Sparse features (a cue weighs :func:`judge.weight_of`) then the embedding (times
    :data:`SCALE`), per row."""
    x = np.zeros((len(data), len(vocabulary) + DIMENSION), dtype=np.float32)
    for row, example in enumerate(data):
        for name in example.features:
            if name in vocabulary:
                x[row, vocabulary[name]] = judge.weight_of(name)
        x[row, len(vocabulary) :] = example.vector * SCALE
    return x, np.array([e.label for e in data], dtype=np.int64)


def fit(
    x: np.ndarray, y: np.ndarray, l2: float, balance: float, steps: int = 600
) -> tuple[np.ndarray, np.ndarray]:
    """Weights and bias of a softmax regression: Adam on the log loss (class ``c`` weighing
    ``(n / (k n_c)) ** balance``) plus ``l2``."""
    n, d = x.shape
    k = len(LABELS)
    weights = [np.zeros((d, k)), np.zeros(k)]
    counts = np.maximum(np.bincount(y, minlength=k), 1).astype(float)
    weigh = ((n / (k * counts)) ** balance)[y]
    onehot = np.eye(k)[y]
    first = [np.zeros_like(p) for p in weights]
    second = [np.zeros_like(p) for p in weights]
    rate, beta1, beta2 = 0.05, 0.9, 0.999
    for step in range(1, steps + 1):
        error = (predict(x, *weights) - onehot) * weigh[:, None] / weigh.sum()
        grads = [x.T @ error + l2 * weights[0], error.sum(axis=0)]
        for i, grad in enumerate(grads):
            first[i] = beta1 * first[i] + (1 - beta1) * grad
            second[i] = beta2 * second[i] + (1 - beta2) * grad * grad
            mean, spread = first[i] / (1 - beta1**step), second[i] / (1 - beta2**step)
            weights[i] -= rate * mean / (np.sqrt(spread) + 1e-8)
    return weights[0], weights[1]


def predict(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    z = x @ w + b
    z -= z.max(axis=1, keepdims=True)
    p = np.exp(z)
    return p / p.sum(axis=1, keepdims=True)


def vocabulary_of(data: list[Example], least: int) -> dict[str, int]:
    counts = Counter(name for e in data for name in set(e.features))
    return {name: i for i, name in enumerate(sorted(n for n, c in counts.items() if c >= least))}


def scored(p: np.ndarray, y: np.ndarray, threshold: float) -> dict[str, float]:
    """Kept statements, strict precision and recall, and both ignoring the category."""
    kept = (1 - p[:, 0]) >= threshold
    category = p[:, 1:].argmax(axis=1) + 1
    right, stated = kept & (category == y), kept & (y != 0)
    positives, many = max(1, int((y != 0).sum())), max(1, int(kept.sum()))
    return {
        "kept": int(kept.sum()),
        "precision": round(float(right.sum()) / many, 3),
        "recall": round(float(right.sum()) / positives, 3),
        "any-category precision": round(float(stated.sum()) / many, 3),
        "any-category recall": round(float(stated.sum()) / positives, 3),
    }


def cross_validate(rows: list[list[Example]], folds: int, args: argparse.Namespace) -> np.ndarray:
    """Out-of-fold probabilities of every statement (folds over turns)."""
    order = list(range(len(rows)))
    random.Random(29).shuffle(order)
    fold_of = {i: n % folds for n, i in enumerate(order)}
    out = [np.zeros(0)] * len(rows)
    for fold in range(folds):
        train = [e for i, row in enumerate(rows) if fold_of[i] != fold for e in row]
        vocabulary = vocabulary_of(train, args.least)
        w, b = fit(*matrix(train, vocabulary), args.l2, args.balance)
        for i, row in enumerate(rows):
            if fold_of[i] == fold and row:
                out[i] = predict(matrix(row, vocabulary)[0], w, b)
    return np.concatenate([o for o in out if o.size])


def write(w: np.ndarray, b: np.ndarray, vocabulary: dict[str, int]) -> str:
    weights = {
        name: [round(float(v), 4) for v in w[i]]
        for name, i in vocabulary.items()
        if np.abs(w[i]).max() >= 1e-3
    }
    dense = w[len(vocabulary) :] * SCALE
    model = {
        "labels": list(LABELS),
        "bias": [round(float(v), 4) for v in b],
        "weights": weights,
        "embedding": [[round(float(v), 5) for v in row] for row in dense],
    }
    text = json.dumps(model, sort_keys=True, separators=(",", ":")) + "\n"
    judge.MODEL.write_text(text, encoding="utf-8")
    digest = hashlib.sha256(text.encode()).hexdigest()
    source = Path(judge.__file__)
    code = re.sub(
        r'MODEL_SHA256 = "[0-9a-f]*"', f'MODEL_SHA256 = "{digest}"', source.read_text("utf-8")
    )
    source.write_text(code, encoding="utf-8")
    return digest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, nargs="+", default=DATA)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--l2", type=float, default=0.003)
    parser.add_argument("--balance", type=float, default=0.5)
    parser.add_argument("--least", type=int, default=1, help="fewest statements a feature needs")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    embedder = LocalEmbedder()
    rows = [examples(row, embedder) for row in load(args.data)]
    flat = [e for row in rows for e in row]
    print(
        f"{len(rows)} turns, {len(flat)} statements:", dict(Counter(LABELS[e.label] for e in flat))
    )
    if args.folds > 1:
        p = cross_validate(rows, args.folds, args)
        y = np.array([e.label for e in flat])
        for threshold in (0.3, 0.5, 0.7, 0.8, 0.9):
            print(f"  cross-validated, threshold {threshold}:", scored(p, y, threshold))
    if args.write:
        vocabulary = vocabulary_of(flat, args.least)
        w, b = fit(*matrix(flat, vocabulary), args.l2, args.balance)
        digest = write(w, b, vocabulary)
        print(f"wrote {judge.MODEL} ({len(vocabulary)} features), sha256 {digest}")


if __name__ == "__main__":
    main()
