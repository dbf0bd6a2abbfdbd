"""SQL for entries — columns, rows, inserts, updates, filters, pages, counts — built once for
every SQL dialect (pure).

A :class:`Dialect` names what differs — the parameter mark, the row-key columns, how to say
"one of these values" and "this metadata key equals this JSON scalar", how JSON columns come
back; the statements are the same.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .. import types as t
from . import ops
from .audit_chain import Link
from .duplicates import fact_key
from .timeconv import from_micros, to_micros

SQL = tuple[str, list[Any]]
COLUMNS = (
    "e.id, e.scope, e.content, e.category, e.tags, e.created_at, e.updated_at, e.expires_at, "
    "e.promoted_from_id, e.compacted_from_ids, e.metadata, e.provenance, e.revision, e.context, "
    "e.valid_from, e.valid_to, e.superseded_by, e.superseded_reason, e.supersedes"
)
"""The columns :func:`entry_from_row` reads, over alias ``e``."""
_MUTABLE = (
    "content",
    "category",
    "tags",
    "updated_at",
    "expires_at",
    "compacted_from_ids",
    "metadata",
    "provenance",
    "revision",
    "valid_to",
    "superseded_by",
    "superseded_reason",
    "supersedes",
    "fact_key",
)
_FIXED = (
    "id",
    "tenant",
    "scope",
    "scope_kind",
    "created_at",
    "promoted_from_id",
    "context",
    "valid_from",
)


@dataclass(frozen=True, slots=True)
class Dialect:
    mark: str
    """Parameter placeholder: ``?`` or ``%s``."""
    entry_key: str
    """The integer key column of ``entries``."""
    tag_key: str
    """The column of ``entry_tags`` and of ``chunks`` that refers to it."""
    any_of: Callable[[str, list[Any]], SQL]
    """``column`` is one of ``values``."""
    json_equals: Callable[[str, str, Any], SQL]
    """Top-level ``key`` of the JSON ``column`` equals the JSON scalar ``value`` (true is not 1)."""
    no_limit: str
    """What ``LIMIT`` takes to mean "no limit" (before an ``OFFSET``)."""
    read_json: Callable[[Any], Any]
    """A JSON column's value as the driver returns it → the Python value."""


@lru_cache(maxsize=4096)
def _scope(text: str) -> t.Scope:
    return t.Scope.parse(text)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def entry_from_row(row: Sequence[Any], d: Dialect) -> t.MemoryEntry:
    """Rebuild an entry from a row of :data:`COLUMNS`."""
    return t.MemoryEntry(
        id=row[0],
        scope=_scope(row[1]),
        content=row[2],
        category=row[3],
        tags=tuple(d.read_json(row[4])),
        created_at=from_micros(row[5]),
        updated_at=from_micros(row[6]),
        expires_at=from_micros(row[7]),
        promoted_from_id=row[8],
        compacted_from_ids=tuple(d.read_json(row[9])),
        metadata=d.read_json(row[10]),
        provenance=t.Provenance.from_dict(d.read_json(row[11])),
        revision=row[12],
        context=row[13],
        valid_from=from_micros(row[14]),
        valid_to=from_micros(row[15]),
        superseded_by=row[16],
        superseded_reason=row[17],
        supersedes=tuple(d.read_json(row[18])),
    )


def _mutable_values(entry: t.MemoryEntry) -> list[Any]:
    expires = None if entry.expires_at is None else to_micros(entry.expires_at)
    return [
        entry.content,
        entry.category,
        _json(list(entry.tags)),
        to_micros(entry.updated_at),
        expires,
        _json(list(entry.compacted_from_ids)),
        _json(dict(entry.metadata)),
        _json(entry.provenance.to_dict()),
        entry.revision,
        None if entry.valid_to is None else to_micros(entry.valid_to),
        entry.superseded_by,
        entry.superseded_reason,
        _json(list(entry.supersedes)),
        fact_key(entry.content),
    ]


def insert_sql(tenant: str, entry: t.MemoryEntry, d: Dialect) -> SQL:
    """Insert an entry; the statement returns its integer key."""
    names = ", ".join((*_MUTABLE, *_FIXED))
    marks = ", ".join([d.mark] * (len(_MUTABLE) + len(_FIXED)))
    scope = str(entry.scope)
    created = to_micros(entry.created_at)
    fixed = [entry.id, tenant, scope, str(entry.scope.kind), created, entry.promoted_from_id]
    sql = f"INSERT INTO entries ({names}) VALUES ({marks}) RETURNING {d.entry_key}"
    return sql, [*_mutable_values(entry), *fixed, entry.context, to_micros(entry.valid_from)]


