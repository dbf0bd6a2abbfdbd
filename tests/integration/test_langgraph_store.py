"""memvault as a LangGraph store: LangGraph's own expectations, ported, and a real graph.

The behaviours come from LangGraph's store tests (libs/checkpoint/tests/test_store.py and the
SQLite and PostgreSQL stores' test_store.py / test_async_store.py): put/get/delete, namespace
prefixes and listing with match conditions and max_depth, search with filters and queries,
pagination, TTL with refresh on read, batch ordering. They are written anew against
:class:`MemvaultStore` (with memvault's own embedder, not LangGraph's fake one) and run on
SQLite and on PostgreSQL; the memvault-only checks (the scope mapping, tenants, erasure,
errors) run on SQLite.
"""

from __future__ import annotations

import asyncio
import math
import operator
import re
import sqlite3
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any, TypedDict

import pytest
from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    PutOp,
    SearchOp,
)

import memvault.store.ops as mv
from memvault import (
    AsyncMemory,
    ConfigError,
    InvalidScopeError,
    Memory,
    MemvaultError,
    Scope,
    ValidationError,
)
from memvault.config import Settings
from memvault.integrations.langgraph import (
    CATEGORY,
    TAGGED,
    MemvaultStore,
    NamespaceError,
    scope_of,
)
from memvault.store.base import Backend
from memvault.testing import ManualClock

TTL_MINUTES = 0.1  # six seconds on the manual clock

