"""Time expressions in queries → windows of time, and the boost they give."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from memvault.retrieval.candidates import Candidates
from memvault.retrieval.ranker import RankSpec, rank
from memvault.retrieval.when import windows
from memvault.store.timeconv import to_micros

NOW = datetime(2023, 8, 20, 15, 0, tzinfo=UTC)


def _days(query: str) -> list[tuple[str, str]]:
    return [(a.date().isoformat(), b.date().isoformat()) for a, b in windows(query, NOW)]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What did Bob do last week?", [("2023-08-10", "2023-08-17")]),
        ("What happened yesterday?", [("2023-08-19", "2023-08-20")]),
        ("two days ago", [("2023-08-18", "2023-08-19")]),
        ("What did John attend in March 2023?", [("2023-03-01", "2023-04-01")]),
        ("Who did Maria have dinner with on May 3, 2023?", [("2023-05-03", "2023-05-04")]),
        ("How often did she go to the beach in 2022?", [("2022-01-01", "2023-01-01")]),
        ("When did Melanie go camping in June?", [("2023-06-01", "2023-07-01")]),
        ("What may happen next to the garden?", []),
        ("Who came to the 18th birthday?", []),
        ("When did Caroline go to the support group?", []),
    ],
)
def test_time_expressions_name_windows(query: str, expected: list[tuple[str, str]]) -> None:
    assert _days(query) == expected


def test_relative_expressions_follow_the_instant_asked_about() -> None:
    later = datetime(2024, 1, 10, tzinfo=UTC)
    assert [a.date().isoformat() for a, _ in windows("last month", later)] == ["2023-12-01"]


@pytest.mark.slow
def test_entries_inside_a_window_gain_in_proportion_to_their_relevance() -> None:
    created = np.array([to_micros(datetime(2023, m, 15, tzinfo=UTC)) for m in (3, 5, 5, 7)])
    c = Candidates(
        entry_ids=np.array(["a", "b", "c", "d"]),
        created_us=created,
        lexical=np.array([1.0, 0.9, 0.0, 1.0]),
        dense=np.array([0.5, 0.5, 0.0, 0.5]),
        has_vector=np.ones(4, bool),
    )
    may = (to_micros(datetime(2023, 5, 1, tzinfo=UTC)), to_micros(datetime(2023, 6, 1, tzinfo=UTC)))
    plain = rank(c, RankSpec(limit=4), 0)
    timely = rank(c, RankSpec(limit=4, time_weight=0.5, windows=(may,)), 0)
    assert plain[0].index != 1
    assert timely[0].index == 1
    assert {r.index: r.components["time"] for r in timely}[2] == 0  # irrelevant: not lifted
