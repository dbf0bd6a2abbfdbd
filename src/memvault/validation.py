"""Input checks at the edge of the store (pure). Each returns the normalised value or raises."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any

from .config import Settings
from .errors import ValidationError

_CATEGORY = re.compile(r"^[a-z][a-z0-9_\-]{0,63}$")
_MAX_ID_CHARS = 128


def _has_control(text: str) -> bool:
    return any(ord(ch) < 32 or ord(ch) == 127 for ch in text)


def content(value: object, settings: Settings) -> str:
    if not isinstance(value, str):
        raise ValidationError(f"content must be a string, got {type(value).__name__}")
    if not value.strip():
        raise ValidationError("content must not be empty or only whitespace")
    if "\x00" in value:
        raise ValidationError("content must not contain NUL characters")
    if len(value) > settings.max_content_chars:
        raise ValidationError(
            f"content is {len(value):,} characters; the limit is {settings.max_content_chars:,} "
            "(split it, or raise MEMVAULT_MAX_CONTENT_CHARS)"
        )
    return value


def tags(values: Iterable[str] | None, settings: Settings) -> tuple[str, ...]:
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
        if len(tag) > settings.max_tag_chars or _has_control(tag):
            raise ValidationError(
                f"tag {tag[:40]!r} is longer than {settings.max_tag_chars} characters "
                "or contains a control character"
            )
        seen.setdefault(tag, None)
    if len(seen) > settings.max_tags:
        raise ValidationError(f"an entry may have at most {settings.max_tags} tags")
    return tuple(seen)


def category(value: str | None) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not _CATEGORY.match(value):
        raise ValidationError(
            f"category {value!r} must be a lowercase word (a-z, 0-9, '_' or '-', up to 64)"
        )
    return value


def metadata(value: Mapping[str, Any] | None, settings: Settings) -> dict[str, Any]:
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
    return value.astimezone(UTC)


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


def limit(value: object, settings: Settings) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValidationError(f"limit must be a positive integer, got {value!r}")
    if value > settings.max_limit:
        raise ValidationError(f"limit {value} is above the maximum of {settings.max_limit}")
    return value


def query(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError("search needs a non-empty query string")
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


def entry_id(value: object) -> str:
    if not isinstance(value, str) or not value or len(value) > _MAX_ID_CHARS:
        raise ValidationError(f"entry id must be a non-empty string, got {value!r}")
    if _has_control(value):
        raise ValidationError("entry id must not contain control characters")
    return value


def order(value: object) -> str:
    if value not in ("newest", "oldest"):
        raise ValidationError(f"order must be 'newest' or 'oldest', got {value!r}")
    return str(value)


def past(name: str, value: object, now: datetime) -> datetime:
    """An aware datetime that is not in the future."""
    when = aware(name, value)
    if when > now:
        raise ValidationError(f"{name} {when.isoformat()} is in the future")
    return when


def context(value: object, settings: Settings) -> str:
    if not isinstance(value, str):
        raise ValidationError(f"context must be a string, got {type(value).__name__}")
    if "\x00" in value or len(value) > settings.max_content_chars:
        raise ValidationError(
            f"context must be at most {settings.max_content_chars:,} characters, without NUL"
        )
    return value
