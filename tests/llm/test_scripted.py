"""The scripted double that the layers above the client are tested with."""

from __future__ import annotations

import pytest

from memvault import LLMResponseError, LLMUnavailableError
from memvault.llm import ChatModel, ChatRequest, ScriptedChat

from .conftest import REQUEST


def test_replies_in_order_then_the_responder() -> None:
    chat = ScriptedChat(["one", LLMUnavailableError("down")], responder=lambda r: "more")
    assert chat.complete(REQUEST).text == "one"
    assert chat.remaining == 1
    with pytest.raises(LLMUnavailableError, match="down"):
        chat.complete(REQUEST)
    assert chat.complete(REQUEST).text == "more"
    assert chat.requests == [REQUEST] * 3
    usage = chat.usage.snapshot()
    assert (usage["llm_calls_extraction"], usage["llm_failures_extraction"]) == (3, 1)


def test_a_function_answers_every_request() -> None:
    def answer(request: ChatRequest) -> str:
        return request.messages[-1].content[::-1]

    with ScriptedChat(answer, name="reverser") as chat:
        reply = chat.ask("system", "abc", purpose="summary")
    assert isinstance(chat, ChatModel)
    assert (reply.text, reply.model, reply.attempts) == ("cba", "reverser", 1)
    assert reply.estimated_tokens and (reply.prompt_tokens, reply.completion_tokens) == (3, 1)
    assert chat.requests[0].purpose == "summary"


def test_an_exhausted_script_is_a_response_error() -> None:
    chat = ScriptedChat("only")
    assert chat.complete(REQUEST).text == "only"
    with pytest.raises(LLMResponseError, match="no scripted reply left"):
        chat.complete(REQUEST)
    assert chat.usage.snapshot()["llm_failures"] == 1


def test_a_responder_that_raises_is_a_counted_failure() -> None:
    def broken(request: ChatRequest) -> str:
        raise LLMResponseError("garbled")

    chat = ScriptedChat(broken)
    with pytest.raises(LLMResponseError, match="garbled"):
        chat.complete(REQUEST)
    assert chat.usage.snapshot()["llm_failures"] == 1 and len(chat.requests) == 1
