"""A PostgreSQL store's connections (I/O): a pool while the server answers, none while it is lost.

A call takes a connection from the pool (waiting at most ``wait_s`` for a free one). When the
connection to the server is lost — a query finds its connection broken, the server shuts it
down, it refuses new ones — the pool is dropped: the calls waiting on it fail at once and its
own reconnection attempts stop. Until the server answers again each call makes one attempt to
connect of its own (refused in milliseconds when the server is down), and the first that
succeeds brings a new pool. How often calls come while it is down is the store's circuit
breaker's to decide (:mod:`memvault.breaker`): a few, then one probe per delay.

:func:`lost` and :func:`unavailable` classify psycopg's errors (pure).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import BackendError, UnavailableError

WAIT_S = 30.0
"""Seconds a call waits for a free connection of the pool before it fails (unavailable)."""
CONNECT_TIMEOUT_S = 10
"""Seconds one attempt to connect may take (a server that drops packets never refuses)."""
SHUT_DOWN = frozenset({"57P01", "57P02", "57P03"})
"""SQLSTATEs of a server shutting down, crashed, or not accepting connections yet."""
TOO_MANY_CONNECTIONS = "53300"


def lost(error: BaseException) -> bool:
    """Whether a psycopg error says the connection to the server is lost or could not be made:
    connection errors (class 08, and those libpq raises without a SQLSTATE: refused, reset,
    closed unexpectedly) and a server shutting down. Not a pool's own errors (a busy pool, a
    closed one), nor an error of the query."""
    import psycopg
    import psycopg_pool

    if not isinstance(error, psycopg.OperationalError):
        return False
    if isinstance(error, psycopg_pool.PoolTimeout | psycopg_pool.PoolClosed):
        return False
    if isinstance(error, psycopg_pool.TooManyRequests):
        return False
    state = error.sqlstate
    return state is None or state.startswith("08") or state in SHUT_DOWN


def unavailable(error: BaseException) -> bool:
    """Whether a psycopg error means the store cannot serve now (:func:`lost`, no connection
    free within the wait, too many connections, the server's limit): the caller should retry
    later, and the circuit breaker counts it."""
    import psycopg
    import psycopg_pool

    if lost(error):
        return True
    if isinstance(error, psycopg_pool.PoolTimeout | psycopg_pool.TooManyRequests):
        return True
    return isinstance(error, psycopg.OperationalError) and error.sqlstate == TOO_MANY_CONNECTIONS


def failure(error: Exception) -> BackendError:
    """A psycopg error as memvault's: :class:`UnavailableError` when it is
    :func:`unavailable`, else :class:`BackendError`."""
    if unavailable(error):
        return unreachable(error)
    return BackendError(f"PostgreSQL store: {error}")


def unreachable(error: BaseException) -> UnavailableError:
    """The UnavailableError of a psycopg error that says the server cannot serve now."""
    return UnavailableError(f"the PostgreSQL store cannot be reached now: {_first_line(error)}")


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0] if text else ''}"


class Connections:
    """The connections of one store: its pool, or none while the server is lost."""

    def __init__(self, dsn: str, size: int, wait_s: float = WAIT_S) -> None:
        self.dsn, self.size, self.wait_s = dsn, size, wait_s
        self._lock = threading.Lock()
        self._closed = False
        self.attempts = 0
        """Attempts to connect made by calls while the server was lost."""
        self.dropped = 0
        """Pools dropped because the connection to the server was lost."""
        self._reach()  # a server that is down refuses at once: no 30 s wait for the pool
        self._pool: Any = self._new_pool()
        try:
            self._pool.open(wait=True, timeout=WAIT_S)
        except BaseException:
            self._pool.close()
            raise

    def _reach(self) -> None:
        """Connect once, or raise what the server said (UnavailableError when it is down)."""
        import psycopg

        try:
            psycopg.connect(self.dsn, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S).close()
        except psycopg.Error as exc:
            raise failure(exc) from exc

    def _new_pool(self) -> Any:
        from psycopg_pool import ConnectionPool

        return ConnectionPool(
            self.dsn,
            min_size=1,
            max_size=self.size,
            open=False,
            timeout=self.wait_s,
            kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT_S},
        )

    @property
    def up(self) -> bool:
        """Whether a pool serves calls (False: the server was lost and has not answered since)."""
        return self._pool is not None

    @contextmanager
    def connection(self) -> Iterator[Any]:
        """A connection to the server (autocommit), for one call."""
        with self._lock:
            if self._closed:
                raise BackendError("the PostgreSQL store is closed")
            pool = self._pool
        if pool is None:
            with self._reconnected() as conn:
                yield conn
            return
        try:
            with pool.connection() as conn:
                yield conn
        except Exception as exc:
            if lost(exc) or self._dropped_under(exc):
                self._drop(pool)
                raise unreachable(exc) from exc
            raise

    def _dropped_under(self, error: Exception) -> bool:
        """A call waiting on a pool that another call dropped (PoolClosed): the server was
        lost, not the store closed."""
        import psycopg_pool

        return isinstance(error, psycopg_pool.PoolClosed) and not self._closed

    @contextmanager
    def _reconnected(self) -> Iterator[Any]:
        """One attempt to connect, the call on that connection, and — unless the server was
        lost again meanwhile — a new pool for the calls after this one."""
        import psycopg

        with self._lock:
            self.attempts += 1
        try:
            conn = psycopg.connect(self.dsn, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
        except psycopg.Error as exc:
            raise failure(exc) from exc
        lost_again = False
        try:
            with conn:
                yield conn
        except Exception as exc:
            lost_again = lost(exc)
            if lost_again:
                raise unreachable(exc) from exc
            raise
        finally:
            conn.close()
            if not lost_again:
                self._renew()

    def _renew(self) -> None:
        with self._lock:
            if self._pool is not None or self._closed:
                return
            self._pool = self._new_pool()
            self._pool.open(wait=False)  # it connects in the background

    def _drop(self, pool: Any) -> None:
        with self._lock:
            if self._pool is not pool:
                return
            self._pool = None
            self.dropped += 1
        # its threads stop in the background: the call that lost the server fails at once
        threading.Thread(target=pool.close, name="memvault-pg-drop", daemon=True).start()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()
