"""The embedded SQLite backend: WAL, one transaction per batch, a search index per scope.

SQL is built by pure functions (``*_sql``); :class:`SQLiteBackend` only executes it. The driver
is ``sqlean.py``, which bundles a recent SQLite on every platform, so deleted text leaves
neither the table nor, after a checkpoint, the write-ahead log. Searches read a scope's index
(:mod:`memvault.store.scope_index`), rebuilt when the scope's last audit event has moved.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import sqlean as sqlite3

from ..config import Settings
from ..errors import BackendError
from ..retrieval.candidates import Candidates
from ..types import AuditEvent
from . import index_files, migrations, ops
from .audit import DIRECT, Stamp, events
from .audit_chain import Hasher
from .base import Backend, Capabilities
from .index_cache import IndexCache, ScopeKey
from .residue import found_in, hashes_found_in
from .scope_index import ChunkTable, search
from .sql import SQL, Dialect, where_sql
from .sqlite_backup import check_backup, restore_backup, write_backup
from .sqlops import SqlOps

SAVED_FROM_ENTRIES = 2_000
"""Scope indexes of at least this many entries are saved beside the database (a smaller one
is rebuilt in under 0.1 s)."""
_ERASING = (ops.ForgetAuditOp,)
_DELETING = (
    ops.DeleteOp,
    ops.DeleteScopeOp,
    ops.DeleteMatchingOp,
    ops.PurgeExpiredOp,
    ops.TrimOp,
    ops.ForgetAuditOp,
)
_CHUNK_ROWS = (
    "SELECT c.rowid, e.id, e.created_at, e.expires_at, e.valid_from, e.valid_to, c.vector, "
    "replace(substr(e.content, c.start + 1, c.stop - c.start), char(31), ' ') || char(31) || "
    "coalesce(e.context, '') "
    "FROM entries e JOIN chunks c ON c.entry_rowid = e.rowid WHERE {where} "
    "ORDER BY e.created_at, e.id, c.seq"
)


def json_sql(column: str, key: str, value: Any) -> SQL:
    """Top-level ``key`` of the JSON ``column`` equals the JSON scalar ``value`` (true is not 1)."""
    path = '$."' + key.replace('"', '""') + '"'
    if value is None:
        return f"json_type({column}, ?) = 'null'", [path]
    if isinstance(value, bool):
        return f"json_type({column}, ?) = ?", [path, "true" if value else "false"]
    kinds = ["text"] if isinstance(value, str) else ["integer", "real"]
    marks = ", ".join("?" * len(kinds))
    return (
        f"json_type({column}, ?) IN ({marks}) AND json_extract({column}, ?) = ?",
        [path, *kinds, path, value],
    )


def _in(column: str, values: list[Any]) -> SQL:
    return f"{column} IN ({', '.join('?' * len(values))})", values


SQLITE = Dialect("?", "rowid", "entry_rowid", _in, json_sql, "-1", json.loads)


def split_statements(script: str) -> list[str]:
    """Split a SQL script into complete statements (trigger bodies stay whole)."""
    statements, current = [], ""
    for line in script.splitlines(keepends=True):
        current += line
        if sqlite3.complete_statement(current):
            if current.strip():
                statements.append(current.strip())
            current = ""
    if current.strip() and not current.strip().startswith("--"):
        statements.append(current.strip())
    return statements


def path_from_url(url: str) -> str:
    """``sqlite:///rel.db`` → ``rel.db``; ``sqlite:////abs.db`` → ``/abs.db``; ``:memory:``."""
    prefix = "sqlite:///"
    if not url.startswith(prefix) or len(url) == len(prefix):
        raise BackendError(
            f"malformed SQLite URL {url!r}: use sqlite:///relative.db, sqlite:////abs/path.db "
            "or sqlite:///:memory:"
        )
    return url[len(prefix) :]


