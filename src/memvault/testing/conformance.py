"""One behavioural suite that every storage backend must pass.

Subclass :class:`MemoryConformance` in a test module and provide a ``backend`` fixture that
yields a fresh, empty backend; every test then runs through both the blocking ``Memory`` and the
``AsyncMemory`` driver::

    class TestMyBackend(MemoryConformance):
        @pytest.fixture
        def backend(self):
            backend = MyBackend(...)
            yield backend
            backend.close()
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest

from ..config import Settings
from ..errors import (
    CompactionError,
    EmbeddingMismatchError,
    FilteredError,
    InvalidScopeError,
    InvalidScopePromotionError,
    NotFoundError,
    ValidationError,
)
from ..memory import AsyncMemory, Memory
from ..scopes import PROMOTION_TARGETS
from ..store.base import Backend
from ..store.ops import Filter, ListOp
from ..types import MemoryEntry, NewEntry, Outcome, Provenance, Scope, ScopeKind, SearchHit
from . import HashEmbedder, ManualClock
from .agents_conformance import AgentConformance
from .audit_conformance import AuditConformance
from .decay_conformance import DecayConformance
from .erasure_conformance import ErasureConformance
from .facilities_conformance import FacilityConformance
from .grants_conformance import GrantConformance
from .hygiene_conformance import HygieneConformance
from .teams_conformance import TeamConformance
from .versions_conformance import VersionConformance
from .work_style_conformance import WorkStyleConformance

SAMPLE_SCOPES = {
    ScopeKind.SESSION: Scope.session("s1"),
    ScopeKind.USER: Scope.user("alice"),
    ScopeKind.WORKSPACE: Scope.workspace("w1"),
    ScopeKind.ORG: Scope.org("acme"),
    ScopeKind.OBJECT: Scope.object("ticket", "T-42"),
}
SCOPES3 = ("user:a", "user:b", "workspace:w")
ALLOWED = [(a, b) for a, targets in PROMOTION_TARGETS.items() for b in targets]
FORBIDDEN = [
    (a, b) for a, b in itertools.product(ScopeKind, ScopeKind) if b not in PROMOTION_TARGETS[a]
]


class BlockingAsync:
    """Drives an AsyncMemory with the blocking call style, so one suite covers both drivers."""

    def __init__(self, memory: AsyncMemory, runner: asyncio.Runner) -> None:
        self._memory, self._runner = memory, runner

    def with_tenant(self, tenant: str) -> BlockingAsync:
        return BlockingAsync(self._memory.with_tenant(tenant), self._runner)

    def as_actor(self, actor: str) -> BlockingAsync:
        return BlockingAsync(self._memory.as_actor(actor), self._runner)

    def with_grant(self, grant: Any) -> BlockingAsync:
        return BlockingAsync(self._memory.with_grant(grant), self._runner)

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._memory, name)
        if not inspect.iscoroutinefunction(attribute):
            return attribute
        return lambda *args, **kwargs: self._runner.run(attribute(*args, **kwargs))


def _contents(entries: Sequence[MemoryEntry]) -> list[str]:
    return [e.content for e in entries]


def ids(hits: Sequence[SearchHit]) -> list[str]:
    return [h.entry.id for h in hits]


class MemoryConformance(
    FacilityConformance,
    VersionConformance,
    AuditConformance,
    AgentConformance,
    TeamConformance,
    WorkStyleConformance,
    ErasureConformance,
    GrantConformance,
    DecayConformance,
    HygieneConformance,
):
    """The behaviour every backend must show (seed 003 §15 is the floor)."""

    @pytest.fixture
    def backend(self) -> Iterator[Backend]:
        raise NotImplementedError("subclasses provide a fresh, empty backend")

    @pytest.fixture
    def clock(self) -> ManualClock:
        return ManualClock()

    @pytest.fixture(params=["sync", "async"])
    def make_memory(
        self, request: pytest.FixtureRequest, backend: Backend, clock: ManualClock
    ) -> Iterator[Callable[..., Any]]:
        """Opens a Memory on the test's backend with the test's driver (kwargs as for Memory);
        each is closed before the backend."""
        if request.param == "sync":
            opened: list[Memory] = []

            def blocking(**kwargs: Any) -> Memory:
                opened.append(Memory(backend, clock=clock, **kwargs))
                return opened[-1]

            yield blocking
            for one in opened:
                one.close()
            return
        with asyncio.Runner() as runner:
            awaiting: list[AsyncMemory] = []

            def driven(**kwargs: Any) -> BlockingAsync:
                awaiting.append(AsyncMemory(backend, clock=clock, **kwargs))
                return BlockingAsync(awaiting[-1], runner)

            yield driven
            for each in awaiting:
                runner.run(each.aclose())

    @pytest.fixture
    def memory(self, make_memory: Callable[..., Any]) -> Any:
        return make_memory()

    # -- write and get ----------------------------------------------------------------------

    def test_write_assigns_id_and_utc_timestamps(self, memory: Any, clock: ManualClock) -> None:
        entry = memory.write("likes tea", scope="user:alice")
        assert entry.id
        assert entry.created_at == entry.updated_at == clock()
        assert entry.created_at.tzinfo is not None
        assert entry.created_at.utcoffset() == timedelta(0)
        assert entry.revision == 1

    def test_get_round_trips_every_field(self, memory: Any, clock: ManualClock) -> None:
        written = memory.write(
            "prefers metric units",
            scope=Scope.object("doc", "d:1"),
            tags=["pref", "units"],
            category="preference",
            expires_at=clock() + timedelta(days=3),
            metadata={"lang": "en", "nested": {"n": [1, 2.5, None, True]}},
            provenance=Provenance(
                source="user_turn",
                agent_id="agent-7",
                confidence=0.75,
                created_in_session_id="s9",
                source_turn_index=4,
                tool_originated=True,
            ),
        )
        assert memory.get(written.id) == written

    def test_a_list_by_update_time_puts_the_latest_change_first(
        self, memory: Any, clock: ManualClock
    ) -> None:
        """``ListOp(order="updated")`` (the LangGraph store pages with it): the most recently
        updated first, a page of ``limit``."""
        first = memory.write("the first entry of the list", scope="user:a")
        clock.advance(seconds=1)
        second = memory.write("the second entry of the list", scope="user:a")
        clock.advance(seconds=1)
        memory.update(first.id, content="the first entry, changed since")
        where = Filter(memory.tenant, (Scope.user("a"),))
        (found,) = memory.backend.batch([ListOp(where, 10, order="updated")])
        assert [e.id for e in found] == [first.id, second.id]
        (page,) = memory.backend.batch([ListOp(where, 1, order="updated")])
        assert [e.id for e in page] == [first.id]

    def test_get_missing_returns_none(self, memory: Any) -> None:
        assert memory.get("no-such-id") is None

    def test_ids_sort_by_creation(self, memory: Any, clock: ManualClock) -> None:
        ids = []
        for n in range(5):
            ids.append(memory.write(f"e{n}", scope="user:a").id)
            if n % 2:
                clock.advance(seconds=1)
        assert ids == sorted(ids)
        assert len(set(ids)) == 5

    @pytest.mark.parametrize("kind", list(ScopeKind))
    def test_every_scope_kind_round_trips(self, memory: Any, kind: ScopeKind) -> None:
        scope = SAMPLE_SCOPES[kind]
        entry = memory.write("x", scope=str(scope))
        assert memory.get(entry.id).scope == scope
        assert _contents(memory.retrieve(scope)) == ["x"]

    def test_tags_are_stripped_and_deduplicated(self, memory: Any) -> None:
        entry = memory.write("x", scope="user:a", tags=[" a", "b", "a ", "b"])
        assert entry.tags == ("a", "b")
        assert memory.get(entry.id).tags == ("a", "b")

    def test_session_write_records_its_session(self, memory: Any) -> None:
        entry = memory.write("x", scope="session:s7")
        assert entry.provenance.created_in_session_id == "s7"

    @pytest.mark.parametrize(
        ("content", "kwargs"),
        [
            ("", {}),
            ("   \n", {}),
            ("nul\x00byte", {}),
            ("x" * 100_001, {}),
            ("x", {"expires_at": datetime(2030, 1, 1)}),
            ("x", {"expires_at": datetime(2000, 1, 1, tzinfo=UTC)}),
            ("x", {"ttl": -5}),
            ("x", {"metadata": {"bad": {1, 2}}}),
            ("x", {"metadata": {"n": float("nan")}}),
            ("x", {"tags": ["ok", ""]}),
            ("x", {"tags": "not-a-list"}),
            ("x", {"category": "Not A Word"}),
            ("x", {"provenance": {"confidence": 1.5}}),
            ("x", {"provenance": {"unknown_field": 1}}),
        ],
    )
    def test_bad_input_is_rejected_and_nothing_written(
        self, memory: Any, content: str, kwargs: dict[str, Any]
    ) -> None:
        with pytest.raises(ValidationError):
            memory.write(content, scope="user:a", **kwargs)
        assert memory.count() == 0

    @pytest.mark.parametrize("scope", ["user", "user:", "planet:x", "object:ticket", "user: a"])
    def test_malformed_scope_is_rejected(self, memory: Any, scope: str) -> None:
        with pytest.raises(InvalidScopeError):
            memory.write("x", scope=scope)

    def test_ttl_sets_expiry(self, memory: Any, clock: ManualClock) -> None:
        entry = memory.write("x", scope="user:a", ttl=60)
        assert entry.expires_at == clock() + timedelta(seconds=60)

    def test_write_many_writes_all_in_order(self, memory: Any) -> None:
        report = memory.write_many(
            [NewEntry("one", "user:a"), {"content": "two", "scope": "user:a", "tags": ["t"]}]
        )
        assert _contents(report.entries) == ["one", "two"]
        assert [item.outcome for item in report.items] == [Outcome.STORED, Outcome.STORED]
        assert report.counts() == {"stored": 2, "merged": 0, "refused": 0}
        assert _contents(memory.retrieve("user:a", order="oldest")) == ["one", "two"]

    def test_write_many_strict_is_all_or_nothing(self, memory: Any) -> None:
        items = [NewEntry("ok", "user:a"), NewEntry("", "user:a")]
        with pytest.raises(ValidationError, match="item 1"):
            memory.write_many(items, strict=True)
        assert memory.count() == 0

    def test_write_many_reports_refused_items_and_stores_the_rest(self, memory: Any) -> None:
        items: list[Any] = [
            NewEntry("kept", "user:a"),
            NewEntry("", "user:a"),
            {"content": "x", "scope": "nowhere:1"},
            {"content": "x", "bogus": 1},
            "not an item",
            NewEntry("x \ud800", "user:a"),
            NewEntry("also kept", "user:a", metadata={"n": float("nan")}),
        ]
        report = memory.write_many(items)
        assert [i.outcome for i in report.items] == [Outcome.STORED, *[Outcome.REFUSED] * 6]
        assert [i.index for i in report.refused] == [1, 2, 3, 4, 5, 6]
        assert {i.error for i in report.refused} == {"ValidationError", "InvalidScopeError"}
        assert all(i.reason and i.entry is None for i in report.refused)
        assert _contents(memory.retrieve("user:a")) == ["kept"]

    def test_write_many_empty(self, memory: Any) -> None:
        assert memory.write_many([]).items == ()

    # -- retrieve ---------------------------------------------------------------------------

    def test_retrieve_returns_only_that_scope(self, memory: Any) -> None:
        memory.write("mine", scope="user:alice")
        memory.write("theirs", scope="user:bob")
        memory.write("session", scope="session:s1")
        assert _contents(memory.retrieve("user:alice")) == ["mine"]

    def test_retrieve_orders_newest_or_oldest(self, memory: Any, clock: ManualClock) -> None:
        for n in range(3):
            memory.write(f"e{n}", scope="user:a")
            clock.advance(seconds=1)
        assert _contents(memory.retrieve("user:a")) == ["e2", "e1", "e0"]
        assert _contents(memory.retrieve("user:a", order="oldest")) == ["e0", "e1", "e2"]

    def test_retrieve_limit_defaults_to_20(self, memory: Any) -> None:
        memory.write_many([NewEntry(f"e{n}", "user:a") for n in range(25)])
        assert len(memory.retrieve("user:a")) == 20
        assert _contents(memory.retrieve("user:a", limit=3)) == ["e24", "e23", "e22"]

    @pytest.mark.parametrize("limit", [0, -1, 10_001, 2.5, True])
    def test_retrieve_rejects_bad_limits(self, memory: Any, limit: Any) -> None:
        with pytest.raises(ValidationError):
            memory.retrieve("user:a", limit=limit)

    def test_retrieve_rejects_bad_order(self, memory: Any) -> None:
        with pytest.raises(ValidationError):
            memory.retrieve("user:a", order="random")

    def test_retrieve_tags_are_all_of(self, memory: Any) -> None:
        memory.write("ab", scope="user:a", tags=["a", "b"])
        memory.write("a", scope="user:a", tags=["a"])
        memory.write("b", scope="user:a", tags=["b"])
        assert _contents(memory.retrieve("user:a", tags=["a", "b"])) == ["ab"]
        assert sorted(_contents(memory.retrieve("user:a", tags=["a"]))) == ["a", "ab"]

    def test_retrieve_since_is_inclusive(self, memory: Any, clock: ManualClock) -> None:
        memory.write("old", scope="user:a")
        boundary = clock.advance(hours=1)
        memory.write("at", scope="user:a")
        clock.advance(hours=1)
        memory.write("new", scope="user:a")
        assert _contents(memory.retrieve("user:a", since=boundary)) == ["new", "at"]
        with pytest.raises(ValidationError):
            memory.retrieve("user:a", since=datetime(2026, 1, 1))

    def test_expired_entries_are_hidden(self, memory: Any, clock: ManualClock) -> None:
        short = memory.write("short", scope="user:a", ttl=10)
        memory.write("long", scope="user:a", ttl=1000)
        clock.advance(seconds=10)
        assert _contents(memory.retrieve("user:a")) == ["long"]
        assert memory.get(short.id) is None
        assert memory.count("user:a") == 1

    def test_include_narrower_adds_the_named_session_only(self, memory: Any) -> None:
        memory.write("user fact", scope="user:alice")
        memory.write("this session", scope="session:s1")
        memory.write("other session", scope="session:s2")
        found = memory.retrieve("user:alice", include_narrower=True, session_id="s1")
        assert sorted(_contents(found)) == ["this session", "user fact"]
        assert memory.count("user:alice", include_narrower=True, session_id="s1") == 2

    def test_narrower_scopes_are_opt_in(self, memory: Any) -> None:
        memory.write("user fact", scope="user:alice")
        memory.write("session fact", scope="session:s1")
        memory.write("workspace fact", scope="workspace:w")
        assert _contents(memory.retrieve("user:alice")) == ["user fact"]
        assert _contents(memory.retrieve("workspace:w", include_narrower=True)) == [
            "workspace fact"
        ]

    def test_include_narrower_needs_explicit_session(self, memory: Any) -> None:
        with pytest.raises(ValidationError, match="session_id"):
            memory.retrieve("user:alice", include_narrower=True)
        with pytest.raises(ValidationError):
            memory.retrieve("user:alice", session_id="s1")

    def test_tenants_are_isolated(self, memory: Any) -> None:
        other = memory.with_tenant("other")
        mine = memory.write("mine", scope="user:alice")
        other.write("theirs", scope="user:alice")
        assert _contents(memory.retrieve("user:alice")) == ["mine"]
        assert other.get(mine.id) is None
        assert other.delete(mine.id) is False
        assert other.delete_by_scope("user:alice") == 1
        assert memory.get(mine.id) == mine
        with pytest.raises(NotFoundError):
            other.update(mine.id, content="hijack")
        with pytest.raises(NotFoundError):
            other.promote(mine.id, "org:o")

    # -- update -----------------------------------------------------------------------------

    def test_update_content_and_tags(self, memory: Any, clock: ManualClock) -> None:
        entry = memory.write("old", scope="user:a", tags=["x"])
        clock.advance(seconds=5)
        updated = memory.update(entry.id, content="new", tags=["y", "z"])
        assert (updated.content, updated.tags) == ("new", ("y", "z"))
        assert updated.created_at == entry.created_at
        assert updated.updated_at == clock()
        assert updated.revision == 2
        assert memory.get(entry.id) == updated
        assert _contents(memory.retrieve("user:a", tags=["z"])) == ["new"]
        assert memory.retrieve("user:a", tags=["x"]) == []

    def test_update_cannot_change_scope_or_provenance(self, memory: Any) -> None:
        source = memory.write("x", scope="session:s1", provenance={"agent_id": "a1"})
        promoted = memory.promote(source.id, "user:u")
        with pytest.raises(TypeError):
            memory.update(promoted.id, scope="org:o")
        updated = memory.update(promoted.id, content="y", metadata={"k": 1})
        assert updated.scope == Scope.user("u")
        assert updated.promoted_from_id == source.id
        assert updated.provenance == source.provenance

    def test_update_expiry_set_and_clear(self, memory: Any, clock: ManualClock) -> None:
        entry = memory.write("x", scope="user:a", ttl=10)
        cleared = memory.update(entry.id, expires_at=None)
        assert cleared.expires_at is None
        clock.advance(seconds=20)
        assert memory.get(entry.id) is not None
        later = clock() + timedelta(hours=1)
        assert memory.update(entry.id, expires_at=later).expires_at == later

    def test_update_metadata_replaces_it(self, memory: Any) -> None:
        entry = memory.write("x", scope="user:a", metadata={"a": 1})
        assert memory.update(entry.id, metadata={"b": 2}).metadata == {"b": 2}

    def test_update_missing_or_expired_raises(self, memory: Any, clock: ManualClock) -> None:
        with pytest.raises(NotFoundError):
            memory.update("missing", content="x")
        entry = memory.write("x", scope="user:a", ttl=1)
        clock.advance(seconds=1)
        with pytest.raises(NotFoundError):
            memory.update(entry.id, content="y")

    def test_bad_update_changes_nothing(self, memory: Any) -> None:
        entry = memory.write("x", scope="user:a")
        with pytest.raises(ValidationError):
            memory.update(entry.id, content="")
        assert memory.get(entry.id) == entry

    # -- delete -----------------------------------------------------------------------------

    def test_delete_is_idempotent(self, memory: Any) -> None:
        entry = memory.write("x", scope="user:a")
        assert memory.delete(entry.id) is True
        assert memory.get(entry.id) is None
        assert memory.delete(entry.id) is False

    def test_delete_by_scope_touches_only_that_scope(self, memory: Any) -> None:
        other_tenant = memory.with_tenant("t2")
        memory.write_many([NewEntry(f"s{n}", "session:s1") for n in range(3)])
        memory.write("keep session", scope="session:s2")
        memory.write("keep user", scope="user:s1")
        other_tenant.write("keep tenant", scope="session:s1")
        assert memory.delete_by_scope("session:s1") == 3
        assert memory.count("session:s1") == 0
        assert memory.count() == 2
        assert other_tenant.count("session:s1") == 1
        assert memory.delete_by_scope("session:s1") == 0

    def test_a_scope_id_with_dot_segments_names_that_scope_only(self, memory: Any) -> None:
        """``..`` in a scope id is text, not a step up a URL path (over REST neither)."""
        memory.write("bob's fact", scope="user:bob")
        assert memory.delete_by_scope("user:alice/../../scopes/user:bob") == 0
        assert memory.delete_by_scope("object:x:y/..") == 0
        assert memory.count("user:bob") == 1
        memory.write("dotted", scope="user:a/./b/../c")
        assert memory.count("user:a/./b/../c") == 1
        assert memory.delete_by_scope("user:a/./b/../c") == 1
        assert memory.count() == 1

    def test_purge_expired_deletes_only_expired(self, memory: Any, clock: ManualClock) -> None:
        gone = memory.write("gone", scope="user:a", ttl=5)
        memory.write("stays", scope="user:a", ttl=500)
        memory.write("forever", scope="user:a")
        clock.advance(seconds=6)
        assert memory.purge_expired() == 1
        assert memory.list(include_expired=True).entries[-1].content != "gone"
        assert memory.count() == 2
        assert memory.get(gone.id) is None

    # -- promote ----------------------------------------------------------------------------

    def test_promote_copies_upward_with_lineage(self, memory: Any) -> None:
        source = memory.write(
            "prefers Go",
            scope="session:s1",
            tags=["pref"],
            category="preference",
            metadata={"k": "v"},
            provenance={"source": "user_turn", "agent_id": "a1", "confidence": 0.9},
        )
        promoted = memory.promote(source.id, "user:alice")
        assert promoted.id != source.id
        assert promoted.scope == Scope.user("alice")
        assert promoted.promoted_from_id == source.id
        assert (promoted.content, promoted.tags, promoted.category) == (
            "prefers Go",
            ("pref",),
            "preference",
        )
        assert promoted.metadata == {"k": "v"}
        assert promoted.provenance == source.provenance
        assert promoted.provenance.created_in_session_id == "s1"
        assert memory.get(source.id) == source
        assert memory.get(promoted.id) == promoted

    def test_promote_can_delete_original(self, memory: Any) -> None:
        source = memory.write("x", scope="session:s1")
        promoted = memory.promote(source.id, "user:u", delete_original=True)
        assert memory.get(source.id) is None
        assert memory.get(promoted.id) is not None

    def test_promoting_twice_keeps_one_copy(self, memory: Any) -> None:
        source = memory.write("User prefers dark mode", scope="session:s1", tags=["ui"])
        again = memory.write("User prefers dark mode", scope="session:s2", tags=["ui"])
        first = memory.promote(source.id, "user:alice")
        second = memory.promote(again.id, "user:alice")
        assert second.id == first.id and second.duplicate and not first.duplicate
        assert memory.count("user:alice") == 1
        moved = memory.promote(again.id, "user:alice", delete_original=True)
        assert moved.id == first.id and memory.get(again.id) is None

    def test_promote_overrides_content_and_tags(self, memory: Any) -> None:
        source = memory.write("raw", scope="user:u", tags=["a"])
        promoted = memory.promote(source.id, "org:o", content="clean", tags=["b"])
        assert (promoted.content, promoted.tags) == ("clean", ("b",))

    @pytest.mark.parametrize(("source", "target"), ALLOWED)
    def test_allowed_promotions(self, memory: Any, source: ScopeKind, target: ScopeKind) -> None:
        entry = memory.write("x", scope=SAMPLE_SCOPES[source])
        assert memory.promote(entry.id, SAMPLE_SCOPES[target]).scope == SAMPLE_SCOPES[target]

    @pytest.mark.parametrize(("source", "target"), FORBIDDEN)
    def test_forbidden_promotions(self, memory: Any, source: ScopeKind, target: ScopeKind) -> None:
        entry = memory.write("x", scope=SAMPLE_SCOPES[source])
        with pytest.raises(InvalidScopePromotionError):
            memory.promote(entry.id, SAMPLE_SCOPES[target])
        assert memory.count() == 1

    def test_promote_missing_raises(self, memory: Any) -> None:
        with pytest.raises(NotFoundError):
            memory.promote("missing", "user:u")

    # -- compact ----------------------------------------------------------------------------

    def test_compact_merges_with_lineage(self, memory: Any) -> None:
        a = memory.write("likes tea", scope="user:u", tags=["a"], provenance={"agent_id": "x"})
        b = memory.write("likes coffee", scope="user:u", tags=["b"], provenance={"agent_id": "x"})
        seen: list[list[str]] = []

        def summarise(entries: Sequence[MemoryEntry]) -> str:
            seen.append([e.id for e in entries])
            return " and ".join(e.content for e in entries)

        merged = memory.compact([b.id, a.id], summarise)
        assert seen == [[b.id, a.id]]
        assert merged.content == "likes coffee and likes tea"
        assert merged.compacted_from_ids == (b.id, a.id)
        assert merged.scope == Scope.user("u")
        assert merged.tags == ("b", "a")
        assert merged.provenance.agent_id == "x"
        assert memory.get(a.id) is not None
        assert memory.get(merged.id) == merged

    def test_compact_can_delete_sources(self, memory: Any) -> None:
        ids = [memory.write(f"e{n}", scope="user:u").id for n in range(3)]
        merged = memory.compact(ids, lambda es: "summary", delete_sources=True)
        assert [e.id for e in memory.retrieve("user:u")] == [merged.id]

    def test_compact_callback_failure_changes_nothing(self, memory: Any) -> None:
        ids = [memory.write(f"e{n}", scope="user:u").id for n in range(2)]

        def broken(entries: Sequence[MemoryEntry]) -> str:
            raise RuntimeError("model timed out")

        with pytest.raises(CompactionError, match="model timed out") as caught:
            memory.compact(ids, broken, delete_sources=True)
        assert caught.value.source_entry_ids == tuple(ids)
        assert memory.count() == 2

    @pytest.mark.parametrize("result", ["", "  ", None, 42])
    def test_compact_rejects_unusable_results(self, memory: Any, result: Any) -> None:
        ids = [memory.write("e", scope="user:u").id]
        with pytest.raises(CompactionError):
            memory.compact(ids, lambda es: result, delete_sources=True)
        assert memory.count() == 1

    def test_compact_accepts_async_callbacks(self, memory: Any) -> None:
        ids = [memory.write("e", scope="user:u").id]

        async def summarise(entries: Sequence[MemoryEntry]) -> str:
            await asyncio.sleep(0)
            return "async summary"

        assert memory.compact(ids, summarise).content == "async summary"

    def test_compact_requires_one_scope(self, memory: Any) -> None:
        a = memory.write("a", scope="user:u")
        b = memory.write("b", scope="user:v")
        with pytest.raises(ValidationError, match="target scope"):
            memory.compact([a.id, b.id], lambda es: "x")
        with pytest.raises(ValidationError):
            memory.compact([a.id], lambda es: "x", scope="user:v")
        assert memory.count() == 2

    def test_compact_rejects_empty_duplicate_or_missing_ids(self, memory: Any) -> None:
        a = memory.write("a", scope="user:u")
        with pytest.raises(ValidationError):
            memory.compact([], lambda es: "x")
        with pytest.raises(ValidationError):
            memory.compact([a.id, a.id], lambda es: "x")
        with pytest.raises(NotFoundError):
            memory.compact([a.id, "missing"], lambda es: "x")

    def test_compact_keeps_agreed_provenance(self, memory: Any) -> None:
        common = {"source": "extraction", "created_in_session_id": "s1"}
        a = memory.write("a", scope="user:u", provenance={**common, "confidence": 0.9})
        b = memory.write(
            "b", scope="user:u", provenance={**common, "confidence": 0.6, "agent_id": "z"}
        )
        merged = memory.compact([a.id, b.id], lambda es: "ab").provenance
        assert (merged.source, merged.created_in_session_id) == ("extraction", "s1")
        assert merged.confidence == 0.6
        assert merged.agent_id is None

    # -- count and list ---------------------------------------------------------------------

    def test_count_filters(self, memory: Any) -> None:
        memory.write("a", scope="user:a", tags=["t"])
        memory.write("b", scope="user:a")
        memory.write("c", scope="org:o", tags=["t"])
        assert memory.count() == 3
        assert memory.count("user:a") == 2
        assert memory.count(tags=["t"]) == 2

    def test_list_pages_cover_everything_once(self, memory: Any, clock: ManualClock) -> None:
        for n in range(7):
            memory.write(f"e{n}", scope="user:a" if n % 2 else "org:o")
            if n % 3 == 0:
                clock.advance(seconds=1)
        for order in ("newest", "oldest"):
            seen, cursor = [], None
            while True:
                page = memory.list(limit=3, cursor=cursor, order=order)
                seen += _contents(page.entries)
                cursor = page.next_cursor
                if cursor is None:
                    break
            expected = [f"e{n}" for n in range(7)]
            assert seen == (expected if order == "oldest" else expected[::-1])

    def test_list_by_scope_and_expired(self, memory: Any, clock: ManualClock) -> None:
        memory.write("a", scope="user:a", ttl=1)
        memory.write("b", scope="user:b")
        clock.advance(seconds=2)
        assert _contents(memory.list("user:a").entries) == []
        assert _contents(memory.list("user:a", include_expired=True).entries) == ["a"]
        assert memory.list(limit=1).next_cursor is None

    def test_list_rejects_foreign_cursors(self, memory: Any) -> None:
        memory.write_many([NewEntry(f"e{n}", "user:a") for n in range(3)])
        cursor = memory.list(limit=1).next_cursor
        assert cursor is not None
        with pytest.raises(ValidationError):
            memory.list(cursor="not-a-cursor")
        with pytest.raises(ValidationError):
            memory.list(cursor=cursor, order="oldest")

    def test_returned_entries_are_detached(self, memory: Any) -> None:
        entry = memory.write("x", scope="user:a", metadata={"k": [1]})
        fetched = memory.get(entry.id)
        fetched.metadata["k"].append(2)
        assert memory.get(entry.id).metadata == {"k": [1]}

    # -- search -----------------------------------------------------------------------------

    def _facts(self, memory: Any, scope: str = "user:alice") -> dict[str, MemoryEntry]:
        texts = {
            "tea": "Alice drinks green tea every morning",
            "peanuts": "Alice is allergic to peanuts",
            "berlin": "Alice moved to Berlin in 2021 for a new job",
            "cat": "Alice has a cat named Miso",
            "deploy": "The staging deploy runs every Friday afternoon",
        }
        return {k: memory.write(v, scope=scope, tags=[k]) for k, v in texts.items()}

    def test_search_ranks_the_relevant_entry_first(self, memory: Any) -> None:
        facts = self._facts(memory)
        assert (
            memory.search("what does Alice like to drink?", "user:alice")[0].entry == facts["tea"]
        )
        assert memory.search("food allergy", "user:alice")[0].entry == facts["peanuts"]
        assert memory.search("Where does she live now?", "user:alice")[0].entry == facts["berlin"]
        assert memory.search("Miso", "user:alice")[0].entry == facts["cat"]

    def test_search_hits_explain_their_scores(self, memory: Any) -> None:
        self._facts(memory)
        hits = memory.search("green tea", "user:alice", limit=3)
        assert len(hits) == 3
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        top = hits[0]
        assert {"lexical", "dense", "recency", "fused"} <= set(top.components)
        assert top.components["lexical"] > 0
        assert 0 < top.components["dense"] <= 1
        assert top.to_dict()["components"] == dict(top.components)
        assert all(0 < h.relevance < 1 for h in hits)
        assert top.to_dict()["relevance"] == top.relevance

    def test_search_never_leaves_its_scope_or_tenant(self, memory: Any) -> None:
        self._facts(memory, "user:bob")
        memory.with_tenant("other").write("Alice drinks green tea", scope="user:alice")
        mine = memory.write("Alice likes hiking", scope="user:alice")
        hits = memory.search("Alice drinks green tea", "user:alice", limit=10)
        assert [h.entry for h in hits] == [mine]

    def test_search_filters_apply_before_ranking(self, memory: Any, clock: ManualClock) -> None:
        early = memory.write("tea notes one", scope="user:a", category="fact", metadata={"n": 1})
        clock.advance(hours=1)
        middle = clock()
        late = memory.write(
            "tea notes two",
            scope="user:a",
            category="preference",
            tags=["x"],
            metadata={"n": 2, "flag": True, "who": "me"},
        )
        assert ids(memory.search("tea", "user:a", tags=["x"])) == [late.id]
        assert ids(memory.search("tea", "user:a", categories=["fact"])) == [early.id]
        assert ids(memory.search("tea", "user:a", since=middle)) == [late.id]
        assert ids(memory.search("tea", "user:a", until=middle)) == [early.id]
        assert ids(memory.search("tea", "user:a", metadata={"n": 1})) == [early.id]
        assert ids(memory.search("tea", "user:a", metadata={"flag": True})) == [late.id]
        assert ids(memory.search("tea", "user:a", metadata={"n": True})) == []
        assert ids(memory.search("tea", "user:a", metadata={"who": "me", "n": 2})) == [late.id]
        with pytest.raises(ValidationError):
            memory.search("tea", "user:a", metadata={"n": [1]})

    def test_search_with_narrower_session(self, memory: Any) -> None:
        user = memory.write("Alice drinks tea", scope="user:alice")
        session = memory.write("Alice is drinking tea right now", scope="session:s1")
        memory.write("Alice drinks tea in session two", scope="session:s2")
        hits = memory.search("tea", "user:alice", include_narrower=True, session_id="s1")
        assert {h.entry.id for h in hits} == {user.id, session.id}

    @pytest.mark.parametrize(
        "query",
        [
            '"unbalanced',
            "a AND OR NOT",
            "col:value",
            "(x",
            "NEAR(a b)",
            "*",
            "^start",
            "-",
            "'",
            "a+b=c; DROP TABLE entries; --",
            "🙂 emoji",
            "ünïcödé",
            "   x   ",
        ],
    )
    def test_search_syntax_in_queries_never_raises(self, memory: Any, query: str) -> None:
        memory.write("plain entry with some words", scope="user:a")
        assert isinstance(memory.search(query, "user:a"), list)

    def test_search_rejects_bad_arguments(self, memory: Any) -> None:
        with pytest.raises(ValidationError):
            memory.search("", "user:a")
        with pytest.raises(ValidationError, match="10,000"):  # what to find, not a document
            memory.search("word " * 2_001, "user:a")
        with pytest.raises(ValidationError, match="lone surrogate"):
            memory.search("caf\ud800", "user:a")
        with pytest.raises(ValidationError):
            memory.search("x", "user:a", limit=0)
        with pytest.raises(ValidationError):
            memory.search("x", "user:a", diversity=2)
        with pytest.raises(ValidationError):
            memory.search("x", "user:a", lexical_weight=-1)

    def test_search_skips_expired_deleted_and_updated_text(
        self, memory: Any, clock: ManualClock
    ) -> None:
        gone = memory.write("zebra crossing", scope="user:a", ttl=5)
        deleted = memory.write("zebra stripes", scope="user:a")
        changed = memory.write("zebra herd", scope="user:a")
        memory.delete(deleted.id)
        memory.update(changed.id, content="giraffe herd")
        clock.advance(seconds=10)
        assert [h.entry.id for h in memory.search("zebra", "user:a", min_score=0.5)] == []
        assert memory.search("giraffe", "user:a")[0].entry.id == changed.id
        assert gone.id not in {h.entry.id for h in memory.search("zebra", "user:a")}

    def test_search_min_score_and_limit(self, memory: Any) -> None:
        self._facts(memory)
        assert len(memory.search("Alice", "user:alice", limit=2)) == 2
        ranked = memory.search("green tea every morning", "user:alice")
        cut = (ranked[0].score + ranked[1].score) / 2
        strong = memory.search("green tea every morning", "user:alice", min_score=cut)
        assert [h.entry for h in strong] == [ranked[0].entry]
        assert memory.search("green tea every morning", "user:alice", min_score=5) == []
        unrelated = memory.search("quantum chromodynamics lecture", "user:alice")
        assert all(h.score < 0.5 for h in unrelated)

    def test_search_diversity_spreads_results(self, memory: Any) -> None:
        for n in range(3):
            memory.write(f"Alice drinks green tea, cup {n}", scope="user:a")
        other = memory.write("Alice drinks strong black coffee", scope="user:a")
        plain = memory.search("Alice drinks green tea", "user:a", limit=2)
        varied = memory.search("Alice drinks green tea", "user:a", limit=2, diversity=0.7)
        assert other.id not in {h.entry.id for h in plain}
        assert other.id in {h.entry.id for h in varied}

    def test_search_rrf_and_recency(self, memory: Any, clock: ManualClock) -> None:
        old = memory.write("meeting notes about the budget", scope="user:a")
        clock.advance(days=60)
        new = memory.write("meeting notes about the budget review", scope="user:a")
        assert memory.search("budget", "user:a", fusion="rrf")[0].entry.id in {old.id, new.id}
        recent = memory.search("budget", "user:a", recency_weight=2.0)
        assert recent[0].entry.id == new.id
        assert recent[0].components["recency"] > recent[1].components["recency"]

    def test_search_finds_text_deep_in_long_content(self, memory: Any) -> None:
        filler = " ".join(f"word{n}" for n in range(5000))
        long = memory.write(filler + " The secret ingredient is cardamom.", scope="user:a")
        memory.write("A short note about cooking rice", scope="user:a")
        hits = memory.search("secret ingredient cardamom", "user:a")
        assert hits[0].entry.id == long.id
        assert hits[0].entry.content == long.content

    def test_conversational_search_lifts_the_reply(self, memory: Any) -> None:
        turns = [
            "How was the trip to Lisbon?",
            "Amazing, we ate pastel de nata daily.",
            "Did you visit the castle?",
            "Yes, the views were great.",
        ]
        entries = memory.write_many([NewEntry(t, "object:chat:1") for t in turns]).entries
        hits = memory.search("trip to Lisbon", "object:chat:1", limit=2, conversational=True)
        assert [h.entry.id for h in hits] == [entries[0].id, entries[1].id]

    def test_rerank_reorders_the_best_of_the_first_stage(self, memory: Any) -> None:
        texts = [
            "Caroline went to the LGBTQ support group on Tuesday",
            "Melanie painted a sunrise over the lake",
            "The support group meets every week at the library",
            "Caroline is researching adoption agencies",
            "Melanie took her kids camping in the mountains",
        ]
        memory.write_many([NewEntry(t, "user:c") for t in texts])
        first = memory.search("When did Caroline go to the support group?", "user:c", limit=5)
        hits = memory.search(
            "When did Caroline go to the support group?", "user:c", limit=3, rerank=True
        )
        assert len(hits) == 3
        assert {h.entry.id for h in hits} <= {h.entry.id for h in first}
        assert all("sparse" in h.components for h in hits)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        assert hits[0].entry.content == texts[0]

    # -- write-time filters -----------------------------------------------------------------

    def test_near_duplicates_return_the_existing_entry(self, memory: Any) -> None:
        first = memory.write("Alice prefers dark mode in every editor", scope="user:a")
        again = memory.write("alice prefers the dark mode in every editor.", scope="user:a")
        elsewhere = memory.write("Alice prefers dark mode in every editor", scope="user:b")
        assert again == first
        assert again.duplicate and not first.duplicate
        assert elsewhere.id != first.id and not elsewhere.duplicate
        assert memory.count() == 2
        assert memory.stats()["near_duplicate"] == 1

    def test_numbers_keep_near_duplicates_apart(self, memory: Any) -> None:
        a = memory.write("Order 1234 shipped to Alice today", scope="user:a")
        b = memory.write("Order 1235 shipped to Alice today", scope="user:a")
        assert a.id != b.id

    @pytest.mark.parametrize(
        ("first", "second"),
        [
            (
                "Grace bought green tea downtown on Monday.",
                "Grace sold green tea downtown on Monday.",
            ),
            ("Ivan visited the museum in Berlin.", "Ivan studied the museum in Berlin."),
            (
                "Alice owes Bob twenty dollars for lunch.",
                "Bob owes Alice twenty dollars for lunch.",
            ),
            ("The user likes spicy food a lot.", "The user doesn't like spicy food a lot."),
            ("Maya is the team lead of billing.", "Maya was the team lead of billing."),
        ],
    )
    def test_different_facts_from_one_template_are_both_kept(
        self, memory: Any, first: str, second: str
    ) -> None:
        a = memory.write(first, scope="user:a")
        b = memory.write(second, scope="user:a")
        assert a.id != b.id and not b.duplicate
        report = memory.write_many([NewEntry(first, "user:b"), NewEntry(second, "user:b")])
        assert report.counts() == {"stored": 2, "merged": 0, "refused": 0}
        assert memory.count() == 4

    def test_a_restatement_merges_however_many_entries_are_closer(self, make_memory: Any) -> None:
        """Entries of one template may all be as close to a text as its restatement is (here:
        the same vector): each is a different fact, and none hides the twin (only the closest
        16 were compared: the restatement was stored again)."""
        memory = make_memory(embedder=_OneTemplate())
        written = [
            memory.write(f"Order {n} shipped to Alice today", scope="user:a")
            for n in range(1000, 1030)
        ]
        again = memory.write("ORDER 1020 SHIPPED TO ALICE TODAY!", scope="user:a")
        assert again.id == written[20].id and again.duplicate
        report = memory.write_many([NewEntry("ORDER 1025 SHIPPED TO ALICE TODAY.", "user:a")])
        assert report.items[0].entry.id == written[25].id
        assert memory.count() == 30

    def test_restatements_merge(self, memory: Any) -> None:
        first = memory.write("Grace bought green tea downtown on Monday.", scope="user:a")
        for again in (
            "on Monday Grace bought green tea downtown.",
            "GRACE bought green tea downtown on monday.",
        ):
            assert memory.write(again, scope="user:a").id == first.id
        assert memory.count() == 1

    def test_write_many_deduplicates_within_and_against_the_store(self, memory: Any) -> None:
        stored = memory.write("Bob likes jazz music a lot", scope="user:a")
        items = [
            NewEntry("Bob likes jazz music a lot!", "user:a"),
            NewEntry("Carol plays the violin", "user:a"),
            NewEntry("Carol plays the violin.", "user:a"),
        ]
        report = memory.write_many(items)
        assert [i.outcome for i in report.items] == [Outcome.MERGED, Outcome.STORED, Outcome.MERGED]
        assert report.items[0].entry == stored and report.items[0].entry.duplicate
        assert report.items[2].entry == report.items[1].entry
        assert report.to_dict()["items"][0]["merged_into"] == stored.id
        assert report.to_dict()["items"][2]["merged_into"] == report.items[1].entry.id
        assert memory.count() == 2

    def test_write_many_checks_each_scope_of_a_batch_against_its_own_entries(
        self, memory: Any, clock: ManualClock
    ) -> None:
        old = {s: memory.write(f"Dana moved to Porto in {s}", scope=s) for s in SCOPES3}
        brief = memory.write("Erin runs the Tuesday standup", scope="user:a", ttl=60)
        other = memory.with_tenant("other").write("Dana moved to Porto in user:a", scope="user:a")
        clock.advance(timedelta(seconds=61))
        items = [NewEntry(f"dana moved to porto in {s}.", s) for s in reversed(SCOPES3)]
        items += [NewEntry("Erin runs the Tuesday standup", "user:a")]
        items += [NewEntry("Dana moved to Porto in user:b", "user:a")]
        report = memory.write_many(items)
        outcomes = [i.outcome for i in report.items]
        assert outcomes == [Outcome.MERGED] * 3 + [Outcome.STORED] * 2
        assert [i.entry.id for i in report.items[:3]] == [old[s].id for s in reversed(SCOPES3)]
        assert report.items[3].entry.id != brief.id  # the expired one is not a twin
        assert other.id not in {i.entry.id for i in report.items}  # nor another tenant's

    def test_near_duplicate_check_can_be_turned_off(self, make_memory: Any) -> None:
        memory = make_memory(settings=Settings(near_duplicate_threshold=0))
        a = memory.write("same text", scope="user:a")
        assert memory.write("same text", scope="user:a").id != a.id

    def test_filters_refuse_errors_and_short_content(self, make_memory: Any) -> None:
        memory = make_memory(settings=Settings(min_content_chars=10))
        for text in (
            "Traceback (most recent call last):\n  File x",
            "Error: connection refused",
            "HTTP/1.1 503 Service Unavailable",
            '{"error": "bad"}',
        ):
            with pytest.raises(FilteredError) as caught:
                memory.write(text, scope="user:a")
            assert caught.value.reason == "error_response"
        with pytest.raises(FilteredError, match="shorter than 10"):
            memory.write("ok sure", scope="user:a")
        items = [NewEntry("long enough content", "user:a"), NewEntry("hm", "user:a")]
        with pytest.raises(FilteredError, match="item 1"):
            memory.write_many(items, strict=True)
        assert memory.count() == 0
        refused = memory.write_many(items).refused
        assert [(i.index, i.error) for i in refused] == [(1, "FilteredError")]
        assert memory.count() == 1
        stats = {"filtered_error_response": 4, "filtered_too_short": 3, "written": 1}
        assert memory.stats() == stats
        kept = make_memory(settings=Settings(skip_error_responses=False))
        assert kept.write("Error: kept on purpose", scope="user:a").content.startswith("Error")

    # -- embeddings -------------------------------------------------------------------------

    def test_another_embedding_model_is_refused_until_reembedded(self, make_memory: Any) -> None:
        memory = make_memory()
        entry = memory.write("Alice drinks green tea", scope="user:a")
        with pytest.raises(EmbeddingMismatchError, match="reembed"):
            make_memory(embedder=HashEmbedder(32))
        other = make_memory(embedder=HashEmbedder(32), check_embedding=False)
        assert other.reembed(batch_size=1) == 1
        reopened = make_memory(embedder=HashEmbedder(32))
        assert reopened.search("green tea", "user:a")[0].entry.id == entry.id
        with pytest.raises(EmbeddingMismatchError):
            make_memory()


class _OneTemplate(HashEmbedder):
    """Every text is the same vector, but for shouting (cosine 0.96 to the others)."""

    def embed_batch(self, texts: Sequence[str]) -> Any:
        matrix = np.zeros((len(texts), self.dimension), np.float32)
        matrix[:, 0] = 1.0
        matrix[:, 1] = [0.3 if text.isupper() else 0.0 for text in texts]
        return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
