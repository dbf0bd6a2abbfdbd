"""The same data gives the same search results in every backend: one analyzer, one BM25, one
choice of candidates, one ranker (the issue-14 conformance requirement)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memvault import Memory, NewEntry, Settings
from memvault.errors import ConflictError
from memvault.ids import new_id
from memvault.store import scope_index
from memvault.store.base import Backend
from memvault.store.duplicates import FACT_KEYS, fact_key
from memvault.store.inmemory import InMemoryBackend
from memvault.store.ops import ChunkRecord, Filter, GetManyOp, PutOp, ReplaceOp, SearchOp
from memvault.store.sqlite import SQLiteBackend
from memvault.testing import ManualClock
from memvault.types import Scope

from .builds import count_builds

pytestmark = pytest.mark.slow  # every backend, PostgreSQL too, on the same data

WORDS = (
    "Alice Bob visited Lisbon Berlin budget garden violin chess river code review painting "
    "recipe kitten bought studied fixed planned cooked concert trip office"
).split()
QUERIES = ["Alice visited Lisbon", "kitten recipe", "code review budget", "concert trip", "x"]
OPTIONS: list[dict[str, Any]] = [
    {},
    {"conversational": True},
    {"recency_weight": 0.3},
    {"fusion": "rrf"},
    {"lexical_weight": 1, "dense_weight": 0},
    {"include_superseded": True},
]


def _fill(memory: Memory, clock: ManualClock) -> None:
    rng = random.Random(14)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    items = [
        NewEntry(
            " ".join(rng.choices(WORDS, k=6)) + f" (note {n})",
            "workspace:same",
            created_at=start + timedelta(minutes=n * rng.choice([1, 5, 90])),
            context="earlier turn" if n % 4 else None,
        )
        for n in range(80)
    ]
    entries = memory.write_many(items).entries
    memory.supersede(entries[3].id, "Alice visited Porto instead (note 3)")
    clock.advance(timedelta(hours=1))
    memory.write("a note that expires", scope="workspace:same", ttl=60)
    clock.advance(timedelta(hours=2))


def _results(backend: Backend) -> list[list[tuple[str, float]]]:
    clock = ManualClock(datetime(2026, 2, 1, tzinfo=UTC))
    settings = Settings(near_duplicate_threshold=0)
    with Memory(backend, settings=settings, clock=clock) as memory:
        _fill(memory, clock)
        return [
            [
                (hit.entry.content, round(hit.score, 5))
                for hit in memory.search(q, "workspace:same", **o)
            ]
            for q in QUERIES
            for o in OPTIONS
        ]


def test_memory_and_sqlite_give_identical_results(tmp_path: Path) -> None:
    reference = _results(InMemoryBackend())
    assert any(reference), "the searches found something"
    assert _results(SQLiteBackend(str(tmp_path / "a.db"), Settings())) == reference
    assert _results(SQLiteBackend(":memory:", Settings())) == reference


def test_postgres_gives_the_same_results(postgres_dsn: str, tmp_path: Path) -> None:
    pytest.importorskip("psycopg_pool")
    from memvault.store.postgres import PostgresBackend

    backend = PostgresBackend(postgres_dsn, Settings())
    try:
        with backend._connections.connection() as conn:
            conn.execute("TRUNCATE entries, entry_tags, chunks, store_info, audit_log CASCADE")
        assert _results(backend) == _results(InMemoryBackend())
    finally:
        backend.close()


TRANSCRIPT = [
    ("Caroline", "I went to a LGBTQ support group yesterday and it was so powerful."),
    ("Melanie", "Oh, that's great! Max and I went camping at the beach with the kids."),
    ("Caroline", "Melanie, the support group made me think about adoption agencies."),
    ("Melanie", "My new Prius broke down on the way home, what a week."),
    ("Caroline", "Sorry to hear that! Is the Prius fixed now?"),
    ("Melanie", "Yes. I also signed up for a pottery class at Clay Works."),
    ("Caroline", "Pottery sounds fun. Jonathan Reyes teaches there, right?"),
    ("Melanie", "Jonathan is great. He told me Clay Works opens a second studio."),
] + [("Sam" if n % 2 else "Dana", f"Filler line {n} about the weather.") for n in range(60)]
ENTITY_QUERIES = [
    "What did Caroline say about the support group?",
    "What broke down on Melanie?",
    "Who teaches at Clay Works?",
    "What does Jonathan do?",
]


def _entity_results(backend: Backend) -> list[list[tuple[Any, ...]]]:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    with Memory(backend, settings=Settings(near_duplicate_threshold=0)) as memory:
        memory.write_many(
            [
                NewEntry(
                    f"{who}: {text} ({n})",
                    "workspace:talk",
                    created_at=start + timedelta(minutes=n),
                )
                for n, (who, text) in enumerate(TRANSCRIPT)
            ]
        )
        return [
            [
                (
                    h.entry.content,
                    round(h.score, 5),
                    *(round(h.components[k], 5) for k in ("speaker", "entity", "linked")),
                )
                for h in memory.search(q, "workspace:talk", conversational=True, limit=12)
            ]
            for q in ENTITY_QUERIES
        ]


@pytest.mark.parametrize("all_candidates", [2048, 6])
def test_the_entity_index_gives_the_same_results(
    any_backend: Backend, all_candidates: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Speaker, entity and linked scores, and the candidates they nominate (when not every
    entry is one), are the same in every backend."""
    monkeypatch.setattr(scope_index, "ALL_CANDIDATES", all_candidates)
    found = _entity_results(any_backend)
    assert found == _entity_results(InMemoryBackend())
    said, broke, teaches, jonathan = found
    assert all(hit[2] > 0 for hit in said[:3]) and said[0][0].startswith("Caroline")
    assert any("Prius" in hit[0] and hit[4] > 0 for hit in broke)  # linked by the Prius
    assert teaches[0][3] > 0 and "Clay Works" in teaches[0][0]
    assert any("Jonathan Reyes" in hit[0] and hit[3] > 0 for hit in jonathan)  # by first name


