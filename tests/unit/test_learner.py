"""The background extraction worker: one slot per session, most recent wins, flush waits."""

from __future__ import annotations

import functools
import threading

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
