"""Supersession, ``as_of`` and history on every backend. Mixed into
:class:`~memvault.testing.conformance.MemoryConformance`, whose fixtures it uses."""

from __future__ import annotations

from typing import Any

import pytest

from ..errors import NotFoundError, ValidationError
from ..types import MemoryEntry
from . import ManualClock

USER = "user:alice"


def _moved(memory: Any, clock: ManualClock) -> tuple[MemoryEntry, MemoryEntry]:
    """Berlin, then (a day later) Paris superseding it."""
    berlin = memory.write("The user lives in Berlin.", scope=USER, category="fact")
    clock.advance(days=1)
    paris = memory.supersede(berlin.id, "The user lives in Paris.", reason="the user moved")
    return memory.get(berlin.id), paris


def _contents(entries: Any) -> list[str]:
    return [e.content for e in entries]


class VersionConformance:
    """A changed fact supersedes the old one: kept, linked, hidden, restorable."""

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
        assert [e.id for e in memory.history(berlin.id)] == chain
        assert [e.id for e in memory.history(rome.id)] == chain
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
        assert {e.id for e in memory.history(berlin.id)} == {berlin.id, paris.id}
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
        berlin, _ = _moved(memory, clock)
        with pytest.raises(ValidationError):
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
