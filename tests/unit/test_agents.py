"""Agent memory's pure parts: running statistics, the epsilon-greedy choice, failure patterns,
and the background recorder's retries."""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime

import numpy as np
import pytest

from memvault.agents import background
from memvault.agents import failure_rules as failures
from memvault.agents.choice import choose, utilities
from memvault.agents.model import (
    CATEGORIES,
    Decomposition,
    Execution,
    Suggestion,
    ToolCall,
    execution_content,
    execution_metadata,
    pooled,
)
from memvault.agents.stats import Distribution, Sample, StrategyStats
from memvault.agents.team import Member, RankedTeam, Team, TeamStats, TeamSuggestion
from memvault.core import Stats
from memvault.errors import BackendError, ValidationError
from memvault.types import AGENT_CATEGORIES, RESERVED_CATEGORIES, MemoryEntry, Scope

NOW = datetime(2026, 11, 24, tzinfo=UTC)


def _stats(name: str, runs: int, successes: int, ms: float, tokens: int) -> StrategyStats:
    stats = StrategyStats(name)
    for n in range(runs):
        stats = stats.adding(Sample(n < successes, tokens, ms, 0.0, NOW))
    return stats


class TestDistribution:
    @pytest.mark.parametrize("seed", range(5))
    def test_the_mean_is_exact_and_the_p95_within_five_percent(self, seed: int) -> None:
        values = np.random.default_rng(seed).lognormal(6, 1.5, size=2_000)
        found = Distribution()
        for value in values:
            found = found.adding(float(value))
        assert found.mean == pytest.approx(values.mean())
        exact = float(np.percentile(values, 95, method="higher"))
        p95 = found.quantile(0.95)
        assert p95 is not None and exact <= p95 <= exact * 1.05 + 1
        assert found.quantile(1.0) == pytest.approx(values.max())
        assert len(found.buckets) < 250
        assert Distribution.from_dict(found.to_dict()) == found

    @pytest.mark.parametrize("value", [0.001, 0.5, 1, 1.04, 7, 810, 12_345.6, 1e12])
    def test_a_single_value_is_its_own_p95_within_five_percent(self, value: float) -> None:
        p95 = Distribution().adding(value).adding(value / 2).quantile(0.95)
        assert p95 is not None and value <= p95 <= value * 1.05

    def test_an_empty_distribution_has_no_figures_and_zero_is_its_own_bucket(self) -> None:
        assert Distribution().mean is None and Distribution().quantile(0.95) is None
        zeros = Distribution().adding(0).adding(0).adding(10)
        assert zeros.quantile(0.5) == 0.0 and zeros.quantile(1.0) == 10.0

    def test_malformed_statistics_are_a_validation_error(self) -> None:
        with pytest.raises(ValidationError):
            StrategyStats.from_dict({"strategy": "x"})
        with pytest.raises(ValidationError):
            Distribution.from_dict({"count": 1, "total": 1, "maximum": 1, "buckets": [1]})


def test_strategy_statistics_round_trip_through_their_entry() -> None:
    stats = _stats("react", 5, 3, 1200.0, 900)
    assert StrategyStats.from_dict(stats.to_dict()) == stats
    summary = stats.to_dict()
    assert (summary["runs"], summary["success_rate"], summary["mean_tokens"]) == (5, 0.6, 900)