# -- fixtures ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def postgres_backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    """A database of its own on the session's PostgreSQL (the conformance suite empties the
    default one); each test takes a tenant of its own in it."""
    psycopg = pytest.importorskip("psycopg")
    pytest.importorskip("psycopg_pool")
    from memvault.store.postgres import PostgresBackend

    dsn = request.getfixturevalue("postgres_dsn")
    with psycopg.connect(dsn, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = 'langgraph'").fetchone():
            conn.execute("CREATE DATABASE langgraph")
    backend = PostgresBackend(psycopg.conninfo.make_conninfo(dsn, dbname="langgraph"), Settings())
    yield backend
    backend.close()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.slow)])
def memory(request: pytest.FixtureRequest, tmp_path: Path, clock: ManualClock) -> Iterator[Memory]:
    if request.param == "sqlite":
        opened = Memory(str(tmp_path / "langgraph.db"), clock=clock)
    else:
        backend = request.getfixturevalue("postgres_backend")
        opened = Memory(backend, tenant=f"t-{uuid.uuid4().hex}", clock=clock)
    with opened:
        yield opened


@pytest.fixture
def sqlite_memory(tmp_path: Path, clock: ManualClock) -> Iterator[Memory]:
    with Memory(str(tmp_path / "langgraph.db"), clock=clock) as opened:
        yield opened


@pytest.fixture
def store(memory: Memory) -> MemvaultStore:
    return MemvaultStore(memory)


@pytest.fixture
def sqlite_store(sqlite_memory: Memory) -> MemvaultStore:
    return MemvaultStore(sqlite_memory)


def _put_all(store: MemvaultStore, namespaces: list[tuple[str, ...]]) -> None:
    store.batch(
        [PutOp(ns, f"id_{i}", {"data": f"value_{i:02d}"}) for i, ns in enumerate(namespaces)]
    )


def _namespaces(store: MemvaultStore, prefix: tuple[str, ...]) -> set[tuple[str, ...]]:
    return {item.namespace for item in store.search(prefix, limit=100)}


# -- put, get, delete -------------------------------------------------------------------------


def test_put_get_replace_delete(store: MemvaultStore, clock: ManualClock) -> None:
    namespace = ("test", "documents")
    store.put(namespace, "doc1", {"title": "Test Document", "content": "Hello, World!"})
    item = store.get(namespace, "doc1")
    assert item is not None
    assert (item.namespace, item.key) == (namespace, "doc1")
    assert item.value == {"title": "Test Document", "content": "Hello, World!"}
    clock.advance(seconds=5)
    store.put(namespace, "doc1", {"title": "Updated Document"})
    updated = store.get(namespace, "doc1")
    assert updated is not None
    assert updated.value == {"title": "Updated Document"}
    assert updated.created_at == item.created_at
    assert updated.updated_at == item.updated_at + timedelta(seconds=5)
    assert store.get(("test", "other_documents"), "doc1") is None
    assert store.get(("test",), "doc1") is None
    store.delete(namespace, "doc1")
    assert store.get(namespace, "doc1") is None
    store.delete(namespace, "doc1")  # deleting what is gone is no error
    assert store.search(("test",)) == []


def test_batch_results_follow_the_order_of_the_ops(store: MemvaultStore) -> None:
    store.put(("test", "foo"), "key1", {"data": "value1"})
    store.put(("test", "bar"), "key2", {"data": "value2"})
    results = store.batch(
        [
            GetOp(("test", "foo"), "key1"),
            PutOp(("test", "bar"), "key2", {"data": "value2"}),
            SearchOp(("test",), filter={"data": "value1"}),
            ListNamespacesOp(),
            GetOp(("test",), "key3"),
        ]
    )
    assert len(results) == 5
    first = results[0]
    assert isinstance(first, Item)
    assert (first.namespace, first.key, first.value) == (
        ("test", "foo"),
        "key1",
        {"data": "value1"},
    )
    assert results[1] is None
    assert [(i.key, i.value) for i in results[2]] == [("key1", {"data": "value1"})]  # type: ignore[union-attr]
    assert {("test", "foo"), ("test", "bar")} <= set(results[3])  # type: ignore[arg-type]
    assert results[4] is None

    results = store.batch(
        [
            SearchOp(("test",), limit=5),
            GetOp(("test", "bar"), "key2"),
            ListNamespacesOp(limit=5),
            PutOp(("test",), "key3", {"data": "value3"}),
            GetOp(("test", "foo"), "key1"),
        ]
    )
    assert len(results[0]) == 2  # type: ignore[arg-type]
    assert results[1].value == {"data": "value2"}  # type: ignore[union-attr]
    assert results[2]
    assert results[3] is None
    assert results[4].value == {"data": "value1"}  # type: ignore[union-attr]
    assert store.get(("test",), "key3").value == {"data": "value3"}  # type: ignore[union-attr]


def test_batch_puts_and_deletes(store: MemvaultStore) -> None:
    store.put(("test",), "key3", {"data": "old"})
    results = store.batch(
        [
            PutOp(("test",), "key1", {"data": "value1"}),
            PutOp(("test",), "key2", {"data": "value2"}),
            PutOp(("test",), "key3", None),
        ]
    )
    assert results == [None, None, None]
    assert store.get(("test",), "key1").value == {"data": "value1"}  # type: ignore[union-attr]
    assert store.get(("test",), "key2").value == {"data": "value2"}  # type: ignore[union-attr]
    assert store.get(("test",), "key3") is None
    results = store.batch([GetOp(("test",), k) for k in ("key1", "key2", "missing")])
    assert [None if r is None else r.key for r in results] == ["key1", "key2", None]  # type: ignore[union-attr]


def test_reads_of_a_batch_see_the_store_before_its_puts_and_the_last_put_wins(
    store: MemvaultStore,
) -> None:
    results = store.batch(
        [
            PutOp(("test",), "key", {"value": 1}),
            GetOp(("test",), "key"),
            PutOp(("test",), "key", {"value": 2}),
        ]
    )
    assert results == [None, None, None]
    assert store.get(("test",), "key").value == {"value": 2}  # type: ignore[union-attr]


def test_namespaces_langgraph_refuses(store: MemvaultStore) -> None:
    doc = {"foo": "bar"}
    for namespace in [(), ("the", "thing.about"), ("some", "fun", ""), ("langgraph", "foo")]:
        with pytest.raises(InvalidNamespaceError):
            store.put(namespace, "foo", doc)
        with pytest.raises(InvalidNamespaceError):
            asyncio.run(store.aput(namespace, "foo", doc))
    namespace = ("foo", "langgraph", "foo")
    store.put(namespace, "bar", doc)
    assert store.get(namespace, "bar").value == doc  # type: ignore[union-attr]
    assert store.search(namespace, query="bar")[0].value == doc
    store.delete(namespace, "bar")
    assert store.get(namespace, "bar") is None
    # Past the public put: a "langgraph" root label is LangGraph's rule, not the store's.
    store.batch([PutOp(("langgraph", "foo"), "bar", doc)])
    assert store.search(("langgraph", "foo"))[0].value == doc
    # Ops handed to batch directly are checked too.
    with pytest.raises(NamespaceError):
        store.batch([PutOp(("a.b",), "k", doc)])
    with pytest.raises(NamespaceError):
        store.batch([SearchOp(("",))])
    with pytest.raises(NamespaceError):
        store.batch([PutOp((), "k", doc)])


def test_async_operations(store: MemvaultStore) -> None:
    async def scenario() -> None:
        await store.aput(("test", "async"), "k1", {"text": "async put"})
        await store.abatch([PutOp(("test", "async"), "k2", {"text": "batched put"})])
        item = await store.aget(("test", "async"), "k1")
        assert item is not None
        assert item.value == {"text": "async put"}
        found = await store.asearch(("test",), query="batched")
        assert found[0].key == "k2"
        assert await store.alist_namespaces(prefix=("test",)) == [("test", "async")]
        await store.adelete(("test", "async"), "k1")
        assert await store.aget(("test", "async"), "k1") is None

    asyncio.run(scenario())


def test_many_concurrent_async_operations(store: MemvaultStore) -> None:
    async def scenario() -> list[Any]:
        namespace = ("test", "foo", "bar", "baz")
        coros: list[Any] = []
        for i in range(20):
            coros += [
                store.aput((*namespace, str(i % 2)), f"key{i}", {"foo": f"bar{i}"}),
                store.aget((*namespace, str(i % 2)), f"key{i}"),
                store.alist_namespaces(max_depth=(i % 5) + 1),
                store.asearch(("test",)),
            ]
        return list(await asyncio.gather(*coros))

    assert len(asyncio.run(scenario())) == 80
    assert len(store.search(("test",), limit=100)) == 20


# -- listing namespaces -----------------------------------------------------------------------

TREE = [
    ("a", "b", "c"),
    ("a", "b", "d", "e"),
    ("a", "b", "d", "i"),
    ("a", "b", "f"),
    ("a", "c", "f"),
    ("b", "a", "f"),
    ("users", "123"),
    ("users", "456", "settings"),
    ("admin", "users", "789"),
]


def test_list_namespaces_by_prefix_suffix_depth_and_page(store: MemvaultStore) -> None:
    _put_all(store, TREE)
    below_ab = [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f")]
    assert store.list_namespaces(prefix=("a", "b")) == below_ab
    assert store.list_namespaces(suffix=("f",)) == [
        ("a", "b", "f"),
        ("a", "c", "f"),
        ("b", "a", "f"),
    ]
    assert store.list_namespaces(prefix=("a",), suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(prefix=("a", "b"), max_depth=3) == [
        ("a", "b", "c"),
        ("a", "b", "d"),
        ("a", "b", "f"),
    ]
    assert store.list_namespaces(prefix=("a", "b"), limit=2) == below_ab[:2]
    assert store.list_namespaces(prefix=("a", "b"), offset=2) == below_ab[2:]
    assert store.list_namespaces(prefix=("a", "*", "f")) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(suffix=("*", "f")) == [
        ("a", "b", "f"),
        ("a", "c", "f"),
        ("b", "a", "f"),
    ]
    assert store.list_namespaces(prefix=("nonexistent",)) == []
    assert store.list_namespaces(prefix=("users", "123")) == [("users", "123")]
    assert store.list_namespaces(prefix=("users",)) == [
        ("users", "123"),
        ("users", "456", "settings"),
    ]
    assert store.list_namespaces() == sorted(TREE)
    assert store.list_namespaces(max_depth=1) == [("a",), ("admin",), ("b",), ("users",)]


def test_list_namespaces_with_wildcards(store: MemvaultStore) -> None:
    _put_all(
        store,
        [
            ("users", "123"),
            ("users", "456"),
            ("users", "789", "settings"),
            ("admin", "users", "789"),
            ("guests", "123"),
            ("guests", "456", "preferences"),
        ],
    )
    assert store.list_namespaces(prefix=("users", "*")) == [
        ("users", "123"),
        ("users", "456"),
        ("users", "789", "settings"),
    ]
    assert store.list_namespaces(suffix=("*", "preferences")) == [("guests", "456", "preferences")]
    assert store.list_namespaces(prefix=("*", "users"), suffix=("*", "settings")) == []


def test_list_namespaces_pages_and_an_empty_store(store: MemvaultStore) -> None:
    assert store.list_namespaces() == []
    _put_all(store, [("namespace", f"sub_{i:02d}") for i in range(20)])
    for offset in (0, 5, 15):
        page = store.list_namespaces(prefix=("namespace",), limit=5, offset=offset)
        assert page == [("namespace", f"sub_{i:02d}") for i in range(offset, offset + 5)]


def test_list_namespaces_with_a_shared_first_and_last_label(store: MemvaultStore) -> None:
    tag = uuid.uuid4().hex
    namespaces = [
        (tag, "test", "documents", "public", tag),
        (tag, "test", "documents", "private", tag),
        (tag, "test", "images", "public", tag),
        (tag, "test", "images", "private", tag),
        (tag, "prod", "documents", "public", tag),
        (tag, "prod", "documents", "some", "nesting", "public", tag),
        (tag, "prod", "documents", "private", tag),
    ]
    _put_all(store, namespaces)
    assert len(store.list_namespaces(prefix=(tag, "test"))) == 4
    assert len(store.list_namespaces(prefix=(tag, "test", "documents"))) == 2
    assert len(store.list_namespaces(suffix=("public", tag))) == 4
    assert len(store.list_namespaces(prefix=(tag, "test"), suffix=("public", tag))) == 2
    assert len(store.list_namespaces(prefix=(tag, "*", "documents"))) == 5
    assert len(store.list_namespaces(suffix=("*", "public", tag))) == 4
    assert store.list_namespaces(suffix=("some", "*", "public", tag)) == [namespaces[5]]
    assert all(len(ns) <= 3 for ns in store.list_namespaces(max_depth=3))
    assert len(store.list_namespaces(max_depth=4, prefix=(tag, "*", "documents"))) == 5
    assert len(store.list_namespaces(prefix=(tag,), limit=3)) == 3
    assert len(store.list_namespaces(prefix=(tag,), offset=3)) == 4
    assert set(store.list_namespaces(prefix=(tag,))) == set(namespaces)


def test_namespace_matching_stops_at_label_boundaries(store: MemvaultStore) -> None:
    _put_all(
        store,
        [
            ("foo",),
            ("foo", "child"),
            ("foo", "child", "deep"),
            ("foobar",),
            ("foobar", "baz"),
            ("foo2",),
            ("uid", "users", "alice"),
            ("uid", "users", "malice"),
            ("uid", "a", "b", "alice"),
        ],
    )
    assert _namespaces(store, ("foo",)) == {("foo",), ("foo", "child"), ("foo", "child", "deep")}
    assert _namespaces(store, ("foobar",)) == {("foobar",), ("foobar", "baz")}
    assert _namespaces(store, ("foo2",)) == {("foo2",)}
    assert _namespaces(store, ("fo",)) == set()
    assert set(store.list_namespaces(prefix=("foo",))) == {
        ("foo",),
        ("foo", "child"),
        ("foo", "child", "deep"),
    }
    assert set(store.list_namespaces(suffix=("alice",))) == {
        ("uid", "users", "alice"),
        ("uid", "a", "b", "alice"),
    }
    assert store.list_namespaces(prefix=("uid", "*", "alice")) == [("uid", "users", "alice")]
    assert len(store.list_namespaces(prefix=("uid",))) == 3


def test_labels_are_literal_and_case_sensitive(store: MemvaultStore) -> None:
    labels = ["user_1", "userX1", "a%b", "axxb", "star*", "starX", "q?m", "br[ack]et", "Foo", "foo"]
    _put_all(store, [(label,) for label in labels] + [("user_1", "child"), ("star*", "child")])
    assert _namespaces(store, ("user_1",)) == {("user_1",), ("user_1", "child")}
    assert _namespaces(store, ("a%b",)) == {("a%b",)}
    assert _namespaces(store, ("star*",)) == {("star*",), ("star*", "child")}
    assert _namespaces(store, ("Foo",)) == {("Foo",)}
    for label in ["q?m", "br[ack]et", "star*"]:
        assert set(store.list_namespaces(prefix=(label,))) <= {(label,), (label, "child")}


def test_labels_with_a_trailing_newline_are_their_own(store: MemvaultStore) -> None:
    store.put(("users", "alice"), "k", {"v": 1})
    store.put(("users", "alice\n"), "k", {"v": 2})  # no valid user scope: stored all the same
    assert store.list_namespaces(suffix=("alice",)) == [("users", "alice")]
    assert store.list_namespaces(prefix=("users", "alice")) == [("users", "alice")]
    assert store.get(("users", "alice\n"), "k").value == {"v": 2}  # type: ignore[union-attr]
    assert _namespaces(store, ("users",)) == {("users", "alice"), ("users", "alice\n")}


# -- search -----------------------------------------------------------------------------------


def test_search_by_prefix_filter_and_page(store: MemvaultStore) -> None:
    base = "test_search_items"
    items = [
        (
            (base, "documents", "user1"),
            {"title": "Doc 1", "author": "John Doe", "tags": ["important"]},
        ),
        (
            (base, "documents", "user2"),
            {"title": "Doc 2", "author": "Jane Smith", "tags": ["draft"]},
        ),
        (
            (base, "reports", "department1"),
            {"title": "Report A", "author": "John Doe", "tags": ["final"]},
        ),
        (
            (base, "reports", "department2"),
            {"title": "Report B", "author": "Alice Johnson", "tags": ["draft"]},
        ),
    ]
    for namespace, value in items:
        store.put(namespace, f"item_{namespace[-1]}", value)
    assert {i.namespace[1] for i in store.search((base, "documents"))} == {"documents"}
    assert len(store.search((base, "reports"))) == 2
    first, second = store.search((base,), limit=2), store.search((base,), limit=2, offset=2)
    assert len(first) == len(second) == 2
    assert {i.key for i in first}.isdisjoint({i.key for i in second})
    assert len(store.search((base,))) == 4
    assert len(store.search((base,), offset=3)) == 1
    johns = store.search((base,), filter={"author": "John Doe"})
    assert sorted(i.key for i in johns) == ["item_department1", "item_user1"]
    assert len(store.search((base,), filter={"tags": ["draft"]})) == 2
    assert len(store.search((), limit=100)) == 4  # an empty prefix constrains nothing
    assert all(i.score is None for i in store.search((base,)))


def test_search_without_a_query_lists_the_most_recently_updated_first(
    store: MemvaultStore, clock: ManualClock
) -> None:
    for key in ("a", "b", "c"):
        store.put(("docs",), key, {"n": key})
        clock.advance(seconds=1)
    store.put(("docs",), "a", {"n": "a again"})
    assert [i.key for i in store.search(("docs",))] == ["a", "c", "b"]


def test_filters_compare_like_json(store: MemvaultStore) -> None:
    store.put(("items",), "item1", {"price": 10, "quantity": 5, "active": True, "name": "A"})
    store.put(("items",), "item2", {"price": 20, "quantity": 3, "active": False, "name": "B"})
    store.put(
        ("items",), "item3", {"price": 30.0, "quantity": 1, "active": True, "name": "O'Brien"}
    )
    store.put(("items",), "item4", {"price": -10, "user": {"access-level": "nested", "123abc": 1}})

    def keys(conditions: dict[str, Any]) -> list[str]:
        return sorted(i.key for i in store.search(("items",), filter=conditions))

    assert keys({"price": {"$gt": 15}}) == ["item2", "item3"]
    assert keys({"price": {"$gte": 20, "$lt": 30}}) == ["item2"]
    assert keys({"price": {"$lte": 10}}) == ["item1", "item4"]
    assert keys({"price": {"$lt": math.inf}}) == ["item1", "item2", "item3", "item4"]
    assert keys({"price": {"$gt": -math.inf}}) == ["item1", "item2", "item3", "item4"]
    assert keys({"price": {"$lt": 10**100}}) == ["item1", "item2", "item3", "item4"]
    assert keys({"price": {"$eq": math.nan}}) == []
    assert keys({"price": 30}) == ["item3"]  # 30 and 30.0 are one JSON number
    assert keys({"price": {"$ne": 10}}) == ["item2", "item3", "item4"]
    assert keys({"active": True}) == ["item1", "item3"]
    assert keys({"active": False}) == ["item2"]
    assert keys({"quantity": True}) == []  # true is not 1
    assert keys({"name": {"$gt": "A"}}) == ["item2", "item3"]  # strings compare as strings
    assert keys({"price": {"$gt": "1"}}) == []  # a string never compares with a number
    assert keys({"name": "O'Brien"}) == ["item3"]
    for hostile in ["A' OR '1'='1", "A'; --", "A' UNION SELECT * FROM entries --", "''''"]:
        assert keys({"name": hostile}) == []
    assert keys({"user.access-level": "nested"}) == ["item4"]
    assert keys({"user.123abc": 1}) == ["item4"]
    assert keys({"user": {"access-level": "nested"}}) == ["item4"]
    assert keys({"missing": None}) == ["item1", "item2", "item3", "item4"]


def test_a_query_ranks_as_memory_search_ranks(store: MemvaultStore, memory: Memory) -> None:
    """Issue 30: one ranking, the store planner's (its candidate depth, its fusion, its
    counters), restricted to the items the namespace and filter allow."""
    docs = {"a": "red apple pie", "b": "green apple tart", "c": "blue car wash"}
    store.batch([PutOp(("test",), k, {"text": v}, index=["text"]) for k, v in docs.items()])
    searches = memory.stats().get("searches", 0)
    found = store.search(("test",), query="apple pie", filter={"text": "red apple pie"})
    assert [item.key for item in found] == ["a"] and found[0].score is not None
    assert memory.stats()["searches"] == searches + 1
    hits = memory.search("apple pie", scope_of(("test",)), categories=[CATEGORY], limit=3)
    ranked = [item.key for item in store.search(("test",), query="apple pie", limit=3)]
    assert ranked[: len(hits)] == [hit.entry.metadata["key"] for hit in hits]


def test_query_search_ranks_and_filters(store: MemvaultStore) -> None:
    docs = {
        "doc1": {"text": "red apple", "color": "red", "score": 4.5},
        "doc2": {"text": "red car", "color": "red", "score": 3.0},
        "doc3": {"text": "green apple", "color": "green", "score": 4.0},
        "doc4": {"text": "blue car", "color": "blue", "score": 3.5},
    }
    store.batch([PutOp(("test",), key, value, index=["text"]) for key, value in docs.items()])
    found = store.search(("test",), query="apple", filter={"color": "red"})
    assert found[0].key == "doc1"
    assert len(found) == 2
    found = store.search(("test",), query="car", filter={"color": "red"})
    assert [i.key for i in found] == ["doc2", "doc1"]
    found = store.search(("test",), query="blue", filter={"score": {"$gt": 3.2}})
    assert len(found) == 3
    assert found[0].key == "doc4"
    found = store.search(
        ("test",), query="apple", filter={"score": {"$gte": 4.0}, "color": "green"}
    )
    assert [i.key for i in found] == ["doc3"]
    scores = [i.score for i in store.search(("test",), query="apple")]
    assert all(s is not None for s in scores)
    assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]


def test_query_search_pages(store: MemvaultStore) -> None:
    for i in range(5):
        store.put(("test",), f"doc{i}", {"text": f"test document number {i}"})
    first = store.search(("test",), query="test", limit=2)
    second = store.search(("test",), query="test", limit=2, offset=2)
    assert len(first) == len(second) == 2
    assert {i.key for i in first}.isdisjoint({i.key for i in second})
    assert len(store.search(("test",), query="test", limit=10)) == 5


def test_query_edge_cases(store: MemvaultStore) -> None:
    store.put(("test",), "doc1", {"text": "test document"})
    for query in ["", None, "   ", "test " * 100, "test!@#$%^&*()", '"OR NEAR(*']:
        assert [i.key for i in store.search(("test",), query=query)] == ["doc1"]


def test_replacing_an_item_reindexes_it(store: MemvaultStore) -> None:
    store.put(("test",), "doc1", {"text": "zany zebra Xerxes"})
    store.put(("test",), "doc2", {"text": "something about dogs"})
    store.put(("test",), "doc3", {"text": "text about birds"})
    before = store.search(("test",), query="Zany Xerxes")
    assert before[0].key == "doc1"
    store.put(("test",), "doc1", {"text": "new text about dogs"})
    after = {i.key: i.score for i in store.search(("test",), query="Zany Xerxes")}
    assert after["doc1"] < before[0].score  # type: ignore[operator]
    assert store.search(("test",), query="new text about dogs")[0].key == "doc1"
    store.put(("test",), "doc4", {"text": "new text about dogs"}, index=False)
    found = store.search(("test",), query="new text about dogs", limit=3)
    assert "doc4" not in [i.key for i in found]
    everything = store.search(("test",), query="new text about dogs")
    assert everything[-1].key == "doc4"
    assert everything[-1].score is None  # not indexed: found by filters, after the scored


def test_each_indexed_field_stands_for_the_item(memory: Memory) -> None:
    store = MemvaultStore(memory, index={"fields": ["key0", "key1", "key3"]})
    store.put(("test",), "doc1", {"key1": "xxx", "key2": "yyy", "key3": "zzz"})
    store.put(("test",), "doc2", {"key0": "uuu", "key1": "vvv", "key2": "www", "key3": "xxx"})
    found = store.search(("test",), query="xxx")
    assert {i.key for i in found} == {"doc1", "doc2"}
    best = found[0].score
    assert best == pytest.approx(found[1].score, abs=1e-5)  # the same field text: the same score
    found = store.search(("test",), query="uuu")
    assert found[0].key == "doc2"
    assert found[0].score > found[1].score  # type: ignore[operator]
    assert found[0].score == pytest.approx(best, abs=1e-5)
    found = store.search(("test",), query="www")  # key2 is not indexed
    assert all(i.score < best for i in found)  # type: ignore[operator]

    per_put = MemvaultStore(memory.with_tenant("per-put"), index={"fields": ["key17"]})
    per_put.put(
        ("test",), "doc3", {"key0": "aaa", "key1": "bbb", "key2": "ccc"}, index=["key0", "key1"]
    )
    per_put.put(
        ("test",), "doc4", {"key0": "eee", "key1": "bbb", "key3": "ggg"}, index=["key1", "key3"]
    )
    assert per_put.search(("test",), query="aaa")[0].key == "doc3"
    assert per_put.search(("test",), query="ggg")[0].key == "doc4"
    both = per_put.search(("test",), query="bbb")
    assert both[0].score == pytest.approx(both[1].score, abs=1e-5)
    assert all(i.score < best for i in per_put.search(("test",), query="ccc"))  # type: ignore[operator]
    per_put.put(("test",), "doc5", {"key0": "hhh", "key1": "iii"}, index=False)
    found = per_put.search(("test",), query="hhh")
    assert len(found) == 3
    assert next(i for i in found if i.key == "doc5").score is None
    assert per_put.search(("test",), query="nothing like it", limit=1)[0].key != "doc5"


def test_non_ascii_text(store: MemvaultStore) -> None:
    texts = ["这是中文", "これは日本語です", "이건 한국어야", "Это русский", "यह रूसी है"]
    for key, text in enumerate(texts, 1):
        store.put(("user_123", "memories"), str(key), {"text": text})
    for key, text in enumerate(texts, 1):
        assert store.search(("user_123", "memories"), query=text)[0].key == str(key)


@pytest.mark.slow
def test_concurrent_searches_with_filters(store: MemvaultStore) -> None:
    colors = ["red", "blue", "green", "yellow", "purple"]
    things = ["apple", "car", "house", "book", "phone"]
    values = [
        (
            f"doc{i}",
            {
                "text": f"{colors[i % 5]} {things[i % 5]}",
                "color": colors[i % 5],
                "score": 3.0 + (i % 5) / 2,
                "index": i,
            },
        )
        for i in range(30)
    ]
    asyncio.run(
        store.abatch(
            [PutOp(("test",), k, v) for k, v in values]
            + [PutOp(("test",), k, None) for k, _ in values]
            + [PutOp(("test",), k, v) for k, v in values]  # the last put of each item wins
        )
    )
    queries: list[tuple[str, dict[str, Any]]] = [
        ("apple", {"color": "red"}),
        ("phone", {"score": {"$gt": 4.99}}),
        ("book", {"score": {"$lte": 3.5}}),
        ("car", {"score": {"$lt": 5.1}, "color": "blue"}),
        ("house", {"index": {"$gt": 25}}),
    ]

    async def searches() -> list[Any]:
        return list(
            await asyncio.gather(*(store.asearch(("test",), query=q, filter=f) for q, f in queries))
        )

    for found, (_, conditions) in zip(asyncio.run(searches()), queries, strict=True):
        assert found
        assert all(_meets(item.value, conditions) for item in found)


BOUNDS = {"$gt": operator.gt, "$gte": operator.ge, "$lt": operator.lt, "$lte": operator.le}


def _meets(value: dict[str, Any], conditions: dict[str, Any]) -> bool:
    return all(
        all(BOUNDS[op](value[name], bound) for op, bound in condition.items())
        if isinstance(condition, dict)
        else value[name] == condition
        for name, condition in conditions.items()
    )


# -- TTL --------------------------------------------------------------------------------------


def test_ttl_restarts_on_reads_that_ask(store: MemvaultStore, clock: ManualClock) -> None:
    namespace = ("foo",)
    store.put(namespace, "item1", {"foo": "bar"}, ttl=TTL_MINUTES)
    clock.advance(seconds=4)
    assert store.get(namespace, "item1", refresh_ttl=True) is not None
    clock.advance(seconds=4)  # 8 s after the put, 4 s after the refresh
    assert len(store.search(namespace, query="foo", refresh_ttl=True)) == 1
    clock.advance(seconds=4)
    assert store.get(namespace, "item1", refresh_ttl=False) is not None
    clock.advance(seconds=3)  # 7 s after the last refresh
    assert store.search(namespace, query="bar", refresh_ttl=False) == []
    assert store.get(namespace, "item1") is None
    assert store.list_namespaces() == []  # expired items are omitted at once


def test_ttl_config_defaults_and_sweeping(memory: Memory, clock: ManualClock) -> None:
    store = MemvaultStore(memory, ttl={"default_ttl": TTL_MINUTES, "refresh_on_read": False})
    assert store.supports_ttl
    store.put(("ttl",), "default", {"n": 1})
    store.put(("ttl",), "forever", {"n": 2}, ttl=None)
    clock.advance(seconds=4)
    assert store.get(("ttl",), "default") is not None  # no refresh: refresh_on_read is off
    clock.advance(seconds=3)
    assert store.get(("ttl",), "default") is None
    assert [i.key for i in store.search(("ttl",))] == ["forever"]
    assert memory.count(include_superseded=True) == 1
    assert store.sweep_ttl() == 1
    assert asyncio.run(store.asweep_ttl()) == 0
    assert memory.list(include_expired=True).entries[0].metadata["key"] == "forever"


def test_a_put_on_an_expired_item_makes_a_new_one(store: MemvaultStore, clock: ManualClock) -> None:
    store.put(("ttl",), "k", {"n": 1}, ttl=TTL_MINUTES)
    first = store.get(("ttl",), "k", refresh_ttl=False)
    clock.advance(minutes=1)
    store.put(("ttl",), "k", {"n": 2})
    again = store.get(("ttl",), "k")
    assert again is not None and first is not None
    assert again.created_at == first.created_at + timedelta(minutes=1)


# -- memvault underneath ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("namespace", "scope"),
    [
        (("users", "alice", "memories"), "user:alice"),
        (("user", "alice"), "user:alice"),
        (("sessions", "s1", "notes"), "session:s1"),
        (("workspaces", "w1"), "workspace:w1"),
        (("orgs", "acme", "policies"), "org:acme"),
        (("memories", "alice"), "object:memories:alice"),
        (("tickets", "42", "comments"), "object:tickets:42"),
        (("docs",), "object:langgraph:docs"),
        (("users",), "object:langgraph:users"),
    ],
)
def test_namespaces_map_onto_scopes(
    sqlite_store: MemvaultStore, sqlite_memory: Memory, namespace: tuple[str, ...], scope: str
) -> None:
    assert MemvaultStore.scope_of(namespace) == Scope.parse(scope)
    sqlite_store.put(namespace, "k", {"text": "a memory"})
    (entry,) = sqlite_memory.retrieve(scope)
    assert entry.category == CATEGORY
    assert entry.metadata == {
        "namespace": list(namespace),
        "key": "k",
        "value": {"text": "a memory"},
        "ttl_minutes": None,
    }


def test_labels_that_make_no_scope_still_map_to_one() -> None:
    for namespace in [("users", "alice\n"), ("a:b", "c"), ("x" * 300, "y"), (" padded ",)]:
        scope = MemvaultStore.scope_of(namespace)
        assert (scope.kind, scope.object_type) == ("object", "langgraph")
        if len(namespace) == 2:  # the first two labels decide
            assert scope == MemvaultStore.scope_of((*namespace, "deeper"))
    with pytest.raises(InvalidScopeError):
        MemvaultStore.scope_of(())


def test_items_are_memvault_entries(
    sqlite_store: MemvaultStore, sqlite_memory: Memory, tmp_path: Path
) -> None:
    namespace = ("users", "alice", "memories")
    sqlite_store.put(
        namespace, "drink", {"text": "Alice drinks oolong tea every morning"}, index=["text"]
    )
    sqlite_store.put(namespace, "theme", {"text": "Alice prefers dark mode"}, index=["text"])
    sqlite_memory.write("Alice works in Lisbon", scope="user:alice")  # not an item: never listed
    hit = sqlite_memory.search("what does alice drink?", "user:alice")[0]
    assert hit.entry.content == "Alice drinks oolong tea every morning"
    assert set(hit.components) >= {"lexical", "dense"}
    assert hit.entry.provenance.source == "langgraph"
    assert len(sqlite_store.search(("users", "alice"))) == 2
    assert sqlite_store.list_namespaces() == [namespace]
    # erasure: memvault's delete_by_scope removes the user's items, and deletion is real
    assert sqlite_memory.delete_by_scope("user:alice") == 3
    assert sqlite_store.search(("users", "alice")) == []
    store_files = b"".join(p.read_bytes() for p in tmp_path.glob("langgraph.db*"))
    assert b"oolong" not in store_files


def test_provenance_and_tenants(sqlite_memory: Memory) -> None:
    acme = MemvaultStore(
        sqlite_memory, tenant="acme", provenance={"source": "agent", "agent_id": "a1"}
    )
    other = MemvaultStore(sqlite_memory.with_tenant("globex"))
    acme.put(("docs",), "k", {"text": "acme's"})
    other.put(("docs",), "k", {"text": "globex's"})
    assert acme.get(("docs",), "k").value == {"text": "acme's"}  # type: ignore[union-attr]
    assert other.get(("docs",), "k").value == {"text": "globex's"}  # type: ignore[union-attr]
    assert acme.list_namespaces() == other.list_namespaces() == [("docs",)]
    (entry,) = sqlite_memory.with_tenant("acme").retrieve("object:langgraph:docs")
    assert (entry.provenance.source, entry.provenance.agent_id) == ("agent", "a1")
    assert sqlite_memory.count() == 0  # the default tenant has nothing


def test_values_are_stored_faithfully(sqlite_store: MemvaultStore) -> None:
    value = {
        "text": "naïve café ☕",
        "nested": {"list": [1, 2.5, True, None, {"deep": ["x"]}], "empty": {}},
        "big": 2**62,
        "tuple": (1, 2),
    }
    sqlite_store.put(("values",), "k", value)
    stored = sqlite_store.get(("values",), "k")
    assert stored is not None
    assert stored.value == {**value, "tuple": [1, 2]}  # JSON has arrays, not tuples
    assert isinstance(stored.value["nested"]["list"][2], bool)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("not a dict", "must be a dict"),
        ({"when": __import__("datetime").datetime(2026, 1, 1)}, "not JSON"),
        ({"n": {1: "one"}}, "keys of a value must be strings"),
        ({"n": math.nan}, "finite"),
        ({"n": 2**70}, "64-bit"),
        ({"text": "\ud800"}, "Unicode"),
        ({"big": "x" * 70_000}, "MEMVAULT_MAX_METADATA_BYTES"),
    ],
)
def test_values_that_cannot_be_stored_are_refused(
    sqlite_store: MemvaultStore, value: Any, message: str
) -> None:
    with pytest.raises(ValidationError, match=re.escape(message)) as caught:
        sqlite_store.batch(
            [PutOp(("values",), "good", {"ok": 1}), PutOp(("values",), "bad", value)]
        )
    assert isinstance(caught.value, MemvaultError)
    assert sqlite_store.search(("values",)) == []  # bad input changes nothing


def test_the_ttl_sweeper_deletes_expired_items_until_stopped(
    tmp_path: Path, clock: ManualClock
) -> None:
    path = tmp_path / "swept.db"

    def stored() -> int:
        with sqlite3.connect(path) as db:
            return int(db.execute("SELECT count(*) FROM entries").fetchone()[0])

    with Memory(str(path), clock=clock) as memory:
        store = MemvaultStore(memory, ttl={"sweep_interval_minutes": 0.001})
        store.put(("ttl",), "brief", {"n": 1}, ttl=1)
        store.put(("ttl",), "kept", {"n": 2})
        clock.advance(timedelta(minutes=2))
        sweeper = store.start_ttl_sweeper()  # every 60 ms, as configured
        assert store.start_ttl_sweeper() is sweeper
        deadline = time.monotonic() + 30
        while stored() != 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert stored() == 1 and not sweeper.done()
        assert store.stop_ttl_sweeper(timeout=10) and sweeper.done()
        assert store.start_ttl_sweeper(60) is not sweeper
        store.close()  # stops the new one too
        assert [item.key for item in store.search(("ttl",))] == ["kept"]


def test_bad_requests_are_refused(sqlite_store: MemvaultStore, sqlite_memory: Memory) -> None:
    with pytest.raises(ValidationError, match=r"unsupported filter operator '\$in'"):
        sqlite_store.search(("a",), filter={"n": {"$in": [1]}})
    with pytest.raises(ValidationError, match=r"unsupported filter operator '\$regex'"):
        sqlite_store.search(("a",), filter={"n": [{"m": {"$regex": "x"}}]})
    with pytest.raises(ValidationError, match="ttl"):
        sqlite_store.put(("a",), "k", {}, ttl=0)
    with pytest.raises(ValidationError, match="index"):
        sqlite_store.put(("a",), "k", {}, index="text")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="limit"):
        sqlite_store.search(("a",), limit=-1)
    with pytest.raises(ConfigError, match="own model"):
        MemvaultStore(sqlite_memory, index={"dims": 384, "embed": "openai:text-embedding-3-small"})
    with pytest.raises(ConfigError, match="dims"):
        MemvaultStore(sqlite_memory, index={"dims": 1536})
    with pytest.raises(ValidationError, match="at most"):
        sqlite_store.put(("a",), "k", {}, ttl=1e13)
    sqlite_store.put(("a",), "k", {"x": "some text"})
    with pytest.raises(ValidationError, match="lone surrogate"):
        sqlite_store.search(("a",), query="\ud800")
    with pytest.raises(ValidationError, match="10,000"):
        asyncio.run(sqlite_store.asearch(("a",), query="word " * 2_001))
    with pytest.raises(ConfigError, match="sweep_interval_minutes"):
        MemvaultStore(sqlite_memory, ttl={"sweep_interval_minutes": 0})
    for interval in (float("inf"), 1e9, 0, -1):
        with pytest.raises(ValidationError, match="sweep_interval_minutes"):
            sqlite_store.start_ttl_sweeper(interval)
    with pytest.raises(ConfigError, match="sweep_interval_minutes"):
        MemvaultStore(sqlite_memory, ttl={"sweep_interval_minutes": 1e9})
    with pytest.raises(ConfigError, match="local store"):
        MemvaultStore("http://127.0.0.1:8765")
    with pytest.raises(ConfigError, match="omit_expired"):
        MemvaultStore(sqlite_memory, ttl={"omit_expired": False})
    with pytest.raises(ValidationError, match="store URL"):
        MemvaultStore(42)  # type: ignore[arg-type]


def test_a_store_from_a_url_owns_its_memory(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'owned.db'}"
    with MemvaultStore(url, tenant="acme") as store:
        store.put(("docs",), "k", {"text": "kept"})
        assert store.memory.tenant == "acme"
    with Memory(url, tenant="acme") as memory:
        assert MemvaultStore(memory).get(("docs",), "k").value == {"text": "kept"}  # type: ignore[union-attr]


def test_an_async_memory_serves_both_drivers(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with AsyncMemory(str(tmp_path / "async.db")) as memory:
            store = MemvaultStore(memory)
            await store.aput(("users", "bo"), "k", {"text": "awaited"})
            assert store.get(("users", "bo"), "k").value == {"text": "awaited"}  # type: ignore[union-attr]
            assert await memory.count("user:bo") == 1

    asyncio.run(scenario())


# -- a real LangGraph graph -------------------------------------------------------------------


class Context(TypedDict):
    user_id: str


class State(TypedDict, total=False):
    message: str
    recalled: list[str]


def remember(state: State, runtime: Runtime[Context]) -> State:
    """Recall what the user said before that is relevant, and remember this message."""
    assert runtime.store is not None
    namespace = ("users", runtime.context["user_id"], "memories")
    found = runtime.store.search(namespace, query=state["message"], limit=3)
    runtime.store.put(
        namespace, f"m{len(runtime.store.search(namespace))}", {"text": state["message"]}
    )
    return {"recalled": [item.value["text"] for item in found]}


async def aremember(state: State, runtime: Runtime[Context]) -> State:
    assert runtime.store is not None
    namespace = ("users", runtime.context["user_id"], "memories")
    found = await runtime.store.asearch(namespace, query=state["message"], limit=3)
    await runtime.store.aput(namespace, f"m{len(found)}", {"text": state["message"]})
    return {"recalled": [item.value["text"] for item in found]}


def test_a_langgraph_graph_remembers_across_runs(store: MemvaultStore, memory: Memory) -> None:
    builder = StateGraph(State, context_schema=Context)
    graph = builder.add_node("remember", remember).add_edge(START, "remember").compile(store=store)
    alice: Context = {"user_id": "alice"}
    first = graph.invoke({"message": "I love hiking in the Alps"}, context=alice)
    assert first["recalled"] == []
    second = graph.invoke({"message": "Where should I go hiking this summer?"}, context=alice)
    assert second["recalled"] == ["I love hiking in the Alps"]
    assert graph.invoke({"message": "Hello"}, context={"user_id": "bob"})["recalled"] == []
    hit = memory.search("mountains hiking", "user:alice")[0]
    assert hit.entry.provenance.source == "langgraph"


def test_an_async_langgraph_graph_remembers_across_runs(store: MemvaultStore) -> None:
    builder = StateGraph(State, context_schema=Context)
    graph = builder.add_node("remember", aremember).add_edge(START, "remember").compile(store=store)

    async def runs() -> tuple[dict[str, Any], dict[str, Any]]:
        alice: Context = {"user_id": "alice"}
        first = await graph.ainvoke({"message": "My cat is called Miso"}, context=alice)
        return first, await graph.ainvoke({"message": "What is my cat's name?"}, context=alice)

    first, second = asyncio.run(runs())
    assert first["recalled"] == []
    assert second["recalled"] == ["My cat is called Miso"]


# -- the README -------------------------------------------------------------------------------


def test_readme_langgraph_section_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    readme = Path(__file__).resolve().parents[2] / "README.md"
    block = re.search(
        r"## Use memvault as a LangGraph store.*?```python\n(.*?)```",
        readme.read_text(encoding="utf-8"),
        re.S,
    )
    assert block, "README has no LangGraph section"
    monkeypatch.chdir(tmp_path)
    exec(compile(block[1], "README LangGraph section", "exec"), {})
    assert capsys.readouterr().out.splitlines() == [
        "recalled: ['Alice prefers dark mode']",
        "2 memories in user:alice",
    ]
    assert (tmp_path / "agent.db").exists()


# -- the store selects and pages (issue 30) -----------------------------------------------------


def test_a_search_without_a_filter_reads_only_its_page(
    store: MemvaultStore, memory: Memory, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store selects the prefix's items by tag and pages them by update time: a search
    reads the page, not every item under the prefix (nor under its scope)."""
    for i in range(30):
        store.put(("docs", "a", "x"), f"k{i:02d}", {"n": i})
        store.put(("docs", "a", "y"), f"o{i:02d}", {"n": i})
        clock.advance(seconds=1)
    store.put(("docs", "a", "x"), "k03", {"n": 103})  # updated last: first
    read: list[list[object]] = []
    batch = memory.backend.batch

    def spying(ops: Any, stamp: Any = None) -> Any:
        results = batch(ops, stamp) if stamp is not None else batch(ops)
        read.extend(r for r in results if isinstance(r, list))
        return results

    monkeypatch.setattr(memory.backend, "batch", spying)
    page = store.search(("docs", "a", "x"), limit=4, offset=1)
    assert [item.key for item in page] == ["k29", "k28", "k27", "k26"]  # k03 was the first
    assert sum(len(r) for r in read) <= 5  # the first offset + limit, no more
    assert store.search(("docs", "a", "x"), limit=1)[0].key == "k03"
    assert len(store.search(("docs", "a"), limit=100)) == 60
    assert len(store.search(("docs", "a", "y"), limit=100, filter={"n": 3})) == 1


