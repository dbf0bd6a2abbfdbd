"""Team compositions on every backend: runs fold exactly (concurrent ones too), a composition
is its members in any order, and the suggestion ranks, explores and explains. Mixed into
:class:`~memvault.testing.conformance.MemoryConformance`, whose fixtures it uses."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from ..errors import ValidationError

THREADS = 8
EACH = 10
SOLO = [{"role": "writer", "agent_id": "w-1"}]
PAIR = [
    {"role": "researcher", "agent_id": "r-1", "model": "small"},
    {"role": "writer", "agent_id": "w-1"},
]
TRIO = [*PAIR, {"role": "critic", "agent_id": "c-1", "model": "large"}]


def _runs(memory: Any, team: list[dict[str, Any]], kind: str, outcomes: str, ms: float) -> None:
    """Record a run of ``team`` per character of ``outcomes`` (``y`` succeeded)."""
    for n, outcome in enumerate(outcomes):
        memory.record_team(
            kind=kind,
            agents=team,
            success=outcome == "y",
            tokens=1000 * len(team),
            duration_ms=ms,
            cost=0.01,
            workflow_id=f"wf-{n}",
        )


class TeamConformance:
    """Team compositions, kept in the store."""

    def test_a_team_run_folds_into_its_kind_and_overall(self, memory: Any) -> None:
        first = memory.record_team(
            kind="report", agents=PAIR, success=True, tokens=900, duration_ms=2000.0, cost=0.5
        )
        assert (first.kind, first.runs, first.successes) == ("report", 1, 1)
        reordered = list(reversed(PAIR))  # the same team in another order
        memory.record_team(kind="report", agents=reordered, success=False, tokens=100)
        rows = memory.team_stats()
        assert [(r.kind, r.runs, r.successes) for r in rows] == [("*", 2, 1), ("report", 2, 1)]
        report = rows[1]
        assert report.tokens.mean == 500 and report.cost == pytest.approx(0.5)
        assert [m.role for m in report.team.members] == ["researcher", "writer"]
        assert memory.team_stats(kind="report") == [report]

    def test_an_execution_may_fold_its_team_in_its_transaction(self, memory: Any) -> None:
        memory.record_execution(
            workflow_id="wf-9",
            agent_id="lead",
            input="Draft the launch announcement",
            success=True,
            kind="writing",
            tokens_in=300,
            tokens_out=200,
            duration_ms=1500.0,
            team=TRIO,
        )
        (writing,) = memory.team_stats(kind="writing")
        assert (writing.runs, writing.tokens.total, writing.last_workflow_id) == (1, 500, "wf-9")
        assert len(writing.team.members) == 3

    def test_concurrent_team_runs_lose_no_update(self, make_memory: Any) -> None:
        memory = make_memory()

        def one(where: Any, thread: int, n: int) -> Any:
            team = PAIR if thread % 2 else list(reversed(PAIR))
            return where.record_team(kind="report", agents=team, success=n % 2 == 0, tokens=1)

        if hasattr(memory, "_runner"):  # the async driver: as many tasks at once
            inner = memory._memory

            async def together() -> None:
                await asyncio.gather(
                    *(
                        inner.record_team(kind="report", agents=PAIR, success=n % 2 == 0, tokens=1)
                        for _ in range(THREADS)
                        for n in range(EACH)
                    )
                )

            memory._runner.run(together())
        else:
            barrier = threading.Barrier(THREADS)
            errors: list[BaseException] = []
            memories = [make_memory() for _ in range(THREADS)]

            def worker(thread: int) -> None:
                try:
                    barrier.wait(timeout=30)
                    for n in range(EACH):
                        one(memories[thread], thread, n)
                except BaseException as exc:
                    errors.append(exc)

            threads = [threading.Thread(target=worker, args=(t,)) for t in range(THREADS)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert errors == []
        for row in memory.team_stats():
            assert (row.runs, row.successes, row.tokens.count) == (
                THREADS * EACH,
                THREADS * EACH // 2,
                THREADS * EACH,
            )

    def test_the_suggestion_ranks_what_worked_on_the_kind(self, memory: Any) -> None:
        _runs(memory, SOLO, "report", "ynnyn", 1000.0)
        _runs(memory, PAIR, "report", "yyyyn", 3000.0)
        _runs(memory, TRIO, "report", "nnnnn", 5000.0)  # never worked: not suggested
        _runs(memory, TRIO, "code", "yyyyy", 5000.0)
        best = memory.suggest_team(kind="report", prefer="accuracy")
        assert best.reason == "exploit" and best.kind == "report"
        assert [len(r.stats.team.members) for r in best.ranked] == [2, 1]
        assert len(best.team.members) == 2 and "accuracy" in best.explanation
        assert best.ranked[0].utility > best.ranked[1].utility
        assert "4/5 succeeded" in str(best)
        code = memory.suggest_team(kind="code")
        assert len(code.team.members) == 3
        unknown = memory.suggest_team(kind="legal")  # none ran on it: those that worked anywhere
        assert unknown.overall and unknown.team is not None
        empty = memory.suggest_team(kind="report", scope="workspace:elsewhere")
        assert (empty.team, empty.reason, empty.ranked) == (None, "none", ())
        assert "none to suggest" in empty.explanation

    def test_candidates_are_tried_then_the_best_taken(self, memory: Any) -> None:
        offered = [SOLO, PAIR]
        first = memory.suggest_team(kind="report", candidates=offered)
        assert (len(first.team.members), first.reason) == (1, "untried")
        _runs(memory, SOLO, "report", "nnnnn", 1000.0)
        second = memory.suggest_team(kind="report", candidates=offered)
        assert (len(second.team.members), second.reason) == (2, "untried")
        _runs(memory, PAIR, "report", "yyyyy", 3000.0)
        third = memory.suggest_team(kind="report", candidates=offered, prefer="accuracy")
        assert (len(third.team.members), third.reason) == (2, "exploit")
        drawn = [
            memory.suggest_team(kind="report", candidates=offered, epsilon=1.0, seed=s)
            for s in range(12)
        ]
        assert {d.reason for d in drawn} == {"explore"}
        assert {len(d.team.members) for d in drawn} == {1, 2}
        assert all(d.explanation.startswith(str(d.team)) for d in drawn)
        again = [
            memory.suggest_team(kind="report", candidates=offered, epsilon=1.0, seed=s)
            for s in range(12)
        ]
        assert [d.team for d in again] == [d.team for d in drawn]

    def test_the_kind_of_similar_requests_is_used_for_a_query(self, memory: Any) -> None:
        for n in range(3):
            memory.record_execution(
                workflow_id=f"wf-{n}",
                agent_id="lead",
                input=f"Review the pull request number {n} for security problems",
                success=True,
                kind="code_review",
                team=TRIO,
            )
        found = memory.suggest_team(query="Review the pull request number 7 for security problems")
        assert found.kind == "code_review" and len(found.team.members) == 3

    def test_bad_teams_are_refused_and_nothing_is_kept(self, memory: Any) -> None:
        bad: list[dict[str, Any]] = [
            {"agents": []},
            {"agents": [{"role": "writer"}]},
            {"agents": [{"role": "writer", "agent_id": "w", "extra": 1}]},
            {"agents": "writer"},
            {"agents": [{"role": "", "agent_id": "w"}]},
            {"agents": [{"role": "writer\n", "agent_id": "w"}]},
            {"agents": SOLO, "tokens": -1},
            {"agents": SOLO, "kind": ""},
            {"agents": SOLO, "success": "yes"},
        ]
        for fields in bad:
            with pytest.raises(ValidationError):
                memory.record_team(**{"kind": "report", "success": True, **fields})
        assert memory.team_stats() == []
        wrongs: list[dict[str, Any]] = [{"candidates": []}, {"candidates": [[]]}, {"prefer": "x"}]
        for wrong in wrongs:
            with pytest.raises(ValidationError):
                memory.suggest_team(kind="report", **wrong)
