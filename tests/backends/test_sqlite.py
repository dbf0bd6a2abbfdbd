"""What only the SQLite backend promises: durability, schema safety, FTS sync, real deletion."""

import asyncio
import sqlite3
from pathlib import Path

import pytest
import sqlean

from memvault import (
    AsyncMemory,
    BackendError,
    CapabilityError,
    ConfigError,
    Memory,
    NewEntry,
    SchemaError,
    Settings,
)
from memvault.store import (
    Backend,
    GetManyOp,
    GetOp,
    PutOp,
    ReplaceOp,
    migrations,
    open_backend,
    register_backend,
)
from memvault.store.duplicates import fact_key
from memvault.store.inmemory import InMemoryBackend
from memvault.store.sqlite import SQLiteBackend, path_from_url


def test_data_survives_reopening(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    with Memory(url) as memory:
        entry = memory.write("durable", scope="user:a", tags=["t"])
    with Memory(url) as memory:
        assert memory.get(entry.id) == entry
        assert memory.backend.schema_version() == 8  # type: ignore[attr-defined]


@pytest.mark.parametrize("store", ["~/memvault/m.db", "sqlite:///~/memvault/m.db"])
def test_a_home_relative_path_opens_without_a_shell(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An MCP client's config passes ``~/…`` as it is: the store still opens under home."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    with Memory(store) as memory:
        memory.write("kept", scope="user:a")
    assert (tmp_path / "memvault" / "m.db").is_file()
    assert not (tmp_path / "~").exists()


def test_default_store_is_a_file_under_memvault_home(isolated_environment: Path) -> None:
    with Memory() as memory:
        memory.write("x", scope="user:a")
    assert (isolated_environment / "memvault.db").exists()


def test_pragmas(tmp_path: Path) -> None:
    backend = SQLiteBackend(str(tmp_path / "m.db"), Settings())
    conn = backend._conn
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 30_000
    assert conn.execute("PRAGMA secure_delete").fetchone()[0] == 1
    backend.close()


def test_search_index_follows_writes_updates_and_deletes(tmp_path: Path) -> None:
    memory = Memory(str(tmp_path / "m.db"))
    other = Memory(str(tmp_path / "m.db"))  # another connection: its cached index goes stale

    def hits(term: str) -> int:
        found = other.search(term, "user:a", lexical_weight=1, dense_weight=0)
        return sum(1 for hit in found if hit.components["lexical"] > 0)

    entry = memory.write("the zebra crossed", scope="user:a")
    assert hits("zebra") == 1
    memory.update(entry.id, content="the giraffe crossed")
    assert (hits("zebra"), hits("giraffe")) == (0, 1)
    memory.delete(entry.id)
    assert hits("giraffe") == 0
    tables = memory.backend._conn.execute("SELECT name FROM sqlite_master")  # type: ignore[attr-defined]
    assert "chunks_fts" not in {name for (name,) in tables}
    memory.close()
    other.close()


@pytest.mark.parametrize("how", ["delete", "delete_by_scope", "purge_expired"])
def test_deleted_text_leaves_no_bytes_behind(tmp_path: Path, how: str) -> None:
    marker = "Xylophone-secret-4242"
    token = "qzvbmkj"  # survives the Porter stemmer unchanged
    path = tmp_path / "m.db"
    memory = Memory(str(path), clock=None)
    memory.write_many([NewEntry(f"filler {n}", "user:keep") for n in range(50)])
    entry = memory.write(
        f"my {marker} is {token} here",
        scope="session:gone",
        tags=[marker],
        context=f"context {token}",
        ttl=0.05,
    )
    if how == "delete":
        memory.delete(entry.id)
    elif how == "delete_by_scope":
        memory.delete_by_scope("session:gone")
    else:
        import time

        time.sleep(0.06)
        assert memory.purge_expired() == 1
    files = [p for p in tmp_path.iterdir() if p.name.startswith("m.db")]
    assert files
    for file in files:
        data = file.read_bytes()
        assert marker.encode() not in data, file.name
        assert token.encode() not in data, f"{file.name} still holds an indexed token"
    assert memory.count() == 50
    memory.close()


def test_batch_is_atomic(tmp_path: Path) -> None:
    backend = SQLiteBackend(str(tmp_path / "m.db"), Settings())
    memory = Memory(backend)
    existing = memory.write("x", scope="user:a")
    fresh = memory.write("y", scope="user:a")
    memory.delete(fresh.id)
    with pytest.raises(Exception, match="changed or was deleted"):
        backend.batch([PutOp("default", fresh), ReplaceOp("default", existing, 99)])
    assert backend.batch([GetOp("default", fresh.id)]) == [None]
    backend.close()


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "m.db")
    SQLiteBackend(path, Settings()).close()
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO schema_migrations VALUES (99, 'future', 'x', 'now')")
    with pytest.raises(SchemaError, match="newer than this memvault"):
        SQLiteBackend(path, Settings())


def test_edited_migration_is_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "m.db")
    SQLiteBackend(path, Settings()).close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE schema_migrations SET checksum = 'tampered' WHERE version = 1")
    with pytest.raises(SchemaError, match="must never be edited"):
        SQLiteBackend(path, Settings())


