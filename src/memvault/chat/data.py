"""A session's analysis database (DuckDB, one file per session): load CSV/JSON/JSONL files from
the allowed roots, describe tables, run read-only SQL, and read a table in windows.

Files are loaded only from inside the allowed roots (the current directory and ``--data-dir``),
never through a symbolic link. Queries run on a read-only connection with file access turned
off, so SQL can neither change the data nor read another file; no connection may install or
load an extension (nothing is downloaded). A connection is opened per operation, so the file is
closed whenever no operation runs.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from ..errors import ValidationError
from ..patterns import lazy

FORMATS = {".csv": "read_csv_auto", ".tsv": "read_csv_auto", ".json": "read_json_auto"}
FORMATS |= {".jsonl": "read_json_auto", ".ndjson": "read_json_auto"}
TABLE = lazy(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
ROW_CAP = 50
"""Rows a query shows at most (the answer says when there were more)."""
CELL_CHARS = 200
"""Characters a cell shows at most (the answer marks a cut cell)."""
QUERY_TIMEOUT_S = 30.0
CLOSED = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}
READ_ONLY = CLOSED | {"enable_external_access": False}


class DataError(ValidationError):
    """A data tool's input cannot be used: a path outside the roots, a link, bad SQL…"""


@dataclass(frozen=True, slots=True)
class Rows:
    """A query's answer: its columns, the rows shown, and whether more were left out."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    more: bool

    def as_text(self) -> str:
        """The rows as CSV (cells cut at :data:`CELL_CHARS`), and a line if rows were left out."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(self.columns)
        writer.writerows([_cell(value) for value in row] for row in self.rows)
        if self.more:
            out.write(f"(only the first {len(self.rows)} rows are shown)\n")
        return out.getvalue()


def _cell(value: Any) -> str:
    text = "" if value is None else str(value)
    return text if len(text) <= CELL_CHARS else text[:CELL_CHARS] + "…"


