"""Fit the gates, the calibrators and the relevance threshold
(``memvault/retrieval/data/relevance.json``).

Run by hand: ``python benchmarks/calibrate_relevance.py [--data FILE...] [--check FILE...]
[--write]``. The data is memvault's own labelled sets (``benchmarks/data/retrieval_README.md``):
conversations in LoCoMo's format plus ``abstention`` (questions nothing in the conversation
bears on), and users' memories with questions (``.jsonl``). Each conversation is written as
``memvault bench locomo`` writes it, and each answerable question (categories 1 to 4) and
abstention question is searched in the four kinds of search (plain or conversational,
reranked or not) for its best 10; each user's memories are one scope, searched plainly. A hit
is relevant if it is evidence of the question; none is for an abstention.

Per kind, two logistic regressions (:mod:`memvault.retrieval.relevance`): a gate
(:data:`GATES`) on each search, whether the question has anything to find at all (answerable
or not, the two counted as equally likely), and a calibrator (:data:`INPUTS`) on each hit of
an answerable question, whether it is evidence. A hit's relevance is the gate's probability
times its calibrated probability as a share of the likeliest evidence's among the best 10
(:func:`memvault.retrieval.relevance.combined`), to the power ``spread``: of
:data:`SPREADS`, the one whose threshold leaves the most abstention questions with no hit
(the larger of two within a point: it drops more of the other hits). The threshold
is the highest at which, in every kind, at most 2 % of the answerable questions lose every
hit of their best 10 and at least 80 % of the evidence found there is kept; with it,
the report says how many abstention questions lose every hit ("nothing relevant", the
recall), how many answerable ones do (the precision), and what share of evidence is kept,
on the data and on each ``--check`` file (a blind split, or LoCoMo: its category 5 there).
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from fit_relevance import _update, fit

from memvault import Memory, NewEntry, Settings
from memvault.bench import locomo
from memvault.retrieval import relevance

KINDS = {
    "plain": {},
    "plain+sparse": {"rerank": True},
    "conversational": {"conversational": True},
    "conversational+sparse": {"conversational": True, "rerank": True},
}
PLAIN = ("closeness", "coverage", "lexical_share", "dense_gap")
INPUTS = {
    "plain": PLAIN,
    "plain+sparse": (*PLAIN, "sparse", "sparse_level"),
    "conversational": ("model", *PLAIN),
    "conversational+sparse": ("model", *PLAIN, "sparse", "sparse_level"),
}
SEARCH = ("best_closeness", "second_closeness", "best_coverage", "union_coverage", "terms")
GATES = {
    "plain": SEARCH,
    "plain+sparse": (*SEARCH, "best_sparse_level"),
    "conversational": (*SEARCH, "best_model"),
    "conversational+sparse": (*SEARCH, "best_model", "best_sparse_level"),
}
SPREADS = (1.0, 0.75, 0.5, 0.25)
KEEP = 0.8
EMPTIED = 0.02
DATA = [
    Path(__file__).parent / "data/retrieval_train.json",
    Path(__file__).parent / "data/facts_train.jsonl",
]


def collect(data: Path) -> dict[str, list[dict[str, Any]]]:
    """Per kind: per question, its best 10's inputs and labels, and what it asks."""
    if data.suffix == ".jsonl":
        return collect_facts(data)
    settings = Settings(near_duplicate_threshold=0.0, max_limit=10_000)
    result: dict[str, list[dict[str, Any]]] = {name: [] for name in KINDS}
    with Memory(":memory:", settings=settings) as memory:
        for conversation in locomo.load(data):
            scope = locomo.ingest(memory, conversation)
            asked = [(q.text, q.category, set(q.evidence)) for q in conversation.questions]
            asked += [(a, 0, set()) for a in conversation.abstentions]
            for question, category, evidence in asked:
                for name, options in KINDS.items():
                    hits = memory.search(question, scope, limit=10, **options)
                    result[name].append(_row(question, category, evidence, hits))
            print(f"{conversation.sample_id}: {len(asked)} questions", file=sys.stderr)
    return result


