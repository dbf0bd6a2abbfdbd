"""The conformance suite against every built-in backend."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memvault.config import Settings
from memvault.store.base import Backend
from memvault.store.inmemory import InMemoryBackend
from memvault.store.sqlite import SQLiteBackend
from memvault.testing.conformance import MemoryConformance


class TestInMemoryBackend(MemoryConformance):
    @pytest.fixture
    def backend(self) -> Backend:
        return InMemoryBackend()


class TestSQLiteFile(MemoryConformance):
    @pytest.fixture
    def backend(self, tmp_path: Path) -> Iterator[Backend]:
        backend = SQLiteBackend(str(tmp_path / "store.db"), Settings())
        yield backend
        backend.close()

    @pytest.fixture
    def reopen(self, tmp_path: Path) -> Callable[[], Backend]:
        return lambda: SQLiteBackend(str(tmp_path / "store.db"), Settings())


class TestSQLiteInMemory(MemoryConformance):
    @pytest.fixture
    def backend(self) -> Iterator[Backend]:
        backend = SQLiteBackend(":memory:", Settings())
        yield backend
        backend.close()