def replace_sql(tenant: str, entry: t.MemoryEntry, expected_revision: int, d: Dialect) -> SQL:
    """Overwrite an entry's changeable columns if it is at ``expected_revision`` in the scope
    ``entry`` names (an entry never changes scope: the scope checked against a caller's grant
    is the one changed); the statement returns its integer key (no row: it moved on or is gone)."""
    assignments = ", ".join(f"{name} = {d.mark}" for name in _MUTABLE)
    sql = (
        f"UPDATE entries SET {assignments} WHERE tenant = {d.mark} AND id = {d.mark} "
        f"AND revision = {d.mark} AND scope = {d.mark} RETURNING {d.entry_key}"
    )
    return sql, [*_mutable_values(entry), tenant, entry.id, expected_revision, str(entry.scope)]


def twins_sql(op: ops.TwinsOp, keys: Sequence[int], vector: str, d: Dialect) -> SQL:
    """The id, fact key and ``vector`` (a chunk's vector, as the dialect sends it) of every
    chunk with a vector of the entries that pass ``op``'s filter with one of ``keys``."""
    where, params = where_sql(op.filter, d)
    of_keys, key_params = d.any_of("e.fact_key", list(keys))
    sql = (
        f"SELECT e.id, e.fact_key, {vector} FROM entries e "
        f"JOIN chunks c ON c.{d.tag_key} = e.{d.entry_key} "
        f"WHERE {where} AND {of_keys} AND c.vector IS NOT NULL"
    )
    return sql, [*params, *key_params]


def where_sql(where: ops.Filter, d: Dialect) -> SQL:
    """The WHERE clause (over alias ``e``) and parameters of a filter."""
    m = d.mark
    clauses: list[str] = [f"e.tenant = {m}"]
    params: list[Any] = [where.tenant]
    parts: list[SQL] = []
    if where.scopes is not None:
        parts.append(d.any_of("e.scope", [str(scope) for scope in where.scopes]))
    for tag in where.tags:
        parts.append(
            (
                f"EXISTS (SELECT 1 FROM entry_tags g WHERE g.{d.tag_key} = "
                f"e.{d.entry_key} AND g.tag = {m})",
                [tag],
            )
        )
    if where.since is not None:
        parts.append((f"e.created_at >= {m}", [to_micros(where.since)]))
    if where.until is not None:
        parts.append((f"e.created_at < {m}", [to_micros(where.until)]))
    if where.live_at is not None:
        parts.append((f"(e.expires_at IS NULL OR e.expires_at > {m})", [to_micros(where.live_at)]))
    if where.superseded != "show":
        parts.append((f"e.valid_to IS {'' if where.superseded == 'hide' else 'NOT '}NULL", []))
    if where.valid_at is not None:
        at = to_micros(where.valid_at)
        held = f"e.valid_from <= {m} AND (e.valid_to IS NULL OR e.valid_to > {m})"
        parts.append((held, [at, at]))
    if where.categories:
        parts.append(d.any_of("e.category", list(where.categories)))
    if where.hidden:
        clause, more = d.any_of("e.category", list(where.hidden))
        parts.append((f"(e.category IS NULL OR NOT ({clause}))", more))
    if where.scope_kinds:
        parts.append(d.any_of("e.scope_kind", list(where.scope_kinds)))
    parts += [d.json_equals("e.metadata", key, value) for key, value in where.metadata]
    parts += [d.json_equals("e.provenance", key, value) for key, value in where.provenance]
    for clause, more in parts:
        clauses.append(clause)
        params += more
    return " AND ".join(clauses), params


def list_sql(op: ops.ListOp, d: Dialect) -> SQL:
    """One keyset page of entries, ordered by (created_at, id) — or by (updated_at, id),
    latest first."""
    where, params = where_sql(op.filter, d)
    if op.order == "updated":
        sql = (
            f"SELECT {COLUMNS} FROM entries e WHERE {where} "
            f"ORDER BY e.updated_at DESC, e.id DESC LIMIT {d.mark}"
        )
        return sql, [*params, op.limit]
    direction, before = ("DESC", "<") if op.order == "newest" else ("ASC", ">")
    if op.after is not None:
        where += f" AND (e.created_at, e.id) {before} ({d.mark}, {d.mark})"
        params += [to_micros(op.after[0]), op.after[1]]
    sql = (
        f"SELECT {COLUMNS} FROM entries e WHERE {where} "
        f"ORDER BY e.created_at {direction}, e.id {direction} LIMIT {d.mark}"
    )
    return sql, [*params, op.limit]


