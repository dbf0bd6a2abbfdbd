"""Random operation sequences across tenants and scopes — writes, deletes, supersessions,
erasures, retention, session bundles exported from one tenant and imported into another —
checked against a plain model: no result ever crosses a tenant or a scope, and an erasure leaves
no erased id in the store."""

from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from memvault import Memory, MemoryEntry, NewEntry, Scope, Settings
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
USERS = ["u1", "u2"]

tenants = st.sampled_from(TENANTS)
scopes = st.sampled_from(SCOPES)
tag_sets = st.lists(st.sampled_from(TAGS), max_size=3, unique=True)


def _due(entry: MemoryEntry, now: Any) -> bool:
    """What the policy ``superseded=0,expired=0`` removes at ``now``."""
    superseded = entry.valid_to is not None and entry.valid_to < now
    return superseded or (entry.expires_at is not None and entry.expires_at <= now)


def make_machine(make_backend: Any) -> type[RuleBasedStateMachine]:
    class StoreMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.clock = ManualClock()
            # the model is what generic reads show: no hidden work styles (their erasure and
            # retention are proven in work_style_conformance.py and the erasure suites)
            policy = Settings(retention="superseded=0,expired=0", work_style=False)
            root = Memory(make_backend(), clock=self.clock, settings=policy)
            self.memories = {tenant: root.with_tenant(tenant) for tenant in TENANTS}
            self.root = root
            self.model: dict[tuple[str, str], MemoryEntry] = {}
            self.sessions: list[tuple[str, str]] = []
            self.texts = iter(range(10**9))

        def live(self) -> list[tuple[str, MemoryEntry]]:
            now = self.clock()
            return [
                (t, e)
                for (t, _), e in self.model.items()
                if not e.is_expired(now) and not e.superseded
            ]

        def refresh(self, tenant: str, scope: Scope) -> None:
            """Read one scope of a tenant back into the model (what a plan changed there)."""
            for key in [k for k, e in self.model.items() if k[0] == tenant and e.scope == scope]:
                del self.model[key]
            every = self.memories[tenant].list(
                scope, include_expired=True, include_superseded=True, limit=1000
            )
            assert every.next_cursor is None
            self.model.update({(tenant, e.id): e for e in every.entries})

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

        @precondition(lambda self: self.plain())
        @rule(data=st.data(), tenant=tenants)
        def delete(self, data: st.DataObject, tenant: str) -> None:
            owner, entry = data.draw(st.sampled_from(self.plain()))
            entry_id = entry.id
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

        def plain(self) -> list[tuple[str, MemoryEntry]]:
            """Live entries written with ``write`` (a session's are its own to change)."""
            return sorted((p for p in self.live() if p[1].category is None), key=lambda p: p[1].id)

        @precondition(lambda self: self.plain())
        @rule(data=st.data())
        def supersede(self, data: st.DataObject) -> None:
            tenant, old = data.draw(st.sampled_from(self.plain()))
            new = self.memories[tenant].supersede(old.id, f"v{next(self.texts)}")
            assert new.scope == old.scope and new.supersedes == (old.id,)
            self.refresh(tenant, old.scope)

        @rule(tenant=tenants, user=st.sampled_from(USERS))
        def create_session(self, tenant: str, user: str) -> None:
            memory = self.memories[tenant]
            session = memory.create_session(user, private=user == "u2")
            memory.append_record(session.id, "user", f"said {next(self.texts)}")
            self.sessions.append((tenant, session.id))
            self.refresh(tenant, Scope.session(session.id))

        @precondition(lambda self: self.sessions)
        @rule(data=st.data(), into=tenants)
        def export_and_import(self, data: st.DataObject, into: str) -> None:
            tenant, session_id = data.draw(st.sampled_from(self.sessions))
            bundle, sent = self.memories[tenant].session_bundle(session_id)
            taken = self.memories[into].import_bundle(bundle)
            assert taken.counts == sent.counts and taken.session_id != session_id
            copied = self.memories[into].get_session(taken.session_id)
            original = self.memories[tenant].get_session(session_id)
            assert copied.private == original.private and copied.user_id == original.user_id
            self.sessions.append((into, taken.session_id))
            self.refresh(into, Scope.session(taken.session_id))

        @rule(tenant=tenants, user=st.sampled_from(USERS), by_scope=st.booleans())
        def erase(self, tenant: str, user: str, by_scope: bool) -> None:
            memory = self.memories[tenant]
            theirs = {
                sid
                for t, sid in self.sessions
                if t == tenant and memory.get_session(sid).user_id == user
            }
            if by_scope:
                receipt = memory.erase(scope=Scope.user(user))
                doomed = {
                    k
                    for k, e in self.model.items()
                    if k[0] == tenant and e.scope == Scope.user(user)
                }
            else:
                receipt = memory.erase(user=user)
                doomed = {
                    k
                    for k, e in self.model.items()
                    if k[0] == tenant
                    and (
                        e.scope == Scope.user(user)
                        or (e.scope.kind == "session" and e.scope.id in theirs)
                    )
                }
                self.sessions = [
                    (t, s) for t, s in self.sessions if not (t == tenant and s in theirs)
                ]
            assert receipt.total == len(doomed) and receipt.tenant == tenant
            assert receipt.residue in (0, None), "an erased id is still in the store"
            gone_ids = [k[1] for k in doomed]
            assert self.root.backend.residue(gone_ids, []) in (0, None)
            for key in doomed:
                del self.model[key]

        @rule(tenant=tenants)
        def apply_retention(self, tenant: str) -> None:
            now = self.clock()
            report = self.memories[tenant].apply_retention()
            due = {(t, e.id) for (t, _), e in self.model.items() if t == tenant and _due(e, now)}
            assert {(tenant, item.entry_id) for item in report.items} == due
            for key in due:
                del self.model[key]
            for scope in {e.scope for (t, _), e in self.model.items() if t == tenant}:
                self.refresh(tenant, scope)  # chains mended where something went

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
                assert not entry.superseded
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
                every = self.memories[tenant].count(include_superseded=True)
                assert every >= expected

        def teardown(self) -> None:
            self.root.backend.close()

    return StoreMachine


FAST = settings(
    max_examples=40,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@pytest.mark.slow
@pytest.mark.parametrize(
    "make_backend",
    [InMemoryBackend, lambda: SQLiteBackend(":memory:")],
    ids=["memory", "sqlite"],
)
def test_operations_never_leak_across_scopes_or_tenants(make_backend: Any) -> None:
    machine = make_machine(make_backend)
    machine.TestCase.settings = FAST
    machine.TestCase().runTest()
