"""How the async driver runs a plan's calls: slow ones (an LLM's) on a pool of their own,
pauses without a thread, the caller's context carried along."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from memvault.core import Plan, call
from memvault.drivers import drive_awaiting

REQUEST = contextvars.ContextVar("request", default="none")


def _run(plan: Plan[Any]) -> Any:
    async def no_ops(step: Any) -> Any:
        raise AssertionError(f"no store step expected, got {step!r}")

    return drive_awaiting(plan, no_ops)


def test_slow_calls_never_hold_the_threads_the_store_needs() -> None:
    """Slow calls (more than the default pool has threads) waiting on a stalled service leave
    that pool free for store calls and embeddings."""
    release = threading.Event()

    def stalled() -> Plan[Any]:
        return (yield from call(release.wait, 10, slow=True))

    async def scenario() -> tuple[list[bool], int]:
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(1))
        waiting = [asyncio.create_task(_run(stalled())) for _ in range(8)]
        await asyncio.sleep(0.1)
        answered = await asyncio.wait_for(asyncio.to_thread(lambda: 42), 5)
        release.set()
        return await asyncio.gather(*waiting), answered

    woken, answered = asyncio.run(scenario())
    assert woken == [True] * 8 and answered == 42


def test_a_slow_call_runs_in_the_callers_context() -> None:
    def seen() -> Plan[Any]:
        return (yield from call(REQUEST.get, slow=True))

    async def scenario() -> str:
        REQUEST.set("req-1")
        return str(await _run(seen()))

    assert asyncio.run(scenario()) == "req-1"


def test_a_pause_holds_no_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """A retry's backoff (``time.sleep``) is awaited as ``asyncio.sleep``, not in a thread."""

    def no_thread(*args: Any) -> Any:
        raise AssertionError("a pause took a thread")

    monkeypatch.setattr(asyncio, "to_thread", no_thread)

    def paused() -> Plan[Any]:
        return (yield from call(time.sleep, 0.01, blocking=True))

    async def scenario() -> list[None]:
        return list(await asyncio.gather(*(_run(paused()) for _ in range(5))))

    assert asyncio.run(scenario()) == [None] * 5
