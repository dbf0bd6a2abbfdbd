"""The pure parts: requests, replies, the accounting, the protocol's fields and waits, and
making a client from settings."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from typing import Any

import pytest

from memvault import ConfigError, LLMResponseError, Memory, Settings, ValidationError
from memvault.llm import OpenAICompatChat, chat_model_from_settings
from memvault.llm.base import ChatMessage, ChatReply, ChatRequest, Usage, estimate_tokens
from memvault.llm.openai_compat import backoff, excerpt, parse_answer, request_body, retry_after
from memvault.testing import HashEmbedder

from .conftest import KEY, REQUEST

REPLY = ChatReply("hello", "m", 10, 2, 12.34567, attempts=2)


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        ({"messages": ()}, "at least one message"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"temperature": -1.0}, "temperature"),
        ({"temperature": float("inf")}, "temperature"),
        ({"purpose": "Extraction run"}, "purpose"),
    ],
)
def test_a_bad_request_is_refused(kwargs: dict[str, object], reason: str) -> None:
    values: dict[str, object] = {"messages": (ChatMessage("user", "hi"),)} | kwargs
    with pytest.raises(ValidationError, match=reason):
        ChatRequest(**values)  # type: ignore[arg-type]


def test_a_request_takes_its_options_by_keyword() -> None:
    with pytest.raises(TypeError):
        ChatRequest((ChatMessage("user", "hi"),), 5)  # type: ignore[call-arg]


def test_a_reply_as_a_dict_is_its_accounting() -> None:
    assert REPLY.to_dict() == {
        "model": "m",
        "prompt_tokens": 10,
        "completion_tokens": 2,
        "latency_ms": 12.346,
        "attempts": 2,
        "estimated_tokens": False,
        "finish_reason": None,
    }


@pytest.mark.parametrize(("text", "tokens"), [("", 0), ("abc", 1), ("abcd", 1), ("abcde", 2)])
def test_the_token_estimate_is_a_quarter_of_the_characters_rounded_up(
    text: str, tokens: int
) -> None:
    assert estimate_tokens(text) == tokens


def test_usage_starts_at_zero_and_counts_from_many_threads() -> None:
    usage = Usage()
    assert usage.snapshot() == {
        "llm_calls": 0,
        "llm_failures": 0,
        "llm_prompt_tokens": 0,
        "llm_completion_tokens": 0,
        "llm_latency_ms": 0,
    }

    def work() -> None:
        for _ in range(100):
            usage.record("extraction", REPLY)
            usage.record_failure("summary", 0.5)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    counts = usage.snapshot()
    assert (counts["llm_calls"], counts["llm_failures"]) == (800, 400)
    assert (counts["llm_prompt_tokens_extraction"], counts["llm_prompt_tokens_summary"]) == (
        4000,
        0,
    )
    assert counts["llm_latency_ms"] == round(400 * 12.34567 + 400 * 0.5)
    assert all(isinstance(v, int) for v in counts.values())


def test_the_body_follows_the_protocol() -> None:
    body = request_body(REQUEST, "qwen3", None, 10_000)
    assert b'"max_tokens"' not in body and b'"stream": false' in body
    with pytest.raises(Exception, match="exceeds llm_max_request_bytes=10;"):
        request_body(REQUEST, "qwen3", None, 10)


def test_an_answer_without_usage_has_no_counts() -> None:
    answer = parse_answer({"choices": [{"message": {"content": "x"}}], "usage": {"x": True}})
    assert (answer.text, answer.finish_reason, answer.model) == ("x", None, None)
    assert (answer.prompt_tokens, answer.completion_tokens) == (None, None)


def test_an_error_body_quoted_in_a_message_masks_the_key() -> None:
    with pytest.raises(LLMResponseError) as caught:
        parse_answer({"error": {"message": f"bad key {KEY}"}}, KEY)
    assert KEY not in str(caught.value) and "bad key ***" in str(caught.value)


def test_an_excerpt_is_short_and_printable() -> None:
    assert excerpt(b"a\x00b\n\n c") == "a b c"
    assert excerpt(b"\xff ok") == "\ufffd ok"
    assert len(excerpt(b"y" * 5000)) == 201


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("2", 2.0),
        ("0.25", 0.25),
        ("-3", 0.0),
        ("999", 30.0),
        ("inf", 30.0),
        ("nan", None),
        ("soon", None),
        ("", None),
        ("Thu, 01 Jan 2026 12:00:05 GMT", 5.0),
    ],
)
def test_retry_after(value: str, seconds: float | None) -> None:
    now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    assert retry_after({"retry-after": value}, now) == seconds


def test_backoff_grows_and_is_capped() -> None:
    for attempt, ceiling in [(1, 0.5), (2, 1.0), (3, 2.0), (10, 8.0)]:
        assert all(0 <= backoff(attempt) <= ceiling for _ in range(50))


def test_no_base_url_no_model() -> None:
    assert chat_model_from_settings(Settings()) is None


@pytest.mark.parametrize(
    ("url", "model", "reason"),
    [
        ("http://localhost:11434/v1", "", "MEMVAULT_LLM_MODEL is empty"),
        ("localhost:11434", "m", "http"),
        ("ftp://example.com/v1", "m", "http"),
        ("http:///v1", "m", "with a host"),
        ("http://localhost:8080/v1?key=1", "m", "no query"),
        (f"https://user:{KEY}@api.example.com/v1", "m", "must not hold credentials"),
    ],
)
def test_bad_llm_settings_are_config_errors(url: str, model: str, reason: str) -> None:
    with pytest.raises(ConfigError, match=reason) as caught:
        chat_model_from_settings(Settings(llm_base_url=url, llm_model=model))
    assert KEY not in str(caught.value)


def test_settings_make_the_client() -> None:
    settings = Settings(
        llm_base_url="https://api.openai.com/v1/",
        llm_model="gpt-4o-mini",
        llm_api_key=KEY,
        llm_timeout_s=5.0,
        llm_max_retries=1,
        llm_max_request_bytes=2048,
        llm_max_tokens=99,
    )
    made = chat_model_from_settings(settings)
    assert isinstance(made, OpenAICompatChat)
    with made:
        assert (made.name, made.url) == (
            "gpt-4o-mini",
            "https://api.openai.com/v1/chat/completions",
        )
        assert (made.timeout_s, made.max_retries, made.max_tokens) == (5.0, 1, 99)
        assert made.max_request_bytes == 2048
        assert KEY not in repr(made) and KEY not in repr(settings)


@pytest.mark.parametrize(
    ("store", "bad"),
    [(":memory:", {"redact": "names"}), (":memory:", {"redact_phone_regions": "XX"}), ("x://", {})],
)
def test_a_memory_that_fails_to_open_closes_the_client_it_made(
    store: str, bad: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[OpenAICompatChat] = []
    opened = OpenAICompatChat.__init__

    def recorded(self: OpenAICompatChat, *args: Any, **kwargs: Any) -> None:
        opened(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(OpenAICompatChat, "__init__", recorded)
    settings = Settings(llm_base_url="http://127.0.0.1:9/v1", llm_model="m", **bad)  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        Memory(store, settings=settings, embedder=HashEmbedder())
    [chat] = made
    assert chat._client.is_closed