def test_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(BackendError, match="cannot open SQLite store"):
        Memory(str(path))


def test_async_writers_share_one_connection_safely(tmp_path: Path) -> None:
    async def scenario() -> int:
        async with AsyncMemory(str(tmp_path / "m.db")) as memory:
            await asyncio.gather(*(memory.write(f"e{n}", scope="user:a") for n in range(40)))
            return await memory.count("user:a")

    assert asyncio.run(scenario()) == 40


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("sqlite:///rel.db", "rel.db"),
        ("sqlite:////abs/x.db", "/abs/x.db"),
        ("sqlite:///:memory:", ":memory:"),
    ],
)
def test_sqlite_urls(url: str, path: str) -> None:
    assert path_from_url(url) == path


def test_store_urls_pick_backends(tmp_path: Path) -> None:
    settings = Settings()
    assert isinstance(open_backend(":memory:", settings), SQLiteBackend)
    assert isinstance(open_backend("memory://", settings), InMemoryBackend)
    assert isinstance(open_backend(str(tmp_path / "plain.db"), settings), SQLiteBackend)
    with pytest.raises(ConfigError, match="no backend for store URL scheme 'redis'"):
        open_backend("redis://x", settings)
    with pytest.raises(BackendError, match="malformed SQLite URL"):
        open_backend("sqlite://", settings)
    with pytest.raises(BackendError):
        open_backend("memory://somewhere", settings)


def test_third_party_backends_plug_in() -> None:
    opened: list[str] = []

    def factory(url: str, settings: Settings) -> Backend:
        opened.append(url)
        return InMemoryBackend()

    register_backend("custom", factory)
    with Memory("custom://anything") as memory:
        memory.write("x", scope="user:a")
        assert memory.count() == 1
    assert opened == ["custom://anything"]


def test_capabilities_are_declared(tmp_path: Path) -> None:
    SQLiteBackend(str(tmp_path / "m.db"), Settings()).require("multiprocess")
    with pytest.raises(CapabilityError, match="'sqlite' backend does not support persistent"):
        SQLiteBackend(":memory:", Settings()).require("persistent")
    with pytest.raises(CapabilityError, match="'memory' backend does not support persistent"):
        InMemoryBackend().require("persistent")
    with pytest.raises(ValueError, match="unknown capability"):
        InMemoryBackend().require("teleport")


def test_views_share_but_do_not_close_the_backend(tmp_path: Path) -> None:
    memory = Memory(str(tmp_path / "m.db"))
    view = memory.with_tenant("t2")
    view.close()
    memory.write("still open", scope="user:a")
    assert view.count() == 0
    memory.close()


def test_a_version_2_store_migrates_to_validity_intervals(tmp_path: Path) -> None:
    """Entries written before supersession existed hold since their creation and are current."""
    path = str(tmp_path / "v2.db")
    shipped = migrations.load("sqlite")[:2]
    with sqlean.connect(path) as conn:
        conn.execute(
            "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
            "checksum TEXT NOT NULL, applied_at TEXT NOT NULL)"
        )
        for migration in shipped:
            conn.executescript(migration.sql)
            conn.execute(
                "INSERT INTO schema_migrations VALUES (?, ?, ?, 'then')",
                (migration.version, migration.name, migration.checksum),
            )
        conn.execute(
            "INSERT INTO entries (id, tenant, scope, scope_kind, content, created_at, updated_at) "
            "VALUES ('E1', 'default', 'user:a', 'user', 'old fact', 1700000000000000, "
            "1700000000000000)"
        )
    with Memory(f"sqlite:///{path}", check_embedding=False) as memory:
        entry = memory.get("E1")
        assert entry is not None
        assert entry.valid_from == entry.created_at and entry.valid_to is None
        assert not entry.superseded and entry.supersedes == ()
        assert [e.id for e in memory.retrieve("user:a")] == ["E1"]
        assert memory.backend.schema_version() == 8  # type: ignore[attr-defined]
    with sqlean.connect(path) as conn:
        assert conn.execute("SELECT fact_key FROM entries").fetchall() == [(fact_key("old fact"),)]


