"""Which stored memory a change the user states updates: the words that say a change, and
the link by meaning (the packaged MiniLM, as in production)."""

from __future__ import annotations

import pytest

from memvault.extraction import pipeline, updates
from memvault.extraction.updates import CLOSE, CLOSER, Change, Old


@pytest.mark.parametrize(
    ("said", "change"),
    [
        ("switched to Zed last month, loving it", Change(CLOSE)),
        ("going with Railway for hosting after all", Change(CLOSE)),
        ("turned 35 yesterday", Change(CLOSE)),
        ("down to 84 kg!", Change(CLOSE)),
        ("dropped to 84 kg", Change(CLOSE)),  # a number's new value, not an end
        ("rent went up to 1,550", Change(CLOSE)),
        ("from 1,400 to 1,550 a month", Change(CLOSE)),
        ("quit vaping six months ago", Change(CLOSE, "vaping")),
        ("no longer vegetarian, I eat fish again", Change(CLOSE, "vegetarian")),
        ("dropped Spanish, doing Italian now", Change(CLOSE, "spanish")),
        ("I cycle to work now", Change(CLOSER)),
        ("Obsidian these days", Change(CLOSER)),
    ],
)
def test_words_that_say_something_changed(said: str, change: Change) -> None:
    assert updates.change_said(said) == change


@pytest.mark.parametrize(
    "said",
    [
        "I also have a cat named Luna",  # beside the old, not instead of it
        "picked up the drums as well",
        "I'm learning Japanese too",
        "seizure-free for two years now",  # how long, not a change
        "I use Python for the web scraper",
    ],
)
def test_words_that_say_nothing_changed(said: str) -> None:
    assert updates.change_said(said) is None


def _olds(*contents: str) -> list[Old]:
    return [Old(c, frozenset(pipeline.topic(c))) for c in contents]


def test_a_change_updates_the_memory_most_like_it() -> None:
    olds = _olds(
        "The user has a dog named Rex.",
        "The user weighs 92 kg.",
        "The user lives in Bristol.",
    )
    assert updates.updated("The user is down to 84 kg.", frozenset(), olds, CLOSE) == 1


def test_no_memory_alike_enough_is_updated() -> None:
    olds = _olds("The user has a dog named Rex.", "The user lives in Bristol.")
    assert updates.updated("The user is down to 84 kg.", frozenset(), olds, CLOSER) is None


def test_an_end_updates_only_a_memory_it_names() -> None:
    olds = _olds("The user decided to go car-free from next month.")
    fact = 'The user said: "Quit vaping six months ago"'
    named = frozenset(pipeline.topic("vaping"))
    assert updates.updated(fact, named, olds, CLOSE, must_name=True) is None
    olds = _olds("The user vapes every day.")
    assert updates.updated(fact, named, olds, CLOSE, must_name=True) == 0


def test_two_memories_as_alike_are_ambiguous() -> None:
    olds = _olds("The user weighs 92 kg.", "The user weighs 92 kg!")
    assert updates.updated("The user is down to 84 kg.", frozenset(), olds, CLOSE) is None


def test_a_word_that_only_may_say_a_change_weighs_only_what_it_names() -> None:
    olds = _olds("The user weighs 92 kg.", "The user takes the bus to work.")
    named = frozenset(pipeline.topic("I cycle to work now"))
    assert updates.updated("The user cycles to work now.", named, olds, CLOSER) == 1
    assert updates.updated("The user cycles to work now.", frozenset(), olds, CLOSER) is None


@pytest.mark.parametrize(
    ("old", "new", "least"),
    [
        ("The user uses VS Code for everything.", "The user switched to Zed.", CLOSE),
        (
            "The user banks with Barclays.",
            "The user switched their main account to Starling.",
            CLOSE,
        ),
        ("The user is using Poetry for deps.", "The user moved all their projects to uv.", CLOSE),
        ("The user's phone is a Samsung S22.", "The user got a Pixel 9 last week.", CLOSER),
        ("The user is single.", "The user is engaged.", CLOSER),
    ],
)
def test_another_of_the_same_kind_updates_what_it_replaces(
    old: str, new: str, least: float
) -> None:
    """The sentences share no word and the model barely relates them: the kind does."""
    olds = _olds("The user manages 4 people.", old, "The user lives in Bristol.")
    assert updates.updated(new, frozenset(), olds, least) == 1


def test_the_same_kind_is_no_change_without_words_that_say_one() -> None:
    """Two editors for two jobs: no change is said, so nothing is weighed (p066 of the pairs)."""
    assert updates.change_said("IntelliJ for big Java projects") is None
