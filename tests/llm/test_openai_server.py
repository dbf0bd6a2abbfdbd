"""The scripted server itself: what it serves, what it records, and that it stops cleanly."""

from __future__ import annotations

import socket
import threading
import time

import httpx
import pytest

from memvault.testing.openai_server import NO_JSON_SCHEMA, ScriptedOpenAIServer, structured


def test_it_lists_its_model_and_records_every_request() -> None:
    with ScriptedOpenAIServer(model="qwen3") as server, httpx.Client() as http:
        models = http.get(server.base_url + "/models").json()
        missing = http.post(server.base_url + "/embeddings", json={"input": "x"})
        assert [m["id"] for m in models["data"]] == ["qwen3"]
        assert missing.status_code == 404
        assert [(r["method"], r["path"]) for r in server.requests] == [
            ("GET", "/v1/models"),
            ("POST", "/v1/embeddings"),
        ]
        assert server.requests[1]["body"] == {"input": "x"}


def test_a_failing_responder_is_a_500_and_kept() -> None:
    def broken(request: dict[str, object]) -> str:
        raise RuntimeError("responder bug")

    with ScriptedOpenAIServer(responder=broken) as server, httpx.Client() as http:
        answer = http.post(server.base_url + "/chat/completions", json={"messages": []})
        assert answer.status_code == 500 and "responder bug" in answer.text
        assert [str(e) for e in server.errors] == ["responder bug"]


def test_it_can_refuse_structured_output_like_a_server_without_it() -> None:
    schema = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}}
    with ScriptedOpenAIServer() as server, httpx.Client() as http:
        server.refuse_structured_output()
        server.script_text("scripted")
        refused = http.post(server.base_url + "/chat/completions", json={"response_format": schema})
        plain = http.post(server.base_url + "/chat/completions", json={"messages": []})
        assert refused.status_code == 400
        assert refused.json()["error"]["message"] == NO_JSON_SCHEMA
        assert plain.json()["choices"][0]["message"]["content"] == "scripted"  # the step waited
        assert [structured(r) for r in server.requests] == [True, False]


def _post_expecting_a_cut(base_url: str) -> None:
    with pytest.raises(httpx.HTTPError):
        httpx.post(base_url + "/chat/completions", json={})


def test_it_stops_promptly_with_a_sleeping_answer_and_an_idle_connection() -> None:
    server = ScriptedOpenAIServer().start()
    server.script_delay(30.0)
    idle = socket.create_connection(("127.0.0.1", httpx.URL(server.base_url).port or 80))
    waiting = threading.Thread(target=_post_expecting_a_cut, args=(server.base_url,))
    waiting.start()
    while not server.requests:
        time.sleep(0.01)
    started = time.monotonic()
    server.stop()
    waiting.join()
    idle.close()
    assert time.monotonic() - started < 2
    assert server.pending == 0
    with pytest.raises(RuntimeError, match="not started"):
        _ = server.base_url
