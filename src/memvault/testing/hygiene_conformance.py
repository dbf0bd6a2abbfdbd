"""The hygiene report on every backend and driver: a labelled store — a restatement merged,
the same fact in other words, junk, secrets and PII, a stale entry, a superseded and an expired
one — where every class is counted right, no content is shown, and the safe fix removes only
what expired. Mixed into :class:`~memvault.testing.conformance.MemoryConformance`, whose
fixtures it uses."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from ..config import Settings
from ..errors import ValidationError
from . import ManualClock

TOKEN = "ghp_" + "Zq8rT2vLx9KmP4wN7bY3cJ6hF1dS5gA0eU2i"
PHONE = "+44 20 7946 0958"
SCOPE = "workspace:h"
OTHER = "user:h2"


@dataclass
class Labelled:
    """The labelled store's ids, by what each is."""

    stale: str
    used: str
    fact: str
    reworded: str
    junk: tuple[str, ...]
    secrets: tuple[str, ...]
    superseded: str
    successor: str
    expired: str
    other: str


def labelled(memory: Any, clock: ManualClock) -> Labelled:
    """Write the labelled store: ``SCOPE`` holds one of each class, ``OTHER`` one clean entry."""

    def write(content: str, **options: Any) -> str:
        return str(memory.write(content, scope=SCOPE, **options).id)

    stale = write("The staging database lives in Frankfurt")
    used = write("Invoices are sent on the first Monday of the month")
    clock.advance(days=100)
    assert memory.reinforce([used]) == 1
    fact = write("Every morning Grace drinks a cup of green tea before work")
    assert write("Grace drinks a cup of green tea every morning before work") == fact  # merged
    reworded = write("Grace drinks a cup of green tea every single morning before work")
    junk = (
        write("ok"),
        write("Thanks!"),
        write("Traceback (most recent call last):\n  File \"x.py\", line 1\nKeyError: 'a'"),
    )
    secrets = (
        write(f"The deploy token is {TOKEN}"),
        write(f"Call Bob on {PHONE} about the lease"),
    )
    superseded = write("Alice works in Paris")
    successor = str(memory.supersede(superseded, "Alice works in Berlin").id)
    expired = write("Fire drill at three this afternoon", ttl=60)
    clock.advance(minutes=5)
    other = str(memory.write("Bob prefers window seats", scope=OTHER).id)
    return Labelled(
        stale, used, fact, reworded, junk, secrets, superseded, successor, expired, other
    )


class HygieneConformance:
    """``hygiene`` and ``tidy``."""

    @pytest.fixture
    def kept(self, make_memory: Any) -> Any:
        """A memory that keeps error outputs (the write filter would refuse them)."""
        return make_memory(settings=Settings(skip_error_responses=False))

    def test_every_class_of_a_labelled_store_is_counted_right(
        self, kept: Any, clock: ManualClock
    ) -> None:
        ids = labelled(kept, clock)
        report = kept.hygiene()
        assert [s.scope for s in report.scopes] == [OTHER, SCOPE]
        other, scope = report.scopes
        assert (scope.entries, scope.merged) == (12, 1)
        assert scope.near_duplicates.count == 1
        assert scope.groups == (tuple(sorted([ids.fact, ids.reworded])),)
        assert scope.near_duplicates.ids[0] in {ids.fact, ids.reworded}
        assert set(scope.junk.ids) == set(ids.junk) and scope.junk.count == 3
        assert scope.stale.ids == (ids.stale,)
        assert set(scope.secrets.ids) == set(ids.secrets) and scope.secrets.count == 2
        assert scope.superseded.ids == (ids.superseded,)
        assert scope.expired.ids == (ids.expired,)
        assert scope.largest[0] == (ids.junk[2], 70)
        assert len(scope.largest) == 5
        assert other.entries == 1
        assert sum(getattr(other, name).count for name in ("junk", "stale", "secrets")) == 0
        shown = json.dumps(report.to_dict())
        assert TOKEN not in shown and "7946" not in shown and "Grace" not in shown

    def test_a_scope_and_a_longer_staleness(self, kept: Any, clock: ManualClock) -> None:
        ids = labelled(kept, clock)
        report = kept.hygiene(OTHER)
        assert [(s.scope, s.entries) for s in report.scopes] == [(OTHER, 1)]
        assert kept.hygiene(SCOPE, stale_days=200).scopes[0].stale.count == 0
        assert kept.hygiene(SCOPE, stale_days=1).scopes[0].stale.ids == (ids.stale,)  # used
        clock.advance(days=2)
        stale = kept.hygiene(OTHER, stale_days=1).scopes[0].stale
        assert stale.ids == (ids.other,)
        for wrong in (0, -1, True, 1.5, 100_000):
            with pytest.raises(ValidationError):
                kept.hygiene(stale_days=wrong)

    def test_tidy_removes_what_expired_and_nothing_else(
        self, kept: Any, clock: ManualClock
    ) -> None:
        ids = labelled(kept, clock)
        done = kept.tidy()
        assert (done.expired, done.expired_ids, done.removed) == (1, (ids.expired,), 1)
        assert done.retention is not None and done.retention.items == ()
        after = kept.hygiene(SCOPE).scopes[0]
        assert (after.entries, after.expired.count, after.junk.count) == (11, 0, 3)
        assert kept.tidy().removed == 0
