"""The PostgreSQL + pgvector backend: a connection pool, one transaction per batch.

Needs the ``postgres`` extra (in the clone: ``pip install -e ".[postgres]"``). SQL is built by
pure functions (``*_sql``); :class:`PostgresBackend` only executes it. Scope and tenant filters
sit in the WHERE clause of both the text query (``tsvector`` + GIN) and the vector query
(pgvector, HNSW once the store's dimension is known), so no row outside the filter is ever
ranked.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np

from ..breaker import Breaker
from ..config import Settings
from ..errors import BackendError, ConflictError, UnavailableError
from ..retrieval.candidates import Candidates
from . import migrations, ops
from .audit import DIRECT, Stamp
from .audit_chain import Hasher
from .base import Backend, Capabilities
from .index_cache import IndexCache, ScopeKey
from .postgres_pool import WAIT_S, Connections, failure
from .residue import ID_HASH_LENGTH
from .scope_index import ChunkTable, Dense, Visibility, search, select
from .sql import SQL, Dialect, where_sql
from .sqlops import SqlOps

HNSW_M = 16
HNSW_EF_CONSTRUCTION = 64
HNSW_EF_SEARCH = 200
HNSW_EF_SEARCH_MAX = 1000  # pgvector's ceiling; iterative scans go past it when filters need
_EF_SEARCH_SQL = (
    "SELECT set_config('hnsw.ef_search', "
    "greatest(nullif(current_setting('hnsw.ef_search', true), '')::int, %s)::text, true), "
    "set_config('hnsw.iterative_scan', 'relaxed_order', true)"
)
"""This transaction's ``hnsw.ef_search`` — enough for the search's depth, or more where the
server (or database, or role) is configured for more — and iterative scans (a filtered search
still finds its rows)."""
_MIGRATION_LOCK = 0x6D656D7661756C74  # "memvault"


def vector_literal(vector: np.ndarray) -> str:
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


def native_vector(sent: bytes | None) -> bytes | None:
    """A pgvector ``vector_send`` value (dimension, unused, big-endian floats) as float32 bytes."""
    if sent is None:
        return None
    return np.frombuffer(sent, ">f4", offset=4).astype(np.float32).tobytes()


def parse_vector(text: str | None) -> bytes | None:
    if text is None:
        return None
    return np.array(json.loads(text), dtype=np.float32).tobytes()


def _any(column: str, values: list[Any]) -> SQL:
    return f"{column} = ANY(%s)", [values]


def _json_equals(column: str, key: str, value: Any) -> SQL:
    return f"{column} -> %s = %s::jsonb", [key, json.dumps(value)]


POSTGRES = Dialect("%s", "rid", "entry_rid", _any, _json_equals, "ALL", lambda value: value)


def text_query_sql(terms: Sequence[str]) -> SQL:
    """A tsquery matching any term; each term goes through plainto_tsquery (never syntax)."""
    parts = " || ".join("plainto_tsquery('english', %s)" for _ in terms)
    return f"({parts})", list(terms)


def _chunk_filter(op: ops.SearchOp) -> SQL:
    """The filter, plus its tenant and scopes on the chunk rows (so indexes on chunks apply)."""
    where, params = where_sql(replace(op.filter, live_at=None), POSTGRES)
    where = f"c.tenant = %s AND {where}"
    params = [op.filter.tenant, *params]
    if op.filter.scopes is not None:
        where = f"c.scope = ANY(%s) AND {where}"
        params = [[str(scope) for scope in op.filter.scopes], *params]
    return where, params


def lexical_ids_sql(op: ops.SearchOp, limit: int) -> SQL:
    """The best ``limit`` chunks by text rank, inside the filter."""
    where, params = _chunk_filter(op)
    query, query_params = text_query_sql(op.terms)
    sql = (
        f"SELECT c.rid FROM chunks c JOIN entries e ON e.rid = c.entry_rid "
        f"WHERE c.tsv @@ {query} AND {where} ORDER BY ts_rank_cd(c.tsv, {query}) DESC LIMIT %s"
    )
    return sql, [*query_params, *params, *query_params, limit]


def vector_ids_sql(op: ops.SearchOp, limit: int) -> SQL:
    """The ``limit`` chunks nearest the query vector, inside the filter (HNSW when indexed)."""
    assert op.vector is not None
    where, params = _chunk_filter(op)
    dimension, literal = len(op.vector), vector_literal(op.vector)
    sql = (
        f"SELECT c.rid FROM chunks c JOIN entries e ON e.rid = c.entry_rid "
        f"WHERE c.vector IS NOT NULL AND {where} "
        f"ORDER BY c.vector::vector({dimension}) <=> %s::vector({dimension}) LIMIT %s"
    )
    return sql, [*params, literal, limit]


def score_sql(op: ops.SearchOp, rids: list[int]) -> SQL:
    """Both scores of the candidate chunks, in (created_at, id, seq) order."""
    lexical, lexical_params = "0", list[Any]()
    if op.terms:
        query, lexical_params = text_query_sql(op.terms)
        lexical = f"ts_rank_cd(c.tsv, {query})"
    dense, dense_params = "NULL", list[Any]()
    if op.vector is not None:
        dense, dense_params = "1 - (c.vector <=> %s::vector)", [vector_literal(op.vector)]
    vector = "c.vector::text" if op.with_vectors else "NULL"
    sql = (
        f"SELECT c.rid, e.id, e.created_at, e.expires_at, e.valid_from, e.valid_to, "
        f"{lexical}, {dense}, {vector} "
        f"FROM chunks c JOIN entries e ON e.rid = c.entry_rid WHERE c.rid = ANY(%s) "
        f"ORDER BY e.created_at, e.id, c.seq"
    )
    return sql, [*lexical_params, *dense_params, rids]


RESIDUE_SQL = """
SELECT count(*) FROM unnest(%(ids)s::text[]) AS gone(id)
WHERE EXISTS (SELECT 1 FROM entries e
              WHERE e.id = gone.id OR e.promoted_from_id = gone.id
                 OR e.superseded_by = gone.id OR e.supersedes ? gone.id
                 OR e.compacted_from_ids ? gone.id)
   OR EXISTS (SELECT 1 FROM audit_log a WHERE a.entry_id = gone.id)