def collect_facts(data: Path) -> dict[str, list[dict[str, Any]]]:
    """:func:`collect` for a set of users' memories (JSON lines: ``user``, ``memories``
    [{``id``, ``text``}], ``queries`` [{``query``, ``relevant``: ids}]), searched plainly."""
    settings = Settings(near_duplicate_threshold=0.0)
    result: dict[str, list[dict[str, Any]]] = {name: [] for name in KINDS if "conv" not in name}
    with Memory(":memory:", settings=settings) as memory:
        for line in data.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            user = json.loads(line)
            scope = f"user:{user['user']}"
            written = memory.write_many(
                [NewEntry(m["text"], scope, metadata={"dia_id": m["id"]}) for m in user["memories"]]
            )
            assert len(written.entries) == len(user["memories"])
            for query in user["queries"]:
                category = 4 if query["relevant"] else 0
                for name, rows in result.items():
                    hits = memory.search(query["query"], scope, limit=10, **KINDS[name])
                    rows.append(_row(query["query"], category, set(query["relevant"]), hits))
    return result


def merged(*found: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """The rows of several collections, by kind."""
    result: dict[str, list[dict[str, Any]]] = {}
    for collection in found:
        for name, rows in collection.items():
            result.setdefault(name, []).extend(rows)
    return result


def cached(data: Path, folder: Path | None) -> dict[str, list[dict[str, Any]]]:
    """:func:`collect`, read from ``folder`` when it was collected there before."""
    if folder is None:
        return collect(data)
    path = folder / f"{data.stem}.pickle"
    if path.exists():
        found: dict[str, list[dict[str, Any]]] = pickle.loads(path.read_bytes())
        return found
    folder.mkdir(parents=True, exist_ok=True)
    found = collect(data)
    path.write_bytes(pickle.dumps(found))
    return found


def _row(question: str, category: int, evidence: set[str], hits: Sequence[Any]) -> dict:
    texts = [h.entry.content for h in hits]
    scores = np.array([h.score for h in hits])
    inputs = relevance.hit_inputs(question, texts, [h.components for h in hits], scores)
    labels = np.array([str(h.entry.metadata["dia_id"]) in evidence for h in hits], float)
    search = relevance.search_inputs(question, texts, inputs) if hits else {}
    return {
        "category": category,
        "inputs": inputs,
        "search": search,
        "labels": labels,
        "relevance": None,
    }


def fitting(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of answerable and abstention questions that found any hit."""
    return [r for r in rows if r["category"] in (0, *locomo.ANSWERABLE) and len(r["labels"])]


def fitted_calibrator(rows: Sequence[dict[str, Any]], names: Sequence[str]) -> np.ndarray:
    """Whether a hit of an answerable question is evidence."""
    kept = [r for r in fitting(rows) if r["category"]]
    x = np.vstack([np.column_stack([r["inputs"][n] for n in names]) for r in kept])
    return fit(x, np.concatenate([r["labels"] for r in kept]))


def fitted_gate(rows: Sequence[dict[str, Any]], names: Sequence[str]) -> np.ndarray:
    """Whether a search's question is answerable, the two classes weighed equally."""
    kept = fitting(rows)
    x = np.array([[r["search"][n][0] for n in names] for r in kept])
    y = np.array([r["category"] != 0 for r in kept], float)
    weights = np.where(y > 0, len(y) / (2 * y.sum()), len(y) / (2 * (len(y) - y.sum())))
    return fit(x, y, weights=weights)


def relevances(
    rows: Sequence[dict[str, Any]], kind: str, fitted: dict[str, np.ndarray], spread: float
) -> None:
    """Each row's relevance by the kind's gate and calibrator, as a search gives it."""
    gate = model(fitted["gate"], GATES[kind])
    calibrator = model(fitted["calibrator"], INPUTS[kind])
    for r in rows:
        found = gate.probability(r["search"])[0] if len(r["labels"]) else 0.0
        evidence = calibrator.probability(r["inputs"])
        r["relevance"] = relevance.combined(found, evidence, spread)


def model(w: np.ndarray, names: Sequence[str]) -> relevance.Model:
    """The model of fitted weights ``w`` (the bias last) over ``names``."""
    return relevance.Model(dict(zip(names, map(float, w[:-1]), strict=True)), float(w[-1]))


def outcome(rows: Sequence[dict[str, Any]], threshold: float) -> dict[str, float]:
    """At ``threshold``: evidence kept, and "nothing relevant" (no hit left) by question."""
    found = np.concatenate([r["labels"] for r in rows])
    shown = np.concatenate([r["relevance"] for r in rows]) >= threshold
    emptied = {r["category"]: [] for r in rows}
    for r in rows:
        emptied[r["category"]].append(not (r["relevance"] >= threshold).any())
    answerable = [e for c, v in emptied.items() if c in locomo.ANSWERABLE for e in v]
    flagged_none = sum(emptied.get(0, [])) + sum(emptied.get(5, []))
    flagged = flagged_none + sum(answerable)
    return {
        "evidence_kept": round(float(shown[found > 0].mean()) if found.any() else 1.0, 3),
        "hits_kept": round(float(shown.mean()), 3),
        "abstention_emptied": round(float(np.mean(emptied[0])), 3) if emptied.get(0) else None,
        "adversarial_emptied": round(float(np.mean(emptied[5])), 3) if emptied.get(5) else None,
        "answerable_emptied": round(float(np.mean(answerable)), 3),
        "precision_of_nothing": round(flagged_none / flagged, 3) if flagged else None,
    }


def chosen_threshold(kinds: dict[str, list[dict[str, Any]]]) -> float:
    """The highest threshold at which, in every kind, at most ``EMPTIED`` of the answerable
    questions lose every hit and at least ``KEEP`` of the evidence is kept."""
    best = 0.0
    for t in np.round(np.arange(0.01, 0.9, 0.01), 2):
        found = [outcome(rows, float(t)) for rows in kinds.values()]
        if all(o["answerable_emptied"] <= EMPTIED and o["evidence_kept"] >= KEEP for o in found):
            best = float(t)
    return best


def chosen_spread(
    kinds: dict[str, list[dict[str, Any]]], weights: dict[str, dict[str, np.ndarray]]
) -> tuple[float, float]:
    """The spread of :data:`SPREADS` (and its threshold) that leaves the most abstention
    questions with no hit, in the mean over kinds; the larger of two within 0.01. The rows
    are left with its relevances."""
    found = {}
    for spread in SPREADS:
        for name, rows in kinds.items():
            relevances(rows, name, weights[name], spread)
        threshold = chosen_threshold(kinds)
        emptied = np.mean([outcome(r, threshold)["abstention_emptied"] for r in kinds.values()])
        print(f"spread {spread}: threshold {threshold}, abstention emptied {emptied:.3f}")
        found[spread] = (float(emptied), threshold)
    most = max(emptied for emptied, _ in found.values())
    spread = next(s for s in SPREADS if found[s][0] >= most - 0.01)
    for name, rows in kinds.items():
        relevances(rows, name, weights[name], spread)
    return spread, found[spread][1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, nargs="+", default=DATA)
    parser.add_argument("--check", type=Path, nargs="*", default=[])
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--cache", type=Path, help="a folder for the collected hits")
    parser.add_argument("--curve", action="store_true", help="print every threshold's outcome")
    args = parser.parse_args()
    train = merged(*(cached(path, args.cache) for path in args.data))
    weights = {
        name: {
            "calibrator": fitted_calibrator(rows, INPUTS[name]),
            "gate": fitted_gate(rows, GATES[name]),
        }
        for name, rows in train.items()
    }
    spread, threshold = chosen_spread(train, weights)
    print(f"spread {spread}, threshold {threshold}")
    for name, rows in train.items():
        print(f"  train {name}: {outcome(rows, threshold)}")
    if args.curve:
        for t in np.round(np.arange(0.02, 0.6, 0.02), 2):
            found = {name: outcome(rows, float(t)) for name, rows in train.items()}
            print(t, {name: tuple(v.values())[:5] for name, v in found.items()})
    for path in args.check:
        checked = cached(path, args.cache)
        for name, rows in checked.items():
            relevances(rows, name, weights[name], spread)
            print(f"  {path.name} {name}: {outcome(rows, threshold)}")
    if args.write:
        _update(
            {
                "calibrated": (
                    f"{datetime.now(UTC):%Y-%m-%d} by benchmarks/calibrate_relevance.py on "
                    f"{', '.join(p.name for p in args.data)}; threshold: the highest at which, "
                    f"in every kind of search, at most {EMPTIED:.0%} of the answerable "
                    f"questions lose every hit of their best 10 and {KEEP:.0%} of the evidence "
                    "found there is kept"
                ),
                "gates": {name: _as_json(w["gate"], GATES[name]) for name, w in weights.items()},
                "calibrators": {
                    name: _as_json(w["calibrator"], INPUTS[name]) for name, w in weights.items()
                },
                "spread": spread,
                "threshold": threshold,
            }
        )


def _as_json(w: np.ndarray, names: Sequence[str]) -> dict[str, Any]:
    return {
        "bias": round(float(w[-1]), 4),
        "weights": {n: round(float(v), 4) for n, v in zip(names, w[:-1], strict=True)},
    }


if __name__ == "__main__":
    main()
