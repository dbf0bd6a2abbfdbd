"""Embedders: the packaged local model (default), OpenAI-compatible servers, and a cache.

The local model (onnxruntime, tokenizers) and the HTTP client are imported on first use, so
commands that embed nothing start fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import Embedder, Vectors, normalize_rows
from .cache import CachedEmbedder

if TYPE_CHECKING:
    from .openai import OpenAIEmbedder


def default_embedder(redis_url: str = "", threads: int = 0) -> Embedder:
    """The packaged local model behind a process-wide cache (loaded on first use).

    With ``redis_url`` a shared Redis cache sits between the process cache and the model.
    ``threads`` is the model's intra-op thread count (0: automatic, see ``Settings.embed_threads``).
    """
    from .local import shared_default

    return shared_default(redis_url, threads)


def __getattr__(name: str) -> Any:
    if name == "OpenAIEmbedder":
        from .openai import OpenAIEmbedder

        return OpenAIEmbedder
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CachedEmbedder",
    "Embedder",
    "OpenAIEmbedder",
    "Vectors",
    "default_embedder",
    "normalize_rows",
]
