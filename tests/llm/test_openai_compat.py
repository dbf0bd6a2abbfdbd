"""The OpenAI-compatible client against a real HTTP server speaking the protocol (never a mocked
client): answers, usage, retries, timeouts, malformed and oversized answers, the request cap,
the API key."""

from __future__ import annotations

import json
import threading
import time

import pytest

from memvault import ConfigError, LLMError, LLMResponseError, LLMUnavailableError
from memvault.llm import openai_compat
from memvault.llm.base import ChatMessage, ChatRequest, estimate_prompt_tokens, estimate_tokens
from memvault.llm.openai_compat import MAX_RETRY_AFTER_S, OpenAICompatChat
from memvault.testing.openai_server import ScriptedOpenAIServer

from .conftest import KEY, REQUEST


def _choice(message: object, finish: str = "stop") -> bytes:
    return json.dumps({"choices": [{"message": message, "finish_reason": finish}]}).encode()


def test_an_answer_with_usage(server: ScriptedOpenAIServer, client: OpenAICompatChat) -> None:
    server.script_text("Hello!", usage={"prompt_tokens": 11, "completion_tokens": 2})
    reply = client.complete(REQUEST)
    assert (reply.text, reply.prompt_tokens, reply.completion_tokens) == ("Hello!", 11, 2)
    assert (reply.model, reply.attempts, reply.finish_reason) == ("scripted", 1, "stop")
    assert not reply.estimated_tokens and reply.latency_ms > 0
    [sent] = server.requests
    assert (sent["method"], sent["path"]) == ("POST", "/v1/chat/completions")
    assert sent["headers"]["content-type"] == "application/json"
    assert sent["body"] == {
        "model": "m1",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi"},
        ],
        "temperature": 0.0,
        "max_tokens": 1024,
        "stream": False,
    }


def test_the_request_max_tokens_wins_and_ask_is_a_system_and_a_user_message(
    server: ScriptedOpenAIServer, client: OpenAICompatChat
) -> None:
    assert client.ask("sys", "usr", purpose="summary", max_tokens=7).text == "NONE"
    body = server.requests[0]["body"]
    assert body["max_tokens"] == 7
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert client.usage.snapshot()["llm_calls_summary"] == 1


def test_no_usage_means_estimated_tokens_and_thinking_is_returned_verbatim(
    server: ScriptedOpenAIServer, client: OpenAICompatChat
) -> None:
    server.script_text("<think>hmm</think>ok")
    reply = client.complete(REQUEST)
    assert reply.text == "<think>hmm</think>ok"  # parsing is the caller's job
    assert reply.estimated_tokens
    assert reply.completion_tokens == estimate_tokens(reply.text) == 5
    assert reply.prompt_tokens == estimate_prompt_tokens(REQUEST.messages) == 4


def test_a_partial_usage_is_completed_by_an_estimate(
    server: ScriptedOpenAIServer, client: OpenAICompatChat
) -> None:
    server.script_text("abcdefgh", usage={"prompt_tokens": 30})
    reply = client.complete(REQUEST)
    assert (reply.prompt_tokens, reply.completion_tokens, reply.estimated_tokens) == (30, 2, True)


@pytest.mark.parametrize(
    ("message", "text"),
    [
        ({"role": "assistant", "content": None, "reasoning_content": "thinking..."}, ""),
        ({"role": "assistant"}, ""),
        ({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}, "ab"),
    ],
)
def test_null_absent_or_parted_content(
    server: ScriptedOpenAIServer, client: OpenAICompatChat, message: object, text: str
) -> None:
    server.script_raw(_choice(message))
    assert client.complete(REQUEST).text == text


def test_no_content_because_the_tokens_ran_out_is_an_error(
    server: ScriptedOpenAIServer, client: OpenAICompatChat
) -> None:
    server.script_raw(_choice({"content": None, "reasoning_content": "so..."}, finish="length"))
    with pytest.raises(LLMResponseError, match=r"finish_reason=length.*llm_max_tokens"):
        client.complete(REQUEST)


