"""Fire-and-forget recording for async callers: a record runs in a task of its own, is retried
with backoff when the store fails, and is dropped and counted when it keeps failing — never
raised into the caller's workflow. While the store's circuit breaker is not closed (the store
is down: :mod:`memvault.breaker`) a record that fails is dropped at once: a retry would only
fail fast again, or compete with the breaker's one probe."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from ..breaker import Breaker
from ..core import Stats
from ..errors import ValidationError

RETRIES = 3
"""Tries after the first before a record is dropped."""
BACKOFF_S = 0.1
"""Seconds before the first retry; doubled before each next one."""
QUIET_S = 10.0
"""While the store is down, at most one log line about dropped records in this many seconds."""
T = TypeVar("T")
log = logging.getLogger("memvault.agents")


class Recorder:
    """The pending background records of a memory, and what became of them."""

    def __init__(self, stats: Stats, breaker: Breaker | None = None) -> None:
        self._stats = stats
        self._breaker = breaker
        """The breaker the records' store calls pass (None: a store that is never down)."""
        self._pending: set[asyncio.Task[Any]] = set()
        self._said_at = float("-inf")
        self._quieted = 0

    def submit(self, record: Callable[[], Awaitable[T]]) -> asyncio.Task[T | None]:
        """Run ``record()`` in a task of the running loop; its result, or None if dropped.
        ValidationError outside a running loop (nothing could run the record)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise ValidationError(
                "a background record needs a running event loop: call it from async code, or "
                "record at once with record_execution"
            ) from None
        task = loop.create_task(self._attempts(record))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)
        return task

    async def _attempts(self, record: Callable[[], Awaitable[T]]) -> T | None:
        for attempt in range(RETRIES + 1):
            try:
                return await record()
            except (ValidationError, TypeError) as exc:  # a bad record: no retry mends it
                self._dropped(exc, attempt + 1)
                return None
            except Exception as exc:  # never the caller's failure
                down = self._store_down()
                if attempt == RETRIES or down:
                    self._dropped(exc, attempt + 1, quiet=down)
                    return None
                await asyncio.sleep(BACKOFF_S * 2**attempt)
        raise AssertionError("unreachable")

    def _store_down(self) -> bool:
        """Whether the store's breaker is open (or probing): no retry against it."""
        return self._breaker is not None and not self._breaker.closed

    def _dropped(self, error: BaseException, tries: int, quiet: bool = False) -> None:
        """Count a dropped record and log it; while the store is down (``quiet``), at most
        one line every ``QUIET_S`` seconds, with how many were dropped since the last one."""
        self._stats.add("executions_dropped")
        if quiet:
            self._quieted += 1
            now = time.monotonic()
            if now - self._said_at < QUIET_S:
                return
            self._said_at, quieted, self._quieted = now, self._quieted, 0
            log.warning(
                "%d background record(s) dropped while the store is unavailable "
                "(executions_dropped counts them): %s",
                quieted,
                error,
            )
            return
        log.warning(
            "a background record was dropped after %d %s: %s: %s",
            tries,
            "try" if tries == 1 else "tries",
            type(error).__name__,
            error,
        )

    def counts(self) -> dict[str, int]:
        """The records dropped so far, if any (``executions_dropped``)."""
        dropped = self._stats.snapshot().get("executions_dropped", 0)
        return {"executions_dropped": dropped} if dropped else {}

    async def drain(self, timeout: float | None = None) -> tuple[bool, float | None]:
        """Wait until every pending record is stored or dropped (those submitted meanwhile
        too): whether they were before ``timeout`` (seconds) — the records go on, nothing is
        cancelled — and the seconds of it left (None: no timeout)."""
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while True:
            left = None if deadline is None else max(0.0, deadline - loop.time())
            if not self._pending or left == 0.0:
                return not self._pending, left
            await asyncio.wait(set(self._pending), timeout=left)
