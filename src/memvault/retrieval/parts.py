"""A question that asks about several things at once, split into its parts (pure text rules).

"What do Caroline and Melanie both paint?" asks about Caroline and about Melanie: the turns
that answer it are Caroline's and Melanie's, and a search for the whole question may fill its
first places with one of them. Each part is searched too and the results are pooled
(:meth:`memvault.core.Core.ranked`), so one part's evidence does not crowd out another's.

- Two names joined by "and" in a question that asks about each of them ("both", "in common",
  "each"): one part for each name, the question otherwise unchanged. Without such a word the
  two share the evidence ("When did Ann and Bob meet?"), and on LoCoMo splitting those cost
  turn_recall@10 (docs/benchmarks.md).
- Two questions joined by "and" ("What did Ann buy, and where did she go?"): each of them.

Anything else is one part: the question.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

from ..patterns import lazy
from .entities import COMMON

T = TypeVar("T")
MOST_PARTS = 3
_NAMES = lazy(r"\b([A-Z][\w'\u2019-]*)\s+(?:and|&)\s+([A-Z][\w'\u2019-]*)\b")
_EACH = lazy(r"\b(?:both|in common|each)\b", re.I)
_QUESTIONS = lazy(
    r"(?:,\s*|\s+)(?:and|but)\s+(?=(?:what|where|when|who|whom|which|why|how)\b)", re.I
)


def parts(question: str) -> list[str]:
    """The parts of ``question`` (at most ``MOST_PARTS``), or ``[question]``."""
    clauses = [c.strip(" ,") for c in _QUESTIONS.split(question) if c.strip(" ,")]
    if len(clauses) > 1:
        return [_asked(c) for c in clauses[:MOST_PARTS]]
    match = _NAMES.search(question) if _EACH.search(question) else None
    if match is None or any(_common(name) for name in match.groups()):
        return [question]
    start, end = match.span()
    return [question[:start] + name + question[end:] for name in match.groups()]


def _common(word: str) -> bool:
    return word.casefold() in COMMON


def _asked(clause: str) -> str:
    """The clause as a question of its own."""
    return clause if clause.endswith("?") else clause + "?"


def questions(query: str) -> list[str]:
    """What a search asks: the query, then its parts when it has several."""
    found = parts(query)
    return [query, *found] if len(found) > 1 else [query]


def interleaved(rankings: Sequence[Sequence[T]], key: Callable[[T], Hashable]) -> list[T]:
    """The rankings taken in turn, one item of each at a time, each item once (its first
    place wins): the pooled results of a question's parts."""
    seen: set[Hashable] = set()
    result: list[T] = []
    for place in range(max((len(r) for r in rankings), default=0)):
        for ranking in rankings:
            if place < len(ranking) and key(ranking[place]) not in seen:
                seen.add(key(ranking[place]))
                result.append(ranking[place])
    return result