def count_sql(op: ops.CountOp, d: Dialect) -> SQL:
    where, params = where_sql(op.filter, d)
    return f"SELECT count(*) FROM entries e WHERE {where}", params


def delete_matching_sql(where: ops.Filter, d: Dialect) -> SQL:
    clause, params = where_sql(where, d)
    doomed = f"SELECT e.id FROM entries e WHERE {clause}"
    sql = f"DELETE FROM entries WHERE tenant = {d.mark} AND id IN ({doomed}) RETURNING id, scope"
    return sql, [where.tenant, *params]


def trim_sql(op: ops.TrimOp, d: Dialect) -> SQL:
    """Delete all but the newest ``op.keep`` matching entries; returns their ids."""
    clause, params = where_sql(op.filter, d)
    newest_first = "ORDER BY e.created_at DESC, e.id DESC"
    doomed = (
        f"SELECT e.id FROM entries e WHERE {clause} {newest_first} "
        f"LIMIT {d.no_limit} OFFSET {d.mark}"
    )
    sql = (
        f"DELETE FROM entries WHERE tenant = {d.mark} AND id IN ({doomed}) "
        "RETURNING id, scope, created_at"
    )
    return sql, [op.filter.tenant, *params, op.keep]


# -- the audit log ----------------------------------------------------------------------------

_EVENT_COLUMNS = ("tenant", "at", "actor", "operation", "change", "entry_id", "scope", "note")
_CHAIN_COLUMNS = ("prev", "hash", "checkpoint")
FORGET_CHUNK = 500
"""Ids (or scopes) one statement of an erasure's audit deletes names."""


def append_audit_sql(links: Sequence[Link], d: Dialect) -> tuple[str, list[list[Any]]]:
    """One insert statement and a row of parameters per event, with its place in the chain
    (the store numbers them)."""
    names = (*_EVENT_COLUMNS, *_CHAIN_COLUMNS)
    marks = ", ".join([d.mark] * len(names))
    sql = f"INSERT INTO audit_log ({', '.join(names)}) VALUES ({marks})"
    rows = [
        [
            e.tenant,
            to_micros(e.at),
            e.actor,
            e.operation,
            e.change,
            e.entry_id,
            e.scope,
            e.note,
            link.prev,
            link.hash,
            link.checkpoint,
        ]
        for link in links
        for e in (link.event,)
    ]
    return sql, rows


def audit_links_sql(op: ops.AuditLinksOp, d: Dialect) -> SQL:
    """A page of a tenant's events with their chain columns, oldest first."""
    m = d.mark
    only = " AND checkpoint IS NOT NULL" if op.checkpoints else ""
    sql = (
        f"SELECT seq, {', '.join(_EVENT_COLUMNS)}, {', '.join(_CHAIN_COLUMNS)} FROM audit_log "
        f"WHERE tenant = {m} AND seq > {m}{only} ORDER BY seq LIMIT {m}"
    )
    return sql, [op.tenant, op.after, op.limit]


def link_from_row(row: Sequence[Any]) -> Link:
    """Rebuild a link from a row of :func:`audit_links_sql`."""
    prev, digest, checkpoint = row[-3:]
    return Link(event_from_row(row[:-3]), prev, digest, checkpoint)


def event_from_row(row: Sequence[Any]) -> t.AuditEvent:
    """Rebuild an event from a row of ``seq`` and :data:`_EVENT_COLUMNS`."""
    seq, tenant, at, actor, operation, change, entry_id, scope, note = row
    return t.AuditEvent(
        tenant, from_micros(at), actor, operation, change, entry_id, scope, note, int(seq)
    )


