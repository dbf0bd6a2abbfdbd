"""Fire-and-forget execution records from async callers, on a real SQLite store: stored in the
background, retried when the store fails, dropped and counted — never raised into the caller."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from memvault import AsyncMemory
from memvault.agents import background
from memvault.errors import BackendError, ValidationError
from memvault.testing import HashEmbedder


def _fields(n: int, **changes: Any) -> dict[str, Any]:
    return {
        "workflow_id": "wf",
        "agent_id": "worker",
        "input": f"job {n}",
        "success": True,
        "strategy": "react",
        **changes,
    }


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(background, "BACKOFF_S", 0.0)


def test_records_are_stored_in_the_background(tmp_path: Path) -> None:
    async def scenario() -> tuple[int, int, dict[str, int]]:
        async with AsyncMemory(str(tmp_path / "m.db"), embedder=HashEmbedder()) as memory:
            tasks = [memory.record_execution_later(**_fields(n)) for n in range(5)]
            bad = memory.record_execution_later(**_fields(9, tokens_in=-1))
            assert await memory.flush(timeout=30)
            assert all(t.done() for t in tasks) and await bad is None
            (stats,) = await memory.strategy_stats()
            return len(await memory.executions()), stats.runs, await memory.stats()

    stored, runs, counts = asyncio.run(scenario())
    assert (stored, runs) == (5, 5)
    assert counts["executions"] == 5 and counts["executions_dropped"] == 1


def test_a_failing_store_is_retried_then_the_record_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def scenario() -> tuple[int, int, object]:
        memory = AsyncMemory(str(tmp_path / "m.db"), embedder=HashEmbedder())
        failures = {"left": 2}
        batch = memory.backend.abatch

        async def flaky(ops: Any, stamp: Any = None) -> Any:
            if any(type(op).__name__ == "PutOp" for op in ops) and failures["left"]:
                failures["left"] -= 1
                raise BackendError("the disk is full")
            return await batch(ops, stamp) if stamp is not None else await batch(ops)

        monkeypatch.setattr(memory.backend, "abatch", flaky)
        first = await memory.record_execution_later(**_fields(1))  # fails twice, then stored
        assert first is not None
        failures["left"] = 100
        dropped = await memory.record_execution_later(**_fields(2))  # 4 tries, then dropped
        failures["left"] = 0
        stored = len(await memory.executions())
        counts = await memory.stats()
        await memory.aclose()
        return stored, counts.get("executions_dropped", 0), dropped

    assert asyncio.run(scenario()) == (1, 1, None)


def test_a_flush_that_times_out_cancels_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``flush(timeout)`` says False when records are still pending; they go on and are
    stored (a timed-out flush used to cancel them: neither stored nor counted)."""

    async def scenario() -> tuple[bool, bool, int, dict[str, int]]:
        async with AsyncMemory(str(tmp_path / "m.db"), embedder=HashEmbedder()) as memory:
            batch = memory.backend.abatch

            async def slow(ops: Any, stamp: Any = None) -> Any:
                await asyncio.sleep(0.05)
                return await batch(ops, stamp) if stamp is not None else await batch(ops)

            monkeypatch.setattr(memory.backend, "abatch", slow)
            for n in range(5):
                memory.record_execution_later(**_fields(n))
            early = await memory.flush(timeout=0.001)
            late = await memory.flush(timeout=30)
            return early, late, len(await memory.executions()), await memory.stats()

    early, late, stored, counts = asyncio.run(scenario())
    assert (early, late, stored) == (False, True, 5)
    assert "executions_dropped" not in counts


def test_a_background_record_outside_a_loop_is_a_validation_error(tmp_path: Path) -> None:
    memory = AsyncMemory(str(tmp_path / "m.db"), embedder=HashEmbedder())
    with pytest.raises(ValidationError, match="running event loop"):
        memory.record_execution_later(**_fields(1))
    memory.close()
