"""The audit log at the backend level: written in the transaction of the change (a batch that
fails leaves no event), numbered in order, refused any update — on every backend."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlean

from memvault import ConflictError, Memory, NewEntry
from memvault.config import Settings
from memvault.local import run_blocking
from memvault.store import (
    AuditOp,
    AuditQuery,
    Backend,
    DeleteOp,
    GetOp,
    PutOp,
    Removed,
    ReplaceOp,
    Stamp,
)
from memvault.store.inmemory import InMemoryBackend
from memvault.store.sqlite import SQLiteBackend
from memvault.testing import HashEmbedder


@pytest.fixture(params=["memory", "sqlite"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    made: Backend = (
        InMemoryBackend()
        if request.param == "memory"
        else SQLiteBackend(str(tmp_path / "m.db"), Settings())
    )
    yield made
    made.close()


def _events(backend: Backend, tenant: str = "default") -> list[Any]:
    (found,) = backend.batch([AuditOp(AuditQuery(tenant), 100, order="oldest")])
    return list(found)


def test_a_batch_that_fails_leaves_no_event(backend: Backend) -> None:
    memory = Memory(backend, embedder=HashEmbedder())
    entry = memory.write("kept", scope="user:a")
    before = _events(backend)
    planner = memory.planners.store
    fresh = planner.new_entry(NewEntry("new", "user:a"), planner.now())
    stale = ReplaceOp("default", entry, expected_revision=99)
    with pytest.raises(ConflictError):
        backend.batch([PutOp("default", fresh), stale], Stamp("write", "tester"))
    assert _events(backend) == before
    assert backend.batch([GetOp("default", fresh.id)]) == [None]


def test_events_carry_the_stamp_and_are_numbered_in_order(backend: Backend) -> None:
    memory = Memory(backend, embedder=HashEmbedder())
    first = memory.write("one", scope="user:a")
    second = memory.write("two", scope="user:a")
    backend.batch([DeleteOp("default", first.id)], Stamp("cleanup", "ops-team"))
    backend.batch([DeleteOp("default", "no-such-id")], Stamp("cleanup", "ops-team"))
    events = _events(backend)
    assert [(e.entry_id, e.change, e.operation, e.actor) for e in events] == [
        (first.id, "created", "write", "local"),
        (second.id, "created", "write", "local"),
        (first.id, "deleted", "cleanup", "ops-team"),
    ]
    assert [e.seq for e in events] == sorted({e.seq for e in events})
    assert backend.batch([DeleteOp("default", second.id)]) == [[Removed(second.id, "user:a")]]
    last = _events(backend)[-1]  # ops run by hand, without a stamp
    assert (last.entry_id, last.operation, last.actor) == (second.id, "direct", "backend")


def test_sqlite_refuses_to_update_an_event(tmp_path: Path) -> None:
    with Memory(str(tmp_path / "m.db"), embedder=HashEmbedder()) as memory:
        memory.write("one", scope="user:a")
        backend: Any = memory.backend
        with pytest.raises(sqlean.IntegrityError, match="append-only"):
            backend._conn.execute("UPDATE audit_log SET actor = 'someone else'")
        assert memory.audit().events[0].actor == "local"


def test_events_of_many_entries_are_read_in_pieces_and_in_order(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memvault.core

    memory = Memory(backend, embedder=HashEmbedder())
    entries = [memory.write(f"fact {n}", scope="user:a") for n in range(7)]
    memory.update(entries[0].id, tags=["x"])
    monkeypatch.setattr(memvault.core, "PAGE", 2)  # 2 ids a query, 2 events a page
    found = run_blocking(memory.planners.store.events([e.id for e in entries]), backend)
    assert len(found) == 8 and [e.seq for e in found] == sorted(e.seq for e in found)
    assert {e.entry_id for e in found} == {e.id for e in entries}
