"""Agent memory's behaviour on every backend: executions, strategy statistics and choice,
decompositions, failure patterns, retention and erasure. Mixed into
:class:`~memvault.testing.conformance.MemoryConformance`, whose fixtures (``memory``,
``make_memory``, ``clock``) it uses."""

from __future__ import annotations

import asyncio
import threading
from datetime import timedelta
from typing import Any

import pytest

from ..config import Settings
from ..errors import ForbiddenError, ValidationError
from . import ManualClock

THREADS = 16
EACH = 10


def _run(memory: Any, n: int, **changes: Any) -> Any:
    """Record execution ``n`` of a small, known history (strategy "react" succeeds 3 times in
    4, "plan" every time but slower)."""
    strategy = "react" if n % 2 else "plan"
    fields: dict[str, Any] = {
        "workflow_id": f"wf-{n % 3}",
        "agent_id": "researcher" if n < 6 else "writer",
        "input": f"Summarise the quarterly report number {n}",
        "output": f"Report {n}: revenue grew",
        "success": strategy == "plan" or n % 4 != 3,
        "strategy": strategy,
        "kind": "summary",
        "tokens_in": 100 * (n + 1),
        "tokens_out": 10,
        "duration_ms": 1000.0 if strategy == "react" else 3000.0,
        "cost": 0.01,
    }
    return memory.record_execution(**{**fields, **changes})


