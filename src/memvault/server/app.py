"""The REST API (Starlette): one route per store operation, JSON in and out.

Errors are translated here, by type, into HTTP statuses with a JSON body
``{"error": {"type": …, "message": …}}``; nothing below this module knows about HTTP. Every
request gets an id and is timed and logged (:mod:`.observe`), then passes the
:class:`~.guard.Guard` (Host, Origin, content type; CORS headers).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from http import HTTPStatus
from typing import Any

from starlette.applications import Starlette
from starlette.datastructures import Headers, MutableHeaders
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route as Path
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .. import __version__
from ..api import CATALOGUE
from ..config import Settings
from ..environment import SERVE_HOST
from ..errors import (
    MemvaultError,
    details,
)
from ..memory import AsyncMemory
from . import facilities, learning, store, ui
from .auth import AGENT_HEADER, KeyRing, actor_of, agent_of
from .guard import Guard
from .observe import ObserveMiddleware, healthz, readyz, warm_up
from .request import HttpError
from .routes import Call, Route, openapi, served
from .statuses import headers_of, status_of

log = logging.getLogger("memvault.server")

BOUND_HOST_ENV = SERVE_HOST
"""Set by ``memvault serve`` to the address it listens on (a name of the server for the Host
check); read by :func:`app_from_env`."""


def printable(value: Any) -> Any:
    """A string as valid UTF-8: a lone surrogate (from a JSON ``\\ud800`` escape quoted in a
    message) becomes the text ``\\ud800``, so no input can make an error fail to render."""
    return value.encode("utf-8", "backslashreplace").decode() if isinstance(value, str) else value


def error_response(
    status: int, kind: str, message: str, headers: Mapping[str, str] | None = None, **extra: Any
) -> JSONResponse:
    error = {
        key: printable(value) for key, value in {"type": kind, "message": message, **extra}.items()
    }
    return JSONResponse({"error": error}, status, headers)


def _memory_for(request: Request) -> AsyncMemory:
    """The store view of the request's tenant (the API key's, or the server's own), acting as
    the key (or the server) and the agent the request names."""
    memory: AsyncMemory = request.app.state.memory
    keys: KeyRing = request.app.state.keys
    agent = agent_of(request.headers.get(AGENT_HEADER))
    if not keys.enabled:
        return memory if agent is None else memory.as_actor(actor_of(memory.actor, agent))
    key = keys.key_for(request.headers.get("authorization"))
    if key is None:
        raise HttpError(401, "Unauthorized", "a valid 'Authorization: Bearer <key>' is required")
    return key.view(memory, agent)


def endpoint(route: Route) -> Callable[[Request], Awaitable[JSONResponse]]:
    """Wrap a route's handler with authentication, argument checks and error translation."""

    async def run(request: Request) -> JSONResponse:
        try:
            memory = _memory_for(request)
            call = Call(dict(request.path_params), await route.arguments(request))
            status, body = await route.handler(memory, call)
            return JSONResponse(body, status)
        except HttpError as exc:
            return error_response(exc.status, exc.kind, str(exc))
        except MemvaultError as exc:  # with what it carries: a filter's reason, an id…
            return error_response(
                status_of(exc), type(exc).__name__, str(exc), headers_of(exc), **details(exc)
            )
        except Exception:
            log.exception("unexpected error in %s %s", request.method, route.path)  # no ids
            return error_response(500, "InternalError", "internal error; see the server log")

    return run


