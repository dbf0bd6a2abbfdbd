"""The background extraction worker: one slot per session, most recent wins, flush waits."""

from __future__ import annotations

import asyncio
import functools
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from memvault.errors import ClosedError
from memvault.extraction.worker import Failure, Learner


def test_a_task_runs_in_the_background_and_flush_waits_for_it() -> None:
    learner = Learner()
    release = threading.Event()
    assert learner.schedule("s1", lambda: release.wait(5) and "done") == "scheduled"
    assert learner.pending() == 1
    assert not learner.flush(timeout=0.05)
    release.set()
    assert learner.flush(timeout=5)
    assert learner.results["s1"] == "done"
    learner.close()


def test_a_turn_during_a_run_is_queued_and_the_most_recent_wins() -> None:
    learner = Learner()
    started, release = threading.Event(), threading.Event()
    ran: list[str] = []

    def first() -> None:
        started.set()
        release.wait(5)
        ran.append("first")

    learner.schedule("s1", first)
    started.wait(5)
    assert learner.schedule("s1", lambda: ran.append("second")) == "queued"
    assert learner.schedule("s1", lambda: ran.append("third")) == "queued"
    release.set()
    learner.close()
    assert ran == ["first", "third"]


def test_slots_run_side_by_side() -> None:
    learner = Learner(workers=2)
    barrier = threading.Barrier(2, timeout=5)
    learner.schedule("a", barrier.wait)
    learner.schedule("b", barrier.wait)
    assert learner.flush(timeout=5)  # both ran at once, or the barrier would have broken
    assert not any(isinstance(r, Failure) for r in learner.results.values())
    learner.close()


def test_a_failure_is_counted_kept_and_does_not_stop_the_slot() -> None:
    learner = Learner()

    def broken() -> None:
        raise RuntimeError("model down")

    learner.schedule("s1", broken)
    learner.flush(timeout=5)
    assert learner.failures == 1
    assert learner.results["s1"] == Failure("RuntimeError: model down")
    learner.schedule("s1", lambda: "again")
    learner.close()
    assert learner.results["s1"] == "again"


def test_close_waits_then_refuses_new_work() -> None:
    learner = Learner()
    done = []
    learner.schedule("s1", lambda: done.append(1))
    learner.close()
    assert done == [1]
    with pytest.raises(ClosedError):
        learner.schedule("s1", lambda: None)


def test_wait_waits_for_one_slot_only() -> None:
    learner = Learner()
    release = threading.Event()
    learner.schedule("slow", lambda: release.wait(5))
    learner.schedule("quick", lambda: "done")
    assert learner.wait("quick", timeout=5)
    assert not learner.wait("slow", timeout=0.05)
    release.set()
    assert learner.wait("slow", timeout=5)
    learner.close()


def test_only_the_latest_results_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("memvault.extraction.worker.KEPT_RESULTS", 3)
    learner = Learner()
    for n in range(5):
        learner.schedule(f"s{n}", functools.partial(int, n))
        learner.wait(f"s{n}", timeout=5)
    assert list(learner.results) == ["s2", "s3", "s4"]
    learner.close()


def test_a_flush_waits_for_the_slots_it_matches_only() -> None:
    learner = Learner()
    release = threading.Event()
    learner.schedule(("globex", "s"), lambda: release.wait(5))
    learner.schedule(("acme", "s"), lambda: "done")
    assert learner.flush(5, lambda slot: slot[0] == "acme")  # type: ignore[index]
    assert not learner.flush(0.05)
    release.set()
    learner.close()


def test_awaiting_a_flush_holds_no_thread() -> None:
    """Many awaited flushes on one thread-pool of one thread: the pool still runs other work,
    each flush wakes when its slot is done (or answers False at its timeout)."""
    learner = Learner()
    release = threading.Event()
    learner.schedule("slow", lambda: release.wait(10))

    async def scenario() -> tuple[list[bool], int, bool]:
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(1))
        waits = [asyncio.create_task(learner.flushed(10)) for _ in range(20)]
        timed_out = await learner.flushed(0.05)
        answered = await asyncio.wait_for(asyncio.to_thread(lambda: 42), 5)
        release.set()
        return await asyncio.gather(*waits), answered, timed_out

    woken, answered, timed_out = asyncio.run(scenario())
    assert woken == [True] * 20 and answered == 42 and timed_out is False
    assert learner._waiters == []
    learner.close()


def test_an_awaited_flush_of_an_idle_learner_answers_at_once() -> None:
    learner = Learner()
    assert asyncio.run(learner.flushed(0))
    learner.close()
