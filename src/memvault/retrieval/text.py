"""Text → lexical terms (pure): one analyzer for documents and queries, in every backend.

A term is a run of letters and digits, case-folded, without diacritics, reduced to its stem by
the Porter algorithm (PyStemmer): "visited" and "visits" are one term, as they were for SQLite's
FTS5 ``porter unicode61 remove_diacritics`` tokenizer that this replaces. Queries also drop
English stop words, unless they have nothing else.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from functools import cache
from typing import Any

from ..patterns import lazy

_WORD = lazy(r"\w+", re.UNICODE)
_TOKEN = lazy(r"[^\W_]+", re.UNICODE)
ANALYZER = "porter-1"
"""Names the analyzer; an index built by another one is rebuilt."""

STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be been before being below
    between both but by can could did do does doing don down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its
    itself just may me might more most must my myself no nor not now of off on once only or
    other our ours ourselves out over own same shall she should so some such than that the
    their theirs them themselves then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your yours
    yourself yourselves""".split()
)


def words(text: str) -> list[str]:
    """Lower-cased word tokens (no stemming)."""
    return [w.lower() for w in _WORD.findall(text)]


@cache
def _stemmer() -> Any:
    import Stemmer

    return Stemmer.Stemmer("porter")


def _plain(token: str) -> str:
    if token.isascii():
        return token
    decomposed = unicodedata.normalize("NFKD", token)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def tokens(text: str) -> list[str]:
    """Folded tokens of a text: letters and digits, case-folded, without diacritics."""
    return [_plain(t) for t in _TOKEN.findall(text.casefold())]


def stems(raw: Iterable[str]) -> list[str]:
    """The Porter stem of each folded token."""
    result: list[str] = _stemmer().stemWords(list(raw))
    return result


def terms(text: str) -> list[str]:
    """The terms of a document, in order (repeats kept; none empty: Porter stems a
    possessive's ``s`` to nothing)."""
    return [term for term in stems(tokens(text)) if term]


def query_terms(query: str) -> list[str]:
    """Distinct terms of a query's content words; of all its words if it has only stop words."""
    folded = tokens(query)
    content = [t for t in folded if t not in STOPWORDS]
    return list(dict.fromkeys(term for term in stems(content or folded) if term))


def coverage(wanted: Sequence[str], text: str) -> float:
    """The share of the query terms ``wanted`` (:func:`query_terms`) that the text has."""
    if not wanted:
        return 0.0
    have = set(terms(text))
    return sum(term in have for term in wanted) / len(wanted)