class AgentConformance:
    """Executions, strategies, decompositions and failures, kept in the store."""

    # -- executions ---------------------------------------------------------------------------

    def test_an_execution_is_recorded_and_read_back_whole(self, memory: Any) -> None:
        recorded = memory.record_execution(
            workflow_id="wf-1",
            agent_id="researcher",
            input="Find the three largest customers in EMEA",
            output="ACME, Globex and Initech",
            success=True,
            strategy="react",
            kind="lookup",
            task_id="t-7",
            parent_id="e-0",
            model="gpt-x",
            tokens_in=1200,
            tokens_out=80,
            cost=0.02,
            duration_ms=2150.5,
            tool_calls=[
                {
                    "name": "sql",
                    "parameters": {"query": "SELECT 1"},
                    "output": "1",
                    "duration_ms": 5,
                }
            ],
            session_id="s-1",
            user_id="alice",
        )
        (read,) = memory.executions(workflow_id="wf-1")
        assert read == recorded
        assert read.tokens == 1280 and read.tool_calls[0].parameters == {"query": "SELECT 1"}
        assert memory.executions(agent_id="nobody") == []

    def test_executions_are_queried_by_workflow_agent_outcome_and_time(
        self, memory: Any, clock: ManualClock
    ) -> None:
        start = clock()
        for n in range(8):
            _run(memory, n)
            clock.advance(minutes=1)
        assert len(memory.executions()) == 8
        assert [e.input[-1] for e in memory.executions(workflow_id="wf-1")] == ["7", "4", "1"]
        assert {e.agent_id for e in memory.executions(agent_id="writer")} == {"writer"}
        failed = memory.executions(success=False)
        assert [e.input[-1] for e in failed] == ["7", "3"]
        window = memory.executions(
            since=start + timedelta(minutes=2), until=start + timedelta(minutes=4)
        )
        assert [e.input[-1] for e in window] == ["3", "2"]
        assert len(memory.executions(limit=2)) == 2

    def test_past_executions_are_found_by_what_they_did(self, memory: Any) -> None:
        memory.record_execution(
            workflow_id="w", agent_id="a", input="Translate the contract into German", success=True
        )
        memory.record_execution(
            workflow_id="w", agent_id="a", input="Plot monthly active users", success=True
        )
        found = memory.search_executions("German translation of a contract", limit=1)
        assert [e.input for e, _ in found] == ["Translate the contract into German"]
        assert memory.search_executions("contract", success=False) == []

    def test_execution_text_is_redacted_and_validated(self, memory: Any) -> None:
        recorded = memory.record_execution(
            workflow_id="w",
            agent_id="a",
            input="Email the invoice to bob@example.com",
            output="sent to bob@example.com",
            success=False,
            error_class="SmtpError",
            error_message="bob@example.com refused",
            tool_calls=[{"name": "mail", "parameters": {"to": ["bob@example.com"]}}],
        )
        assert "bob@example.com" not in repr(recorded)
        assert "bob@example.com" not in repr(memory.executions())
        for bad in (
            {"tokens_in": -1},
            {"duration_ms": float("nan")},
            {"workflow_id": ""},
            {"input": "   "},
            {"tool_calls": [{"name": "x", "colour": "red"}]},
            {"tool_calls": [{"name": "x", "parameters": "not a mapping"}]},
            {"success": "yes"},
            {"cost": 1e300},
            {"tokens_in": 2**63 - 1},
            {"strategy": "a\u200bb"},
            {"tool_calls": [{"name": "t", "parameters": {1: "a"}}]},
            {"tool_calls": [{"name": "t", "parameters": {"a": "b\x00"}}]},
            {"tool_calls": [{"name": "t", "duration_ms": 1e300}]},
        ):
            with pytest.raises(ValidationError):
                _run(memory, 1, **bad)
        assert len(memory.executions()) == 1
        with pytest.raises(ValidationError):
            memory.check_failures("deploy", plan=[1, 2])
        with pytest.raises(ValidationError):
            memory.choose_strategy(["react"], seed=[1])

    def test_agent_memory_entries_are_not_written_or_changed_directly(self, memory: Any) -> None:
        with pytest.raises(ForbiddenError):
            memory.write("fake statistics", scope="workspace:agents", category="strategy_stats")
        _run(memory, 1)
        (entry,) = [e for e in memory.retrieve("workspace:agents") if e.category == "execution"]
        with pytest.raises(ForbiddenError):
            memory.update(entry.id, content="rewritten history")

    # -- strategies ---------------------------------------------------------------------------

    def test_strategy_statistics_fold_every_execution(self, memory: Any) -> None:
        for n in range(8):
            _run(memory, n)
        _run(memory, 8, kind="lookup")
        rows = {(s.strategy, s.kind): s for s in memory.strategy_stats()}
        assert set(rows) == {
            ("plan", "*"),
            ("plan", "summary"),
            ("plan", "lookup"),
            ("react", "*"),
            ("react", "summary"),
        }
        react = rows["react", "summary"]
        assert (react.runs, react.successes) == (4, 2)
        assert react.tokens.mean == pytest.approx((200 + 400 + 600 + 800) / 4 + 10)
        assert react.duration_ms.mean == pytest.approx(1000.0)
        assert react.to_dict()["p95_tokens"] == pytest.approx(810, rel=0.05)
        assert rows["plan", "*"].runs == 5 and rows["plan", "*"].success_rate == 1.0
        assert [s.kind for s in memory.strategy_stats(kind="lookup")] == ["lookup"]

    def test_sixteen_concurrent_recorders_lose_no_update(self, make_memory: Any) -> None:
        memory = make_memory()
        runs = [(t, n) for t in range(THREADS) for n in range(EACH)]

        def record(thread: int, n: int, where: Any) -> None:
            where.record_execution(
                workflow_id=f"wf-{thread}",
                agent_id=f"agent-{thread}",
                input=f"job {thread}-{n}",
                success=n % 2 == 0,
                strategy="shared",
                tokens_in=1,
                duration_ms=1.0,
            )

        if hasattr(memory, "_runner"):  # the async driver: as many tasks at once
            inner = memory._memory

            async def together() -> None:
                await asyncio.gather(
                    *(
                        inner.record_execution(
                            workflow_id=f"wf-{t}",
                            agent_id=f"agent-{t}",
                            input=f"job {t}-{n}",
                            success=n % 2 == 0,
                            strategy="shared",
                            tokens_in=1,
                            duration_ms=1.0,
                        )
                        for t, n in runs
                    )
                )

            memory._runner.run(together())
        else:
            barrier = threading.Barrier(THREADS)
            errors: list[BaseException] = []
            memories = [make_memory() for _ in range(THREADS)]  # opened here: not thread-safe

            def worker(thread: int) -> None:
                mine = memories[thread]
                try:
                    barrier.wait(timeout=30)
                    for n in range(EACH):
                        record(thread, n, mine)
                except BaseException as exc:
                    errors.append(exc)

            threads = [threading.Thread(target=worker, args=(t,)) for t in range(THREADS)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert errors == []
        (stats,) = memory.strategy_stats()
        assert (stats.runs, stats.successes) == (THREADS * EACH, THREADS * EACH // 2)
        assert stats.tokens.count == THREADS * EACH
        assert len(memory.executions(limit=1000)) == THREADS * EACH

    def test_the_choice_tries_each_strategy_then_takes_the_best(self, memory: Any) -> None:
        first = memory.choose_strategy(["react", "plan"], kind="summary", seed=1)
        assert (first.strategy, first.reason) == ("react", "untried")
        for n in range(8):
            _run(memory, n)
        accurate = memory.choose_strategy(
            ["react", "plan"], kind="summary", prefer="accuracy", epsilon=0, seed=1
        )
        assert (accurate.strategy, accurate.reason) == ("plan", "exploit")
        fast = memory.choose_strategy(
            ["react", "plan"], kind="summary", prefer="speed", epsilon=0, seed=1
        )
        assert fast.strategy == "react"
        assert "react" in str(fast) and "speed" in fast.explanation
        assert fast.utilities["react"] > fast.utilities["plan"]
        new = memory.choose_strategy(["react", "plan", "reflexion"], kind="summary", seed=1)
        assert (new.strategy, new.reason) == ("reflexion", "untried")

    def test_exploration_follows_epsilon_and_the_seed(self, memory: Any) -> None:
        for n in range(8):
            _run(memory, n)
        drawn = [
            memory.choose_strategy(["react", "plan"], epsilon=1.0, seed=seed) for seed in range(20)
        ]
        assert {c.reason for c in drawn} == {"explore"}
        assert {c.strategy for c in drawn} == {"react", "plan"}
        again = [memory.choose_strategy(["react", "plan"], epsilon=1.0, seed=s) for s in range(20)]
        assert [c.strategy for c in again] == [c.strategy for c in drawn]
        bad_choices: list[dict[str, Any]] = [
            {"epsilon": 1.5},
            {"prefer": "cheap"},
            {"candidates": []},
        ]
        for bad in bad_choices:
            with pytest.raises(ValidationError):
                memory.choose_strategy(**{"candidates": ["react"], **bad})

    def test_a_kind_of_request_has_its_own_record_once_it_has_enough_runs(
        self, memory: Any
    ) -> None:
        for n in range(10):  # 5 summaries each
            _run(memory, n)
        for n in range(5):  # "plan" always fails on lookups
            lookup = {"kind": "lookup", "input": f"Look up the owner of account {n}"}
            _run(memory, 100 + n, strategy="plan", success=False, **lookup)
            _run(memory, 200 + n, strategy="react", success=True, **lookup)
        choice = memory.choose_strategy(
            ["react", "plan"], kind="lookup", prefer="accuracy", epsilon=0
        )
        assert choice.strategy == "react" and choice.kind == "lookup"
        assert choice.stats["plan"].kind == "lookup"
        inferred = memory.choose_strategy(
            ["react", "plan"],
            query="Summarise the quarterly report number 5",
            prefer="accuracy",
            epsilon=0,
        )
        assert inferred.kind == "summary" and inferred.strategy == "plan"

    # -- decompositions -----------------------------------------------------------------------

    def test_decompositions_of_similar_requests_are_suggested(self, memory: Any) -> None:
        steps = ["list the candidate databases", "benchmark each one", "write the report"]
        memory.record_decomposition(
            "Compare three databases for our analytics workload", steps, strategy="plan"
        )
        again = memory.record_decomposition(
            "Compare three databases for our analytics workload", steps, strategy="plan", tokens=500
        )
        assert (again.runs, again.successes, again.tokens, again.strategy) == (2, 2, 500, "plan")
        failed = ["ask the user"]
        memory.record_decomposition(
            "Compare three databases for our analytics workloads", failed, success=False
        )
        (suggestion,) = memory.suggest_decomposition(
            "compare 3 databases for the analytics workload"
        )
        assert suggestion.subtasks == tuple(steps) and suggestion.similarity >= 0.8
        assert memory.suggest_decomposition("Bake a chocolate cake for twelve people") == []
        with pytest.raises(ValidationError):
            memory.record_decomposition("Plan a trip", [])
        with pytest.raises(ValidationError):
            memory.record_decomposition("Plan a trip", ["go"], duration_ms=1e308)
        memory.record_decomposition("Plan the offsite", ["book"], strategy="s1", success=False)
        memory.record_decomposition("Plan the offsite", ["book"], strategy="s2")
        (offsite,) = memory.suggest_decomposition("Plan the offsite")
        assert (offsite.decomposition.strategy, offsite.decomposition.runs) == ("s2", 1)

    # -- failures -----------------------------------------------------------------------------

    def test_known_failures_are_recognised_before_a_run(self, memory: Any) -> None:
        names = [m.pattern.name for m in memory.check_failures("Do something with the stuff")]
        assert names == ["ambiguous_request"]
        found = memory.check_failures(
            "Summarise the entire codebase", plan=["call the API for each of 5,000 files"]
        )
        assert [m.pattern.name for m in found] == ["rate_limit", "context_overflow"]
        assert all(m.mitigation for m in found)
        assert memory.check_failures("Translate the invoice from 2023 into French") == []

    def test_a_long_request_may_overflow_and_names_are_redacted(self, memory: Any) -> None:
        found = memory.check_failures("Summarise this: " + "word " * 50_000)
        assert "context_overflow" in [m.pattern.name for m in found]
        memory.record_execution(
            workflow_id="w",
            agent_id="a",
            input="Send the invoice",
            success=False,
            error_class="NoMailbox bob@example.com",
            strategy="mail bob@example.com",
            kind="mail to bob@example.com",
        )
        kept = repr(memory.failure_patterns()) + repr(memory.strategy_stats())
        assert "bob@example.com" not in kept and "[EMAIL]" in kept

    def test_failures_are_learned_from_recorded_runs(self, memory: Any) -> None:
        for n in range(3):
            memory.record_execution(
                workflow_id="w",
                agent_id="a",
                input=f"Scrape the supplier portal prices for region {n}",
                success=False,
                error_class="PortalTimeout",
            )
        learned = [p for p in memory.failure_patterns() if p.learned]
        assert [(p.name, p.occurrences) for p in learned] == [("learned:PortalTimeout", 3)]
        (match,) = memory.check_failures("Scrape portal prices for the new supplier")
        assert match.pattern.name == "learned:PortalTimeout" and len(match.matched) >= 2
        assert memory.check_failures("Translate the invoice from 2023 into French") == []

    def test_tenants_keep_their_own_agent_memory(self, memory: Any) -> None:
        other = memory.with_tenant("other")
        for mine in (memory, other):
            _run(mine, 1)
            _run(mine, 3, success=False, error_class="Boom")
            mine.record_decomposition("Plan the offsite", ["pick a date"])
        for mine in (memory, other):
            assert [(s.strategy, s.runs) for s in mine.strategy_stats(kind="*")] == [("react", 2)]
            assert [p.occurrences for p in mine.failure_patterns() if p.learned] == [1]
            assert mine.suggest_decomposition("Plan the offsite")[0].decomposition.runs == 1
            assert len(mine.executions()) == 2

    def test_an_expired_record_is_neither_used_nor_revived(
        self, make_memory: Any, clock: ManualClock
    ) -> None:
        memory = make_memory(settings=Settings(agent_aggregate_days=10, agent_pattern_days=10))
        for _ in range(3):
            _run(memory, 1, success=False)
        memory.record_decomposition("Plan the offsite", ["pick a date"])
        clock.advance(days=11)
        choice = memory.choose_strategy(["react", "plan"], epsilon=0, seed=1)
        assert (choice.strategy, choice.reason) == ("react", "untried")
        _run(memory, 1, duration_ms=500.0)
        (stats,) = memory.strategy_stats(kind="*")
        assert (stats.runs, stats.successes, stats.duration_ms.mean) == (1, 1, 500.0)
        assert memory.record_decomposition("Plan the offsite", ["pick a date"]).runs == 1

    # -- retention and erasure ----------------------------------------------------------------

    def test_executions_patterns_and_aggregates_expire_on_their_own_clocks(
        self, make_memory: Any, clock: ManualClock
    ) -> None:
        memory = make_memory(settings=Settings(agent_execution_days=30, agent_pattern_days=90))
        _run(memory, 1)
        memory.record_decomposition("Plan the offsite", ["pick a date", "book a venue"])
        clock.advance(days=31)
        assert memory.executions() == [] and memory.strategy_stats() != []
        assert memory.suggest_decomposition("Plan the offsite") != []
        clock.advance(days=60)
        assert memory.suggest_decomposition("Plan the offsite") == []
        clock.advance(days=300)
        assert memory.strategy_stats() == []
        assert memory.purge_expired() == 4  # execution, 2 statistics, decomposition

    def test_erasing_a_user_takes_what_their_requests_produced(self, memory: Any) -> None:
        _run(memory, 1, user_id="alice")
        _run(memory, 2, user_id="bob")
        for n in range(2):
            memory.record_execution(
                workflow_id="w",
                agent_id="a",
                input=f"Audit Alice's payroll secrets, part {n}",
                success=False,
                error_class="Boom",
                user_id="alice",
            )
        memory.record_decomposition("Plan Alice's trip", ["flights", "hotel"], user_id="alice")
        (learned,) = [p for p in memory.failure_patterns() if p.learned]
        assert "payrol" in learned.terms
        receipt = memory.erase(user="alice")
        assert receipt.counts == {"decomposition": 1, "execution": 3, "work_style": 1}
        (learned,) = [p for p in memory.failure_patterns() if p.learned]
        assert learned.occurrences == 2 and learned.terms == {}  # counts only: no word of hers
        assert [e.user_id for e in memory.executions()] == ["bob"]
        assert memory.suggest_decomposition("Plan Alice's trip") == []
        assert sum(s.runs for s in memory.strategy_stats() if s.kind == "*") == 2
