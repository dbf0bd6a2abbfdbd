"""A session's analysis database (DuckDB, one file per session): load CSV/JSON/JSONL files from
the allowed roots, describe tables, run read-only SQL, and read a table in windows.

Files are loaded only from inside the allowed roots (the current directory and ``--data-dir``),
never hidden ones, never through a symbolic link: the file is opened without following links
and DuckDB reads that open file, the only path it may read (its configuration locked, and the
reader named in DuckDB's own catalogue, which no macro of the database can shadow). Queries run
on a read-only connection with file access off and a memory limit, one SELECT at a time, so SQL
can neither change the data nor read another file. No connection may install or load an
extension: nothing is downloaded. A connection is opened per operation, so the file is closed
whenever no operation runs.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import stat
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from ..errors import ValidationError
from ..patterns import lazy

CSV, JSON = "system.main.read_csv_auto", "system.main.read_json_auto"
FORMATS = {".csv": CSV, ".tsv": CSV, ".json": JSON, ".jsonl": JSON, ".ndjson": JSON}
TABLE = lazy(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
ROW_CAP = 50
"""Rows a query shows at most (the answer says when there were more)."""
CELL_CHARS = 200
"""Characters a cell shows at most (the answer marks a cut cell)."""
QUERY_TIMEOUT_S = 30.0
CLOSED = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "memory_limit": "1GB",
}
READ_ONLY = CLOSED | {"enable_external_access": False, "lock_configuration": True}
FAILURES = (duckdb.Error, OverflowError, ValueError, OSError)
"""What DuckDB (and converting its values) raises: a DataError saying why."""


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
        with _opened(source) as readable, self._connection(CLOSED) as con:
            quoted = readable.replace("'", "''")
            for setting in (f"allowed_paths = ['{quoted}']", "enable_external_access = false"):
                con.execute(f"SET {setting}")
            con.execute("SET lock_configuration = true")
            con.execute(
                f'CREATE OR REPLACE TABLE "{name}" AS SELECT * FROM {reader}(?)', [readable]
            )
            rows = con.execute(f'SELECT count(*) FROM "{name}"').fetchone()
            columns = [c[0] for c in con.execute(f'DESCRIBE "{name}"').fetchall()]
        count = rows[0] if rows else 0
        return f"loaded {source.name} as table {name}: {count} rows, columns {', '.join(columns)}"

    def allowed(self, path: str) -> Path:
        """``path`` (relative to the first root, or absolute) if it is a file inside a root,
        not hidden, reached through no symbolic link; DataError otherwise."""
        if not path or "\x00" in path or len(path) > 1024:
            raise DataError("path must be a file name (at most 1024 characters)")
        try:
            return self._inside(Path(path).expanduser(), path)
        except (OSError, RuntimeError) as exc:  # a name too long, an unknown ~user
            raise DataError(f"{path[:200]!r} cannot be read: {exc}") from None

    @property
    def _roots(self) -> str:
        """The allowed folders, as an error names them."""
        return ", ".join(str(root) for root in self.roots)

    def _inside(self, given: Path, path: str) -> Path:
        candidates = [given] if given.is_absolute() else [root / given for root in self.roots]
        inside = [
            (plain, root)
            for plain in (Path(os.path.abspath(c)) for c in candidates)
            for root in self.roots
            if plain.is_relative_to(root)
        ]
        if not inside:
            raise DataError(f"{path!r} is outside the allowed folders ({self._roots}): refused")
        for plain, root in inside:
            if any(part.startswith(".") for part in plain.relative_to(root).parts):
                raise DataError(f"{path!r} is a hidden file or in a hidden folder: refused")
            if os.path.realpath(plain) != str(plain):
                raise DataError(f"{path!r} is reached through a symbolic link: refused")
            if plain.is_file():
                return plain
        raise DataError(f"no file {path!r} in the allowed folders ({self._roots})")

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
        """The first ``cap`` rows of one SELECT (``WITH … SELECT`` too), which DuckDB is asked
        for no more of; DataError for anything else."""
        with self._connection(READ_ONLY, read_only=True) as con:
            statements = con.extract_statements(sql)
            if len(statements) != 1:
                raise DataError("query-sql runs exactly one statement")
            kind = statements[0].type
            if kind is not duckdb.StatementType.SELECT:
                raise DataError(f"query-sql only reads: a {kind.name} statement is refused")
            body = _statement_text(statements[0].query)
            capped = f"SELECT * FROM (\n{body}\n) AS answer LIMIT {cap + 1}"
            cursor = _interrupted_after(con, QUERY_TIMEOUT_S, lambda: con.execute(capped))
            columns = tuple(c[0] for c in cursor.description or ())
            rows = cursor.fetchall()
        return Rows(columns, tuple(rows[:cap]), len(rows) > cap)

    def check(self) -> None:
        """DataError unless the file is a database of plain tables named as load-data names
        them: nothing of its own that runs (macros, views, sequences, types, schemas), as a
        file from elsewhere may hold."""
        with self._connection(READ_ONLY, read_only=True) as con:
            for kind, listing in FOREIGN.items():
                found = con.execute(f"SELECT count(*) FROM {listing}")
                if (found.fetchone() or (0,))[0]:
                    raise DataError(f"the analysis database holds {kind} of its own: refused")
            names = [row[0] for row in con.execute("SHOW TABLES").fetchall()]
        if odd := [name for name in names if not TABLE.fullmatch(name)]:
            raise DataError(f"the analysis database holds a table named {odd[0][:80]!r}: refused")

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
                try:
                    file.unlink(missing_ok=True)
                except OSError as exc:
                    raise DataError(f"cannot delete {file}: {exc.strerror or exc}") from None

    @contextlib.contextmanager
    def _connection(
        self, config: dict[str, Any], *, read_only: bool = False
    ) -> Iterator[duckdb.DuckDBPyConnection]:
        with self._lock:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                con = duckdb.connect(str(self.path), read_only=read_only, config=config)
            except FAILURES as exc:
                raise DataError(f"the analysis database cannot be opened: {exc}") from None
            try:
                yield con
            except FAILURES as exc:
                raise DataError(_first_line(exc)) from None
            finally:
                con.close()


FOREIGN = {
    "macros": "duckdb_functions() WHERE NOT internal",
    "views": "duckdb_views() WHERE NOT internal",
    "sequences": "duckdb_sequences()",
    "types": "duckdb_types() WHERE NOT internal",
    "schemas": "duckdb_schemas() WHERE NOT internal AND schema_name <> 'main'",
}
"""What a database of plain tables holds none of (each a listing of DuckDB's catalogue)."""


@contextlib.contextmanager
def _opened(path: Path) -> Iterator[str]:
    """A path DuckDB reads ``path`` by, for as long as it is needed: the file opened without
    following a link at its end (checked again once open: no link swapped in meanwhile), as
    ``/proc/self/fd/N`` where the system has it."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)  # non-blocking: a FIFO swapped in cannot hang the open
    except OSError as exc:
        raise DataError(f"{path.name} cannot be opened: {exc.strerror or exc}") from None
    try:
        opened, named = os.fstat(fd), os.lstat(path)
        same = (opened.st_dev, opened.st_ino) == (named.st_dev, named.st_ino)
        if not (stat.S_ISREG(opened.st_mode) and same) or os.path.realpath(path) != str(path):
            raise DataError(f"{path.name} changed into something else than a file: refused")
        by_fd = next((f"{d}/{fd}" for d in ("/proc/self/fd", "/dev/fd") if os.path.isdir(d)), "")
        yield by_fd or str(path)
    except OSError as exc:
        raise DataError(f"{path.name} cannot be read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def _statement_text(query: str) -> str:
    """One statement's text without the semicolons and comments that may end it."""
    cut = len(query)
    for start, kind in reversed(duckdb.tokenize(query)):
        if kind == duckdb.token_type.comment or query[start:cut].strip() == ";":
            cut = start
        else:
            break
    return query[:cut].rstrip().rstrip(";")


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
