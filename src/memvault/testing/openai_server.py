"""A real HTTP server speaking OpenAI's chat-completions protocol, with scripted answers.

Tests start it on 127.0.0.1 (an ephemeral port) and point a client at ``server.base_url``::

    with ScriptedOpenAIServer() as server:
        server.responder = lambda request: "preference|turn-1|The user prefers tea.|"
        server.script_status(429, retry_after=0)  # the next request gets a 429 first
        ...
        server.requests  # every request received: {"method", "path", "headers", "body"}

Queued steps answer the next requests in order; once the queue is empty, ``responder``
(request → text, or a :class:`Step`) answers. ``server.script_tool_calls(("load-data",
{"path": "sales.csv"}))`` makes the next answer call tools (OpenAI's ``tool_calls``).
``server.refuse_structured_output()`` makes it answer every request carrying a
``response_format`` with a 400, like a server without structured output (an old llama.cpp
server's words by default). A request with ``"stream": true`` is answered as OpenAI streams:
server-sent events, one ``chat.completion.chunk`` per delta (the text cut in a few pieces, or
the step's ``deltas``; then its tool calls), then ``data: [DONE]``. It serves
``POST /v1/chat/completions`` and ``GET /v1/models``.
Leaving the ``with`` block cuts delayed answers and open connections, and joins every handler
thread.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Request = dict[str, Any]
"""A request received: ``method``, ``path``, ``headers`` (lower-case names) and ``body`` (the
decoded JSON, or None)."""

Responder = Callable[[Request], "str | Step"]

CHAT_PATH = "/v1/chat/completions"
MAX_REQUEST_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Step:
    """One scripted answer, after ``delay_s``: a completion carrying ``text`` (and ``usage``,
    and ``tool_calls`` in OpenAI's shape), or ``body`` as is. Streamed, the text comes in
    ``deltas`` if given (else cut by :func:`pieces`). ``length=False`` sends no Content-Length
    (the body ends when the connection closes)."""

    text: str | None = ""
    tool_calls: tuple[Mapping[str, Any], ...] = ()
    deltas: tuple[str, ...] = ()
    usage: Mapping[str, int] | None = None
    status: int = 200
    body: bytes | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    length: bool = True


def completion(
    text: str | None,
    usage: Mapping[str, int] | None = None,
    model: str = "",
    tool_calls: Sequence[Mapping[str, Any]] = (),
) -> bytes:
    """A chat-completions response body carrying ``text`` (None: a null content) and the
    ``tool_calls`` given (then ``finish_reason`` is ``tool_calls``)."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = [dict(call) for call in tool_calls]
    finish = "tool_calls" if tool_calls else "stop"
    data: dict[str, Any] = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model or "scripted",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    }
    if usage is not None:
        data["usage"] = dict(usage)
    return json.dumps(data).encode()


STREAM_PIECES = 3
"""How many deltas a streamed text is cut into (at most) unless its step says otherwise."""


