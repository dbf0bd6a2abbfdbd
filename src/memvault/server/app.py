"""The REST API (Starlette): one route per store operation, JSON in and out.

Errors are translated here, by type, into HTTP statuses with a JSON body
``{"error": {"type": …, "message": …}}``; nothing below this module knows about HTTP.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route as Path

from .. import __version__
from ..config import Settings
from ..errors import (
    BackendError,
    CapabilityError,
    CompactionError,
    ConfigError,
    ConflictError,
    FilteredError,
    ForbiddenError,
    InvalidScopePromotionError,
    MemvaultError,
    NotFoundError,
    ValidationError,
)
from ..memory import AsyncMemory
from . import facilities, store
from .auth import KeyRing
from .request import HttpError
from .routes import Call, Route, openapi

log = logging.getLogger("memvault.server")


STATUS_BY_ERROR: tuple[tuple[type[MemvaultError], int], ...] = (
    (NotFoundError, 404),
    (ForbiddenError, 403),
    (FilteredError, 422),
    (ValidationError, 400),
    (InvalidScopePromotionError, 400),
    (ConfigError, 400),
    (ConflictError, 409),
    (CompactionError, 502),
    (CapabilityError, 501),
    (BackendError, 503),
)


def status_of(error: MemvaultError) -> int:
    return next((code for kind, code in STATUS_BY_ERROR if isinstance(error, kind)), 500)


def error_response(status: int, kind: str, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": {"type": kind, "message": message, **extra}}, status)


def _memory_for(request: Request) -> AsyncMemory:
    """The store view of the request's tenant: the API key's, or the server's own."""
    memory: AsyncMemory = request.app.state.memory
    keys: KeyRing = request.app.state.keys
    if not keys.enabled:
        return memory
    tenant = keys.tenant_for(request.headers.get("authorization"))
    if tenant is None:
        raise HttpError(401, "Unauthorized", "a valid 'Authorization: Bearer <key>' is required")
    return memory.with_tenant(tenant)


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
        except FilteredError as exc:
            return error_response(422, type(exc).__name__, str(exc), reason=exc.reason)
        except MemvaultError as exc:
            return error_response(status_of(exc), type(exc).__name__, str(exc))
        except Exception:
            log.exception("unexpected error in %s %s", request.method, request.url.path)
            return error_response(500, "InternalError", "internal error; see the server log")

    return run


async def health(request: Request) -> JSONResponse:
    """Liveness, without authentication and without touching the store."""
    return JSONResponse({"status": "ok", "version": __version__})


async def openapi_document(request: Request) -> JSONResponse:
    """The OpenAPI 3.1 description of every route, built from the routes themselves."""
    keys: KeyRing = request.app.state.keys
    return JSONResponse(openapi(ROUTES, __version__, keys.enabled))


ROUTES = (*store.ROUTES, *facilities.ROUTES)


def create_app(
    memory: AsyncMemory,
    *,
    api_keys: str = "",
    max_request_bytes: int = 16 * 1024 * 1024,
    owns_memory: bool = False,
) -> Starlette:
    """The ASGI app serving ``memory``. With ``api_keys`` (``tenant:key,…``) every request
    needs a Bearer key, which selects its tenant; without, all requests act in the memory's
    tenant. ``owns_memory`` closes the store when the app shuts down.
    """
    keys = KeyRing.parse(api_keys)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            if owns_memory:
                memory.close()

    routes = [
        Path("/health", health, methods=["GET"]),
        Path("/openapi.json", openapi_document, methods=["GET"]),
        *(Path(r.path, endpoint(r), methods=[r.method]) for r in ROUTES),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.memory, app.state.keys = memory, keys
    app.state.max_request_bytes = max_request_bytes
    return app


def app_from_env() -> Starlette:
    """The app for ``memvault serve``: store, tenant and keys come from ``MEMVAULT_*``."""
    settings = Settings.from_env()
    memory = AsyncMemory(settings=settings)
    try:
        return create_app(
            memory,
            api_keys=settings.api_keys,
            max_request_bytes=settings.max_request_bytes,
            owns_memory=True,
        )
    except BaseException:
        memory.close()
        raise
