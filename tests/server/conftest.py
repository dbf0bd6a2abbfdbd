"""The app over a fresh store, and a tiny client for it: in-process over ASGI (``start_server``,
fast) or through a real uvicorn server on a socket (``start_real_server``, the smoke tests)."""

from __future__ import annotations

import http.client
import itertools
import json
import socket
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import uvicorn
from starlette.testclient import TestClient

from memvault import AsyncMemory, Settings
from memvault.server import create_app
from memvault.testing import HashEmbedder, ManualClock


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Client:
    """Sends JSON requests to ``base``; returns (status, decoded JSON body).

    ``headers`` are added to (or replace) the defaults ``Content-Type: application/json``, the
    key's ``Authorization`` and ``Host``; a header given as None is not sent. An answer that is
    not JSON comes back as text (None when empty).
    """

    base: str
    key: str | None = None
    asgi: TestClient | None = None
    """In-process: requests go to the ASGI app, not to a socket."""

    def with_key(self, key: str | None) -> Client:
        """The same client, sending another API key."""
        return replace(self, key=key)

    def __call__(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        raw: bytes | None = None,
        headers: Mapping[str, str | None] | None = None,
    ) -> tuple[int, Any]:
        status, _, answer = self.exchange(method, path, body, raw=raw, headers=headers)
        return status, answer

    def exchange(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        raw: bytes | None = None,
        headers: Mapping[str, str | None] | None = None,
    ) -> tuple[int, Any, Any]:
        """(status, the answer's headers, its body)."""
        data = raw if raw is not None else None if body is None else json.dumps(body).encode()
        sent: dict[str, str | None] = {"Content-Type": "application/json"}
        if self.key:
            sent["Authorization"] = f"Bearer {self.key}"
        sent.update({name.title(): value for name, value in (headers or {}).items()})
        present = {name: value for name, value in sent.items() if value is not None}
        if self.asgi is not None:
            reply = self.asgi.request(method, path, content=data, headers=present)
            status, answer_headers, content = reply.status_code, reply.headers, reply.content
        else:
            status, answer_headers, content = self._over_socket(method, path, data, present)
        json_answer = answer_headers.get("content-type", "").split(";")[0].endswith("json")
        answer = json.loads(content) if json_answer else content.decode() or None
        return status, answer_headers, answer

    def _over_socket(
        self, method: str, path: str, data: bytes | None, headers: dict[str, str]
    ) -> tuple[int, Any, bytes]:
        url = urlsplit(self.base)
        connection = http.client.HTTPConnection(url.hostname or "", url.port, timeout=60)
        try:
            connection.request(method, path, body=data, headers=headers)
            response = connection.getresponse()
            return response.status, response.headers, response.read()
        finally:
            connection.close()


def wait_until_up(base: str, seconds: float = 60, alive: Callable[[], bool] = lambda: True) -> None:
    """Poll ``/health`` until it answers; give up after ``seconds`` or once ``alive()`` is false."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(base + "/health", timeout=2):
                return
        except OSError:
            if time.monotonic() > deadline or not alive():
                raise
            time.sleep(0.1)


def _memory(root: Path, number: int, clock: ManualClock | None) -> AsyncMemory:
    return AsyncMemory(
        str(root / f"server-{number}.db"),
        settings=Settings(near_duplicate_threshold=0.99),
        embedder=HashEmbedder(),
        clock=clock or ManualClock(),
    )


def _apps(root: Path) -> Iterator[Callable[..., Client]]:
    """Apps over a fresh SQLite store with the hash embedder, called in-process over ASGI."""
    running: list[TestClient] = []

    def start(**app_options: Any) -> Client:
        memory = _memory(root, len(running), app_options.pop("clock", None))
        app = create_app(memory, owns_memory=True, **app_options)
        port = 8765
        client = TestClient(app, base_url=f"http://127.0.0.1:{port}",
                            raise_server_exceptions=False)  # fmt: skip
        client.__enter__()  # runs the app's lifespan
        running.append(client)
        return Client(f"http://127.0.0.1:{port}", asgi=client)

    yield start
    for client in running:
        client.__exit__(None, None, None)


@contextmanager
def uvicorn_threads() -> Iterator[Callable[[Any], str]]:
    """Serve apps with uvicorn, each in a thread on a socket (the call returns its base URL);
    all stopped at the end."""
    running: list[tuple[uvicorn.Server, threading.Thread]] = []

    def serve(app: Any) -> str:
        port = free_port()
        server = uvicorn.Server(uvicorn.Config(app, port=port, log_level="warning"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        running.append((server, thread))
        base = f"http://127.0.0.1:{port}"
        wait_until_up(base)
        return base

    try:
        yield serve
    finally:
        for server, thread in running:
            server.should_exit = True
            thread.join(timeout=10)


def _servers(root: Path) -> Iterator[Callable[..., Client]]:
    """Real servers (uvicorn in a thread, on a socket) over fresh stores; stopped at the end."""
    numbers = itertools.count()

    def start(**app_options: Any) -> Client:
        memory = _memory(root, next(numbers), app_options.pop("clock", None))
        return Client(serve(create_app(memory, owns_memory=True, **app_options)))

    with uvicorn_threads() as serve:
        yield start


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[Callable[..., Client]]:
    yield from _apps(tmp_path)


@pytest.fixture(scope="module")
def start_module_server(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Callable[..., Client]]:
    yield from _apps(tmp_path_factory.mktemp("server"))


@pytest.fixture
def start_real_server(tmp_path: Path) -> Iterator[Callable[..., Client]]:
    yield from _servers(tmp_path)
