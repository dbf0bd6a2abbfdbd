"""Random operation sequences across tenants and scopes, checked against a plain model."""

from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from memvault import Memory, MemoryEntry, NewEntry, Scope
from memvault.store.inmemory import InMemoryBackend
from memvault.store.sqlite import SQLiteBackend
from memvault.testing import ManualClock

TENANTS = ["t1", "t2"]
SCOPES = [
    Scope.user("u1"),
    Scope.user("u2"),
    Scope.session("s1"),
    Scope.org("o"),
    Scope.object("doc", "d1"),
]
TAGS = ["a", "b", "c"]

tenants = st.sampled_from(TENANTS)
scopes = st.sampled_from(SCOPES)
tag_sets = st.lists(st.sampled_from(TAGS), max_size=3, unique=True)


def make_machine(make_backend: Any) -> type[RuleBasedStateMachine]:
    class StoreMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.clock = ManualClock()
            root = Memory(make_backend(), clock=self.clock)
            self.memories = {tenant: root.with_tenant(tenant) for tenant in TENANTS}
            self.root = root
            self.model: dict[tuple[str, str], MemoryEntry] = {}

        def live(self) -> list[tuple[str, MemoryEntry]]:
            now = self.clock()
            return [(t, e) for (t, _), e in self.model.items() if not e.is_expired(now)]

        @rule(tenant=tenants, scope=scopes, tags=tag_sets, ttl=st.none() | st.integers(1, 5))
        def write(self, tenant: str, scope: Scope, tags: list[str], ttl: int | None) -> None:
            entry = self.memories[tenant].write("x", scope=scope, tags=tags, ttl=ttl)
            self.model[(tenant, entry.id)] = entry

        @rule(tenant=tenants, scope=scopes, n=st.integers(1, 4))
        def write_many(self, tenant: str, scope: Scope, n: int) -> None:
            entries = (
                self.memories[tenant]
                .write_many([NewEntry(f"m{i}", scope) for i in range(n)])
                .entries
            )
            self.model.update({(tenant, e.id): e for e in entries})

        @precondition(lambda self: self.model)
        @rule(data=st.data(), tenant=tenants)
        def delete(self, data: st.DataObject, tenant: str) -> None:
            owner, entry_id = data.draw(st.sampled_from(sorted(self.model)))
            deleted = self.memories[tenant].delete(entry_id)
            assert deleted == (owner == tenant)
            if deleted:
                del self.model[(owner, entry_id)]

        @rule(tenant=tenants, scope=scopes)
        def delete_by_scope(self, tenant: str, scope: Scope) -> None:
            doomed = [k for k, e in self.model.items() if k[0] == tenant and e.scope == scope]
            assert self.memories[tenant].delete_by_scope(scope) == len(doomed)
            for key in doomed:
                del self.model[key]

        @rule(seconds=st.integers(0, 3))
        def tick(self, seconds: int) -> None:
            self.clock.advance(timedelta(seconds=seconds))

        @rule(
            tenant=tenants,
            scope=scopes,
            tags=tag_sets,
            limit=st.integers(1, 8),
            order=st.sampled_from(["newest", "oldest"]),
        )
        def retrieve(
            self, tenant: str, scope: Scope, tags: list[str], limit: int, order: Any
        ) -> None:
            found = self.memories[tenant].retrieve(scope, tags=tags, limit=limit, order=order)
            for entry in found:
                assert (tenant, entry.id) in self.model, "entry from another tenant or deleted"
                assert entry.scope == scope, "entry from another scope"
                assert set(tags) <= set(entry.tags)
            expected = sorted(
                (
                    e
                    for t, e in self.live()
                    if t == tenant and e.scope == scope and set(tags) <= set(e.tags)
                ),
                key=lambda e: (e.created_at, e.id),
                reverse=order == "newest",
            )[:limit]
            assert [e.id for e in found] == [e.id for e in expected]

        @invariant()
        def counts_match(self) -> None:
            for tenant in TENANTS:
                expected = sum(1 for t, _ in self.live() if t == tenant)
                assert self.memories[tenant].count() == expected

        def teardown(self) -> None:
            self.root.backend.close()

    return StoreMachine


FAST = settings(
    max_examples=40,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@pytest.mark.parametrize(
    "make_backend",
    [InMemoryBackend, lambda: SQLiteBackend(":memory:")],
    ids=["memory", "sqlite"],
)
def test_operations_never_leak_across_scopes_or_tenants(make_backend: Any) -> None:
    machine = make_machine(make_backend)
    machine.TestCase.settings = FAST
    machine.TestCase().runTest()
