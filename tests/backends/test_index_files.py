"""Scope indexes saved beside a SQLite database: read back as built, ignored when stale or
damaged, gone after an erasure."""

from __future__ import annotations

import dataclasses
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memvault import Memory, NewEntry, Settings
from memvault.store import index_files, sqlite
from memvault.store.scope_index import ChunkTable

from .builds import count_builds


def _table(count: int, start: int = 0) -> ChunkTable:
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(count, 128)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    rows = [
        (
            n,
            f"01J{n:023d}",
            n * 1000,
            None if n % 3 else n * 2000,
            0,
            None,
            vectors[n].tobytes(),
            f"note {n % 7} café",
        )
        for n in range(start, count)
    ]
    return ChunkTable.from_rows(rows, 128).with_coarse_pass(least=100)


def _same(a: ChunkTable, b: ChunkTable) -> None:
    for f in fields(ChunkTable):
        left, right = getattr(a, f.name), getattr(b, f.name)
        if f.name == "lexical":
            assert len(left.indexes) == len(right.indexes)
            for mine, theirs in zip(left.indexes, right.indexes, strict=True):
                assert np.array_equal(mine.traits, theirs.traits)
                for part in ("words", "entities"):
                    one, other = getattr(mine, part), getattr(theirs, part)
                    for g in fields(one):
                        assert np.array_equal(getattr(one, g.name), getattr(other, g.name)), g.name
        elif f.name == "coarse":
            for g in fields(left):
                assert np.array_equal(getattr(left, g.name), getattr(right, g.name)), g.name
        else:
            assert np.array_equal(left, right), f.name


def test_a_saved_index_reads_back_as_it_was_built(tmp_path: Path) -> None:
    table = _table(500)
    path = tmp_path / "x.mvindex"
    index_files.save(path, table, ("epoch", 42))
    loaded = index_files.load(path, ("epoch", 42))
    assert loaded is not None and loaded.coarse is not None
    _same(table, loaded)
    assert not loaded.matrix.flags.writeable  # mapped, never copied


def test_an_index_grown_in_place_saves_and_reads_back(tmp_path: Path) -> None:
    grown = _table(300).appended(_table(500, start=300))
    assert grown is not None
    grown = grown.appended(_table(520, start=500))
    assert grown is not None and grown.spare is not None
    path = tmp_path / "x.mvindex"
    index_files.save(path, grown, ("epoch", 1))
    loaded = index_files.load(path, ("epoch", 1))
    assert loaded is not None and loaded.spare is None
    _same(dataclasses.replace(grown, spare=None), loaded)