class DataEngine:
    """The DuckDB database at ``path`` and the roots files may be loaded from."""

    def __init__(self, path: Path, roots: Sequence[Path]) -> None:
        self.path = path
        self.roots = tuple(Path(os.path.realpath(root)) for root in roots)
        self._lock = threading.Lock()

    def tables(self) -> list[str]:
        """The tables loaded, by name."""
        if not self.path.exists():
            return []
        with self._connection(READ_ONLY, read_only=True) as con:
            return [row[0] for row in con.execute("SHOW TABLES").fetchall()]

    def load(self, path: str, table: str | None = None) -> str:
        """Load a CSV, JSON or JSONL file from the allowed roots as ``table`` (default: the
        file's name); what was loaded, in one line."""
        source = self.allowed(path)
        reader = FORMATS.get(source.suffix.lower())
        if reader is None:
            raise DataError(f"{path!r} is not a CSV, JSON or JSONL file")
        name = table or _table_name(source.stem)
        if not TABLE.fullmatch(name):
            raise DataError(f"table must be a name of letters, digits and _, got {name!r}")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connection(CLOSED) as con:
            con.execute(
                f'CREATE OR REPLACE TABLE "{name}" AS SELECT * FROM {reader}(?)', [str(source)]
            )
            rows = con.execute(f'SELECT count(*) FROM "{name}"').fetchone()
            columns = [c[0] for c in con.execute(f'DESCRIBE "{name}"').fetchall()]
        count = rows[0] if rows else 0
        return f"loaded {source.name} as table {name}: {count} rows, columns {', '.join(columns)}"

    def allowed(self, path: str) -> Path:
        """``path`` (relative to the first root, or absolute) if it is a file inside a root
        reached through no symbolic link; DataError otherwise."""
        if not path or "\x00" in path:
            raise DataError("path must be a file name")
        given = Path(path).expanduser()
        candidates = [given] if given.is_absolute() else [root / given for root in self.roots]
        inside = [
            plain
            for plain in (Path(os.path.abspath(c)) for c in candidates)
            if any(plain.is_relative_to(root) for root in self.roots)
        ]
        if not inside:
            roots = ", ".join(str(r) for r in self.roots)
            raise DataError(f"{path!r} is outside the allowed folders ({roots}): refused")
        for plain in inside:
            if os.path.realpath(plain) != str(plain):
                raise DataError(f"{path!r} is reached through a symbolic link: refused")
            if plain.is_file():
                return plain
        raise DataError(f"no file {path!r} in the allowed folders")

    def describe(self, table: str | None = None) -> str:
        """Each table's columns, types and row count (or one table's)."""
        names = self.tables()
        if table is not None:
            if table not in names:
                raise DataError(f"no table {table!r}; tables: {', '.join(names) or 'none'}")
            names = [table]
        if not names:
            return "no table is loaded"
        with self._connection(READ_ONLY, read_only=True) as con:
            return "\n".join(_described(con, name) for name in names)

    def query(self, sql: str, cap: int = ROW_CAP) -> Rows:
        """The answer of one read-only statement (a SELECT, WITH… SELECT, or a read of the
        catalogue), at most ``cap`` rows; DataError for anything else."""
        with self._connection(READ_ONLY, read_only=True) as con:
            statements = con.extract_statements(sql)
            if len(statements) != 1:
                raise DataError("query-sql runs exactly one statement")
            kind = statements[0].type
            if kind not in (duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN):
                raise DataError(f"query-sql only reads: a {kind.name} statement is refused")
            cursor = _interrupted_after(con, QUERY_TIMEOUT_S, lambda: con.execute(sql))
            columns = tuple(c[0] for c in cursor.description or ())
            rows = cursor.fetchmany(cap + 1)
        return Rows(columns, tuple(rows[:cap]), len(rows) > cap)

    def windows(self, table: str, size: int) -> Iterator[tuple[int, int, Rows]]:
        """``(n, of, rows)`` for each window of ``size`` rows of ``table``, in order."""
        if table not in self.tables():
            raise DataError(f"no table {table!r}")
        with self._connection(READ_ONLY, read_only=True) as con:
            found = con.execute(f'SELECT count(*) FROM "{table}"').fetchone()
            total = found[0] if found else 0
            of = max(1, -(-total // size))
            for n in range(of):
                cursor = con.execute(f'SELECT * FROM "{table}" LIMIT {size} OFFSET {n * size}')
                columns = tuple(c[0] for c in cursor.description or ())
                yield n + 1, of, Rows(columns, tuple(cursor.fetchall()), False)

    def delete(self) -> None:
        """Delete the database file (and DuckDB's write-ahead log)."""
        with self._lock:
            for file in (self.path, self.path.with_name(self.path.name + ".wal")):
                file.unlink(missing_ok=True)

    @contextlib.contextmanager
    def _connection(
        self, config: dict[str, Any], *, read_only: bool = False
    ) -> Iterator[duckdb.DuckDBPyConnection]:
        with self._lock:
            try:
                con = duckdb.connect(str(self.path), read_only=read_only, config=config)
            except duckdb.Error as exc:
                raise DataError(f"the analysis database cannot be opened: {exc}") from None
            try:
                yield con
            except duckdb.Error as exc:
                raise DataError(_first_line(exc)) from None
            finally:
                con.close()


def _table_name(stem: str) -> str:
    name = "".join(c if c.isalnum() or c == "_" else "_" for c in stem.strip()) or "data"
    return ("t_" + name if name[0].isdigit() else name)[:63]


def _described(con: duckdb.DuckDBPyConnection, name: str) -> str:
    found = con.execute(f'SELECT count(*) FROM "{name}"').fetchone()
    columns = con.execute(f'DESCRIBE "{name}"').fetchall()
    kinds = ", ".join(f"{c[0]} {c[1]}" for c in columns)
    return f"table {name}: {found[0] if found else 0} rows; columns: {kinds}"


def _interrupted_after(con: duckdb.DuckDBPyConnection, seconds: float, run: Any) -> Any:
    timer = threading.Timer(seconds, con.interrupt)
    timer.start()
    try:
        return run()
    finally:
        timer.cancel()


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
