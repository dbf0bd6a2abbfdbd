"""``memvault serve`` as users run it: a real process, the packaged model, SQLite or PostgreSQL."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

from memvault import ConfigError

from .conftest import Client, free_port, wait_until_up

KEY_A, KEY_B = "tenant-a-key-0123456789", "tenant-b-key-0123456789"


@contextmanager
def serving(store: str, log: Path, *options: str, **env: str) -> Iterator[str]:
    """Run ``memvault --store STORE serve --port P OPTIONS`` until the block ends; yield its URL."""
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "memvault",
        "--store",
        store,
        "serve",
        "--port",
        str(port),
        "--log-level",
        "warning",
        *options,
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **env}
        )
        base = f"http://127.0.0.1:{port}"
        try:
            wait_until_up(base, seconds=120, alive=lambda: process.poll() is None)
            yield base
        except Exception:
            print(log.read_text())
            raise
        finally:
            process.terminate()  # uvicorn shuts down, then re-raises the signal it caught
            assert process.wait(timeout=30) in (0, -signal.SIGTERM), log.read_text()


@pytest.fixture
def uvicorn_runs(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """``uvicorn.run`` replaced: each call's keywords, with the bound host the app will read."""
    import uvicorn

    from memvault.server.app import BOUND_HOST_ENV

    calls: list[dict[str, Any]] = []
    monkeypatch.setenv(BOUND_HOST_ENV, "unset")  # restored after the test
    monkeypatch.setattr("memvault.cli.serve.listenable", lambda host, port: None)
    monkeypatch.setattr(
        uvicorn,
        "run",
        lambda app, **options: calls.append({**options, "bound_host": os.environ[BOUND_HOST_ENV]}),
    )
    return calls


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "memory.example.com"])
def test_serve_refuses_a_public_address_without_keys(
    run: Callable[..., Any], uvicorn_runs: list[dict[str, Any]], host: str
) -> None:
    result = run("serve", "--host", host, code=2)
    assert f"refusing to serve {host} without API keys" in result.output
    assert "MEMVAULT_API_KEYS" in result.output and "--allow-anonymous" in result.output
    assert uvicorn_runs == []


