"""The shared Redis embedding cache, against a real redis-server started for the test."""

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memvault import Memory, Settings
from memvault.embeddings.redis_cache import RedisCachedEmbedder
from memvault.testing import HashEmbedder

redis = pytest.importorskip("redis")
SERVER = shutil.which("redis-server")
pytestmark = pytest.mark.skipif(SERVER is None, reason="redis-server is not installed")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    port = _free_port()
    process = subprocess.Popen(
        [
            str(SERVER),
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(tmp_path),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    client = redis.Redis.from_url(url)
    for _ in range(100):
        try:
            client.ping()
            break
        except redis.ConnectionError:
            time.sleep(0.05)
    yield url
    client.close()
    process.terminate()
    process.wait(timeout=10)


class Counting(HashEmbedder):
    def __init__(self) -> None:
        super().__init__(16)
        self.embedded: list[str] = []

    def embed(self, texts: Any) -> Any:
        self.embedded += list(texts)
        return super().embed(texts)


def test_a_second_worker_reuses_the_first_workers_vectors(redis_url: str) -> None:
    first, second = Counting(), Counting()
    a = RedisCachedEmbedder(first, redis_url).embed(["tea", "coffee", "tea"])
    b = RedisCachedEmbedder(second, redis_url).embed(["coffee", "tea", "milk"])
    assert first.embedded == ["tea", "coffee", "tea"]
    assert second.embedded == ["milk"]
    assert np.array_equal(a[1], b[0])
    assert np.array_equal(a[0], b[1])


def test_a_failing_redis_never_fails_embedding() -> None:
    inner = Counting()
    cache = RedisCachedEmbedder(inner, "redis://127.0.0.1:9/0")
    vectors = cache.embed(["still works"])
    assert vectors.shape == (1, 16)
    assert cache.errors == 2
    assert inner.embedded == ["still works"]


def test_memory_uses_the_cache_from_settings(redis_url: str) -> None:
    settings = Settings(redis_url=redis_url)
    with Memory(":memory:", settings=settings) as memory:
        memory.write("Alice drinks green tea", scope="user:a")
    keys = redis.Redis.from_url(redis_url).keys("memvault:embedding:all-MiniLM-L6-v2-int8:*")
    assert len(keys) == 1
