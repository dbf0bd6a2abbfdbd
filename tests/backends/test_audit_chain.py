"""The audit log's hash chain on real stores: an attacker with the database file (the
append-only trigger dropped first) who edits, deletes, reorders, forges or nulls an event is
found out at the first event that does not fit; erasures are not; concurrent writers of one
tenant keep one chain; a keyed chain needs its key."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import sqlean

from memvault import AuditKeyError, AuditVerification, Memory
from memvault.config import Settings
from memvault.store import migrations
from memvault.store.base import Backend
from memvault.store.inmemory import InMemoryBackend
from memvault.store.sqlite import SQLiteBackend, split_statements
from memvault.testing import HashEmbedder

KEY = "a-long-audit-key-of-the-operator"
COLUMNS = "tenant, at, actor, operation, change, entry_id, scope, note, prev, hash, checkpoint"


def _story(memory: Memory) -> dict[str, int]:
    """Writes, updates, a delete and an erasure; the seqs of some of the events left."""
    entries = [memory.write(f"fact number {n}", scope=f"user:u{n % 3}") for n in range(9)]
    memory.update(entries[0].id, tags=["x"])
    memory.delete(entries[3].id)
    memory.erase(user="u1")
    memory.write("after the erasure", scope="user:u0")
    memory.update(entries[0].id, tags=["y"])
    seqs = [e.seq for e in memory.audit(order="oldest", limit=100).events]
    erased = next(e.seq for e in memory.audit(change="erased").events)
    free = min(set(range(seqs[3], seqs[-1])) - set(seqs))  # an erased event's number
    return {
        "first": seqs[0],
        "second": seqs[1],
        "middle": seqs[3],
        "erased": erased,
        "free": free,
        "last": seqs[-1],
    }


def _verify(path: Path, settings: Settings | None = None) -> AuditVerification:
    with Memory(str(path), settings=settings, embedder=HashEmbedder()) as memory:
        return memory.verify_audit()


@pytest.fixture
def made(tmp_path: Path) -> tuple[Path, dict[str, int]]:
    path = tmp_path / "m.db"
    with Memory(str(path), embedder=HashEmbedder()) as memory:
        seqs = _story(memory)
        assert memory.verify_audit().intact
    return path, seqs


def _tamper(path: Path, *statements: str) -> None:
    """What an attacker with the file does: drop the trigger, change rows."""
    conn = sqlean.connect(str(path))
    conn.execute("DROP TRIGGER audit_log_append_only")
    for statement in statements:
        conn.execute(statement)
    conn.commit()
    conn.close()


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("actor", "'someone else'"),
        ("operation", "'restore'"),
        ("change", "'deleted'"),
        ("entry_id", "'01ARZ3NDEKTSV4RRFFQ69G5FAV'"),
        ("scope", "'user:mallory'"),
        ("note", "'nothing to see'"),
        ("at", "at + 1"),
    ],
)
def test_an_edited_field_is_found_at_its_event(
    made: tuple[Path, dict[str, int]], column: str, value: str
) -> None:
    path, seqs = made
    _tamper(path, f"UPDATE audit_log SET {column} = {value} WHERE seq = {seqs['middle']}")
    found = _verify(path)
    assert not found.intact and found.first_bad_seq == seqs["middle"]
    assert "changed since it was written" in found.reason


def test_an_event_moved_to_another_tenant_is_missed_by_one_and_forged_in_the_other(
    made: tuple[Path, dict[str, int]],
) -> None:
    path, seqs = made
    _tamper(path, f"UPDATE audit_log SET tenant = 'other' WHERE seq = {seqs['middle']}")
    mine = _verify(path)
    assert not mine.intact and mine.first_bad_seq is not None
    assert mine.first_bad_seq > seqs["middle"]
    with Memory(str(path), tenant="other", embedder=HashEmbedder()) as memory:
        theirs = memory.verify_audit()
    assert not theirs.intact and theirs.first_bad_seq == seqs["middle"]


def test_an_edited_checkpoint_is_found(made: tuple[Path, dict[str, int]]) -> None:
    path, seqs = made
    edited = '\'{"removed": 1, "gaps": []}\''
    _tamper(path, f"UPDATE audit_log SET checkpoint = {edited} WHERE seq = {seqs['erased']}")
    found = _verify(path)
    assert not found.intact and found.first_bad_seq is not None
    assert found.first_bad_seq <= seqs["erased"]


def test_a_deleted_event_is_found_at_the_next(made: tuple[Path, dict[str, int]]) -> None:
    path, seqs = made
    _tamper(path, f"DELETE FROM audit_log WHERE seq = {seqs['second']}")
    found = _verify(path)
    assert not found.intact and found.first_bad_seq is not None
    assert found.first_bad_seq > seqs["second"]
    assert "no erasure says so" in found.reason


def test_the_newest_event_deleted_is_found(made: tuple[Path, dict[str, int]]) -> None:
    path, seqs = made
    _tamper(path, f"DELETE FROM audit_log WHERE seq = {seqs['last']}")
    found = _verify(path)
    assert not found.intact and found.first_bad_seq == seqs["last"]
    assert "newest events were removed" in found.reason


def test_two_events_swapped_are_found(made: tuple[Path, dict[str, int]]) -> None:
    path, seqs = made
    a, b = seqs["second"], seqs["middle"]
    _tamper(
        path,
        f"CREATE TEMP TABLE kept AS SELECT seq, {COLUMNS} FROM audit_log WHERE seq IN ({a}, {b})",
        f"UPDATE audit_log SET ({COLUMNS}) = (SELECT {COLUMNS} FROM kept WHERE seq = {b}) "
        f"WHERE seq = {a}",
        f"UPDATE audit_log SET ({COLUMNS}) = (SELECT {COLUMNS} FROM kept WHERE seq = {a}) "
        f"WHERE seq = {b}",
    )
    found = _verify(path)
    assert not found.intact and found.first_bad_seq == a


@pytest.mark.parametrize("where", ["free", "end"])
def test_a_forged_event_is_found(made: tuple[Path, dict[str, int]], where: str) -> None:
    """A copy of a real event (its hash too) put where an erased one was, or after the last."""
    path, seqs = made
    seq = seqs["free"] if where == "free" else seqs["last"] + 1
    copied = f"INSERT INTO audit_log (seq, {COLUMNS}) SELECT {seq}, {COLUMNS} "
    _tamper(path, copied + f"FROM audit_log WHERE seq = {seqs['middle']}")
    found = _verify(path)
    assert not found.intact and found.first_bad_seq == seq


def test_a_forged_event_without_a_hash_is_found(made: tuple[Path, dict[str, int]]) -> None:
    path, seqs = made
    _tamper(
        path,
        f"INSERT INTO audit_log (seq, tenant, at, actor, operation, change) VALUES "
        f"({seqs['free']}, 'default', 0, 'mallory', 'write', 'created')",
    )
    found = _verify(path)
    assert not found.intact and found.first_bad_seq == seqs["free"]
    assert "no hash" in found.reason


@pytest.mark.parametrize("which", ["first", "middle", "last"])
def test_a_nulled_hash_is_found(made: tuple[Path, dict[str, int]], which: str) -> None:
    path, seqs = made
    _tamper(path, f"UPDATE audit_log SET hash = NULL, prev = NULL WHERE seq = {seqs[which]}")
    found = _verify(path)
    assert not found.intact and found.first_bad_seq == seqs[which]


def test_a_recomputed_chain_is_found_by_the_key(tmp_path: Path) -> None:
    """Unkeyed, an attacker recomputes the chain after an edit and it verifies: that is the
    documented limit; keyed, the same recomputation (without the key) does not."""
    keyed = Settings(audit_key=KEY)
    for settings, caught in ((Settings(), False), (keyed, True)):
        path = tmp_path / f"{caught}.db"
        with Memory(str(path), settings=settings, embedder=HashEmbedder()) as memory:
            _story(memory)
        _recompute(path, edit="UPDATE audit_log SET actor = 'mallory' WHERE seq = 1")
        assert _verify(path, settings).intact is not caught


def _recompute(path: Path, edit: str) -> None:
    """Edit, then rebuild every hash and the head without a key (as anyone with the file)."""
    from memvault.store.audit_chain import Hasher, Head, Link, chained
    from memvault.store.sql import event_from_row

    _tamper(path, edit)
    conn = sqlean.connect(str(path))
    rows = conn.execute(
        "SELECT seq, tenant, at, actor, operation, change, entry_id, scope, note, checkpoint "
        "FROM audit_log WHERE tenant = 'default' ORDER BY seq"
    ).fetchall()
    events = [event_from_row(row[:9]) for row in rows]
    links: list[Link] = chained(Hasher(), "default", None, events, [r[9] for r in rows])
    for link in links:
        conn.execute(
            "UPDATE audit_log SET prev = ?, hash = ? WHERE seq = ?",
            (link.prev, link.hash, link.event.seq),
        )
    head = Head(links[-1].event.seq, str(links[-1].hash))
    conn.execute(
        "UPDATE store_info SET value = ? WHERE key = 'audit_head:default'", (head.to_text(),)
    )
    conn.commit()
    conn.close()


def test_a_keyed_chain_fails_with_another_key_at_its_first_event(tmp_path: Path) -> None:
    path = tmp_path / "k.db"
    keyed = Settings(audit_key=KEY)
    with Memory(str(path), settings=keyed, embedder=HashEmbedder()) as memory:
        _story(memory)
        found = memory.verify_audit()
    assert found.intact and found.keyed
    first = found.head_seq - found.events + 1
    for other in (Settings(audit_key=KEY + "-not"), Settings()):
        wrong = _verify(path, other)
        assert not wrong.intact and "not the chain's" in wrong.reason
        assert wrong.first_bad_seq is not None and wrong.first_bad_seq <= first + 1


def test_a_write_with_another_key_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "k.db"
    with Memory(str(path), settings=Settings(audit_key=KEY), embedder=HashEmbedder()) as memory:
        memory.write("keyed", scope="user:a")
    for other in (Settings(), Settings(audit_key=KEY + "-not")):
        with Memory(str(path), settings=other, embedder=HashEmbedder()) as memory:
            with pytest.raises(AuditKeyError, match="MEMVAULT_AUDIT_KEY"):
                memory.write("unkeyed", scope="user:a")
            assert memory.count() == 1  # nothing written: the chain is whole
    assert _verify(path, Settings(audit_key=KEY)).intact


def test_events_written_before_the_chain_are_unchained(tmp_path: Path) -> None:
    """A store at schema 6 with events gets chains from its migration on; the old events are
    counted apart, and nulling a newer event's hash is not mistaken for one of them."""
    path = tmp_path / "old.db"
    conn = sqlean.connect(str(path))
    conn.execute(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
        "checksum TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    for migration in migrations.load("sqlite")[:6]:
        for statement in split_statements(migration.sql):
            conn.execute(statement)
        now = datetime.now(UTC).isoformat()
        conn.execute(
            "INSERT INTO schema_migrations VALUES (?, ?, ?, ?)",
            (migration.version, migration.name, migration.checksum, now),
        )
    for n in range(3):
        conn.execute(
            "INSERT INTO audit_log (tenant, at, actor, operation, change, entry_id, scope) "
            "VALUES ('default', ?, 'local', 'write', 'created', ?, 'user:a')",
            (n, f"old-{n}"),
        )
    conn.commit()
    conn.close()
    with Memory(str(path), embedder=HashEmbedder()) as memory:
        memory.write("new", scope="user:a")
        memory.write("newer", scope="user:a")
        found = memory.verify_audit()
    assert found.intact and (found.events, found.unchained) == (5, 3)
    assert "3 events before the chain began" in found.summary()
    _tamper(path, "UPDATE audit_log SET hash = NULL, prev = NULL WHERE seq = 4")
    nulled = _verify(path)
    assert not nulled.intact and nulled.first_bad_seq == 4


# -- concurrent writers of one tenant --------------------------------------------------------

WRITERS, WRITES = 6, 8


def _crowd(memories: list[Memory], erasing: bool = False) -> None:
    """WRITERS threads, each with one of ``memories`` (in turn), writing and updating; with
    ``erasing``, every other thread also erases a user and deletes a session each round."""
    errors: list[BaseException] = []
    barrier = threading.Barrier(WRITERS)

    def work(n: int) -> None:
        memory = memories[n % len(memories)]
        try:
            barrier.wait(timeout=30)
            for k in range(WRITES):
                entry = memory.write(f"writer {n} fact {k}", scope=f"user:w{n}")
                memory.update(entry.id, tags=["seen"])
                if erasing and n % 2:
                    memory.write(f"gone {n} {k}", scope=f"user:e{n}-{k}")
                    memory.erase(user=f"e{n}-{k}")
                    session = memory.create_session(f"s{n}")
                    memory.append_record(session.id, "user", "hello")
                    memory.delete_session(session.id)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not errors, errors


@pytest.fixture(params=["memory", "sqlite"])
def opened(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Backend]]:
    """Backends on one store: the same object in memory, one per connection for SQLite."""
    made: list[Backend] = []
    shared = InMemoryBackend()

    def backend() -> Backend:
        one: Backend = (
            shared if request.param == "memory" else SQLiteBackend(str(tmp_path / "c.db"))
        )
        made.append(one)
        return one

    yield backend
    for one in made:
        one.close()