def audit_sql(op: ops.AuditOp, d: Dialect) -> SQL:
    """One keyset page of audit events, ordered by ``seq``."""
    m, q = d.mark, op.query
    clauses, params = [f"tenant = {m}"], list[Any]([q.tenant])
    if q.entry_ids is not None and not q.entry_ids:
        clauses.append("1 = 0")  # no entry: no event
    elif q.entry_ids is not None:
        where, more = d.any_of("entry_id", list(q.entry_ids))
        clauses.append(where)
        params += more
    for column, value in (
        ("scope", q.scope),
        ("actor", q.actor),
        ("operation", q.operation),
        ("change", q.change),
    ):
        if value is not None:
            clauses.append(f"{column} = {m}")
            params.append(value)
    if q.since is not None:
        clauses.append(f"at >= {m}")
        params.append(to_micros(q.since))
    if q.until is not None:
        clauses.append(f"at < {m}")
        params.append(to_micros(q.until))
    direction, before = ("DESC", "<") if op.order == "newest" else ("ASC", ">")
    if op.after is not None:
        clauses.append(f"seq {before} {m}")
        params.append(op.after)
    sql = (
        f"SELECT seq, {', '.join(_EVENT_COLUMNS)} FROM audit_log WHERE {' AND '.join(clauses)} "
        f"ORDER BY seq {direction} LIMIT {m}"
    )
    return sql, [*params, op.limit]


def forget_audit_sql(op: ops.ForgetAuditOp, d: Dialect) -> list[SQL]:
    """The statements that delete an erasure's events: every event of the tenant, or those
    of its ids and scopes (a statement per :data:`FORGET_CHUNK` of them); each returns the
    seqs it deleted."""
    head = f"DELETE FROM audit_log WHERE tenant = {d.mark}"
    if op.everything:
        return [(f"{head} RETURNING seq", [op.tenant])]
    statements = []
    for column, values in (("entry_id", sorted(op.ids)), ("scope", sorted(op.scopes))):
        for start in range(0, len(values), FORGET_CHUNK):
            where, params = d.any_of(column, values[start : start + FORGET_CHUNK])
            statements.append((f"{head} AND {where} RETURNING seq", [op.tenant, *params]))
    return statements


# -- the use of entries -------------------------------------------------------------------------


def uses_sql(op: ops.UsesOp, d: Dialect) -> SQL:
    """The recorded use (id, last used, uses) of the entries ``op`` names."""
    of_ids, params = d.any_of("e.id", list(op.entry_ids))
    # ``|| ''``: each id is looked up, the tenant checked (not the tenant's rows scanned)
    sql = (
        f"SELECT e.id, u.last_used_at, u.uses, u.restated FROM entries e "
        f"JOIN entry_uses u ON u.{d.tag_key} = e.{d.entry_key} "
        f"WHERE {of_ids} AND e.tenant || '' = {d.mark}"
    )
    return sql, [*params, op.tenant]


def survey_sql(op: ops.SurveyOp, vector: str, d: Dialect) -> SQL:
    """What a hygiene report reads of the entries ``op`` selects (expired and superseded ones
    too): id, scope, category, content, updated, expires, valid_to,
    fact key, ``vector`` (the first chunk's, as the dialect sends it), last used, uses,
    restated."""
    where, params = where_sql(op.filter.all_versions(), d)
    sql = (
        "SELECT e.id, e.scope, e.category, e.content, e.updated_at, e.expires_at, e.valid_to, "
        f"e.fact_key, {vector}, u.last_used_at, u.uses, u.restated FROM entries e "
        f"LEFT JOIN chunks c ON c.{d.tag_key} = e.{d.entry_key} AND c.seq = 0 "
        f"LEFT JOIN entry_uses u ON u.{d.tag_key} = e.{d.entry_key} "
        f"WHERE {where}"
    )
    return sql, params


def record_use_sql(d: Dialect) -> str:
    """Add one entry's uses (parameters: last used, uses, restated, tenant, id); nothing if
    it is gone."""
    latest = "max" if d.mark == "?" else "GREATEST"
    return (
        f"INSERT INTO entry_uses ({d.tag_key}, last_used_at, uses, restated) "
        f"SELECT {d.entry_key}, {d.mark}, {d.mark}, {d.mark} FROM entries "
        f"WHERE tenant = {d.mark} AND id = {d.mark} ON CONFLICT ({d.tag_key}) DO UPDATE SET "
        f"last_used_at = {latest}(entry_uses.last_used_at, excluded.last_used_at), "
        "uses = entry_uses.uses + excluded.uses, "
        "restated = entry_uses.restated + excluded.restated"
    )
