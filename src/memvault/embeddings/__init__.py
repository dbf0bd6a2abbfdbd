"""Embedders: the packaged local model (default), OpenAI-compatible servers, and a cache."""

from .base import Embedder, Vectors, normalize_rows
from .cache import CachedEmbedder
from .openai import OpenAIEmbedder


def default_embedder(redis_url: str = "") -> Embedder:
    """The packaged local model behind a process-wide cache (loaded on first use).

    With ``redis_url`` a shared Redis cache sits between the process cache and the model.
    """
    from .local import shared_default

    return shared_default(redis_url)


__all__ = [
    "CachedEmbedder",
    "Embedder",
    "OpenAIEmbedder",
    "Vectors",
    "default_embedder",
    "normalize_rows",
]