def test_concurrent_writers_of_one_tenant_keep_one_chain(opened: Callable[[], Backend]) -> None:
    memories = [Memory(opened(), embedder=HashEmbedder()) for _ in range(3)]
    _crowd(memories)
    found = memories[0].verify_audit()
    assert found.intact, found.reason
    assert found.events == WRITERS * WRITES * 2
    erased = memories[1].erase(user="w2")
    assert erased.total == WRITES
    after = memories[2].verify_audit()
    assert after.intact and after.removed == WRITES * 2


def test_concurrent_erasures_and_writers_keep_a_verifiable_chain(
    opened: Callable[[], Backend],
) -> None:
    memories = [Memory(opened(), embedder=HashEmbedder()) for _ in range(3)]
    _crowd(memories, erasing=True)
    found = memories[0].verify_audit()
    assert found.intact, found.reason
    assert found.erasures == WRITERS // 2 * WRITES


def _pg_backend(dsn: str, settings: Settings | None = None) -> Any:
    from memvault.store.postgres import PostgresBackend

    return PostgresBackend(dsn, settings or Settings(), pool_size=4)


@pytest.fixture
def pg(postgres_dsn: str) -> Iterator[Callable[..., Any]]:
    pytest.importorskip("psycopg")
    made: list[Any] = []

    def backend(settings: Settings | None = None) -> Any:
        made.append(_pg_backend(postgres_dsn, settings))
        return made[-1]

    first = backend()
    with first._connections.connection() as conn:
        conn.execute(
            "TRUNCATE entries, entry_tags, chunks, store_info, audit_log RESTART IDENTITY CASCADE"
        )
    yield backend
    for one in made:
        one.close()