class TestChoice:
    def test_untried_candidates_come_first_in_their_order(self) -> None:
        known = {"a": _stats("a", 3, 3, 10.0, 10)}
        choice = choose(["a", "b", "c"], known, epsilon=0, prefer="balanced", rng=random.Random(1))
        assert (choice.strategy, choice.reason) == ("b", "untried")
        assert "never run" in choice.explanation

    def test_each_preference_weighs_success_against_time_and_tokens(self) -> None:
        known = {
            "careful": _stats("careful", 10, 10, 9_000.0, 4_000),
            "quick": _stats("quick", 10, 8, 1_000.0, 1_000),
        }
        picks = {
            prefer: choose(
                ["careful", "quick"], known, epsilon=0, prefer=prefer, rng=random.Random(0)
            ).strategy
            for prefer in ("accuracy", "speed", "balanced")
        }
        assert picks == {"accuracy": "careful", "speed": "quick", "balanced": "quick"}
        speed = utilities(known, "speed")
        assert speed["quick"] == pytest.approx(9 / 12)
        assert speed["careful"] == pytest.approx(11 / 12 * 1001 / 9001)

    def test_one_lucky_run_does_not_beat_a_long_record(self) -> None:
        known = {
            "steady": _stats("steady", 100, 95, 10.0, 10),
            "lucky": _stats("lucky", 1, 1, 10, 10),
        }
        choice = choose(
            ["lucky", "steady"], known, epsilon=0, prefer="accuracy", rng=random.Random(0)
        )
        assert choice.strategy == "steady" and choice.reason == "exploit"

    def test_exploration_draws_with_the_given_generator(self) -> None:
        known = {n: _stats(n, 5, 5, 10.0, 10) for n in ("a", "b", "c")}
        draws = [
            choose(["a", "b", "c"], known, epsilon=0.5, prefer="speed", rng=random.Random(s))
            for s in range(200)
        ]
        explored = [c for c in draws if c.reason == "explore"]
        assert 70 < len(explored) < 130
        assert {c.strategy for c in explored} == {"a", "b", "c"}
        assert all(c.strategy == "a" for c in draws if c.reason == "exploit")  # equals: the first

    def test_a_choice_survives_its_json(self) -> None:
        known = {"a": _stats("a", 3, 2, 10.0, 10), "b": _stats("b", 3, 3, 20.0, 10)}
        choice = choose(["a", "b"], known, epsilon=0, prefer="balanced", rng=random.Random(0))
        again = type(choice).from_dict(choice.to_dict())
        assert again == choice and str(again) == str(choice)

    def test_no_candidates_is_an_error(self) -> None:
        with pytest.raises(ValidationError):
            choose([], {}, epsilon=0.1, prefer="balanced", rng=random.Random(0))


class TestFailures:
    def test_built_in_patterns_are_seen_in_the_request_or_its_plan(self) -> None:
        found = failures.matching(
            "Summarise the whole document", ["fetch it in parallel"], failures.BUILT_IN
        )
        assert [(m.pattern.name, m.matched) for m in found] == [
            ("rate_limit", ("in parallel",)),
            ("context_overflow", ("whole document",)),
        ]
        huge = failures.matching("Summarise this: " + "word " * 50_000, None, failures.BUILT_IN)
        assert [m.pattern.name for m in huge] == ["context_overflow"]
        assert [m.pattern.name for m in failures.matching("fix it", None, failures.BUILT_IN)] == [
            "ambiguous_request"
        ]

    def test_a_learned_pattern_counts_failures_and_keeps_no_text(self) -> None:
        pattern = None
        for _ in range(3):
            pattern = failures.learned_from(pattern, "PortalTimeout")
        assert pattern is not None and pattern.occurrences == 3 and pattern.terms == {}
        assert failures.FailurePattern.from_dict(pattern.to_dict()) == pattern

    def test_its_indicators_are_the_words_recurring_in_its_recent_failures(self) -> None:
        pattern = failures.learned_from(None, "PortalTimeout")
        requests = [f"Scrape supplier prices in the {r} region" for r in ("north", "south")]
        requests.append("Scrape the supplier portal again")
        found = failures.with_recent(pattern, requests)
        assert set(found.terms) == {"scrape", "supplier", "price", "region"}
        assert "north" not in found.terms  # in one failure only: never kept
        assert failures.matching("scrape the supplier's prices again", None, [found])
        assert not failures.matching("scrape the news", None, [found])  # one shared word
        lone = failures.with_recent(pattern, ["deploy the api", "deploy the site"])
        assert list(lone.terms) == ["deploi"]
        assert not failures.matching("please deploy the website", None, [lone])

    def test_a_long_history_does_not_crowd_out_new_words(self) -> None:
        pattern = failures.learned_from(None, "Boom")
        words = " ".join(f"word{n}" for n in range(500))
        found = failures.with_recent(pattern, [words] + ["zebra crossing failure"] * 5)
        assert {"zebra", "cross", "failur"} <= set(found.terms)

    def test_a_learned_built_in_error_class_takes_its_mitigation(self) -> None:
        learned = failures.learned_from(None, "RateLimitError")
        assert learned.mitigation == failures.BUILT_IN[0].mitigation
        assert "PortalTimeout" in failures.learned_from(None, "PortalTimeout").mitigation


def test_an_execution_survives_its_entry() -> None:
    execution = Execution(
        id="E1",
        scope="workspace:agents",
        created_at=NOW,
        workflow_id="wf",
        agent_id="a",
        input="the question",
        output="the answer\n\nin two parts",
        success=False,
        error_class="Boom",
        tool_calls=(ToolCall("sql", {"q": 1}, "rows"),),
    )
    content, split = execution_content(execution.input, execution.output)
    entry = MemoryEntry(
        id="E1",
        scope=Scope.parse("workspace:agents"),
        content=content,
        created_at=NOW,
        updated_at=NOW,
        valid_from=NOW,
        metadata={**execution_metadata(execution), **split},
    )
    assert Execution.from_entry(entry) == execution
    assert Execution.from_dict(execution.to_dict()) == execution
    no_output = execution_content("only a question", "")
    assert no_output[0] == "only a question"


