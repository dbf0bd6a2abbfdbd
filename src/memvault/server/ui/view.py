"""What the inspector's pages show, as plain values (pure): severities, notices, addresses."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from urllib.parse import quote, urlencode

from ...errors import ValidationError
from ...facilities.model import Finding
from ...types import ScopeKind

PREFIX = "/ui"
NAVIGATION = (
    (PREFIX, "Sessions"),
    (f"{PREFIX}/hygiene", "Hygiene"),
    (f"{PREFIX}/agents/executions", "Executions"),
    (f"{PREFIX}/agents/strategies", "Strategies"),
    (f"{PREFIX}/agents/failures", "Failures"),
)
"""The pages every page links to, in the bar at its top: (address, name)."""
SEVERITIES = ("critical", "high", "medium", "low", "info")
"""Finding tags shown as severities, most severe first (any other tag filters too)."""
NOTICES = {
    "pinned": "Pinned to Global Memory.",
    "demoted": "Moved into this session's Session Memory.",
    "deleted": "Deleted.",
    "restored": "Restored: the entry is current again.",
}


def severity_of(tags: Iterable[str]) -> str | None:
    """The most severe of :data:`SEVERITIES` among ``tags``, if any."""
    present = set(tags)
    return next((s for s in SEVERITIES if s in present), None)


def filter_tags(findings: Sequence[Finding]) -> list[str]:
    """The choices of the findings filter: every severity, then the findings' other tags."""
    others = sorted({tag for f in findings for tag in f.tags} - set(SEVERITIES))
    return [*SEVERITIES, *others]


def notice(query: Mapping[str, str]) -> str | None:
    """The message a redirect after a change asked for (``?done=…&n=…``): only known ones."""
    message = NOTICES.get(query.get("done", ""))
    count = query.get("n", "")
    if message and count.isdigit() and len(count) < 6:
        return f"{message[:-1]} ({count} entries)."
    return message


def segment(value: str) -> str:
    """``value`` as one segment of a URL path: every ``/``, ``?``, ``#`` and ``%`` quoted."""
    return quote(str(value), safe="")


def page_size(asked: str | None, default: int, most: int) -> int:
    """How many rows a list shows: ``?limit=`` when it is a whole number, within 1..``most``."""
    if asked is None or not asked.isdigit():
        return default
    return max(1, min(int(asked[:12]), most))


def whole_number(name: str, asked: str | None, default: int) -> int:
    """A whole number of the query (``default`` when absent); anything else is refused."""
    if asked is None or asked == "":
        return default
    if not (asked.isascii() and asked.isdigit()) or len(asked) > 9:
        raise ValidationError(f"{name} must be a whole number, got {asked[:40]!r}")
    return int(asked)


def session_of(scope: str) -> str | None:
    """The address of the page of a session scope's session (None: another kind of scope)."""
    kind, _, rest = scope.partition(":")
    return session_url(rest) if kind == ScopeKind.SESSION.value and rest else None


def session_url(session_id: str | None, **query: str) -> str:
    """The address of a session's page (of the sessions list without one), with ``query``."""
    path = f"{PREFIX}/sessions/{quote(session_id, safe='')}" if session_id else PREFIX
    return f"{path}?{urlencode(query)}" if query else path


def when(moment: datetime | None) -> str:
    """A timestamp as the pages show it: ``2026-05-03 14:07 UTC``."""
    return "" if moment is None else moment.strftime("%Y-%m-%d %H:%M %Z").strip()


OUTCOMES = {"": None, "success": True, "failure": False}
"""The executions filter's choices: any, those that worked, those that failed."""


def outcome(asked: str | None) -> bool | None:
    """``success`` True, ``failure`` False, nothing None; anything else is refused."""
    given = asked or ""
    if given not in OUTCOMES:
        raise ValidationError(f"outcome must be success or failure, got {given[:40]!r}")
    return OUTCOMES[given]


def agents_url(page: str, **query: str) -> str:
    """The address of an agent memory page with the non-empty values of ``query``."""
    given = {name: value for name, value in query.items() if value}
    return f"{PREFIX}/agents/{page}" + (f"?{urlencode(given)}" if given else "")


def amount(value: float | None) -> str:
    """A count, a mean or a percentile as the tables show it: ``1,234``; ``-`` for none."""
    return "-" if value is None else f"{value:,.0f}"


def percent(rate: float | None) -> str:
    """A rate as a percentage: ``75%``; ``-`` for none."""
    return "-" if rate is None else f"{rate:.0%}"


def money(value: float) -> str:
    """A cost: four decimals, thousands grouped."""
    return f"{value:,.4f}"