class SQLiteBackend(SqlOps, Backend):
    """One SQLite database file (or ``:memory:``); safe for several threads and processes."""

    dialect = SQLITE
    name: ClassVar[str] = "sqlite"

    def __init__(self, path: str, settings: Settings | None = None) -> None:
        settings = settings or Settings()
        self.chain = Hasher(settings.audit_key)
        if path != ":memory:":  # a path from a config file or an MCP client never met a shell
            path = str(Path(path).expanduser())
        self.path = path
        self._lock = threading.RLock()
        self._cache: IndexCache[ChunkTable] = IndexCache(weigh=ChunkTable.weight)
        self._coarse_min_chunks = settings.coarse_min_chunks
        self._index_dir = None if path == ":memory:" else index_files.directory_for(path)
        self._saved: dict[ScopeKey, int] = {}
        """Entries in each scope's saved index file (by this process)."""
        self._unsaved: set[ScopeKey] = set()
        """Scopes whose file a deletion removed: saved again on close (not by the next search:
        a search after each deletion would write the whole file each time)."""
        self._written: set[ScopeKey] = set()
        """Scopes this process wrote entries with vectors to: their indexes are brought up to
        date and saved on close (writes themselves never read an index)."""
        self._due: set[ScopeKey] = set()
        """Scopes whose grown index is saved when the transaction that read it has ended."""
        self._changes_at_begin = 0
        """The connection's ``total_changes`` when its transaction began (see :meth:`wrote`)."""
        self._in_memory = path == ":memory:"
        lasting = not self._in_memory
        self.capabilities = Capabilities(persistent=lasting, multiprocess=lasting, backup=True)
        if not self._in_memory:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self._conn = sqlite3.connect(
                path,
                timeout=settings.sqlite_busy_timeout_ms / 1000,
                isolation_level=None,
                check_same_thread=False,
            )
            self._retry_while_locked(lambda: self._configure(settings), settings)
            self._retry_while_locked(self._migrate, settings)
            if self._index_dir is not None:
                index_files.remove_unnamed(self._index_dir)
        except sqlite3.Error as exc:
            raise BackendError(f"cannot open SQLite store {path!r}: {exc}") from exc

    @classmethod
    def from_url(cls, url: str, settings: Settings) -> SQLiteBackend:
        return cls(path_from_url(url), settings)

    @staticmethod
    def _retry_while_locked(step: Callable[[], None], settings: Settings) -> None:
        """Run ``step``, retrying while another process holds a lock SQLite will not wait for.

        Switching a new file to WAL needs a moment of exclusive access, and SQLite reports
        "database is locked" at once instead of calling its busy handler; so processes opening
        one new store together retry here, with jittered backoff, for up to the busy timeout.
        """
        deadline = time.monotonic() + settings.sqlite_busy_timeout_ms / 1000
        delay = 0.005
        while True:
            try:
                step()
                return
            except sqlite3.OperationalError as exc:
                locked = "locked" in str(exc) or "busy" in str(exc)
                if not locked or time.monotonic() + delay > deadline:
                    raise
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, 0.25)

    def _configure(self, settings: Settings) -> None:
        conn = self._conn
        conn.execute(f"PRAGMA busy_timeout = {settings.sqlite_busy_timeout_ms}")
        if not self._in_memory:
            conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA secure_delete = ON")
        conn.execute(f"PRAGMA synchronous = {settings.sqlite_synchronous}")

    def _migrate(self) -> None:
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
                "name TEXT NOT NULL, checksum TEXT NOT NULL, applied_at TEXT NOT NULL)"
            )
            applied = dict(conn.execute("SELECT version, checksum FROM schema_migrations"))
            for migration in migrations.pending(migrations.load("sqlite"), applied):
                for statement in split_statements(migration.sql):
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO schema_migrations VALUES (?, ?, ?, ?)",
                    (
                        migration.version,
                        migration.name,
                        migration.checksum,
                        datetime.now(UTC).isoformat(),
                    ),
                )
            self.key_facts(conn)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def schema_version(self) -> int:
        with self._lock:
            row = self._conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
        return int(row[0] or 0)

    def batch(self, ops: Sequence[ops.Op[Any]], stamp: Stamp = DIRECT) -> list[Any]:
        writes = any(op.writes for op in ops)
        with self._lock:
            conn = self._conn
            try:
                conn.execute("BEGIN IMMEDIATE" if writes else "BEGIN")
                self._changes_at_begin = conn.total_changes
                try:
                    results = self.run_batch(conn, ops, stamp)
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                raise BackendError(f"SQLite store {self.path!r}: {exc}") from exc
            if self._index_dir is not None:
                self._written |= _indexed_scopes(ops)
            if any(isinstance(op, _DELETING) for op in ops):
                self._truncate_log()
                self._forget_files_of_deleted(events(stamp, ops, results))
            if any(isinstance(op, _ERASING) for op in ops):
                self._forget_index_files()
            self._save_due()
        return results

    def forget_copies(self) -> None:
        """Drop the scope indexes kept in memory (they hold chunks' text and vectors)."""
        self._cache.clear()
        self._due.clear()

    def _forget_index_files(self) -> None:
        """An erasure leaves no index file behind (each holds vectors of what it erased)."""
        if self._index_dir is not None:
            index_files.remove_all(self._index_dir)
            self._saved.clear()

    def _forget_files_of_deleted(self, happened: Sequence[AuditEvent]) -> None:
        """The index files of scopes that entries were deleted from go (they hold those
        entries' vectors); this process saves its caught-up index on close."""
        scopes = {(e.tenant, e.scope) for e in happened if e.change == "deleted"}
        if self._index_dir is None or not scopes:
            return
        for tenant, scope in scopes:
            index_files.remove_scope(self._index_dir, tenant, str(scope))
        self._unsaved |= {k for k in self._saved if (k.tenant, k.scope) in scopes}

    def _truncate_log(self) -> bool:
        """Fold the write-ahead log into the database and truncate it, so deleted rows leave
        no copy behind; whether it was done (not while another connection checkpoints, or a
        reader holds an older snapshot past the busy timeout)."""
        if self._in_memory:
            return True
        busy, _, _ = self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        return not busy

    def close(self) -> None:
        """Bring the indexes of the scopes this process wrote to up to date (a large one not
        kept is read from its file, or built), save those that grew since their files (or
        whose files a deletion removed), then close (twice is fine). The next process maps
        them instead of rebuilding."""
        with self._lock:
            try:
                for key in sorted(self._written - set(self._cache.scopes())):
                    self._index_if_large(key)
                for key in self._cache.scopes():
                    self._catch_up(key)
                    kept = self._cache.latest(key)
                    grown = kept is not None and len(kept[1].entry_ids) > self._saved.get(key, 0)
                    if grown or key in self._unsaved:
                        self._save(key)
            except sqlite3.Error:  # closed already (or the file went): nothing to save
                pass
            self._cache.clear()
            self._due.clear()
            self._conn.close()

    def backup(self, target: str | Path) -> int:
        """A consistent copy of the store at ``target`` (a new file), while writers go on;
        checked with ``PRAGMA integrity_check`` before it is renamed into place. Its size."""
        with self._lock:
            return write_backup(self._conn, Path(target).expanduser())

    def restore(self, source: str | Path) -> None:
        """Replace the store's content by a backup's, checked first (integrity, a memvault
        store of a schema this version knows); then brought to this version's schema."""
        with self._lock:
            restore_backup(Path(source).expanduser(), self._conn)
            self._migrate()
            self.new_epoch(self._conn)
            self._forget_index_files()

    def check_restore(self, source: str | Path) -> None:
        check_backup(Path(source).expanduser())

    def _every_row(self) -> bytes:
        tables = self._conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        rows = [
            value if isinstance(value, bytes) else str(value).encode("utf-8", "surrogatepass")
            for (table,) in tables.fetchall()
            for row in self._conn.execute(f'SELECT * FROM "{table}"')
            for value in row
        ]
        return b"\n".join(rows)

    def residue(
        self, ids: Sequence[str], contents: Sequence[str], hashed: Sequence[str] = ()
    ) -> int | None:
        """Folds the write-ahead log in and truncates it, removes the index files (another
        process may have saved one from a snapshot older than the erasure), then scans the
        bytes of the database, its log and its index files, or every row of an in-memory
        database, for each needle as UTF-8. A log that could not be truncated (it may hold
        pages from before the erasure) counts 1."""
        with self._lock:
            live = "SELECT EXISTS (SELECT 1 FROM entries WHERE instr(content, ?) > 0)"
            unique = [c for c in contents if not self._conn.execute(live, (c,)).fetchone()[0]]
            folded = self._truncate_log()
            self._forget_index_files()
            if self._in_memory:  # the database has no file: every row of every table
                images = [self._every_row()]
            else:  # an index file here was saved since: its writer removes a stale one
                files = [Path(self.path), Path(f"{self.path}-wal")]
                if self._index_dir is not None and self._index_dir.is_dir():
                    files += sorted(self._index_dir.iterdir())
                images = [f.read_bytes() for f in files if f.is_file()]
        return found_in(images, ids, unique) + hashes_found_in(images, hashed) + (not folded)

    def duplicate_key_errors(self) -> tuple[type[Exception], ...]:
        return (sqlite3.IntegrityError,)

    def write_children(self, conn: Any, key: int, op: ops.PutOp | ops.ReplaceOp) -> None:
        entry, chunks, fresh = op.entry, op.chunks, isinstance(op, ops.PutOp)
        if not fresh:
            conn.execute("DELETE FROM entry_tags WHERE entry_rowid = ?", (key,))
        conn.executemany(
            "INSERT INTO entry_tags (entry_rowid, tag) VALUES (?, ?)",
            [(key, tag) for tag in entry.tags],
        )
        if chunks is None:
            return
        top = None
        if not fresh:
            # New chunks get keys above every key in use, never their old ones (SQLite would
            # reuse the largest once its row is gone): an index tells new content by its keys.
            (top,) = conn.execute("SELECT coalesce(max(rowid), 0) FROM chunks").fetchone()
            conn.execute("DELETE FROM chunks WHERE entry_rowid = ?", (key,))
        conn.executemany(
            "INSERT INTO chunks (rowid, entry_rowid, seq, start, stop, vector) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [
                (
                    None if top is None else top + 1 + n,
                    key,
                    chunk.seq,
                    chunk.start,
                    chunk.end,
                    None if chunk.vector is None else chunk.vector.astype(np.float32).tobytes(),
                )
                for n, chunk in enumerate(chunks)
            ],
        )

    def _scope_table(self, conn: Any, key: ScopeKey) -> ChunkTable:
        """The index of a scope for its current version: from this process's memory, else
        from the index file beside the database, else built (and saved when large)."""
        version = self.scope_version(conn, key.tenant, key.scope)
        table = self._cache.get(key, version)
        if table is not None:
            return table
        table = self.caught_up(conn, key, version)
        if table is None and self._index_dir is not None:
            table = self._from_file(conn, key, version)
        if table is None:
            rows = conn.execute(
                _CHUNK_ROWS.format(where="e.tenant = ? AND e.scope = ?"), (key.tenant, key.scope)
            )
            table = ChunkTable.from_rows(rows, key.dimension)
            self._saved.pop(key, None)
        table = table.with_coarse_pass(self._coarse_min_chunks)  # also once grown into one
        if self.wrote(conn):
            return table
        self._cache.put(key, version, table)
        if len(table.entry_ids) >= self._saved.get(key, 0) * 1.1:
            self._due.add(key)
        return table

    def _catch_up(self, key: ScopeKey) -> None:
        """Bring a kept index up to its scope's version (the last batch of an import is
        written after the index was last read): what is saved on close is then current, and
        the next process reads it instead of rebuilding."""
        with self._reading() as conn:
            version = self.scope_version(conn, key.tenant, key.scope)
            if self._cache.get(key, version) is None:
                table = self.caught_up(conn, key, version)
                if table is not None:
                    self._cache.put(key, version, table)

    def _index_if_large(self, key: ScopeKey) -> None:
        """The index of the scope, kept, if it is large enough to be saved."""
        with self._reading() as conn:
            (count,) = conn.execute(
                "SELECT count(*) FROM entries WHERE tenant = ? AND scope = ?",
                (key.tenant, key.scope),
            ).fetchone()
            if count >= SAVED_FROM_ENTRIES:
                self._scope_table(conn, key)

    @contextmanager
    def _reading(self) -> Iterator[Any]:
        """A read transaction on the connection, outside :meth:`batch` (on close)."""
        conn = self._conn
        conn.execute("BEGIN")
        self._changes_at_begin = conn.total_changes
        try:
            yield conn
        finally:
            conn.execute("COMMIT")

    def wrote(self, conn: Any) -> bool:
        return bool(conn.total_changes != self._changes_at_begin)

    def _lost_since(self, key: ScopeKey, version: tuple[str, int, int]) -> bool:
        """Whether the store lost entries the index of ``version`` holds: a new epoch (an
        erasure), or entries of the scope deleted since (read outside a transaction)."""
        now = self.scope_version(self._conn, key.tenant, key.scope)
        if now[0] != version[0]:
            return True
        delta = self.changes_since(self._conn, key.tenant, key.scope, version[1])
        return delta is None or bool(delta.deleted)

    def _save_due(self) -> None:
        """Save the indexes searches found grown (outside any transaction: see :meth:`_save`)."""
        for key in sorted(self._due):
            self._save(key)
        self._due.clear()

    def _save(self, key: ScopeKey) -> None:
        """Save the scope's index beside the database (large ones, when 10 % newer than the
        saved file; and on close): the next process maps it instead of rebuilding. Called
        outside a transaction, so both checks read the store as it is now: a stale index is
        not saved, and one an erasure made stale while it was written is removed again (the
        erasure may have removed the index files just before)."""
        kept = self._cache.latest(key)
        if self._index_dir is None or kept is None or len(kept[1].entry_ids) < SAVED_FROM_ENTRIES:
            return
        if kept[0] != self.scope_version(self._conn, key.tenant, key.scope):
            return  # stale (another process wrote, or erased): never put old vectors on disk
        path = index_files.file_for(self._index_dir, *key)
        try:
            index_files.save(path, kept[1], kept[0])
        except OSError:  # a read-only directory, a full disk: the index is rebuilt next time
            return
        if self._lost_since(key, kept[0]):
            path.unlink(missing_ok=True)  # erased or deleted from meanwhile: the files went
            return
        self._saved[key] = len(kept[1].entry_ids)
        self._unsaved.discard(key)

    def _from_file(
        self, conn: Any, key: ScopeKey, version: tuple[str, int, int]
    ) -> ChunkTable | None:
        """The saved index of the scope, with the entries created since it was saved."""
        assert self._index_dir is not None
        found = index_files.read(index_files.file_for(self._index_dir, *key))
        if found is None:
            return None
        self._saved[key] = len(found[1].entry_ids)
        if found[0] == version:
            return found[1]
        self._cache.put(key, found[0], found[1])
        table: ChunkTable | None = self.caught_up(conn, key, version)
        return table

    def entry_rows(self, conn: Any, key: ScopeKey, ids: Sequence[str]) -> ChunkTable:
        # ``|| ''``: each id is looked up; tenant and scope are checked, not searched by
        # (SQLite would otherwise scan every entry of the scope for the ids: 22 ms at 100k).
        rows = conn.execute(
            _CHUNK_ROWS.format(
                where="e.id IN (SELECT value FROM json_each(?)) "
                "AND e.tenant || '' = ? AND e.scope || '' = ?"
            ),
            (json.dumps(list(ids)), key.tenant, key.scope),
        )
        return ChunkTable.from_rows(rows, key.dimension)

    def op_search(self, conn: Any, op: ops.SearchOp) -> Candidates:
        return search(self._table(conn, op.filter, 0 if op.vector is None else len(op.vector)), op)

    def _table(self, conn: Any, where: ops.Filter, dimension: int) -> ChunkTable:
        """The chunks a filter may see: its scope's index, or read for it."""
        scope = where.single_scope
        if scope is not None:
            return self._scope_table(conn, ScopeKey(where.tenant, str(scope), dimension))
        clause, params = where_sql(where.all_versions(), SQLITE)
        rows = conn.execute(_CHUNK_ROWS.format(where=clause), params)
        return ChunkTable.from_rows(rows, dimension)

    def op_embedding_info(self, conn: Any, op: ops.EmbeddingInfoOp) -> tuple[str, int]:
        stored = self.op_stored_embedding(conn, ops.StoredEmbeddingOp())
        if stored is not None and not op.replace:
            return stored
        self.new_epoch(conn)
        conn.executemany(
            "INSERT OR REPLACE INTO store_info (key, value) VALUES (?, ?)",
            [("embedding_model", op.name), ("embedding_dimension", str(op.dimension))],
        )
        return op.name, op.dimension

    def op_chunk_page(self, conn: Any, op: ops.ChunkPageOp) -> list[ops.ChunkText]:
        rows = conn.execute(
            "SELECT c.rowid, substr(e.content, c.start + 1, c.stop - c.start), e.context "
            "FROM chunks c JOIN entries e ON e.rowid = c.entry_rowid "
            "WHERE c.rowid > ? ORDER BY c.rowid LIMIT ?",
            (op.after, op.limit),
        )
        return [ops.ChunkText(key, text, context) for key, text, context in rows]

    def op_set_vectors(self, conn: Any, op: ops.SetVectorsOp) -> None:
        self.new_epoch(conn)
        conn.executemany(
            "UPDATE chunks SET vector = ? WHERE rowid = ?",
            [(v.astype(np.float32).tobytes(), k) for k, v in zip(op.keys, op.vectors, strict=True)],
        )


def _indexed_scopes(batch: Sequence[ops.Op[Any]]) -> set[ScopeKey]:
    """The scopes (and dimensions) ``batch`` put entries with vectors into."""
    return {
        ScopeKey(op.tenant, str(op.entry.scope), len(vector))
        for op in batch
        if isinstance(op, ops.PutOp | ops.FoldOp)
        for vector in (op.chunks[0].vector if op.chunks else None,)
        if vector is not None
    }
