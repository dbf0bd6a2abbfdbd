"""Sending requests over HTTP with ``httpx`` (imported only when a remote memory opens: the
CLI and a local ``Memory`` never load it): a blocking and an awaiting sender, each one
connection pool, with the retries and timeouts of :class:`~memvault.rest.codec.Options`."""

from __future__ import annotations

import asyncio
import functools
import itertools
import ssl
import time
from typing import Any, NoReturn

import httpx

from ..errors import BackendError, ValidationError
from .codec import Options, Request, answer, backoff, json_bytes

NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
"""Transport failures before the request left: sending it again is safe for every request."""


def _http(request: Request, key: str | None, options: Options) -> dict[str, Any]:
    """The keyword arguments of ``httpx`` for ``request``."""
    headers = {"Accept": "application/json"}
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    content = None
    if request.body is not None:
        headers["Content-Type"] = "application/json"
        content = json_bytes(request.body)
    return {
        "method": request.method,
        "url": request.path,
        "params": list(request.query),
        "content": content,
        "headers": headers,
        "timeout": options.timeout + request.wait,
    }


def _built(
    client: httpx.Client | httpx.AsyncClient, request: Request, key: str | None, options: Options
) -> httpx.Request:
    """The ``httpx`` request of ``request``; one no URL can carry is a ValidationError."""
    try:
        return client.build_request(**_http(request, key, options))
    except httpx.InvalidURL as error:
        raise ValidationError(f"{request.method} {request.path} cannot be sent: {error}") from None


def _again(request: Request, error: httpx.RequestError, attempt: int, options: Options) -> bool:
    """Whether to send ``request`` again after ``error`` (attempt 1, 2…): one that never left,
    or an idempotent one whose connection broke — not one that timed out, as the server may
    still be working on it (sending it again would only add to its load)."""
    if attempt > options.retries:
        return False
    if isinstance(error, NOT_SENT):
        return True
    return request.idempotent and not isinstance(error, httpx.TimeoutException)


def _failed(request: Request, error: httpx.RequestError, options: Options) -> NoReturn:
    """A transport failure as a BackendError that names the server, never the key (the
    httpx error, which holds the request and its headers, is not chained)."""
    what = f"{request.method} {request.path}"
    if isinstance(error, httpx.TimeoutException):
        waited = options.timeout + request.wait
        raise BackendError(
            f"the memvault server at {options.server} did not answer {what} within "
            f"{waited:g} s ({type(error).__name__}); raise timeout= if it is busy"
        ) from None
    raise BackendError(
        f"cannot reach the memvault server at {options.server} ({what}): "
        f"{type(error).__name__}: {error}"
    ) from None


@functools.cache
def _tls() -> ssl.SSLContext:
    """The TLS settings of every client (made once: making them costs more than a request)."""
    return httpx.create_ssl_context()


class Blocking:
    """Sends requests with blocking calls (one connection pool)."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self.client = httpx.Client(base_url=options.url, verify=_tls())

    def send(self, request: Request, key: str | None) -> Any:
        for attempt in itertools.count(1):
            try:
                response = self.client.send(_built(self.client, request, key, self.options))
            except httpx.RequestError as error:
                if not _again(request, error, attempt, self.options):
                    _failed(request, error, self.options)
                time.sleep(backoff(attempt))
                continue
            return answer(request, response.status_code, response.content, self.options.server)
        raise AssertionError("unreachable")

    def close(self) -> None:
        self.client.close()


class Awaiting:
    """Sends requests with ``await``: a connection pool on each event loop it is used in (a
    connection belongs to one loop), closed when the memory closes or the loop ends."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self.client: httpx.AsyncClient | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.keeper: asyncio.Task[None] | None = None
        """Closes the pool when cancelled: by :meth:`close`, or by ``asyncio.run`` ending."""

    def _client_here(self) -> httpx.AsyncClient:
        """The pool of the running loop (a new one when the memory moved to another loop, as
        each ``asyncio.run`` is)."""
        loop = asyncio.get_running_loop()
        if self.client is None or self.loop is not loop:
            self.close()
            self.client = httpx.AsyncClient(base_url=self.options.url, verify=_tls())
            self.loop = loop
            self.keeper = loop.create_task(_close_when_cancelled(self.client))
        return self.client

    async def send(self, request: Request, key: str | None) -> Any:
        client = self._client_here()
        for attempt in itertools.count(1):
            try:
                response = await client.send(_built(client, request, key, self.options))
            except httpx.RequestError as error:
                if not _again(request, error, attempt, self.options):
                    _failed(request, error, self.options)
                await asyncio.sleep(backoff(attempt))
                continue
            return answer(request, response.status_code, response.content, self.options.server)
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        client, here = self.client, self.loop is asyncio.get_running_loop()
        self.close()
        if client is not None and here:
            await client.aclose()

    def close(self) -> None:
        """Close the pool on its loop: at once when the loop is idle, soon when it runs (its
        keeper is cancelled), not at all when it is closed (its connections went with it)."""
        keeper, loop = self.keeper, self.loop
        self.client = self.loop = self.keeper = None
        if keeper is None or loop is None or loop.is_closed():
            return
        if loop.is_running():
            loop.call_soon_threadsafe(keeper.cancel)
        else:
            keeper.cancel()
            loop.run_until_complete(asyncio.wait([keeper]))


async def _close_when_cancelled(client: httpx.AsyncClient) -> None:
    """Wait for the end (the memory closing, or the loop's end: ``asyncio.run`` cancels what
    still runs), then close ``client``'s connections on its loop."""
    try:
        await asyncio.Event().wait()
    finally:
        await client.aclose()
