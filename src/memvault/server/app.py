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
from starlette.routing import Route

from .. import __version__
from ..config import Settings
from ..errors import (
    BackendError,
    CapabilityError,
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
from ..types import NewEntry
from . import facilities
from .auth import KeyRing
from .payload import as_is, fields, flag, integer, query_fields, seconds, timestamp
from .request import HttpError, read_json, request_query

log = logging.getLogger("memvault.server")

Handler = Callable[[Request, AsyncMemory], Awaitable[tuple[int, Any]]]

STATUS_BY_ERROR: tuple[tuple[type[MemvaultError], int], ...] = (
    (NotFoundError, 404),
    (ForbiddenError, 403),
    (FilteredError, 422),
    (ValidationError, 400),
    (InvalidScopePromotionError, 400),
    (ConfigError, 400),
    (ConflictError, 409),
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


def endpoint(handler: Handler) -> Callable[[Request], Awaitable[JSONResponse]]:
    """Wrap a handler with authentication and error translation."""

    async def run(request: Request) -> JSONResponse:
        try:
            status, body = await handler(request, _memory_for(request))
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


# -- operations ---------------------------------------------------------------------------------

ENTRY_FIELDS = {
    "content": as_is,
    "scope": as_is,
    "tags": as_is,
    "category": as_is,
    "expires_at": timestamp,
    "metadata": as_is,
    "provenance": as_is,
    "context": as_is,
    "created_at": timestamp,
}
REQUIRED = ("content", "scope")
SELECT_FIELDS = {"scope": as_is, "tag": as_is, "since": timestamp}
TAGS = {"tag": "tags"}


async def write(request: Request, memory: AsyncMemory) -> tuple[int, Any]:
    args = fields(await read_json(request), {**ENTRY_FIELDS, "ttl": seconds}, required=REQUIRED)
    return 201, (await memory.write(**args)).to_dict()


async def write_batch(request: Request, memory: AsyncMemory) -> tuple[int, Any]:
    items = fields(await read_json(request), {"items": as_is}, required=("items",))["items"]
    if not isinstance(items, list):
        raise ValidationError("items must be a list of entry objects")
    requests = []
    for index, item in enumerate(items):
        try:
            requests.append(NewEntry(**fields(item, ENTRY_FIELDS, required=REQUIRED)))
        except ValidationError as exc:
            raise ValidationError(f"items[{index}]: {exc}") from exc
    entries = await memory.write_many(requests)
    return 201, {"entries": [e.to_dict() for e in entries]}


async def list_entries(request: Request, memory: AsyncMemory) -> tuple[int, Any]:
    accepted = {**SELECT_FIELDS, "order": as_is, "limit": integer, "cursor": as_is,
                "include_expired": flag}  # fmt: skip
    args = query_fields(request_query(request), accepted, lists=("tag",))
    page = await memory.list(**_renamed(args))
    return 200, {"entries": [e.to_dict() for e in page.entries], "next_cursor": page.next_cursor}


async def get_entry(request: Request, memory: AsyncMemory) -> tuple[int, Any]:
    entry_id = request.path_params["entry_id"]
    entry = await memory.get(entry_id)
    if entry is None:
        raise NotFoundError(entry_id)
    return 200, entry.to_dict()


async def update_entry(request: Request, memory: AsyncMemory) -> tuple[int, Any]:
    accepted = {"content": as_is, "tags": as_is, "expires_at": timestamp, "metadata": as_is}
    args = fields(await read_json(request), accepted)
    if not args:
        raise ValidationError(f"nothing to update; give any of: {', '.join(accepted)}")
    return 200, (await memory.update(request.path_params["entry_id"], **args)).to_dict()


async def delete_entry(request: Request, memory: AsyncMemory) -> tuple[int, Any]:
    return 200, {"deleted": await memory.delete(request.path_params["entry_id"])}


async def promote_entry(request: Request, memory: AsyncMemory) -> tuple[int, Any]:
    accepted = {"to": as_is, "delete_original": flag, "content": as_is, "tags": as_is}
    args = fields(await read_json(request), accepted, required=("to",))
    return 201, (await memory.promote(request.path_params["entry_id"], **args)).to_dict()


async def delete_scope(request: Request, memory: AsyncMemory) -> tuple[int, Any]:
    return 200, {"deleted": await memory.delete_by_scope(request.path_params["scope"])}


NARROWER_FIELDS = {"include_narrower": flag, "session_id": as_is}


async def retrieve(request: Request, memory: AsyncMemory) -> tuple[int, Any]:
    accepted = {**SELECT_FIELDS, **NARROWER_FIELDS, "tags": as_is, "limit": integer,
                "order": as_is}  # fmt: skip
    accepted.pop("tag")
    args = fields(await read_json(request), accepted, required=("scope",))
    return 200, {"entries": [e.to_dict() for e in await memory.retrieve(**args)]}


SEARCH_FIELDS = {
    "query": as_is,
    "scope": as_is,
    "limit": integer,
    "tags": as_is,
    "categories": as_is,
    "since": timestamp,
    "until": timestamp,
    "metadata": as_is,
    **NARROWER_FIELDS,
    "lexical_weight": as_is,
    "dense_weight": as_is,
    "recency_weight": as_is,
    "recency_half_life": seconds,
    "fusion": as_is,
    "diversity": as_is,
    "min_score": as_is,
    "conversational": flag,
}


async def search(request: Request, memory: AsyncMemory) -> tuple[int, Any]:
    args = fields(await read_json(request), SEARCH_FIELDS, required=("query", "scope"))
    return 200, {"hits": [hit.to_dict() for hit in await memory.search(**args)]}


async def count(request: Request, memory: AsyncMemory) -> tuple[int, Any]:
    accepted = {**SELECT_FIELDS, **NARROWER_FIELDS}
    args = query_fields(request_query(request), accepted, lists=("tag",))
    return 200, {"count": await memory.count(**_renamed(args))}


async def purge_expired(request: Request, memory: AsyncMemory) -> tuple[int, Any]:
    return 200, {"purged": await memory.purge_expired()}


async def health(request: Request) -> JSONResponse:
    """Liveness, without authentication and without touching the store."""
    return JSONResponse({"status": "ok", "version": __version__})


def _renamed(args: dict[str, Any]) -> dict[str, Any]:
    return {TAGS.get(k, k): v for k, v in args.items()}


ROUTES = (
    ("/v1/memories", write, "POST"),
    ("/v1/memories", list_entries, "GET"),
    ("/v1/memories/batch", write_batch, "POST"),
    ("/v1/memories/{entry_id}", get_entry, "GET"),
    ("/v1/memories/{entry_id}", update_entry, "PATCH"),
    ("/v1/memories/{entry_id}", delete_entry, "DELETE"),
    ("/v1/memories/{entry_id}/promote", promote_entry, "POST"),
    ("/v1/scopes/{scope:path}", delete_scope, "DELETE"),
    ("/v1/retrieve", retrieve, "POST"),
    ("/v1/search", search, "POST"),
    ("/v1/count", count, "GET"),
    ("/v1/purge-expired", purge_expired, "POST"),
)


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

    routes = [Route("/health", health, methods=["GET"])]
    routes += [Route(path, endpoint(handler), methods=[method])
               for path, handler, method in (*ROUTES, *facilities.ROUTES)]  # fmt: skip
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
