"""Time expressions in a query → the windows of time they name (dateparser, imported on use).

"last week", "yesterday", "two days ago", "in May 2023", "on 3 June, 2023", "in 2022" are
resolved against the instant the search is about (its ``as_of``, else now) and widened to what
they name: a day, a week around the day, a calendar month or year. Only expressions with a
year, a capitalised month name or a relative word count: "What may happen?" names no month and
"the 18th" no date. Entries created inside a window can then be boosted (``time_weight``).
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

from ..patterns import lazy

Window = tuple[datetime, datetime]
"""[start, end) in UTC."""

_MONTHS = (
    "January|February|March|April|May|June|July|August|September|October|November|December|"
    "Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec"
)
_NAMES_A_TIME = lazy(
    rf"\b(?:1[6-9]\d\d|2\d\d\d)\b|\b(?:{_MONTHS})\b|"
    r"\b(?i:yesterday|today|tonight|tomorrow|ago|last|next|this|past|previous)\b"
)
_LOCK = threading.Lock()


@cache
def _parsers() -> tuple[Any, Any]:
    from dateparser.date import DateDataParser
    from dateparser.search import search_dates

    return search_dates, DateDataParser(languages=["en"], settings={"PREFER_DATES_FROM": "past"})


def windows(query: str, now: datetime) -> list[Window]:
    """The windows of time the query's time expressions name, relative to ``now`` (aware)."""
    base = now.astimezone(UTC).replace(tzinfo=None)
    settings = {"RELATIVE_BASE": base, "PREFER_DATES_FROM": "past"}
    with _LOCK:  # dateparser's parsers keep state between calls
        search_dates, parser = _parsers()
        found = search_dates(query, languages=["en"], settings=settings) or []
        # The instant comes from the search (relative to ``now``); what it names (a day, a
        # week, a month, a year) from the parser, which does not depend on ``now``.
        named = [
            (when, parser.get_date_data(text).period)
            for text, when in found
            if _NAMES_A_TIME.search(text)
        ]
    return [_widened(when, period) for when, period in named]


def date_of(expression: str, now: datetime, prefer: str = "future") -> datetime | None:
    """The instant an English date expression names ("next Friday", "in 3 days"), relative to
    ``now`` (naive, as ``now`` is read), preferring the ``future`` or the ``past``; None if it
    names none."""
    from dateparser import parse

    settings = {"RELATIVE_BASE": now.replace(tzinfo=None), "PREFER_DATES_FROM": prefer}
    with _LOCK:  # dateparser's parsers keep state between calls
        return parse(expression, languages=["en"], settings=settings)  # type: ignore[no-any-return]


def _widened(when: datetime, period: str | None) -> Window:
    day = datetime(when.year, when.month, when.day, tzinfo=UTC)
    if period == "year":
        start, end = day.replace(month=1, day=1), day.replace(year=day.year + 1, month=1, day=1)
    elif period == "month":
        start = day.replace(day=1)
        end = (start + timedelta(days=32)).replace(day=1)
    elif period == "week":
        start, end = day - timedelta(days=3), day + timedelta(days=4)
    else:
        start, end = day, day + timedelta(days=1)
    return start, end
