"""The circuit breaker's state machine on a fake clock (thresholds, fail-fast, the one probe
under concurrency, which failures count, backoff and its cap), and where its error is
translated: 503 with Retry-After, exit code 8, the remote client's reading of a 503."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest

from memvault.agents.background import Recorder
from memvault.breaker import Breaker, Policy, State, unavailable
from memvault.cli.common import EXIT_UNAVAILABLE, exit_code
from memvault.config import Settings, breaker_from_env
from memvault.core import Stats
from memvault.errors import (
    BackendError,
    ClosedError,
    ConfigError,
    ConflictError,
    ForbiddenError,
    LLMUnavailableError,
    NotFoundError,
    UnavailableError,
    ValidationError,
    details,
)
from memvault.extraction.worker import Learner
from memvault.rest.codec import Request, error_of
from memvault.server.statuses import headers_of, status_of


class Clock:
    """Monotonic seconds that move only when told."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def state(breaker: Breaker) -> State:
    """The breaker's state now (a call: type checkers do not narrow it across calls)."""
    return breaker.state


DOWN = UnavailableError("the PostgreSQL store cannot be reached now: connection refused")


def down() -> Any:
    raise DOWN


def breaker(clock: Clock, failures: int = 3, reset_s: float = 5.0, most: float = 60.0) -> Breaker:
    return Breaker("store", "the test store", Policy(failures, reset_s, most), clock)


def fail(b: Breaker, times: int, error: Exception = DOWN) -> None:
    for _ in range(times):

        def raising() -> None:
            raise error

        with pytest.raises(type(error)):
            b.call(raising)


def test_it_opens_after_n_unavailable_failures_in_a_row() -> None:
    clock = Clock()
    b = breaker(clock)
    fail(b, 2)
    assert b.call(lambda: "ok") == "ok"  # a success starts the count again
    fail(b, 2)
    assert state(b) is State.CLOSED
    fail(b, 1)
    assert state(b) is State.OPEN


def test_while_open_calls_fail_fast_without_reaching_the_store() -> None:
    clock = Clock()
    b = breaker(clock)
    fail(b, 3)
    reached: list[int] = []
    clock.advance(1.5)
    with pytest.raises(UnavailableError) as caught:
        b.call(reached.append, 1)
    assert reached == [] and b.rejected == 1 and b.passed == 3
    said = str(caught.value)
    assert "the test store is unavailable" in said and "the next try in 3.5 s" in said
    assert "3 failed in a row" in said and "connection refused" in said  # what failed last
    assert caught.value.retry_after == pytest.approx(3.5)
    assert isinstance(caught.value, BackendError)  # old `except BackendError` still catches it