@pytest.mark.parametrize("where", ["file", ":memory:"])
def test_residue_finds_what_is_there_and_not_what_was_erased(tmp_path: Path, where: str) -> None:
    store = str(tmp_path / "m.db") if where == "file" else ":memory:"
    with Memory(store) as memory:
        gone = memory.write("Quetzal-secret-7781 of the user", scope="user:gone")
        kept = memory.write("Kept-phrase-5512 of another", scope="user:kept")
        twin = memory.write("Quetzal-secret-7781 of the user", scope="user:kept")
        backend = memory.backend
        assert backend.residue([gone.id], [gone.content]) == 1  # its content lives in the twin
        assert backend.residue([kept.id, "x" * 26], []) == 1
        receipt = memory.erase(user="gone")
        assert receipt.total == 1 and receipt.residue == 0
        assert backend.residue([gone.id], []) == 0 and memory.get(twin.id) is not None


def test_reading_entries_by_id_looks_each_id_up(tmp_path: Path) -> None:
    """GetManyOp (a search's hits, a probe's nominees) uses the id index, never a scan of the
    tenant's entries (which made a search of a 100-entry scope in a 100k store take 30 ms)."""
    backend = SQLiteBackend(str(tmp_path / "m.db"), Settings())
    with Memory(backend) as memory:
        ids = [
            e.id
            for e in memory.write_many([NewEntry(f"n {i}", "user:a") for i in range(50)]).entries
        ]
    statements: list[str] = []
    backend._conn.set_trace_callback(statements.append)
    backend.batch([GetManyOp("default", tuple(ids[:10]))])
    backend._conn.set_trace_callback(None)
    (read,) = [s for s in statements if "IN (" in s]
    plan = " ".join(str(r) for r in backend._conn.execute(f"EXPLAIN QUERY PLAN {read}"))
    assert "(id=?)" in plan and "tenant=?" not in plan, plan
    backend.close()


def test_catching_an_index_up_reads_the_new_entries_by_id(tmp_path: Path) -> None:
    """The entries written since a scope's index was built are read through the id index,
    never by a scan of the scope's entries (which cost a write to a 100k scope 22 ms)."""
    backend = SQLiteBackend(str(tmp_path / "m.db"), Settings())
    with Memory(backend, settings=Settings(near_duplicate_threshold=0)) as memory:
        memory.write_many([NewEntry(f"n {i}", "user:a") for i in range(50)])
        memory.search("n", "user:a")
        statements: list[str] = []
        backend._conn.set_trace_callback(statements.append)
        memory.write("one more", scope="user:a")
        memory.search("one more", "user:a")
        backend._conn.set_trace_callback(None)
    (read,) = [s for s in statements if "json_each" in s]
    plan = " ".join(str(r) for r in backend._conn.execute(f"EXPLAIN QUERY PLAN {read}"))
    assert "(id=?)" in plan and "scope=?" not in plan, plan
    backend.close()


def test_the_near_duplicate_probe_reads_its_fact_keys_through_their_index(tmp_path: Path) -> None:
    """A write's probe looks its text's fact key up (never a scan of the scope's entries)."""
    backend = SQLiteBackend(str(tmp_path / "m.db"), Settings())
    with Memory(backend) as memory:
        memory.write_many([NewEntry(f"n {i}", "user:a") for i in range(50)])
        statements: list[str] = []
        backend._conn.set_trace_callback(statements.append)
        memory.write("n 7!", scope="user:a")
        backend._conn.set_trace_callback(None)
    (read,) = [s for s in statements if "fact_key IN" in s]
    plan = " ".join(str(r) for r in backend._conn.execute(f"EXPLAIN QUERY PLAN {read}"))
    assert "entries_fact_key (tenant=? AND scope=? AND fact_key=?)" in plan, plan
    backend.close()
