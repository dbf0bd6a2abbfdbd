"""Choosing a strategy: epsilon-greedy over the candidates' statistics (pure).

Each candidate's *utility* is its success rate, smoothed (``(successes + 1) / (runs + 2)``, so
one lucky run does not beat a long record), times how it compares with the best of the
candidates on what the caller prefers: ``accuracy`` (success alone), ``speed`` (the fastest mean
duration over its own), ``balanced`` (the square roots of both the duration and the token ratios).
A candidate never run is tried first; otherwise, with probability ``epsilon`` a candidate is
drawn at random (exploration), else the one of highest utility is taken (exploitation).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from ..errors import ValidationError
from .stats import ANY_KIND, StrategyStats, Tally

PREFERENCES = ("balanced", "speed", "accuracy")
Prefer = Literal["balanced", "speed", "accuracy"]
Reason = Literal["untried", "explore", "exploit"]
T = TypeVar("T", bound=Tally)


def smoothed_success(stats: Tally) -> float:
    """Laplace's rule of succession: (successes + 1) / (runs + 2)."""
    return (stats.successes + 1) / (stats.runs + 2)


def utilities(tried: Mapping[str, Tally], prefer: Prefer) -> dict[str, float]:
    """The utility of each tried candidate, for ``prefer``."""
    duration = {name: (s.duration_ms.mean or 0.0) + 1.0 for name, s in tried.items()}
    tokens = {name: (s.tokens.mean or 0.0) + 1.0 for name, s in tried.items()}
    fastest, leanest = min(duration.values(), default=1.0), min(tokens.values(), default=1.0)
    found = {}
    for name, stats in tried.items():
        speed, thrift = fastest / duration[name], leanest / tokens[name]
        factor = {"accuracy": 1.0, "speed": speed, "balanced": math.sqrt(speed * thrift)}[prefer]
        found[name] = smoothed_success(stats) * factor
    return found


@dataclass(frozen=True, slots=True)
class StrategyChoice:
    """The strategy to run, and why: ``untried`` (never run for this kind of request),
    ``explore`` (drawn at random, with probability ``epsilon``) or ``exploit`` (the highest
    utility); ``utilities`` of the tried candidates and the ``stats`` they came from."""

    strategy: str
    reason: Reason
    prefer: Prefer
    epsilon: float
    kind: str = ANY_KIND
    utilities: Mapping[str, float] = field(default_factory=dict)
    stats: Mapping[str, StrategyStats] = field(default_factory=dict)

    @property
    def explanation(self) -> str:
        """One sentence on why this strategy was chosen."""
        if self.reason == "untried":
            return f"{self.strategy}: never run on {self._kind_text}; tried before the others"
        mine = self.stats[self.strategy]
        overall = " over every kind (too few runs on these)" if mine.kind != self.kind else ""
        record = (
            f"{mine.successes}/{mine.runs} succeeded{overall}, mean "
            f"{mine.duration_ms.mean or 0:.0f} ms and {mine.tokens.mean or 0:.0f} tokens"
        )
        if self.reason == "explore":
            return (
                f"{self.strategy}: drawn at random to keep learning (epsilon {self.epsilon:g}); "
                f"{record}"
            )
        ranked = sorted(self.utilities.items(), key=lambda item: -item[1])
        others = ", ".join(f"{name} {value:.3f}" for name, value in ranked if name != self.strategy)
        return (
            f"{self.strategy}: best {self.prefer} utility on {self._kind_text} "
            f"({self.utilities[self.strategy]:.3f}; {others or 'no other candidate'}); {record}"
        )

    @property
    def _kind_text(self) -> str:
        return "any request" if self.kind == ANY_KIND else f"{self.kind!r} requests"

    def __str__(self) -> str:
        return self.explanation

    def to_dict(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy,
            "reason": self.reason,
            "prefer": self.prefer,
            "epsilon": self.epsilon,
            "kind": self.kind,
            "explanation": self.explanation,
            "utilities": dict(self.utilities),
            "stats": {name: stats.to_dict() for name, stats in self.stats.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StrategyChoice:
        return cls(
            data["strategy"],
            data["reason"],
            data["prefer"],
            float(data["epsilon"]),
            data["kind"],
            {str(k): float(v) for k, v in data["utilities"].items()},
            {str(k): StrategyStats.from_dict(v) for k, v in data["stats"].items()},
        )


@dataclass(frozen=True, slots=True)
class Pick(Generic[T]):
    """What :func:`pick` chose among named candidates, why, and from what."""

    name: str
    reason: Reason
    utilities: dict[str, float]
    tried: dict[str, T]


def pick(
    candidates: Sequence[str],
    stats: Mapping[str, T],
    epsilon: float,
    rng: random.Random,
    prefer: Prefer,
) -> Pick[T]:
    """Epsilon-greedy among ``candidates`` given their ``stats`` (a candidate without any, or
    with no runs, is untried: the first of them is taken)."""
    tried = {name: stats[name] for name in candidates if name in stats and stats[name].runs}
    scores = utilities(tried, prefer)
    untried = [name for name in candidates if name not in tried]
    if untried:
        return Pick(untried[0], "untried", scores, tried)
    if rng.random() < epsilon:
        return Pick(rng.choice(candidates), "explore", scores, tried)
    best = max(candidates, key=lambda name: scores[name])  # the first of equals
    return Pick(best, "exploit", scores, tried)


def choose(
    candidates: Sequence[str],
    stats: Mapping[str, StrategyStats],
    *,
    epsilon: float,
    prefer: Prefer,
    rng: random.Random,
    kind: str = ANY_KIND,
) -> StrategyChoice:
    """Pick one of ``candidates`` given their ``stats``, explained."""
    if not candidates:
        raise ValidationError("choose_strategy needs at least one candidate")
    chosen = pick(candidates, stats, epsilon, rng, prefer)
    return StrategyChoice(
        chosen.name, chosen.reason, prefer, epsilon, kind, chosen.utilities, chosen.tried
    )
