"""Helpers for testing memvault and code built on it."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta


class ManualClock:
    """A clock that only moves when told to; pass it as ``Memory(..., clock=clock)``."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
        self._lock = threading.Lock()

    def __call__(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, delta: timedelta | None = None, **kwargs: float) -> datetime:
        """Move forward by ``delta`` or by ``timedelta(**kwargs)``; return the new time."""
        with self._lock:
            self._now += delta if delta is not None else timedelta(**kwargs)
            return self._now


__all__ = ["ManualClock"]