def test_a_stale_or_damaged_index_file_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "x.mvindex"
    index_files.save(path, _table(300), ("epoch", 42))
    assert index_files.load(path, ("epoch", 43)) is None
    assert index_files.load(path, ("other", 42)) is None
    assert index_files.load(tmp_path / "missing.mvindex", ("epoch", 42)) is None
    data = path.read_bytes()
    for damaged in (
        data[:100],
        data[: len(data) // 2],
        b"",
        b"MVINDEX1" + b"\xff" * 40,
        b"x" * 5000,
    ):
        path.write_bytes(damaged)
        assert index_files.load(path, ("epoch", 42)) is None


@pytest.fixture
def saved_small(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite, "SAVED_FROM_ENTRIES", 5)


@pytest.mark.usefixtures("saved_small")
def test_a_reopened_store_searches_from_the_saved_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = str(tmp_path / "m.db")
    settings = Settings(near_duplicate_threshold=0)
    with Memory(url, settings=settings) as memory:
        memory.write_many([NewEntry(f"violin lesson {n}", "user:a") for n in range(20)])
        want = [h.entry.id for h in memory.search("violin lesson 7", "user:a")]
    assert list(index_files.directory_for(url).iterdir())
    builds = count_builds(monkeypatch)
    with Memory(url, settings=settings) as memory:
        assert [h.entry.id for h in memory.search("violin lesson 7", "user:a")] == want
        assert builds == []  # read from the file
        memory.write("violin lesson 99", scope="user:a")
        assert memory.search("violin lesson 99", "user:a")[0].entry.content == "violin lesson 99"
        assert builds == [1]  # the new entry, appended to the saved index
        memory.backend._index_dir = None  # type: ignore[attr-defined]  # not saved on close
    builds.clear()
    with Memory(url, settings=settings) as memory:  # the file is older than the scope
        assert memory.search("violin lesson 99", "user:a")[0].entry.content == "violin lesson 99"
        assert builds == [1]
    builds.clear()
    with Memory(url, settings=settings) as memory:  # saved on the last close
        assert memory.search("violin lesson 99", "user:a")[0].entry.content == "violin lesson 99"
        assert builds == []


@pytest.mark.usefixtures("saved_small")
def test_an_import_never_searched_is_indexed_and_saved_when_it_closes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writes read no index: closing the importing process builds and saves the index of each
    large scope it wrote to, so the next process's first search reads it from its file; a
    small scope is left to its first search."""
    url = str(tmp_path / "m.db")
    with Memory(url) as memory:
        memory.write_many([NewEntry(f"violin lesson {n}", "user:a") for n in range(20)])
        memory.write_many([NewEntry(f"green tea {n}", "user:b") for n in range(3)])
        builds = count_builds(monkeypatch)
    assert builds == [20]
    builds.clear()
    with Memory(url) as memory:
        assert memory.search("violin lesson 7", "user:a")[0].entry.content == "violin lesson 7"
        assert builds == []


def _ranking(memory: Memory, query: str) -> list[tuple[str, float]]:
    hits = memory.search(query, "user:a", limit=50, conversational=True)
    return [(h.entry.content, round(h.score, 6)) for h in hits]


def test_appended_entries_rank_as_in_a_rebuilt_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = str(tmp_path / "m.db")
    settings = Settings(near_duplicate_threshold=0)
    builds = count_builds(monkeypatch)
    words = "violin chess garden kitten recipe river budget lisbon".split()
    with Memory(url, settings=settings) as memory:
        memory.write_many([NewEntry(f"{w} lesson {n}", "user:a") for n, w in enumerate(words)])
        _ranking(memory, "violin lesson")
        for n in range(3):
            memory.write_many([NewEntry(f"{w} practice {n}", "user:a") for w in words[:4]])
            appended = _ranking(memory, "violin lesson practice")
        assert builds == [8, 4, 4, 4]
        with Memory(url, settings=settings) as fresh:
            assert _ranking(fresh, "violin lesson practice") == appended
        assert builds[-1] == 20  # the fresh process built it whole


def test_new_content_or_an_earlier_entry_rebuilds_the_index_a_deletion_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from datetime import UTC, datetime

    settings = Settings(near_duplicate_threshold=0)
    builds = count_builds(monkeypatch)
    with Memory(str(tmp_path / "m.db"), settings=settings) as memory:
        first = memory.write("violin lesson", scope="user:a")
        memory.write("chess lesson", scope="user:a")
        memory.search("lesson", "user:a")
        memory.write(
            "old garden lesson", scope="user:a", created_at=datetime(2020, 1, 1, tzinfo=UTC)
        )
        assert memory.search("garden", "user:a")[0].entry.content == "old garden lesson"
        memory.delete(first.id)
        assert "violin lesson" not in {h.entry.content for h in memory.search("lesson", "user:a")}
        # the earlier entry: appended (1), refused, rebuilt (3); the deleted one: not there (0)
        assert builds == [2, 1, 3, 0]
        second = memory.search("chess", "user:a")[0].entry
        memory.update(second.id, content="chess tournament")
        assert memory.search("tournament", "user:a")[0].entry.id == second.id
        assert builds == [2, 1, 3, 0, 1, 2]  # the changed entry read, its new chunks: rebuilt


@pytest.mark.usefixtures("saved_small")
def test_a_deletion_takes_its_scope_files_and_no_saved_index_holds_what_it_deleted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = str(tmp_path / "m.db")
    settings = Settings(near_duplicate_threshold=0)
    directory = index_files.directory_for(url)
    with Memory(url, settings=settings) as memory:
        for user in ("bob", "ann"):
            items = [NewEntry(f"secret plan {n}", f"user:{user}") for n in range(20)]
            entries = memory.write_many(items).entries
            memory.search("secret plan", f"user:{user}")
        assert len(list(directory.iterdir())) == 2
        memory.delete(entries[3].id)
        assert len(list(directory.iterdir())) == 1  # the other scope's file stays
        assert entries[3].id not in {h.entry.id for h in memory.search("plan 3", "user:ann")}
        assert len(list(directory.iterdir())) == 1  # saved on close, not by every search
    saved = b"".join(path.read_bytes() for path in directory.iterdir())
    assert entries[3].id.encode() not in saved and entries[4].id.encode() in saved
    builds = count_builds(monkeypatch)
    with Memory(url, settings=settings) as memory:
        assert entries[3].id not in {h.entry.id for h in memory.search("plan 3", "user:ann")}
        assert builds == []  # the index saved on close, without the deleted entry


@pytest.mark.usefixtures("saved_small")
def test_an_erasure_leaves_no_index_file(tmp_path: Path) -> None:
    url = str(tmp_path / "m.db")
    with Memory(url, settings=Settings(near_duplicate_threshold=0)) as memory:
        memory.write_many([NewEntry(f"secret plan {n}", "user:bob") for n in range(20)])
        memory.search("secret plan", "user:bob")
        directory = index_files.directory_for(url)
        assert list(directory.iterdir())
        receipt = memory.erase(user="bob")
        assert receipt.residue == 0
        assert not directory.exists() or not list(directory.iterdir())


@pytest.mark.usefixtures("saved_small")
def test_a_process_never_saves_an_index_another_erased(tmp_path: Path) -> None:
    url = str(tmp_path / "m.db")
    settings = Settings(near_duplicate_threshold=0)
    holder = Memory(url, settings=settings)
    holder.write_many([NewEntry(f"secret plan {n}", "user:bob") for n in range(20)])
    holder.search("secret plan", "user:bob")
    holder.write("one more secret plan", scope="user:bob")
    holder.search("secret plan", "user:bob")  # kept in memory, newer than its file
    with Memory(url, settings=settings) as eraser:
        assert eraser.erase(user="bob").residue == 0
    holder.close()  # its index is stale now: not saved
    directory = index_files.directory_for(url)
    assert not directory.exists() or not list(directory.iterdir())


@pytest.mark.usefixtures("saved_small")
def test_an_index_saved_while_an_erasure_ran_is_removed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = str(tmp_path / "m.db")
    settings = Settings(near_duplicate_threshold=0)
    holder, eraser = Memory(url, settings=settings), Memory(url, settings=settings)
    holder.write_many([NewEntry(f"secret plan {n}", "user:bob") for n in range(20)])
    save = index_files.save

    def save_while_erased(path: Path, table: Any, version: Any) -> None:
        assert eraser.erase(user="bob").residue == 0  # the files go, then this one is written
        save(path, table, version)

    monkeypatch.setattr(index_files, "save", save_while_erased)
    holder.search("secret plan", "user:bob")  # built from before the erasure, then saved
    monkeypatch.undo()
    directory = index_files.directory_for(url)
    assert not directory.exists() or not list(directory.iterdir())
    holder.close()
    eraser.close()


@pytest.mark.usefixtures("saved_small")
def test_an_index_that_cannot_be_saved_is_only_kept_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*_: object) -> None:
        raise PermissionError("read-only file system")

    monkeypatch.setattr(index_files, "save", refuse)
    with Memory(str(tmp_path / "m.db"), settings=Settings(near_duplicate_threshold=0)) as memory:
        memory.write_many([NewEntry(f"violin lesson {n}", "user:a") for n in range(20)])
        assert memory.search("violin lesson 3", "user:a")[0].entry.content == "violin lesson 3"


@pytest.mark.usefixtures("saved_small")
def test_closing_after_the_connection_went_is_fine(tmp_path: Path) -> None:
    backend = sqlite.SQLiteBackend(str(tmp_path / "m.db"), Settings(near_duplicate_threshold=0))
    memory = Memory(backend, settings=Settings(near_duplicate_threshold=0))
    memory.write_many([NewEntry(f"violin lesson {n}", "user:a") for n in range(20)])
    memory.search("violin", "user:a")
    memory.write("violin lesson 21", scope="user:a")
    memory.search("violin", "user:a")  # grown by less than 10 %: not saved yet
    backend._conn.close()
    backend.close()
    backend.close()


def test_index_files_of_an_earlier_naming_go_when_the_store_opens(tmp_path: Path) -> None:
    url = str(tmp_path / "m.db")
    directory = index_files.directory_for(url)
    directory.mkdir()
    (directory / f"{'a' * 32}.mvindex").write_bytes(b"vectors of deleted entries")
    kept = index_files.file_for(directory, "default", "user:a", 384)
    kept.write_bytes(b"current")
    Memory(url).close()
    assert list(directory.iterdir()) == [kept]
