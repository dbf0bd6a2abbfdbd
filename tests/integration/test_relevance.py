"""Calibrated relevance, the drop threshold and questions with several parts, end to end with
the packaged models."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memvault import Memory, NewEntry, Settings
from memvault.errors import ValidationError
from memvault.retrieval import relevance

FACTS = [
    "Maya drinks green tea every morning",
    "Maya lives in Lisbon with her two cats",
    "Maya works as a nurse at the children's hospital",
    "Maya plays the cello in a community orchestra",
    "Maya is allergic to peanuts",
]
UNRELATED = "which airline flies the CEO to the Tokyo board meeting"


@pytest.fixture(scope="module")
def memory() -> Iterator[Memory]:
    with Memory(":memory:", settings=Settings(near_duplicate_threshold=0)) as memory:
        memory.write_many([NewEntry(f, "user:maya") for f in FACTS])
        yield memory


@pytest.mark.parametrize(
    "options",
    [{}, {"rerank": True}, {"conversational": True}, {"conversational": True, "rerank": True}],
)
def test_every_hit_has_a_relevance_and_the_answer_stands_out(
    memory: Memory, options: dict[str, Any]
) -> None:
    floor = Settings().min_relevance
    hits = memory.search("what does Maya drink in the morning?", "user:maya", **options)
    assert all(0 < hit.relevance < 1 for hit in hits)
    assert hits[0].entry.content == FACTS[0] and hits[0].relevance >= floor
    assert all(hit.relevance < hits[0].relevance / 2 for hit in hits[1:])
    noise = memory.search(UNRELATED, "user:maya", **options)
    assert noise and max(hit.relevance for hit in noise) < hits[0].relevance / 2


MANY = [
    f"Maya {verb} {thing} on {day}"
    for verb in ("bought", "cooked", "painted", "fixed", "sold")
    for thing in ("a bicycle", "some bread", "the fence", "a lamp", "green tea", "a kite")
    for day in ("Monday", "Friday")
]


@pytest.mark.parametrize(
    "options",
    [{}, {"rerank": True}, {"conversational": True}, {"conversational": True, "rerank": True}],
)
def test_a_hits_relevance_does_not_depend_on_how_many_were_asked_for(
    options: dict[str, Any],
) -> None:
    """The gate and the shares read the best 10 however many are asked for (one, ten or
    thirty), and a question in parts is scored whole."""
    with Memory(":memory:", settings=Settings(near_duplicate_threshold=0)) as memory:
        memory.write_many([NewEntry(text, "user:maya") for text in MANY])
        for query in ("What did Maya fix on Friday?", "What did Maya and Ann both cook?"):
            found = {
                limit: [
                    (h.entry.id, round(h.relevance, 9))
                    for h in memory.search(query, "user:maya", limit=limit, **options)
                ]
                for limit in (1, 10, 30)
            }
            assert found[1] == found[10][:1] and found[10] == found[30][:10], query


def test_min_relevance_drops_weak_hits_and_is_checked(memory: Memory) -> None:
    floor = Settings().min_relevance
    assert len(memory.search(UNRELATED, "user:maya", min_relevance=floor)) <= 1
    kept = memory.search("Maya's allergy", "user:maya", min_relevance=floor)
    assert FACTS[4] in [hit.entry.content for hit in kept] and len(kept) < len(FACTS)
    assert len(memory.search("Is Maya allergic to anything?", "user:maya", min_relevance=0)) == 5
    for wrong in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValidationError, match="min_relevance"):
            memory.search("tea", "user:maya", min_relevance=wrong)


def test_the_default_threshold_is_the_shipped_one() -> None:
    assert Settings().min_relevance == relevance.threshold()


def test_recall_leaves_out_what_does_not_bear_on_the_question() -> None:
    with Memory(":memory:") as memory:
        session = memory.create_session("maya")
        memory.add_global_memory("maya", "Maya is allergic to peanuts")
        memory.add_global_memory("maya", "Maya plays the cello")
        asked = memory.recall(session.id, 2000, query="Is Maya allergic to anything?")
        assert any("peanuts" in hit.entry.content for hit in asked.relevant)
        everything = memory.recall(session.id, 2000, query="Maya")
        assert len(asked.relevant) < len(everything.relevant) == 2  # the cello: noise here


def test_each_part_of_a_question_about_two_people_is_found() -> None:
    """Ann says much about tennis; Bob's one line about it is not crowded out."""
    start = datetime(2024, 3, 1, tzinfo=UTC)
    lines = [f"Ann: I played tennis again today, set {n} went to a tie-break" for n in range(12)]
    lines += ["Bob: I joined a tennis club in March", "Bob: My sister visited from Porto"]
    lines += [f"Cleo: the weather is {w} today" for w in ("grey", "warm", "odd")]
    with Memory(":memory:", settings=Settings(near_duplicate_threshold=0)) as memory:
        memory.write_many(
            [
                NewEntry(text, "workspace:club", created_at=start + timedelta(hours=n))
                for n, text in enumerate(lines)
            ]
        )
        hits = memory.search(
            "What sport do Ann and Bob both play?", "workspace:club", limit=3, conversational=True
        )
        speakers = {hit.entry.content.split(":")[0] for hit in hits}
        assert speakers == {"Ann", "Bob"}
