"""A client of any server speaking OpenAI's chat-completions protocol: Ollama
(``http://localhost:11434/v1``), LM Studio (``:1234/v1``), llama.cpp's server (``:8080/v1``),
vLLM, OpenAI (``https://api.openai.com/v1``).

Bounded both ways (the request is refused before sending, the answer read no further than its
cap), retried with jittered exponential backoff on 429, 5xx, connection failures and timeouts
(honouring ``Retry-After`` up to a cap). The waits are bounded by the call's time budget,
``(max_retries + 1) * timeout_s`` (attempts and waits together): a backoff is cut to what is
left, and a ``Retry-After`` longer than that fails the call at once. The pure protocol logic
(the body, the answer's fields, the waits) comes first; :class:`OpenAICompatChat` only does the
I/O.

Structured output: a request with a ``schema`` carries it as OpenAI's ``response_format``
``{"type": "json_schema", "json_schema": {"name", "strict", "schema"}}`` — the form Ollama,
vLLM, llama.cpp's server and LM Studio read (LM Studio refuses ``json_object``; llama.cpp reads
the schema only nested in ``json_schema``; Ollama ignores ``name`` and ``strict``). A server
that refuses it (400/422 naming the schema, ``response_format``, a grammar or "unsupported"; a
500 naming the schema or grammar) raises :class:`~memvault.errors.StructuredOutputError`, and
with ``structured="auto"`` the client sends no schema from then on.
"""

from __future__ import annotations

import json
import logging
import math
import random
import re
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from ..config import STRUCTURED_MODES
from ..errors import (
    ConfigError,
    LLMError,
    LLMResponseError,
    LLMUnavailableError,
    StructuredOutputError,
)
from ..patterns import lazy
from .base import (
    ChatModel,
    ChatReply,
    ChatRequest,
    ResponseSchema,
    ToolCall,
    check_base_url,
    estimate_prompt_tokens,
    estimate_tokens,
)

RETRIED_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_RETRY_AFTER_S = 30.0
EXCERPT_CHARS = 200
EXCERPT_BYTES = 1024
UNUSABLE_FINISH = frozenset({"length", "content_filter"})
SCHEMA_NAMED = lazy(
    r"response_format|json_schema|json schema|grammar|guided|structured output|xgrammar", re.I
)
UNSUPPORTED = lazy(r"unsupported|not supported|not implemented|unknown parameter", re.I)
"""What a server's refusal of a schema says (vLLM: "…JSON schema contains features not supported
by xgrammar"; llama.cpp: "response_format type must be one of…", "…empty grammar stack…";
LM Studio: "'response_format.type' must be…")."""

log = logging.getLogger("memvault.llm")


# --- the protocol, without I/O ---------------------------------------------------------------


def request_body(
    request: ChatRequest,
    model: str,
    max_tokens: int | None,
    limit: int,
    *,
    structured: bool = False,
) -> bytes:
    """The JSON body asking ``model`` for ``request`` (with its schema if ``structured``);
    LLMError past ``limit`` bytes."""
    payload: dict[str, Any] = {
        "model": model,
        "messages": [m.to_dict() for m in request.messages],
        "temperature": request.temperature,
        "stream": False,
    }
    cap = request.max_tokens if request.max_tokens is not None else max_tokens
    if cap is not None:
        payload["max_tokens"] = cap
    if structured and request.schema is not None:
        payload["response_format"] = response_format(request.schema)
    if request.tools:
        payload["tools"] = [dict(tool) for tool in request.tools]
    body = json.dumps(payload, ensure_ascii=False).encode()
    if len(body) > limit:
        raise LLMError(
            f"the LLM request of {len(body)} bytes exceeds llm_max_request_bytes={limit}; "
            "nothing was sent"
        )
    return body


def response_format(schema: ResponseSchema) -> dict[str, Any]:
    """OpenAI's ``response_format`` asking for a reply that follows ``schema``."""
    inner = {"name": schema.name, "strict": schema.strict, "schema": dict(schema.schema)}
    return {"type": "json_schema", "json_schema": inner}


