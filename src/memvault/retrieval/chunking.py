"""Splitting long content into overlapping chunks of tokens, and putting it back (pure).

Tokens are runs of word characters or single other non-space characters — a documented estimate
that needs no model. Chunks are exact slices of the content, so reassembly is lossless.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import ValidationError
from ..patterns import lazy

_TOKEN = lazy(r"\w+|[^\w\s]", re.UNICODE)


@dataclass(frozen=True, slots=True)
class ChunkSpec:
    """Chunking parameters (tokens): defaults from seed 004."""

    size: int = 2000
    overlap: int = 200
    min_size: int = 100

    def __post_init__(self) -> None:
        if not (0 <= self.overlap < self.size and 0 <= self.min_size <= self.size):
            raise ValidationError("chunking needs 0 <= overlap < size and 0 <= min_size <= size")


@dataclass(frozen=True, slots=True)
class Chunk:
    """Characters ``start:end`` of an entry's content; ``seq`` orders them."""

    seq: int
    start: int
    end: int


def chunk_id(entry_id: str, seq: int) -> str:
    """Deterministic chunk ids: ``<entry>:<n>``."""
    return f"{entry_id}:{seq}"


def count_tokens(text: str) -> int:
    return sum(1 for _ in _TOKEN.finditer(text))


def split(text: str, spec: ChunkSpec = ChunkSpec()) -> tuple[Chunk, ...]:
    """Chunks of at most ``spec.size`` tokens overlapping by ``spec.overlap``.

    A trailing piece shorter than ``spec.min_size`` tokens is folded into the chunk before it.
    """
    spans = [(m.start(), m.end()) for m in _TOKEN.finditer(text)]
    if len(spans) <= spec.size:
        return (Chunk(0, 0, len(text)),)
    step = spec.size - spec.overlap
    starts = list(range(0, len(spans), step))
    while len(starts) > 1 and len(spans) - starts[-1] <= spec.overlap:
        starts.pop()  # wholly inside the previous chunk's overlap
    bounds = [[s, min(s + spec.size, len(spans))] for s in starts]
    if len(bounds) > 1 and bounds[-1][1] - bounds[-1][0] - spec.overlap < spec.min_size:
        bounds.pop()
        bounds[-1][1] = len(spans)
    last = len(bounds) - 1
    return tuple(
        Chunk(
            seq,
            0 if seq == 0 else spans[first][0],
            len(text) if seq == last else spans[end - 1][1],
        )
        for seq, (first, end) in enumerate(bounds)
    )


def texts(content: str, chunks: Sequence[Chunk]) -> list[str]:
    return [content[c.start : c.end] for c in chunks]


def reassemble(pieces: Sequence[tuple[Chunk, str]]) -> str:
    """Rebuild content from chunks (any order) and their texts, dropping the overlaps."""
    ordered = sorted(pieces, key=lambda item: item[0].seq)
    result, covered = "", 0
    for chunk, text in ordered:
        if chunk.end > covered:
            result += text[max(covered - chunk.start, 0) :]
            covered = chunk.end
    return result
