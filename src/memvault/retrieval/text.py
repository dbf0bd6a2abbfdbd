"""Query text → lexical terms (pure). Terms are quoted for FTS5, so no input is ever syntax."""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+", re.UNICODE)

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
    """Lower-cased word tokens."""
    return [w.lower() for w in _WORD.findall(text)]


def query_terms(query: str) -> list[str]:
    """Distinct content words of a query; all its words if it has nothing but stop words."""
    tokens = words(query)
    content = [w for w in tokens if w not in STOPWORDS]
    return list(dict.fromkeys(content or tokens))


def fts_match(terms: list[str]) -> str | None:
    """An FTS5 MATCH expression: any of the terms, each a quoted string (quotes doubled)."""
    if not terms:
        return None
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)
