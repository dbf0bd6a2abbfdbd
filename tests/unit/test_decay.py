"""Decay (pure) and the log of uses: the setting, the factor, counting and storing uses."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest

from memvault.config import Settings, decay_policy
from memvault.errors import ConfigError
from memvault.retrieval.decay import factor, half_life
from memvault.store.ops import Use
from memvault.store.use_log import Storing, UseLog, merged

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def test_the_setting_names_half_lives_and_some_categories_never_decay() -> None:
    policy = decay_policy("context:14, fact:90, *:30")
    assert half_life(policy, "context") == 14 and half_life(policy, "fact") == 90
    assert half_life(policy, "note") == 30 and half_life(policy, None) == 30
    assert half_life(policy, "preference") == 0  # never, unless named
    assert half_life(decay_policy("preference:7"), "preference") == 7
    assert half_life(decay_policy("fact:90"), "note") == 0  # no '*': other categories keep


@pytest.mark.parametrize("text", ["fact", "fact:", ":9", "fact:-1", "fact:nan", "fact:inf", "x:y"])
def test_a_decay_setting_that_does_not_parse_is_refused(text: str) -> None:
    with pytest.raises(ConfigError, match="setting decay"):
        Settings(decay=text)


def test_a_score_halves_each_half_life_and_never_grows() -> None:
    assert factor(90, NOW - timedelta(days=90), NOW) == pytest.approx(0.5)
    assert factor(90, NOW - timedelta(days=180), NOW) == pytest.approx(0.25)
    assert factor(0, NOW - timedelta(days=9999), NOW) == 1.0
    assert factor(10, NOW + timedelta(days=1), NOW) == 1.0  # a use after now: fresh


def test_the_log_counts_uses_and_keeps_the_latest() -> None:
    log = UseLog()
    log.add("t", ["a", "b", "a"], NOW)  # twice in one answer: one use
    log.add("t", ["a"], NOW - timedelta(days=1))
    log.add("u", ["a"], NOW)
    assert log.pending("t", ["a", "b", "c"]) == {"a": Use("a", NOW, 2), "b": Use("b", NOW, 1)}
    taken = log.take()
    assert sorted(taken) == ["t", "u"] and len(log) == 0
    assert merged(Use("a", NOW, 3), Use("a", NOW - timedelta(days=2), 1)) == Use("a", NOW, 4)
    assert merged(None, Use("a", NOW)) == Use("a", NOW)


def test_storing_waits_for_the_first_use_then_stores_once() -> None:
    stored = threading.Event()
    calls: list[int] = []

    def store() -> int:
        calls.append(1)
        stored.set()
        return 1

    storing = Storing(store, seconds=0.05)
    assert not stored.wait(0.2)  # nothing pending: no timer, no call
    storing.soon()
    storing.soon()  # one timer at a time
    assert stored.wait(2)
    storing.close()  # and once more on close
    assert len(calls) == 2
    storing.soon()  # closed: no more timers
    assert len(calls) == 2


def test_a_store_that_fails_is_counted_not_raised() -> None:
    def down() -> int:
        raise OSError("the store is down")

    storing = Storing(down, seconds=10)
    storing.close()
    assert storing.dropped == 1
