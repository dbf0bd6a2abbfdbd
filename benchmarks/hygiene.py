"""The hygiene report's time on 100,000 entries in one scope (SQLite), and the recall of its
near-duplicate shortcut at that size.

Run by hand: ``python benchmarks/hygiene.py [--entries 100000] [--runs 3] [--json OUT]``.
The store is written once (in a temporary folder) through ``Memory.write_many``: sentences as
``benchmarks/speed.py`` makes them (10 % with a date), 1 % junk, 1 % holding a secret or PII,
and vectors
from a clustered synthetic generator (1,000 centres, 384-d, as ``benchmarks/scale.py``) — the
packaged model would take most of an hour to embed 100k texts, and the report reads stored
vectors, never embeds. 1 % of the entries are planted near-duplicates of another (cosine
~0.9 with it, other words): the recall of the locality-sensitive hashing is the share of those
pairs it groups. Then ``hygiene()`` is timed ``--runs`` times in a new ``Memory`` (p50), with
``os.getloadavg()`` before and after.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from conditions import load_average, machine

from memvault import Memory, NewEntry, Settings
from memvault.embeddings import Embedder, Vectors
from memvault.trust.hygiene_rules import NEAR_DUPLICATE_COSINE as NEAR
from memvault.trust.hygiene_rules import near_duplicate_groups

DIM = 384
SUBJECTS = "Alice Bob Carol Dave Erin Frank Grace Heidi Ivan Judy Mallory Niaj Olivia".split()
VERBS = "likes visited prefers bought studied fixed planned reviewed painted cooked".split()
OBJECTS = (
    "green tea|the Berlin office|dark mode|a red bicycle|the CI pipeline|a jazz concert".split("|")
)
JUNK = ["ok", "thanks!", "n/a", "Error: connection refused (ECONNREFUSED)"]
SECRETS = [
    "api_key = 'Zq8rT2vLx9KmP4wN7bY3cJ6h'",
    "mail me at ann.lee@example.org",
    "+1 415 555 2671",
]


class IndexEmbedder(Embedder):
    """Maps a text ending ``(note <n>)`` to the prepared vector ``n``, any other to a vector of
    its own (a benchmark device)."""

    name = "hygiene-benchmark-vectors"
    dimension = DIM
    batch_size = 10_000

    def __init__(self, vectors: Vectors) -> None:
        self.vectors = vectors

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        return np.vstack([self._vector(t) for t in texts])

    def _vector(self, text: str) -> npt.NDArray[np.float32]:
        if text.endswith(")") and "(note " in text:
            return self.vectors[int(text.rsplit("(note ", 1)[1][:-1])]
        seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
        vector = np.random.default_rng(seed).normal(size=DIM).astype(np.float32)
        return vector / np.linalg.norm(vector)


def make_vectors(rows: int, planted: int, seed: int = 7) -> tuple[Vectors, list[tuple[int, int]]]:
    """Clustered unit vectors; the last ``planted`` rows each a near-duplicate of an earlier
    one (cosine ~0.9)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(1000, DIM)).astype(np.float32)
    docs = centres[rng.integers(0, 1000, rows)] + 0.6 * rng.normal(size=(rows, DIM)).astype(
        np.float32
    )
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    pairs = []
    for i in range(rows - planted, rows):
        source = int(rng.integers(0, rows - planted))
        noise = rng.normal(size=DIM).astype(np.float32)
        noise /= np.linalg.norm(noise)
        docs[i] = docs[source] + 0.45 * noise
        docs[i] /= np.linalg.norm(docs[i])
        pairs.append((source, i))
    return docs, pairs


def texts(rows: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    made = []
    for n in range(rows):
        roll = rng.random()
        if roll < 0.01:
            made.append(rng.choice(JUNK))
        elif roll < 0.02:
            made.append(f"{rng.choice(SUBJECTS)} said: {rng.choice(SECRETS)}")
        else:
            subject, verb, thing = rng.choice(SUBJECTS), rng.choice(VERBS), rng.choice(OBJECTS)
            when = (
                f" on 2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}" if roll < 0.12 else ""
            )
            made.append(f"{subject} {verb} {thing}{when} (note {n})")
    return made


def build(url: str, rows: int, vectors: Vectors) -> float:
    settings = Settings(
        near_duplicate_threshold=0, skip_error_responses=False, sqlite_synchronous="NORMAL"
    )
    started = time.perf_counter()
    with Memory(url, settings=settings, embedder=IndexEmbedder(vectors)) as memory:
        every = texts(rows)
        for start in range(0, rows, 5_000):
            memory.write_many([NewEntry(t, "workspace:big") for t in every[start : start + 5_000]])
    return time.perf_counter() - started


def recall(vectors: Vectors, pairs: list[tuple[int, int]]) -> dict[str, Any]:
    """The share of the planted pairs the report's grouping (the same function, on the same
    vectors) puts in one group, and its time alone."""
    started = time.perf_counter()
    groups = near_duplicate_groups([str(i) for i in range(len(vectors))], vectors, NEAR)
    seconds = time.perf_counter() - started
    group_of = {int(i): n for n, group in enumerate(groups) for i in group}
    found = sum(1 for a, b in pairs if a in group_of and group_of.get(a) == group_of.get(b))
    return {
        "planted": len(pairs),
        "grouped": found,
        "recall": round(found / len(pairs), 4),
        "groups": len(groups),
        "seconds": round(seconds, 2),
    }


def measure(rows: int, runs: int, workdir: Path) -> dict[str, Any]:
    planted = rows // 100
    vectors, pairs = make_vectors(rows, planted)
    url = f"sqlite:///{workdir / 'hygiene.db'}"
    build_s = build(url, rows, vectors)
    load_before = load_average()
    times = []
    with Memory(url, embedder=IndexEmbedder(vectors)) as memory:
        for _ in range(runs):
            started = time.perf_counter()
            report = memory.hygiene()
            times.append(time.perf_counter() - started)
    load_after = load_average()
    (scope,) = report.scopes
    return {
        "entries": rows,
        "build_s": round(build_s, 1),
        "hygiene_s": [round(t, 2) for t in times],
        "hygiene_p50_s": round(statistics.median(times), 2),
        "load_before": load_before,
        "load_after": load_after,
        "counts": {
            "entries": scope.entries,
            "near_duplicates": scope.near_duplicates.count,
            "junk": scope.junk.count,
            "secrets": scope.secrets.count,
            "stale": scope.stale.count,
        },
        "near_duplicate_recall": recall(vectors, pairs),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        result = {"machine": machine(), **measure(args.entries, args.runs, Path(workdir))}
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    sys.exit(main())
