"""Turning JSON bodies and query strings into operation arguments (pure).

Every endpoint names the fields it accepts; an unknown field is an error (a typo must not be
ignored silently). Values the core validates pass through; only JSON's missing types
(datetimes, durations) are converted here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any

from ..errors import ValidationError

Convert = Callable[[str, Any], Any]


def as_is(name: str, value: Any) -> Any:
    return value


def timestamp(name: str, value: Any) -> datetime | None:
    """An ISO-8601 string with a timezone (None stays None)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValidationError(f"{name} must be an ISO-8601 string, got {type(value).__name__}")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise ValidationError(f"{name}: {value!r} is not an ISO-8601 datetime") from None
    if parsed.tzinfo is None:
        raise ValidationError(f"{name}: {value!r} needs a timezone, e.g. 2026-01-31T12:00:00Z")
    return parsed


def seconds(name: str, value: Any) -> timedelta | None:
    """A positive number of seconds."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ValidationError(f"{name} must be a positive number of seconds, got {value!r}")
    return timedelta(seconds=value)


def flag(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in {"true", "1", "false", "0"}:
        return value.lower() in {"true", "1"}
    raise ValidationError(f"{name} must be true or false, got {value!r}")


def integer(name: str, value: Any) -> int:
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            pass
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(f"{name} must be an integer, got {value!r}")
    return value


def fields(
    source: Any,
    accepted: Mapping[str, Convert],
    *,
    required: tuple[str, ...] = (),
    renamed: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Check ``source`` (a JSON object) against ``accepted`` and convert its values.

    ``renamed`` maps a field name to the keyword of the operation it feeds.
    """
    if not isinstance(source, Mapping):
        raise ValidationError(f"the request body must be a JSON object, got {_kind(source)}")
    unknown = sorted(set(source) - set(accepted))
    if unknown:
        raise ValidationError(
            f"unknown field(s): {', '.join(unknown)}; accepted: {', '.join(sorted(accepted))}"
        )
    missing = [name for name in required if source.get(name) is None]
    if missing:
        raise ValidationError(f"missing required field(s): {', '.join(missing)}")
    names = renamed or {}
    return {names.get(k, k): accepted[k](k, v) for k, v in source.items()}


def query_fields(
    params: Mapping[str, list[str]], accepted: Mapping[str, Convert], lists: tuple[str, ...] = ()
) -> dict[str, Any]:
    """Like :func:`fields` for a query string: ``lists`` may repeat, the others may not."""
    single = {}
    for name, values in params.items():
        if name not in lists and len(values) > 1:
            raise ValidationError(f"query parameter {name} is given more than once")
        single[name] = values if name in lists else values[0]
    return fields(single, accepted)


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__