@pytest.mark.parametrize(
    "error",
    [
        ValidationError("content must not be empty"),
        NotFoundError("e-1"),
        ConflictError("another writer won"),
        ForbiddenError("records are immutable"),
        BackendError("PostgreSQL store: database is locked"),  # the file is there
        BackendError("SQLite: database is locked"),
        LLMUnavailableError("the LLM is down, not the store"),
        ClosedError("closed"),
        KeyError("x"),
        ValueError("bad"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_failures_of_the_callers_kind_do_not_count(error: Exception) -> None:
    clock = Clock()
    b = breaker(clock, failures=2)
    fail(b, 1)
    fail(b, 5, error)  # the store answered: it is up, and the count starts again
    fail(b, 1)
    assert state(b) is State.CLOSED
    assert not unavailable(error)


def test_what_counts_as_unavailable() -> None:
    for error in (DOWN, ConnectionRefusedError(), ConnectionResetError(), TimeoutError()):
        assert unavailable(error)
    b = breaker(Clock(), failures=2)
    fail(b, 1, ConnectionResetError("reset by peer"))
    fail(b, 1, TimeoutError("timed out"))
    assert state(b) is State.OPEN


def test_after_the_delay_one_probe_closes_it_or_opens_it_for_longer() -> None:
    clock = Clock()
    b = breaker(clock, reset_s=2.0, most=10.0)
    fail(b, 3)
    delays = []
    for _ in range(5):  # each failed probe doubles the delay, up to the cap
        clock.advance(0.01)
        with pytest.raises(UnavailableError) as caught:
            b.call(down)
        assert caught.value is not DOWN  # failed fast, not by a try
        delay = caught.value.retry_after
        assert delay is not None
        delays.append(round(delay + 0.01, 6))
        clock.advance(delay)
        with pytest.raises(UnavailableError) as probed:
            b.call(down)  # the probe: it reaches the store, and fails
        assert probed.value is DOWN and state(b) is State.OPEN
    assert delays == [2.0, 4.0, 8.0, 10.0, 10.0]
    clock.advance(10.0)
    assert b.call(lambda: 7) == 7  # the store is back: the probe closes it
    assert state(b) is State.CLOSED
    fail(b, 3)  # and it opens again after N, with the first delay again
    with pytest.raises(UnavailableError, match=r"next try in 2\.0 s"):
        b.call(down)
    counts = b.counts()
    assert counts == {
        "breaker_store_state": 2,
        "breaker_store_rejected": 6,
        "breaker_store_closed_to_open": 2,
        "breaker_store_open_to_half_open": 6,
        "breaker_store_half_open_to_open": 5,
        "breaker_store_half_open_to_closed": 1,
    }


def test_a_callers_error_in_the_probe_says_the_store_is_up() -> None:
    clock = Clock()
    b = breaker(clock)
    fail(b, 3)
    clock.advance(5.0)
    fail(b, 1, NotFoundError("e-1"))
    assert state(b) is State.CLOSED


def test_exactly_one_probe_goes_through_while_others_fail_fast() -> None:
    clock = Clock()
    b = breaker(clock)
    fail(b, 3)
    clock.advance(5.0)
    inside, release = threading.Event(), threading.Event()
    reached: list[str] = []

    def probe() -> str:
        reached.append("probe")
        inside.set()
        assert release.wait(10)
        return "back"

    outcomes: list[Any] = []
    prober = threading.Thread(target=lambda: outcomes.append(b.call(probe)))
    prober.start()
    assert inside.wait(10)
    assert state(b) is State.HALF_OPEN

    def other() -> None:
        try:
            b.call(reached.append, "other")
        except UnavailableError as exc:
            outcomes.append(exc)

    others = [threading.Thread(target=other) for _ in range(16)]
    for thread in others:
        thread.start()
    for thread in others:
        thread.join(10)
    assert reached == ["probe"]  # 16 concurrent callers: none reached the store
    assert all("one call is trying it now" in str(o) for o in outcomes)
    release.set()
    prober.join(10)
    assert outcomes[-1] == "back" and state(b) is State.CLOSED
    b.call(reached.append, "after")
    assert reached == ["probe", "after"]


def test_awaited_calls_share_the_one_probe_too() -> None:
    clock = Clock()
    b = breaker(clock)
    fail(b, 3)
    clock.advance(5.0)
    reached: list[int] = []

    async def store(n: int) -> int:
        reached.append(n)
        await asyncio.sleep(0.05)
        return n

    async def scenario() -> list[Any]:
        calls = [b.acall(store, n) for n in range(10)]
        return await asyncio.gather(*calls, return_exceptions=True)

    outcomes = asyncio.run(scenario())
    assert reached == [0] and outcomes[0] == 0
    assert all(isinstance(o, UnavailableError) for o in outcomes[1:])
    assert state(b) is State.CLOSED


def test_a_probe_cancelled_leaves_the_next_call_to_probe() -> None:
    clock = Clock()
    b = breaker(clock)
    fail(b, 3)
    clock.advance(5.0)

    async def cancelled() -> None:
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(b.acall(cancelled))
    assert state(b) is State.HALF_OPEN
    assert b.call(lambda: "probed") == "probed" and state(b) is State.CLOSED


def test_a_call_that_ends_after_the_breaker_opened_changes_nothing() -> None:
    clock = Clock()
    b = breaker(clock)
    slow = b.admit()  # let through while closed …
    fail(b, 3)  # … the breaker opens meanwhile …
    b.settle(slow)  # … and its late success does not close it
    assert state(b) is State.OPEN
    clock.advance(5.0)
    probe = b.admit()
    b.settle(False, DOWN)  # a late failure of a call let through before: nothing
    assert state(b) is State.HALF_OPEN
    b.settle(probe)
    assert state(b) is State.CLOSED


def test_a_file_store_has_no_breaker(tmp_path: Any) -> None:
    """SQLite is never "down": a locked file or a full disk is the call's error, so nothing
    counts them (and the background records keep their retries)."""
    from memvault import Memory
    from memvault.testing import HashEmbedder

    with Memory(str(tmp_path / "m.db"), embedder=HashEmbedder()) as memory:
        assert memory.backend.breaker is None
        assert not any(key.startswith("breaker_") for key in memory.stats())


def test_the_policy_and_its_settings_are_checked() -> None:
    assert Settings().breaker() == Policy(5, 5.0)
    env = {"MEMVAULT_BREAKER_FAILURES": "3", "MEMVAULT_BREAKER_RESET_S": "0.5"}
    assert Settings.from_env(env).breaker() == Policy(3, 0.5)
    assert breaker_from_env(env | {"MEMVAULT_MAX_TAGS": "many"}) == Policy(3, 0.5)  # not its
    assert breaker_from_env({}) == Policy()
    for bad in (
        {"MEMVAULT_BREAKER_FAILURES": "0"},
        {"MEMVAULT_BREAKER_FAILURES": "many"},
        {"MEMVAULT_BREAKER_RESET_S": "0"},
        {"MEMVAULT_BREAKER_RESET_S": "-1"},
        {"MEMVAULT_BREAKER_RESET_S": "inf"},
        {"MEMVAULT_BREAKER_RESET_S": "nan"},
    ):
        with pytest.raises(ConfigError, match="breaker"):
            Settings.from_env(bad)
        with pytest.raises(ConfigError, match="breaker"):
            breaker_from_env(bad)
    for failures, reset_s in ((0, 1.0), (True, 1.0), (2, 0.0), (2, float("nan"))):
        with pytest.raises(ConfigError, match="failures >= 1"):
            Policy(failures, reset_s)
    assert Policy(5, 120.0).delay(3) == 120.0  # a reset longer than the cap is the cap


def test_unavailable_is_503_with_retry_after_and_exit_code_8() -> None:
    error = UnavailableError("down", retry_after=2.2)
    assert status_of(error) == 503 and headers_of(error) == {"Retry-After": "3"}
    assert headers_of(UnavailableError("down")) == {"Retry-After": "1"}
    assert headers_of(UnavailableError("down", retry_after=0.0)) == {"Retry-After": "1"}
    assert headers_of(BackendError("disk")) == {}
    assert exit_code(error) == EXIT_UNAVAILABLE == 8
    assert exit_code(BackendError("disk")) == 1


def test_the_remote_client_reads_a_503_as_unavailable() -> None:
    sent = Request("GET", "/v1/count")
    error = UnavailableError("the PostgreSQL store is unavailable", retry_after=4.0)
    body = {"error": {"type": "UnavailableError", "message": str(error), **details(error)}}
    again = error_of(sent, 503, body, "http://h")
    assert type(again) is UnavailableError and again.retry_after == 4.0
    for status in (502, 503, 504):  # a proxy's page: the server behind it is down
        proxied = error_of(sent, status, "<html>Bad Gateway</html>", "http://h")
        assert type(proxied) is UnavailableError, status
    assert type(error_of(sent, 500, "<html>oops</html>", "http://h")) is BackendError


class _Open:
    """A stand-in for a breaker: closed or not, as the test says."""

    def __init__(self, closed: bool) -> None:
        self.closed = closed


def _recorded(breaker: Any, record: Callable[[], Any]) -> tuple[Any, dict[str, int]]:
    stats = Stats()
    recorder = Recorder(stats, breaker)

    async def scenario() -> Any:
        return await recorder.submit(record)

    return asyncio.run(scenario()), stats.snapshot()


def test_a_record_is_dropped_at_once_while_the_breaker_is_open(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from memvault.agents import background

    monkeypatch.setattr(background, "BACKOFF_S", 0.0)
    tries: list[int] = []

    async def record() -> None:
        tries.append(1)
        raise UnavailableError("fail fast")

    assert _recorded(_Open(closed=False), record) == (None, {"executions_dropped": 1})
    assert len(tries) == 1  # no retry against an open breaker
    tries.clear()
    assert _recorded(_Open(closed=True), record) == (None, {"executions_dropped": 1})
    assert len(tries) == 4  # closed: the usual retries


def test_the_learner_counts_extractions_that_found_the_store_unavailable() -> None:
    learner = Learner()
    try:
        learner.schedule(("t", "s1"), down)
        learner.schedule(("t", "s2"), lambda: (_ for _ in ()).throw(BackendError("disk")))
        assert learner.flush(10)
        assert (learner.failures, learner.unavailable) == (2, 1)
    finally:
        learner.close()


def test_which_postgresql_errors_say_the_store_is_unavailable() -> None:
    """Lost connections and a server shutting down or refusing drop the pool; a busy pool
    counts too; errors of the query or of data never do."""
    psycopg = pytest.importorskip("psycopg")
    pool = pytest.importorskip("psycopg_pool")
    from memvault.store.postgres_pool import failure, lost

    e = psycopg.errors
    cases = {
        psycopg.OperationalError("connection failed: Connection refused"): (True, True),
        e.AdminShutdown("terminating connection due to administrator command"): (True, True),
        e.CannotConnectNow("the database system is starting up"): (True, True),
        e.ConnectionFailure("connection failure"): (True, True),
        e.TooManyConnections("too many clients already"): (False, True),
        pool.PoolTimeout("couldn't get a connection after 30 sec"): (False, True),
        pool.PoolClosed("the pool is closed"): (False, False),
        e.QueryCanceled("statement timeout"): (False, False),
        e.UniqueViolation("duplicate key"): (False, False),
        e.DiskFull("no space left"): (False, False),
        e.LockNotAvailable("could not obtain lock"): (False, False),
    }
    for error, (drops, counts) in cases.items():
        translated = failure(error)
        assert lost(error) == drops, error
        assert unavailable(translated) == counts, error
        assert isinstance(translated, BackendError)
