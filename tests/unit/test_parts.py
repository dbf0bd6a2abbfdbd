"""Questions with several parts (pure)."""

from __future__ import annotations

import pytest

from memvault.retrieval.parts import MOST_PARTS, interleaved, parts, questions


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        (
            "What subject have Caroline and Melanie both painted?",
            ["What subject have Caroline both painted?", "What subject have Melanie both painted?"],
        ),
        (
            "What do Jon & Gina have in common?",
            ["What do Jon have in common?", "What do Gina have in common?"],
        ),
        ("What did Ann buy, and where did she go?", ["What did Ann buy?", "where did she go?"]),
        (
            "Where did X go and what did she eat there?",
            ["Where did X go?", "what did she eat there?"],
        ),
    ],
)
def test_a_question_about_several_things_is_split(question: str, expected: list[str]) -> None:
    assert parts(question) == expected
    assert questions(question) == [question, *expected]


@pytest.mark.parametrize(
    "question",
    [
        "What did Melanie and her family do while camping?",
        "Did Melanie make the black and white bowl?",
        "What are the pros and cons of SQLite?",
        "Thanks and Goodbye are common words, not names",
        "When did Caroline go to the parade?",
        "When did Caroline and Melanie go to a pride festival together?",
        "What deals did John sign with Nike and Gatorade?",
    ],
)
def test_anything_else_is_one_part(question: str) -> None:
    assert parts(question) == [question]
    assert questions(question) == [question]


def test_at_most_a_few_parts() -> None:
    many = " and ".join(f"what did person {n} say" for n in range(6)) + "?"
    assert len(parts(many)) == MOST_PARTS


def test_rankings_are_taken_in_turn_each_item_once() -> None:
    whole, first, second = ["a", "b", "c"], ["b", "d"], ["e", "a", "f"]
    assert interleaved([whole, first, second], key=str) == ["a", "b", "e", "d", "c", "f"]
    assert interleaved([], key=str) == []