"""
"""How many erased ids a row still holds: as its id, in a link to another entry, or in an
event of the audit log."""
HASHED_RESIDUE_SQL = f"""
WITH held(id) AS (
    SELECT id FROM entries UNION SELECT promoted_from_id FROM entries
    UNION SELECT superseded_by FROM entries
    UNION SELECT jsonb_array_elements_text(supersedes) FROM entries
    UNION SELECT jsonb_array_elements_text(compacted_from_ids) FROM entries
    UNION SELECT entry_id FROM audit_log)
SELECT count(DISTINCT h) FROM (
    SELECT left(encode(sha256(convert_to(id, 'UTF8')), 'hex'), {ID_HASH_LENGTH}) AS h
    FROM held WHERE id IS NOT NULL) AS hashed
WHERE h = ANY(%(hashes)s::text[])
"""
"""How many of the ids of these short hashes a row still holds (as :data:`RESIDUE_SQL`): a
pending erasure's purge, which keeps no ids (a scan of every id: it runs rarely)."""


SCOPE_INDEX_MAX_CHUNKS = 200_000
"""Scopes with more chunks are searched through PostgreSQL's own indexes (HNSW and GIN)."""
_ROWS_SQL = (
    "SELECT c.rid, e.id, e.created_at, e.expires_at, e.valid_from, e.valid_to, "
    "vector_send(c.vector), replace(c.text, chr(31), ' ') || chr(31) || coalesce(c.context, '') "
    "FROM chunks c JOIN entries e ON e.rid = c.entry_rid "
    "WHERE e.tenant = %s AND e.scope = %s{more} ORDER BY e.created_at, e.id, c.seq"
)
SCOPE_ROWS_SQL = _ROWS_SQL.format(more="")
ENTRY_ROWS_SQL = _ROWS_SQL.format(more=" AND e.id = ANY(%s)")