def test_postgres_concurrent_writers_of_one_tenant_keep_one_chain(pg: Any) -> None:
    """Two pools (as two processes) of three threads each, each thread its own connection."""
    memories = [Memory(pg(), embedder=HashEmbedder()) for _ in range(2)]
    _crowd(memories)
    found = memories[0].verify_audit()
    assert found.intact, found.reason
    assert found.events == WRITERS * WRITES * 2
    memories[1].erase(user="w2")
    memories[0].with_tenant("t2").write("another tenant", scope="user:a")
    after = memories[0].verify_audit()
    assert after.intact and after.removed == WRITES * 2


def test_postgres_concurrent_erasures_and_writers_keep_a_verifiable_chain(pg: Any) -> None:
    memories = [Memory(pg(), embedder=HashEmbedder()) for _ in range(2)]
    _crowd(memories, erasing=True)
    found = memories[0].verify_audit()
    assert found.intact, found.reason
    assert found.erasures == WRITERS // 2 * WRITES


def _pg_tamper(backend: Any, *statements: str) -> None:
    with backend._connections.connection() as conn:
        conn.execute("DROP TRIGGER IF EXISTS audit_log_append_only ON audit_log")
        for statement in statements:
            conn.execute(statement)


def _pg_restore_trigger(backend: Any) -> None:
    with backend._connections.connection() as conn:
        conn.execute(
            "CREATE TRIGGER audit_log_append_only BEFORE UPDATE ON audit_log "
            "FOR EACH ROW EXECUTE FUNCTION audit_log_refuse_update()"
        )


