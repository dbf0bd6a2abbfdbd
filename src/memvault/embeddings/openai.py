"""Embeddings from any OpenAI-compatible server (OpenAI, Ollama, LM Studio, vLLM, …)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Sequence

import numpy as np

from ..errors import BackendError, ConfigError
from .base import Embedder, Vectors, normalize_rows


class OpenAIEmbedder(Embedder):
    """POSTs ``{base_url}/embeddings``; checks every vector has ``dimension`` values."""

    def __init__(
        self,
        model: str,
        dimension: int,
        *,
        base_url: str = "https://api.openai.com/v1",
        api_key: str | None = None,
        batch_size: int = 64,
        timeout: float = 60.0,
    ) -> None:
        if dimension <= 0:
            raise ConfigError("embedding dimension must be positive")
        self.model = model
        self.name = f"openai-compatible:{model}"
        self.dimension = dimension
        self.batch_size = batch_size
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout

    def _post(self, payload: dict[str, object]) -> dict[str, object]:
        request = urllib.request.Request(
            f"{self.base_url}/embeddings",
            data=json.dumps(payload).encode(),
            headers={
                "Content-Type": "application/json",
                **({"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}),
            },
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                body: dict[str, object] = json.load(response)
                return body
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode(errors="replace")[:300]
            raise BackendError(f"embedding server answered {exc.code}: {detail}") from exc
        except (urllib.error.URLError, TimeoutError, ValueError, RecursionError) as exc:
            raise BackendError(f"embedding server at {self.base_url} failed: {exc}") from exc

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        body = self._post({"model": self.model, "input": list(texts)})
        data = body.get("data")
        if not isinstance(data, list) or len(data) != len(texts):
            raise BackendError("embedding server returned a malformed response")
        rows = sorted(data, key=lambda item: item.get("index", 0))
        matrix = np.array([row["embedding"] for row in rows], dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[1] != self.dimension:
            raise ConfigError(
                f"model {self.model!r} returned {matrix.shape[-1]}-dimensional vectors, "
                f"but the embedder was configured with dimension={self.dimension}"
            )
        return normalize_rows(matrix)
