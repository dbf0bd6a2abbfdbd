"""Chat models: one abstract primitive (``ChatModel.complete``), an OpenAI-compatible client,
a scripted test double, and the accounting of every call.

The HTTP client (httpx) is imported on first use of :class:`OpenAICompatChat`, so commands
that need no LLM start fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import (
    ChatMessage,
    ChatModel,
    ChatReply,
    ChatRequest,
    ToolCall,
    Usage,
    estimate_tokens,
)
from .configured import chat_model_from_settings
from .scripted import ScriptedChat

if TYPE_CHECKING:
    from .openai_compat import OpenAICompatChat

__all__ = [
    "ChatMessage",
    "ChatModel",
    "ChatReply",
    "ChatRequest",
    "OpenAICompatChat",
    "ScriptedChat",
    "ToolCall",
    "Usage",
    "chat_model_from_settings",
    "estimate_tokens",
]


def __getattr__(name: str) -> Any:
    if name == "OpenAICompatChat":
        from .openai_compat import OpenAICompatChat

        return OpenAICompatChat
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
