"""Tool calls through the OpenAI-compatible client, against the real scripted server: the tools
offered, the calls answered, the tool messages sent back, and malformed calls refused."""

from __future__ import annotations

import json

import pytest

from memvault import LLMResponseError
from memvault.llm.base import ChatMessage, ChatRequest
from memvault.llm.openai_compat import OpenAICompatChat
from memvault.testing.openai_server import ScriptedOpenAIServer

TOOL = {
    "type": "function",
    "function": {
        "name": "load-data",
        "description": "Load a file",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
    },
}


def test_the_model_calls_a_tool_and_reads_its_result(
    server: ScriptedOpenAIServer, client: OpenAICompatChat
) -> None:
    server.script_tool_calls(("load-data", {"path": "sales.csv"}))
    ask = (ChatMessage("user", "Load sales.csv"),)
    reply = client.complete(ChatRequest(ask, tools=(TOOL,)))
    [call] = reply.tool_calls
    assert (call.name, json.loads(call.arguments), reply.finish_reason) == (
        "load-data",
        {"path": "sales.csv"},
        "tool_calls",
    )
    assert reply.text == ""
    assert server.requests[0]["body"]["tools"] == [TOOL]

    server.script_text("Loaded 3 rows.")
    answered = (
        *ask,
        ChatMessage("assistant", "", tool_calls=(call,)),
        ChatMessage("tool", "3 rows", tool_call_id=call.id, name="load-data"),
    )
    assert client.complete(ChatRequest(answered, tools=(TOOL,))).text == "Loaded 3 rows."
    sent = server.requests[1]["body"]["messages"]
    assert sent[1] == {"role": "assistant", "content": "", "tool_calls": [call.to_dict()]}
    assert sent[2] == {
        "role": "tool",
        "content": "3 rows",
        "tool_call_id": call.id,
        "name": "load-data",
    }


def test_a_request_without_tools_sends_no_tools_key(
    server: ScriptedOpenAIServer, client: OpenAICompatChat
) -> None:
    server.script_text("hi")
    client.complete(ChatRequest((ChatMessage("user", "Hi"),)))
    assert "tools" not in server.requests[0]["body"]


def _answer(calls: object) -> bytes:
    message = {"role": "assistant", "content": None, "tool_calls": calls}
    return json.dumps({"choices": [{"message": message, "finish_reason": "tool_calls"}]}).encode()


def test_decoded_arguments_and_missing_ids_are_accepted(
    server: ScriptedOpenAIServer, client: OpenAICompatChat
) -> None:
    server.script_raw(_answer([{"function": {"name": "resolve-date", "arguments": {"x": 1}}}]))
    [call] = client.complete(ChatRequest((ChatMessage("user", "When?"),))).tool_calls
    assert (call.name, call.arguments) == ("resolve-date", '{"x": 1}')
    assert len(call.id) == 9 and call.id.isalnum()
    server.script_raw(_answer([{"function": {"name": "describe-data", "arguments": None}}]))
    [bare] = client.complete(ChatRequest((ChatMessage("user", "What?"),))).tool_calls
    assert bare.arguments == "" and bare.id != call.id


@pytest.mark.parametrize(
    "calls",
    [{"function": {}}, [{"function": {"name": ""}}], [{"function": {"name": "x", "arguments": 3}}]],
)
def test_a_malformed_call_is_an_llm_response_error(
    server: ScriptedOpenAIServer, client: OpenAICompatChat, calls: object
) -> None:
    server.script_raw(_answer(calls))
    with pytest.raises(LLMResponseError, match="tool"):
        client.complete(ChatRequest((ChatMessage("user", "Hi"),)))
