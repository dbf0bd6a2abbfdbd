"""The uses of entries a process saw and has not yet stored: recorded in memory at once (a
search never waits for a write) and stored in batches (:class:`~memvault.store.ops.RecordUsesOp`)
by the memory that owns the log, every :data:`FLUSH_SECONDS` and when it closes."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from datetime import datetime

from .ops import Use

log = logging.getLogger("memvault.uses")

FLUSH_SECONDS = 2.0
"""How often a memory stores the uses it saw."""


class UseLog:
    """Uses not yet stored, by tenant and entry id (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[tuple[str, str], Use] = {}
        self.added: Callable[[], None] = lambda: None
        """Called after each :meth:`add` (the owner's :meth:`Storing.soon`)."""

    def add(
        self, tenant: str, entry_ids: Iterable[str], at: datetime, *, restated: bool = False
    ) -> None:
        """Count one use of each of ``entry_ids`` at ``at`` (``restated``: a write restated
        it, and was merged into it)."""
        with self._lock:
            for entry_id in dict.fromkeys(entry_ids):
                use = Use(entry_id, at, 1, int(restated))
                key = (tenant, entry_id)
                self._pending[key] = merged(self._pending.get(key), use) or use
        self.added()

    def pending(self, tenant: str, entry_ids: Iterable[str]) -> dict[str, Use]:
        """The uses of ``entry_ids`` not yet stored."""
        with self._lock:
            found = ((i, self._pending.get((tenant, i))) for i in entry_ids)
            return {i: use for i, use in found if use is not None}

    def take(self) -> dict[str, tuple[Use, ...]]:
        """Every pending use, by tenant, and forget them (the caller stores them)."""
        with self._lock:
            taken, self._pending = self._pending, {}
        by_tenant: dict[str, list[Use]] = {}
        for (tenant, _), use in taken.items():
            by_tenant.setdefault(tenant, []).append(use)
        return {tenant: tuple(uses) for tenant, uses in by_tenant.items()}

    def clear(self) -> None:
        """Forget every pending use (an erasure: the ids may be of what it erased)."""
        with self._lock:
            self._pending.clear()

    def __len__(self) -> int:
        return len(self._pending)


def merged(stored: Use | None, pending: Use | None) -> Use | None:
    """What is known of an entry's use: stored, and seen here since."""
    if stored is None or pending is None:
        return stored or pending
    latest = max(stored.last_used_at, pending.last_used_at)
    uses, restated = stored.uses + pending.uses, stored.restated + pending.restated
    return Use(stored.entry_id, latest, uses, restated)


class Storing:
    """Stores a log's pending uses (``store``) :data:`FLUSH_SECONDS` after the first one
    since the last store, in a one-shot timer thread (none while nothing is pending), and
    at once on :meth:`close`. A store that fails is logged and counted (its uses are
    dropped: they only tell ranking what was used)."""

    def __init__(self, store: Callable[[], int], seconds: float = FLUSH_SECONDS) -> None:
        self._store, self._seconds = store, seconds
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._closed = False
        self.dropped = 0

    def soon(self) -> None:
        """Store within :data:`FLUSH_SECONDS` (a timer is started unless one is waiting)."""
        with self._lock:
            if self._closed or (self._timer is not None and self._timer.is_alive()):
                return
            self._timer = threading.Timer(self._seconds, self.flush)
            self._timer.name, self._timer.daemon = "memvault-uses", True
            self._timer.start()

    def flush(self) -> None:
        try:
            self._store()
        except Exception as exc:  # a store that is down, or closed under us
            self.dropped += 1
            log.warning("could not store the uses of entries: %s", exc)

    def close(self) -> None:
        """Store what is pending now; no timer starts after."""
        with self._lock:
            self._closed, timer = True, self._timer
        if timer is not None:
            timer.cancel()
        self.flush()
