"""Embedders: the packaged model (offline, verified), the cache, an OpenAI-compatible server."""

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import numpy as np
import pytest

from memvault import BackendError, ConfigError
from memvault.embeddings import CachedEmbedder, OpenAIEmbedder, default_embedder, local
from memvault.testing import HashEmbedder

OFFLINE = """
import socket
def refuse(*args, **kwargs):
    raise OSError("network disabled for this test")
socket.socket.connect = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse
from memvault.embeddings.local import LocalEmbedder
vectors = LocalEmbedder().embed(["offline works", "really"])
print(vectors.shape[0], vectors.shape[1], round(float((vectors[0] ** 2).sum()), 4))
"""


@pytest.mark.slow
def test_default_model_loads_and_embeds_with_the_network_disabled() -> None:
    done = subprocess.run(
        [sys.executable, "-c", OFFLINE],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        env={"HF_HUB_OFFLINE": "0", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["2", "384", "1.0"]


def test_model_checksum_is_verified(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local, "MODEL_SHA256", "0" * 64)
    with pytest.raises(ConfigError, match="sha256"):
        local.LocalEmbedder().embed(["x"])


def test_similar_texts_are_closer() -> None:
    e = default_embedder()
    a, b, c = e.embed(["The user prefers dark mode", "User likes dark themes", "Stock prices fell"])
    assert a @ b > 0.6 > a @ c
    assert np.allclose(np.linalg.norm([a, b, c], axis=1), 1, atol=1e-5)


@pytest.mark.slow
def test_long_texts_are_embedded_whole() -> None:
    model = local.LocalEmbedder()
    head = " ".join(["gardening tomatoes compost soil"] * 80)
    tail = " ".join(["astronomy telescopes galaxies nebula"] * 80)
    whole, first = model.embed([head + " " + tail, head])
    astronomy = model.embed(["astronomy telescopes galaxies"])[0]
    assert len(model._windows(head + " " + tail)) >= 3
    assert whole @ astronomy > first @ astronomy + 0.1


def test_cache_embeds_each_text_once() -> None:
    inner = HashEmbedder(16)
    cached = CachedEmbedder(inner, max_entries=2)
    first = cached.embed(["a", "b", "a"])
    assert (cached.hits, cached.misses) == (1, 2)
    again = cached.embed(["b"])
    assert np.array_equal(again[0], first[1])
    cached.embed(["c", "d"])
    cached.embed(["a"])
    assert cached.misses == 5
    assert cached.embed([]).shape == (0, 16)


class _Server(BaseHTTPRequestHandler):
    requests: ClassVar[list[dict[str, Any]]] = []
    dimension = 4

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(
            {"path": self.path, "auth": self.headers.get("Authorization"), **body}
        )
        if body["model"] == "deep":
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"[" * 100_000)
            return
        if body["model"] == "broken":
            self.send_response(503)
            self.end_headers()
            self.wfile.write(b"overloaded")
            return
        data = [
            {"index": i, "embedding": [float(len(t)), 1.0, 0.0, 0.0][: self.dimension]}
            for i, t in enumerate(body["input"])
        ][::-1]
        payload = json.dumps({"data": data}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    _Server.requests = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Server)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


def test_openai_compatible_client(server: str) -> None:
    embedder = OpenAIEmbedder("tiny", 4, base_url=server, api_key="sk-test", batch_size=2)
    vectors = embedder.embed(["a", "bbb", "cc", "d", "eeee"])
    assert vectors.shape == (5, 4)
    assert [len(r["input"]) for r in _Server.requests] == [2, 2, 1]
    assert {r["path"] for r in _Server.requests} == {"/v1/embeddings"}
    assert _Server.requests[0]["auth"] == "Bearer sk-test"
    expected = np.array([3.0, 1.0, 0, 0]) / np.sqrt(10)
    assert np.allclose(vectors[1], expected)
    assert embedder.name == "openai-compatible:tiny"


def test_openai_compatible_errors(server: str) -> None:
    _Server.dimension = 3
    try:
        with pytest.raises(ConfigError, match="3-dimensional"):
            OpenAIEmbedder("tiny", 4, base_url=server).embed(["x"])
    finally:
        _Server.dimension = 4
    with pytest.raises(BackendError, match="503"):
        OpenAIEmbedder("broken", 4, base_url=server).embed(["x"])
    with pytest.raises(BackendError, match="failed"):  # nested past the recursion limit
        OpenAIEmbedder("deep", 4, base_url=server).embed(["x"])
    with pytest.raises(BackendError, match="failed"):
        OpenAIEmbedder("tiny", 4, base_url="http://127.0.0.1:9/v1", timeout=2).embed(["x"])
