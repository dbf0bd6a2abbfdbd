"""Input checks at the edge of the store (pure). Each returns the normalised value or raises."""

from __future__ import annotations

import dataclasses
import json
import math
import numbers
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any, Literal, Protocol, TypeVar

from .errors import ValidationError, shown
from .patterns import lazy


class Limits(Protocol):
    """The limits the checks apply (what :class:`memvault.Settings` holds; this module sits
    below it and does not import it)."""

    @property
    def max_content_chars(self) -> int: ...
    @property
    def max_tags(self) -> int: ...
    @property
    def max_tag_chars(self) -> int: ...
    @property
    def max_metadata_bytes(self) -> int: ...
    @property
    def max_limit(self) -> int: ...


_CATEGORY = lazy(r"^[a-z][a-z0-9_\-]{0,63}$")
_MAX_ID_CHARS = 128
MAX_DEPTH = 32
"""Deepest nesting of lists, mappings and records accepted in any argument."""
_SCALARS = (bool, type(None), datetime, timedelta, tzinfo)
LARGEST_INT = 2**63 - 1
"""Integers in arguments are 64-bit: what every store and JSON peer can hold."""
F = TypeVar("F", bound=Callable[..., Any])


def arguments(named: Mapping[str, object]) -> None:
    """Check every argument of an operation, however deeply nested: each string encodable as
    UTF-8 (no lone surrogates), each number finite, nesting at most :data:`MAX_DEPTH` deep.

    Called once, where the drivers enter an operation; the per-field checks then only deal
    with meaning (ranges, formats, sizes).
    """
    for name, value in named.items():
        _walk(value, (name,))


PER_ITEM = "__memvault_checked_per_item__"


def checked_per_item(*names: str) -> Callable[[F], F]:
    """Mark parameters that an operation checks item by item (to report each bad item), so
    :func:`arguments` leaves them to it."""

    def mark(fn: F) -> F:
        setattr(fn, PER_ITEM, names)
        return fn

    return mark


def _walk(value: object, path: tuple[object, ...]) -> None:
    problem = _scalar_problem(value)
    if problem is not None:
        raise ValidationError(f"{_path(path)} {problem}")
    children = _children(value)
    if children and len(path) > MAX_DEPTH:
        raise ValidationError(f"{_path(path[:2])} is nested more than {MAX_DEPTH} levels deep")
    for step, child in children:
        _walk(child, (*path, step))


def _scalar_problem(value: object) -> str | None:
    """What is wrong with a string or a number (None: nothing, or not a scalar)."""
    if isinstance(value, str) and not encodable(value):
        return "is not valid Unicode text (a lone surrogate, e.g. from bytes not UTF-8)"
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return None if -LARGEST_INT <= value <= LARGEST_INT else "is out of 64-bit range"
    if isinstance(value, numbers.Real) and not math.isfinite(value):
        return f"must be a finite number, got {value!r}"
    return None


