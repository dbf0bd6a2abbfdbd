"""The parse's reading of a user's sentence: whose clause it is, and what it says in the third
person — and the learned judge that weighs it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from memvault.errors import ConfigError
from memvault.extraction import clauses, judge, nlp


def facts(text: str, *, asks: bool = False) -> list[str]:
    return [s.fact for s in clauses.statements([(text, asks)])]


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("I swear by pytest-style fixtures", "The user swears by pytest-style fixtures."),
        ("I don't own a car", "The user doesn't own a car."),
        ("I'm a farrier", "The user is a farrier."),
        ("we've settled on ClickHouse", "The user and their family have settled on ClickHouse."),
        ("we deploy on Fridays", "The user and their team deploy on Fridays."),
        ("my daughter Ada is 6", "The user's daughter Ada is 6."),
        ("Marco and I rent a flat in Ghent", "Marco and the user rent a flat in Ghent."),
        ("gluten really doesn't agree with me", "Gluten really doesn't agree with the user."),
        ("living in Porto at the moment", "The user is living in Porto at the moment."),
        ("pescatarian since 2021", "The user is pescatarian since 2021."),
        ("been in Dublin 8 years", "The user has been in Dublin 8 years."),
    ],
)
def test_whose_clause_it_is(text: str, fact: str) -> None:
    assert facts(text) == [fact]


def test_coordinated_verbs_are_statements_of_their_own() -> None:
    found = facts("I hate cilantro, love anything with miso, and I'm allergic to kiwi")
    assert "The user hates cilantro." in found
    assert "The user is allergic to kiwi." in found
    assert all(fact.count("user") == 1 for fact in found)


@pytest.mark.parametrize(
    ("question", "fact"),
    [
        ("Being a night-shift paramedic, how do I fix my sleep?", "a night-shift paramedic"),
        ("since I'm allergic to cats, which dog breeds shed least?", "allergic to cats"),
        ("as someone who genuinely hates YAML, is there a nicer format?", "hates YAML"),
    ],
)
def test_a_question_yields_only_what_its_lead_states(question: str, fact: str) -> None:
    (found,) = facts(question, asks=True)
    assert found.startswith("The user") and fact in found


@pytest.mark.parametrize(
    "text",
    [
        "My friend Jake is a pilot for Ryanair",  # someone else's
        "my coworker swears by tabs over spaces",
        "use British spelling for this document",  # an imperative
        "I could switch to Linux",  # modal
        "if I were a teacher I would grade it harder",  # conditional
        "I lived in Vienna for a few years",  # what held once
        "I'll take option B",  # points at the chat
        "I prefer the second one",
        "the housing market in Dublin is insane",  # about the world
    ],
)
def test_what_is_not_the_users_statement(text: str) -> None:
    assert facts(text) == []


def test_a_question_itself_states_nothing() -> None:
    assert facts("how do I reverse a linked list in python?", asks=True) == []
    assert facts("If I were a teacher, how would I grade this?", asks=True) == []


def test_features_name_the_clause_shape() -> None:
    (statement,) = clauses.statements([("I don't eat pork anymore", False)])
    assert {"who=i", "head=eat", "neg=not", "dobj=pork"} <= set(statement.features)


def test_no_word_of_what_it_read_stays_behind() -> None:
    word = "Quorblexinthor"
    assert facts(f"I adopted a cat called {word}") == [f"The user adopted a cat called {word}."]
    assert word not in nlp.parser().vocab.strings


# --- the judge ---------------------------------------------------------------------------------


@pytest.fixture
def fresh_judge() -> Iterator[None]:
    judge._model.cache_clear()
    yield
    judge._model.cache_clear()


def _verdicts(*texts: str) -> list[judge.Verdict | None]:
    statements = clauses.statements([(t, False) for t in texts])
    assert len(statements) == len(texts)
    return judge.verdicts(statements)


def test_the_judge_keeps_facts_by_kind() -> None:
    farrier, hospice = _verdicts("I'm a farrier in Cork", "I volunteer at a hospice every Thursday")
    assert farrier is not None and farrier.identity
    assert hospice is not None and not hospice.identity


def test_what_holds_for_the_days_ahead_is_a_context() -> None:
    (talk,) = _verdicts("I'm giving a talk in Lisbon next week")
    assert talk is not None and talk.category == "context" and not talk.identity


def test_the_judge_drops_what_is_not_a_fact() -> None:
    assert _verdicts("I'm kidding") == [None]


def test_a_changed_judge_file_is_refused(
    fresh_judge: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(judge, "MODEL_SHA256", "0" * 64)
    with pytest.raises(ConfigError, match="sha256"):
        judge.verdicts(clauses.statements([("I'm a farrier", False)]))


def test_the_shipped_judge_is_whole() -> None:
    model = json.loads(Path(judge.MODEL).read_text("utf-8"))
    assert model["labels"] == list(judge.LABELS)
    assert len(model["embedding"]) == 384
    assert all(len(row) == len(judge.LABELS) for row in model["weights"].values())


@pytest.mark.parametrize(
    "text",
    [
        "dropped Spanish, doing Italian now",
        "back on day shifts now",
        "I moved everything to Render",
        "we moved the standup to Thursdays",
        "my rent went up again",
    ],
)
def test_the_user_says_it_of_themselves(text: str) -> None:
    assert clauses.of_the_user(text)


@pytest.mark.parametrize(
    "text",
    [
        "my wife switched to Android",
        "my boss moved to Leeds",
        "not switching to Android",
        "I don't use Vim anymore",
        "Notion got too slow",
        "The deadline moved to June",
    ],
)
def test_someone_else_or_a_negation_is_not_the_users_statement(text: str) -> None:
    assert not clauses.of_the_user(text)