def refuses_schema(status: int, raw: bytes) -> bool:
    """Whether an error answer to a request with a schema refuses the schema itself: a 400 or
    422 that names it (or says unsupported), a 500 or 501 that names it."""
    text = raw.decode("utf-8", "replace")
    if status in (400, 422):
        return bool(SCHEMA_NAMED.search(text) or UNSUPPORTED.search(text))
    return status in (500, 501) and bool(SCHEMA_NAMED.search(text))


@dataclass(frozen=True, slots=True)
class Answer:
    """The fields of a chat-completions answer that memvault uses."""

    text: str
    model: str | None
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    tool_calls: tuple[ToolCall, ...] = ()


def parse_answer(data: Any, secret: str = "") -> Answer:
    """The answer in a decoded chat-completions body; LLMResponseError if it holds none
    (its message quotes the server's error, ``secret`` masked).

    A null or absent ``content`` (reasoning models put their thoughts in ``reasoning_content``)
    is empty text, unless the model stopped for ``length`` or ``content_filter``.
    """
    if not isinstance(data, dict):
        raise LLMResponseError("the LLM server's answer is not a JSON object")
    choices = data.get("choices")
    if not (isinstance(choices, list) and choices and isinstance(choices[0], dict)):
        raise LLMResponseError(
            f"the LLM server's answer has no choices{_error_detail(data, secret)}"
        )
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise LLMResponseError("the LLM server's answer has no choices[0].message")
    finish = choices[0].get("finish_reason")
    finish = finish if isinstance(finish, str) else None
    text = _content_text(message.get("content"))
    calls = _tool_calls(message.get("tool_calls"))
    if not text and not calls and finish in UNUSABLE_FINISH:
        raise LLMResponseError(
            f"the LLM answered no text (finish_reason={finish}); "
            "a reasoning model may need a larger llm_max_tokens"
        )
    usage = data.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    model = data.get("model")
    return Answer(
        text=text,
        model=model if isinstance(model, str) and model else None,
        finish_reason=finish,
        prompt_tokens=_count(usage.get("prompt_tokens")),
        completion_tokens=_count(usage.get("completion_tokens")),
        tool_calls=calls,
    )


def _tool_calls(calls: Any) -> tuple[ToolCall, ...]:
    """The message's tool calls (OpenAI's shape); LLMResponseError for one that is malformed.
    A call without an id gets a fresh one of 9 letters and digits (some local servers send
    none; Mistral's templates want that shape); null arguments are none."""
    if calls is None:
        return ()
    if not isinstance(calls, list):
        raise LLMResponseError("the LLM server's tool_calls is not a list")
    found = []
    for n, call in enumerate(calls):
        function = call.get("function") if isinstance(call, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        arguments = function.get("arguments") if isinstance(function, dict) else None
        if isinstance(arguments, dict):  # Ollama has sent the arguments decoded
            arguments = json.dumps(arguments, ensure_ascii=False)
        if not (isinstance(name, str) and name):
            raise LLMResponseError(f"the LLM server's tool call {n} has no function name")
        if not isinstance(arguments, str | None):
            raise LLMResponseError(
                f"the LLM server's tool call {n} has arguments that are not text"
            )
        call_id = call.get("id") if isinstance(call.get("id"), str) and call.get("id") else None
        found.append(ToolCall(call_id or uuid.uuid4().hex[:9], name, arguments or ""))
    return tuple(found)


def _content_text(content: Any) -> str:
    """A message's content as text: a string, null (empty), or a list of text parts."""
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list) and all(isinstance(p, dict) for p in content):
        texts = [p.get("text") for p in content if p.get("type", "text") == "text"]
        if all(isinstance(t, str) for t in texts):
            return "".join(str(t) for t in texts)
    raise LLMResponseError("the LLM server's message content is not text")


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _error_detail(data: dict[str, Any], secret: str) -> str:
    """``: <message>`` of an OpenAI-style ``{"error": …}`` body, if there is one."""
    error = data.get("error")
    message = error.get("message") if isinstance(error, dict) else error
    return f": {excerpt(message.encode(), secret)}" if isinstance(message, str) else ""


