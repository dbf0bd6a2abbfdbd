"""Spans of text (pure): ``(start, end)`` offsets, merged, compared and mapped back from a
folded view to the text it came from."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence

Span = tuple[int, int]


def merge(spans: Iterable[Span]) -> list[Span]:
    """The spans sorted, overlapping and touching ones joined."""
    merged: list[Span] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def overlaps(span: Span, regions: Sequence[Span]) -> bool:
    """Whether ``span`` overlaps one of ``regions`` (sorted and disjoint)."""
    index = bisect_left(regions, span[1], key=lambda region: region[0])
    return index > 0 and regions[index - 1][1] > span[0]


def to_raw(span: Span, origin: Sequence[int], length: int) -> Span:
    """A folded span as a span of the original text (``origin``: each folded character's
    index in it)."""
    start, end = span
    raw_start = origin[start] if start < len(origin) else length
    raw_end = origin[end - 1] + 1 if end > start else raw_start
    return raw_start, raw_end


def outside(text: str, regions: Sequence[Span]) -> str:
    """The text without ``regions`` (each cut replaced by a line break, so words on either
    side never join)."""
    kept, last = [], 0
    for start, end in sorted(regions):
        kept.append(text[last:start])
        last = max(last, end)
    kept.append(text[last:])
    return "\n".join(kept)
