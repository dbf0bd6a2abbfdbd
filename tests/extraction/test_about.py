"""Routing by what a fact is about: who the user is goes to Global Memory whatever its words."""

from __future__ import annotations

import pytest

from memvault.extraction.about import who_they_are
from memvault.extraction.pipeline import is_identity


@pytest.mark.parametrize(
    "fact",
    [
        "The user is a dog groomer.",
        "The user is a luthier.",
        "The user is autistic.",
        "The user is 34.",
        "The user has an axolotl named Gus.",
        "The user has asthma and a pollen allergy.",
        "The user has multiple sclerosis.",
        "The user speaks Welsh.",
        "The user's daughter is named Ilse and turns seven in April.",
        "The user's pronouns are they/them.",
    ],
)
def test_who_the_user_is(fact: str) -> None:
    assert who_they_are(fact) and is_identity(fact)


@pytest.mark.parametrize(
    "fact",
    [
        "The user is tired today.",
        "The user is a big fan of jazz.",
        "The user has a Nissan Leaf.",
        "The user prefers tea.",
        "The user is learning German.",
        "The user has a meeting at 3.",
        "The user's boss loves Jira.",
        'The user said: "I\'m a luthier."',
    ],
)
def test_what_is_not_who_they_are(fact: str) -> None:
    assert not is_identity(fact)