def excerpt(raw: bytes, secret: str = "") -> str:
    """A short, one-line, printable excerpt of a body, with ``secret`` masked."""
    text = raw[:EXCERPT_BYTES].decode("utf-8", "replace")
    if secret:
        text = text.replace(secret, "***")
    text = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS] + "…"


def retry_after(
    headers: Mapping[str, str], now: datetime | None = None, cap: float = MAX_RETRY_AFTER_S
) -> float | None:
    """The seconds a ``Retry-After`` header asks for (a number or an HTTP date), capped at
    ``cap``; None without a usable one."""
    value = headers.get("retry-after", "").strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            return None
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    if math.isnan(seconds):
        return None
    return min(max(seconds, 0.0), cap)


def backoff(attempt: int, base_s: float = 0.5, cap_s: float = 8.0) -> float:
    """Seconds to wait after failed attempt ``attempt`` (1-based): exponential from ``base_s``
    up to ``cap_s``, with full jitter."""
    return random.uniform(0, min(cap_s, base_s * 2 ** (attempt - 1)))


# --- the client ------------------------------------------------------------------------------


UNREACHABLE = (
    "is it running? Start it, or set MEMVAULT_LLM_BASE_URL (llm_base_url) to a server that is "
    "running"
)
SLOW = "raise MEMVAULT_LLM_TIMEOUT_S (llm_timeout_s), or use a faster model or server"
REFUSING = (
    "it is overloaded or failing: try later, or raise MEMVAULT_LLM_MAX_RETRIES (llm_max_retries)"
)
NOT_THERE = (
    "; there is no chat endpoint at {url}: does MEMVAULT_LLM_BASE_URL (llm_base_url) end in "
    "/v1, as http://localhost:11434/v1 does?"
)
"""What to change when the server cannot be reached, is too slow, or keeps refusing, or has no
chat endpoint at the URL."""


class _Retry(Exception):
    """An attempt failed in a way worth retrying (internal); ``hint``: what to change if no
    attempt succeeds."""

    def __init__(self, cause: str, hint: str, wait_s: float | None = None) -> None:
        super().__init__(cause if wait_s is None else f"{cause}, Retry-After {wait_s:g} s")
        self.hint = hint
        self.wait_s = wait_s
        """What the server asked to wait (uncapped), if it did."""


