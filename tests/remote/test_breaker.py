"""A memvault server that goes down is not hammered by its clients: a real ``memvault serve``
process is killed (SIGKILL) and started again on the same port and store, while a remote
``Memory`` and ``AsyncMemory`` keep working on it.

After ``MEMVAULT_BREAKER_FAILURES`` requests that could not reach it, the client fails fast
with UnavailableError — no request leaves, no connection is attempted — until its probe; once
the server is back, the probe succeeds and the same memory works again, nothing reopened."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memvault import AsyncMemory, Memory, UnavailableError
from memvault.breaker import Breaker, State

from ..server.conftest import free_port, wait_until_up

pytestmark = pytest.mark.slow  # a server process, killed and started again

FAILURES, RESET_S = 3, 0.5


def state(breaker: Breaker) -> State:
    """The breaker's state now (a call: type checkers do not narrow it across calls)."""
    return breaker.state


class Served:
    """``memvault serve`` on one port over one SQLite file, started and killed at will."""

    def __init__(self, home: Path) -> None:
        self.home, self.port = home, free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        environment = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
        environment["MEMVAULT_HOME"] = str(self.home)
        command = [sys.executable, "-m", "memvault", "--store", str(self.home / "shared.db")]
        with (self.home / "serve.log").open("a") as log:
            self.process = subprocess.Popen(
                [*command, "serve", "--port", str(self.port), "--log-level", "warning"],
                env=environment,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        process = self.process
        wait_until_up(self.url, alive=lambda: process.poll() is None)

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()  # no goodbye: connections reset, the port closed
            self.process.wait(timeout=30)


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    monkeypatch.setenv("MEMVAULT_BREAKER_FAILURES", str(FAILURES))
    monkeypatch.setenv("MEMVAULT_BREAKER_RESET_S", str(RESET_S))
    server = Served(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.kill()


def _counting_sends(client: Any) -> list[int]:
    """Count the attempts the client's HTTP pool makes (each connects, or tries to)."""
    sent: list[int] = []
    send = client.send

    def counted(*args: Any, **kwargs: Any) -> Any:
        sent.append(1)
        return send(*args, **kwargs)

    client.send = counted
    return sent


def _timed(call: Callable[[], Any]) -> float:
    started = time.monotonic()
    with pytest.raises(UnavailableError) as caught:
        call()
    assert isinstance(caught.value, UnavailableError)
    return time.monotonic() - started


def test_the_client_fails_fast_after_n_failures_and_recovers_after_a_restart(
    served: Served,
) -> None:
    with Memory(served.url, timeout=5) as memory:
        entry = memory.write("Alice drinks green tea", scope="user:alice")
        link = memory._at.link  # type: ignore[union-attr]
        breaker, sent = link.breaker, _counting_sends(link.sender.client)
        served.kill()
        for _ in range(FAILURES):  # each request tries (and retries: it was never sent)
            assert _timed(lambda: memory.count(scope="user:alice")) < 3
        assert state(breaker) is State.OPEN and len(sent) == FAILURES * 3
        passed = breaker.passed
        waits = [_timed(lambda: memory.get(entry.id)) for _ in range(50)]
        assert max(waits) < 0.05  # failed fast: nothing left the process
        assert len(sent) == FAILURES * 3 and breaker.passed == passed
        with pytest.raises(UnavailableError, match=r"fail fast.*the next try in") as caught:
            memory.get(entry.id)
        assert "cannot reach the memvault server" in str(caught.value)  # what failed last
        served.start()  # the same port, the same store
        healed = _until_it_answers(lambda: memory.get(entry.id))
        assert healed.content == "Alice drinks green tea"
        assert state(breaker) is State.CLOSED
        assert memory.count(scope="user:alice") == 1
        counts = memory.stats()
    assert counts["breaker_server_closed_to_open"] == 1
    assert counts["breaker_server_half_open_to_closed"] == 1
    assert counts["breaker_server_rejected"] >= 51


def _until_it_answers(call: Callable[[], Any], seconds: float = 30) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        try:
            return call()
        except UnavailableError:
            assert time.monotonic() < deadline, "the server never came back"
            time.sleep(0.1)


def test_background_records_are_dropped_at_once_while_the_server_is_down(
    served: Served,
) -> None:
    def fields(n: int) -> dict[str, Any]:
        return {"workflow_id": "wf", "agent_id": "a", "input": f"job {n}", "success": True}

    async def scenario() -> tuple[Any, list[Any], int, float, int, dict[str, int]]:
        async with AsyncMemory(served.url, timeout=5) as memory:
            assert await memory.record_execution_later(**fields(0)) is not None
            breaker = memory._at.link.breaker  # type: ignore[union-attr]
            served.kill()
            passed = breaker.passed
            first = await memory.record_execution_later(**fields(1))  # its tries open it
            assert state(breaker) is State.OPEN and breaker.passed - passed == FAILURES
            started = time.monotonic()
            outcomes = await asyncio.gather(
                *(memory.record_execution_later(**fields(n)) for n in range(2, 42))
            )
            took = time.monotonic() - started
            reached = breaker.passed - passed
            await asyncio.to_thread(served.start)
            await asyncio.sleep(RESET_S)
            for n in range(42, 45):  # the probe, then the breaker closed
                for _ in range(100):
                    if await memory.record_execution_later(**fields(n)) is not None:
                        break
                    await asyncio.sleep(0.1)
            stored = len(await memory.executions())
            return first, outcomes, reached, took, stored, await memory.stats()

    first, outcomes, reached, took, stored, counts = asyncio.run(scenario())
    assert first is None and outcomes == [None] * 40  # dropped, never raised into the workflow
    assert reached == FAILURES  # the 40 were dropped without a request
    assert took < 0.5
    assert counts["executions_dropped"] == 41
    assert stored == 1 + 3
