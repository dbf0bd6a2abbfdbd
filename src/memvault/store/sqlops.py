"""The operations whose SQL is the same in every dialect, executed once for all SQL backends.

A SQL backend adds what only it knows: how an entry's tags and chunks are written
(:meth:`SqlOps.write_children`), which driver error is a duplicate key, how search reads its
candidates, and how a scope is locked.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from typing import Any, ClassVar

from ..errors import BackendError, ConflictError
from ..retrieval.candidates import Candidates
from ..types import AuditEvent, MemoryEntry
from . import ops
from .audit_chain import (
    FROM_KEY,
    HEAD_KEY,
    KEY_KEY,
    ChainState,
    Hasher,
    Head,
    Link,
    by_tenant,
    chained,
    check_key,
    checkpoint,
)
from .catch_up import Delta, caught_up
from .duplicates import FACT_KEYS, fact_key, twins_among
from .index_cache import IndexCache, ScopeKey
from .residue import pending_erasures, pending_key, pending_value
from .scope_index import ChunkTable
from .sql import (
    COLUMNS,
    Dialect,
    append_audit_sql,
    audit_links_sql,
    audit_sql,
    count_sql,
    delete_matching_sql,
    entry_from_row,
    event_from_row,
    forget_audit_sql,
    insert_sql,
    link_from_row,
    list_sql,
    record_use_sql,
    replace_sql,
    survey_sql,
    trim_sql,
    twins_sql,
    uses_sql,
)
from .timeconv import from_micros, to_micros

CAUGHT_UP_AT_MOST = 50_000
"""Changes to a scope since its index was built that are applied to it; more: it is rebuilt."""
GET_MANY_AT_ONCE = 500
"""Ids (or fact keys) per query of :class:`~memvault.store.ops.GetManyOp` and
:class:`~memvault.store.ops.TwinsOp` (far below any driver's limit)."""
KEYED_AT_ONCE = 2_000
"""Entries given their fact key per statement when a store is keyed at open."""


class SqlOps:
    """Mixin for backends whose connections take ``execute(sql, params)`` (DB-API style)."""

    dialect: ClassVar[Dialect]
    sent_vector: ClassVar[str] = "c.vector"
    """A chunk's vector as the database sends it (:meth:`stored_vector` reads it)."""
    _cache: IndexCache[ChunkTable]
    chain: Hasher

    @staticmethod
    def stored_vector(sent: Any) -> bytes:
        """A chunk's vector as float32 bytes, from :attr:`sent_vector`'s value."""
        return bytes(sent)

    def duplicate_key_errors(self) -> tuple[type[Exception], ...]:
        """The driver's errors for an insert whose id exists already."""
        return ()

    def write_children(self, conn: Any, key: int, op: ops.PutOp | ops.ReplaceOp) -> None:
        """Write the tags and (unless None) the chunks of the entry ``op`` writes (a PutOp's
        entry has none yet; a ReplaceOp's has its old ones)."""
        raise NotImplementedError

    def op_search(self, conn: Any, op: ops.SearchOp) -> Candidates:
        raise NotImplementedError

    def op_put(self, conn: Any, op: ops.PutOp) -> None:
        try:
            (key,) = conn.execute(*insert_sql(op.tenant, op.entry, self.dialect)).fetchone()
        except self.duplicate_key_errors() as exc:
            raise BackendError(f"an entry with id {op.entry.id} already exists") from exc
        self.write_children(conn, key, op)

    def op_replace(self, conn: Any, op: ops.ReplaceOp) -> None:
        sql = replace_sql(op.tenant, op.entry, op.expected_revision, self.dialect)
        row = conn.execute(*sql).fetchone()
        if row is None:
            raise ConflictError(f"entry {op.entry.id} changed or was deleted concurrently")
        self.write_children(conn, row[0], op)

    def op_stored_embedding(self, conn: Any, op: ops.StoredEmbeddingOp) -> tuple[str, int] | None:
        info = dict(conn.execute("SELECT key, value FROM store_info").fetchall())
        if "embedding_model" not in info:
            return None
        return str(info["embedding_model"]), int(info["embedding_dimension"])

    def op_get_many(self, conn: Any, op: ops.GetManyOp) -> list[MemoryEntry]:
        m = self.dialect.mark
        found = []
        for start in range(0, len(op.entry_ids), GET_MANY_AT_ONCE):
            ids = op.entry_ids[start : start + GET_MANY_AT_ONCE]
            listed = ", ".join([m] * len(ids))
            # ``|| ''``: the tenant is checked, not searched by (SQLite would otherwise scan
            # the tenant's rows by its tenant index instead of looking each id up).
            sql = (
                f"SELECT {COLUMNS} FROM entries e WHERE e.id IN ({listed}) AND e.tenant || '' = {m}"
            )
            rows = conn.execute(sql, (*ids, op.tenant))
            found += [entry_from_row(row, self.dialect) for row in rows]
        return found

    def op_twins(self, conn: Any, op: ops.TwinsOp) -> list[list[str]]:
        keys = sorted(set(op.keys))
        rows = []
        for start in range(0, len(keys), GET_MANY_AT_ONCE):
            some = keys[start : start + GET_MANY_AT_ONCE]
            found = conn.execute(*twins_sql(op, some, self.sent_vector, self.dialect))
            rows += [(str(i), int(key), self.stored_vector(v)) for i, key, v in found]
        return twins_among(rows, op)

    def key_facts(self, conn: Any) -> None:
        """Give every entry its fact key, once (the store predates them, or its keys follow
        another version of the rule: :data:`~memvault.store.duplicates.FACT_KEYS`); inside the
        transaction that migrates the store."""
        m, key = self.dialect.mark, self.dialect.entry_key
        done = conn.execute("SELECT value FROM store_info WHERE key = 'fact_keys'").fetchone()
        if done is not None and done[0] == str(FACT_KEYS):
            return
        if done is not None:
            conn.execute("UPDATE entries SET fact_key = NULL")
        last = -1
        while rows := conn.execute(
            f"SELECT {key}, content FROM entries WHERE {key} > {m} AND fact_key IS NULL "
            f"ORDER BY {key} LIMIT {KEYED_AT_ONCE}",
            (last,),
        ).fetchall():
            keyed = [(fact_key(content), row_key) for row_key, content in rows]
            conn.cursor().executemany(f"UPDATE entries SET fact_key = {m} WHERE {key} = {m}", keyed)
            last = rows[-1][0]
        conn.execute(
            f"INSERT INTO store_info (key, value) VALUES ('fact_keys', {m}) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (str(FACT_KEYS),),
        )

    def op_list(self, conn: Any, op: ops.ListOp) -> list[MemoryEntry]:
        rows = conn.execute(*list_sql(op, self.dialect))
        return [entry_from_row(row, self.dialect) for row in rows]

    def op_count(self, conn: Any, op: ops.CountOp) -> int:
        return int(conn.execute(*count_sql(op, self.dialect)).fetchone()[0])

    def op_delete(self, conn: Any, op: ops.DeleteOp) -> list[ops.Removed]:
        m = self.dialect.mark
        sql = f"DELETE FROM entries WHERE tenant = {m} AND id = {m}"
        params: list[Any] = [op.tenant, op.entry_id]
        if op.expected_revision is not None:
            sql += f" AND revision = {m}"
            params.append(op.expected_revision)
        gone = _removed(conn.execute(f"{sql} RETURNING id, scope", params))
        if op.expected_revision is not None and not gone:
            raise ConflictError(f"entry {op.entry_id} changed or was deleted concurrently")
        return gone

    def op_purge_expired(self, conn: Any, op: ops.PurgeExpiredOp) -> list[ops.Removed]:
        m = self.dialect.mark
        sql = (
            f"DELETE FROM entries WHERE tenant = {m} AND expires_at IS NOT NULL "
            f"AND expires_at <= {m} RETURNING id, scope"
        )
        return _removed(conn.execute(sql, (op.tenant, to_micros(op.now))))

    def op_delete_matching(self, conn: Any, op: ops.DeleteMatchingOp) -> list[ops.Removed]:
        return _removed(conn.execute(*delete_matching_sql(op.filter, self.dialect)))

    def lock_scope(self, conn: Any, tenant: str, scope: str) -> None:
        """See :meth:`Backend.lock_scope` (this mixin's handlers call it too)."""

    def op_trim(self, conn: Any, op: ops.TrimOp) -> list[ops.Removed]:
        (scope,) = op.filter.scopes or ()
        self.lock_scope(conn, op.filter.tenant, str(scope))
        rows = conn.execute(*trim_sql(op, self.dialect)).fetchall()
        oldest_first = sorted(rows, key=lambda r: (r[2], r[0]))
        return [ops.Removed(str(r[0]), str(r[1])) for r in oldest_first]

    # -- the audit log ------------------------------------------------------------------------

    def lock_audit(self, conn: Any, tenant: str) -> None:
        """Hold off every other appender to ``tenant``'s chain until the transaction ends (a
        no-op where writers are serialised already)."""

    def op_append_audit(self, conn: Any, op: ops.AppendAuditOp) -> None:
        m = self.dialect.mark
        for tenant, events, checkpoints in by_tenant(op.events, op.checkpoints):
            state = self._locked_chain(conn, tenant)
            check_key(self.chain, state.key)
            links = chained(self.chain, tenant, state.head, events, checkpoints)
            sql, rows = append_audit_sql(links, self.dialect)
            conn.cursor().executemany(sql, rows)
            last = conn.execute(f"SELECT max(seq) FROM audit_log WHERE tenant = {m}", (tenant,))
            head = Head(int(last.fetchone()[0]), str(links[-1].hash))
            self._set_info(conn, HEAD_KEY + tenant, head.to_text())
            if state.key is None:
                self._set_info(conn, KEY_KEY, self.chain.fingerprint)

    def _locked_chain(self, conn: Any, tenant: str) -> ChainState:
        """The tenant's chain state, its appenders held off until the transaction ends."""
        self.lock_audit(conn, tenant)
        return self.op_chain_state(conn, ops.ChainStateOp(tenant))

    def op_chain_state(self, conn: Any, op: ops.ChainStateOp) -> ChainState:
        m, head = self.dialect.mark, HEAD_KEY + op.tenant
        rows = conn.execute(
            f"SELECT key, value FROM store_info WHERE key IN ({m}, {m}, {m})",
            (head, KEY_KEY, FROM_KEY),
        )
        info = dict(rows.fetchall())
        chain_from = int(info.get(FROM_KEY, 0))
        return self.chain.state(
            op.tenant, Head.parse(info.get(head)), info.get(KEY_KEY), chain_from
        )

    def op_audit(self, conn: Any, op: ops.AuditOp) -> list[AuditEvent]:
        return [event_from_row(row) for row in conn.execute(*audit_sql(op, self.dialect))]

    def op_audit_links(self, conn: Any, op: ops.AuditLinksOp) -> list[Link]:
        rows = conn.execute(*audit_links_sql(op, self.dialect))
        return [self.chain.checked(link_from_row(row)) for row in rows]

    def op_forget_audit(self, conn: Any, op: ops.ForgetAuditOp) -> ops.Forgotten:
        """Delete the events, then read around each gap they left for the checkpoint."""
        state = self._locked_chain(conn, op.tenant)
        self.new_epoch(conn)
        statements = forget_audit_sql(op, self.dialect)
        gone = sorted(seq for sql in statements for (seq,) in conn.execute(*sql).fetchall())
        m, tenant = self.dialect.mark, op.tenant

        def before(seq: int) -> str | None:
            row = conn.execute(
                f"SELECT hash FROM audit_log WHERE tenant = {m} AND seq < {m} "
                "ORDER BY seq DESC LIMIT 1",
                (tenant, seq),
            ).fetchone()
            return None if row is None else row[0]

        def after(seq: int) -> tuple[int, str | None] | None:
            row = conn.execute(
                f"SELECT seq, prev FROM audit_log WHERE tenant = {m} AND seq > {m} "
                "ORDER BY seq LIMIT 1",
                (tenant, seq),
            ).fetchone()
            return None if row is None else (int(row[0]), row[1])

        made = checkpoint(gone, before, after, state.head, state.genesis)
        return ops.Forgotten(len(gone), made.to_text())

    # -- the use of entries ---------------------------------------------------------------------

    def op_uses(self, conn: Any, op: ops.UsesOp) -> dict[str, ops.Use]:
        if not op.entry_ids:
            return {}
        rows = conn.execute(*uses_sql(op, self.dialect))
        return {str(i): ops.Use(str(i), from_micros(at), int(n), int(r)) for i, at, n, r in rows}

    def op_survey(self, conn: Any, op: ops.SurveyOp) -> list[ops.Surveyed]:
        rows = conn.execute(*survey_sql(op, self.sent_vector, self.dialect))
        return [self._surveyed(row) for row in rows]

    def _surveyed(self, row: Sequence[Any]) -> ops.Surveyed:
        i, scope, category, content, updated, expires, valid_to, key, vector, used, n, r = row
        return ops.Surveyed(
            str(i),
            scope,
            category,
            content,
            from_micros(updated),
            from_micros(expires),
            valid_to is not None,
            None if key is None else int(key),
            None if vector is None else self.stored_vector(vector),
            None if used is None else ops.Use(str(i), from_micros(used), int(n), int(r)),
        )

    def op_record_uses(self, conn: Any, op: ops.RecordUsesOp) -> None:
        rows = [
            (to_micros(u.last_used_at), u.uses, u.restated, op.tenant, u.entry_id) for u in op.uses
        ]
        if rows:
            conn.cursor().executemany(record_use_sql(self.dialect), rows)

    # -- erasure: copies of content in other processes, pending purges ------------------------

    def forgetting_mark(self, conn: Any) -> str:
        row = conn.execute("SELECT value FROM store_info WHERE key = 'forgetting'").fetchone()
        return "" if row is None else str(row[0])

    def op_forget_copies(self, conn: Any, op: ops.ForgetCopiesOp) -> None:
        self._set_info(conn, "forgetting", secrets.token_hex(8))

    def op_pending_erasures(self, conn: Any, op: ops.PendingErasuresOp) -> list[ops.PendingErasure]:
        m, prefix = self.dialect.mark, pending_key(op.tenant, "")
        rows = conn.execute(
            f"SELECT value FROM store_info WHERE substr(key, 1, {m}) = {m}",
            (len(prefix), prefix),
        )
        return pending_erasures(value for (value,) in rows.fetchall())

    def op_pend_erasure(self, conn: Any, op: ops.PendErasureOp) -> None:
        key = pending_key(op.tenant, op.pending.ids_sha256)
        if op.done:
            conn.execute(f"DELETE FROM store_info WHERE key = {self.dialect.mark}", (key,))
        else:
            self._set_info(conn, key, pending_value(op.pending))

    def _set_info(self, conn: Any, key: str, value: str) -> None:
        m = self.dialect.mark
        conn.execute(
            f"INSERT INTO store_info (key, value) VALUES ({m}, {m}) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    # -- versions of the search indexes -------------------------------------------------------

    def wrote(self, conn: Any) -> bool:
        """Whether the transaction of ``conn`` has changed anything yet: a search index built
        from what it sees then must not outlive it (it may roll back; and the scope's version
        does not show its changes before it commits)."""
        raise NotImplementedError

    def new_epoch(self, conn: Any) -> None:
        """Make every scope's search index stale, for a change the audit log does not show
        (vectors replaced, events forgotten, a backup restored)."""
        mark = self.dialect.mark
        conn.execute(
            f"INSERT INTO store_info (key, value) VALUES ('index_epoch', {mark}) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (secrets.token_hex(8),),
        )

    def changes_since(self, conn: Any, tenant: str, scope: str, seq: int) -> Delta | None:
        """What happened to the entries of a scope after its audit event ``seq`` (None: more
        than :data:`CAUGHT_UP_AT_MOST` events, or a change an index cannot follow)."""
        mark = self.dialect.mark
        rows = conn.execute(
            f"SELECT entry_id, change FROM audit_log WHERE tenant = {mark} AND scope = {mark} "
            f"AND seq > {mark} ORDER BY seq LIMIT {CAUGHT_UP_AT_MOST + 1}",
            (tenant, scope, seq),
        ).fetchall()
        if len(rows) > CAUGHT_UP_AT_MOST:
            return None
        return Delta.of((str(entry_id), str(change)) for entry_id, change in rows)

    def entry_rows(self, conn: Any, key: ScopeKey, ids: Sequence[str]) -> ChunkTable:
        """The index rows of the entries ``ids`` of the scope of ``key``, in table order."""
        raise NotImplementedError

    def caught_up(
        self, conn: Any, key: ScopeKey, version: tuple[str, int, int]
    ) -> ChunkTable | None:
        """The kept index of the scope, brought up to ``version`` (None: rebuild it)."""
        kept = self._cache.latest(key)
        if kept is None or not isinstance(kept[0], tuple) or kept[0][0] != version[0]:
            return None
        delta = self.changes_since(conn, key.tenant, key.scope, kept[0][1])
        if delta is None:
            return None
        return caught_up(
            kept[1],
            delta,
            lambda ids: self.entry_rows(conn, key, ids),
            in_place=not self.wrote(conn),
        )

    def scope_version(self, conn: Any, tenant: str, scope: str) -> tuple[str, int, int]:
        """What a scope's search index was built from: the store's epoch and the number and
        time of the scope's last audit event (every change to an entry appends one, in its
        transaction; the time tells a restored copy's events from later ones)."""
        mark = self.dialect.mark
        last = f"FROM audit_log WHERE tenant = {mark} AND scope = {mark} ORDER BY seq DESC LIMIT 1"
        epoch, seq, at = conn.execute(
            "SELECT coalesce((SELECT value FROM store_info WHERE key = 'index_epoch'), ''), "
            f"coalesce((SELECT seq {last}), 0), coalesce((SELECT at {last}), 0)",
            (tenant, scope, tenant, scope),
        ).fetchone()
        return str(epoch), int(seq), int(at)


def _removed(rows: Any) -> list[ops.Removed]:
    """The ``(id, scope)`` rows a ``DELETE … RETURNING id, scope`` gave."""
    return [ops.Removed(str(entry_id), str(scope)) for entry_id, scope in rows.fetchall()]