def pieces(text: str, most: int = STREAM_PIECES) -> tuple[str, ...]:
    """``text`` cut into at most ``most`` consecutive pieces of about the same length."""
    size = max(1, -(-len(text) // most))
    return tuple(text[start : start + size] for start in range(0, len(text), size))


def chunk(delta: Mapping[str, Any], model: str = "", finish: str | None = None) -> dict[str, Any]:
    """One ``chat.completion.chunk`` carrying ``delta`` for the first choice."""
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model or "scripted",
        "choices": [{"index": 0, "delta": dict(delta), "finish_reason": finish}],
    }


def stream_chunks(step: Step, model: str = "") -> list[dict[str, Any]]:
    """The chunks that stream ``step``: the role, the text's deltas, each tool call, the end."""
    text = step.deltas or pieces(step.text or "")
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    deltas += [{"content": piece} for piece in text]
    deltas += [{"tool_calls": [{"index": n, **call}]} for n, call in enumerate(step.tool_calls)]
    finish = "tool_calls" if step.tool_calls else "stop"
    return [*(chunk(d, model) for d in deltas), chunk({}, model, finish)]


def event_stream(chunks: Sequence[Mapping[str, Any]]) -> bytes:
    """Server-sent events carrying ``chunks``, then ``data: [DONE]``."""
    events = [f"data: {json.dumps(c)}\n\n" for c in chunks]
    return "".join([*events, "data: [DONE]\n\n"]).encode()


def streamed(request: Request) -> bool:
    """Whether a request received asked for a streamed answer (``"stream": true``)."""
    body = request.get("body")
    return isinstance(body, dict) and body.get("stream") is True


NOT_FOUND = Step(status=404, body=b'{"error": {"message": "not found"}}')
NO_JSON_SCHEMA = 'response_format type must be one of "text" or "json_object", but got: json_schema'
"""What llama.cpp's server answered a JSON schema before it took one."""


def tool_call(name: str, arguments: Mapping[str, Any] | str, call_id: str = "") -> dict[str, Any]:
    """One call in OpenAI's shape (``arguments`` a mapping is sent as its JSON text)."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    function = {"name": name, "arguments": text}
    return {
        "id": call_id or f"call_{name}_{uuid.uuid4().hex[:8]}",
        "type": "function",
        "function": function,
    }


def tool_calls_step(*calls: tuple[str, Mapping[str, Any] | str], text: str | None = None) -> Step:
    """An answer calling each ``(name, arguments)`` in order."""
    return Step(text=text, tool_calls=tuple(tool_call(name, args) for name, args in calls))


def structured(request: Request) -> bool:
    """Whether a request received asked for structured output (carried a ``response_format``)."""
    body = request.get("body")
    return isinstance(body, dict) and "response_format" in body


class ScriptedOpenAIServer:
    """A threaded HTTP server on 127.0.0.1 answering like an OpenAI-compatible LLM server."""

    def __init__(self, *, model: str = "scripted", responder: Responder | None = None) -> None:
        self.model = model
        self.responder: Responder = responder or (lambda request: "NONE")
        """Answers chat requests once the scripted steps are used up (default: ``NONE``, the
        extraction prompt's "nothing to learn")."""
        self.errors: list[BaseException] = []
        """Exceptions the responder raised (each answered with a 500)."""
        self._requests: list[Request] = []
        self._steps: list[Step] = []
        self._refusal: Step | None = None
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` (the server must be started)."""
        if self._httpd is None:
            raise RuntimeError("the server is not started")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def requests(self) -> list[Request]:
        """Every request received so far, oldest first (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def pending(self) -> int:
        """Scripted steps not used yet."""
        with self._lock:
            return len(self._steps)

    def script(self, *steps: Step) -> None:
        """Answer the next requests with these steps, in order."""
        with self._lock:
            self._steps.extend(steps)

    def script_text(self, text: str, usage: Mapping[str, int] | None = None) -> None:
        """The next answer: a completion carrying ``text``."""
        self.script(Step(text=text, usage=usage))

    def script_deltas(self, *deltas: str) -> None:
        """The next answer: the text of ``deltas`` joined; streamed, exactly these deltas."""
        self.script(Step(text="".join(deltas), deltas=deltas))

    def script_tool_calls(
        self, *calls: tuple[str, Mapping[str, Any] | str], text: str | None = None
    ) -> None:
        """The next answer: the model calls each ``(name, arguments)``, in order."""
        self.script(tool_calls_step(*calls, text=text))

    def script_raw(self, body: bytes, status: int = 200) -> None:
        """The next answer: ``body`` as is (malformed JSON, an odd shape…)."""
        self.script(Step(status=status, body=body))

    def script_status(
        self, status: int, *, retry_after: float | str | None = None, body: bytes | None = None
    ) -> None:
        """The next answer: an error status, with a ``Retry-After`` header if given."""
        headers = {} if retry_after is None else {"Retry-After": str(retry_after)}
        error = {"error": {"message": f"scripted {status}", "type": "scripted"}}
        self.script(Step(status=status, body=body or json.dumps(error).encode(), headers=headers))

    def refuse_structured_output(self, status: int = 400, message: str = NO_JSON_SCHEMA) -> None:
        """From now on, answer every request carrying a ``response_format`` with ``status`` and
        an OpenAI-style error saying ``message`` (scripted steps wait for the next request)."""
        error = {"error": {"code": status, "message": message, "type": "invalid_request_error"}}
        with self._lock:
            self._refusal = Step(status=status, body=json.dumps(error).encode())

    def script_delay(self, delay_s: float, text: str = "late") -> None:
        """The next answer comes after ``delay_s`` seconds (to make a client time out)."""
        self.script(Step(text=text, delay_s=delay_s))

    def script_oversized(self, size: int, *, length: bool = True) -> None:
        """The next answer: a valid completion of more than ``size`` bytes."""
        self.script(Step(text="x" * size, length=length))

    def start(self) -> ScriptedOpenAIServer:
        """Listen on an ephemeral port of 127.0.0.1 and serve in a background thread."""
        if self._httpd is not None:
            raise RuntimeError("the server is already started")
        self._stopping.clear()
        self._httpd = _HTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving: cut delayed answers and open connections, join every thread."""
        if self._httpd is None or self._thread is None:
            return
        self._httpd.shutdown()
        self._stopping.set()
        self._httpd.close_connections()
        self._httpd.server_close()  # joins the handler threads
        self._thread.join()
        self._httpd = self._thread = None

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _record(self, request: Request) -> None:
        with self._lock:
            self._requests.append(request)

    def _answer(self, request: Request) -> Step:
        """Record a chat request; the step that answers it."""
        with self._lock:
            self._requests.append(request)
            if self._refusal is not None and structured(request):
                return self._refusal
            if self._steps:
                return self._steps.pop(0)
        try:
            answer = self.responder(request)
            return answer if isinstance(answer, Step) else Step(text=answer)
        except Exception as exc:
            with self._lock:
                self.errors.append(exc)
            return Step(status=500, body=json.dumps({"error": {"message": str(exc)}}).encode())

    def _stopped_during(self, seconds: float) -> bool:
        """Sleep; True if the server stopped meanwhile."""
        return self._stopping.wait(seconds)


class _HTTPServer(ThreadingHTTPServer):
    """Joins its handler threads on close and can cut their connections."""

    daemon_threads = False
    block_on_close = True

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(address, handler)
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._open_lock:
            self._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._open_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        """Shut every open connection down, so handlers waiting to read return."""
        with self._open_lock:
            for connection in self._open:
                with contextlib.suppress(OSError):  # already gone
                    connection.shutdown(socket.SHUT_RDWR)


def _handler(server: ScriptedOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = 10  # a forgotten keep-alive connection cannot hold the server open forever

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: tests read ``server.requests`` instead."""

        def handle(self) -> None:
            # the client may go away (a timeout, a refused oversized answer, shutdown)
            with contextlib.suppress(OSError):
                super().handle()

        def do_GET(self) -> None:
            server._record(self._request(None))
            if self.path.rstrip("/") == "/v1/models":
                models = {"object": "list", "data": [{"id": server.model, "object": "model"}]}
                self._send(Step(body=json.dumps(models).encode()))
            else:
                self._send(NOT_FOUND)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_REQUEST_BYTES:
                self.close_connection = True
                self._send(Step(status=413, body=b'{"error": {"message": "too large"}}'))
                return
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
            if self.path != CHAT_PATH:
                server._record(self._request(body))
                self._send(NOT_FOUND)
                return
            request = self._request(body)
            step = server._answer(request)
            if step.delay_s and server._stopped_during(step.delay_s):
                self.close_connection = True  # cut, unanswered
                return
            self._send(step, stream=streamed(request))

        def _request(self, body: Any) -> Request:
            headers = {name.lower(): value for name, value in self.headers.items()}
            return {"method": self.command, "path": self.path, "headers": headers, "body": body}

        def _send(self, step: Step, *, stream: bool = False) -> None:
            payload, kind = step.body, "application/json"
            if payload is None and stream:
                payload, kind = event_stream(stream_chunks(step, server.model)), "text/event-stream"
            elif payload is None:
                payload = completion(step.text, step.usage, server.model, step.tool_calls)
            self.send_response(step.status)
            self.send_header("Content-Type", kind)
            if step.length:
                self.send_header("Content-Length", str(len(payload)))
            else:
                self.send_header("Connection", "close")
                self.close_connection = True
            for name, value in step.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

    return Handler
