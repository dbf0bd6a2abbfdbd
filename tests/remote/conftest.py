"""Servers for the remote client's tests: the real app under uvicorn, in a thread, on a socket
(the conformance modules use a server process instead: memvault.testing.remote)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from memvault import AsyncMemory, Settings
from memvault.testing import HashEmbedder, ManualClock

from ..server.conftest import free_port, wait_until_up

uvicorn = pytest.importorskip("uvicorn")

ACME, GLOBEX = "acme-key-0123456789", "globex-key-0123456789"
KEYS = f"acme:{ACME},globex:{GLOBEX}"


@contextmanager
def memvault_serve(home: Path, api_keys: str) -> Iterator[str]:
    """A real ``memvault serve`` process over a SQLite file in ``home``; its base URL."""
    port = free_port()
    environment = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    environment |= {"MEMVAULT_HOME": str(home), "MEMVAULT_API_KEYS": api_keys}
    command = [sys.executable, "-m", "memvault", "--store", str(home / "shared.db"), "serve"]
    with (home / "serve.log").open("w") as log:
        process = subprocess.Popen(
            [*command, "--port", str(port), "--log-level", "warning"],
            env=environment,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            wait_until_up(base, alive=lambda: process.poll() is None)
            yield base
        finally:
            process.terminate()
            process.wait(timeout=30)


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., str]]:
    """Start the app over a fresh SQLite store (hash embedder) on a socket; its base URL.
    ``api_keys`` as for ``create_app`` (default: acme and globex); ``settings`` for its
    memory."""
    from memvault.server import create_app

    running: list[tuple[Any, threading.Thread]] = []

    def start(api_keys: str = KEYS, settings: Settings | None = None) -> str:
        memory = AsyncMemory(
            str(tmp_path / f"server-{len(running)}.db"),
            settings=settings or Settings(),
            embedder=HashEmbedder(),
            clock=ManualClock(),
        )
        app = create_app(memory, api_keys=api_keys, owns_memory=True)
        port = free_port()
        server = uvicorn.Server(uvicorn.Config(app, port=port, log_level="warning"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        running.append((server, thread))
        base = f"http://127.0.0.1:{port}"
        wait_until_up(base)
        return base

    yield start
    for server, thread in running:
        server.should_exit = True
        thread.join(timeout=10)
