"""What the server tells its operators (``docs/operations.md``): every request's id, duration
and one log line (:class:`ObserveMiddleware`); liveness (``/healthz``) and readiness
(``/readyz``). Nothing here needs ``prometheus_client``: the middleware hands each request to an
observer (``metrics.AppMetrics.observe_request``)."""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..embeddings import Embedder
from ..memory import AsyncMemory
from ..patterns import lazy
from .logs import REQUEST_ID, REQUEST_ID_HEADER, request_id

log = logging.getLogger("memvault.server")
access_log = logging.getLogger("memvault.server.access")

Observer = Callable[[str, str, int, float], None]
"""Called once per request with its method, route template, status and duration (s)."""

METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
"""Methods named as they are in labels and logs; any other is ``OTHER``."""
UNMATCHED = "unmatched"
"""The route of a request no route matches (its raw path is never a label or logged)."""
QUIET_ROUTES = frozenset({"/health", "/healthz", "/readyz", "/metrics"})
"""Probes and scrapes: their successful requests are logged at DEBUG, not INFO."""
READY_TIMEOUT_S = 5.0

_CONVERTER = lazy(r"\{(\w+):\w+\}")


class ObserveMiddleware:
    """Give each HTTP request an id (echoed as ``X-Request-ID`` and on every record logged
    while it runs), then report it once: to ``observe``, and as one line of the
    ``memvault.server.access`` logger."""

    def __init__(self, app: ASGIApp, observe: Observer | None = None) -> None:
        self.app, self.observe = app, observe

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = request_id(_header(scope, REQUEST_ID_HEADER.encode()))
        token = REQUEST_ID.set(rid)
        started, status = time.perf_counter(), 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                header = (REQUEST_ID_HEADER.encode(), rid.encode())
                message["headers"] = [*message.get("headers", ()), header]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            self._report(scope, status, time.perf_counter() - started, rid)
            REQUEST_ID.reset(token)

    def _report(self, scope: Scope, status: int, seconds: float, rid: str) -> None:
        method = scope["method"] if scope["method"] in METHODS else "OTHER"
        route = route_template(scope)
        if self.observe is not None:
            self.observe(method, route, status, seconds)
        level = logging.DEBUG if route in QUIET_ROUTES and status < 400 else logging.INFO
        if access_log.isEnabledFor(level):
            ms = round(seconds * 1000, 3)
            fields = {"request_id": rid, "method": method, "route": route, "status": status}
            extra = fields | {"duration_ms": ms}
            access_log.log(level, "%s %s %d %.1f ms", method, route, status, ms, extra=extra)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value).decode("latin-1")
    return None


def route_template(scope: Scope) -> str:
    """The path template of the route that served (or refused) the request, like
    ``/v1/memories/{entry_id}`` (converters left out); :data:`UNMATCHED` when none matches."""
    route = scope.get("route") or _matching(scope)
    path = getattr(route, "path", None)
    return _without_converters(path) if isinstance(path, str) else UNMATCHED


@functools.lru_cache(maxsize=256)
def _without_converters(path: str) -> str:
    return _CONVERTER.sub(r"{\1}", path)


def _matching(scope: Scope) -> Any:
    """The first route matching the request (refused before routing, e.g. by the guard)."""
    for route in getattr(scope.get("app"), "routes", ()):
        if route.matches(scope)[0] is not Match.NONE:
            return route
    return None


async def healthz(request: Request) -> JSONResponse:
    """Liveness: the process answers. No I/O, no key, nothing about the store."""
    return JSONResponse({"status": "ok"})


async def readyz(request: Request) -> JSONResponse:
    """Readiness: the store answers a trivial read and the embedding model is loaded; else
    503 with the reason (never data). No key needed."""
    memory = request.app.state.memory
    reason = await store_problem(memory) or embedder_problem(memory.embedder)
    if reason is not None:
        return JSONResponse({"status": "unavailable", "reason": reason}, 503)
    return JSONResponse({"status": "ready"})


async def store_problem(memory: AsyncMemory) -> str | None:
    """Why the store is not ready (it fails or hangs on a trivial read: a page of one entry),
    or None."""
    try:
        await asyncio.wait_for(memory.list(limit=1), READY_TIMEOUT_S)
    except TimeoutError:
        return f"the store did not answer within {READY_TIMEOUT_S:g} s"
    except Exception as exc:
        log.warning("not ready: the store failed (%s)", type(exc).__name__)
        return f"the store failed ({type(exc).__name__})"
    return None


def embedder_problem(embedder: Embedder) -> str | None:
    return None if embedder.loaded else "the embedding model is not loaded yet"


async def warm_up(embedder: Embedder) -> None:
    """Load the embedding model in a worker thread (``/readyz`` waits for it)."""
    try:
        await asyncio.to_thread(embedder.load)
    except Exception:
        log.exception("the embedding model failed to load")
