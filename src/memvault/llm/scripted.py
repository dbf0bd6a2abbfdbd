"""A deterministic chat model for tests of the layers above the client (extraction, summaries):
scripted replies, every request kept. The client itself is tested against a real server
(:mod:`memvault.testing.openai_server`)."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable

from ..errors import LLMResponseError
from .base import ChatModel, ChatReply, ChatRequest, estimate_prompt_tokens, estimate_tokens

Reply = str | Exception | ChatReply
Responder = Callable[[ChatRequest], str | ChatReply]


class ScriptedChat(ChatModel):
    """Answers with the scripted replies in order (an exception in the list is raised instead,
    a :class:`ChatReply` — tool calls, say — is returned as it is), then with ``responder``;
    with neither left, a request raises LLMResponseError.

    ``ScriptedChat(["first", LLMUnavailableError("down")])`` or ``ScriptedChat(function)``.
    Tokens are estimated, latency is 0; :attr:`requests` holds every request received.
    """

    def __init__(
        self,
        script: Iterable[Reply] | Responder = (),
        *,
        responder: Responder | None = None,
        name: str = "scripted",
    ) -> None:
        super().__init__()
        self.name = name
        self.requests: list[ChatRequest] = []
        self._replies: deque[Reply] = deque()
        if callable(script):
            responder = script
        else:
            self._replies.extend([script] if isinstance(script, str) else script)
        self._responder = responder
        self._lock = threading.Lock()

    @property
    def remaining(self) -> int:
        """Scripted replies not used yet."""
        with self._lock:
            return len(self._replies)

    def complete(self, request: ChatRequest) -> ChatReply:
        return self._accounted(request, lambda: self._answer(request))

    def _answer(self, request: ChatRequest) -> ChatReply:
        with self._lock:
            self.requests.append(request)
            scripted = self._replies.popleft() if self._replies else None
        if isinstance(scripted, Exception):
            raise scripted
        if scripted is None:
            if self._responder is None:
                raise LLMResponseError(f"{self.name}: no scripted reply left")
            scripted = self._responder(request)
        if isinstance(scripted, ChatReply):
            return scripted
        prompt = estimate_prompt_tokens(request.messages)
        return ChatReply(scripted, self.name, prompt, estimate_tokens(scripted), 0.0, 1, True)
