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

from ..errors import BackendError
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


def _again(request: Request, error: httpx.RequestError, attempt: int, options: Options) -> bool:
    """Whether to send ``request`` again after ``error`` (attempt 1, 2…)."""
    return attempt <= options.retries and (request.idempotent or isinstance(error, NOT_SENT))


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
                response = self.client.request(**_http(request, key, self.options))
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
    """Sends requests with ``await`` (one connection pool, on the event loop it is used in)."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self.client = httpx.AsyncClient(base_url=options.url, verify=_tls())
        self.loop: asyncio.AbstractEventLoop | None = None
        self.closing: asyncio.Task[None] | None = None

    async def send(self, request: Request, key: str | None) -> Any:
        self.loop = asyncio.get_running_loop()
        for attempt in itertools.count(1):
            try:
                response = await self.client.request(**_http(request, key, self.options))
            except httpx.RequestError as error:
                if not _again(request, error, attempt, self.options):
                    _failed(request, error, self.options)
                await asyncio.sleep(backoff(attempt))
                continue
            return answer(request, response.status_code, response.content, self.options.server)
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        await self.client.aclose()

    def close(self) -> None:
        """Close the connections on the loop they belong to: later on it when it runs here
        (as a task), at once when it is idle; when it is closed they are gone with it."""
        loop = self.loop
        if loop is None or loop.is_closed():
            return
        if loop.is_running():
            self.closing = loop.create_task(self.aclose())  # held: a task may not be collected
        else:
            loop.run_until_complete(self.aclose())
