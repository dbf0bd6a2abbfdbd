"""Two OS processes share one ``memvault serve``: one writes, the other finds it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import memvault_serve

pytestmark = pytest.mark.slow  # server and client processes

KEY = "shared-key-0123456789abcdef"
WRITER = """
import os, sys
from memvault import Memory

with Memory(sys.argv[1], api_key=os.environ["MEMORY_KEY"]) as memory:
    print(os.getpid(), memory.write("Alice prefers green tea", scope="user:alice").id)
"""
READER = """
import asyncio, os, sys
from memvault import AsyncMemory

async def main():
    async with AsyncMemory(sys.argv[1], api_key=os.environ["MEMORY_KEY"]) as memory:
        hits = await memory.search("what does Alice drink?", "user:alice")
        print(os.getpid(), hits[0].entry.id, hits[0].entry.content)

asyncio.run(main())
"""


def run(code: str, url: str) -> list[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    done = subprocess.run(
        [sys.executable, "-c", code, url],
        env=environment | {"MEMORY_KEY": KEY},
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return done.stdout.split(maxsplit=2)


def test_one_process_writes_and_another_finds_it(tmp_path: Path) -> None:
    with memvault_serve(tmp_path, f"acme:{KEY}") as url:
        writer, written = run(WRITER, url)
        reader, found, content = run(READER, url)
    assert writer != reader != str(os.getpid())
    assert (found, content.strip()) == (written, "Alice prefers green tea")
