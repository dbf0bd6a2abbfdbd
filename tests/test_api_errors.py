"""Whatever a caller passes, the facilities answer with a result or a MemvaultError — never a
TypeError, AttributeError or another accident of the implementation."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memvault import Memory, MemvaultError
from memvault.testing import HashEmbedder

SURROGATE_TEXT = st.text(
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF) | st.characters(max_codepoint=0x7F),
    min_size=1,
    max_size=8,
)
EDGE_PAST = datetime.fromisoformat("0001-01-01T00:00:00+14:00")
EDGE_FUTURE = datetime.fromisoformat("9999-12-31T23:59:59-05:00")
NESTED = st.recursive(st.integers(), lambda inner: st.lists(inner, max_size=2), max_leaves=60)
DEEP = st.integers(33, 60).map(lambda depth: eval("[" * depth + "1" + "]" * depth))
ANYTHING = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=12),
    SURROGATE_TEXT,
    st.sampled_from(["fact", "decision", "user", "tool", "user_turn", "llm_promoted", "s1", "u1"]),
    st.sampled_from([float("nan"), float("inf"), -float("inf"), "user:\ud800", "x\udcff"]),
    st.sampled_from([2**63, -(2**63) - 1, 10**400, EDGE_PAST, EDGE_FUTURE]),
    st.lists(st.text(max_size=5) | SURROGATE_TEXT, max_size=3),
    st.dictionaries(st.text(max_size=5) | SURROGATE_TEXT, st.integers() | st.floats(), max_size=2),
    NESTED,
    DEEP,
    st.dictionaries(st.just("k"), DEEP, min_size=1),
)


@pytest.fixture(scope="module")
def memory() -> Memory:
    memory = Memory("memory://", embedder=HashEmbedder())
    memory.create_session("u1", session_id="s1")
    memory.set_data_loaded("s1")
    memory.append_record("s1", "user", "hello there")
    return memory


OPERATIONS: dict[str, Callable[[Memory, Any, Any], Any]] = {
    "create_session": lambda m, a, b: m.create_session(a, title=b),
    "create_session_private": lambda m, a, b: m.create_session("u1", private=a, metadata=b),
    "append_record": lambda m, a, b: m.append_record("s1", a, b),
    "append_record_tool": lambda m, a, b: m.append_record(
        "s1", "tool", "x", tool_name=a, object_ids=b
    ),
    "search_records": lambda m, a, b: m.search_records(a, session_id=b),
    "add_session_memory": lambda m, a, b: m.add_session_memory("s1", a, category=b),
    "add_session_memory_source": lambda m, a, b: m.add_session_memory(
        "s1", "x y", source=a, native=b
    ),
    "add_finding": lambda m, a, b: m.add_finding("s1", a, tags=b),
    "add_finding_source": lambda m, a, b: m.add_finding("s1", "a b c", source=a, tool_originated=b),
    "findings": lambda m, a, b: m.findings("s1", tags=a, text=b),
    "add_global_memory": lambda m, a, b: m.add_global_memory(a, "likes tea", session_id=b),
    "pin": lambda m, a, b: m.pin(a, category=b),
    "demote": lambda m, a, b: m.demote(a, b),
    "system_prompt": lambda m, a, b: m.system_prompt(a, base=b),
    "build_context": lambda m, a, b: m.build_context("s1", a, tz=b),
    "recall": lambda m, a, b: m.recall("s1", 500, query=a, limit=b),
    "rename_session": lambda m, a, b: m.rename_session(a, b),
    "set_data_loaded": lambda m, a, b: m.set_data_loaded("s1", a),
    "delete_session": lambda m, a, b: m.delete_session(a),
    "list_sessions": lambda m, a, b: m.list_sessions(a, limit=b),
    "write": lambda m, a, b: m.write(a, scope="user:u1", tags=b),
    "write_scope": lambda m, a, b: m.write("x", scope=a, metadata=b),
    "write_ttl": lambda m, a, b: m.write("x", scope="user:u1", ttl=a, provenance=b),
    "write_many": lambda m, a, b: m.write_many([{"content": a, "scope": "user:u1", "tags": b}]),
    "write_many_item": lambda m, a, b: m.write_many([a, b]),
    "search": lambda m, a, b: m.search(a, "user:u1", metadata=b),
    "search_weights": lambda m, a, b: m.search("x", "user:u1", lexical_weight=a, min_score=b),
    "search_more": lambda m, a, b: m.search("x", "user:u1", diversity=a, recency_weight=b),
    "retrieve": lambda m, a, b: m.retrieve(a, tags=b),
    "update": lambda m, a, b: m.update(a, content=b),
    "promote": lambda m, a, b: m.promote(a, b),
    "count": lambda m, a, b: m.count(a, tags=b),
    "count_since": lambda m, a, b: m.count("user:u1", since=a, tags=b),
    "write_dates": lambda m, a, b: m.write("x", scope="user:u1", created_at=a, expires_at=b),
    "write_many_outer": lambda m, a, b: m.write_many(a),
    "search_categories": lambda m, a, b: m.search("x", "user:u1", categories=a, limit=b),
    "compact": lambda m, a, b: m.compact(a, lambda entries: b),
    "reembed": lambda m, a, b: m.reembed(batch_size=a),
    "list_cursor": lambda m, a, b: m.list(cursor=a, order=b),
}


@pytest.mark.parametrize("name", OPERATIONS)
def test_bad_arguments_raise_memvault_errors_only(memory: Memory, name: str) -> None:
    operation = OPERATIONS[name]

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(a=ANYTHING, b=ANYTHING)
    def check(a: Any, b: Any) -> None:
        with contextlib.suppress(MemvaultError):
            operation(memory, a, b)

    check()


def test_generators_are_checked_like_lists(memory: Memory) -> None:
    """One-shot iterators are read before the edge check, so a surrogate inside one is caught."""
    entry = memory.write("a note", scope="user:u1")
    attempts: list[Callable[[], Any]] = [
        lambda: memory.write("x", scope="user:u1", tags=(t for t in ["\ud800"])),
        lambda: memory.update(entry.id, tags=(t for t in ["ok", "\udcff"])),
        lambda: memory.append_record("s1", "user", "x", object_ids=(i for i in ["\ud800"])),
        lambda: memory.compact([entry.id], lambda entries: "summary \ud800"),
    ]
    for attempt in attempts:
        with pytest.raises(MemvaultError):
            attempt()
    kept = memory.write("a fact about generators", scope="user:u9", tags=(t for t in ["kept"]))
    assert kept.tags == ("kept",)


@pytest.mark.parametrize(
    "call",
    [
        lambda m, big: m.search("x", big),  # a malformed scope
        lambda m, big: m.write("x", scope="user:a", category=big),
        lambda m, big: m.list("user:a", cursor=big),
        lambda m, big: m.list("user:a", order=big),
        lambda m, big: m.search("x", "user:a", limit=big),
        lambda m, big: m.get(big),
        lambda m, big: m.append_record(m.create_session("u").id, big, "hi"),  # a role
    ],
)
def test_an_error_never_echoes_a_huge_argument(memory: Memory, call: Any) -> None:
    with pytest.raises(MemvaultError) as caught:
        call(memory, "q" * 5_000)
    assert len(str(caught.value)) < 400, str(caught.value)[:200]


def test_a_mapping_item_with_an_unknown_key_names_it_not_python_internals() -> None:
    with Memory(":memory:", embedder=HashEmbedder()) as memory:
        report = memory.write_many(
            [{"content": "x", "scope": "user:a", "tgas": ["a"]}, {"scope": "user:a"}]
        )
    reasons = [item.reason for item in report.items]
    assert reasons == [
        "unknown field(s): tgas; accepted: category, content, context, created_at, expires_at, "
        "metadata, provenance, scope, tags",
        "missing required field(s): content",
    ]


def test_a_store_given_as_a_path_or_a_wrong_type(tmp_path) -> None:
    from pathlib import Path

    from memvault import ConfigError, Memory

    with Memory(Path(tmp_path) / "m.db") as memory:
        assert memory.count() == 0
    with pytest.raises(ConfigError, match="store must be"):
        Memory(42)  # type: ignore[arg-type]
