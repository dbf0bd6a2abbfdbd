"""Backups of a SQLite store (``memvault backup`` / ``restore-backup``): consistent while a
writer goes on, checked before they are trusted, refused whole when broken."""

from __future__ import annotations

import shutil
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from memvault import CapabilityError, Memory, ValidationError
from memvault.store.inmemory import InMemoryBackend
from memvault.testing import HashEmbedder


def test_a_backup_taken_while_a_writer_runs_is_whole_and_restores(tmp_path: Path) -> None:
    store, copy = tmp_path / "live.db", tmp_path / "backup.db"
    with Memory(str(store), embedder=HashEmbedder()) as memory:
        before = [memory.write(f"fact number {n}", scope="user:a").id for n in range(50)]
        stop = threading.Event()

        def writer() -> None:
            n = 50
            while not stop.is_set():
                memory.write(f"fact number {n}", scope="user:a")
                n += 1

        thread = threading.Thread(target=writer)
        thread.start()
        try:
            size = memory.backend.backup(copy)
        finally:
            stop.set()
            thread.join()
        assert size == copy.stat().st_size > 0 and not (tmp_path / "backup.db.part").exists()
        written = memory.count("user:a")
    with sqlite3.connect(copy) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    with Memory(str(tmp_path / "fresh.db"), embedder=HashEmbedder()) as fresh:
        fresh.backend.restore(copy)
        restored = fresh.count("user:a")
        assert 50 <= restored <= written
        assert all(fresh.get(entry_id) is not None for entry_id in before)
        assert fresh.search("fact number 7", "user:a")


@pytest.mark.parametrize("damage", ["truncated", "garbage", "not memvault", "missing"])
def test_a_broken_backup_is_refused_and_changes_nothing(tmp_path: Path, damage: str) -> None:
    with Memory(str(tmp_path / "live.db"), embedder=HashEmbedder()) as memory:
        kept = memory.write("the store's own fact", scope="user:a")
        good = tmp_path / "good.db"
        memory.backend.backup(good)
        bad = tmp_path / "bad.db"
        if damage == "truncated":
            bad.write_bytes(good.read_bytes()[:5000])
        elif damage == "garbage":
            bad.write_bytes(b"not a database at all" * 100)
        elif damage == "not memvault":
            with sqlite3.connect(bad) as db:
                db.execute("CREATE TABLE t (x)")
        with pytest.raises(ValidationError):  # the file given is bad input
            memory.backend.restore(bad)
        assert memory.get(kept.id) == kept and memory.count() == 1


def test_a_backup_never_overwrites_and_other_stores_say_what_to_use(tmp_path: Path) -> None:
    with Memory(str(tmp_path / "live.db"), embedder=HashEmbedder()) as memory:
        (tmp_path / "taken.db").write_bytes(b"precious")
        with pytest.raises(ValidationError, match="exists"):
            memory.backend.backup(tmp_path / "taken.db")
        assert (tmp_path / "taken.db").read_bytes() == b"precious"
    with pytest.raises(CapabilityError, match="pg_dump"):
        InMemoryBackend().backup(tmp_path / "x.db")


def files_in(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir())


def test_backup_and_restore_leave_nothing_beside_the_backup(run: Any, tmp_path: Path) -> None:
    """`memvault backup` left `.part-shm`/`.part-wal` beside the backup, and `restore-backup`
    left `-shm`/`-wal` beside its source."""
    run("write", "kept in the backup", "--scope", "user:a")
    backups = tmp_path / "backups"
    run("backup", str(backups / "copy.db"))
    assert files_in(backups) == ["copy.db"]
    run("restore-backup", str(backups / "copy.db"), "--yes")
    assert files_in(backups) == ["copy.db"]
    assert run("count", "--scope", "user:a").output.strip() == "1"


def test_a_backup_opens_read_only_in_a_read_only_directory(tmp_path: Path) -> None:
    with Memory(str(tmp_path / "live.db"), embedder=HashEmbedder()) as memory:
        memory.write("a fact worth keeping", scope="user:a")
        memory.backend.backup(tmp_path / "backup.db")
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    shutil.copy(tmp_path / "backup.db", shelf / "backup.db")
    shelf.chmod(0o555)  # root ignores it: then the listing shows what a reader would have made
    try:
        with sqlite3.connect(f"{(shelf / 'backup.db').as_uri()}?mode=ro", uri=True) as db:
            assert db.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
            assert db.execute("SELECT count(*) FROM entries").fetchone()[0] == 1
        db.close()
        assert files_in(shelf) == ["backup.db"]
    finally:
        shelf.chmod(0o755)


def test_an_older_wal_mode_backup_restores_without_leaving_anything_beside_it(
    tmp_path: Path,
) -> None:
    old = tmp_path / "old" / "backup.db"
    with Memory(str(tmp_path / "live.db"), embedder=HashEmbedder()) as memory:
        kept = memory.write("a fact worth keeping", scope="user:a")
        old.parent.mkdir()
        with sqlite3.connect(tmp_path / "live.db") as live, sqlite3.connect(old) as copy:
            live.backup(copy)  # as memvault wrote backups before: in the store's WAL mode
            assert copy.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        live.close()
        copy.close()
        memory.delete(kept.id)
        assert files_in(old.parent) == ["backup.db"]
        memory.backend.restore(old)
        assert files_in(old.parent) == ["backup.db"]
        assert memory.get(kept.id) == kept