def test_postgres_finds_an_edit_a_deletion_and_a_reorder(pg: Any) -> None:
    backend = pg()
    memory = Memory(backend, embedder=HashEmbedder())
    seqs = _story(memory)
    assert memory.verify_audit().intact
    cases = [
        (f"UPDATE audit_log SET actor = 'mallory' WHERE seq = {seqs['middle']}", seqs["middle"]),
        (f"DELETE FROM audit_log WHERE seq = {seqs['middle']}", None),
        (f"DELETE FROM audit_log WHERE seq = {seqs['last']}", seqs["last"]),
    ]
    try:
        with backend._connections.connection() as conn:
            rows = conn.execute(f"SELECT seq, {COLUMNS} FROM audit_log ORDER BY seq").fetchall()
        for statement, bad in cases:
            _pg_tamper(backend, statement)
            found = memory.verify_audit()
            assert not found.intact, statement
            if bad is not None:
                assert found.first_bad_seq == bad, (statement, found)
            else:
                assert found.first_bad_seq is not None and found.first_bad_seq > seqs["middle"]
            _pg_put_back(backend, rows)
            assert memory.verify_audit().intact
        a, b = seqs["second"], seqs["middle"]
        _pg_tamper(
            backend,
            f"UPDATE audit_log SET seq = -1 WHERE seq = {a}",
            f"UPDATE audit_log SET seq = {a} WHERE seq = {b}",
            f"UPDATE audit_log SET seq = {b} WHERE seq = -1",
        )
        swapped = memory.verify_audit()
        assert not swapped.intact and swapped.first_bad_seq == a
    finally:
        _pg_restore_trigger(backend)


def _pg_put_back(backend: Any, rows: list[Any]) -> None:
    names = f"seq, {COLUMNS}"
    marks = ", ".join(["%s"] * len(names.split(", ")))
    with backend._connections.connection() as conn, conn.transaction():
        conn.execute("DELETE FROM audit_log")
        with conn.cursor() as cursor:
            cursor.executemany(f"INSERT INTO audit_log ({names}) VALUES ({marks})", rows)


def test_postgres_keyed_chain_needs_its_key(pg: Any) -> None:
    keyed = Settings(audit_key=KEY)
    memory = Memory(pg(keyed), settings=keyed, embedder=HashEmbedder())
    _story(memory)
    assert memory.verify_audit().intact
    wrong = Memory(pg(), settings=Settings(audit_key=KEY + "-not"), embedder=HashEmbedder())
    found = wrong.verify_audit()
    assert not found.intact and "not the chain's" in found.reason
    with pytest.raises(AuditKeyError):
        Memory(pg(), embedder=HashEmbedder()).write("unkeyed", scope="user:a")
