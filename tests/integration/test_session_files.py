"""A session's folder of files outside the store goes with the session, whichever way the
session goes: deleted, its scope deleted, its user erased, its tenant erased, or retired by
retention; another store's folders are never touched."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from memvault import BackendError, Memory, Settings
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


def test_folder_names_are_safe_and_never_collide() -> None:
    files = SessionFiles(Path("/r"))
    assert files.folder("acme", "s-01") == Path("/r/acme/s-01")
    hashed = files.folder("../x", "..")
    assert hashed.parent.parent == Path("/r") and ".." not in hashed.parts
    # a file system may ignore case: ids that differ only in case get folders of their own
    assert len({files.folder("Acme", "S1"), files.folder("acme", "s1")}) == 2
    # a hashed name is never an id's own name, so no id can reach another id's folder
    other = files.folder("acme", "alice@example.com")
    assert other.name.startswith("+") and files.folder("acme", other.name) != other


def test_the_chat_sweep_spares_sessions_named_by_a_hash(
    tmp_path: Path, isolated_environment: Path
) -> None:
    store = str(tmp_path / "m.db")
    files = SessionFiles.of(isolated_environment, store)
    with Memory(store) as memory:
        session = memory.create_session("alice", session_id="Alice@Example.com")
        folder = _folder(memory, files, session.id)
        (files.root / memory.tenant / "notes.txt").write_text("a stray file")
        assert files.sessions(memory.tenant) == []  # no id to check: left to its session
        memory.delete_session(session.id)
        assert not folder.exists()


def test_a_folder_that_cannot_go_stops_no_erasure(
    tmp_path: Path, isolated_environment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Removing folders comes after the purge and the scan, every folder is tried, and a
    failure names the folder."""
    import shutil

    store = str(tmp_path / "m.db")
    files = SessionFiles.of(isolated_environment, store)
    with Memory(store) as memory:
        stuck, gone = memory.create_session("alice"), memory.create_session("alice")
        blocked, removable = _folder(memory, files, stuck.id), _folder(memory, files, gone.id)
        real = shutil.rmtree

        def rmtree(path: Path, **options: Any) -> None:
            if Path(path) == blocked:
                raise PermissionError(13, "Permission denied")
            real(path, **options)

        monkeypatch.setattr(shutil, "rmtree", rmtree)
        with pytest.raises(BackendError, match="not all their folders could be") as raised:
            memory.erase(user="alice")
        assert str(blocked) in str(raised.value) and "Permission denied" in str(raised.value)
        assert not removable.exists()
        assert memory.list_sessions("alice") == []


def test_a_store_has_one_key_however_its_url_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "link").symlink_to(tmp_path)
    same = ["~/m.db", "m.db", str(tmp_path / "m.db"), f"sqlite:///{tmp_path}/m.db", "link/m.db"]
    assert len({store_key(url) for url in same}) == 1
    assert store_key("postgres://u:p@h:5432/db") == store_key("postgresql://other:pw@h:5432/db")
    assert store_key("postgresql://h:5432/db") != store_key("postgresql://h:5432/other")