def test_items_of_a_store_written_before_prefix_tags_are_found(memory: Memory) -> None:
    """A store whose items carry no prefix tags (written by an earlier memvault) has them
    added when a LangGraph store first reads it; nothing is lost."""
    MemvaultStore(memory).batch(
        [PutOp(("old", "u1", "notes"), f"k{i}", {"n": i}) for i in range(7)]
    )
    items = mv.Filter(memory.tenant, None, categories=(CATEGORY,))
    (found,) = memory.backend.batch([mv.ListOp(items, 100)])
    untagged = [replace(e, tags=(), revision=e.revision + 1) for e in found]
    memory.backend.batch([mv.ReplaceOp(memory.tenant, e, e.revision - 1) for e in untagged])
    fresh = MemvaultStore(memory)
    assert len(fresh.search(("old", "u1", "notes"), limit=100)) == 7
    assert len(fresh.search(("old",), limit=100, query="n")) == 7
    assert fresh.list_namespaces() == [("old", "u1", "notes")]
    (retagged,) = memory.backend.batch([mv.ListOp(items, 100)])
    assert all(TAGGED in e.tags for e in retagged) and len(retagged) == 7


def test_a_filter_that_passes_everything_changes_no_order(
    store: MemvaultStore, clock: ManualClock
) -> None:
    """Paged by the store or filtered here, the same items come in the same order: best
    first, ties most recently updated first; a page past the end is empty."""
    for i in range(8):
        store.put(("same", "u"), f"k{i}", {"text": "the same words", "kind": "doc"})
        clock.advance(seconds=1)
    plain = store.search(("same", "u"), query="same words", limit=8)
    filtered = store.search(("same", "u"), query="same words", limit=8, filter={"kind": "doc"})
    assert (
        [i.key for i in plain] == [i.key for i in filtered] == [f"k{i}" for i in range(7, -1, -1)]
    )
    assert store.search(("same", "u"), query="same words", offset=2**62, limit=5) == []
    assert store.search(("same", "u"), offset=3, limit=0) == []
