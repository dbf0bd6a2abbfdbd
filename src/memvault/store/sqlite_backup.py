"""Backups of a SQLite store: SQLite's online backup API (a consistent copy, page by page, while
other connections go on writing), checked with ``PRAGMA integrity_check`` and as a memvault
store before it is trusted — when it is written, and again before it is restored."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import sqlean as sqlite3

from ..errors import BackendError, ValidationError
from . import migrations


def write_backup(source: Any, target: Path) -> int:
    """Copy the database of connection ``source`` to ``target`` (which must not exist): written
    beside it, checked, then renamed into place, so ``target`` is whole or absent. Its size."""
    if target.exists():
        raise ValidationError(f"{target} exists: give a path for a new backup file")
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(f"{target.name}.part")
    part.unlink(missing_ok=True)
    try:
        copy = sqlite3.connect(str(part))
        try:
            source.backup(copy)
        finally:
            copy.close()
        check_backup(part)
        os.replace(part, target)
    except (sqlite3.Error, ValidationError) as exc:  # the copy just written is bad: a fault
        raise BackendError(f"cannot write the backup {target}: {exc}") from exc
    finally:
        part.unlink(missing_ok=True)
    return target.stat().st_size


def check_backup(path: Path) -> None:
    """Refuse (ValidationError: the file given is bad input) a file that is not a whole SQLite
    database holding a memvault store this version can open."""
    if not path.is_file():
        raise ValidationError(f"no backup file at {path}")
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
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
        with contextlib.closing(sqlite3.connect(f"file:{source}?mode=ro", uri=True)) as backup:
            backup.backup(target)
    except sqlite3.Error as exc:
        raise BackendError(f"cannot restore {source}: {exc}") from exc
