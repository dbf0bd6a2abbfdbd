"""Ingest rate and search latency at 10k and 100k entries in one scope (SQLite, local model).

Run by hand: ``python benchmarks/speed.py [--sizes 10000,100000] [--queries 200] [--json OUT]``.
Each size ingests synthetic sentences through ``Memory.write_many`` (embedding included), then
times ``Memory.search`` (query embedding, BM25, exact dense scoring, fusion, fetching the hits)
against the baseline measured in the same run: brute-force numpy top-10 over the same vectors.
The machine (cores, CPU, Python, numpy and onnxruntime versions) and ``os.getloadavg()`` before
and after each size are recorded with the figures: compare runs only on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from conditions import load_average, machine

from memvault import Memory, NewEntry, Settings

SUBJECTS = "Alice Bob Carol Dave Erin Frank Grace Heidi Ivan Judy Mallory Niaj Olivia".split()
VERBS = "likes visited prefers bought studied fixed planned reviewed painted cooked".split()
OBJECTS = [
    "green tea",
    "the Berlin office",
    "dark mode",
    "a red bicycle",
    "Spanish grammar",
    "the CI pipeline",
    "a trip to Lisbon",
    "the Q3 budget",
    "a lake at sunrise",
    "mushroom risotto",
    "the API design",
    "a jazz concert",
    "the database index",
    "a chess opening",
    "the garden fence",
]
WHEN = "on Monday|last week|in 2023|every morning|after lunch|before the launch|yesterday".split(
    "|"
)


def sentence(rng: random.Random, n: int) -> str:
    return (
        f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} "
        f"{rng.choice(WHEN)} (note {n})"
    )


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


def measure(size: int, queries: int, workdir: Path) -> dict[str, Any]:
    load_before = load_average()
    rng = random.Random(size)
    settings = Settings(near_duplicate_threshold=0.0, sqlite_synchronous="NORMAL")
    store = f"sqlite:///{workdir / f'speed-{size}.db'}"
    with Memory(store, settings=settings) as memory:
        started = time.perf_counter()
        for start in range(0, size, 1000):
            batch = [
                NewEntry(sentence(rng, n), "workspace:bench")
                for n in range(start, min(start + 1000, size))
            ]
            memory.write_many(batch)
        ingest_s = time.perf_counter() - started
        questions = [sentence(rng, -1).rsplit(" (", 1)[0] for _ in range(queries)]
        started = time.perf_counter()
        memory.search(questions[0], "workspace:bench")
        cold_ms = (time.perf_counter() - started) * 1000
        search_ms = []
        for question in questions:
            started = time.perf_counter()
            memory.search(question, "workspace:bench", limit=10)
            search_ms.append((time.perf_counter() - started) * 1000)
        backend = memory.backend
        tables = backend._cache._tables  # type: ignore[attr-defined]
        matrix = next(iter(tables.values())).matrix
        query_vectors = memory.embedder.embed(questions)
    baseline_ms = []
    for vector in query_vectors:
        started = time.perf_counter()
        scores = matrix @ vector
        top = np.argpartition(-scores, 10)[:10]
        top[np.argsort(-scores[top])]
        baseline_ms.append((time.perf_counter() - started) * 1000)
    return {
        "entries": size,
        "ingest_s": round(ingest_s, 1),
        "ingest_per_s": round(size / ingest_s),
        "search_cold_ms": round(cold_ms, 1),
        "search_p50_ms": round(statistics.median(search_ms), 2),
        "search_p99_ms": round(percentile(search_ms, 99), 2),
        "numpy_topk_p50_ms": round(statistics.median(baseline_ms), 2),
        "numpy_topk_p99_ms": round(percentile(baseline_ms, 99), 2),
        "search_over_numpy_p50": round(
            statistics.median(search_ms) / statistics.median(baseline_ms), 1
        ),
        "load_before": load_before,
        "load_after": load_average(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--json", dest="json_out")
    args = parser.parse_args()
    report: dict[str, Any] = {"machine": machine(), "results": []}
    print(json.dumps(report["machine"]), file=sys.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            report["results"].append(measure(size, args.queries, Path(tmp)))
            print(json.dumps(report["results"][-1]), file=sys.stderr)
    print(json.dumps(report, indent=2))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
