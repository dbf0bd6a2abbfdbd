"""How an entry is said (pure): a searchable document's own text and the traits of it that
tell a statement from a question or a passing remark.

A conversational search weighs them (:mod:`memvault.retrieval.relevance`): the turn that
answers a question is usually a statement in the first person with some length ("I signed up
for a pottery class"), seldom a question back or "Wow, great!".
"""

from __future__ import annotations

import math
import re

from ..patterns import lazy
from .entities import line
from .text import tokens

SEPARATOR = "\x1f"
"""Between an entry's text and its context in a searchable document (a unit separator; one
inside the text is read as a space)."""
TRAITS = ("length", "asks", "first_person", "time", "number", "place")
ANSWERS = ("time", "number", "place")
"""The traits that answer a kind of question (:func:`wanted`)."""
_FIRST_PERSON = lazy(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|we|we're|our|ours|us)\b", re.I)
_TIME = lazy(
    r"\b(?:yesterday|today|tonight|tomorrow|ago|last|next|week|weekend|month|year|years|"
    r"january|february|march|april|may|june|july|august|september|october|november|december|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|morning|afternoon|evening|"
    r"summer|winter|spring|autumn|since|recently|soon|\d{4}|\d{1,2}(?::\d\d)?\s*[ap]\.?m\.?)\b",
    re.I,
)
_NUMBER = lazy(
    r"\b(?:\d+(?:[.,]\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"twenty|thirty|forty|fifty|hundred|thousand|million|once|twice|dozen)\b",
    re.I,
)
_PLACE = lazy(r"\b(?:in|at|to|from|near|visited|visit|visiting)\s+(?:the\s+)?[A-Z][\w'-]+")
_WANTS = {
    "time": lazy(
        r"^\s*when\b|\bhow long\b|\b(?:what|which) (?:year|month|day|date|time)\b",
        re.I,
    ),
    "number": lazy(r"\bhow (?:many|much|old|often|far)\b", re.I),
    "place": lazy(
        r"^\s*where\b|\bwhich (?:city|cities|country|countries|state|states|place|places|town)\b",
        re.I,
    ),
}


def searchable(text: str, context: str | None) -> str:
    """The document the text indexes read: the text, then its context."""
    return f"{text.replace(SEPARATOR, ' ')}{SEPARATOR}{context or ''}"


def own_text(document: str) -> str:
    """A searchable document's text, without its context."""
    return document.split(SEPARATOR, 1)[0]


def traits(text: str) -> tuple[float, ...]:
    """Of what the text says (a transcript line's header left out: :func:`line`): log(1 +
    words), whether it asks (ends with "?"), its first-person words (at most three) over
    three, and whether it says when (a time expression), how many (a number) and where ("in
    Paris", "visited Lisbon")."""
    text = line(text)[1]
    length = math.log1p(len(tokens(text)))
    asks = float(text.rstrip().endswith("?"))
    first = min(len(_FIRST_PERSON.findall(text)), 3) / 3
    said = (float(_TIME.search(text) is not None), float(_NUMBER.search(text) is not None))
    return length, asks, first, *said, float(_PLACE.search(text) is not None)


def wanted(question: str) -> tuple[str, ...]:
    """What kind of answer a question asks for, of :data:`ANSWERS` ("When did…": time)."""
    return tuple(kind for kind in ANSWERS if _WANTS[kind].search(question))
