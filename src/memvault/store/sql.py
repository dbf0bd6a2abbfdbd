"""SQL for filters, pages and counts, built once for every SQL dialect (pure).

A :class:`Dialect` names what differs — the parameter mark, the row-key columns, how to say
"one of these values" and "this metadata key equals this JSON scalar"; the clauses are the same.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import ops
from .timeconv import to_micros

SQL = tuple[str, list[Any]]


@dataclass(frozen=True, slots=True)
class Dialect:
    mark: str
    """Parameter placeholder: ``?`` or ``%s``."""
    entry_key: str
    """The integer key column of ``entries``."""
    tag_key: str
    """The column of ``entry_tags`` that refers to it."""
    any_of: Callable[[str, list[Any]], SQL]
    """``column`` is one of ``values``."""
    json_equals: Callable[[str, str, Any], SQL]
    """Top-level ``key`` of the JSON ``column`` equals the JSON scalar ``value`` (true is not 1)."""
    no_limit: str
    """What ``LIMIT`` takes to mean "no limit" (before an ``OFFSET``)."""


def where_sql(where: ops.Filter, d: Dialect) -> SQL:
    """The WHERE clause (over alias ``e``) and parameters of a filter."""
    m = d.mark
    clauses: list[str] = [f"e.tenant = {m}"]
    params: list[Any] = [where.tenant]
    parts: list[SQL] = []
    if where.scopes is not None:
        parts.append(d.any_of("e.scope", [str(scope) for scope in where.scopes]))
    for tag in where.tags:
        parts.append((f"EXISTS (SELECT 1 FROM entry_tags g WHERE g.{d.tag_key} = "
                      f"e.{d.entry_key} AND g.tag = {m})", [tag]))  # fmt: skip
    if where.since is not None:
        parts.append((f"e.created_at >= {m}", [to_micros(where.since)]))
    if where.until is not None:
        parts.append((f"e.created_at < {m}", [to_micros(where.until)]))
    if where.live_at is not None:
        parts.append((f"(e.expires_at IS NULL OR e.expires_at > {m})", [to_micros(where.live_at)]))
    if where.categories:
        parts.append(d.any_of("e.category", list(where.categories)))
    if where.scope_kinds:
        parts.append(d.any_of("e.scope_kind", list(where.scope_kinds)))
    parts += [d.json_equals("e.metadata", key, value) for key, value in where.metadata]
    parts += [d.json_equals("e.provenance", key, value) for key, value in where.provenance]
    for clause, more in parts:
        clauses.append(clause)
        params += more
    return " AND ".join(clauses), params


def list_sql(op: ops.ListOp, d: Dialect, columns: str) -> SQL:
    """One keyset page of entries, ordered by (created_at, id)."""
    where, params = where_sql(op.filter, d)
    direction, before = ("DESC", "<") if op.order == "newest" else ("ASC", ">")
    if op.after is not None:
        where += f" AND (e.created_at, e.id) {before} ({d.mark}, {d.mark})"
        params += [to_micros(op.after[0]), op.after[1]]
    sql = (
        f"SELECT {columns} FROM entries e WHERE {where} "
        f"ORDER BY e.created_at {direction}, e.id {direction} LIMIT {d.mark}"
    )
    return sql, [*params, op.limit]


def count_sql(op: ops.CountOp, d: Dialect) -> SQL:
    where, params = where_sql(op.filter, d)
    return f"SELECT count(*) FROM entries e WHERE {where}", params


def delete_matching_sql(where: ops.Filter, d: Dialect) -> SQL:
    clause, params = where_sql(where, d)
    doomed = f"SELECT e.id FROM entries e WHERE {clause}"
    sql = f"DELETE FROM entries WHERE tenant = {d.mark} AND id IN ({doomed}) RETURNING id"
    return sql, [where.tenant, *params]


def trim_sql(op: ops.TrimOp, d: Dialect) -> SQL:
    """Delete all but the newest ``op.keep`` matching entries; returns their ids."""
    clause, params = where_sql(op.filter, d)
    newest_first = "ORDER BY e.created_at DESC, e.id DESC"
    doomed = (f"SELECT e.id FROM entries e WHERE {clause} {newest_first} "
              f"LIMIT {d.no_limit} OFFSET {d.mark}")  # fmt: skip
    sql = (f"DELETE FROM entries WHERE tenant = {d.mark} AND id IN ({doomed}) "
           "RETURNING id, created_at")  # fmt: skip
    return sql, [op.filter.tenant, *params, op.keep]
