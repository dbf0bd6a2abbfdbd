"""Sending requests over HTTP with ``httpx`` (imported only when a remote memory opens: the
CLI and a local ``Memory`` never load it): a blocking and an awaiting sender, each one
connection pool, with the retries and timeouts of :class:`~memvault.rest.codec.Options`."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import ssl
import threading
import time
from dataclasses import dataclass
from typing import Any, NoReturn

import httpx

from ..core import Invoke
from ..drivers import Steps, drive_awaiting, drive_blocking
from ..errors import BackendError, UnavailableError, ValidationError
from .codec import AGENT_HEADER, Caller, Options, Request, answer, backoff, json_bytes

NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
"""Transport failures before the request left: sending it again is safe for every request."""


def _http(request: Request, caller: Caller, options: Options) -> dict[str, Any]:
    """The keyword arguments of ``httpx`` for ``request``."""
    headers = {"Accept": "application/json"}
    if caller.key is not None:
        headers["Authorization"] = f"Bearer {caller.key}"
    if caller.agent is not None:
        headers[AGENT_HEADER] = caller.agent
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
    client: httpx.Client | httpx.AsyncClient, request: Request, caller: Caller, options: Options
) -> httpx.Request:
    """The ``httpx`` request of ``request``; one no URL can carry is a ValidationError."""
    try:
        return client.build_request(**_http(request, caller, options))
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


UNREACHABLE = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)
"""Transport failures that say the server cannot be reached now (refused, reset, timed out,
gone mid-answer): an UnavailableError, which the memory's circuit breaker counts."""


def _failed(request: Request, error: httpx.RequestError, options: Options) -> NoReturn:
    """A transport failure as an UnavailableError (the server cannot be reached now) or a
    BackendError, naming the server, never the key (the httpx error, which holds the request
    and its headers, is not chained)."""
    what = f"{request.method} {request.path}"
    if isinstance(error, httpx.TimeoutException):
        waited = options.timeout + request.wait
        raise UnavailableError(
            f"the memvault server at {options.server} did not answer {what} within "
            f"{waited:g} s ({type(error).__name__}); raise timeout= if it is busy"
        ) from None
    kind = UnavailableError if isinstance(error, UNREACHABLE) else BackendError
    raise kind(
        f"cannot reach the memvault server at {options.server} ({what}): "
        f"{type(error).__name__}: {error}"
    ) from None


def _attempts(
    client: httpx.Client | httpx.AsyncClient, request: Request, caller: Caller, options: Options
) -> Steps[Any]:
    """One request and its retries, as the steps both senders run (:mod:`memvault.drivers`):
    each attempt a send (awaited when the client is async), a pause before the next."""
    for attempt in itertools.count(1):
        try:
            response = yield Invoke(client.send, (_built(client, request, caller, options),))
        except httpx.RequestError as error:
            if not _again(request, error, attempt, options):
                _failed(request, error, options)
            yield Invoke(time.sleep, (backoff(attempt),), blocking=True)  # awaited: asyncio.sleep
            continue
        return answer(request, response.status_code, response.content, options.server)
    raise AssertionError("unreachable")


def _no_step(step: Any) -> Any:
    raise AssertionError(f"a request's attempts have Invoke steps only, not {step!r}")


async def _no_step_awaited(step: Any) -> Any:
    return _no_step(step)


@functools.cache
def _tls() -> ssl.SSLContext:
    """The TLS settings of every client (made once: making them costs more than a request)."""
    return httpx.create_ssl_context()


class Blocking:
    """Sends requests with blocking calls (one connection pool)."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self.client = httpx.Client(base_url=options.url, verify=_tls())

    def send(self, request: Request, caller: Caller) -> Any:
        return drive_blocking(_attempts(self.client, request, caller, self.options), _no_step)

    def close(self) -> None:
        self.client.close()


class Awaiting:
    """Sends requests with ``await``: a connection pool per event loop it is used in (a
    connection belongs to one loop; threads with loops of their own each get theirs), each
    closed when the memory closes or its loop ends."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self._pools: dict[asyncio.AbstractEventLoop, _Pool] = {}
        self._lock = threading.Lock()

    def _client_here(self) -> httpx.AsyncClient:
        """The pool of the running loop (new on a loop not seen before, as each
        ``asyncio.run`` is); the pools of closed loops are let go (their connections went
        with them)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            for gone in [known for known in self._pools if known.is_closed()]:
                del self._pools[gone]
            if loop not in self._pools:
                self._pools[loop] = _Pool.on(loop, self.options)
            return self._pools[loop].client

    async def send(self, request: Request, caller: Caller) -> Any:
        steps = _attempts(self._client_here(), request, caller, self.options)
        return await drive_awaiting(steps, _no_step_awaited)

    def _taken(self) -> dict[asyncio.AbstractEventLoop, _Pool]:
        with self._lock:
            pools, self._pools = self._pools, {}
        return pools

    async def aclose(self) -> None:
        here = asyncio.get_running_loop()
        for loop, pool in self._taken().items():
            if loop is here:
                await pool.client.aclose()
            pool.end(loop)

    def close(self) -> None:
        """Close each pool on its loop: at once when the loop is idle, soon when it runs, not
        at all when it is closed (its connections went with it)."""
        for loop, pool in self._taken().items():
            pool.end(loop)


@dataclass(frozen=True, slots=True)
class _Pool:
    """A client of one loop, and the task that closes it when that loop ends (``asyncio.run``
    cancels the tasks still pending) or when it is cancelled."""

    client: httpx.AsyncClient
    keeper: asyncio.Task[None]

    @classmethod
    def on(cls, loop: asyncio.AbstractEventLoop, options: Options) -> _Pool:
        client = httpx.AsyncClient(base_url=options.url, verify=_tls())
        keeper = loop.create_task(_close_when_cancelled(client))
        keeper._log_destroy_pending = False  # type: ignore[attr-defined]  # a loop closed by hand
        return cls(client, keeper)

    def end(self, loop: asyncio.AbstractEventLoop) -> None:
        if loop.is_closed():
            return
        if loop.is_running():
            loop.call_soon_threadsafe(self.keeper.cancel)
            return
        self.keeper.cancel()
        with contextlib.suppress(RuntimeError):  # another loop runs in this thread: let it be
            loop.run_until_complete(asyncio.wait([self.keeper]))


async def _close_when_cancelled(client: httpx.AsyncClient) -> None:
    """Wait for the end (the memory closing, or the loop's end: ``asyncio.run`` cancels what
    still runs), then close ``client``'s connections on its loop. A loop closed by hand, without
    cancelling its tasks, leaves nothing to close them on: they go with it."""
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        await client.aclose()
        raise