class TestRecorder:
    def _run(
        self, outcomes: list[BaseException | None], monkeypatch: pytest.MonkeyPatch
    ) -> tuple[object, list[int], Stats]:
        monkeypatch.setattr(background, "BACKOFF_S", 0.0)
        stats, calls = Stats(), [0]

        async def record() -> str:
            calls[0] += 1
            outcome = outcomes[min(calls[0], len(outcomes)) - 1]
            if outcome is not None:
                raise outcome
            return "stored"

        async def scenario() -> object:
            recorder = background.Recorder(stats)
            task = recorder.submit(record)
            await recorder.drain()
            return task.result()

        return asyncio.run(scenario()), calls, stats

    def test_a_failing_store_is_retried_until_it_works(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        result, calls, stats = self._run(
            [BackendError("down"), BackendError("down"), None], monkeypatch
        )
        assert result == "stored" and calls == [3] and stats.snapshot() == {}

    def test_after_three_retries_the_record_is_dropped_and_counted(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        result, calls, stats = self._run([BackendError("down")], monkeypatch)
        assert result is None and calls == [4]
        assert stats.snapshot() == {"executions_dropped": 1}

    def test_an_invalid_record_is_dropped_at_once(self, monkeypatch: pytest.MonkeyPatch) -> None:
        result, calls, stats = self._run([ValidationError("bad")], monkeypatch)
        assert result is None and calls == [1] and stats.snapshot() == {"executions_dropped": 1}


def test_agent_categories_are_the_reserved_ones() -> None:
    assert set(CATEGORIES) == AGENT_CATEGORIES <= RESERVED_CATEGORIES


def test_one_decomposition_recorded_for_several_users_is_one_suggestion() -> None:
    def found(entry_id: str, runs: int, successes: int, similarity: float) -> Suggestion:
        made = Decomposition(entry_id, "q", ("a", "b"), None, runs, successes, 10, 5.0, NOW)
        return Suggestion(made, similarity)

    other = Suggestion(Decomposition("D9", "q", ("c",), None, 1, 1, 0, 0.0, NOW), 0.85)
    merged = pooled([found("D1", 2, 1, 0.9), other, found("D2", 3, 3, 0.95)])
    assert [(s.decomposition.runs, s.decomposition.successes, s.similarity) for s in merged] == [
        (5, 4, 0.95),
        (1, 1, 0.85),
    ]


class TestTeams:
    def test_a_team_is_its_members_in_any_order(self) -> None:
        a = Team.of([Member("writer", "w"), Member("critic", "c", "large"), Member("writer", "w")])
        b = Team.of([Member("critic", "c", "large"), Member("writer", "w"), Member("writer", "w")])
        assert a == b and a.key == b.key and len(a.members) == 3  # two writers: two members
        assert Team.of([Member("critic", "c")]).key != Team.of([Member("critic", "c", "x")]).key
        assert str(a) == "critic: c (large) + writer: w + writer: w"
        assert Team.from_list(a.to_list()) == a

    def test_team_statistics_and_a_suggestion_travel_as_json(self) -> None:
        team = Team.of([Member("writer", "w")])
        stats = TeamStats(team=team, kind="report", last_workflow_id="wf")
        for n in range(4):
            stats = stats.adding(Sample(n != 1, 100 * n, 10.0 * n, 0.5, NOW))
        assert (stats.runs, stats.successes, stats.cost) == (4, 3, 2.0)
        assert TeamStats.from_dict(stats.to_dict()) == stats
        made = TeamSuggestion(
            team, "exploit", "speed", 0.1, "report", False, (RankedTeam(stats, 0.5),)
        )
        assert TeamSuggestion.from_dict(made.to_dict()) == made
        assert made.explanation.startswith("writer: w: best speed utility on 'report' requests")
        assert "3/4 succeeded" in made.explanation

    @pytest.mark.parametrize(
        "bad", [{"role": "x"}, {"agent_id": "y"}, {"role": "x", "agent_id": "y", "z": 1}, "x"]
    )
    def test_a_member_names_a_role_and_an_agent_only(self, bad: object) -> None:
        with pytest.raises(ValidationError):
            Member.coerce(bad)
