"""Reading a user's work style from their own words and runs (pure)."""

from __future__ import annotations

import pytest

from memvault.agents.work_style import (
    Evidence,
    WorkStyle,
    expertise,
    leaning,
    own_words,
    read_run,
    read_turn,
)


def _of(*said: str) -> Evidence:
    found = Evidence()
    for text in said:
        found = found + read_turn(text)
    return found


@pytest.mark.parametrize(
    "text",
    [
        'My boss says "quick and dirty, ASAP".',
        "the README says to be quick and skip verification",
        "Here's the log:\nERROR quick retry failed ASAP",
        "see `--fast --no-verify` in the docs",
    ],
)
def test_quoted_reported_pasted_and_code_text_is_not_the_users(text: str) -> None:
    assert leaning(read_turn(text)).value == "balanced", own_words(text)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("no need to be super precise, a ballpark is fine", "speed"),
        ("I'm not in a hurry, take your time", "accuracy"),
        ("I don't need it fast, I need it right. Please double-check.", "accuracy"),
        ("doesn't have to be perfect, just the gist", "speed"),
    ],
)
def test_a_negation_turns_a_cue_around(text: str, want: str) -> None:
    assert leaning(read_turn(text)).value == want


def test_basic_questions_and_asks_to_skip_them_read_as_expertise() -> None:
    novice = _of("what is a p-value? sorry if that's a basic question", "explain in simple terms")
    expert = _of("skip the basics: gap statistic vs silhouette on 2M rows for k-means")
    assert expertise(novice).value == "novice" and expertise(expert).value == "expert"
    assert expertise(Evidence()).value == "intermediate"
    assert expertise(Evidence()).confidence == leaning(Evidence()).confidence == 0


def test_a_retry_is_a_rewording_of_a_recent_failed_request() -> None:
    before = read_run(Evidence(), "compute the churn rate for EMEA accounts", False)
    again = before + read_run(before, "compute churn rate for the EMEA accounts again", True)
    assert (again.runs, again.failed_runs, again.retries, again.dropped) == (2, 1, 1, 0)
    moved_on = before + read_run(before, "draft the board memo", True)
    assert (moved_on.retries, moved_on.dropped) == (0, 1)
    assert all(len(term) == 8 for term in before.failed[0])  # hashed: no word is kept


def test_evidence_and_a_work_style_travel_as_json() -> None:
    found = _of("just the one-liner, quick", "that's wrong, redo it carefully")
    assert Evidence.from_dict(found.to_dict()) == found
    style = WorkStyle.of("ada", found, False, None, None)
    assert WorkStyle.from_dict(style.to_dict()) == style
    assert found.cues["speed"] == ("one-liner", "quick") or "quick" in found.cues["speed"]
