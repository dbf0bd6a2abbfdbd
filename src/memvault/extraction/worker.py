"""Background extraction: one slot per session, the latest turn queued behind a running one.

``add_turn`` returns as soon as its records are stored; :class:`Learner` then runs the session's
extraction on a worker thread. While one runs, further turns of that session only mark it
*queued* (the most recent wins); it runs once more when the first finishes and reads every
turn no run has read yet (each session keeps where its log has been read to).
:meth:`Learner.flush` waits until nothing is running or queued — ``Memory.flush()`` and
``close()`` call it, so nothing is lost at shutdown.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..breaker import unavailable
from ..errors import ClosedError

log = logging.getLogger("memvault.extraction")

WORKERS = 2
"""Sessions extracted at the same time (per Memory)."""
KEPT_RESULTS = 4096
"""Sessions whose last extraction result is kept (the least recently finished go first)."""


@dataclass(frozen=True, slots=True)
class Failure:
    """An extraction that raised."""

    error: str

    def to_dict(self) -> dict[str, str]:
        return {"error": self.error}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Failure:
        return cls(data["error"])


class Slot(NamedTuple):
    """A tenant's session: its extractions run one at a time (equal to the plain tuple)."""

    tenant: str
    session_id: str

    def __str__(self) -> str:
        return f"session {self.session_id} (tenant {self.tenant})"


Task = Callable[[], Any]
Matches = Callable[[Hashable], bool]
"""Which slots a wait is about."""


def _every(slot: Hashable) -> bool:
    return True


def _settle(woken: asyncio.Future[None]) -> None:
    if not woken.done():
        woken.set_result(None)


class Learner:
    """Runs extraction tasks in the background, one at a time per slot (a tenant's session)."""

    def __init__(self, workers: int = WORKERS) -> None:
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="memvault-extract")
        self._lock = threading.Condition()
        self._running: set[Hashable] = set()
        self._queued: dict[Hashable, Task] = {}
        self._waiters: list[tuple[Matches, Callable[[], None]]] = []
        self._closed = False
        self._forgotten = 0
        """How many times the kept results were dropped (see :meth:`forget`)."""
        self.failures = 0
        self.unavailable = 0
        """Of the failures, those because the store could not be reached (down, or its circuit
        breaker open: they failed fast). The session's turns wait for its next extraction,
        which reads every turn no run has read yet."""
        self.results: OrderedDict[Hashable, Any] = OrderedDict()
        """The last extraction of each slot (its result, or a :class:`Failure`), for the
        ``KEPT_RESULTS`` slots that finished last."""

    def schedule(self, slot: Hashable, task: Task) -> str:
        """Run ``task`` now, or queue it behind the slot's running one (replacing any task
        queued before it: the most recent wins)."""
        with self._lock:
            if self._closed:
                raise ClosedError("this memory is closed: it takes no more turns")
            if slot in self._running:
                self._queued[slot] = task
                return "queued"
            self._running.add(slot)
        self._pool.submit(self._run, slot, task)
        return "scheduled"

    def forget(self) -> None:
        """Drop every kept result (each copies what was learned): an erasure or a session's
        deletion happened somewhere. A result of an extraction running meanwhile is not kept
        either (it may hold what was erased)."""
        with self._lock:
            self.results.clear()
            self._forgotten += 1

    def holding(self, needles: Sequence[str]) -> int:
        """How many of ``needles`` (ids, texts) a kept result still holds (an erasure's scan)."""
        with self._lock:
            kept = repr(list(self.results.values()))
        return sum(needle in kept for needle in needles)

    def _run(self, slot: Hashable, task: Task) -> None:
        while True:
            with self._lock:
                forgotten = self._forgotten
            try:
                result = task()
            except Exception as exc:  # a background failure is counted and logged, never lost
                log.warning("extraction of %s failed: %s: %s", slot, type(exc).__name__, exc)
                result = Failure(f"{type(exc).__name__}: {exc}")
                with self._lock:
                    self.failures += 1
                    self.unavailable += unavailable(exc)
            with self._lock:
                if forgotten == self._forgotten:
                    self.results[slot] = result
                    self.results.move_to_end(slot)
                while len(self.results) > KEPT_RESULTS:
                    self.results.popitem(last=False)
                if slot in self._queued:
                    task = self._queued.pop(slot)
                    continue
                self._running.discard(slot)
                self._lock.notify_all()
                self._wake_waiters()
                return

    def _idle(self, matches: Matches) -> bool:
        return not any(matches(slot) for slot in self._running)

    def _wake_waiters(self) -> None:
        """Wake the awaiting waits whose slots are all done (called holding the lock)."""
        for waiter in [w for w in self._waiters if self._idle(w[0])]:
            self._waiters.remove(waiter)
            waiter[1]()

    def pending(self) -> int:
        """Slots with an extraction running (or queued behind one)."""
        with self._lock:
            return len(self._running)

    def flush(self, timeout: float | None = None, matches: Matches = _every) -> bool:
        """Wait until no extraction (of the slots that ``matches``) runs or is queued; False if
        ``timeout`` came first."""
        with self._lock:
            return self._lock.wait_for(lambda: self._idle(matches), timeout)

    def wait(self, slot: Hashable, timeout: float | None = None) -> bool:
        """Wait until the slot's extraction (and any queued behind it) is done; False if
        ``timeout`` came first."""
        return self.flush(timeout, lambda running: running == slot)

    async def flushed(self, timeout: float | None = None, matches: Matches = _every) -> bool:
        """:meth:`flush`, awaited without holding a thread while it waits (so any number of
        waiting requests cannot starve the threads the store's calls run on)."""
        loop = asyncio.get_running_loop()
        woken: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            with contextlib.suppress(RuntimeError):  # a closed loop has nobody left to wake
                loop.call_soon_threadsafe(_settle, woken)

        waiter = (matches, wake)
        with self._lock:
            if self._idle(matches):
                return True
            self._waiters.append(waiter)
        try:
            await asyncio.wait_for(woken, timeout)
            return True
        except TimeoutError:
            return False
        finally:
            with self._lock:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)

    def close(self) -> None:
        """Refuse new work, wait for what is pending, stop the workers."""
        with self._lock:
            self._closed = True
        self.flush()
        self._pool.shutdown(wait=True)
