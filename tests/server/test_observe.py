"""Health and readiness, request ids and the one log line per request (text or JSON)."""

from __future__ import annotations

import json
import logging
import logging.config
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from memvault import AsyncMemory
from memvault.server import create_app
from memvault.server.logs import (
    JsonFormatter,
    RequestIdFilter,
    TextFormatter,
    logging_config,
    request_id,
)
from memvault.testing import HashEmbedder, ManualClock

from .conftest import Client

KEY = "a-key-0123456789abcdef"
BASE = "http://127.0.0.1:8765"
ACCESS = "memvault.server.access"


@pytest.fixture
def api(start_server: Callable[..., Client]) -> Client:
    return start_server()


@pytest.fixture
def access(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """Records of every memvault logger from INFO, stamped with their request's id."""
    caplog.handler.addFilter(RequestIdFilter())
    with caplog.at_level(logging.INFO, logger="memvault"):
        yield caplog


def lines(caplog: pytest.LogCaptureFixture, logger: str = ACCESS) -> list[dict[str, Any]]:
    """The records of ``logger`` as the JSON lines ``memvault serve --log-format json`` writes."""
    formatter = JsonFormatter()
    return [json.loads(formatter.format(r)) for r in caplog.records if r.name == logger]


def test_liveness_and_readiness(start_server: Callable[..., Client]) -> None:
    api = start_server(api_keys=f"acme:{KEY}")  # neither needs a key
    assert api("GET", "/healthz") == (200, {"status": "ok"})
    assert api("GET", "/readyz") == (200, {"status": "ready"})


def test_not_ready_once_the_store_is_closed(start_server: Callable[..., Client]) -> None:
    api = start_server()
    assert api.asgi is not None
    api.asgi.app.state.memory.backend.close()  # type: ignore[attr-defined]
    status, body = api("GET", "/readyz")
    assert (status, body["status"]) == (503, "unavailable")
    assert body["reason"] == "the store failed (BackendError)"  # a reason, never data
    assert api("GET", "/healthz") == (200, {"status": "ok"})  # still alive


class SlowModel(HashEmbedder):
    """An embedder whose model loads only once ``ready`` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.ready, self._loaded = threading.Event(), False

    def load(self) -> None:
        self.ready.wait(10)
        self._loaded = True

    @property
    def loaded(self) -> bool:
        return self._loaded


def test_not_ready_until_the_embedding_model_is_loaded(tmp_path: Path) -> None:
    model = SlowModel()
    memory = AsyncMemory(str(tmp_path / "slow.db"), embedder=model, clock=ManualClock())
    with TestClient(create_app(memory, owns_memory=True), base_url=BASE) as client:
        # the app's startup began loading the model in the background
        not_yet = {"status": "unavailable", "reason": "the embedding model is not loaded yet"}
        assert (client.get("/readyz").status_code, client.get("/readyz").json()) == (503, not_yet)
        assert client.get("/healthz").status_code == 200
        model.ready.set()
        deadline = time.monotonic() + 10
        while client.get("/readyz").status_code != 200 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert client.get("/readyz").json() == {"status": "ready"}


@pytest.mark.parametrize("sent", ["trace-42", "01J9ZC4R7W8K2M3N4P5Q6R7S8T", "a.b:c_d-e", "x" * 64])
def test_a_well_formed_request_id_comes_back(api: Client, sent: str) -> None:
    status, headers, _ = api.exchange("GET", "/healthz", headers={"X-Request-ID": sent})
    assert (status, headers["x-request-id"]) == (200, sent)


@pytest.mark.parametrize(
    "sent", ["", "has space", "x" * 65, "-leading", "a\tb", "<x>", "a;b", "a/b"]
)
def test_any_other_request_id_is_replaced(api: Client, sent: str) -> None:
    _, headers, _ = api.exchange("GET", "/healthz", headers={"X-Request-ID": sent})
    assert headers["x-request-id"] != sent and len(headers["x-request-id"]) == 32


def test_request_ids_are_checked_before_they_are_trusted() -> None:
    assert request_id("trace-42") == "trace-42"
    for bad in (None, "ünï", "a\x00b", "x\r\nSet-Cookie: a=b"):
        assert request_id(bad) != bad


def test_each_request_gets_its_own_id(api: Client) -> None:
    ids = {api.exchange("GET", "/healthz")[1]["x-request-id"] for _ in range(5)}
    assert len(ids) == 5 and all(request_id(i) == i for i in ids)  # and each is well-formed


def test_one_json_line_per_request_without_content_keys_or_paths(
    start_server: Callable[..., Client], access: pytest.LogCaptureFixture
) -> None:
    api = start_server(api_keys=f"acme:{KEY}").with_key(KEY)
    secret = {"content": "Maya is allergic to peanuts", "scope": "user:maya"}
    status, headers, entry = api.exchange("POST", "/v1/memories", secret)
    assert status == 201
    _, missing, _ = api.exchange("GET", "/v1/memories/01ARZ3NDEKTSV4RRFFQ69G5FAV?x=maya")
    written, not_found = lines(access)
    assert written.keys() == {
        "time",
        "level",
        "logger",
        "message",
        "request_id",
        "method",
        "route",
        "status",
        "duration_ms",
    }
    assert written["request_id"] == headers["x-request-id"]
    assert (written["method"], written["route"], written["status"]) == ("POST", "/v1/memories", 201)
    assert written["level"] == "info" and written["duration_ms"] > 0
    assert not_found["request_id"] == missing["x-request-id"]
    assert (not_found["route"], not_found["status"]) == ("/v1/memories/{entry_id}", 404)
    ms = not_found["duration_ms"]
    assert not_found["message"] == f"GET /v1/memories/{{entry_id}} 404 {ms:.1f} ms"
    text = "\n".join(json.dumps(line) for line in lines(access, ACCESS))
    for private in ("peanuts", "maya", entry["id"], KEY, "acme", "01ARZ3"):
        assert private not in text


def test_probes_and_scrapes_are_logged_at_debug(
    api: Client, access: pytest.LogCaptureFixture
) -> None:
    access.set_level(logging.DEBUG, logger=ACCESS)
    probes = ("/healthz", "/readyz", "/health", "/metrics")
    for path in (*probes, "/nowhere"):
        api("GET", path)
    assert [(line["level"], line["route"]) for line in lines(access)] == [
        *(("debug", path) for path in probes),
        ("info", "unmatched"),
    ]


def test_an_error_is_logged_with_the_request_id(
    api: Client, access: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert api.asgi is not None
    memory = api.asgi.app.state.memory  # type: ignore[attr-defined]

    async def broken(*args: Any, **kwargs: Any) -> int:
        raise RuntimeError("the disk is on fire")

    monkeypatch.setattr(memory, "count", broken)
    status, headers, body = api.exchange("GET", "/v1/count")
    assert (status, body["error"]["type"]) == (500, "InternalError")
    (error,) = lines(access, "memvault.server")
    (line,) = lines(access)
    assert error["request_id"] == line["request_id"] == headers["x-request-id"]
    assert error["level"] == "error" and "RuntimeError: the disk is on fire" in error["error"]
    assert line["status"] == 500


def test_the_text_format_ends_with_the_request_id(
    api: Client, access: pytest.LogCaptureFixture
) -> None:
    _, headers, _ = api.exchange("GET", "/nowhere")
    (record,) = [r for r in access.records if r.name == ACCESS]
    line = TextFormatter().format(record)
    ms = record.__dict__["duration_ms"]
    assert line.endswith(
        f" INFO {ACCESS} GET unmatched 404 {ms:.1f} ms [{headers['x-request-id']}]"
    )


@pytest.mark.parametrize("log_format", ["json", "text"])
def test_the_logging_config_of_memvault_serve(
    log_format: str, capsys: pytest.CaptureFixture[str]
) -> None:
    config = logging_config(log_format, "info")
    assert config["loggers"]["uvicorn.access"] == {"handlers": [], "propagate": False}
    saved = {name: logging.getLogger(name) for name in ("memvault", "uvicorn")}
    state = {name: (lg.handlers[:], lg.level, lg.propagate) for name, lg in saved.items()}
    try:
        logging.config.dictConfig(config)
        logging.getLogger("memvault.server.access").info("GET /x 200 1.0 ms")
    finally:
        for name, (handlers, level, propagate) in state.items():
            saved[name].handlers, saved[name].propagate = handlers, propagate
            saved[name].setLevel(level)
    line = capsys.readouterr().err.strip()
    if log_format == "json":
        assert json.loads(line)["message"] == "GET /x 200 1.0 ms"
    else:
        assert line.endswith("INFO memvault.server.access GET /x 200 1.0 ms")


def test_serve_passes_the_log_format_to_uvicorn(
    run: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    import uvicorn

    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: calls.append(options))
    monkeypatch.setenv("MEMVAULT_SERVE_HOST", "unset")  # restored after the test
    run("serve", "--log-format", "json")
    monkeypatch.setenv("MEMVAULT_LOG_FORMAT", "json")
    run("serve", "--log-level", "debug")
    monkeypatch.setenv("MEMVAULT_LOG_FORMAT", "yaml")
    assert "setting log_format must be one of text, json" in run("serve", code=2).output
    for call in calls:
        formatter = call["log_config"]["formatters"]["memvault"]["()"]
        assert formatter == "memvault.server.logs.JsonFormatter" and call["access_log"] is False
    assert calls[1]["log_config"]["loggers"]["memvault"]["level"] == "DEBUG"


@pytest.mark.slow
def test_a_real_server_logs_json_lines_and_serves_metrics(tmp_path: Path) -> None:
    from .test_serve_cli import serving

    log = tmp_path / "serve.log"
    options = ("--log-format", "json", "--log-level", "info")
    with serving(f"sqlite:///{tmp_path / 'served.db'}", log, *options) as base:
        api = Client(base)
        deadline = time.monotonic() + 60
        while api("GET", "/readyz")[0] != 200 and time.monotonic() < deadline:
            time.sleep(0.05)  # the packaged model loads in the background
        assert api("GET", "/readyz") == (200, {"status": "ready"})
        note = {"content": "Maya is allergic to peanuts", "scope": "user:maya"}
        status, headers, _ = api.exchange(
            "POST", "/v1/memories", note, headers={"X-Request-ID": "t-1"}
        )
        assert (status, headers["x-request-id"]) == (201, "t-1")
        _, _, text = api.exchange("GET", "/metrics")
        assert "memvault_writes_total 1.0" in text
        assert 'memvault_embedding_cache_misses_total{cache="process"} 1.0' in text
    records = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    (written,) = [r for r in records if r.get("request_id") == "t-1"]
    assert (written["route"], written["status"], written["logger"]) == (
        "/v1/memories",
        201,
        "memvault.server.access",
    )
    assert any(r["logger"].startswith("uvicorn") for r in records)  # uvicorn's lines are JSON too
    assert "peanuts" not in log.read_text() and "maya" not in log.read_text()
