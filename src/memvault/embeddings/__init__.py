"""Embedders: the packaged local model (default), OpenAI-compatible servers, and a cache."""

from .base import Embedder, Vectors, normalize_rows
from .cache import CachedEmbedder
from .openai import OpenAIEmbedder


def default_embedder() -> Embedder:
    """The packaged local model behind a process-wide cache (loaded on first use)."""
    from .local import shared_default

    return shared_default()


__all__ = [
    "CachedEmbedder",
    "Embedder",
    "OpenAIEmbedder",
    "Vectors",
    "default_embedder",
    "normalize_rows",
]
