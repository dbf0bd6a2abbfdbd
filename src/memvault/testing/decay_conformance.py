"""Relevance that fades with disuse, on every backend and driver: a search with ``decay=True``
ranks the entry used most recently first among equally relevant ones, and without it the order
is unchanged; uses are counted by recall, prompts and ``reinforce``, and go with the entry.
Mixed into :class:`~memvault.testing.conformance.MemoryConformance`, whose fixtures it uses."""

from __future__ import annotations

from typing import Any

from ..config import Settings
from . import ManualClock

NOTES = (
    "Deploys of Zephyr go out on Tuesday (ops note)",
    "Deploys of Zephyr go out on Tuesday (wiki)",
)
QUERY = "when do Zephyr deploys go out"


def _order(memory: Any, **options: Any) -> list[str]:
    return [hit.entry.id for hit in memory.search(QUERY, scope="workspace:z", **options)]


class DecayConformance:
    """``search(decay=True)`` and ``reinforce``."""

    def test_the_entry_reinforced_last_ranks_first_with_decay_only(
        self, memory: Any, clock: ManualClock
    ) -> None:
        first, second = (memory.write(n, scope="workspace:z", category="fact") for n in NOTES)
        today = _order(memory)
        assert sorted(today) == sorted([first.id, second.id])
        clock.advance(days=60)
        used = today[-1]  # the one that ranks last without decay
        assert memory.reinforce([used, "01ARZ3NDEKTSV4RRFFQ69G5FAV"]) == 1  # an unknown id: skipped
        assert _order(memory) == today
        assert _order(memory, decay=False) == today
        faded = memory.search(QUERY, scope="workspace:z", decay=True)
        assert [hit.entry.id for hit in faded] == today[::-1]
        assert faded[0].components["decay"] == 1.0
        assert 0.6 < faded[1].components["decay"] < 0.7  # 60 days of a 90-day half-life

    def test_categories_that_never_decay_keep_their_order(
        self, memory: Any, clock: ManualClock
    ) -> None:
        for note in NOTES:
            memory.write(note, scope="workspace:z", category="decision")
        today = _order(memory)
        clock.advance(days=400)
        memory.reinforce([today[-1]])
        hits = memory.search(QUERY, scope="workspace:z", decay=True)
        assert [hit.entry.id for hit in hits] == today
        assert {hit.components["decay"] for hit in hits} == {1.0}

    def test_decay_by_default_and_what_a_prompt_shows_counts_as_used(
        self, make_memory: Any, clock: ManualClock
    ) -> None:
        memory = make_memory(settings=Settings(decay_by_default=True, decay="*:10"))
        session = memory.create_session("ann")
        shown = memory.add_session_memory(session.id, "Zephyr deploys go out on Tuesday")
        other = memory.write(
            "Zephyr deploys go out on Tuesday, said ops", scope=f"session:{session.id}"
        )
        clock.advance(days=30)
        memory.system_prompt(session.id)  # shows Session Memory: a use
        hits = memory.search(QUERY, scope=f"session:{session.id}")
        by_id = {hit.entry.id: hit.components["decay"] for hit in hits}
        assert by_id[shown.id] == 1.0 and by_id[other.id] < 0.2
