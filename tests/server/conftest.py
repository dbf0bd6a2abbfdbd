"""A real HTTP server (uvicorn, in a thread) over a fresh store, and a tiny client for it."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from email.message import Message
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import uvicorn

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
    ) -> tuple[int, Message, Any]:
        """(status, the answer's headers, its body)."""
        data = raw if raw is not None else None if body is None else json.dumps(body).encode()
        sent: dict[str, str | None] = {"Content-Type": "application/json"}
        if self.key:
            sent["Authorization"] = f"Bearer {self.key}"
        sent.update({name.title(): value for name, value in (headers or {}).items()})
        url = urlsplit(self.base)
        connection = http.client.HTTPConnection(url.hostname or "", url.port, timeout=60)
        try:
            present = {name: value for name, value in sent.items() if value is not None}
            connection.request(method, path, body=data, headers=present)
            response = connection.getresponse()
            content = response.read()
        finally:
            connection.close()
        json_answer = (response.headers.get_content_type() or "").endswith("json")
        answer = json.loads(content) if json_answer else content.decode() or None
        return response.status, response.headers, answer


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


def _servers(root: Path) -> Iterator[Callable[..., Client]]:
    """Start servers over a fresh SQLite store with the hash embedder; stop them at the end."""
    running: list[tuple[uvicorn.Server, threading.Thread]] = []

    def start(**app_options: Any) -> Client:
        memory = AsyncMemory(
            str(root / f"server-{len(running)}.db"),
            settings=Settings(near_duplicate_threshold=0.99),
            embedder=HashEmbedder(),
            clock=app_options.pop("clock", None) or ManualClock(),
        )
        app = create_app(memory, owns_memory=True, **app_options)
        port = free_port()
        server = uvicorn.Server(uvicorn.Config(app, port=port, log_level="warning"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        running.append((server, thread))
        base = f"http://127.0.0.1:{port}"
        wait_until_up(base)
        return Client(base)

    yield start
    for server, thread in running:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[Callable[..., Client]]:
    yield from _servers(tmp_path)


@pytest.fixture(scope="module")
def start_module_server(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Callable[..., Client]]:
    yield from _servers(tmp_path_factory.mktemp("server"))
