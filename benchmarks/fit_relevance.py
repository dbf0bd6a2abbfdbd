"""Fit the conversational ranking models (``memvault/retrieval/data/ranking.json``).

Run by hand: ``python benchmarks/fit_relevance.py --data ../shared/data/locomo/locomo-dev.json
[--write] [--features FILE]``. Each LoCoMo conversation is written as ``memvault bench locomo``
writes it; each answerable question (categories 1 to 4) is searched (conversational) for the
first stage's best ``POOL`` turns with their features (the hits' components, whatever the
shipped weights: they only reorder the pool) and the reranker's sparse relevance, labelled by
the question's evidence.

Two rankings are fitted: ``conversational`` on the pools, and ``conversational+sparse`` on
the best ``RERANK_DEPTH`` of each pool by the first, with the sparse relevance as a share of
the best of those. Each is a forest of boosted trees (LightGBM, a dev dependency: the
shipped forest is walked in numpy, :class:`memvault.retrieval.relevance.Forest`) averaged over
``SEEDS``, its output made a probability by a logistic fit; ``--kind logistic`` fits the
logistic regressions they replaced (L2, Newton's method) instead. Both are scored by leaving
one conversation out at a time (fitted on the others, measured on it: turn_recall@k and
session_any@k by category); ``--write`` then fits them on every conversation and writes them
with those figures.
"""

from __future__ import annotations

import argparse
import json
import pickle
import re
import sys
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from memvault import Memory, Settings, core
from memvault.bench import locomo
from memvault.embeddings import splade
from memvault.retrieval import relevance
from memvault.retrieval.rerank import RERANK_DEPTH

FEATURES = (
    "length",
    "asks",
    "first_person",
    "named",
    "time",
    "answers_time",
    "answers_number",
    "answers_place",
    "lexical_share",
    "closeness",
    "dense_gap",
    "agreement",
    "near",
    "near2",
    "episode",
    "episode_lexical",
    "speaker",
    "entity",
    "linked",
)
SPARSE = (*FEATURES, "sparse")
L2 = 1.0
SEEDS = (1, 2, 3, 4, 5)
ROUNDS = 200
FOREST = {
    "objective": "binary",
    "learning_rate": 0.05,
    "num_leaves": 7,
    "max_depth": 3,
    "min_data_in_leaf": 50,
    "bagging_fraction": 0.8,
    "bagging_freq": 1,
    "feature_fraction": 0.8,
    "lambda_l2": 1.0,
    "num_threads": 2,
    "verbose": -1,
}
"""LightGBM's settings for the ranking forests (chosen by leaving one conversation out)."""
Ranking = relevance.Model | relevance.Forest
LEVERS = {
    "speaker (entity index)": ("speaker",),
    "entities named (entity index)": ("entity",),
    "entity links (one hop)": ("linked",),
    "window grain (turns 1 and 2 away)": ("near", "near2"),
    "episode grain (best turn, BM25 of its text)": ("episode", "episode_lexical"),
    "how it is said (traits)": ("length", "asks", "first_person", "named", "time"),
    "answer kinds (when: a time...)": ("answers_time", "answers_number", "answers_place"),
}
"""Groups of features measured by leaving them out (``--levers``)."""
DATA = Path(__file__).parents[1] / "src/memvault/retrieval/data"
OUT = DATA / "relevance.json"
RANKING = DATA / "ranking.json"


def collect(data: Path) -> list[dict[str, Any]]:
    """Per conversation: per answerable question, its pool's features, labels and ids."""
    conversations = locomo.load(data)
    settings = Settings(near_duplicate_threshold=0.0, max_limit=10_000)
    core.questions = lambda query: [query]  # the whole question's pool, not its parts'
    result = []
    with Memory(":memory:", settings=settings) as memory:
        for conversation in conversations:
            scope = locomo.ingest(memory, conversation)
            questions = []
            for question in conversation.questions:
                if question.category not in locomo.ANSWERABLE:
                    continue
                hits = memory.search(
                    question.text, scope, limit=relevance.POOL, conversational=True
                )
                sparse = splade.relevance(question.text, [h.entry.content for h in hits])
                columns = {
                    name: np.array([h.components.get(name, 0.0) for h in hits]) for name in FEATURES
                }
                ids = [str(h.entry.metadata["dia_id"]) for h in hits]
                questions.append(
                    {
                        "question": question,
                        "ids": ids,
                        "features": columns | {"sparse": sparse},
                        "labels": np.array([i in question.evidence for i in ids], float),
                    }
                )
            result.append({"sample_id": conversation.sample_id, "questions": questions})
            print(f"{conversation.sample_id}: {len(questions)} questions", file=sys.stderr)
    return result


