"""Supersession, ``as_of`` and history on every backend. Mixed into
:class:`~memvault.testing.conformance.MemoryConformance`, whose fixtures it uses."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from ..config import Settings
from ..errors import ConflictError, NotFoundError, ValidationError
from ..types import MemoryEntry
from . import ManualClock

USER = "user:alice"


def _moved(memory: Any, clock: ManualClock) -> tuple[MemoryEntry, MemoryEntry]:
    """Berlin, then (a day later) Paris superseding it."""
    berlin = memory.write("The user lives in Berlin.", scope=USER, category="fact")
    clock.advance(days=1)
    paris = memory.supersede(berlin.id, "The user lives in Paris.", reason="the user moved")
    return memory.get(berlin.id), paris


def _rome(memory: Any, clock: ManualClock) -> tuple[MemoryEntry, MemoryEntry, MemoryEntry]:
    """Berlin, superseded by Paris, superseded by Rome (a day apart)."""
    berlin, paris = _moved(memory, clock)
    clock.advance(days=1)
    rome = memory.supersede(paris.id, "The user lives in Rome.", reason="moved again")
    return memory.get(berlin.id), memory.get(paris.id), rome


def _global_move(memory: Any, clock: ManualClock) -> tuple[MemoryEntry, MemoryEntry]:
    """Berlin, then Paris superseding it, in alice's Global Memory."""
    berlin = memory.add_global_memory("alice", "The user lives in Berlin.", category="identity")
    clock.advance(days=1)
    paris = memory.supersede(berlin.id, "The user lives in Paris.", reason="the user moved")
    return memory.get(berlin.id), paris


def _contents(entries: Any) -> list[str]:
    return [e.content for e in entries]


def _ids(entries: Any) -> list[str]:
    return [e.id for e in entries]


def _compacted(entries: Any) -> str:
    return "The user lived in Paris for a while."


