"""The scripted server itself: what it serves, what it records, and that it stops cleanly."""

from __future__ import annotations

import json
import socket
import threading
import time

import httpx
import pytest

from memvault.testing.openai_server import (
    NO_JSON_SCHEMA,
    STREAM_PIECES,
    ScriptedOpenAIServer,
    pieces,
    streamed,
    structured,
)


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


def _events(answer: httpx.Response) -> list[str]:
    """The data of each server-sent event of a streamed answer."""
    return [line[len("data: ") :] for line in answer.text.split("\n\n") if line]


def _streamed(base_url: str, body: dict[str, object]) -> httpx.Response:
    return httpx.post(base_url + "/chat/completions", json={"messages": [], **body})


def test_a_streamed_request_is_answered_with_chunks_then_done() -> None:
    with ScriptedOpenAIServer(model="qwen3") as server:
        server.script_text("Hello there, friend")
        answer = _streamed(server.base_url, {"stream": True})
        events = _events(answer)
        assert answer.headers["content-type"] == "text/event-stream"
        assert events[-1] == "[DONE]"
        chunks = [json.loads(event) for event in events[:-1]]
        assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
        assert {c["model"] for c in chunks} == {"qwen3"}
        deltas = [c["choices"][0]["delta"] for c in chunks]
        assert deltas[0] == {"role": "assistant", "content": ""}
        assert "".join(d.get("content", "") for d in deltas) == "Hello there, friend"
        assert 2 <= len(deltas) - 2 <= STREAM_PIECES  # the text, in a few pieces
        assert [c["choices"][0]["finish_reason"] for c in chunks][-2:] == [None, "stop"]
        assert streamed(server.requests[0])


def test_scripted_deltas_are_streamed_as_they_are_and_sent_whole_otherwise() -> None:
    with ScriptedOpenAIServer() as server:
        server.script_deltas("Win", "dow", "")
        server.script_deltas("Win", "dow")
        events = _events(_streamed(server.base_url, {"stream": True}))
        whole = _streamed(server.base_url, {"stream": False}).json()
        pieces_sent = [json.loads(e)["choices"][0]["delta"].get("content") for e in events[1:-2]]
        assert pieces_sent == ["Win", "dow", ""]
        assert whole["choices"][0]["message"]["content"] == "Window"
        assert not streamed(server.requests[1])


def test_a_streamed_answer_carries_its_tool_calls_as_deltas() -> None:
    with ScriptedOpenAIServer() as server:
        server.script_tool_calls(("load-data", {"path": "sales.csv"}), ("plot", "{}"))
        events = _events(_streamed(server.base_url, {"stream": True}))
        chunks = [json.loads(event)["choices"][0] for event in events[:-1]]
        calls = [call for c in chunks for call in c["delta"].get("tool_calls", ())]
        assert [(c["index"], c["function"]["name"]) for c in calls] == [
            (0, "load-data"),
            (1, "plot"),
        ]
        assert json.loads(calls[0]["function"]["arguments"]) == {"path": "sales.csv"}
        assert all(c["id"].startswith("call_") and c["type"] == "function" for c in calls)
        assert chunks[-1]["finish_reason"] == "tool_calls"


def test_an_error_step_is_not_streamed() -> None:
    with ScriptedOpenAIServer() as server:
        server.script_status(503)
        answer = _streamed(server.base_url, {"stream": True})
        assert answer.status_code == 503
        assert answer.headers["content-type"] == "application/json"


def test_pieces_cut_a_text_in_order_and_at_most_so_many() -> None:
    assert pieces("") == ()
    assert pieces("ab") == ("a", "b")
    assert pieces("abcdefg", 3) == ("abc", "def", "g")
    assert "".join(pieces("x" * 1001)) == "x" * 1001
    assert len(pieces("x" * 1001)) == STREAM_PIECES
