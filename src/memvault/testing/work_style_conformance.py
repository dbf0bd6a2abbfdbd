"""What a user prefers in how work is done, on every backend: inferred from their messages and
runs, reset after 24 hours of inactivity unless they opted in, erased with them, never shown
in a prompt, and followed by a choice made for them. Mixed into
:class:`~memvault.testing.conformance.MemoryConformance`, whose fixtures it uses."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from ..config import Settings
from ..errors import ForbiddenError, ValidationError

EXPERT_IN_A_HURRY = [
    "skip the basics: gap statistic vs silhouette for k-means on 2M rows, which is cheaper?",
    "just the one-liner, no explanation, I'm in a hurry",
    "too long, just the gist",
]
NOVICE_WHO_CHECKS = [
    "I've never filed taxes before. What's a W-2? Sorry if that's a basic question.",
    "Can you double-check the deadline? I want to get this exactly right.",
    "That's wrong, it doesn't match what the IRS site says. Please verify.",
]


def _talk(memory: Any, user: str, said: list[str], **session: Any) -> str:
    sid = memory.create_session(user, **session).id
    for text in said:
        memory.add_turn(sid, user=text, assistant="Noted.")
    return str(sid)


class WorkStyleConformance:
    """Each user's inferred expertise and speed/accuracy leaning, kept per user."""

    def test_expertise_and_leaning_are_inferred_with_their_evidence(self, memory: Any) -> None:
        _talk(memory, "ada", EXPERT_IN_A_HURRY)
        _talk(memory, "bob", NOVICE_WHO_CHECKS)
        ada, bob = memory.user_preferences("ada"), memory.user_preferences("bob")
        assert (ada.expertise.value, ada.leaning.value) == ("expert", "speed")
        assert (bob.expertise.value, bob.leaning.value) == ("novice", "accuracy")
        assert any("skip the basics" in line for line in ada.expertise.evidence)
        assert any(line.startswith("corrections") for line in bob.leaning.evidence)
        assert 0 < bob.leaning.confidence <= 1 and ada.evidence.turns == 3
        unknown = memory.user_preferences("carol")
        assert (unknown.expertise.value, unknown.leaning.value) == ("intermediate", "balanced")
        assert unknown.leaning.confidence == 0 and unknown.last_active is None

    def test_only_the_users_own_words_count(self, memory: Any) -> None:
        _talk(
            memory,
            "dan",
            [
                'My boss always says "quick and dirty, ASAP, no need to verify anything".',
                "I'm not in a hurry at all, take your time and be careful.",
            ],
        )
        assert memory.user_preferences("dan").leaning.value == "accuracy"
        _talk(memory, "eve", ["Just a rough ballpark please, no need to be precise."])
        assert memory.user_preferences("eve").leaning.value == "speed"
        _talk(memory, "fay", EXPERT_IN_A_HURRY, private=True)  # a private session teaches nothing
        assert memory.user_preferences("fay").evidence.turns == 0

    def test_a_retried_failed_request_leans_to_accuracy(self, memory: Any) -> None:
        for success in (False, False, True):
            memory.record_execution(
                workflow_id="wf",
                agent_id="analyst",
                input="Compute the quarterly churn rate for the EMEA accounts",
                success=success,
                user_id="gus",
            )
        gus = memory.user_preferences("gus")
        assert (gus.evidence.runs, gus.evidence.retries) == (3, 2)
        assert gus.leaning.value == "accuracy"
        assert any(line.startswith("retried a failed request") for line in gus.leaning.evidence)

    def test_it_resets_after_a_day_of_inactivity_unless_opted_in(
        self, make_memory: Any, clock: Any
    ) -> None:
        memory = make_memory()
        _talk(memory, "hal", EXPERT_IN_A_HURRY)
        _talk(memory, "ivy", EXPERT_IN_A_HURRY)
        kept = memory.remember_work_style("ivy", True)
        assert kept.remembered and kept.resets_at is None
        _talk(memory, "joe", EXPERT_IN_A_HURRY, metadata={"remember_work_style": True})
        hal = memory.user_preferences("hal")
        assert hal.resets_at is not None and hal.resets_at == hal.last_active + timedelta(hours=24)
        clock.advance(timedelta(hours=23))
        assert memory.user_preferences("hal").evidence.turns == 3
        clock.advance(timedelta(hours=2))
        assert memory.user_preferences("hal").evidence.turns == 0  # reset
        assert memory.user_preferences("ivy").evidence.turns == 3  # opted in
        assert memory.user_preferences("joe").evidence.turns == 3  # opted in by the session
        _talk(memory, "hal", ["what is a p-value?"])
        assert memory.user_preferences("hal").evidence.turns == 1  # started over
        back = memory.remember_work_style("ivy", False)
        assert not back.remembered and back.resets_at is not None

    def test_it_is_erased_with_the_user_and_never_shown_in_a_prompt(self, memory: Any) -> None:
        sid = _talk(memory, "kim", EXPERT_IN_A_HURRY)
        memory.write("kim likes green tea", scope="user:kim", category="preference")
        prompt = memory.system_prompt(sid)
        assert "work style" not in prompt and "expert" not in prompt
        hits = memory.search("work style of user kim inferred", scope="user:kim")
        assert all(h.entry.category != "work_style" for h in hits)
        listed = [e.content for e in memory.retrieve("user:kim")]  # a generic read: memories
        assert listed == ["kim likes green tea"] and memory.count("user:kim") == 1
        assert memory.user_preferences("kim").evidence.turns == 3
        memory.erase(user="kim")
        assert memory.user_preferences("kim").evidence.turns == 0

    def test_a_choice_for_a_user_follows_their_leaning(self, memory: Any) -> None:
        for n in range(6):  # "fast" is quick and often wrong, "slow" slow and right
            for strategy, ok, ms in (("fast", n % 2 == 0, 100.0), ("slow", True, 9000.0)):
                memory.record_execution(
                    workflow_id="wf",
                    agent_id="a",
                    input=f"request {n}",
                    success=ok,
                    strategy=strategy,
                    duration_ms=ms,
                )
        _talk(memory, "lou", EXPERT_IN_A_HURRY)
        _talk(memory, "max", NOVICE_WHO_CHECKS)
        hurried = memory.choose_strategy(["fast", "slow"], user="lou", epsilon=0)
        careful = memory.choose_strategy(["fast", "slow"], user="max", epsilon=0)
        assert (hurried.prefer, hurried.strategy) == ("speed", "fast")
        assert (careful.prefer, careful.strategy) == ("accuracy", "slow")
        given = memory.choose_strategy(["fast", "slow"], user="lou", prefer="accuracy", epsilon=0)
        assert given.prefer == "accuracy"
        team = memory.suggest_team(kind="x", user="max")
        assert team.prefer == "accuracy"

    def test_it_is_written_only_by_its_operations_and_can_be_turned_off(
        self, make_memory: Any
    ) -> None:
        memory = make_memory()
        with pytest.raises(ForbiddenError):
            memory.write("expert", scope="user:ned", category="work_style")
        with pytest.raises(ValidationError):
            memory.user_preferences("")
        with pytest.raises(ValidationError):
            memory.remember_work_style("ned", "yes")
        off = make_memory(settings=Settings(work_style=False))
        _talk(off, "ned", EXPERT_IN_A_HURRY)
        assert off.user_preferences("ned").evidence.turns == 0
