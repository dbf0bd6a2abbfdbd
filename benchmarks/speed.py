"""Ingest rate, first search and search latency at 10k, 100k and 300k entries in one scope and
100k spread over 1,000 scopes (SQLite, the packaged model), with same-run baselines.

Run by hand: ``python benchmarks/speed.py [--cases 10000,100000,300000,100000/1000]
[--queries 200] [--json OUT]``. A case ``N/S`` spreads N entries over S scopes. Each case:

- ingests synthetic sentences through ``Memory.write_many`` in batches of 1,000 with the default
  settings (chunking, embedding, the near-duplicate probe, SQLite, the audit log), closing
  included (it saves the scope indexes; also reported alone), and the
  *embedder's ceiling* on the same texts (the bare model, ``LocalEmbedder.embed``) on a sample,
  before and after the ingest (their mean: the machine is noisy);
- reopens the store in a new ``Memory`` and times the first search (the scope index read from
  its file, or built), then ``--queries`` searches (query embedding included), p50 and p99;
- measures in the same run the exact baseline (a numpy top-10 over the scope's vectors) and the
  recall@10 of the search against the same ranking computed over every entry of the scope
  (no coarse pass, every entry a candidate);
- writes 100 entries one ``write`` at a time into the full scope, against the bare model
  embedding 100 such texts one at a time (a write's cost beyond its embedding);
- times a search right after each of 20 updates (tags, metadata) and 20 deletions in the
  scope (its index caught up with the change, not rebuilt);
- times, question by question in turn, a plain search, a search while the hits of each are
  reinforced (uses stored in batches in the background) and a search with ``decay=True``;
- records the process's peak RSS and ``os.getloadavg()`` before and after.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from conditions import load_average, machine

from memvault import Memory, NewEntry, Settings
from memvault.embeddings.local import LocalEmbedder
from memvault.store import scope_index

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
CEILING_SAMPLE = 5_000


def sentence(rng: random.Random, n: int) -> str:
    return (
        f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} "
        f"{rng.choice(WHEN)} (note {n})"
    )


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


def _ingest(url: str, texts: list[str], scopes: int) -> tuple[float, float]:
    """Seconds to write ``texts`` and close the store (which saves the scope indexes), and
    the seconds of the close alone."""
    memory = Memory(url, settings=Settings(sqlite_synchronous="NORMAL"))
    memory.embedder.load()
    started = time.perf_counter()
    for start in range(0, len(texts), 1000):
        memory.write_many(
            [
                NewEntry(texts[n], f"workspace:bench-{n % scopes}")
                for n in range(start, min(start + 1000, len(texts)))
            ]
        )
    closing = time.perf_counter()
    memory.close()
    done = time.perf_counter()
    return done - started, done - closing


def _ceiling(texts: list[str]) -> float:
    """Texts per second of the bare model on a sample of the same texts."""
    model = LocalEmbedder()
    model.load()
    sample = texts[:CEILING_SAMPLE]
    started = time.perf_counter()
    model.embed(sample)
    return len(sample) / (time.perf_counter() - started)


def _single_writes(url: str, texts: list[str], scope: str) -> dict[str, Any]:
    """``write`` one entry at a time into the full scope, against the bare model embedding
    one text of the same kind at a time: what a write costs beyond its embedding."""
    model = LocalEmbedder()
    model.load()
    embed_ms = []
    for text in texts[1::2]:
        started = time.perf_counter()
        model.embed([text])
        embed_ms.append((time.perf_counter() - started) * 1000)
    write_ms = []
    with Memory(url, settings=Settings(sqlite_synchronous="NORMAL")) as memory:
        memory.embedder.load()
        memory.write(texts[0], scope=scope)  # the scope's index: loaded, not timed
        for text in texts[2::2]:
            started = time.perf_counter()
            memory.write(text, scope=scope)
            write_ms.append((time.perf_counter() - started) * 1000)
    embed_p50 = statistics.median(embed_ms)
    return {
        "write_p50_ms": round(statistics.median(write_ms), 2),
        "write_p99_ms": round(percentile(write_ms, 99), 2),
        "embed_one_p50_ms": round(embed_p50, 2),
        "write_beyond_embedding_p50_ms": round(statistics.median(write_ms) - embed_p50, 2),
    }


def _after_changes(url: str, questions: list[str], scope: str) -> dict[str, Any]:
    """A search right after a change to the scope (its index caught up, not rebuilt): after
    an update of tags and metadata, and after a deletion, 20 of each."""
    after: dict[str, list[float]] = {"update": [], "delete": []}
    with Memory(url) as memory:
        memory.embedder.load()
        ids = [h.entry.id for h in memory.search(questions[0], scope, limit=40)]
        for n, entry_id in enumerate(ids[:40]):
            change = "update" if n % 2 else "delete"
            if change == "update":
                memory.update(entry_id, tags=["changed"], metadata={"n": n})
            else:
                memory.delete(entry_id)
            started = time.perf_counter()
            memory.search(questions[n + 1], scope, limit=10)
            after[change].append((time.perf_counter() - started) * 1000)
    return {f"search_after_{k}_p50_ms": round(statistics.median(v), 2) for k, v in after.items()}


def _searches(url: str, questions: list[str], scope: str) -> dict[str, Any]:
    with Memory(url) as memory:
        memory.embedder.load()
        memory.embedder.embed(["warm up the model, not the scope"])
        started = time.perf_counter()
        memory.search(questions[0], scope)
        first_ms = (time.perf_counter() - started) * 1000
        fast, times = [], []
        for question in questions:
            started = time.perf_counter()
            hits = memory.search(question, scope, limit=10)
            times.append((time.perf_counter() - started) * 1000)
            fast.append([h.entry.id for h in hits])
        uses = _decay_and_uses(memory, questions, scope)
        table = next(iter(memory.backend._cache._items.values()))[1]  # type: ignore[attr-defined]
        vectors = memory.embedder.embed(questions)
        exhaustive = _exhaustive(memory, questions, scope)
    recall = [len(set(a) & set(b)) / max(len(b), 1) for a, b in zip(fast, exhaustive, strict=True)]
    baseline = []
    for vector in vectors:
        started = time.perf_counter()
        scores = table.matrix @ vector
        top = np.argpartition(-scores, 10)[:10]
        top[np.argsort(-scores[top])]
        baseline.append((time.perf_counter() - started) * 1000)
    return {
        "first_search_ms": round(first_ms, 1),
        "search_p50_ms": round(statistics.median(times), 2),
        "search_p99_ms": round(percentile(times, 99), 2),
        "numpy_top10_p50_ms": round(statistics.median(baseline), 2),
        "numpy_top10_p99_ms": round(percentile(baseline, 99), 2),
        "recall_at_10_vs_exhaustive": round(float(np.mean(recall)), 4),
        "scope_entries": len(table.entry_ids),
        **uses,
    }


def _decay_and_uses(memory: Memory, questions: list[str], scope: str) -> dict[str, Any]:
    """Search p50 three ways, question by question in turn (one machine's noise for all):
    plain; plain while each search's hits are reinforced after it (uses counted, stored in
    batches by a timer thread); with ``decay=True`` (the uses read with the hits). And what
    reinforcing ten hits costs the caller."""
    plain, while_used, decayed, reinforce = [], [], [], []
    for question in questions:
        for kind, times in (("plain", plain), ("used", while_used), ("decay", decayed)):
            started = time.perf_counter()
            hits = memory.search(question, scope, limit=10, decay=kind == "decay")
            times.append((time.perf_counter() - started) * 1000)
            if kind == "used":
                started = time.perf_counter()
                memory.reinforce([h.entry.id for h in hits])
                reinforce.append((time.perf_counter() - started) * 1000)
    p50 = statistics.median
    return {
        "search_p50_interleaved_ms": round(p50(plain), 2),
        "search_p50_while_uses_stored_ms": round(p50(while_used), 2),
        "search_p50_decay_ms": round(p50(decayed), 2),
        "decay_over_plain": round(p50(decayed) / p50(plain), 3),
        "uses_over_plain": round(p50(while_used) / p50(plain), 3),
        "reinforce_10_p50_ms": round(p50(reinforce), 2),
    }


def _exhaustive(memory: Memory, questions: list[str], scope: str) -> list[list[str]]:
    """The same searches with every entry a candidate and exact cosines throughout."""
    backend: Any = memory.backend
    kept = dict(backend._cache._items)
    saved = scope_index.ALL_CANDIDATES
    try:
        scope_index.ALL_CANDIDATES = 10**12
        for key, (version, table) in kept.items():
            backend._cache.put(key, version, dataclasses.replace(table, coarse=None))
        return [[h.entry.id for h in memory.search(q, scope, limit=10)] for q in questions]
    finally:
        scope_index.ALL_CANDIDATES = saved


def measure(entries: int, scopes: int, queries: int, workdir: Path) -> dict[str, Any]:
    load_before = load_average()
    rng = random.Random(entries + scopes)
    texts = [sentence(rng, n) for n in range(entries)]
    questions = [sentence(rng, -1).rsplit(" (", 1)[0] for _ in range(queries)]
    singles = [sentence(rng, entries + n) for n in range(201)]
    url = f"sqlite:///{workdir / f'speed-{entries}-{scopes}.db'}"
    before = _ceiling(texts)
    ingest_s, close_s = _ingest(url, texts, scopes)
    after = _ceiling(texts)
    ceiling = (before + after) / 2
    rate = entries / ingest_s
    return {
        "entries": entries,
        "scopes": scopes,
        "ingest_s": round(ingest_s, 1),
        "close_s": round(close_s, 2),
        "ingest_per_s": round(rate),
        "embedder_ceiling_per_s": round(ceiling),
        "embedder_ceiling_before_after": [round(before), round(after)],
        "ingest_share_of_ceiling": round(rate / ceiling, 3),
        **_searches(url, questions, "workspace:bench-0"),
        **_single_writes(url, singles, "workspace:bench-0"),
        **_after_changes(url, questions, "workspace:bench-0"),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "load_before": load_before,
        "load_after": load_average(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", default="10000,100000,300000,100000/1000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--json", dest="json_out")
    args = parser.parse_args()
    report: dict[str, Any] = {"machine": machine(), "results": []}
    print(json.dumps(report["machine"]), file=sys.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        for case in args.cases.split(","):
            entries, _, scopes = case.partition("/")
            result = measure(int(entries), int(scopes or 1), args.queries, Path(tmp))
            report["results"].append(result)
            print(json.dumps(result), file=sys.stderr)
    print(json.dumps(report, indent=2))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