class OpenAICompatChat(ChatModel):
    """A chat model behind an OpenAI-compatible ``{base_url}/chat/completions`` endpoint.

    Thread-safe (one pooled connection client); close it, or use it as a context manager.
    ``transport`` is for injection only; ``sleep`` waits between attempts, within the call's
    time budget :attr:`budget_s`. The API key is sent as a bearer token and appears in no
    message or repr. ``structured``: a request's schema is sent (``on``), never (``off``), or
    until the server refuses one (``auto``: it is remembered, and logged once).
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 3,
        max_request_bytes: int = 512 * 1024,
        max_response_bytes: int = 4 * 1024 * 1024,
        max_tokens: int | None = 1024,
        structured: str = "auto",
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__()
        _check_limits(
            model, timeout_s, max_retries, max_tokens, (max_request_bytes, max_response_bytes)
        )
        if structured not in STRUCTURED_MODES:
            raise ConfigError(f"structured must be one of {', '.join(STRUCTURED_MODES)}")
        self.structured, self._refused, self._refusing = structured, False, threading.Lock()
        self.name, self.base_url = model, check_base_url(base_url)
        self.url = self.base_url + "/chat/completions"
        self.timeout_s, self.max_retries, self.max_tokens = timeout_s, max_retries, max_tokens
        self.budget_s = timeout_s * (max_retries + 1)
        """Seconds a call's attempts and the waits between them may take together: no wait
        takes a call past it."""
        self.max_request_bytes, self.max_response_bytes = max_request_bytes, max_response_bytes
        self._secret, self._sleep, self._closed = api_key or "", sleep, False
        self._client = httpx.Client(
            headers=_headers(api_key), timeout=httpx.Timeout(timeout_s), transport=transport
        )

    def __repr__(self) -> str:
        return f"OpenAICompatChat({self.base_url!r}, model={self.name!r})"

    @property
    def structured_output(self) -> bool:
        return self.structured == "on" or (self.structured == "auto" and not self._refused)

    def complete(self, request: ChatRequest) -> ChatReply:
        return self._accounted(request, lambda: self._complete(request))

    def check(self) -> None:
        """Ask the server for its models once (any HTTP answer will do): LLMUnavailableError,
        at once and without retries, if nothing answers."""
        try:
            self._client.get(self.base_url + "/models", timeout=min(self.timeout_s, 10.0))
        except httpx.HTTPError as exc:
            raise LLMUnavailableError(
                f"the LLM server at {self.base_url} cannot be reached "
                f"({type(exc).__name__}); {UNREACHABLE}"
            ) from None

    def close(self) -> None:
        self._closed = True
        self._client.close()

    def _complete(self, request: ChatRequest) -> ChatReply:
        schema = self.structured_output and request.schema is not None
        body = request_body(
            request, self.name, self.max_tokens, self.max_request_bytes, structured=schema
        )
        started, attempt, spent = time.perf_counter(), 0, 0.0
        while True:
            attempt += 1
            began = time.perf_counter()
            try:
                answer = parse_answer(self._attempt(body, schema), self._secret)
            except _Retry as retry:
                spent += time.perf_counter() - began
                wait = self._wait(retry, attempt, self.budget_s - spent)
                self._sleep(wait)
                spent += wait
                continue
            return self._reply(request, answer, (time.perf_counter() - started) * 1000, attempt)

    def _wait(self, retry: _Retry, attempt: int, left: float) -> float:
        """Seconds to wait after failed attempt ``attempt``, at most ``left`` (of the call's
        budget); LLMUnavailableError if no retry is left, or the server asks for longer."""
        failed = f"the LLM server at {self.base_url} failed {attempt} attempt(s)"
        if attempt > self.max_retries:
            raise LLMUnavailableError(f"{failed}; last: {retry}; {retry.hint}")
        if left <= 0 or (retry.wait_s or 0.0) > left:
            raise LLMUnavailableError(
                f"{failed}, and the {max(left, 0.0):.3g} s left of the call's time budget of "
                f"{self.budget_s:g} s cannot hold the next wait; last: {retry}; {retry.hint}"
            )
        wanted = backoff(attempt) if retry.wait_s is None else retry.wait_s
        return min(wanted, MAX_RETRY_AFTER_S, left)

    def _attempt(self, body: bytes, schema: bool) -> Any:
        """One POST (``schema``: it carries one): the decoded answer, _Retry, or LLMError."""
        if self._closed:
            raise LLMError("the LLM client was closed")
        deadline = time.monotonic() + self.timeout_s
        try:
            with self._client.stream("POST", self.url, content=body) as response:
                raw = self._body_of(response, deadline, schema)
        except httpx.TimeoutException:
            raise _Retry(f"timed out after {self.timeout_s:g} s", SLOW) from None
        except httpx.ConnectError as exc:
            raise _Retry(f"could not connect: {exc}", UNREACHABLE) from None
        except httpx.TransportError as exc:
            raise _Retry(
                f"the connection failed: {type(exc).__name__}: {exc}", UNREACHABLE
            ) from None
        except httpx.HTTPError as exc:
            raise LLMResponseError(f"the LLM server's answer is unusable: {exc}") from None
        try:
            return json.loads(raw)
        except (ValueError, RecursionError):  # RecursionError: nested too deep to decode
            raise LLMResponseError(
                f"the LLM server's answer is not JSON: {excerpt(raw, self._secret)}"
            ) from None

    def _body_of(self, response: httpx.Response, deadline: float, schema: bool) -> bytes:
        """The body of a 2xx answer; _Retry, StructuredOutputError (``schema``: the request
        carried one) or LLMResponseError for any other status."""
        status = response.status_code
        examined = schema and status == 500  # it may be the schema's refusal: read it first
        if status in RETRIED_STATUSES and not examined:
            raise _retried(response)
        if not 200 <= status < 300:
            raw = self._read(response, EXCERPT_BYTES, deadline, refuse=False)
            if schema and refuses_schema(status, raw):
                raise self._refusal(status, raw)
            if examined:
                raise _retried(response)
            hint = NOT_THERE.format(url=self.url) if status in (404, 405) else ""
            raise LLMResponseError(
                f"the LLM server answered HTTP {status}: {excerpt(raw, self._secret)}{hint}"
            )
        return self._read(response, self.max_response_bytes, deadline, refuse=True)

    def _refusal(self, status: int, raw: bytes) -> StructuredOutputError:
        """The error of a server refusing a request's schema; with ``auto``, remembered (no
        schema is sent from now on) and logged once."""
        said = f"HTTP {status}: {excerpt(raw, self._secret)}"
        refused = f"the LLM server at {self.base_url} refused structured output for {self.name}"
        if self.structured == "on":
            return StructuredOutputError(
                f"{refused} ({said}); set MEMVAULT_LLM_STRUCTURED (llm_structured) to auto to "
                "fall back to the line format, or to off"
            )
        with self._refusing:
            first, self._refused = not self._refused, True
        if first:
            log.warning("%s (%s); asking without a schema from now on", refused, said)
        return StructuredOutputError(f"{refused} ({said}); asking without a schema from now on")

    def _read(self, response: httpx.Response, cap: int, deadline: float, *, refuse: bool) -> bytes:
        """At most ``cap`` bytes of the body (past it: LLMResponseError if ``refuse``, else
        the first ``cap``); _Retry past the deadline."""
        declared = response.headers.get("content-length", "")
        if refuse and declared.isdigit() and int(declared) > cap:
            raise LLMResponseError(f"the LLM server's answer exceeds {cap} bytes")
        chunks, size = [], 0
        for chunk in response.iter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if size > cap:
                if refuse:
                    raise LLMResponseError(f"the LLM server's answer exceeds {cap} bytes")
                break
            if time.monotonic() > deadline:
                raise _Retry(f"timed out after {self.timeout_s:g} s reading the answer", SLOW)
        return b"".join(chunks)[:cap]

    def _reply(
        self, request: ChatRequest, answer: Answer, latency_ms: float, attempts: int
    ) -> ChatReply:
        prompt, completion = answer.prompt_tokens, answer.completion_tokens
        return ChatReply(
            text=answer.text,
            model=answer.model or self.name,
            prompt_tokens=estimate_prompt_tokens(request.messages) if prompt is None else prompt,
            completion_tokens=(
                estimate_tokens(answer.text + "".join(c.arguments for c in answer.tool_calls))
                if completion is None
                else completion
            ),
            latency_ms=latency_ms,
            attempts=attempts,
            estimated_tokens=prompt is None or completion is None,
            finish_reason=answer.finish_reason,
            tool_calls=answer.tool_calls,
        )


def _retried(response: httpx.Response) -> _Retry:
    """The retry a 429 or 5xx answer asks for."""
    wait = retry_after(response.headers, cap=math.inf)
    return _Retry(f"HTTP {response.status_code}", REFUSING, wait)


def _check_limits(
    model: str, timeout_s: float, retries: int, max_tokens: int | None, sizes: tuple[int, int]
) -> None:
    """ConfigError for a setting of the client that cannot work."""
    if not model:
        raise ConfigError("the LLM model name is empty")
    if not (math.isfinite(timeout_s) and timeout_s > 0):
        raise ConfigError(f"timeout_s must be a positive number of seconds, got {timeout_s}")
    if retries < 0:
        raise ConfigError(f"max_retries must be >= 0, got {retries}")
    if max_tokens is not None and max_tokens < 1:
        raise ConfigError(f"max_tokens must be at least 1 (or None), got {max_tokens}")
    if min(sizes) < 1:
        raise ConfigError("max_request_bytes and max_response_bytes must be at least 1")


def _headers(api_key: str | None) -> dict[str, str]:
    headers = {"Accept": "application/json", "Content-Type": "application/json"}
    if api_key:
        if not (api_key.isascii() and api_key.isprintable()) or any(c.isspace() for c in api_key):
            raise ConfigError("the LLM API key must be printable ASCII without spaces")
        headers["Authorization"] = f"Bearer {api_key}"
    return headers
