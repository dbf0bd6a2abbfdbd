"""Near-duplicates with the real packaged model: close embeddings of different facts never merge
(they did when cosine alone decided), while restatements still do, in every write path."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memvault import Memory, NewEntry, Outcome

DIFFERENT = [
    ("Grace bought green tea downtown on Monday.", "Grace sold green tea downtown on Monday."),
    ("Ivan visited the old library in Prague.", "Ivan studied the old library in Prague."),
    ("Alice owes Bob twenty dollars for lunch.", "Bob owes Alice twenty dollars for lunch."),
    ("The user likes spicy food.", "The user doesn't like spicy food."),
]
SAME = [
    ("Grace bought green tea downtown on Monday.", "On Monday, Grace bought green tea downtown."),
    ("The user doesn't like spicy food.", "User does not like spicy food"),
]


@pytest.fixture
def memory() -> Iterator[Memory]:
    with Memory(":memory:") as memory:
        yield memory


@pytest.mark.parametrize(("first", "second"), DIFFERENT)
def test_different_facts_are_both_stored(memory: Memory, first: str, second: str) -> None:
    a = memory.write(first, scope="user:a")
    b = memory.write(second, scope="user:a")
    assert a.id != b.id and not b.duplicate
    report = memory.write_many([NewEntry(first, "user:b"), NewEntry(second, "user:b")])
    assert report.counts() == {"stored": 2, "merged": 0, "refused": 0}
    memory.write(first, scope="user:c")
    source = memory.write(second, scope="session:s1")
    assert not memory.promote(source.id, "user:c").duplicate
    assert memory.count("user:c") == 2


@pytest.mark.parametrize(("first", "second"), SAME)
def test_restatements_merge(memory: Memory, first: str, second: str) -> None:
    a = memory.write(first, scope="user:a")
    b = memory.write(second, scope="user:a")
    assert b.id == a.id and b.duplicate
    report = memory.write_many([NewEntry(first, "user:b"), NewEntry(second, "user:b")])
    assert [i.outcome for i in report.items] == [Outcome.STORED, Outcome.MERGED]
    source = memory.write(second, scope="session:s1")
    assert memory.promote(source.id, "user:a").id == a.id
    assert memory.count("user:a") == 1