async def http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own refusals (no such path, method not allowed) as JSON errors."""
    assert isinstance(exc, HTTPException)
    kind = HTTPStatus(exc.status_code).phrase.title().replace(" ", "").replace("-", "")
    return error_response(exc.status_code, kind, exc.detail, exc.headers)


class GuardMiddleware:
    """Refuse what a browser could forge (:class:`Guard`), answer CORS preflights of allowed
    origins and give every answer to them CORS headers; for every route, /health included."""

    def __init__(self, app: ASGIApp, guard: Guard) -> None:
        self.app, self.guard = app, guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method, headers, page_origin = scope["method"], Headers(scope=scope), ui.page_origin(scope)
        refusal = self.guard.refusal(method, headers, page_origin)
        if page_origin is not None:  # an inspector path: every answer is the inspector's
            send = ui.secured(send)
        preflight = self.guard.preflight(method, headers)
        if refusal is None and preflight is not None:
            await Response(status_code=204, headers=preflight)(scope, receive, send)
            return
        origin = self.guard.allowed_origin(headers.get("origin"))
        if origin is not None:
            send = _with_cors(send, origin)
        if refusal is not None:
            await error_response(*refusal)(scope, receive, send)
            return
        await self.app(scope, receive, send)


def _with_cors(send: Send, origin: str) -> Send:
    """``send``, adding the CORS headers of an allowed ``origin`` to the answer."""

    async def send_with_cors(message: Message) -> None:
        if message["type"] == "http.response.start":
            answer = MutableHeaders(scope=message)
            answer["access-control-allow-origin"] = origin
            answer.add_vary_header("Origin")
        await send(message)

    return send_with_cors


async def health(request: Request) -> JSONResponse:
    """Liveness, without authentication and without touching the store."""
    return JSONResponse({"status": "ok", "version": __version__})


async def openapi_document(request: Request) -> JSONResponse:
    """The OpenAPI 3.1 description of every route, built from the routes themselves."""
    keys: KeyRing = request.app.state.keys
    return JSONResponse(openapi(ROUTES, __version__, keys.enabled))


ROUTES = (
    *store.ROUTES,
    *facilities.ROUTES,
    *learning.ROUTES,
    *(served(operation) for operation in CATALOGUE if operation.derived),
)


def create_app(
    memory: AsyncMemory,
    *,
    api_keys: str = "",
    max_request_bytes: int = 16 * 1024 * 1024,
    allowed_hosts: str = "",
    allowed_origins: str = "",
    bound_host: str | None = None,
    owns_memory: bool = False,
    ui_secret: str | None = None,
) -> Starlette:
    """The ASGI app serving ``memory``. With ``api_keys`` (``tenant:key,…``) every request
    needs a Bearer key, which selects its tenant; without, all requests act in the memory's
    tenant. ``owns_memory`` closes the store when the app shuts down.

    The ``Host`` header must be a loopback name, ``bound_host`` (the address listened on; an
    all-interfaces address accepts any IP address) or one of ``allowed_hosts`` (comma-separated,
    ``*``: any); web pages may call only from ``allowed_origins`` (comma-separated origins,
    which alone get CORS headers). ``ui_secret`` signs the web inspector's cookies (``/ui``,
    ``docs/inspector.md``; random when None).
    """
    from .metrics import AppMetrics, metrics  # prometheus_client: [server], not [mcp]
    from .retention import sweep_retention

    keys = KeyRing.parse(api_keys)
    guard = Guard.parse(allowed_hosts, allowed_origins, bound_host)
    observed = AppMetrics(memory, keys)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        warming = asyncio.create_task(warm_up(memory.embedder))
        sweeping = asyncio.create_task(sweep_retention(memory, keys.served(memory.tenant)))
        try:
            yield
        finally:
            sweeping.cancel()
            await asyncio.gather(sweeping, return_exceptions=True)
            await warming
            if owns_memory:
                memory.close()

    routes = [
        Path("/health", health, methods=["GET"]),
        Path("/healthz", healthz, methods=["GET"]),
        Path("/readyz", readyz, methods=["GET"]),
        Path("/metrics", metrics, methods=["GET"]),
        Path("/openapi.json", openapi_document, methods=["GET"]),
        *(Path(r.path, endpoint(r), methods=[r.method]) for r in ROUTES),
        *ui.routes(ui_secret),
    ]
    app = Starlette(
        routes=routes,
        middleware=[
            Middleware(ObserveMiddleware, observe=observed.observe_request),
            Middleware(GuardMiddleware, guard=guard),
        ],
        exception_handlers={HTTPException: http_error},
        lifespan=lifespan,
    )
    app.state.memory, app.state.keys, app.state.metrics = memory, keys, observed
    app.state.max_request_bytes = max_request_bytes
    return app


def app_from_env() -> Starlette:
    """The app for ``memvault serve``: store, tenant, keys, allowed hosts and origins come from
    ``MEMVAULT_*``, the address listened on from ``MEMVAULT_SERVE_HOST``."""
    settings = Settings.from_env()
    memory = AsyncMemory(settings=settings)
    try:
        return create_app(
            memory,
            api_keys=settings.api_keys,
            max_request_bytes=settings.max_request_bytes,
            allowed_hosts=settings.allowed_hosts,
            allowed_origins=settings.allowed_origins,
            bound_host=os.environ.get(BOUND_HOST_ENV),
            ui_secret=os.environ.get(ui.SECRET_ENV),
            owns_memory=True,
        )
    except BaseException:
        memory.close()
        raise
