"""Chat models: one abstract primitive (:meth:`ChatModel.complete`), conveniences built on it,
and the accounting of every call (calls, failures, tokens, latency) per purpose."""

from __future__ import annotations

import math
import threading
import time
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import KW_ONLY, dataclass, fields
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from ..closing import Closing
from ..errors import ConfigError, ValidationError
from ..patterns import lazy

if TYPE_CHECKING:
    pass

Role = Literal["system", "user", "assistant", "tool"]
PURPOSE = lazy(r"[a-z][a-z0-9_]{0,39}")
"""A purpose labels counters (``llm_calls_<purpose>``): lowercase letters, digits, ``_``."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A model's call of a tool: its id, the tool's name and the arguments as the model wrote
    them (JSON text, not parsed: the caller checks it)."""

    id: str
    name: str
    arguments: str

    def to_dict(self) -> dict[str, Any]:
        """OpenAI's shape of a call."""
        function = {"name": self.name, "arguments": self.arguments}
        return {"id": self.id, "type": "function", "function": function}


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One message of the conversation sent to the model: an assistant's may carry the tool
    calls it made, and a ``tool`` message answers the call ``tool_call_id`` of tool ``name``."""

    role: Role
    content: str
    _: KW_ONLY
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """OpenAI's shape of the message."""
        message: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [call.to_dict() for call in self.tool_calls]
        if self.tool_call_id is not None:
            message["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            message["name"] = self.name
        return message

    @property
    def text(self) -> str:
        """What the message says, its calls' arguments included (what its tokens count)."""
        return "".join((self.content, *(c.name + c.arguments for c in self.tool_calls)))


@dataclass(frozen=True, slots=True)
class ResponseSchema:
    """A JSON schema the reply must follow (structured output), named; ``strict``: no key
    besides those it declares."""

    name: str
    schema: Mapping[str, Any]
    strict: bool = True


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One chat completion to ask for. ``max_tokens`` None: the model's default cap;
    ``purpose`` labels its accounting (``extraction``, ``summary``, ``compaction``…);
    ``schema``: the JSON schema the reply must follow, sent when the model takes one
    (:attr:`ChatModel.structured_output`); ``tools``: the tools the model may call, in OpenAI's
    shape (``{"type": "function", "function": {"name", "description", "parameters"}}``)."""

    messages: tuple[ChatMessage, ...]
    _: KW_ONLY
    max_tokens: int | None = None
    temperature: float = 0.0
    purpose: str = "chat"
    schema: ResponseSchema | None = None
    tools: tuple[Mapping[str, Any], ...] = ()

    def __post_init__(self) -> None:
        if not self.messages:
            raise ValidationError("a chat request needs at least one message")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValidationError(f"max_tokens must be at least 1, got {self.max_tokens}")
        if not (math.isfinite(self.temperature) and self.temperature >= 0):
            raise ValidationError(f"temperature must be >= 0, got {self.temperature}")
        if not PURPOSE.fullmatch(self.purpose):
            raise ValidationError(f"purpose must match {PURPOSE.pattern}, got {self.purpose!r}")


@dataclass(frozen=True, slots=True)
class ChatReply:
    """A model's answer and what it cost. ``estimated_tokens``: the server reported no usage,
    so tokens are estimated (:func:`estimate_tokens`). ``latency_ms`` covers every attempt and
    the waits between them; ``finish_reason`` is the server's (``stop``, ``length``…) if given;
    ``tool_calls``: the tools the model asked to call (a request that offered ``tools``)."""

    text: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float
    attempts: int = 1
    estimated_tokens: bool = False
    finish_reason: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The accounting of the reply (not its text nor its calls), for reports and logs."""
        found = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in _CONTENT}
        return found | {"latency_ms": round(self.latency_ms, 3)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], text: str = "") -> ChatReply:
        """The reply of :meth:`to_dict`, with ``text`` (which it leaves out)."""
        known = {f.name for f in fields(cls)} - _CONTENT
        return cls(text=text, **{k: v for k, v in data.items() if k in known})


_CONTENT = frozenset({"text", "tool_calls"})


def estimate_tokens(text: str) -> int:
    """The documented estimate where a server reports no usage: one token per 4 characters,
    rounded up (close for English; it over-counts code and under-counts CJK)."""
    return math.ceil(len(text) / 4)


def estimate_prompt_tokens(messages: Iterable[ChatMessage]) -> int:
    """:func:`estimate_tokens` of each message's content, summed."""
    return sum(estimate_tokens(m.text) for m in messages)


USAGE_FIELDS = ("calls", "failures", "prompt_tokens", "completion_tokens", "latency_ms")


class _Tally:
    """The counters of one purpose."""

    __slots__ = ("calls", "completion_tokens", "failures", "latency_ms", "prompt_tokens")

    def __init__(self) -> None:
        self.calls = self.failures = self.prompt_tokens = self.completion_tokens = 0
        self.latency_ms = 0.0

    def counts(self, suffix: str = "") -> dict[str, int]:
        return {f"llm_{name}{suffix}": round(getattr(self, name)) for name in USAGE_FIELDS}