class PostgresBackend(SqlOps, Backend):
    """A PostgreSQL database with pgvector; many processes and machines may share it."""

    dialect = POSTGRES
    sent_vector = "vector_send(c.vector)"
    stored_vector = staticmethod(native_vector)  # type: ignore[assignment]
    name: ClassVar[str] = "postgresql"
    capabilities = Capabilities(persistent=True, multiprocess=True)

    def __init__(
        self,
        dsn: str,
        settings: Settings | None = None,
        pool_size: int = 10,
        wait_s: float = WAIT_S,
    ) -> None:
        try:
            import psycopg_pool  # noqa: F401
        except ImportError as exc:
            raise BackendError(
                "the postgres backend needs the postgres extra: in the clone, "
                "python -m pip install -e '.[postgres]'"
            ) from exc
        settings = settings or Settings()
        self.chain = Hasher(settings.audit_key)
        self._cache: IndexCache[ChunkTable] = IndexCache(weigh=ChunkTable.weight)
        self._oversized: dict[ScopeKey, tuple[str, int, int]] = {}
        """Scopes too large for an index in this process, at the version last counted."""
        self._coarse_min_chunks = settings.coarse_min_chunks
        self._breaker = Breaker("store", "the PostgreSQL store", settings.breaker())
        self.breaker = self._breaker
        try:
            self._connections = Connections(dsn, pool_size, wait_s)
        except UnavailableError as exc:
            raise UnavailableError(f"cannot open PostgreSQL store: {exc}") from exc
        except Exception as exc:
            raise BackendError(f"cannot open PostgreSQL store: {exc}") from exc
        try:
            self._migrate()
        except Exception as exc:
            self._connections.close()
            raise BackendError(f"cannot open PostgreSQL store: {exc}") from exc

    @classmethod
    def from_url(cls, url: str, settings: Settings) -> PostgresBackend:
        return cls(url.replace("postgres://", "postgresql://", 1), settings)

    def _migrate(self) -> None:
        with self._connections.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
                "name TEXT NOT NULL, checksum TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL)"
            )
            rows = conn.execute("SELECT version, checksum FROM schema_migrations").fetchall()
            applied: dict[int, str] = {int(v): str(c) for v, c in rows}
            for migration in migrations.pending(migrations.load("postgres"), applied):
                conn.execute(migration.sql.encode())  # a trusted, shipped file
                conn.execute(
                    "INSERT INTO schema_migrations VALUES (%s, %s, %s, now())",
                    (migration.version, migration.name, migration.checksum),
                )
            self.key_facts(conn)

    def schema_version(self) -> int:
        with self._connections.connection() as conn:
            row = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
        return int(row[0] or 0) if row else 0

    def batch(self, ops_: Sequence[ops.Op[Any]], stamp: Stamp = DIRECT) -> list[Any]:
        """One transaction, through the store's circuit breaker (:attr:`breaker`): while the
        server is down, calls fail fast with UnavailableError instead of each waiting for it."""
        return self._breaker.call(self._batch, ops_, stamp)

    def _batch(self, ops_: Sequence[ops.Op[Any]], stamp: Stamp) -> list[Any]:
        import psycopg

        try:
            with self._connections.connection() as conn, conn.transaction():
                return self.run_batch(conn, ops_, stamp)
        except psycopg.errors.TransactionRollback as exc:  # a deadlock or serialisation loss
            raise ConflictError(f"PostgreSQL store: a concurrent transaction won: {exc}") from exc
        except psycopg.Error as exc:
            raise failure(exc) from exc

    def close(self) -> None:
        self._connections.close()

    def residue(
        self, ids: Sequence[str], contents: Sequence[str], hashed: Sequence[str] = ()
    ) -> int | None:
        """VACUUMs the tables (so that no dead row version keeps erased text in the heap for
        long), then counts the erased ids a row still holds — as its id, or in a link (promoted
        from, superseded by, supersedes, compacted from). (A content is only readable here in
        live rows, which are left out: what the files keep after VACUUM is PostgreSQL's to
        reuse.)"""
        return self._breaker.call(self._residue, ids, hashed)

    def _residue(self, ids: Sequence[str], hashed: Sequence[str]) -> int:
        import psycopg

        try:
            return self._scan(ids, hashed)
        except psycopg.Error as exc:
            raise failure(exc) from exc

    def _scan(self, ids: Sequence[str], hashed: Sequence[str]) -> int:
        with self._connections.connection() as conn:
            for table in ("entries", "chunks", "entry_tags", "audit_log"):
                conn.execute(f"VACUUM {table}")
            row = conn.execute(RESIDUE_SQL, {"ids": list(ids)}).fetchone()
            found = int(row[0]) if row else 0
            if hashed:
                row = conn.execute(HASHED_RESIDUE_SQL, {"hashes": list(hashed)}).fetchone()
                found += int(row[0]) if row else 0
        return found

    def forget_copies(self) -> None:
        """Drop the scope indexes kept in memory (they hold chunks' text and vectors)."""
        self._cache.clear()
        self._oversized.clear()

    # -- operations -------------------------------------------------------------------------

    def duplicate_key_errors(self) -> tuple[type[Exception], ...]:
        import psycopg  # lazily: the module loads without the extra installed

        return (psycopg.errors.UniqueViolation,)

    def write_children(self, conn: Any, key: int, op: ops.PutOp | ops.ReplaceOp) -> None:
        entry, chunks, fresh = op.entry, op.chunks, isinstance(op, ops.PutOp)
        if not fresh:
            conn.execute("DELETE FROM entry_tags WHERE entry_rid = %s", (key,))
        with conn.cursor() as cursor:
            tags = [(key, tag) for tag in entry.tags]
            cursor.executemany("INSERT INTO entry_tags VALUES (%s, %s)", tags)
            if chunks is None:
                return
            if not fresh:
                conn.execute("DELETE FROM chunks WHERE entry_rid = %s", (key,))
            rows = [
                (
                    key,
                    op.tenant,
                    str(entry.scope),
                    c.seq,
                    c.start,
                    c.end,
                    entry.content[c.start : c.end],
                    entry.context,
                    None if c.vector is None else vector_literal(c.vector),
                )
                for c in chunks
            ]
            cursor.executemany(
                "INSERT INTO chunks (entry_rid, tenant, scope, seq, start, stop, text, context, "
                "vector) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s::vector)",
                rows,
            )

    def lock_scope(self, conn: Any, tenant: str, scope: str) -> None:
        key = json.dumps([tenant, scope])
        conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (key,))

    def lock_audit(self, conn: Any, tenant: str) -> None:
        """A tenant's appenders take turns, each from reading the chain's head to its commit:
        under READ COMMITTED the head read after the lock is the last committed one, and the
        seqs (taken after the lock) follow the chain's order."""
        key = json.dumps(["audit", tenant])
        conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (key,))

    def op_search(self, conn: Any, op: ops.SearchOp) -> Candidates:
        """Candidates from the scope's index in this process when the filter names one scope
        of at most ``SCOPE_INDEX_MAX_CHUNKS`` chunks (the same ranking as every backend's);
        else from the database's own indexes (:meth:`_indexed_search`)."""
        scope = op.filter.single_scope
        if scope is not None:
            dimension = 0 if op.vector is None else len(op.vector)
            key = ScopeKey(op.filter.tenant, str(scope), dimension)
            table = self._scope_table(conn, key)
            if table is not None:
                return search(table, op)
        return self._indexed_search(conn, op)

    def _scope_table(self, conn: Any, key: ScopeKey) -> ChunkTable | None:
        version = self.scope_version(conn, key.tenant, key.scope)
        table = self._cache.get(key, version)
        if table is not None or self._oversized.get(key) == version:
            return table
        table = self.caught_up(conn, key, version)
        if table is not None and len(table) <= SCOPE_INDEX_MAX_CHUNKS:
            table = table.with_coarse_pass(self._coarse_min_chunks)  # once grown into one
            return table if self.wrote(conn) else self._cache.put(key, version, table)
        (size,) = conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM chunks WHERE tenant = %s AND scope = %s "
            "LIMIT %s) AS counted",
            (key.tenant, key.scope, SCOPE_INDEX_MAX_CHUNKS + 1),
        ).fetchone()
        if size > SCOPE_INDEX_MAX_CHUNKS:
            if not self.wrote(conn):  # its own rows may roll back
                self._oversized[key] = version  # not counted again until the scope changes
            return None
        rows = conn.execute(SCOPE_ROWS_SQL, (key.tenant, key.scope))
        table = ChunkTable.from_rows(
            ((*r[:6], native_vector(r[6]), r[7]) for r in rows), key.dimension
        ).with_coarse_pass(self._coarse_min_chunks)
        return table if self.wrote(conn) else self._cache.put(key, version, table)

    def entry_rows(self, conn: Any, key: ScopeKey, ids: Sequence[str]) -> ChunkTable:
        rows = conn.execute(ENTRY_ROWS_SQL, (key.tenant, key.scope, list(ids)))
        return ChunkTable.from_rows(
            ((*r[:6], native_vector(r[6]), r[7]) for r in rows), key.dimension
        )

    def wrote(self, conn: Any) -> bool:
        (assigned,) = conn.execute("SELECT pg_current_xact_id_if_assigned()").fetchone()
        return assigned is not None

    def _indexed_search(self, conn: Any, op: ops.SearchOp) -> Candidates:
        """Candidates: the best chunks by text and by vector (filtered in SQL), both scored."""
        rids: set[int] = set()
        if op.terms:
            rids.update(r[0] for r in conn.execute(*lexical_ids_sql(op, op.depth)))
        if op.vector is not None:
            ef_search = min(max(HNSW_EF_SEARCH, op.depth), HNSW_EF_SEARCH_MAX)
            conn.execute(_EF_SEARCH_SQL, (ef_search,))
            rids.update(r[0] for r in conn.execute(*vector_ids_sql(op, op.depth)))
        rows = conn.execute(*score_sql(op, sorted(rids))).fetchall() if rids else []
        dimension = 0 if op.vector is None else len(op.vector)
        table = ChunkTable.from_rows(((*r[:6], parse_vector(r[8]), None) for r in rows), dimension)
        lexical = np.array([float(r[6] or 0.0) for r in rows])
        dense = np.array([np.nan if r[7] is None else float(r[7]) for r in rows])
        shown = Visibility.of(op.filter).mask(table)
        if op.vector is None:
            return select(table, op, shown, lexical, None)
        nearest = np.unique(table.chunk_entry[~np.isnan(dense)])
        return select(table, op, shown, lexical, Dense(nearest, lambda chunks: dense[chunks]))

    def op_embedding_info(self, conn: Any, op: ops.EmbeddingInfoOp) -> tuple[str, int]:
        # Serialised with migrations: only one first opener records the model and builds the index.
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        stored = self.op_stored_embedding(conn, ops.StoredEmbeddingOp())
        if stored is not None and not op.replace:
            return stored
        self.new_epoch(conn)
        conn.execute(
            "INSERT INTO store_info VALUES ('embedding_model', %s), ('embedding_dimension', %s) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (op.name, str(op.dimension)),
        )
        conn.execute("DROP INDEX IF EXISTS chunks_vector_hnsw")
        conn.execute(
            f"CREATE INDEX chunks_vector_hnsw ON chunks USING hnsw "
            f"((vector::vector({int(op.dimension)})) vector_cosine_ops) "
            f"WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION})"
        )
        return op.name, op.dimension

    def op_chunk_page(self, conn: Any, op: ops.ChunkPageOp) -> list[ops.ChunkText]:
        rows = conn.execute(
            "SELECT rid, text, context FROM chunks WHERE rid > %s ORDER BY rid LIMIT %s",
            (op.after, op.limit),
        )
        return [ops.ChunkText(rid, text, context) for rid, text, context in rows]

    def op_set_vectors(self, conn: Any, op: ops.SetVectorsOp) -> None:
        self.new_epoch(conn)
        row = conn.execute("SELECT value FROM store_info WHERE key = 'embedding_dimension'")
        indexed = row.fetchone()
        if indexed is not None and len(op.vectors) and int(indexed[0]) != op.vectors.shape[1]:
            # Re-embedding to another dimension: the typed HNSW index goes; the final
            # EmbeddingInfoOp of the re-embed builds it again for the new dimension.
            conn.execute("DROP INDEX IF EXISTS chunks_vector_hnsw")
        with conn.cursor() as cursor:
            cursor.executemany(
                "UPDATE chunks SET vector = %s::vector WHERE rid = %s",
                [(vector_literal(v), k) for k, v in zip(op.keys, op.vectors, strict=True)],
            )
