"""Structured output through the OpenAI-compatible client, against a real HTTP server: a
request's schema sent as OpenAI's ``response_format``, the refusals of real servers recognised
(and remembered with ``auto``), other errors left as they were."""

from __future__ import annotations

import json
import logging

import pytest

from memvault import ConfigError, LLMResponseError, LLMUnavailableError, StructuredOutputError
from memvault.llm.base import ChatMessage, ChatRequest, ResponseSchema
from memvault.llm.openai_compat import OpenAICompatChat, response_format
from memvault.llm.scripted import ScriptedChat
from memvault.testing.openai_server import ScriptedOpenAIServer, structured

from .conftest import REQUEST

SCHEMA = ResponseSchema("answer", {"type": "object", "properties": {}, "required": []})
ASKED = ChatRequest((ChatMessage("user", "Hi"),), purpose="extraction", schema=SCHEMA)

REFUSALS = {
    "llama.cpp before json_schema": (
        400,
        {
            "error": {
                "code": 400,
                "message": 'response_format type must be one of "text" or "json_object", '
                "but got: json_schema",
                "type": "invalid_request_error",
            }
        },
    ),
    "llama.cpp, a thinking template": (
        400,
        {
            "error": {
                "code": 400,
                "message": "Failed to initialize samplers: Unexpected empty grammar stack after "
                "accepting piece: <think> (248068)",
            }
        },
    ),
    "vLLM, xgrammar": (
        400,
        {
            "object": "error",
            "message": "The provided JSON schema contains features not supported by xgrammar.",
            "type": "BadRequestError",
            "code": 400,
        },
    ),
    "vLLM before json_schema": (
        422,
        {
            "detail": [
                {
                    "loc": ["body", "response_format", "type"],
                    "msg": "Input should be 'text' or 'json_object'",
                }
            ]
        },
    ),
    "LM Studio": (400, {"error": "'response_format.json_schema.schema' must be an object"}),
    "a grammar error as a 500": (500, {"error": {"message": "Grammar error: Unimplemented keys"}}),
    "a proxy": (400, {"error": {"message": "this model does not support it (unsupported)"}}),
}


def _client(
    server: ScriptedOpenAIServer, waits: list[float], structured: str = "auto"
) -> OpenAICompatChat:
    return OpenAICompatChat(
        server.base_url, "m1", max_retries=2, structured=structured, sleep=waits.append
    )


def test_a_schema_is_sent_as_openai_response_format(
    server: ScriptedOpenAIServer, client: OpenAICompatChat
) -> None:
    assert client.structured == "auto" and client.structured_output
    client.complete(ASKED)
    client.complete(REQUEST)  # no schema: no response_format
    asked, plain = (r["body"] for r in server.requests)
    assert (
        asked["response_format"]
        == response_format(SCHEMA)
        == {
            "type": "json_schema",
            "json_schema": {"name": "answer", "strict": True, "schema": dict(SCHEMA.schema)},
        }
    )
    assert "response_format" not in plain


def test_off_sends_no_schema_and_other_models_take_none(
    server: ScriptedOpenAIServer, waits: list[float]
) -> None:
    with _client(server, waits, structured="off") as chat:
        assert not chat.structured_output
        chat.complete(ASKED)
    assert not structured(server.requests[0])
    assert not ScriptedChat().structured_output  # a model that does not say it takes a schema


@pytest.mark.parametrize("refusal", REFUSALS.values(), ids=list(REFUSALS))
def test_a_refusal_is_remembered_and_said_once(
    server: ScriptedOpenAIServer,
    waits: list[float],
    caplog: pytest.LogCaptureFixture,
    refusal: tuple[int, object],
) -> None:
    status, body = refusal
    server.script_status(status, body=json.dumps(body).encode())
    with _client(server, waits) as chat, caplog.at_level(logging.WARNING, "memvault.llm"):
        with pytest.raises(StructuredOutputError) as caught:
            chat.complete(ASKED)
        assert not chat.structured_output
        assert chat.complete(ASKED).text == "NONE"  # asked again, without the schema
        chat.complete(ASKED)
    message = str(caught.value)
    assert server.base_url in message and "m1" in message and f"HTTP {status}" in message
    assert [structured(r) for r in server.requests] == [True, False, False]
    assert waits == []  # a refusal is not retried
    assert chat.usage.snapshot()["llm_failures"] == 1
    (said,) = [r.getMessage() for r in caplog.records]
    assert "refused structured output for m1" in said and "from now on" in said


def test_on_fails_on_a_refusal_and_keeps_asking(
    server: ScriptedOpenAIServer, waits: list[float]
) -> None:
    server.refuse_structured_output()
    with _client(server, waits, structured="on") as chat:
        for _ in range(2):
            with pytest.raises(StructuredOutputError, match="MEMVAULT_LLM_STRUCTURED"):
                chat.complete(ASKED)
        assert chat.structured_output
    assert [structured(r) for r in server.requests] == [True, True]


@pytest.mark.parametrize(
    ("request_", "status", "message"),
    [
        (ASKED, 400, "the request exceeds the available context size"),
        (REQUEST, 400, "Failed to parse grammar"),  # about a schema, but none was sent
    ],
)
def test_other_client_errors_are_not_refusals(
    server: ScriptedOpenAIServer,
    waits: list[float],
    request_: ChatRequest,
    status: int,
    message: str,
) -> None:
    server.script_status(status, body=json.dumps({"error": {"message": message}}).encode())
    with _client(server, waits) as chat:
        with pytest.raises(LLMResponseError) as caught:
            chat.complete(request_)
        assert not isinstance(caught.value, StructuredOutputError)
        assert chat.structured_output


def test_a_500_that_does_not_name_the_schema_is_retried_as_before(
    server: ScriptedOpenAIServer, waits: list[float]
) -> None:
    for _ in range(3):
        server.script_status(500, body=b'{"error": {"message": "CUDA out of memory"}}')
    with _client(server, waits) as chat:
        with pytest.raises(LLMUnavailableError, match="3 attempt"):
            chat.complete(ASKED)
        assert chat.structured_output
    assert len(waits) == 2


def test_an_unknown_mode_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="structured must be one of auto, on, off"):
        OpenAICompatChat("http://127.0.0.1:1/v1", "m", structured="yes")
