"""A real OpenAI-protocol server per test, and a client of it whose waits are recorded."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memvault.llm.base import ChatMessage, ChatRequest
from memvault.llm.openai_compat import OpenAICompatChat
from memvault.testing.openai_server import ScriptedOpenAIServer

KEY = "sk-test-0123456789abcdef"
REQUEST = ChatRequest(
    (ChatMessage("system", "Be brief."), ChatMessage("user", "Hi")), purpose="extraction"
)


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as running:
        yield running


@pytest.fixture
def waits() -> list[float]:
    """The seconds the client chose to wait between attempts (it never really sleeps)."""
    return []


@pytest.fixture
def client(server: ScriptedOpenAIServer, waits: list[float]) -> Iterator[OpenAICompatChat]:
    with OpenAICompatChat(
        server.base_url, "m1", api_key=KEY, timeout_s=2.0, max_retries=2, sleep=waits.append
    ) as chat:
        yield chat
