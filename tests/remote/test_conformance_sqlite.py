"""The whole conformance suite through ``Memory("http://…")`` and ``AsyncMemory("http://…")``,
against a server process with a SQLite file behind it (fresh for each test)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memvault.testing.remote import RemoteConformance, ServerProcess

pytest.importorskip("uvicorn")

pytestmark = pytest.mark.slow  # the whole suite through a server process


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path_factory.mktemp("remote-sqlite"))
    yield process
    process.close()


class TestRemoteSQLite(RemoteConformance):
    """Every test of the suite, through the remote client."""
