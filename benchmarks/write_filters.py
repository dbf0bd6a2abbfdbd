"""Precision and recall of the write-time decisions on hand-labelled sets.

Run by hand: ``python benchmarks/write_filters.py [--json OUT]``.

Each set exists twice: ``data/*.jsonl`` (development: the rules were tuned on it) and
``data/holdout_*.jsonl`` (written separately, by someone who saw neither the rules nor the
development set).

- ``benchmarks/data/near_duplicates.jsonl``: pairs ``{"a", "b", "same", "kind"}``; "same" means a
  memory store should keep one of the two. Each rule decides "merge" or not; precision is the
  share of merges that are right, recall the share of true restatements merged. The rules: the
  one before issue 9 (packaged model cosine ≥ 0.95 and the same numbers), memvault's (cosine
  ≥ threshold and :func:`memvault.store.duplicates.restates`) at several thresholds, and seed
  001's findings tier (word-set Jaccard ≥ 0.5).
- ``benchmarks/data/error_responses.jsonl``: texts ``{"text", "error", "kind"}``; each filter
  decides "refuse" or not. Reported: false positives (legitimate memories refused) and recall
  (error outputs refused), for the filter before issue 9 and memvault's.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memvault.embeddings.local import LocalEmbedder
from memvault.retrieval.filters import is_error_response
from memvault.store.duplicates import restates

DATA = Path(__file__).parent / "data"
THRESHOLDS = (0.0, 0.8, 0.85, 0.9, 0.95)

_OLD_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_OLD_ERROR = re.compile(
    r"""^\s*(?:
        Traceback\ \(most\ recent\ call\ last\)
      | (?:[A-Za-z_.]*Error|[A-Za-z_.]*Exception|ERROR|FATAL|Error|Exception)\s*[:!]
      | HTTP/\d(?:\.\d)?\ [45]\d\d\b
      | \{\s*"error"\s*:
      | (?:[45]\d\d)\ (?:Internal\ Server\ Error|Bad\ Gateway|Service\ Unavailable|Not\ Found)
    )""",
    re.VERBOSE,
)
"""The error-response filter before issue 9, kept here as the baseline."""


def load(name: str) -> list[dict[str, Any]]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


SETS = {"dev": "", "held-out": "holdout_"}
"""The development set (the rules were tuned on it) and a held-out set written separately."""


def jaccard(a: str, b: str) -> float:
    def words(text: str) -> set[str]:
        folded = unicodedata.normalize("NFKC", text).casefold()
        return set(re.sub(r"[^\w\s]", " ", folded).split())

    left, right = words(a), words(b)
    return len(left & right) / len(left | right) if left and right else 0.0


def scored(decide: Sequence[bool], truth: Sequence[bool], kinds: Sequence[str]) -> dict[str, Any]:
    """Precision, recall and the kinds of the mistakes of one decision rule."""
    tp = sum(d and t for d, t in zip(decide, truth, strict=True))
    fp = sum(d and not t for d, t in zip(decide, truth, strict=True))
    fn = sum(t and not d for d, t in zip(decide, truth, strict=True))
    wrong: dict[str, int] = defaultdict(int)
    for d, t, kind in zip(decide, truth, kinds, strict=True):
        if d != t:
            wrong[f"{'false ' + ('positive' if d else 'negative')}: {kind}"] += 1
    return {
        "precision": round(tp / (tp + fp), 3) if tp + fp else None,
        "recall": round(tp / (tp + fn), 3) if tp + fn else None,
        "true_positives": tp,
        "false_positives": fp,
        "false_negatives": fn,
        "mistakes": dict(sorted(wrong.items(), key=lambda kv: -kv[1])),
    }


def near_duplicates(prefix: str) -> dict[str, Any]:
    pairs = load(f"{prefix}near_duplicates.jsonl")
    embedder = LocalEmbedder()
    a = embedder.embed([p["a"] for p in pairs])
    b = embedder.embed([p["b"] for p in pairs])
    cosine = np.einsum("ij,ij->i", a, b)
    truth = [bool(p["same"]) for p in pairs]
    kinds = [str(p.get("kind", "?")) for p in pairs]
    same_words = [restates(p["a"], p["b"]) for p in pairs]
    rules: dict[str, Callable[[int], bool]] = {
        "before: cosine >= 0.95, same numbers": lambda i: bool(
            cosine[i] >= 0.95
            and _OLD_NUMBER.findall(pairs[i]["a"]) == _OLD_NUMBER.findall(pairs[i]["b"])
        ),
        "seed 001 findings: word-set Jaccard >= 0.5": lambda i: (
            jaccard(pairs[i]["a"], pairs[i]["b"]) >= 0.5
        ),
    }
    for t in THRESHOLDS:
        name = f"memvault: cosine >= {t} and restates" if t else "memvault: restates alone"
        rules[name] = lambda i, t=t: bool(cosine[i] >= t and same_words[i])
    results = {n: scored([r(i) for i in range(len(pairs))], truth, kinds) for n, r in rules.items()}
    return {"pairs": len(pairs), "same": sum(truth), "rules": results}


def error_responses(prefix: str) -> dict[str, Any]:
    rows = load(f"{prefix}error_responses.jsonl")
    truth = [bool(r["error"]) for r in rows]
    kinds = [str(r.get("kind", "?")) for r in rows]
    filters = {
        "before issue 9": lambda text: bool(_OLD_ERROR.match(text)),
        "memvault": is_error_response,
    }
    results = {}
    for name, refuse in filters.items():
        result = scored([refuse(r["text"]) for r in rows], truth, kinds)
        legit = len(truth) - sum(truth)
        result["false_positive_rate"] = round(result["false_positives"] / legit, 3)
        results[name] = result
    return {"texts": len(rows), "errors": sum(truth), "filters": results}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", help="Also write the results to this file.")
    args = parser.parse_args()
    started = time.perf_counter()
    result: dict[str, Any] = {"load_average": os.getloadavg()}
    for name, prefix in SETS.items():
        if (DATA / f"{prefix}near_duplicates.jsonl").exists():
            result[f"near_duplicates ({name})"] = near_duplicates(prefix)
            result[f"error_responses ({name})"] = error_responses(prefix)
    result["seconds"] = round(time.perf_counter() - started, 1)
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
