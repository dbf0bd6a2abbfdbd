"""A session's folder of files outside the store goes with the session, whichever way the
session goes: deleted, its scope deleted, its user erased, its tenant erased, or retired by
retention; another store's folders are never touched."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from memvault import Memory, Settings
from memvault.store.session_files import SessionFiles, store_key
from memvault.testing import ManualClock


def _folder(memory: Memory, files: SessionFiles, session_id: str) -> Path:
    folder = files.folder(memory.tenant, session_id)
    folder.mkdir(parents=True)
    (folder / "analysis.duckdb").write_bytes(b"data")
    return folder


@pytest.mark.parametrize(
    "delete",
    [
        lambda memory, sid: memory.delete_session(sid),
        lambda memory, sid: memory.delete_by_scope(f"session:{sid}"),
        lambda memory, sid: memory.erase(user="alice"),
    ],
    ids=["delete_session", "delete_by_scope", "erase_user"],
)
def test_a_deleted_sessions_folder_goes_with_it(
    tmp_path: Path, isolated_environment: Path, delete: Callable[[Memory, str], object]
) -> None:
    store = str(tmp_path / "m.db")
    files = SessionFiles.of(isolated_environment, store)
    with Memory(store) as memory:
        gone = memory.create_session("alice")
        kept = memory.create_session("bob")
        doomed, spared = _folder(memory, files, gone.id), _folder(memory, files, kept.id)
        delete(memory, gone.id)
        assert not doomed.exists() and spared.exists()


def test_erasing_the_tenant_takes_every_folder(tmp_path: Path, isolated_environment: Path) -> None:
    store = str(tmp_path / "m.db")
    files = SessionFiles.of(isolated_environment, store)
    with Memory(store) as memory:
        folders = [_folder(memory, files, memory.create_session(u).id) for u in ("a", "b")]
        memory.erase(tenant=memory.tenant)
        assert not any(folder.exists() for folder in folders)


def test_retention_retires_idle_sessions_with_their_folders(
    tmp_path: Path, isolated_environment: Path
) -> None:
    store = str(tmp_path / "m.db")
    files = SessionFiles.of(isolated_environment, store)
    clock = ManualClock()
    with Memory(store, clock=clock, settings=Settings(retention="idle_sessions=30")) as memory:
        old = _folder(memory, files, memory.create_session("alice").id)
        clock.advance(timedelta(days=40))
        new = _folder(memory, files, memory.create_session("alice").id)
        memory.apply_retention()
        assert not old.exists() and new.exists()


def test_another_stores_folders_are_never_touched(
    tmp_path: Path, isolated_environment: Path
) -> None:
    first, second = str(tmp_path / "a.db"), str(tmp_path / "b.db")
    assert store_key(first) != store_key(second)
    assert store_key(first) == store_key(f"sqlite:///{first}")
    with Memory(first) as one, Memory(second) as other:
        session = one.create_session("alice")
        folder = _folder(one, SessionFiles.of(isolated_environment, first), session.id)
        other.erase(tenant=other.tenant)
        assert folder.exists()


def test_folder_names_are_safe() -> None:
    files = SessionFiles(Path("/r"))
    assert files.folder("acme", "s-01") == Path("/r/acme/s-01")
    hashed = files.folder("../x", "..")
    assert hashed.parent.parent == Path("/r") and ".." not in hashed.parts