def test_429_then_success_is_retried_after_retry_after(
    server: ScriptedOpenAIServer, client: OpenAICompatChat, waits: list[float]
) -> None:
    server.script_status(429, retry_after=1.5)
    server.script_text("fine")
    reply = client.complete(REQUEST)
    assert (reply.text, reply.attempts) == ("fine", 2)
    assert waits == [1.5]
    assert len(server.requests) == 2
    usage = client.usage.snapshot()
    assert (usage["llm_calls"], usage["llm_failures"]) == (1, 0)


def test_retry_after_is_capped(server: ScriptedOpenAIServer, waits: list[float]) -> None:
    server.script_status(503, retry_after=100)
    server.script_status(429, retry_after="Wed, 21 Oct 2015 07:28:00 GMT")  # in the past
    with OpenAICompatChat(server.base_url, "m", max_retries=2, sleep=waits.append) as chat:
        assert chat.budget_s == 180
        assert chat.complete(REQUEST).attempts == 3
    assert waits == [MAX_RETRY_AFTER_S, 0.0]


def test_a_retry_after_past_the_time_budget_fails_at_once(
    server: ScriptedOpenAIServer, client: OpenAICompatChat, waits: list[float]
) -> None:
    server.script_status(429, retry_after=3600)
    started = time.monotonic()
    with pytest.raises(
        LLMUnavailableError,
        match=r"1 attempt\(s\), and the [\d.]+ s left of the call's time budget of 6 s cannot",
    ) as caught:
        client.complete(REQUEST)
    assert "HTTP 429, Retry-After 3600 s" in str(caught.value)
    assert waits == [] and len(server.requests) == 1 and time.monotonic() - started < 1
    assert client.usage.snapshot()["llm_failures"] == 1


def test_waits_stop_where_the_time_budget_ends(
    server: ScriptedOpenAIServer, waits: list[float]
) -> None:
    for _ in range(3):
        server.script_status(429, retry_after=2.5)
    with (
        OpenAICompatChat(
            server.base_url, "m", timeout_s=1, max_retries=5, sleep=waits.append
        ) as chat,
        pytest.raises(
            LLMUnavailableError,
            match=r"3 attempt\(s\), and the [\d.]+ s left of the call's time budget of 6 s",
        ),
    ):
        chat.complete(REQUEST)
    assert waits == [2.5, 2.5] and len(server.requests) == 3


