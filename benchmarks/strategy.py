"""Agent memory in a simulated orchestrator loop: does epsilon-greedy strategy choice converge on
the best strategy, and does decomposition reuse find near-duplicate requests without reusing a
plan for an unrelated one?

Run by hand: ``python benchmarks/strategy.py [--requests 2000] [--seeds 3] [--json OUT]``.

1. **Strategy choice.** Three synthetic strategies with known success rates and costs
   (:data:`STRATEGIES`). For each preference (``accuracy``, ``speed``, ``balanced``) and seed, a
   fresh SQLite store answers ``--requests`` requests: ``choose_strategy`` picks (epsilon 0.1),
   the outcome is drawn from the chosen strategy's true rates, and ``record_execution`` stores
   it (so the store's statistics feed the next choice). Reported: the share of requests given
   the oracle's strategy (the best true expected utility for the preference, with the same
   formula the choice uses, without smoothing), the cumulative regret (the sum of the oracle's
   expected utility minus the chosen one's), and in the same run the regret of a uniformly
   random choice.
2. **Decomposition reuse.** ``data/decompositions.jsonl``: 30 requests with their subtasks, two
   near-duplicates of each (rewordings: should reuse), 60 requests unrelated to all of them
   (other domains: must not reuse), and for each one related but different request (the same
   kind of work on another object, or another action on the same object: reported, no target).
   Each base is recorded with ``record_decomposition``; then ``suggest_decomposition``
   (similarity >= 0.8, the packaged model) is asked for every other request. Reported: hits
   on near-duplicates (the base's subtasks suggested first), reuse on unrelated and on
   different requests.
3. **Team suggestion.** Four synthetic team compositions (:data:`TEAMS`) whose true success
   rates and costs differ per kind of request, the best a different team on each of three
   kinds. For each preference and seed, a fresh store answers ``--requests`` requests of a
   random kind: ``suggest_team`` picks among the four (epsilon 0.1), the outcome is drawn from
   the team's true rates on that kind, and ``record_team`` stores it. Reported as for
   strategies: the share of the last 500 requests given the kind's oracle team, and the regret
   against a uniformly random choice in the same run.
4. **Work-style inference.** ``data/work_style_dev.jsonl`` and ``work_style_blind.jsonl``
   (90 users each, written for it by someone who had not seen the code; the blind one was
   never used to tune): each user's messages go through ``add_turn`` in a session of theirs
   and their runs through ``record_execution(user_id=…)``; ``user_preferences`` is compared
   with the labels. Reported: accuracy of expertise and of leaning, and their confusion.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conditions import load_average, machine

from memvault import Memory
from memvault.agents.choice import Prefer

DATA = Path(__file__).parent / "data" / "decompositions.jsonl"


@dataclass(frozen=True)
class Strategy:
    name: str
    success: float
    duration_ms: float
    tokens: int


STRATEGIES = (
    Strategy("react", 0.72, 1_500.0, 1_800),
    Strategy("plan_and_execute", 0.86, 4_000.0, 4_500),
    Strategy("reflexion", 0.93, 9_000.0, 9_000),
)
PREFERENCES: tuple[Prefer, ...] = ("accuracy", "speed", "balanced")


def true_utility(strategy: Strategy, prefer: Prefer) -> float:
    """The utility the choice estimates, from the true rates."""
    fastest = min(s.duration_ms for s in STRATEGIES) + 1.0
    leanest = min(s.tokens for s in STRATEGIES) + 1.0
    speed = fastest / (strategy.duration_ms + 1.0)
    thrift = leanest / (strategy.tokens + 1.0)
    factor = {"accuracy": 1.0, "speed": speed, "balanced": (speed * thrift) ** 0.5}[prefer]
    return strategy.success * factor


def simulate(prefer: Prefer, seed: int, requests: int, folder: Path) -> dict[str, Any]:
    """One run of the loop on a fresh store."""
    rng = random.Random(seed)
    by_name = {s.name: s for s in STRATEGIES}
    value = {s.name: true_utility(s, prefer) for s in STRATEGIES}
    oracle = max(value, key=value.__getitem__)
    chosen: list[str] = []
    started = time.perf_counter()
    with Memory(f"sqlite:///{folder}/{prefer}-{seed}.db") as memory:
        for n in range(requests):
            choice = memory.choose_strategy(
                list(by_name), kind="report", prefer=prefer, epsilon=0.1, seed=rng.getrandbits(32)
            )
            strategy = by_name[choice.strategy]
            memory.record_execution(
                workflow_id=f"wf-{n}",
                agent_id="orchestrator",
                input=f"request {n}: write the weekly report",
                success=rng.random() < strategy.success,
                strategy=strategy.name,
                kind="report",
                tokens_in=max(0, int(rng.gauss(strategy.tokens, strategy.tokens * 0.2))),
                duration_ms=max(1.0, rng.gauss(strategy.duration_ms, strategy.duration_ms * 0.25)),
            )
            chosen.append(strategy.name)
    elapsed = time.perf_counter() - started
    regret = sum(value[oracle] - value[name] for name in chosen)
    random_regret = requests * (value[oracle] - statistics.mean(value.values()))
    last = chosen[-500:]
    return {
        "prefer": prefer,
        "seed": seed,
        "oracle": oracle,
        "oracle_share": round(chosen.count(oracle) / requests, 3),
        "oracle_share_last_500": round(last.count(oracle) / len(last), 3),
        "regret": round(regret, 2),
        "random_regret": round(random_regret, 2),
        "regret_vs_random": round(regret / random_regret, 3),
        "ms_per_request": round(elapsed / requests * 1000, 2),
    }


@dataclass(frozen=True)
class Crew:
    name: str
    members: tuple[tuple[str, str], ...]
    quality: dict[str, tuple[float, float, int]]  # kind: (success, duration_ms, tokens)

    @property
    def agents(self) -> list[dict[str, str]]:
        return [{"role": role, "agent_id": agent} for role, agent in self.members]


TEAMS = (
    Crew("solo", (("writer", "w-1"),),
         {"report": (0.70, 2_000.0, 2_000), "code": (0.40, 2_000.0, 2_000),
          "research": (0.55, 3_000.0, 3_000)}),
    Crew("pair", (("researcher", "r-1"), ("writer", "w-1")),
         {"report": (0.90, 5_000.0, 5_000), "code": (0.55, 5_000.0, 5_000),
          "research": (0.80, 6_000.0, 6_000)}),
    Crew("review", (("coder", "c-1"), ("reviewer", "v-1")),
         {"report": (0.60, 6_000.0, 6_000), "code": (0.92, 6_000.0, 6_000),
          "research": (0.50, 6_000.0, 6_000)}),
    Crew("panel", (("researcher", "r-1"), ("critic", "k-1"), ("writer", "w-1")),
         {"report": (0.88, 12_000.0, 12_000), "code": (0.60, 12_000.0, 12_000),
          "research": (0.93, 12_000.0, 12_000)}),
)  # fmt: skip
KINDS = ("report", "code", "research")


def team_utility(crew: Crew, kind: str, prefer: Prefer) -> float:
    """The utility the suggestion estimates, from the true rates on ``kind``."""
    fastest = min(c.quality[kind][1] for c in TEAMS) + 1.0
    leanest = min(c.quality[kind][2] for c in TEAMS) + 1.0
    success, duration, tokens = crew.quality[kind]
    speed, thrift = fastest / (duration + 1.0), leanest / (tokens + 1.0)
    factor = {"accuracy": 1.0, "speed": speed, "balanced": (speed * thrift) ** 0.5}[prefer]
    return float(success * factor)


def simulate_teams(prefer: Prefer, seed: int, requests: int, folder: Path) -> dict[str, Any]:
    """One run of the team loop on a fresh store."""
    rng = random.Random(seed)
    by_key = {tuple(sorted(c.members)): c for c in TEAMS}
    value = {(c.name, k): team_utility(c, k, prefer) for c in TEAMS for k in KINDS}
    oracle = {k: max((value[(c.name, k)], c.name) for c in TEAMS)[1] for k in KINDS}
    picks: list[tuple[str, str]] = []
    started = time.perf_counter()
    with Memory(f"sqlite:///{folder}/teams-{prefer}-{seed}.db") as memory:
        for n in range(requests):
            kind = rng.choice(KINDS)
            found = memory.suggest_team(
                kind=kind,
                candidates=[c.agents for c in TEAMS],
                prefer=prefer,
                epsilon=0.1,
                seed=rng.getrandbits(32),
            )
            assert found.team is not None
            crew = by_key[tuple(sorted((m.role, m.agent_id) for m in found.team.members))]
            success, duration, tokens = crew.quality[kind]
            memory.record_team(
                kind=kind,
                agents=crew.agents,
                success=rng.random() < success,
                tokens=max(0, int(rng.gauss(tokens, tokens * 0.2))),
                duration_ms=max(1.0, rng.gauss(duration, duration * 0.25)),
                workflow_id=f"wf-{n}",
            )
            picks.append((crew.name, kind))
    elapsed = time.perf_counter() - started
    regret = sum(value[(oracle[k], k)] - value[(name, k)] for name, k in picks)
    random_regret = sum(
        value[(oracle[k], k)] - statistics.mean(value[(c.name, k)] for c in TEAMS) for _, k in picks
    )
    last = picks[-500:]
    return {
        "prefer": prefer,
        "seed": seed,
        "oracle": oracle,
        "oracle_share": round(sum(name == oracle[k] for name, k in picks) / requests, 3),
        "oracle_share_last_500": round(sum(name == oracle[k] for name, k in last) / len(last), 3),
        "regret": round(regret, 2),
        "random_regret": round(random_regret, 2),
        "regret_vs_random": round(regret / random_regret, 3),
        "ms_per_request": round(elapsed / requests * 1000, 2),
    }


def work_styles(folder: Path, name: str) -> dict[str, Any]:
    """``user_preferences`` against the labels of one work-style set."""
    rows = [json.loads(line) for line in (DATA.parent / name).read_text().splitlines() if line]
    confusion: dict[str, Counter[str]] = {"expertise": Counter(), "leaning": Counter()}
    with Memory(f"sqlite:///{folder}/{name}.db") as memory:
        for row in rows:
            user = row["id"]
            session = memory.create_session(user).id
            for text in row["turns"]:
                memory.add_turn(session, user=text)
            for n, ran in enumerate(row.get("runs") or ()):
                memory.record_execution(
                    workflow_id=f"{user}-{n}",
                    agent_id="assistant",
                    input=ran["input"],
                    success=ran["success"],
                    user_id=user,
                )
            style = memory.user_preferences(user)
            confusion["expertise"][f"{row['expertise']}->{style.expertise.value}"] += 1
            confusion["leaning"][f"{row['leaning']}->{style.leaning.value}"] += 1
    right = {
        axis: sum(n for pair, n in found.items() if len(set(pair.split("->"))) == 1)
        for axis, found in confusion.items()
    }
    return {
        "set": name,
        "users": len(rows),
        **{f"{axis}_accuracy": round(n / len(rows), 3) for axis, n in right.items()},
        "confusion": {axis: dict(sorted(found.items())) for axis, found in confusion.items()},
    }


def reuse(folder: Path) -> dict[str, Any]:
    """Decomposition reuse on the labelled set."""
    rows = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    with Memory(f"sqlite:///{folder}/decompositions.db") as memory:
        for row in rows:
            memory.record_decomposition(row["query"], row["subtasks"])
        hits = misses = 0
        missed: list[str] = []
        for row in rows:
            for text in row["near"]:
                found = memory.suggest_decomposition(text, limit=1)
                if found and list(found[0].subtasks) == row["subtasks"]:
                    hits += 1
                else:
                    misses += 1
                    missed.append(text)
        unrelated = [t for row in rows for t in row["unrelated"]]
        false_unrelated = [t for t in unrelated if memory.suggest_decomposition(t)]
        different = [t for row in rows for t in row["different"]]
        reused_different = [t for t in different if memory.suggest_decomposition(t)]
    return {
        "near_duplicates": hits + misses,
        "near_duplicate_hits": hits,
        "hit_rate": round(hits / (hits + misses), 3),
        "missed": missed,
        "unrelated": len(unrelated),
        "unrelated_reused": len(false_unrelated),
        "unrelated_reused_texts": false_unrelated,
        "different": len(different),
        "different_reused": len(reused_different),
        "different_reused_texts": reused_different,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2_000)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    result: dict[str, Any] = {"machine": machine(), "load_before": load_average()}
    with tempfile.TemporaryDirectory() as folder:
        runs = [
            simulate(prefer, seed, args.requests, Path(folder))
            for prefer in PREFERENCES
            for seed in range(args.seeds)
        ]
        for run in runs:
            print(json.dumps(run))
        result["choice"] = runs
        result["reuse"] = reuse(Path(folder))
        print(json.dumps(result["reuse"]))
        teams = [
            simulate_teams(prefer, seed, args.requests, Path(folder))
            for prefer in PREFERENCES
            for seed in range(args.seeds)
        ]
        for run in teams:
            print(json.dumps(run))
        result["teams"] = teams
        result["work_style"] = [
            work_styles(Path(folder), name)
            for name in ("work_style_dev.jsonl", "work_style_blind.jsonl")
        ]
        for found in result["work_style"]:
            print(json.dumps(found))
    result["load_after"] = load_average()
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
