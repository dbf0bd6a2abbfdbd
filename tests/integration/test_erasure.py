"""Erasure under concurrency, on real SQLite files and real processes: processes erasing while
others write and search leave nothing of what they erased in the database, its log or its index
files; a reader that holds the log makes an erasure pending (an error, exit 5) until it is
finished; the process that erased and every other drop their copies of content."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlean

from memvault import Memory, Settings
from memvault.errors import ErasureIncompleteError
from memvault.testing import HashEmbedder
from memvault.testing.reliability import erasure_crowd, left_on_disk
from memvault.trust import erasure
from memvault.trust.erasure import FinishReport

SECRET = "the spare key is under the blue flowerpot"


@pytest.mark.slow
def test_processes_erasing_among_writers_and_searchers_leave_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "crowd.db")
    crowd = erasure_crowd(f"sqlite:///{path}", processes=3, rounds=12)
    assert [w.errors for w in crowd] == [[], [], []]
    residues = [r for w in crowd for r in w.residues]
    assert len(residues) == 36
    # Under load a purge can stay pending (another process's snapshot holds the log): the
    # erasure then raised ErasureIncompleteError with its residue, and finishing it clears it.
    pending = sum(bool(r) for r in residues)
    ids = [i for w in crowd for i in w.ids]
    contents = [c for w in crowd for c in w.contents]
    assert len(ids) == 3 * 36
    with Memory(path, embedder=HashEmbedder()) as memory:
        assert [memory.count(f"user:w{n}") for n in range(3)] == [12, 12, 12]
        report = memory.finish_erasures()
        assert len(report.finished) <= pending and report.pending == () and report.residue == 0
        assert memory.finish_erasures() == FinishReport()
    assert left_on_disk(path, ids, contents) == 0  # every process closed


@pytest.fixture
def reader(tmp_path: Path) -> Iterator[Any]:
    """A connection to the store that holds a read transaction (an old snapshot) once told."""
    connection = sqlean.connect(str(tmp_path / "m.db"), isolation_level=None)
    yield connection
    connection.close()


def _hold(reader: Any) -> None:
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM entries").fetchone()


def test_a_reader_holding_the_log_makes_an_erasure_pending_until_finished(
    tmp_path: Path, reader: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(erasure, "PURGE_ATTEMPTS", 3)
    path = str(tmp_path / "m.db")
    settings = Settings(sqlite_busy_timeout_ms=50)
    with Memory(path, settings=settings, embedder=HashEmbedder()) as memory:
        held = memory.write(SECRET, scope="user:bob")
        _hold(reader)  # the log keeps the pages that held it; it cannot be truncated
        with pytest.raises(ErasureIncompleteError) as raised:
            memory.erase(user="bob")
        receipt = raised.value.receipt
        assert receipt is not None and receipt["total"] == 1 and receipt["residue"] > 0
        assert memory.get(held.id) is None  # erased: only the purge is pending
        with pytest.raises(ErasureIncompleteError):
            memory.finish_erasures()  # the reader still holds it
        reader.execute("COMMIT")
        done = memory.finish_erasures()
        assert done == FinishReport(finished=(receipt["ids_sha256"],))
        assert memory.finish_erasures() == FinishReport()  # nothing left: idempotent
        assert left_on_disk(path, [held.id], [SECRET]) == 0


def test_the_cli_exits_5_on_a_pending_erasure_and_finishes_it(
    run: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(erasure, "PURGE_ATTEMPTS", 2)
    monkeypatch.setenv("MEMVAULT_SQLITE_BUSY_TIMEOUT_MS", "50")
    cli_store = tmp_path / "cli.db"
    run("write", SECRET, "--scope", "user:bob")
    held = sqlean.connect(str(cli_store), isolation_level=None)
    try:
        _hold(held)
        pending = run("erase", "--user", "bob", "--yes", code=5)
        assert "STILL FOUND" in pending.output and "erase --finish" in pending.output
        assert "flowerpot" not in pending.output
        run("erase", "--finish", code=5)
        held.execute("COMMIT")
    finally:
        held.close()
    assert "finished the erasure of ids sha256" in run("erase", "--finish").output
    assert "no pending erasure" in run("erase", "--finish").output
    assert "--finish takes no" in run("erase", "--finish", "--user", "bob", code=2).output
