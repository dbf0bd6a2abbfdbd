"""Counting the scope index tables built from rows (a rebuild reads a whole scope)."""

from __future__ import annotations

import pytest

from memvault.store.scope_index import ChunkTable


def count_builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The entries of each table built from rows from now on, in order."""
    builds: list[int] = []
    original = ChunkTable.from_rows.__func__  # type: ignore[attr-defined]

    def counting(cls: type[ChunkTable], rows: object, dimension: int) -> ChunkTable:
        table: ChunkTable = original(cls, rows, dimension)
        builds.append(len(table.entry_ids))
        return table

    monkeypatch.setattr(ChunkTable, "from_rows", classmethod(counting))
    return builds
