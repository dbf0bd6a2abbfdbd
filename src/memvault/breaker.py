"""A circuit breaker: a store (or a server) that is down is not hammered (docs/reliability.md).

Closed, every call goes through; ``failures`` calls in a row that fail *as unavailable*
(:func:`unavailable`: the store cannot be reached — refused, reset, timed out, shut down) open
it. Open, calls fail at once with :class:`~memvault.errors.UnavailableError`, which says when
the next try is due and what failed last, without touching the store. After ``reset_s`` the
next call is the probe (half-open): it alone goes through — callers meanwhile still fail fast —
and its success closes the breaker, its failure opens it again for twice as long (up to
``max_reset_s``). Any other outcome — a result, or an error of the caller's (bad input, not
found, a conflict, a 4xx answer) — says the store is up.

The state machine holds no I/O: :meth:`Breaker.admit` and :meth:`Breaker.settle` are the whole
of it, and :meth:`Breaker.call` (blocking) and :meth:`Breaker.acall` (awaited) are the two
drivers around one call. Thread-safe; the clock (monotonic seconds) is injected for tests.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import IntEnum
from typing import ParamSpec, TypeVar

from .errors import ConfigError, UnavailableError

P = ParamSpec("P")
T = TypeVar("T")

MAX_RESET_S = 60.0
"""The longest wait before a probe, however many probes failed (unless ``reset_s`` is longer)."""
BACKOFF = 2.0
"""How much longer the breaker stays open after each failed probe."""


class State(IntEnum):
    """A breaker's state, as its gauge shows it."""

    CLOSED = 0
    HALF_OPEN = 1
    OPEN = 2

    @property
    def label(self) -> str:
        return self.name.lower()


TRANSITIONS = (
    (State.CLOSED, State.OPEN),
    (State.OPEN, State.HALF_OPEN),
    (State.HALF_OPEN, State.CLOSED),
    (State.HALF_OPEN, State.OPEN),
)
"""Every move a breaker makes (each counted)."""


def unavailable(error: BaseException) -> bool:
    """Whether ``error`` says the store cannot be reached now: an
    :class:`~memvault.errors.UnavailableError` (what the backends and the remote client raise
    for a refused, reset or timed-out connection, a server shutting down, a 502/503/504), or
    Python's own ``ConnectionError`` and ``TimeoutError``. Anything else — bad input, not
    found, a conflict, a locked SQLite file, a refusal by the server — is the call's, and says
    the store is up."""
    return isinstance(error, UnavailableError | ConnectionError | TimeoutError)


@dataclass(frozen=True, slots=True)
class Policy:
    """When a breaker opens, and for how long."""

    failures: int = 5
    """Unavailable failures in a row that open it."""
    reset_s: float = 5.0
    """Seconds it stays open before the first probe."""
    max_reset_s: float = MAX_RESET_S
    """The longest it stays open, however many probes failed (``reset_s`` if that is longer)."""

    def __post_init__(self) -> None:
        whole = isinstance(self.failures, int) and not isinstance(self.failures, bool)
        if not (whole and self.failures >= 1 and 0 < self.reset_s < float("inf")):
            raise ConfigError(
                "a circuit breaker needs failures >= 1 (an integer) and a finite reset_s > 0, "
                f"got {self.failures!r} and {self.reset_s!r}"
            )

    def delay(self, openings: int) -> float:
        """Seconds before the probe after the ``openings``-th opening in a row (1, 2…)."""
        longest = max(self.reset_s, self.max_reset_s)
        return float(min(self.reset_s * BACKOFF ** min(openings - 1, 64), longest))


