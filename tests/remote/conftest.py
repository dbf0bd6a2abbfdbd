"""Servers for the remote client's tests: the real app under uvicorn, in a thread, on a socket
(the conformance modules use a server process instead: memvault.testing.remote)."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from memvault import AsyncMemory, Settings
from memvault.testing import HashEmbedder, ManualClock

from ..server.conftest import free_port, uvicorn_threads, wait_until_up

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

    numbers = itertools.count()

    def start(api_keys: str = KEYS, settings: Settings | None = None) -> str:
        memory = AsyncMemory(
            str(tmp_path / f"server-{next(numbers)}.db"),
            settings=settings or Settings(),
            embedder=HashEmbedder(),
            clock=ManualClock(),
        )
        return serve_app(create_app(memory, api_keys=api_keys, owns_memory=True))

    with uvicorn_threads() as serve_app:
        yield start