class VersionConformance:
    """A changed fact supersedes the old one: kept, linked, hidden, restorable."""

    def test_a_successor_keeps_the_provenance_unless_given_one(self, memory: Any) -> None:
        made = {"created_in_session_id": "s-1", "agent_id": "planner", "source": "tool"}
        ticket = memory.write("Ship to Lisbon", scope="object:ticket:T-1", provenance=made)
        moved = memory.supersede(ticket.id, "Ship to Porto", reason="changed")
        assert moved.provenance.created_in_session_id == "s-1"  # its lineage is kept
        assert (moved.provenance.agent_id, moved.provenance.source) == (None, None)  # not vouched
        given = memory.supersede(moved.id, "Ship to Faro", provenance={"agent_id": "editor"})
        assert given.provenance.agent_id == "editor"
        assert given.provenance.created_in_session_id is None

    def test_supersede_keeps_links_and_hides_the_old_fact(
        self, memory: Any, clock: ManualClock
    ) -> None:
        berlin, paris = _moved(memory, clock)
        assert paris.supersedes == (berlin.id,)
        assert (paris.scope, paris.category) == (berlin.scope, berlin.category)
        assert paris.valid_from == clock() and paris.valid_to is None
        assert berlin.superseded and berlin.superseded_by == paris.id
        assert berlin.superseded_reason == "the user moved"
        assert berlin.valid_to == paris.valid_from
        assert _contents(memory.retrieve(USER)) == ["The user lives in Paris."]
        assert memory.count(USER) == 1
        assert _contents(memory.list(USER).entries) == ["The user lives in Paris."]
        hits = memory.search("where does the user live", USER)
        assert [h.entry.id for h in hits] == [paris.id]
        assert memory.stats()["superseded"] == 1

    def test_include_superseded_shows_every_version(self, memory: Any, clock: ManualClock) -> None:
        berlin, paris = _moved(memory, clock)
        assert {e.id for e in memory.retrieve(USER, include_superseded=True)} == {
            berlin.id,
            paris.id,
        }
        assert memory.count(USER, include_superseded=True) == 2
        hits = memory.search("lives", USER, include_superseded=True)
        assert {h.entry.id for h in hits} == {berlin.id, paris.id}

    def test_as_of_reads_what_held_then(self, memory: Any, clock: ManualClock) -> None:
        before = clock()
        berlin, _ = _moved(memory, clock)
        assert _contents(memory.retrieve(USER, as_of=before)) == ["The user lives in Berlin."]
        assert _contents(memory.retrieve(USER, as_of=clock())) == ["The user lives in Paris."]
        hits = memory.search("where does the user live", USER, as_of=before)
        assert [h.entry.id for h in hits] == [berlin.id]
        assert memory.count(USER, as_of=before - (clock() - before)) == 0
        with pytest.raises(ValidationError):
            memory.retrieve(USER, as_of=before, include_superseded=True)

    def test_history_walks_the_chain_from_either_end(self, memory: Any, clock: ManualClock) -> None:
        berlin, paris = _moved(memory, clock)
        clock.advance(days=1)
        rome = memory.supersede(paris.id, "The user lives in Rome.")
        chain = [berlin.id, paris.id, rome.id]
        assert [e.id for e in memory.history(berlin.id).versions] == chain
        assert [e.id for e in memory.history(rome.id).versions] == chain
        with pytest.raises(NotFoundError):
            memory.history("no-such-id")

    def test_restore_undoes_a_supersession(self, memory: Any, clock: ManualClock) -> None:
        berlin, paris = _moved(memory, clock)
        clock.advance(hours=1)
        restored = memory.restore(berlin.id)
        assert not restored.superseded and restored.superseded_by is None
        assert _contents(memory.retrieve(USER)) == ["The user lives in Berlin."]
        retired = memory.get(paris.id)
        assert retired.superseded_by == berlin.id
        assert retired.superseded_reason == f"restored {berlin.id}"
        assert {e.id for e in memory.history(berlin.id).versions} == {berlin.id, paris.id}
        with pytest.raises(ValidationError):
            memory.restore(berlin.id)

    def test_restore_keeping_the_successor_makes_both_current(
        self, memory: Any, clock: ManualClock
    ) -> None:
        berlin, paris = _moved(memory, clock)
        memory.restore(berlin.id, keep_successor=True)
        assert set(_contents(memory.retrieve(USER))) == {
            "The user lives in Berlin.",
            "The user lives in Paris.",
        }
        assert memory.get(paris.id).supersedes == ()

    def test_restore_of_a_long_chain_retires_its_current_end(
        self, memory: Any, clock: ManualClock
    ) -> None:
        berlin, paris = _moved(memory, clock)
        rome = memory.supersede(paris.id, "The user lives in Rome.")
        memory.restore(berlin.id)
        assert _contents(memory.retrieve(USER)) == ["The user lives in Berlin."]
        assert memory.get(rome.id).superseded_by == berlin.id

    def test_only_current_entries_can_be_superseded(self, memory: Any, clock: ManualClock) -> None:
        berlin, paris = _moved(memory, clock)
        with pytest.raises(ConflictError, match=f"superseded by {paris.id} meanwhile"):
            memory.supersede(berlin.id, "The user lives in Oslo.")
        with pytest.raises(NotFoundError):
            memory.supersede("no-such-id", "anything")
        other = memory.write("The user likes tea.", scope="user:bob")
        current = memory.retrieve(USER)[0]
        with pytest.raises(ValidationError):
            memory.supersede([current.id, other.id], "mixed scopes")

    def test_a_restatement_merges_instead_of_superseding(
        self, memory: Any, clock: ManualClock
    ) -> None:
        berlin = memory.write("The user lives in Berlin.", scope=USER)
        same = memory.supersede(berlin.id, "the user lives in Berlin")
        assert same.id == berlin.id and same.duplicate
        assert not memory.get(berlin.id).superseded

    def test_restating_a_superseded_fact_makes_a_new_current_entry(
        self, memory: Any, clock: ManualClock
    ) -> None:
        berlin, _ = _moved(memory, clock)
        again = memory.write("The user lives in Berlin.", scope=USER, category="fact")
        assert not again.duplicate and again.id != berlin.id
        assert "The user lives in Berlin." in _contents(memory.retrieve(USER))

    def test_the_review_list_names_successor_and_reason(
        self, memory: Any, clock: ManualClock
    ) -> None:
        berlin, paris = _moved(memory, clock)
        clock.advance(days=1)
        later = clock()
        tea = memory.write("The user likes tea.", scope=USER)
        coffee = memory.supersede(tea.id, "The user likes coffee.", reason="taste changed")
        review = memory.superseded(USER)
        assert [(s.entry.id, s.successor.id) for s in review] == [
            (tea.id, coffee.id),
            (berlin.id, paris.id),
        ]
        assert review[0].reason == "taste changed"
        assert [s.entry.id for s in memory.superseded(USER, since=later)] == [tea.id]
        assert memory.superseded("user:nobody") == []

    def test_superseding_an_old_version_names_the_current_one(
        self, memory: Any, clock: ManualClock
    ) -> None:
        berlin, paris, rome = _rome(memory, clock)
        for old in (berlin, paris):
            with pytest.raises(ConflictError, match=f"supersede {rome.id}$"):
                memory.supersede(old.id, "The user lives in Oslo.")
        memory.delete(rome.id)
        with pytest.raises(ConflictError, match="no current version is left"):
            memory.supersede(paris.id, "The user lives in Oslo.")
        assert memory.retrieve(USER) == []

    def test_superseding_by_a_fact_stored_already_links_to_it(
        self, memory: Any, clock: ManualClock
    ) -> None:
        berlin = memory.write("The user lives in Berlin.", scope=USER, category="fact")
        paris = memory.write("The user lives in Paris.", scope=USER, category="fact")
        clock.advance(days=1)
        same = memory.supersede(berlin.id, "The user lives in Paris.", reason="the user moved")
        assert same.id == paris.id and same.duplicate and same.supersedes == (berlin.id,)
        assert _ids(memory.retrieve(USER)) == [paris.id]
        retired = memory.get(berlin.id)
        assert (retired.superseded_by, retired.superseded_reason) == (paris.id, "the user moved")
        assert retired.valid_to == clock()
        assert _ids(memory.history(berlin.id).versions) == [berlin.id, paris.id]

    # -- copies and deletions keep chains whole ------------------------------------------------

    def test_copies_are_current_and_start_no_chain(self, memory: Any, clock: ManualClock) -> None:
        berlin, paris = _moved(memory, clock)
        promoted = memory.promote(paris.id, "org:acme")
        assert not promoted.superseded and promoted.supersedes == ()
        assert memory.get(promoted.id) == promoted
        with pytest.raises(ValidationError, match=f"superseded by {paris.id}; promote the"):
            memory.promote(berlin.id, "org:acme")
        session = memory.create_session("alice")
        note = memory.add_session_memory(session.id, "The user works in Lyon.")
        moved = memory.supersede(note.id, "The user works in Nice.")
        pinned = memory.pin(moved.id)
        assert not pinned.superseded and pinned.supersedes == ()
        with pytest.raises(ValidationError, match="pin the current one"):
            memory.pin(note.id)

    def test_demote_moves_a_chain_with_its_current_version(
        self, memory: Any, clock: ManualClock
    ) -> None:
        berlin, paris = _global_move(memory, clock)
        session = memory.create_session("alice")
        with pytest.raises(ValidationError, match="demote the current one"):
            memory.demote(berlin.id, session.id)
        moved = memory.demote(paris.id, session.id)
        assert moved.supersedes == (berlin.id,) and not moved.superseded
        assert memory.get(paris.id) is None
        assert memory.get(berlin.id).superseded_by == moved.id
        assert _ids(memory.history(berlin.id).versions) == [berlin.id, moved.id]
        memory.restore(berlin.id)
        assert _ids(memory.global_memory("alice")) == [berlin.id]
        assert memory.session_memory(session.id) == []
        assert memory.get(moved.id).superseded_by == berlin.id

    @pytest.mark.parametrize("how", ["delete", "compact"])
    def test_removing_a_middle_version_links_its_neighbours(
        self, memory: Any, clock: ManualClock, how: str
    ) -> None:
        berlin, paris, rome = _rome(memory, clock)
        if how == "delete":
            assert memory.delete(paris.id)
        else:
            memory.compact([paris.id], _compacted, delete_sources=True)
        assert memory.get(berlin.id).superseded_by == rome.id
        assert memory.get(berlin.id).superseded_reason == "the user moved"
        assert memory.get(rome.id).supersedes == (berlin.id,)
        assert _ids(memory.history(berlin.id).versions) == [berlin.id, rome.id]
        memory.restore(berlin.id)
        current = set(_ids(memory.retrieve(USER)))  # a compaction is current too
        assert berlin.id in current and rome.id not in current
        assert memory.get(rome.id).superseded_by == berlin.id

    @pytest.mark.parametrize("how", ["delete", "promote"])
    def test_removing_the_current_version_leaves_the_chain_without_one(
        self, memory: Any, clock: ManualClock, how: str
    ) -> None:
        berlin, paris = _moved(memory, clock)
        if how == "delete":
            memory.delete(paris.id)
        else:
            memory.promote(paris.id, "org:acme", delete_original=True)
        orphan = memory.get(berlin.id)
        assert orphan.superseded and orphan.valid_to == berlin.valid_to
        assert (orphan.superseded_by, orphan.superseded_reason) == (None, "the user moved")
        assert memory.retrieve(USER) == []
        assert [s.successor for s in memory.superseded(USER)] == [None]
        memory.restore(berlin.id)
        assert _ids(memory.retrieve(USER)) == [berlin.id]

    def test_eviction_by_a_cap_leaves_the_chain_without_a_current_version(
        self, make_memory: Callable[..., Any], clock: ManualClock
    ) -> None:
        memory = make_memory(settings=Settings(max_global_memory=2))
        berlin, paris = _global_move(memory, clock)
        for fact in ("Prefers green tea", "Prefers dark mode"):
            clock.advance(minutes=1)
            memory.add_global_memory("alice", fact)
        assert memory.get(paris.id) is None
        assert memory.get(berlin.id).superseded_by is None
        assert not memory.restore(berlin.id).superseded

    def test_restore_finds_the_current_version_past_a_purged_one(
        self, memory: Any, clock: ManualClock
    ) -> None:
        berlin, paris, rome = _rome(memory, clock)
        memory.update(paris.id, expires_at=clock() + timedelta(hours=1))
        clock.advance(hours=2)
        assert memory.purge_expired() == 1
        memory.restore(berlin.id)
        assert _ids(memory.retrieve(USER)) == [berlin.id]
        assert memory.get(rome.id).superseded_by == berlin.id