def fit(
    x: np.ndarray,
    y: np.ndarray,
    l2: float = L2,
    steps: int = 50,
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """Logistic regression by Newton's method, each row counted ``weights`` times (once by
    default); the last weight is the bias (not penalised)."""
    x = np.column_stack([x, np.ones(len(x))])
    counted = np.ones(len(x)) if weights is None else weights
    w = np.zeros(x.shape[1])
    penalty = np.r_[np.full(x.shape[1] - 1, l2), 0.0]
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(x @ w)))
        gradient = x.T @ (counted * (p - y)) + penalty * w
        hessian = (x * (counted * p * (1 - p))[:, None]).T @ x + np.diag(penalty)
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if float(np.abs(step).max()) < 1e-8:
            break
    return w


def matrix(question: dict[str, Any], names: Sequence[str]) -> np.ndarray:
    return np.column_stack([question["features"][n] for n in names])


def logistic(questions: Sequence[dict[str, Any]], names: Sequence[str]) -> relevance.Model:
    """A logistic regression of evidence on the pools' features (L2 ``L2``)."""
    x = np.vstack([matrix(q, names) for q in questions])
    w = fit(x, np.concatenate([q["labels"] for q in questions]))
    return relevance.Model(dict(zip(names, map(float, w[:-1]), strict=True)), float(w[-1]))


def forest(questions: Sequence[dict[str, Any]], names: Sequence[str]) -> relevance.Forest:
    """Boosted trees of whether a candidate is evidence (LightGBM, ``FOREST``), one set per
    seed of ``SEEDS`` averaged into one forest, its output made a probability by a logistic
    fit (Platt scaling). A probability, not only an order: the gates and calibrators read it
    as one (a LambdaRank forest ordered as well, and its scores told them far less)."""
    import lightgbm

    x = np.vstack([matrix(q, names) for q in questions])
    y = np.concatenate([q["labels"] for q in questions])
    data = lightgbm.Dataset(x, y.astype(int))
    trees = []
    for seed in SEEDS:
        booster = lightgbm.train(FOREST | {"seed": seed}, data, num_boost_round=ROUNDS)
        trees += [t["tree_structure"] for t in booster.dump_model()["tree_info"]]
    unscaled = relevance.Forest.from_trees(names, trees, averaged=len(SEEDS))
    output = unscaled.output({n: x[:, i] for i, n in enumerate(names)})
    scale, bias = fit(output[:, None], y, 0.0)
    return replace(unscaled, scale=float(scale), bias=float(bias))


def reranked(
    question: dict[str, Any], first: Ranking, features: Sequence[str] = FEATURES
) -> dict[str, Any]:
    """The question's best ``RERANK_DEPTH`` by the first model, the sparse relevance as a share
    of the best of them (what the reranker sees)."""
    scores = first.probability({n: question["features"][n] for n in features})
    top = np.argsort(-scores, kind="stable")[:RERANK_DEPTH]
    chosen = {name: values[top] for name, values in question["features"].items()}
    chosen["sparse"] = relevance.share(chosen["sparse"])
    return question | {
        "ids": [question["ids"][i] for i in top],
        "features": chosen,
        "labels": question["labels"][top],
    }


def fitted(
    questions: Sequence[dict[str, Any]], features: Sequence[str] = FEATURES, kind: str = "forest"
) -> tuple[Ranking, Ranking]:
    """The two models, fitted on ``questions``: ``forest`` or ``logistic``."""
    kept = [q for q in questions if q["ids"]]
    learn = forest if kind == "forest" else logistic
    first = learn(kept, features)
    return first, learn([reranked(q, first, features) for q in kept], (*features, "sparse"))


def rows(
    questions: Sequence[dict[str, Any]],
    first: Ranking,
    second: Ranking,
    features: Sequence[str] = FEATURES,
) -> dict:
    """Per model: (category, scores) of each question ranked by it."""
    result: dict[str, list] = {"conversational": [], "conversational+sparse": []}
    for q in questions:
        if not q["ids"]:
            continue
        scores = first.probability({n: q["features"][n] for n in features})
        ranked = [q["ids"][i] for i in np.argsort(-scores, kind="stable")]
        top = reranked(q, first, features)
        order = np.argsort(-second.probability(top["features"]), kind="stable")
        both = [top["ids"][i] for i in order] + ranked[RERANK_DEPTH:]
        for name, ranking in (("conversational", ranked), ("conversational+sparse", both)):
            score = locomo.score_ranking(ranking, q["question"], (1, 5, 10))
            result[name].append((q["question"].category, score))
    return result


