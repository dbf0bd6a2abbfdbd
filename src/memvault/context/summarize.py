"""Summarisers fold old records into summary text. The extractive one needs no LLM.

A summariser has a ``name`` (part of the summary cache key: another summariser, another
summary) and ``summarize(records) -> str`` (or an awaitable of one). The LLM summariser comes
with the extraction pipeline; any object with these two members works.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Awaitable, Sequence
from typing import Protocol

from ..facilities.model import Record
from ..patterns import lazy
from ..retrieval.text import STOPWORDS

_SENTENCE = lazy(r"(?<=[.!?])\s+|\n+")
_WORD = lazy(r"\w+", re.UNICODE)


class Summarizer(Protocol):
    name: str

    def summarize(self, records: Sequence[Record]) -> str | Awaitable[str]: ...


class ExtractiveSummarizer:
    """Keeps the sentences that carry the block's most frequent content words, in order.

    Deterministic: the same records give the same summary. Each kept sentence is prefixed by its
    speaker's role; sentences over ``max_sentence_chars`` are shortened with an ellipsis.
    """

    def __init__(self, max_sentences: int = 6, max_sentence_chars: int = 240) -> None:
        self.max_sentences = max_sentences
        self.max_sentence_chars = max_sentence_chars
        self.name = f"extractive-v1-{max_sentences}-{max_sentence_chars}"

    def summarize(self, records: Sequence[Record]) -> str:
        sentences = [
            (r.role, s.strip()) for r in records for s in _SENTENCE.split(r.content) if s.strip()
        ]
        counts = Counter(w for _, s in sentences for w in _content_words(s))

        def weight(item: tuple[int, tuple[str, str]]) -> tuple[float, int]:
            words = _content_words(item[1][1])
            score = sum(counts[w] for w in set(words)) / (1 + len(words)) ** 0.5
            return (-score, item[0])

        chosen = sorted(sorted(enumerate(sentences), key=weight)[: self.max_sentences])
        return "\n".join(f"{role}: {self._short(text)}" for _, (role, text) in chosen)

    def _short(self, text: str) -> str:
        text = " ".join(text.split())
        limit = self.max_sentence_chars
        return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _content_words(sentence: str) -> list[str]:
    return [w for w in _WORD.findall(sentence.lower()) if w not in STOPWORDS and len(w) > 1]
