"""The core's plans, driven by hand: no database, no driver."""

from collections.abc import Generator
from datetime import UTC, datetime
from typing import Any

import pytest

from memvault import ConfigError, ConflictError, MemoryEntry, Provenance, Scope, Settings
from memvault.core import Invoke, Planner, decode_cursor, encode_cursor, merge_provenance
from memvault.ids import new_id
from memvault.store.ops import DeleteOp, GetOp, PutOp, ReplaceOp
from memvault.testing import HashEmbedder

NOW = datetime(2026, 3, 1, tzinfo=UTC)


def planner() -> Planner:
    return Planner("t", Settings(), lambda: NOW, HashEmbedder())


def embed_step(plan: Any, step: Any) -> Any:
    """Answer an embedding step the way a driver would."""
    assert isinstance(step, Invoke)
    assert step.blocking
    return plan.send(step.fn(*step.args))


def entry(revision: int = 1, **changes: Any) -> MemoryEntry:
    base = MemoryEntry(
        id="E1",
        scope=Scope.user("u"),
        content="text",
        created_at=NOW,
        updated_at=NOW,
        valid_from=NOW,
        revision=revision,
    )
    return MemoryEntry(**{**{f: getattr(base, f) for f in base.__slots__}, **changes})


def finish(plan: Generator[Any, Any, Any], value: Any) -> Any:
    with pytest.raises(StopIteration) as done:
        plan.send(value)
    return done.value.value


def test_update_retries_after_a_lost_race() -> None:
    plan: Any = planner().update("E1", content="new")
    assert next(plan) == (GetOp("t", "E1"),)
    (replace,) = embed_step(plan, plan.send([entry(revision=1)]))
    assert isinstance(replace, ReplaceOp) and replace.expected_revision == 1
    assert replace.chunks is not None and len(replace.chunks) == 1
    pause = plan.throw(ConflictError("raced"))
    assert isinstance(pause, Invoke)
    assert pause.blocking
    assert 0 < pause.args[0] <= 0.075
    assert plan.send(None) == (GetOp("t", "E1"),)
    (replace,) = embed_step(plan, plan.send([entry(revision=2, content="theirs")]))
    assert replace.expected_revision == 2
    result = finish(plan, [None])
    assert (result.content, result.revision) == ("new", 3)


def test_update_gives_up_after_repeated_conflicts() -> None:
    plan: Any = planner().update("E1", content="new")
    next(plan)
    with pytest.raises(ConflictError, match="gave up after 30"):
        for _ in range(40):
            embed_step(plan, plan.send([entry()]))
            plan.throw(ConflictError("raced"))
            plan.send(None)


def test_compact_invokes_the_callback_between_read_and_write() -> None:
    def callback(entries: Any) -> str:
        return "merged"

    plan: Any = planner().compact(["E1"], callback)
    assert next(plan) == (GetOp("t", "E1"),)
    step = plan.send([entry()])
    assert isinstance(step, Invoke) and step.fn is callback
    (put,) = embed_step(plan, plan.send("merged"))
    assert isinstance(put, PutOp)
    assert put.entry.compacted_from_ids == ("E1",)
    assert finish(plan, [None]).content == "merged"


def test_compact_deleting_its_sources_retries_a_race_but_not_a_changed_source() -> None:
    plan: Any = planner().compact(["E1"], lambda entries: "merged", delete_sources=True)
    next(plan)
    plan.send([entry()])
    assert embed_step(plan, plan.send("merged")) == (GetOp("t", "E1"),)  # a re-read
    put, delete = plan.send([entry()])
    assert isinstance(put, PutOp) and delete == DeleteOp("t", "E1", expected_revision=1)
    assert isinstance(plan.throw(ConflictError("a neighbour raced")), Invoke)
    assert plan.send(None) == (GetOp("t", "E1"),)
    with pytest.raises(ConflictError, match="E1 changed meanwhile; compact again"):
        plan.send([entry(revision=2)])


def test_write_embeds_then_puts_with_the_duplicate_threshold() -> None:
    plan: Any = planner().write("likes tea", scope="user:u")
    (put,) = embed_step(plan, next(plan))
    assert put.duplicate_threshold == 0.85
    assert put.chunks[0].vector.shape == (64,)
    assert finish(plan, [None]).content == "likes tea"


def test_write_returns_the_existing_entry_for_a_near_duplicate() -> None:
    """The put answers with the twin as its transaction read it: no second transaction (in
    which the twin could be gone, and a NotFoundError name an id the caller never gave)."""
    p = planner()
    plan: Any = p.write("likes tea", scope="user:u")
    embed_step(plan, next(plan))
    counted = plan.send([entry()])  # the restatement counts as a use of its twin: no op
    assert isinstance(counted, Invoke) and counted.args[1] == ("E1",)
    merged = finish(plan, counted.fn(*counted.args))
    assert merged.id == "E1" and merged.duplicate
    assert p.stats.snapshot() == {"near_duplicate": 1}
    assert p.uses.pending("t", ["E1"])["E1"].restated == 1


def test_merge_provenance() -> None:
    a = entry(provenance=Provenance(source="s", agent_id="a", confidence=0.8))
    b = entry(provenance=Provenance(source="s", agent_id="b", tool_originated=True))
    merged = merge_provenance([a, b])
    assert merged == Provenance(source="s", confidence=0.8, tool_originated=True)


def test_cursor_round_trip() -> None:
    cursor = encode_cursor(entry(), "newest")
    assert decode_cursor(cursor, "newest") == (NOW, "E1")


def test_ids_are_strictly_increasing_even_when_the_clock_stalls() -> None:
    ids = [new_id(NOW) for _ in range(1000)]
    assert ids == sorted(ids) and len(set(ids)) == 1000
    assert all(len(i) == 26 for i in ids)


def test_embedder_answers_are_checked() -> None:
    class Broken(HashEmbedder):
        def embed(self, texts: Any) -> Any:
            return super().embed(texts)[:, :3]

    plan: Any = Planner("t", Settings(), lambda: NOW, Broken()).write("x", scope="user:u")
    step = next(plan)
    with pytest.raises(ConfigError, match="expected \\(1, 64\\)"):
        plan.send(step.fn(*step.args))


def test_opening_reads_the_embedding_record_and_writes_only_the_first_time() -> None:
    from memvault.store.ops import EmbeddingInfoOp, StoredEmbeddingOp

    known: Any = planner().check_embedding()
    (read,) = next(known)
    assert isinstance(read, StoredEmbeddingOp)
    assert not read.writes
    assert finish(known, [("hash-64", 64)]) is None
    first: Any = planner().check_embedding()
    next(first)
    (claim,) = first.send([None])
    assert isinstance(claim, EmbeddingInfoOp)
    assert claim.writes
    assert finish(first, [("hash-64", 64)]) is None