@pytest.mark.parametrize(
    ("host", "options", "keys"),
    [
        ("0.0.0.0", ["--allow-anonymous"], ""),
        ("0.0.0.0", [], f"acme:{KEY_A}"),
        ("::1", [], ""),
        ("localhost", [], ""),
        ("127.0.0.2", [], ""),
    ],
)
def test_serve_starts_on_loopback_with_keys_or_when_anonymity_is_allowed(  # noqa: PLR0917
    run: Callable[..., Any],
    uvicorn_runs: list[dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
    host: str,
    options: list[str],
    keys: str,
) -> None:
    monkeypatch.setenv("MEMVAULT_API_KEYS", keys)
    run("serve", "--host", host, *options)
    assert [(c["host"], c["bound_host"]) for c in uvicorn_runs] == [(host, host)]


@pytest.mark.parametrize("command", [["serve"], ["mcp", "--transport", "http"]])
def test_a_port_in_use_is_a_clear_error(run: Callable[..., Any], command: list[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = str(taken.getsockname()[1])
        result = run(*command, "--port", port, code=2)
    assert f"cannot listen on 127.0.0.1:{port}" in result.output and "--port" in result.output


def test_serve_rejects_bad_keys(run: Callable[..., Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMVAULT_API_KEYS", "acme:short")
    assert "shorter than 16" in run("serve", code=2).output


@pytest.mark.parametrize(
    ("name", "value"), [("ALLOWED_ORIGINS", "*"), ("ALLOWED_HOSTS", "https://x.example")]
)
def test_serve_rejects_bad_allowed_hosts_and_origins(
    run: Callable[..., Any],
    uvicorn_runs: list[dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    value: str,
) -> None:
    monkeypatch.setenv(f"MEMVAULT_{name}", value)
    assert f"setting {name.lower()}" in run("serve", code=2).output
    assert uvicorn_runs == []


@pytest.mark.parametrize("command", [["serve"], ["mcp", "--transport", "http"]])
def test_a_server_refuses_a_misspelt_variable(
    run: Callable[..., Any],
    uvicorn_runs: list[dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
    command: list[str],
) -> None:
    from memvault.server.app import app_from_env

    monkeypatch.setenv("MEMVAULT_TENNANT", "acme")
    result = run(*command, code=2)
    assert "MEMVAULT_TENNANT (did you mean MEMVAULT_TENANT?)" in result.output
    assert uvicorn_runs == []
    with pytest.raises(ConfigError, match="MEMVAULT_TENNANT"):
        app_from_env()  # what each worker of memvault serve runs


def test_the_served_app_reads_its_guard_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memvault.server.app import BOUND_HOST_ENV, app_from_env
    from memvault.server.guard import Guard

    for name, value in (
        ("STORE", f"sqlite:///{tmp_path / 'env.db'}"),
        ("ALLOWED_HOSTS", "memory.example.com"),
        ("ALLOWED_ORIGINS", "https://app.example.com"),
    ):
        monkeypatch.setenv(f"MEMVAULT_{name}", value)
    monkeypatch.setenv(BOUND_HOST_ENV, "10.0.0.7")
    app = app_from_env()
    try:
        (guard,) = [m.kwargs["guard"] for m in app.user_middleware if "guard" in m.kwargs]
        assert guard == Guard.parse("memory.example.com", "https://app.example.com", "10.0.0.7")
    finally:
        app.state.memory.close()


@pytest.mark.slow
def test_serve_sqlite_end_to_end_with_the_packaged_model(
    tmp_path: Path, run: Callable[..., Any]
) -> None:
    store = f"sqlite:///{tmp_path / 'served.db'}"
    with serving(store, tmp_path / "serve.log") as base:
        api = Client(base)
        status, entry = api(
            "POST", "/v1/memories", {"content": "Maya is allergic to peanuts", "scope": "user:maya"}
        )
        assert status == 201
        _, found = api("POST", "/v1/search", {"query": "food allergy", "scope": "user:maya"})
        assert [hit["id"] for hit in found["hits"]] == [entry["id"]]
        assert found["hits"][0]["components"]["dense"] > 0.3
    from click.testing import CliRunner

    from memvault.cli import cli

    shown = CliRunner().invoke(cli, ["--store", store, "get", entry["id"]])
    assert shown.exit_code == 0 and "peanuts" in shown.output


@pytest.mark.slow
def test_serve_postgres_with_workers_and_keys(postgres_dsn: str, tmp_path: Path) -> None:
    psycopg = pytest.importorskip("psycopg")
    database = f"serve_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {database}")
    dsn = urlunsplit(urlsplit(postgres_dsn)._replace(path=f"/{database}"))
    keys = f"acme:{KEY_A},globex:{KEY_B}"
    log = tmp_path / "serve.log"
    with serving(dsn, log, "--workers", "2", MEMVAULT_API_KEYS=keys) as base:
        acme, globex = Client(base, key=KEY_A), Client(base, key=KEY_B)

        def write(index: int) -> int:
            client = acme if index % 2 else globex
            status, _ = client(
                "POST",
                "/v1/memories",
                {"content": f"ticket {index} concerns the billing export", "scope": "org:ops"},
            )
            return status

        with ThreadPoolExecutor(8) as pool:
            assert set(pool.map(write, range(40))) == {201}
        assert acme("GET", "/v1/count") == (200, {"count": 20})
        assert globex("GET", "/v1/count") == (200, {"count": 20})
        _, found = acme("POST", "/v1/search", {"query": "billing", "scope": "org:ops", "limit": 50})
        assert len(found["hits"]) == 20
        assert all(int(h["content"].split()[1]) % 2 for h in found["hits"])
