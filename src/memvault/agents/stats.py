"""Running statistics of a strategy: runs, successes, and the distributions of its tokens and
durations, folded one execution at a time (pure).

A distribution keeps a count, a sum, a maximum and a sparse histogram over logarithmic buckets
(each 5 % wider than the last; zero has its own), so its mean is exact and its 95th percentile
at most 5 % above the true one whatever the values and the number of runs, in a few hundred
integers at most.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Self

from ..errors import ValidationError

RATIO = 1.05
"""Each histogram bucket is this many times wider than the one below it."""
ANY_KIND = "*"
"""The kind of the statistics over every kind of request."""


ZERO = -(2**31)
"""The bucket of zero (and of nothing less: values are never negative)."""


def bucket(value: float) -> int:
    """The histogram bucket of a value: :data:`ZERO` for zero, else the ``b`` with
    ``RATIO**(b-1) < value <= RATIO**b``."""
    if value <= 0:
        return ZERO
    index = math.ceil(math.log(value) / math.log(RATIO))
    return index if RATIO ** (index - 1) < value else index - 1


def upper_bound(index: int) -> float:
    """The largest value bucket ``index`` holds."""
    return 0.0 if index == ZERO else float(RATIO**index)


@dataclass(frozen=True, slots=True)
class Distribution:
    """Count, sum, maximum and log-bucket histogram of non-negative values."""

    count: int = 0
    total: float = 0.0
    maximum: float = 0.0
    buckets: Mapping[int, int] = field(default_factory=dict)

    def adding(self, value: float) -> Distribution:
        """This distribution with ``value`` (finite, >= 0) counted."""
        index = bucket(value)
        buckets = dict(self.buckets)
        buckets[index] = buckets.get(index, 0) + 1
        return Distribution(
            self.count + 1,
            self.total + value,
            max(self.maximum, value),
            dict(sorted(buckets.items())),
        )

    @property
    def mean(self) -> float | None:
        return None if not self.count else self.total / self.count

    def quantile(self, q: float) -> float | None:
        """The ``q`` quantile (0 < q <= 1): the upper bound of the bucket it falls in, never
        above the largest value seen (None when empty)."""
        if not self.count:
            return None
        wanted, seen = math.ceil(q * self.count), 0
        for index, count in sorted(self.buckets.items()):
            seen += count
            if seen >= wanted:
                return min(upper_bound(index), self.maximum)
        return self.maximum

    def to_dict(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "total": self.total,
            "maximum": self.maximum,
            "buckets": {str(k): v for k, v in self.buckets.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Distribution:
        try:
            buckets = {int(k): int(v) for k, v in data["buckets"].items()}
            return cls(int(data["count"]), float(data["total"]), float(data["maximum"]), buckets)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValidationError(f"malformed distribution: {exc}") from exc


@dataclass(frozen=True, slots=True)
class Sample:
    """What one execution adds to its strategy's statistics."""

    success: bool
    tokens: int
    duration_ms: float
    cost: float
    at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class Tally:
    """How something run (a strategy, a team) has done on one kind of request (``kind`` ``*``:
    on every kind): runs, successes, the distributions of tokens and durations, the cost."""

    kind: str = ANY_KIND
    runs: int = 0
    successes: int = 0
    tokens: Distribution = field(default_factory=Distribution)
    duration_ms: Distribution = field(default_factory=Distribution)
    cost: float = 0.0
    last_run: datetime | None = None

    def adding(self, sample: Sample) -> Self:
        """These statistics with one more run."""
        return replace(
            self,
            runs=self.runs + 1,
            successes=self.successes + int(sample.success),
            tokens=self.tokens.adding(sample.tokens),
            duration_ms=self.duration_ms.adding(sample.duration_ms),
            cost=self.cost + sample.cost,
            last_run=sample.at if self.last_run is None else max(self.last_run, sample.at),
        )

    @property
    def success_rate(self) -> float | None:
        return None if not self.runs else self.successes / self.runs

    def tally_dict(self) -> dict[str, Any]:
        """The figures (a row of the tables) and what they are made of."""
        return {
            "kind": self.kind,
            "runs": self.runs,
            "successes": self.successes,
            "success_rate": self.success_rate,
            "mean_tokens": self.tokens.mean,
            "p95_tokens": self.tokens.quantile(0.95),
            "mean_duration_ms": self.duration_ms.mean,
            "p95_duration_ms": self.duration_ms.quantile(0.95),
            "total_cost": self.cost,
            "last_run": None if self.last_run is None else self.last_run.isoformat(),
            "tokens": self.tokens.to_dict(),
            "duration_ms": self.duration_ms.to_dict(),
        }

    @staticmethod
    def tally_fields(data: Mapping[str, Any]) -> dict[str, Any]:
        """The fields of :meth:`tally_dict`'s figures, read back (KeyError, TypeError,
        ValueError: malformed)."""
        last = data.get("last_run")
        return {
            "kind": str(data["kind"]),
            "runs": int(data["runs"]),
            "successes": int(data["successes"]),
            "tokens": Distribution.from_dict(data["tokens"]),
            "duration_ms": Distribution.from_dict(data["duration_ms"]),
            "cost": float(data["total_cost"]),
            "last_run": None if last is None else datetime.fromisoformat(last),
        }


@dataclass(frozen=True, slots=True)
class StrategyStats(Tally):
    """How a strategy has done on one kind of request."""

    strategy: str

    def to_dict(self) -> dict[str, Any]:
        """The summary (the table of ``memvault stats strategies``) and what it is made of;
        also what the statistics' entry stores as its metadata."""
        return {"strategy": self.strategy, **self.tally_dict()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StrategyStats:
        try:
            return cls(str(data["strategy"]), **cls.tally_fields(data))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValidationError(f"malformed strategy statistics: {exc}") from exc