def _rolled_back_search_leaves_no_trace(backend: Backend) -> None:
    """A scope index built inside a transaction that already wrote (and then rolls back)
    never serves a later search: the rolled-back entry is not a candidate."""
    with Memory(backend, settings=Settings(near_duplicate_threshold=0)) as memory:
        kept = memory.write("Alice visited Lisbon", scope="workspace:rb")
        ghost = replace(kept, id=new_id(kept.created_at), content="Alice visited Lisbon again")
        vector = memory.embedder.embed(["Alice visited Lisbon"])[0]
        chunk = ChunkRecord(0, 0, len(ghost.content), vector)
        where = Filter("default", (Scope.parse("workspace:rb"),))
        search = SearchOp(where, terms=("alic",), vector=vector)
        with pytest.raises(ConflictError):
            backend.batch(
                [
                    PutOp("default", ghost, chunks=(chunk,)),
                    search,
                    ReplaceOp("default", kept, expected_revision=99),
                ]
            )
        (found,) = backend.batch([search])
        assert list(found.entry_ids) == [kept.id]
        assert memory.search("Lisbon", scope="workspace:rb")[0].entry.id == kept.id


def _fresh(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    if kind == "memory":
        return InMemoryBackend()
    if kind.startswith("sqlite"):
        file = kind == "sqlite-file"
        return SQLiteBackend(str(tmp_path / "m.db") if file else ":memory:", Settings())
    pytest.importorskip("psycopg_pool")
    from memvault.store.postgres import PostgresBackend

    backend = PostgresBackend(request.getfixturevalue("postgres_dsn"), Settings())
    with backend._connections.connection() as conn:
        conn.execute("TRUNCATE entries, entry_tags, chunks, store_info, audit_log CASCADE")
    return backend


@pytest.fixture(params=["memory", "sqlite-file", "sqlite-memory", "postgres"])
def any_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """A fresh, empty store of each built-in backend."""
    backend = _fresh(request.param, request, tmp_path)
    yield backend
    backend.close()


@pytest.fixture(params=["sqlite-file", "sqlite-memory", "postgres"])
def sql_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """A fresh, empty store of each SQL backend (those that keep scope indexes)."""
    backend = _fresh(request.param, request, tmp_path)
    yield backend
    backend.close()


def test_no_index_of_a_rolled_back_transaction_is_kept(any_backend: Backend) -> None:
    _rolled_back_search_leaves_no_trace(any_backend)


def _get_many_reads_every_id_of_its_tenant_only(backend: Backend) -> None:
    with Memory(backend) as memory:
        items = [NewEntry(f"fact number {n}", "user:a") for n in range(620)]
        ids = [e.id for e in memory.write_many(items).entries]
        other = memory.with_tenant("other").write("fact number 1", scope="user:a")
    wanted = (*reversed(ids), other.id, "01J0000000000000000000NONE")
    (found,) = backend.batch([GetManyOp("default", wanted)])
    assert sorted(e.id for e in found) == sorted(ids)  # 620: more than one query's worth
    assert {e.content for e in found} == {i.content for i in items}


def test_get_many_reads_every_id_of_its_tenant_only(any_backend: Backend) -> None:
    _get_many_reads_every_id_of_its_tenant_only(any_backend)


def _searches(memory: Memory) -> list[list[tuple[str, float]]]:
    return [
        [(h.entry.id, round(h.score, 5)) for h in memory.search(q, "workspace:same", **o)]
        for q in QUERIES
        for o in OPTIONS
    ]


def test_an_index_caught_up_with_changes_ranks_as_a_rebuilt_one(
    sql_backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Deletions, changes of expiry and validity, supersessions and new entries are applied
    to the kept index (no rebuild), and every search ranks as over an index built anew; new
    content rebuilds it."""
    monkeypatch.setattr(scope_index, "ALL_CANDIDATES", 8)  # candidates chosen, not all
    read = count_builds(monkeypatch)
    clock = ManualClock(datetime(2026, 2, 1, tzinfo=UTC))
    with Memory(sql_backend, settings=Settings(near_duplicate_threshold=0), clock=clock) as memory:
        _fill(memory, clock)
        ids = [e.id for e in memory.list("workspace:same", limit=200).entries]
        _searches(memory)

        def expire() -> None:
            memory.update(ids[8], expires_at=clock() + timedelta(seconds=30))
            clock.advance(timedelta(minutes=1))

        steps = {
            "delete": lambda: memory.delete(ids[5]),
            "update": lambda: memory.update(ids[7], tags=["x"], metadata={"k": 1}),
            "expire": expire,
            "supersede": lambda: memory.supersede(ids[10], "Alice visited Porto (note 10)"),
            "write": lambda: memory.write("kitten recipe review", scope="workspace:same"),
            "delete many": lambda: [memory.delete(i) for i in ids[20:40]],
        }
        for name, step in steps.items():
            step()
            read.clear()
            caught = _searches(memory)
            assert max(read, default=0) <= 20, f"{name}: rebuilt ({read})"
            sql_backend._cache.clear()  # type: ignore[attr-defined]
            assert _searches(memory) == caught, name
        memory.update(ids[12], content="kitten recipe rewritten")
        read.clear()
        assert memory.search("rewritten", "workspace:same")[0].entry.id == ids[12]
        assert max(read) > 60  # new chunks: rebuilt


def test_an_index_grown_by_writes_gets_its_coarse_pass(sql_backend: Backend) -> None:
    """A scope indexed while small and grown past ``coarse_min_chunks`` by writes is searched
    through a coarse pass, as one built at that size is (it used to score every vector)."""
    sql_backend._coarse_min_chunks = 64  # type: ignore[attr-defined]
    with Memory(sql_backend, settings=Settings(near_duplicate_threshold=0)) as memory:
        memory.write_many([NewEntry(f"fact number {n}", "user:a") for n in range(40)])
        memory.search("fact", "user:a")
        (table,) = [t for _, t in sql_backend._cache._items.values()]  # type: ignore[attr-defined]
        assert table.coarse is None
        memory.write_many([NewEntry(f"fact number {n}", "user:a") for n in range(40, 80)])
        hits = memory.search("fact number 77", "user:a")
        (table,) = [t for _, t in sql_backend._cache._items.values()]  # type: ignore[attr-defined]
        assert table.coarse is not None and table.coarse.bits.shape[1] == 80
        assert hits[0].entry.content == "fact number 77"


def _execute(backend: Backend, sql: str) -> list[Any]:
    """Run ``sql`` on the backend's database directly (as another program, or an older
    memvault, would have)."""
    if isinstance(backend, SQLiteBackend):
        with backend._lock:
            rows: list[Any] = backend._conn.execute(sql).fetchall()
            backend._conn.commit()
        return rows
    with backend._connections.connection() as conn:  # type: ignore[attr-defined]
        cursor = conn.execute(sql)
        return list(cursor.fetchall()) if cursor.description else []


@pytest.mark.parametrize("marker", [None, "0"])
def test_entries_are_keyed_again_when_the_store_opens(
    sql_backend: Backend, marker: str | None
) -> None:
    """A store whose entries have no fact keys (made before them: no marker) or keys of
    another rule (marker "0") gets every entry's key from the step that migrates it at open;
    a restatement of an old entry then merges with it."""
    with Memory(sql_backend) as memory:
        old = memory.write("Grace bought green tea downtown on Monday.", scope="user:a")
        memory.write_many([NewEntry(f"fact number {n}", "user:a") for n in range(2_100)])
    _execute(sql_backend, "UPDATE entries SET fact_key = NULL")
    if marker is None:
        _execute(sql_backend, "DELETE FROM store_info WHERE key = 'fact_keys'")
    else:
        _execute(
            sql_backend,
            f"INSERT INTO store_info (key, value) VALUES ('fact_keys', '{marker}') "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        )
        _execute(sql_backend, "UPDATE entries SET fact_key = 7")
    sql_backend._migrate()  # type: ignore[attr-defined]
    keys = _execute(sql_backend, "SELECT content, fact_key FROM entries")
    assert len(keys) == 2_101  # more than one statement's worth (KEYED_AT_ONCE)
    assert all(key == fact_key(content) for content, key in keys)
    assert _execute(sql_backend, "SELECT value FROM store_info WHERE key = 'fact_keys'") == [
        (str(FACT_KEYS),)
    ]
    with Memory(sql_backend) as memory:
        again = memory.write("On Monday, Grace bought green tea downtown.", scope="user:a")
    assert again.id == old.id and again.duplicate


def test_a_writes_near_duplicate_probe_never_reads_its_whole_scope(
    sql_backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The probe reads the entries of the new text's fact key: writes to a scope build no
    index of it (the probe compared each new vector with every vector of the scope)."""
    with Memory(sql_backend) as memory:
        memory.write_many([NewEntry(f"Order {n} shipped to Alice", "user:a") for n in range(300)])
        builds = count_builds(monkeypatch)
        memory.write("Order 7 shipped to Alice!", scope="user:a")
        report = memory.write_many([NewEntry("order 8 shipped to alice", "user:a")])
        assert report.counts() == {"stored": 0, "merged": 1, "refused": 0}
        assert memory.count("user:a") == 300
    assert builds == []
