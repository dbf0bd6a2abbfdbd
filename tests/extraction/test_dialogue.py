"""A short reply read in its dialogue: the suggestion it takes, the statement it corrects."""

from __future__ import annotations

import pytest

from memvault.extraction import dialogue, pipeline
from memvault.extraction.facts import Turn
from memvault.extraction.heuristic import extract

PROPOSAL = "You could get the Kindle Paperwhite or the Kobo Clara — the Kobo does library books."


@pytest.mark.parametrize(
    ("reply", "proposal", "option"),
    [
        ("kobo then, I like that it does library books", PROPOSAL, "kobo"),
        ("fine, Fly.io then", "Render or Fly.io would both work.", "Fly.io"),
        (
            "went with the Cliftons, thanks!",
            "Popular picks: Brooks Ghost, Hoka Clifton.",
            "Cliftons",
        ),
        ("the 10:30 one", "Two options: bed at 10:30pm or 11:30pm.", "10:30"),
        ("Crumb Theory, love it", "Two ideas: 'Rise & Shine' or 'Crumb Theory'.", "Crumb Theory"),
    ],
)
def test_the_option_a_reply_takes(reply: str, proposal: str, option: str) -> None:
    assert dialogue.accepted(reply, proposal) == option


@pytest.mark.parametrize(
    ("reply", "proposal"),
    [
        ("nah, not Heroku", "Heroku or Render?"),  # turned down
        ("is the Kobo waterproof?", PROPOSAL),  # asked about
        ("I live in Paris.", "I live in Berlin and I prefer Go."),  # nothing was proposed
        ("I use Postgres", "Do you use Postgres or MySQL?"),  # an answer, read as a statement
        ("thanks!", PROPOSAL),
    ],
)
def test_what_takes_no_option(reply: str, proposal: str) -> None:
    assert dialogue.accepted(reply, proposal) is None


@pytest.mark.parametrize(
    ("reply", "earlier", "fact"),
    [
        ("*Deloitte, typo", "The user works at Deloite.", "The user works at Deloitte."),
        ("sorry, 43 not 34", "The user is 34 years old.", "The user is 43 years old."),
        (
            "Actually, it's Munich, not Berlin.",
            "The user lives in Berlin.",
            "The user lives in Munich.",
        ),
    ],
)
def test_the_fact_a_reply_corrects(reply: str, earlier: str, fact: str) -> None:
    found = dialogue.corrected(reply, ["The user likes tea.", earlier])
    assert found is not None and (found.index, found.fact) == (1, fact)


def test_a_reply_that_corrects_nothing_of_the_users() -> None:
    assert dialogue.corrected("sorry, I meant Rust, not Go", ["The user lives in Oslo."]) is None
    assert dialogue.corrected("Oslo is lovely", ["The user lives in Olso."]) is None


def _stored(*said: tuple[str, str]) -> list[tuple[str, str]]:
    turns = tuple(Turn(n, role, text) for n, (role, text) in enumerate(said, 1))  # type: ignore[arg-type]
    found = [c for c in extract(turns) if c.turn == len(turns)]
    where = pipeline.situation(
        pipeline.Window(turns, (), tuple(range(len(turns)))), [], private=False
    )
    return [
        (d.category or "", d.content)
        for d in pipeline.decide(found, where)
        if d.stored and d.stated
    ]


def test_an_accepted_suggestion_is_the_users_decision() -> None:
    stored = _stored(("user", "which e-reader?"), ("assistant", PROPOSAL), ("user", "kobo then"))
    assert stored == [("decision", "The user chose kobo.")]


def test_a_correction_is_grounded_in_both_of_the_users_turns() -> None:
    stored = _stored(
        ("user", "I work at Deloite as an auditor, help me prep for busy season."),
        ("assistant", "Sure — here is a plan."),
        ("user", "*Deloitte, typo"),
    )
    assert stored == [("identity", "The user works at Deloitte.")]


def test_a_tool_call_is_not_a_turn_and_the_answer_after_it_is_tool_influenced() -> None:
    """An assistant's tool call holds the model's arguments, not its words: extraction skips it,
    and the answer after the tool's output is marked as influenced by it."""
    from datetime import UTC, datetime

    from memvault.facilities.model import Record

    at = datetime(2026, 5, 3, tzinfo=UTC)
    records = [
        Record("1", "s", "user", "Load sales.csv", at),
        Record("2", "s", "assistant", '{"path": "sales.csv"}', at, "load-data", "c1"),
        Record("3", "s", "tool", "3 rows", at, "load-data", "c1"),
        Record("4", "s", "assistant", "Loaded 3 rows.", at),
    ]
    window = pipeline.window_of(records)
    assert [t.text for t in window.turns] == ["Load sales.csv", "Loaded 3 rows."]
    assert window.turns[1].tool_influenced


def test_an_answer_that_echoes_the_user_does_not_take_their_words_away() -> None:
    """The user's sentence is theirs even when the assistant's answer after it repeats five
    of its words: the user cannot have copied a later turn (the newcomer's "I prefer charts in
    dark mode." / "Got it, you prefer charts in dark mode.")."""
    turns = (
        Turn(1, "user", "I prefer charts in dark mode."),
        Turn(2, "assistant", "Got it, you prefer charts in dark mode."),
    )
    where = pipeline.situation(pipeline.Window(turns, (), (0, 1)), [], private=False)
    assert "I prefer charts in dark mode." in pipeline.own_text(turns[0], where)
    copied = (
        Turn(1, "assistant", "You could say: I prefer charts in dark mode."),
        Turn(2, "user", "I prefer charts in dark mode."),
    )
    where = pipeline.situation(pipeline.Window(copied, (), (0, 1)), [], private=False)
    assert "charts" not in pipeline.own_text(copied[1], where)  # copied from an earlier turn