class Breaker:
    """The breaker of one store or server: ``name`` labels its counters (``store``,
    ``server``), ``what`` names it in messages (``the PostgreSQL store``)."""

    def __init__(
        self,
        name: str,
        what: str,
        policy: Policy | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name, self.what = name, what
        self.policy = policy if policy is not None else Policy()
        self._clock = clock
        self._lock = threading.Lock()
        self._state = State.CLOSED
        self._failures = 0
        """Unavailable failures in a row (closed), or that opened it."""
        self._openings = 0
        """Openings since it last closed (each failed probe adds one: the delay grows)."""
        self._probe_at = 0.0
        self._probing = False
        self._last = ""
        self._moves: Counter[tuple[State, State]] = Counter()
        self._passed = 0
        self._rejected = 0

    # -- the state machine ---------------------------------------------------------------------

    def admit(self) -> bool:
        """Let a call through, or raise :class:`~memvault.errors.UnavailableError` at once
        (open; or half-open with the probe under way). True: this call is the probe."""
        with self._lock:
            now = self._clock()
            if self._state is State.OPEN and now >= self._probe_at:
                self._move(State.HALF_OPEN)
            if self._state is State.CLOSED:
                self._passed += 1
                return False
            if self._state is State.HALF_OPEN and not self._probing:
                self._probing = True
                self._passed += 1
                return True
            self._rejected += 1
            raise self._rejection(now)

    def settle(self, probe: bool, error: BaseException | None = None) -> None:
        """What became of a call :meth:`admit` let through (``error``: None if it returned).
        Only a probe decides a half-open breaker; a call let through before the breaker
        opened changes nothing when it ends after. A call cancelled or interrupted (an error
        that is not an ``Exception``) says nothing: another call may probe."""
        with self._lock:
            if error is not None and not isinstance(error, Exception):
                if probe:
                    self._probing = False
                return
            failed = error is not None and unavailable(error)
            if failed:
                self._last = _described(error)
            if probe:
                self._probing = False
                self._failures += failed
                if self._state is State.HALF_OPEN:
                    self._open() if failed else self._close()
                return
            if self._state is not State.CLOSED:
                return
            self._failures = self._failures + 1 if failed else 0
            if self._failures >= self.policy.failures:
                self._open()

    def _open(self) -> None:
        self._openings += 1
        self._probe_at = self._clock() + self.policy.delay(self._openings)
        self._move(State.OPEN)

    def _close(self) -> None:
        self._failures = self._openings = 0
        self._move(State.CLOSED)

    def _move(self, to: State) -> None:
        self._moves[(self._state, to)] += 1
        self._state = to

    def _rejection(self, now: float) -> UnavailableError:
        if self._state is State.OPEN:
            wait = max(0.0, self._probe_at - now)
            when = f"the next try in {wait:.1f} s"
        else:
            wait = self.policy.reset_s
            when = "one call is trying it now"
        return UnavailableError(
            f"{self.what} is unavailable: calls fail fast without reaching it ({when}); "
            f"{self._failures} failed in a row, the last: {self._last}",
            retry_after=wait,
        )

    # -- one call, blocking or awaited -------------------------------------------------------

    def call(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """``fn(*args, **kwargs)`` through the breaker."""
        probe = self.admit()
        try:
            result = fn(*args, **kwargs)
        except BaseException as exc:
            self.settle(probe, exc)
            raise
        self.settle(probe)
        return result

    async def acall(self, fn: Callable[P, Awaitable[T]], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """``await fn(*args, **kwargs)`` through the breaker."""
        probe = self.admit()
        try:
            result = await fn(*args, **kwargs)
        except BaseException as exc:
            self.settle(probe, exc)
            raise
        self.settle(probe)
        return result

    # -- what it did -------------------------------------------------------------------------

    @property
    def state(self) -> State:
        """Its state now (open until a call comes after the delay: that call probes)."""
        with self._lock:
            return self._state

    @property
    def closed(self) -> bool:
        return self.state is State.CLOSED

    @property
    def passed(self) -> int:
        """Calls let through to the store so far (probes included)."""
        with self._lock:
            return self._passed

    @property
    def rejected(self) -> int:
        """Calls failed fast so far, without reaching the store."""
        with self._lock:
            return self._rejected

    def counts(self) -> dict[str, int]:
        """Its counters as ``stats()`` shows them, those that are not 0, prefixed
        ``breaker_<name>_``: ``state`` (1 half-open, 2 open; absent: closed), ``rejected``
        (calls failed fast) and each transition (``closed_to_open``…)."""
        with self._lock:
            counts = {"state": int(self._state), "rejected": self._rejected}
            for old, new in TRANSITIONS:
                counts[f"{old.label}_to_{new.label}"] = self._moves[(old, new)]
        return {f"breaker_{self.name}_{key}": n for key, n in counts.items() if n}


def _described(error: BaseException | None, most: int = 300) -> str:
    text = str(error) if isinstance(error, UnavailableError) else f"{type(error).__name__}: {error}"
    return text if len(text) <= most else text[: most - 1] + "…"
