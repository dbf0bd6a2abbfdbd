"""A real OpenAI-protocol server that plays three models by what it is asked: the chat model
(scripted answers and tool calls, in order), the analysis model (a function of the rows) and
the extraction model (obedient: it follows every instruction it reads, as a compromised model
would)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from memvault.chat.agent import BASE_PROMPT
from memvault.testing.obedient import obey
from memvault.testing.openai_server import ScriptedOpenAIServer, Step, tool_calls_step

Request = dict[str, Any]


def kind(request: Request) -> str:
    """``chat``, ``analysis`` or ``extraction``: which model a request is for."""
    system = request["body"]["messages"][0]["content"]
    if system.startswith(BASE_PROMPT):
        return "chat"
    return "analysis" if "You analyse a table" in system else "extraction"


def finding(content: str, severity: str = "critical") -> str:
    """An analysis answer proposing one finding."""
    return json.dumps({"notes": "seen", "findings": [{"content": content, "severity": severity}]})


class Router:
    """Answers each request as the model it is for; records the chat requests."""

    def __init__(self, server: ScriptedOpenAIServer) -> None:
        self.chat: list[Step | str] = []
        self.default_chat: Callable[[Request], Step | str] = lambda request: "Done."
        self.analysis: Callable[[Request], str] = lambda request: finding(
            "Osaka sold 1850 units in week 10"
        )
        self.extraction: Callable[[Request], str] = lambda request: obey(
            "\n".join(m["content"] or "" for m in request["body"]["messages"])
        )
        self.chats: list[Request] = []
        server.responder = self

    def calls(self, *calls: tuple[str, dict[str, Any] | str]) -> None:
        """The chat model's next answer calls these tools."""
        self.chat.append(tool_calls_step(*calls))

    def says(self, text: str) -> None:
        self.chat.append(text)

    def __call__(self, request: Request) -> Step | str:
        which = kind(request)
        if which == "chat":
            self.chats.append(request)
            return self.chat.pop(0) if self.chat else self.default_chat(request)
        return self.analysis(request) if which == "analysis" else self.extraction(request)


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as running:
        yield running


@pytest.fixture
def model(server: ScriptedOpenAIServer) -> Router:
    return Router(server)
