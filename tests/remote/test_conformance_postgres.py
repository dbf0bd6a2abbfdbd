"""The whole conformance suite through ``Memory("http://…")`` and ``AsyncMemory("http://…")``,
against a server process with PostgreSQL behind it (emptied for each test)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memvault.testing.remote import RemoteConformance, ServerProcess

pytest.importorskip("uvicorn")
pytest.importorskip("psycopg")
pytest.importorskip("psycopg_pool")

pytestmark = pytest.mark.slow  # the whole suite through a server process, on PostgreSQL


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, postgres_dsn: str) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path_factory.mktemp("remote-postgres"), postgres_dsn)
    yield process
    process.close()


class TestRemotePostgres(RemoteConformance):
    """Every test of the suite, through the remote client."""