def test_a_backoff_is_cut_to_the_time_left(
    server: ScriptedOpenAIServer,
    client: OpenAICompatChat,
    waits: list[float],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(openai_compat, "backoff", lambda attempt: 20.0)
    server.script_status(503)
    server.script_status(503)
    with pytest.raises(
        LLMUnavailableError, match=r"2 attempt\(s\), and the 0 s left of the call's time budget"
    ):
        client.complete(REQUEST)
    [wait] = waits
    assert 5 < wait < client.budget_s == 6


def test_5xx_on_every_attempt_is_unavailable(
    server: ScriptedOpenAIServer, client: OpenAICompatChat, waits: list[float]
) -> None:
    for status in (500, 502, 503):
        server.script_status(status)
    with pytest.raises(
        LLMUnavailableError, match=r"3 attempt\(s\); last: HTTP 503; .*MEMVAULT_LLM_MAX_RETRIES"
    ):
        client.complete(REQUEST)
    assert len(server.requests) == 3
    assert len(waits) == 2 and 0 <= waits[0] <= 0.5 and 0 <= waits[1] <= 1.0  # jittered backoff
    usage = client.usage.snapshot()
    assert (usage["llm_calls"], usage["llm_failures"], usage["llm_failures_extraction"]) == (
        1,
        1,
        1,
    )


@pytest.mark.parametrize("status", [400, 401, 404, 422, 302])
def test_other_statuses_are_not_retried(
    server: ScriptedOpenAIServer, client: OpenAICompatChat, waits: list[float], status: int
) -> None:
    server.script_status(status, body=b"error: bad model\n\x00name")
    with pytest.raises(LLMResponseError, match=f"HTTP {status}: .*bad model name"):
        client.complete(REQUEST)
    assert len(server.requests) == 1 and waits == []


def test_the_api_key_is_a_bearer_token_and_never_shown(
    server: ScriptedOpenAIServer, client: OpenAICompatChat
) -> None:
    server.script_status(401, body=f'{{"error": "invalid key {KEY}"}}'.encode())
    with pytest.raises(LLMResponseError, match="HTTP 401") as caught:
        client.complete(REQUEST)
    assert server.requests[0]["headers"]["authorization"] == f"Bearer {KEY}"
    assert "***" in str(caught.value)
    assert KEY not in str(caught.value) and KEY not in repr(caught.value)
    assert KEY not in repr(client)


def test_no_key_no_authorization_header(server: ScriptedOpenAIServer) -> None:
    with OpenAICompatChat(server.base_url, "m") as chat:
        chat.complete(REQUEST)
    assert "authorization" not in server.requests[0]["headers"]


def test_a_timeout_is_retried_then_unavailable(
    server: ScriptedOpenAIServer, waits: list[float]
) -> None:
    for _ in range(2):
        server.script_delay(5.0)
    started = time.monotonic()
    with (
        OpenAICompatChat(
            server.base_url, "m", timeout_s=0.2, max_retries=1, sleep=waits.append
        ) as chat,
        pytest.raises(
            LLMUnavailableError,
            match=r"2 attempt\(s\); last: timed out after 0.2 s; raise MEMVAULT_LLM_TIMEOUT_S",
        ),
    ):
        chat.complete(REQUEST)
    assert time.monotonic() - started < 2
    assert len(server.requests) == 2
    assert len(waits) == 1 and chat.usage.snapshot()["llm_latency_ms"] >= 350


def test_a_slow_first_answer_then_a_quick_one(
    server: ScriptedOpenAIServer, waits: list[float]
) -> None:
    server.script_delay(5.0)
    server.script_text("quick")
    with OpenAICompatChat(server.base_url, "m", timeout_s=0.2, sleep=waits.append) as chat:
        reply = chat.complete(REQUEST)
    assert (reply.text, reply.attempts) == ("quick", 2)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"not json", "not JSON: not json"),
        (b"[" * 100_000, r"not JSON: \[\[\["),  # too deep to decode: RecursionError
        (b'{"a": ' * 50_000 + b"1" + b"}" * 50_000, "not JSON"),
        (b"[1, 2]", "not a JSON object"),
        (b'{"choices": []}', "no choices"),
        (b'{"error": {"message": "model qwen9 not found"}}', "no choices: model qwen9 not found"),
        (b'{"choices": [{"text": "legacy"}]}', r"no choices\[0\].message"),
        (_choice({"content": 5}), "not text"),
        (_choice({"content": [{"type": "text", "text": 5}]}), "not text"),
    ],
)
def test_malformed_answers_are_response_errors(
    server: ScriptedOpenAIServer, client: OpenAICompatChat, body: bytes, reason: str
) -> None:
    server.script_raw(body)
    with pytest.raises(LLMResponseError, match=reason):
        client.complete(REQUEST)
    assert len(server.requests) == 1  # not retried


@pytest.mark.parametrize("length", [True, False], ids=["declared", "streamed"])
def test_an_oversized_answer_is_refused(server: ScriptedOpenAIServer, length: bool) -> None:
    server.script_oversized(64 * 1024, length=length)
    server.script_text("small")
    with OpenAICompatChat(server.base_url, "m", max_response_bytes=1000) as chat:
        with pytest.raises(LLMResponseError, match="exceeds 1000 bytes"):
            chat.complete(REQUEST)
        assert chat.complete(REQUEST).text == "small"  # the client is still usable


def test_a_request_over_the_cap_is_never_sent(server: ScriptedOpenAIServer) -> None:
    big = ChatRequest((ChatMessage("user", "x" * 5000),))
    with (
        OpenAICompatChat(server.base_url, "m", max_request_bytes=1000) as chat,
        pytest.raises(LLMError, match=r"request of \d+ bytes exceeds llm_max_request_bytes=1000"),
    ):
        chat.complete(big)
    assert server.requests == []
    assert chat.usage.snapshot()["llm_failures_chat"] == 1


