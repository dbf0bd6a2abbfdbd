"""Routing by what a fact is about: who the user is goes to Global Memory whatever its words."""

from __future__ import annotations

import pytest

from memvault.extraction.about import what_they_prefer, who_they_are
from memvault.extraction.facts import Candidate
from memvault.extraction.pipeline import Destination, is_identity, route


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
        "The user has high blood pressure.",
        "The user has type 2 diabetes.",
        "The user is engaged.",
        "The user is left-handed.",
        "The user is based in Leeds.",
        "The user is in Lagos.",
        "The user is in New York.",
        "The user's daughter's name is Inês.",
        "The user's brother lives in Perth.",
        "The user takes 50mg sertraline every morning.",
        "The user is doing a PhD in marine biology at Plymouth.",
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
        "The user is in Paris this week.",
        "The user is in Leeds for a conference.",
        "The user is in a meeting.",
        "The user is booked on a flight.",
        "The user is doing the dishes.",
        "The user takes the bus.",
        "The user takes an ML course.",
        "The user's boss lives in Leeds.",
        "The user has type 2 tickets.",
    ],
)
def test_what_is_not_who_they_are(fact: str) -> None:
    assert not is_identity(fact)


@pytest.mark.parametrize(
    "fact",
    [
        "The user is vegan.",
        "The user is gluten-free.",
        "The user is not a night owl.",
        "The user is a morning person.",
        "The user is a plan-everything person.",
    ],
)
def test_a_diet_or_their_hours_is_a_preference(fact: str) -> None:
    assert what_they_prefer(fact)
    assert route(Candidate("fact", fact), may_go_global=True) == (Destination.GLOBAL, "preference")


@pytest.mark.parametrize(
    "fact", ["The user is lactose intolerant.", "The user is coeliac.", "The user is a luthier."]
)
def test_health_and_work_stay_who_they_are(fact: str) -> None:
    assert not what_they_prefer(fact)
    assert route(Candidate("fact", fact), may_go_global=True) == (Destination.GLOBAL, "identity")