def cross_validated(
    conversations: list[dict[str, Any]], features: Sequence[str] = FEATURES, kind: str = "forest"
) -> dict[str, dict]:
    together: dict[str, list] = {"conversational": [], "conversational+sparse": []}
    for held in range(len(conversations)):
        train = [q for i, c in enumerate(conversations) if i != held for q in c["questions"]]
        weights = fitted(train, features, kind)
        for name, found in rows(conversations[held]["questions"], *weights, features).items():
            together[name] += found
    return {name: locomo.summarise(found) for name, found in together.items()}


def line(label: str, summary: dict) -> str:
    a = summary["answerable"]
    by = summary["by_category"]
    cats = " ".join(f"c{c}={by[str(c)]['turn_recall@10']:.3f}" for c in (1, 2, 3, 4))
    return (
        f"{label:<28} t@10={a['turn_recall@10']:.3f} s@5={a['session_any@5']:.3f} "
        f"t@1={a['turn_recall@1']:.3f} {cats}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--features", type=Path, help="cache of the collected features")
    parser.add_argument("--write", action="store_true", help=f"write {RANKING.name}")
    parser.add_argument("--levers", action="store_true", help="each lever left out in turn")
    parser.add_argument("--kind", choices=("forest", "logistic"), default="forest")
    args = parser.parse_args()
    if args.features and args.features.exists():
        conversations = pickle.loads(args.features.read_bytes())
    else:
        conversations = collect(args.data)
        if args.features:
            args.features.write_bytes(pickle.dumps(conversations))
    validated = cross_validated(conversations, kind=args.kind)
    for name, summary in validated.items():
        print(line(f"{name} (CV)", summary))
    if args.levers:
        for lever, names in LEVERS.items():
            left = [f for f in FEATURES if f not in names]
            without = cross_validated(conversations, left, args.kind)
            print(line(f"without {lever}", without["conversational+sparse"]))
    if not args.write:
        return
    everything = [q for c in conversations for q in c["questions"]]
    chosen = dict(zip(validated, fitted(everything, kind=args.kind), strict=True))
    models = {
        name: as_json(model)
        | {
            "cross_validated": validated[name]["answerable"]
            | {"by_category": validated[name]["by_category"]}
        }
        for name, model in chosen.items()
    }
    fitted_on = (
        f"{datetime.now(UTC):%Y-%m-%d} by benchmarks/fit_relevance.py on {args.data.name} "
        f"({len(conversations)} conversations, {len(everything)} answerable questions, pools "
        f"of {relevance.POOL}, reranked {RERANK_DEPTH}; {args.kind}); cross_validated: each "
        "conversation left out in turn"
    )
    _update({"fitted": fitted_on, "models": models}, RANKING)


def as_json(model: Ranking) -> dict[str, Any]:
    """A model as ``ranking.json`` holds it."""
    if isinstance(model, relevance.Model):
        weights = {n: round(v, 4) for n, v in model.weights.items()}
        return {"bias": round(model.bias, 4), "weights": weights}
    trees = {
        "features": list(model.names),
        "depth": model.depth,
        "roots": model.roots.tolist(),
        **{k: getattr(model, k).tolist() for k in ("feature", "left", "right")},
        **{k: [float(v) for v in getattr(model, k)] for k in ("threshold", "value")},
    }
    return {"scale": model.scale, "bias": model.bias, "forest": trees}


_NUMBERS = re.compile(r"\[\s+([-+\d.eE,\s]+?)\s+\]")
"""A JSON list of numbers, one number a line."""


def _one_line(match: re.Match[str]) -> str:
    return "[" + ",".join(n.strip() for n in match[1].split(",")) + "]"


def _update(sections: dict[str, Any], out: Path = OUT) -> None:
    """Replace these sections of the shipped file ``out``, keeping the others."""
    shipped = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
    text = _NUMBERS.sub(_one_line, json.dumps(shipped | sections, indent=2))
    out.write_text(text + "\n", encoding="utf-8")
    print(f"wrote {', '.join(sections)} to {out}")


if __name__ == "__main__":
    main()