def _children(value: object) -> list[tuple[object, object]]:
    """The (step, value) pairs inside a container, a mapping (its keys too) or a dataclass."""
    if isinstance(value, (str, bytes, *_SCALARS)):
        return []
    if isinstance(value, Mapping):
        return [pair for key, item in value.items() for pair in (("<key>", key), (key, item))]
    if isinstance(value, list | tuple | set | frozenset):
        return list(enumerate(value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [(f.name, getattr(value, f.name)) for f in dataclasses.fields(value)]
    return []


def _path(parts: tuple[object, ...]) -> str:
    """``name.key[2]``; a nameless root ("") leaves the first key as the name."""
    text = str(parts[0])
    for part in parts[1:]:
        step = f"[{part}]" if isinstance(part, int) else f".{ascii(part)[1:-1]}"
        text += step.lstrip(".") if not text else step
    return text or "the value"


def encodable(text: str) -> bool:
    """Whether ``text`` can be stored: UTF-8 encodable, so no lone surrogates."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def finite(name: str, value: object, least: float = -math.inf, most: float = math.inf) -> float:
    """A real number (not a bool), finite and within ``least``..``most``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValidationError(f"{name} must be a number, got {type(value).__name__}")
    try:
        number = float(value)
    except OverflowError:
        raise ValidationError(f"{name} is too large a number") from None
    if not math.isfinite(number):
        raise ValidationError(f"{name} must be a finite number, got {shown(value)}")
    if not least <= number <= most:
        raise ValidationError(f"{name} must be between {least} and {most}, got {shown(value)}")
    return number


def _has_control(text: str) -> bool:
    return any(ord(ch) < 32 or ord(ch) == 127 for ch in text)


def content(value: object, settings: Limits) -> str:
    if not isinstance(value, str):
        raise ValidationError(f"content must be a string, got {type(value).__name__}")
    if not value.strip():
        raise ValidationError("content must not be empty or only whitespace")
    if "\x00" in value or not encodable(value):
        raise ValidationError("content must not contain NUL characters or lone surrogates")
    if len(value) > settings.max_content_chars:
        raise ValidationError(
            f"content is {len(value):,} characters; the limit is {settings.max_content_chars:,} "
            "(split it, or raise MEMVAULT_MAX_CONTENT_CHARS)"
        )
    return value


def tags(values: Iterable[str] | None, settings: Limits) -> tuple[str, ...]:
    """Strip, de-duplicate (first occurrence wins) and check tags."""
    if values is None:
        return ()
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise ValidationError(f"tags must be a list of strings, got {type(values).__name__}")
    seen: dict[str, None] = {}
    for raw in values:
        if not isinstance(raw, str):
            raise ValidationError(f"each tag must be a string, got {type(raw).__name__}")
        tag = raw.strip()
        if not tag:
            raise ValidationError("tags must not be empty")
        if len(tag) > settings.max_tag_chars or _has_control(tag) or not encodable(tag):
            raise ValidationError(
                f"tag {tag[:40]!r} is longer than {settings.max_tag_chars} characters "
                "or contains a control character"
            )
        seen.setdefault(tag, None)
    if len(seen) > settings.max_tags:
        raise ValidationError(f"an entry may have at most {settings.max_tags} tags")
    return tuple(seen)


def categories(values: object) -> tuple[str, ...]:
    """Categories to filter by (any of them)."""
    if values is None:
        return ()
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise ValidationError(f"categories must be a list, got {type(values).__name__}")
    return tuple(str(category(value)) for value in values)


def category(value: str | None) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not _CATEGORY.match(value):
        raise ValidationError(
            f"category {shown(value)} must be a lowercase word (a-z, 0-9, '_' or '-', up to 64)"
        )
    return value


def metadata(value: Mapping[str, Any] | None, settings: Limits) -> dict[str, Any]:
    """Check that metadata is a JSON object within the size limit; return a JSON-normal copy."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValidationError(f"metadata must be a mapping, got {type(value).__name__}")
    if not all(isinstance(key, str) for key in value):
        raise ValidationError("metadata keys must be strings")
    try:
        text = json.dumps(dict(value), allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"metadata must be JSON-serialisable: {exc}") from None
    if len(text.encode()) > settings.max_metadata_bytes:
        raise ValidationError(
            f"metadata is larger than {settings.max_metadata_bytes:,} bytes as JSON"
        )
    result: dict[str, Any] = json.loads(text)
    return result


def aware(name: str, value: object) -> datetime:
    """A timezone-aware datetime, converted to UTC; naive ones are rejected."""
    if not isinstance(value, datetime):
        raise ValidationError(f"{name} must be a datetime, got {type(value).__name__}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValidationError(f"{name} must be timezone-aware (e.g. datetime.now(timezone.utc))")
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise ValidationError(
            f"{name} {value.isoformat()} is outside the datetimes UTC has"
        ) from None


def iso_time(name: str, text: str) -> datetime:
    """An ISO-8601 text with a timezone, as the datetime it names."""
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise ValidationError(f"{name}: {text!r} is not an ISO-8601 datetime") from None
    if parsed.tzinfo is None:
        raise ValidationError(f"{name}: {text!r} needs a timezone, e.g. 2026-01-31T12:00:00Z")
    return parsed


def expiry(
    expires_at: datetime | None, ttl: timedelta | float | None, now: datetime
) -> datetime | None:
    """Resolve ``expires_at`` / ``ttl`` (seconds or timedelta) into one future UTC instant."""
    if expires_at is not None and ttl is not None:
        raise ValidationError("give either expires_at or ttl, not both")
    if ttl is not None:
        if isinstance(ttl, bool) or not isinstance(ttl, int | float | timedelta):
            raise ValidationError("ttl must be a number of seconds or a timedelta")
        try:
            expires_at = now + (ttl if isinstance(ttl, timedelta) else timedelta(seconds=ttl))
        except (OverflowError, ValueError):
            raise ValidationError(f"ttl {ttl} is not a usable number of seconds") from None
    if expires_at is None:
        return None
    when = aware("expires_at", expires_at)
    if when <= now:
        raise ValidationError(f"expires_at {when.isoformat()} is not in the future")
    return when


MAX_WAIT_SECONDS = 365 * 24 * 3600
"""The longest wait a timeout may ask for (a year; longer overflows the platform's clock)."""


def timeout(value: object) -> float | None:
    """A wait's timeout in seconds: None (no limit) or a finite number from 0 to a year."""
    return None if value is None else finite("timeout", value, 0, MAX_WAIT_SECONDS)


def flag(name: str, value: object) -> bool:
    """True or False itself: ``"false"`` or ``0`` would be read as something it does not say."""
    if not isinstance(value, bool):
        raise ValidationError(f"{name} must be True or False, got {shown(value)}")
    return value


def duration(name: str, value: object) -> float:
    """A positive timedelta, in seconds."""
    if not isinstance(value, timedelta) or value <= timedelta(0):
        raise ValidationError(f"{name} must be a positive timedelta, got {shown(value)}")
    return value.total_seconds()


def limit(value: object, settings: Limits) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValidationError(f"limit must be a positive integer, got {shown(value)}")
    if value > settings.max_limit:
        raise ValidationError(f"limit {value} is above the maximum of {settings.max_limit}")
    return value


MAX_QUERY_CHARS = 10_000
"""The longest search query: what to find, not a document (BM25 reads all of it; the
embedder only its start, :data:`ASKED_CHARS` or so)."""


ASKED_CHARS = 1_000
"""How much of the end of a message asks what to recall: about what the embedder reads of a
query (256 word pieces) — a question after pasted text is at the end."""


def asked(message: str) -> str | None:
    """The query a message asks by default: its last ``ASKED_CHARS`` characters."""
    return message[-ASKED_CHARS:].strip() or None


def query(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError("search needs a non-empty query string")
    if len(value) > MAX_QUERY_CHARS:
        raise ValidationError(
            f"the query is {len(value):,} characters, more than {MAX_QUERY_CHARS:,}: search for "
            "the gist of it"
        )
    if not encodable(value):
        raise ValidationError("the query holds a lone surrogate (text that is not Unicode)")
    return value


def entry_ids(name: str, values: object) -> list[str]:
    """A list of entry or object ids."""
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise ValidationError(f"{name} must be a list of ids, got {type(values).__name__}")
    return [entry_id(v) for v in values]


def zone(value: object) -> tzinfo:
    if not isinstance(value, tzinfo):
        raise ValidationError(f"tz must be a time zone (tzinfo), got {type(value).__name__}")
    return value


def tenant(value: object) -> str:
    """A tenant name: a non-empty, encodable string without control characters."""
    if not isinstance(value, str) or not value.strip() or len(value) > _MAX_ID_CHARS:
        raise ValidationError(
            f"tenant must be a non-empty string of at most 128, got {shown(value)}"
        )
    if _has_control(value) or not encodable(value):
        raise ValidationError(
            f"tenant {shown(value)} contains a control character or a lone surrogate"
        )
    return value


MAX_ACTOR_CHARS = 200
"""An actor's name: room for a server's own (128), ``/`` and a request's agent (64)."""


def actor(value: object, most: int = MAX_ACTOR_CHARS) -> str:
    """An actor's name (who the audit log says acted): 1 to ``most`` printable characters."""
    if not isinstance(value, str) or not value.strip() or len(value) > most:
        raise ValidationError(
            f"actor must be a non-empty string of at most {most}, got {shown(value)}"
        )
    if _has_control(value) or not encodable(value):
        raise ValidationError("actor must not contain control characters or lone surrogates")
    return value


def entry_id(value: object) -> str:
    if not isinstance(value, str) or not value or len(value) > _MAX_ID_CHARS:
        raise ValidationError(
            f"entry id must be a non-empty string of at most {_MAX_ID_CHARS}, got {shown(value)}"
        )
    if _has_control(value) or not encodable(value):
        raise ValidationError("entry id must not contain control characters or lone surrogates")
    return value


def order(value: object) -> Literal["newest", "oldest"]:
    if value == "newest":
        return "newest"
    if value == "oldest":
        return "oldest"
    raise ValidationError(f"order must be 'newest' or 'oldest', got {shown(value)}")


def past(name: str, value: object, now: datetime) -> datetime:
    """An aware datetime that is not in the future."""
    when = aware(name, value)
    if when > now:
        raise ValidationError(f"{name} {when.isoformat()} is in the future")
    return when


def context(value: object, settings: Limits) -> str:
    if not isinstance(value, str):
        raise ValidationError(f"context must be a string, got {type(value).__name__}")
    if "\x00" in value or len(value) > settings.max_content_chars:
        raise ValidationError(
            f"context must be at most {settings.max_content_chars:,} characters, without NUL"
        )
    return value


def known_fields(
    given: Mapping[str, Any], accepted: Iterable[str], required: Iterable[str] = ()
) -> Mapping[str, Any]:
    """``given`` if it names only ``accepted`` fields and gives every ``required`` one (None is
    not given); else a ValidationError naming the unknown or missing ones, never a TypeError."""
    accepted = sorted(accepted)
    unknown = sorted(str(name) for name in set(given) - set(accepted))
    if unknown:
        named = ", ".join(name if len(name) <= 80 else shown(name) for name in unknown[:10])
        raise ValidationError(f"unknown field(s): {named}; accepted: {', '.join(accepted)}")
    missing = [name for name in required if given.get(name) is None]
    if missing:
        raise ValidationError(f"missing required field(s): {', '.join(missing)}")
    return given


def read_once(value: Any) -> Any:
    """A one-shot iterator (a generator) as a tuple, so that what is checked is what the plan
    gets; any other value as it is."""
    return tuple(value) if isinstance(value, Iterator) else value