class Usage:
    """Thread-safe accounting of a chat model's calls, overall and per purpose.

    :meth:`snapshot` has flat integer keys: ``llm_calls``, ``llm_failures``,
    ``llm_prompt_tokens``, ``llm_completion_tokens``, ``llm_latency_ms`` (always present), and
    the same per purpose seen, suffixed: ``llm_calls_extraction``, ``llm_failures_summary``…;
    once a task fell back to doing without the LLM, ``llm_fallbacks`` and per purpose
    ``llm_fallbacks_summary``…
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tallies: dict[str, _Tally] = {}
        self._fallbacks: Counter[str] = Counter()

    def record(self, purpose: str, reply: ChatReply) -> None:
        """Count one answered call."""
        with self._lock:
            for tally in self._both(purpose):
                tally.calls += 1
                tally.prompt_tokens += reply.prompt_tokens
                tally.completion_tokens += reply.completion_tokens
                tally.latency_ms += reply.latency_ms

    def record_failure(self, purpose: str, latency_ms: float) -> None:
        """Count one call that raised instead of answering."""
        with self._lock:
            for tally in self._both(purpose):
                tally.calls += 1
                tally.failures += 1
                tally.latency_ms += latency_ms

    def record_fallback(self, purpose: str) -> None:
        """Count one task that did without the LLM after its call failed (the call itself is
        counted by :meth:`record_failure`)."""
        with self._lock:
            self._fallbacks.update(("", purpose))

    def snapshot(self) -> dict[str, int]:
        """The counters now (see the class docstring for the keys)."""
        with self._lock:
            counts = self._tallies.get("", _Tally()).counts()
            for purpose, tally in sorted(self._tallies.items()):
                if purpose:
                    counts |= tally.counts(f"_{purpose}")
            for purpose, n in sorted(self._fallbacks.items()):
                counts[f"llm_fallbacks_{purpose}" if purpose else "llm_fallbacks"] = n
            return counts

    def by_purpose(self) -> dict[str, dict[str, float]]:
        """Each purpose's counters, unrounded: the ``USAGE_FIELDS`` and ``fallbacks``."""
        with self._lock:
            purposes = sorted({p for p in (*self._tallies, *self._fallbacks) if p})
            return {purpose: self._counters(purpose) for purpose in purposes}

    def _counters(self, purpose: str) -> dict[str, float]:
        """One purpose's counters (the caller holds the lock)."""
        tally = self._tallies.get(purpose, _Tally())
        found: dict[str, float] = {name: getattr(tally, name) for name in USAGE_FIELDS}
        return found | {"fallbacks": self._fallbacks[purpose]}

    def _both(self, purpose: str) -> tuple[_Tally, _Tally]:
        """The overall tally and the purpose's (the caller holds the lock)."""
        return self._tallies.setdefault("", _Tally()), self._tallies.setdefault(purpose, _Tally())


class ChatModel(Closing, ABC):
    """A chat model. Implementations provide :meth:`complete` (blocking: the async API runs it
    in a thread) and run its work through :meth:`_accounted`, so :attr:`usage` counts every
    call. Models are context managers (:meth:`close` on exit)."""

    name: str = "chat"
    """The model's name (part of cache keys: another model makes new summaries)."""

    def __init__(self) -> None:
        self.usage = Usage()

    @property
    def structured_output(self) -> bool:
        """Whether a request's ``schema`` is sent to the model now (structured output); a
        caller that asks with one writes its prompt for JSON. Off by default."""
        return False

    @abstractmethod
    def complete(self, request: ChatRequest) -> ChatReply:
        """Answer one request, or raise an :class:`~memvault.errors.LLMError`."""

    def ask(
        self, system: str, user: str, *, purpose: str = "chat", max_tokens: int | None = None
    ) -> ChatReply:
        """One system and one user message."""
        messages = (ChatMessage("system", system), ChatMessage("user", user))
        return self.complete(ChatRequest(messages, max_tokens=max_tokens, purpose=purpose))

    def check(self) -> None:
        """Raise :class:`~memvault.errors.LLMUnavailableError` if the model cannot be reached
        at all (nothing to check by default)."""

    def close(self) -> None:
        """Release connections (nothing by default)."""

    def _accounted(self, request: ChatRequest, answer: Callable[[], ChatReply]) -> ChatReply:
        """``answer()``, recorded in :attr:`usage`: its reply, or its failure and latency."""
        started = time.perf_counter()
        try:
            reply = answer()
        except Exception:
            self.usage.record_failure(request.purpose, (time.perf_counter() - started) * 1000)
            raise
        self.usage.record(request.purpose, reply)
        return reply


def check_base_url(url: str) -> str:
    """``url`` without a trailing slash, if it is an http(s) URL of a server; else ConfigError.
    Credentials in the URL are refused (without echoing them): use ``llm_api_key``."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
    except ValueError:
        raise ConfigError("llm_base_url is not a valid URL") from None
    if "@" in parts.netloc:
        raise ConfigError("llm_base_url must not hold credentials; set llm_api_key instead")
    if parts.scheme not in ("http", "https") or not host:
        raise ConfigError(f"llm_base_url must be an http(s) URL with a host, got {url!r}")
    if parts.query or parts.fragment:
        raise ConfigError(f"llm_base_url must have no query or fragment, got {url!r}")
    return url.strip().rstrip("/")
