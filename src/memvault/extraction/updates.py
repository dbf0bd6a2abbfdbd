"""Which stored memory a change the user states updates: "switched to Zed" updates "uses VS
Code for everything", "down to 84 kg" updates "weighs 92 kg", "doing Mediterranean now, keto
was miserable" updates "is doing keto".

The slot rule (:mod:`~memvault.extraction.slots`) knows the attributes it names; a change the
user states of anything else is linked here, by meaning. A turn links only when the user's own
words say something changed ("switched", "instead", "no longer", "turned 35", "now") and do not
add to what holds ("also", "too", "as well": two pets, two languages). The memory it updates is
the one most like the new fact — by the packaged MiniLM, and more when the turn names what the
memory is about ("dropped Spanish") or names another of the same kind (:mod:`.kinds`: "Zed"
for "VS Code") — if alike enough: less for a plain change ("switched to"),
more for a word that only may say one ("now", "these days"). Two memories as alike are
ambiguous, and neither is updated.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..embeddings.local import shared_model
from ..patterns import lazy
from .kinds import kinds_named

_ENDED = lazy(
    r"\b(?:no\s+longer|not\s+\w+(?:\s+\w+)?\s+any\s?more|quit|stopped|dropped|ditched"
    r"|gave\s+up|cancell?ed|left)\b",
    re.IGNORECASE,
)
"""Words that say something the user held has ended: what ended is named ("dropped Spanish")."""
_CHANGED = lazy(
    r"\b(?:switch(?:ed|ing)|mov(?:ed|ing)\s+(?:to|over|off|from|on|everything|all|my|our|the)"
    r"|instead"
    r"|replaced|swapped|changed|grown\s+to|raised|bumped|lowered|cut\s+(?:back|down)"
    r"|back\s+(?:on|to)"
    r"|(?:got|found|bought)\s+a\s+new|bought\s+a\s+(?:place|house|flat|home|apartment|condo)"
    r"|after\s+all|decided\s+on|settled\s+on|relocated"
    r"|remortgaged|upgraded|downgraded)\b",
    re.IGNORECASE,
)
"""Words that say something the user held has changed."""
_NEW_NUMBER = lazy(
    r"\b(?:(?:dropped|fell|fallen|increased|decreased|rose|risen|reached|hit|climbed|jumped"
    r"|grew|grown|doubled|halved|turned|went\s+(?:up|down))\s+(?:to\s+)?[^\s\d]{0,3}\d"
    r"|(?:up|down)\s+to\s+[^\s\d]{0,3}\d"
    r"|from\s+[^\s\d]{0,3}\d\S*\s+to\s+[^\s\d]{0,3}\d)",
    re.IGNORECASE,
)
"""Words that give a number its new value ("dropped to 84 kg", "from 1,400 to 1,550")."""
_MAYBE_CHANGED = lazy(
    r"\b(?:(?<!years\s)(?<!months\s)(?<!weeks\s)(?<!days\s)(?<!while\s)now|these\s+days"
    r"|nowadays|at\s+the\s+moment|actually|any\s?more|joined|got\s+a|arrived|passed|new)\b",
    re.IGNORECASE,
)
"""Words that may say so ("now", not "for two years now"): a link then needs a closer memory."""
_ADDED = lazy(
    r"\b(?:also|too|as\s+well|another|second|both|in\s+addition|besides|plus|on\s+top)\b",
    re.IGNORECASE,
)
"""Words that say the new fact holds beside the old ("I also have a cat")."""

CLOSE = 0.35
"""Least similarity of a memory a plain change ("switched to") updates."""
CLOSER = 0.5
"""Least similarity when the words only may say something changed ("now")."""
NAMED = 0.2
"""What naming a memory's topic in the turn ("dropped Spanish") adds to its similarity."""
SAME_KIND = 0.25
"""What naming another of the same kind ("Zed" for "VS Code": :mod:`.kinds`) adds."""
MARGIN = 0.05
"""How much closer the memory updated must be than the next: nearer is ambiguous."""


@dataclass(frozen=True, slots=True)
class Old:
    """A stored memory a change could update: its content and the stems it is about."""

    content: str
    topic: frozenset[str]


@dataclass(frozen=True, slots=True)
class Change:
    """What the user's words say changed: how alike a memory must be to be the one changed,
    and, for an end ("quit coffee completely"), the words after it, which must name it."""

    least: float
    ended: str | None = None


def change_said(said: str) -> Change | None:
    """What ``said`` (the user's own words, the sentence of the new fact) says changed: None
    when nothing did, or the new holds beside the old."""
    if _ADDED.search(said):
        return None
    if _NEW_NUMBER.search(said):
        return Change(CLOSE)
    if (end := _ENDED.search(said)) is not None:
        return Change(CLOSE, _what_ended(said[end.end() :]))
    if _CHANGED.search(said):
        return Change(CLOSE)
    return Change(CLOSER) if _MAYBE_CHANGED.search(said) else None


def _what_ended(after: str) -> str:
    """The words after an end that say what ended: at most ``ENDED_WORDS``, up to the first
    that says when or how much ("quit vaping six months ago" → "vaping") or the end of the
    clause ("dropped Spanish, doing Italian now" → "spanish")."""
    kept = []
    for word in after.split()[:ENDED_WORDS]:
        plain = word.strip(".,;:!?()").casefold()
        if plain in _WHEN or plain[:1].isdigit():
            break
        kept.append(plain)
        if word.endswith((",", ";", ".", "!", "?", ")")):
            break
    return " ".join(kept)


ENDED_WORDS = 3
"""How many words after an end ("quit", "no longer") may say what ended."""
_WHEN = frozenset(
    """ago day days week weeks month months year years today yesterday last this next since
    for after before in on at when because completely entirely totally fully altogether
    a an one two three four five six seven eight nine ten few couple""".split()
)


def updated(
    fact: str, named: frozenset[str], olds: Sequence[Old], least: float, must_name: bool = False
) -> int | None:
    """The index of the memory of ``olds`` the new ``fact`` updates (``named``: the stems of
    the user's words), or None: none alike enough (``least``), one not named when the change
    ``must_name`` it, or two as alike. Naming another of the same kind ("switched to Zed" and
    "uses VS Code") makes a memory closer. Words that only may say a change ("now") weigh only
    the memories they name or that name the same kind (embedding every memory for each "now"
    would cost a second a turn)."""
    only_named = must_name or least > CLOSE
    kinds = kinds_named(fact)
    alike = [bool(kinds & kinds_named(o.content)) for o in olds]
    weighed = [
        i
        for i, o in enumerate(olds)
        if o.topic & named or (alike[i] and not must_name) or not only_named
    ]
    if not weighed:
        return None
    scores = similarities(fact, [olds[i].content for i in weighed])
    scores += np.array([NAMED if olds[i].topic & named else 0.0 for i in weighed])
    scores += np.array([SAME_KIND if alike[i] else 0.0 for i in weighed])
    order = np.argsort(-scores)
    if scores[order[0]] < least:
        return None
    if len(order) > 1 and scores[order[0]] - scores[order[1]] < MARGIN:
        return None
    return weighed[int(order[0])]


def similarities(fact: str, others: Sequence[str]) -> np.ndarray:
    """Cosine similarity of ``fact`` to each of ``others`` (the packaged MiniLM)."""
    vectors = shared_model().embed([fact, *others])
    return np.asarray(vectors[1:] @ vectors[0], dtype=np.float64)
