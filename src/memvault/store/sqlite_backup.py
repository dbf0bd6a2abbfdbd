"""Backups of a SQLite store: SQLite's online backup API (a consistent copy, page by page, while
other connections go on writing), checked with ``PRAGMA integrity_check`` and as a memvault
store before it is trusted — when it is written, and again before it is restored.

A backup is one file: written in rollback-journal mode (the store's WAL mode would need a
``-shm`` beside any reader), so it opens read-only anywhere, and read without leaving a ``-wal``
or ``-shm`` beside it.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import sqlean as sqlite3

from ..errors import BackendError, ValidationError
from . import migrations

SIDECARS = ("-journal", "-wal", "-shm")
"""The files SQLite may keep beside a database file."""


def write_backup(source: Any, target: Path) -> int:
    """Copy the database of connection ``source`` to ``target`` (which must not exist): written
    beside it, checked, then renamed into place, so ``target`` is whole or absent. Its size."""
    if target.exists():
        raise ValidationError(f"{target} exists: give a path for a new backup file")
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(f"{target.name}.part")
    _remove_with_sidecars(part)
    try:
        copy = sqlite3.connect(str(part))
        try:
            source.backup(copy)  # the copy is in the store's WAL mode
            copy.execute("PRAGMA journal_mode = DELETE")  # folds the log in: one file
        finally:
            copy.close()
        check_backup(part)
        os.replace(part, target)
    except (sqlite3.Error, ValidationError) as exc:  # the copy just written is bad: a fault
        raise BackendError(f"cannot write the backup {target}: {exc}") from exc
    finally:
        _remove_with_sidecars(part)
    return target.stat().st_size


def _remove_with_sidecars(path: Path) -> None:
    for name in (path.name, *(f"{path.name}{suffix}" for suffix in SIDECARS)):
        path.with_name(name).unlink(missing_ok=True)


def read_only(path: Path) -> Any:
    """A read-only connection to the database file ``path`` that leaves nothing beside it.

    A WAL-mode file whose log is not beside it (a backup by an older memvault) is whole: it is
    opened immutable, so SQLite makes no ``-shm``/``-wal`` for it; one with a log beside it is
    in use, and opened as usual."""
    whole_wal = _in_wal_mode(path) and not path.with_name(f"{path.name}-wal").exists()
    uri = f"{path.absolute().as_uri()}?mode=ro{'&immutable=1' if whole_wal else ''}"
    return sqlite3.connect(uri, uri=True)


def _in_wal_mode(path: Path) -> bool:
    """Whether the header of ``path`` says WAL (file format versions 2 at offsets 18 and 19)."""
    try:
        with path.open("rb") as handle:
            header = handle.read(20)
    except OSError:  # SQLite says what is wrong with it
        return False
    return header.startswith(b"SQLite format 3\0") and header[18:20] == b"\x02\x02"


def check_backup(path: Path) -> None:
    """Refuse (ValidationError: the file given is bad input) a file that is not a whole SQLite
    database holding a memvault store this version can open."""
    if not path.is_file():
        raise ValidationError(f"no backup file at {path}")
    try:
        with contextlib.closing(read_only(path)) as db:
            problems = [row[0] for row in db.execute("PRAGMA integrity_check")]
            if problems != ["ok"]:
                raise ValidationError(f"{path} fails SQLite's integrity check: {problems[0]}")
            version = db.execute("SELECT max(version) FROM schema_migrations").fetchone()[0]
    except sqlite3.Error as exc:
        raise ValidationError(f"{path} is not a memvault SQLite store: {exc}") from None
    newest = max(m.version for m in migrations.load("sqlite"))
    if not isinstance(version, int) or version > newest:
        raise ValidationError(
            f"{path} is a store of schema {version}; this memvault knows up to {newest}"
        )


def restore_backup(source: Path, target: Any) -> None:
    """Replace the database of connection ``target`` by the checked backup ``source`` (in
    place, through the backup API: other connections see the restored store)."""
    check_backup(source)
    try:
        with contextlib.closing(read_only(source)) as backup:
            backup.backup(target)
    except sqlite3.Error as exc:
        raise BackendError(f"cannot restore {source}: {exc}") from exc
