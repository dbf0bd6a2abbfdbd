"""Retention: a tenant's policy removes old records, long-superseded and long-expired entries,
and idle sessions with everything in them — or, dry, only lists them; nothing else goes."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from memvault import ConfigError, Memory, Settings
from memvault.config import retention_policies, retention_policy
from memvault.testing import HashEmbedder, ManualClock

DAY = timedelta(days=1)


def test_the_policy_setting_is_read_per_tenant() -> None:
    text = "records=90, superseded=30 ; acme: records=7, idle_sessions=60; globex: records=off"
    assert retention_policies(text)[None] == {"records": 90, "superseded": 30}
    assert retention_policy(text, "acme") == {"records": 7, "superseded": 30, "idle_sessions": 60}
    assert retention_policy(text, "globex") == {"superseded": 30}
    assert retention_policy("", "acme") == {}
    for bad in ("records", "forever=3", "records=-1", "records=soon", ": records=3"):
        with pytest.raises(ConfigError, match="retention"):
            Settings(retention=bad)


@pytest.fixture
def aged(tmp_path: Path) -> Any:
    """A store with old and new things of every kind; the clock 100 days on."""
    clock = ManualClock()
    policy = "records=30,superseded=10,expired=1,idle_sessions=60"
    memory = Memory(
        str(tmp_path / "m.db"),
        settings=Settings(retention=policy),
        embedder=HashEmbedder(),
        clock=clock,
    )
    idle = memory.create_session("alice", title="old project")
    memory.append_record(idle.id, "user", "long ago")
    memory.add_session_memory(idle.id, "a note of the old project")
    busy = memory.create_session("alice", title="current")
    old_record = memory.append_record(busy.id, "user", "an old message")
    fact = memory.write("Alice lives in Berlin", scope="user:alice")
    memory.supersede(fact.id, "Alice lives in Paris", reason="moved")
    memory.write("a short-lived fact", scope="user:alice", ttl=timedelta(hours=1))
    kept = memory.write("a lasting fact", scope="user:alice")
    clock.advance(timedelta(days=100))
    memory.append_record(busy.id, "user", "a fresh message")
    yield memory, {"idle": idle, "busy": busy, "old_record": old_record, "fact": fact, "kept": kept}
    memory.close()


def test_a_dry_run_lists_what_would_go_and_changes_nothing(aged: Any) -> None:
    memory, things = aged
    before = memory.count(include_superseded=True)
    report = memory.apply_retention(dry_run=True)
    assert report.dry_run and report.counts == {
        "expired": 1,
        "idle_sessions": 3,
        "records": 1,
        "superseded": 1,
    }
    assert {item.entry_id for item in report.items if item.rule == "superseded"} == {
        things["fact"].id
    }
    assert "Berlin" not in str(report.to_dict())  # ids, scopes and categories only
    assert memory.count(include_superseded=True) == before


def test_retention_removes_what_is_due_and_nothing_else(aged: Any) -> None:
    memory, things = aged
    report = memory.apply_retention()
    assert not report.dry_run and len(report.items) == 6
    assert [s.id for s in memory.list_sessions("alice")] == [things["busy"].id]
    assert [r.content for r in memory.records(things["busy"].id)] == ["a fresh message"]
    assert memory.history(memory.retrieve("user:alice")[0].id).versions  # Paris stays, current
    assert {e.content for e in memory.retrieve("user:alice")} == {
        "Alice lives in Paris",
        "a lasting fact",
    }
    assert memory.apply_retention().items == ()  # nothing more is due


def test_without_a_policy_nothing_goes(tmp_path: Path) -> None:
    with Memory(str(tmp_path / "m.db"), embedder=HashEmbedder()) as memory:
        memory.write("anything", scope="user:a")
        report = memory.apply_retention()
        assert report.policy == {} and report.items == () and memory.count() == 1


def test_what_retention_removes_is_in_the_audit_log_and_a_dry_run_logs_nothing(aged: Any) -> None:
    memory, _ = aged
    before = memory.audit(limit=1).events[0].seq
    memory.apply_retention(dry_run=True)
    assert memory.audit(limit=1).events[0].seq == before
    report = memory.as_actor("janitor").apply_retention()
    removed = memory.audit(operation="apply_retention", change="deleted", limit=1000).events
    assert {e.entry_id for e in removed} == {item.entry_id for item in report.items}
    assert {e.actor for e in removed} == {"janitor"}
