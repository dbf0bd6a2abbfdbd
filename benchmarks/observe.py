"""What request ids, metrics and the request log cost: the same app with and without
``ObserveMiddleware``, in the same run, called in-process over ASGI (no sockets, so the
middleware is not hidden behind HTTP parsing).

Run by hand: ``python benchmarks/observe.py [--requests 20000] [--rounds 5]``. Each round times
``GET /healthz`` (no I/O) then ``GET /v1/count`` (one SQLite query) on both apps, in alternating
order; the figures are medians of the rounds. ``--log`` also writes every request line (JSON)
to /dev/null, as ``memvault serve --log-format json --log-level debug`` would.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

from starlette.applications import Starlette

from memvault import AsyncMemory, Settings
from memvault.server import create_app
from memvault.server.logs import JsonFormatter, RequestIdFilter
from memvault.testing import HashEmbedder

App = Callable[..., Any]


def without_observation(app: Starlette) -> Starlette:
    """The same app, its middleware stack rebuilt without :class:`ObserveMiddleware`."""
    app.user_middleware = [m for m in app.user_middleware if "observe" not in m.kwargs]
    app.middleware_stack = None
    return app


async def call(app: App, path: str) -> int:
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(b"host", b"127.0.0.1:8765")],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8765),
        "app": app,
    }
    status = 0

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    await app(scope, receive, send)
    return status


async def per_request_us(app: App, path: str, requests: int) -> float:
    started = time.perf_counter()
    for _ in range(requests):
        await call(app, path)
    return (time.perf_counter() - started) / requests * 1e6


async def measure(requests: int, rounds: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as home:

        def memory() -> AsyncMemory:
            store = os.path.join(home, f"{len(os.listdir(home))}.db")
            return AsyncMemory(store, settings=Settings(), embedder=HashEmbedder())

        apps = {
            "observed": create_app(memory(), owns_memory=True),
            "plain": without_observation(create_app(memory(), owns_memory=True)),
        }
        for app in apps.values():
            for path in ("/healthz", "/v1/count"):
                assert await call(app, path) == 200, path
        times: dict[str, dict[str, list[float]]] = {
            p: {n: [] for n in apps} for p in ("/healthz", "/v1/count")
        }
        load = os.getloadavg()
        for turn in range(rounds):
            for path, by_app in times.items():
                for name, app in sorted(apps.items(), reverse=turn % 2 == 1):  # alternate
                    by_app[name].append(await per_request_us(app, path, requests))
        figures: dict[str, Any] = {"loadavg_before": load, "loadavg_after": os.getloadavg()}
        for path, by_app in times.items():
            observed, plain = (statistics.median(by_app[n]) for n in ("observed", "plain"))
            figures[path] = {
                "observed_us": round(observed, 1),
                "plain_us": round(plain, 1),
                "overhead_us": round(observed - plain, 1),
                "ratio": round(observed / plain, 3),
            }
        for app in apps.values():
            app.state.memory.close()
        return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--log", action="store_true", help="log every request as JSON")
    options = parser.parse_args()
    if options.log:
        handler = logging.FileHandler(os.devnull)
        handler.setFormatter(JsonFormatter())
        handler.addFilter(RequestIdFilter())
        logger = logging.getLogger("memvault")
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG)
    figures = asyncio.run(measure(options.requests, options.rounds))
    print(json.dumps({"log": options.log, **figures}, indent=2))


if __name__ == "__main__":
    main()