def test_a_closed_port_is_unavailable(waits: list[float]) -> None:
    with ScriptedOpenAIServer() as gone:
        url = gone.base_url
    with (
        OpenAICompatChat(url, "m", max_retries=1, sleep=waits.append) as chat,
        pytest.raises(
            LLMUnavailableError, match=r"2 attempt\(s\); last: could not connect"
        ) as caught,
    ):
        chat.complete(REQUEST)
    assert len(waits) == 1
    message = str(caught.value)
    assert url in message and "refused" in message.lower()  # where, and why
    assert message.endswith("set MEMVAULT_LLM_BASE_URL (llm_base_url) to a server that is running")
    assert "ConnectError" not in message and "\n" not in message


def test_a_closed_client_refuses(server: ScriptedOpenAIServer) -> None:
    chat = OpenAICompatChat(server.base_url, "m")
    chat.close()
    with pytest.raises(LLMError, match="closed"):
        chat.complete(REQUEST)
    assert server.requests == []


def test_usage_adds_up_per_purpose(server: ScriptedOpenAIServer, client: OpenAICompatChat) -> None:
    server.script_text("a", usage={"prompt_tokens": 10, "completion_tokens": 1})
    server.script_text("b", usage={"prompt_tokens": 20, "completion_tokens": 2})
    server.script_status(400)
    client.complete(REQUEST)
    client.ask("s", "u", purpose="summary")
    with pytest.raises(LLMResponseError):
        client.ask("s", "u", purpose="summary")
    usage = client.usage.snapshot()
    assert {k: v for k, v in usage.items() if "latency" not in k} == {
        "llm_calls": 3,
        "llm_failures": 1,
        "llm_prompt_tokens": 30,
        "llm_completion_tokens": 3,
        "llm_calls_extraction": 1,
        "llm_failures_extraction": 0,
        "llm_prompt_tokens_extraction": 10,
        "llm_completion_tokens_extraction": 1,
        "llm_calls_summary": 2,
        "llm_failures_summary": 1,
        "llm_prompt_tokens_summary": 20,
        "llm_completion_tokens_summary": 2,
    }
    assert usage["llm_latency_ms"] >= usage["llm_latency_ms_summary"] >= 0


def test_one_client_serves_many_threads(server: ScriptedOpenAIServer) -> None:
    server.responder = lambda request: request["body"]["messages"][-1]["content"].upper()
    results: dict[int, str] = {}

    def ask(n: int) -> None:
        results[n] = chat.ask("echo", f"call {n}").text

    with OpenAICompatChat(server.base_url, "m") as chat:
        threads = [threading.Thread(target=ask, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert results == {n: f"CALL {n}" for n in range(8)}
    assert chat.usage.snapshot()["llm_calls"] == 8


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        ({"model": ""}, "model name is empty"),
        ({"timeout_s": 0}, "timeout_s"),
        ({"timeout_s": float("nan")}, "timeout_s"),
        ({"max_retries": -1}, "max_retries"),
        ({"max_request_bytes": 0}, "max_request_bytes"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"base_url": "ftp://host/v1"}, "http"),
        ({"api_key": "sk-\nInjected: yes"}, "printable ASCII"),
    ],
)
def test_bad_construction_is_a_config_error(kwargs: dict[str, object], reason: str) -> None:
    arguments: dict[str, object] = {"base_url": "http://localhost:11434/v1", "model": "m"}
    with pytest.raises(ConfigError, match=reason) as caught:
        OpenAICompatChat(**(arguments | kwargs))  # type: ignore[arg-type]
    assert "Injected" not in str(caught.value)


def test_a_trailing_slash_and_the_repr() -> None:
    with OpenAICompatChat("http://localhost:8080/v1/", "llama", api_key=KEY) as chat:
        assert chat.url == "http://localhost:8080/v1/chat/completions"
        assert repr(chat) == "OpenAICompatChat('http://localhost:8080/v1', model='llama')"


def test_a_url_without_the_chat_endpoint_says_what_to_check(
    server: ScriptedOpenAIServer,
) -> None:
    """The usual mistake: Ollama's URL without /v1. The error names the URL it called."""
    base = server.base_url.removesuffix("/v1")
    refused = r"HTTP 404: .*no chat endpoint at .*end in /v1"
    with (
        OpenAICompatChat(base, "m1", max_retries=0) as wrong,
        pytest.raises(LLMResponseError, match=refused),
    ):
        wrong.complete(REQUEST)
