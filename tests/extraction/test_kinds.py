"""Alternatives of one kind: what a change names and what the memory it updates names."""

from __future__ import annotations

import pytest

from memvault.extraction.kinds import kinds_named


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("The user uses VS Code for everything.", "editor"),
        ("The user switched to Zed.", "editor"),
        ("we run our infra on Heroku", "host"),
        ("going with Fly.io", "host"),
        ("my phone is a Samsung S22", "phone"),
        ("switched my main account to Starling", "bank"),
        ("Obsidian these days", "notes"),
        ("Apple Music now", "music"),
        ("moved all my projects to uv", "python packages"),
        ("I'm doing keto", "diet"),
        ("I take the bus to work", "commute"),
        ("back on day shifts now", "shift"),
        ("releases are monthly now", "cadence"),
        ("the wedding is on 14 June", "date"),
        ("moved my weekly review to Friday afternoons", "weekday"),
        ("black tea in the mornings now", "drink"),
    ],
)
def test_the_kinds_a_text_names(text: str, kind: str) -> None:
    assert kind in kinds_named(text)


@pytest.mark.parametrize(
    "text",
    [
        "The user is training for a marathon.",  # "train" is a commute, "training" is not
        "The user renders video for a living.",
        "The user edges out the competition.",
        "The user drives a hard bargain.",
    ],
)
def test_words_of_a_kind_only_as_whole_names(text: str) -> None:
    assert kinds_named(text) == frozenset()
