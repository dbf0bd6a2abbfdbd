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
    metadata_equals: Callable[[str, Any], SQL]
    """Top-level metadata ``key`` equals the JSON scalar ``value`` (true is not 1)."""


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
    parts += [d.metadata_equals(key, value) for key, value in where.metadata]
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
