"""The audit log on every backend. Mixed into
:class:`~memvault.testing.conformance.MemoryConformance`, whose fixtures it uses."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import pytest

from ..errors import ForbiddenError, NotFoundError, ValidationError
from ..types import AuditEvent
from . import ManualClock

SECRET = "Quetzal-7781 is the door code"


def _of(memory: Any, entry_id: str) -> list[tuple[str, str]]:
    """(change, operation) of every event of an entry, oldest first."""
    page = memory.audit(entry_id=entry_id, order="oldest")
    return [(e.change, e.operation) for e in page.events]


def _every(memory: Any, **query: Any) -> list[AuditEvent]:
    events, cursor = [], None
    while True:
        page = memory.audit(order="oldest", limit=2, cursor=cursor, **query)
        events += page.events
        cursor = page.next_cursor
        if cursor is None:
            return events


class AuditConformance:
    """Every change is logged — who, which operation, when, which entry — never content."""

    def test_each_change_is_logged_in_its_transaction_without_content(self, memory: Any) -> None:
        entry = memory.write(SECRET, scope="user:alice", tags=["x"])
        memory.update(entry.id, content=SECRET + " (changed)")
        newer = memory.supersede(entry.id, "The door code changed", reason="rotated")
        memory.restore(entry.id)
        memory.delete(newer.id)
        assert _of(memory, entry.id) == [
            ("created", "write"),
            ("changed", "update"),
            ("changed", "supersede"),
            ("changed", "restore"),
            ("changed", "delete"),  # its chain mended when its successor went
        ]
        assert _of(memory, newer.id) == [
            ("created", "supersede"),
            ("changed", "restore"),
            ("deleted", "delete"),
        ]
        events = memory.audit().events
        assert all(e.actor == memory.actor and e.tenant == memory.tenant for e in events)
        assert all(e.scope == "user:alice" for e in events)
        assert "Quetzal" not in json.dumps([e.to_dict() for e in events])
        seqs = [e.seq for e in events]
        assert seqs == sorted(seqs, reverse=True) and len(set(seqs)) == len(seqs)

    def test_the_actor_is_whoever_the_memory_acts_as(self, memory: Any) -> None:
        planner = memory.as_actor("planner-agent")
        written = planner.write("a plan", scope="workspace:w")
        memory.write("a note", scope="workspace:w")
        by_planner = memory.audit(actor=planner.actor).events
        assert [e.entry_id for e in by_planner] == [written.id]
        assert planner.actor.endswith("planner-agent") and planner.actor != memory.actor
        assert planner.tenant == memory.tenant
        with pytest.raises(ValidationError):
            memory.as_actor("")

    def test_facility_operations_are_logged_by_name(self, memory: Any) -> None:
        session = memory.create_session("alice", title="trip")
        memory.append_record(session.id, "user", "I moved to Paris")
        note = memory.add_session_memory(session.id, "Alice plans a trip")
        pinned = memory.pin(note.id)
        memory.set_data_loaded(session.id)
        finding = memory.add_finding(session.id, "The hotel is booked")
        memory.demote(pinned.id, session.id)
        operations = {e.operation for e in _every(memory)}
        assert {
            "create_session",
            "append_record",
            "add_session_memory",
            "pin",
            "add_finding",
            "demote",
        } <= operations
        assert _of(memory, finding.entry_id) == [("created", "add_finding")]
        assert ("created", "pin") in _of(memory, pinned.id)

    def test_the_log_is_queried_by_field_and_paged(self, memory: Any, clock: ManualClock) -> None:
        first = memory.write("one", scope="user:alice")
        clock.advance(hours=1)
        middle = clock()
        second = memory.write("two", scope="user:bob")
        memory.delete(first.id)
        assert [e.entry_id for e in _every(memory)] == [first.id, second.id, first.id]
        assert [e.entry_id for e in _every(memory, scope="user:bob")] == [second.id]
        assert [e.entry_id for e in _every(memory, change="deleted")] == [first.id]
        assert [e.entry_id for e in _every(memory, operation="write")] == [first.id, second.id]
        assert [e.entry_id for e in _every(memory, since=middle)] == [second.id, first.id]
        assert [e.entry_id for e in _every(memory, until=middle)] == [first.id]
        newest = memory.audit(limit=1)
        assert newest.events[0].change == "deleted" and newest.next_cursor is not None
        assert memory.audit(limit=1, cursor=newest.next_cursor).events[0].entry_id == second.id
        with pytest.raises(ValidationError):
            memory.audit(change="burnt")
        for bad in (
            {"cursor": "not-a-cursor"},
            {"cursor": "9" * 30},
            {"since": datetime(2020, 1, 1)},  # no timezone
            {"until": 5},
        ):
            with pytest.raises(ValidationError):
                memory.audit(**bad)

    def test_other_tenants_see_none_of_it(self, memory: Any) -> None:
        memory.write("mine", scope="user:alice")
        other = memory.with_tenant("other")
        assert other.audit().events == ()
        other.write("theirs", scope="user:alice")
        assert len(memory.audit().events) == 1 and len(other.audit().events) == 1

    def test_what_fails_logs_nothing(self, memory: Any) -> None:
        session = memory.create_session("alice")
        record = memory.append_record(session.id, "user", "hello")
        before = len(_every(memory))
        with pytest.raises(ForbiddenError):
            memory.delete(record.id)
        with pytest.raises(ValidationError):
            memory.write("", scope="user:alice")
        merged = memory.write("Alice drinks green tea", scope="user:alice")
        again = memory.write("Alice drinks green tea", scope="user:alice")
        assert again.id == merged.id  # a restatement merges: nothing changed
        assert len(_every(memory)) == before + 1

    def test_history_shows_the_events_of_every_version(
        self, memory: Any, clock: ManualClock
    ) -> None:
        berlin = memory.write("The user lives in Berlin.", scope="user:alice", category="fact")
        clock.advance(days=1)
        paris = memory.supersede(berlin.id, "The user lives in Paris.", reason="moved")
        found = memory.history(paris.id)
        assert [v.id for v in found.versions] == [berlin.id, paris.id]
        assert [(e.entry_id, e.change) for e in found.events] == [
            (berlin.id, "created"),
            (paris.id, "created"),
            (berlin.id, "changed"),
        ]
        memory.delete(berlin.id)
        after = memory.history(paris.id)
        assert [v.id for v in after.versions] == [paris.id]
        assert [(e.change, e.operation) for e in after.events] == [
            ("created", "supersede"),
            ("changed", "delete"),  # its chain mended: it replaces nothing now
        ]
        gone = memory.history(berlin.id)  # deleted: its events remain
        assert gone.versions == () and [e.change for e in gone.events][-1] == "deleted"
        with pytest.raises(NotFoundError):
            memory.history("01ARZ3NDEKTSV4RRFFQ69G5FAV")

    def test_erasure_leaves_only_that_an_erasure_happened(
        self, memory: Any, clock: ManualClock
    ) -> None:
        kept = memory.write("Alice drinks tea", scope="user:alice")
        fact = memory.write(SECRET, scope="user:bob")
        session = memory.create_session("bob")
        memory.append_record(session.id, "user", "hello there")
        copy = memory.promote(fact.id, "org:acme")
        earlier = memory.write("Bob had a cat", scope="user:bob")
        memory.delete(earlier.id)  # gone before the erasure: its events name bob's scope
        clock.advance(minutes=1)
        receipt = memory.erase(user="bob")
        events = _every(memory)
        assert [e.entry_id for e in events if e.entry_id is not None] == [kept.id]
        erased = [e for e in events if e.change == "erased"]
        assert len(erased) == 1 and erased[0].operation == "erase"
        assert erased[0].note is not None and receipt.ids_sha256 in erased[0].note
        text = json.dumps([e.to_dict() for e in events])
        for trace in (fact.id, copy.id, earlier.id, session.id, "user:bob", "bob"):
            assert trace not in text

    def test_a_tenant_erasure_leaves_one_event(self, memory: Any) -> None:
        other = memory.with_tenant("t2")
        entry = other.write("a t2 fact", scope="user:alice")
        other.update(entry.id, tags=["x"])
        memory.write("a default-tenant fact", scope="user:alice")
        other.erase(tenant="t2")
        left = other.audit().events
        assert [e.change for e in left] == ["erased"] and left[0].entry_id is None
        assert len(memory.audit().events) == 1

    def test_bulk_deletes_log_each_entry(self, memory: Any, clock: ManualClock) -> None:
        entries = [memory.write(f"fact {n}", scope="workspace:w") for n in range(3)]
        expiring = memory.write("short", scope="user:alice", ttl=timedelta(seconds=1))
        assert memory.delete_by_scope("workspace:w") == 3
        deleted = _every(memory, change="deleted")
        assert {e.entry_id for e in deleted} == {e.id for e in entries}
        assert {(e.operation, e.scope) for e in deleted} == {("delete_by_scope", "workspace:w")}
        clock.advance(seconds=2)
        assert memory.purge_expired() == 1
        purged = _every(memory, operation="purge_expired")
        assert [(e.entry_id, e.change, e.scope) for e in purged] == [
            (expiring.id, "deleted", "user:alice")
        ]

    # -- the hash chain -----------------------------------------------------------------------

    def test_the_log_verifies_after_writes_updates_and_deletes(self, memory: Any) -> None:
        assert memory.verify_audit().summary() == "intact, 0 events"
        first = memory.write("one", scope="user:alice")
        second = memory.write("two", scope="user:bob")
        memory.update(first.id, tags=["x"])
        memory.delete(second.id)
        found = memory.verify_audit()
        assert found.intact and found.summary() == "intact, 4 events"
        assert (found.erasures, found.removed, found.first_bad_seq) == (0, 0, None)
        newest = memory.audit(limit=1).events[0]
        assert found.head_seq == newest.seq and len(found.head) == 64
        assert found.to_dict()["intact"] is True and found.keyed is False

    def test_erasures_leave_a_chain_that_says_what_they_removed(self, memory: Any) -> None:
        kept = memory.write("Alice drinks tea", scope="user:alice")
        bob = [memory.write(f"Bob fact {n}", scope="user:bob") for n in range(3)]
        memory.update(kept.id, tags=["x"])
        memory.update(bob[0].id, tags=["y"])
        memory.write("a workspace note", scope="workspace:w")
        memory.write("Carol fact", scope="user:carol")
        memory.erase(user="bob")  # four events from the middle
        found = memory.verify_audit()
        assert found.intact, found.reason
        assert (found.events, found.erasures, found.removed) == (5, 1, 4)
        assert found.summary() == "intact, 5 events (1 erasures removed 4 events)"
        memory.erase(scope="user:carol")  # the newest event before it
        memory.erase(scope="workspace:w")
        again = memory.verify_audit()
        assert again.intact, again.reason
        assert (again.erasures, again.removed) == (3, 6)
        other = memory.with_tenant("t2")
        for n in range(3):
            other.write(f"t2 fact {n}", scope="user:alice")
        other.erase(tenant="t2")
        left = other.verify_audit()
        assert left.intact and (left.events, left.erasures, left.removed) == (1, 1, 3)
        assert memory.verify_audit() == again  # the other tenant's chain is its own

    def test_each_tenant_has_a_chain_of_its_own(self, memory: Any) -> None:
        other = memory.with_tenant("t2")
        for n in range(3):
            memory.write(f"mine {n}", scope="user:alice")
            other.write(f"theirs {n}", scope="user:alice")
        mine, theirs = memory.verify_audit(), other.verify_audit()
        assert mine.intact and theirs.intact and mine.events == theirs.events == 3
        assert (mine.tenant, theirs.tenant) == (memory.tenant, "t2")
        assert mine.head != theirs.head
