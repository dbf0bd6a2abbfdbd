"""Request fields: their JSON schema and how each becomes an operation argument (pure).

Every endpoint names the fields it accepts; an unknown field is an error (a typo must not be
ignored silently). Each field checks its JSON type and converts what JSON cannot say (datetimes,
durations, zones); the core validates the rest. ``null`` means "not given", unless a field says
that null is a value (``nullable``, e.g. an expiry to clear). The server reads requests with
these fields and the remote client writes them (:func:`query_text`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .. import validation as check
from ..errors import ValidationError
from ..patterns import lazy

Convert = Callable[[str, Any], Any]
_PYTHON: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "object": dict,
    "array": list,
}


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def typed(kind: str) -> Convert:
    """A converter that only checks the JSON type ``kind``."""

    def check(name: str, value: Any) -> Any:
        if (isinstance(value, bool) and kind in ("integer", "number")) or not isinstance(
            value, _PYTHON[kind]
        ):
            raise ValidationError(f"{name} must be of JSON type {kind}, got {_kind(value)}")
        return value

    return check


def array_of(kind: str) -> Convert:
    """A converter that checks a JSON array whose every item is of the JSON type ``kind``."""
    array, item = typed("array"), typed(kind)

    def check(name: str, value: Any) -> Any:
        return [item(f"{name}[{n}]", v) for n, v in enumerate(array(name, value))]

    return check


def timestamp(name: str, value: Any) -> datetime:
    """An ISO-8601 string with a timezone."""
    if not isinstance(value, str):
        raise ValidationError(f"{name} must be an ISO-8601 string, got {_kind(value)}")
    return check.iso_time(name, value)


def seconds(name: str, value: Any) -> timedelta:
    """A positive number of seconds."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ValidationError(f"{name} must be a positive number of seconds, got {value!r}")
    try:
        return timedelta(seconds=value)
    except OverflowError:
        raise ValidationError(f"{name}: {value} seconds is too long a time") from None


@dataclass(frozen=True, slots=True)
class Field:
    """One accepted field: its JSON schema and its converter."""

    schema: Mapping[str, Any]
    convert: Convert = field(default=typed("string"))
    keyword: str | None = None
    """The operation's keyword, when it is not the field's name."""
    repeats: bool = False
    """In a query string: may be given several times (a list)."""
    nullable: bool = False
    """null is a value passed on (not "not given")."""

    def __call__(self, name: str, value: Any) -> Any:
        return None if value is None else self.convert(name, value)


TEXT = Field({"type": "string"})
TEXTS = Field({"type": "array", "items": {"type": "string"}}, array_of("string"))
OBJECT = Field({"type": "object"}, typed("object"))
NUMBER = Field({"type": "number"}, typed("number"))
INTEGER = Field({"type": "integer"}, typed("integer"))
FLAG = Field({"type": "boolean"}, typed("boolean"))
TIMESTAMP = Field({"type": "string", "format": "date-time"}, timestamp)
SECONDS = Field({"type": "number", "exclusiveMinimum": 0}, seconds)
TAG_PARAM = Field({"type": "string"}, typed("array"), keyword="tags", repeats=True)
"""``?tag=a&tag=b`` → ``tags=[a, b]``."""


def zone(name: str, value: Any) -> ZoneInfo:
    """An IANA time zone name such as ``Europe/Paris``."""
    if not isinstance(value, str):
        raise ValidationError(f"{name} must be a time zone name such as UTC")
    try:
        return ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValidationError(f"{name}: unknown time zone {value!r}, e.g. UTC") from None


ZONE = Field({"type": "string", "examples": ["UTC", "Europe/Paris"]}, zone)


def _ids(name: str, value: Any) -> Any:
    return value if isinstance(value, str) else typed("array")(name, value)


IDS = Field({"anyOf": [{"type": "string"}, TEXTS.schema]}, _ids)
"""One id, or a list of them."""


def _text_or_texts(name: str, value: Any) -> Any:
    return value if isinstance(value, str) else array_of("string")(name, value)


TEXT_OR_TEXTS = Field({"anyOf": [{"type": "string"}, TEXTS.schema]}, _text_or_texts)
"""One text, or a list of texts (a plan: its text, or its steps)."""
INTEGERS = Field({"type": "array", "items": {"type": "integer"}}, array_of("integer"))
OBJECTS = Field({"type": "array", "items": {"type": "object"}}, array_of("object"))


def _lists_of_objects(name: str, value: Any) -> Any:
    return [OBJECTS(f"{name}[{n}]", item) for n, item in enumerate(typed("array")(name, value))]


LISTS_OF_OBJECTS = Field({"type": "array", "items": OBJECTS.schema}, _lists_of_objects)
"""A list of lists of objects (team compositions)."""


def fields(
    source: Any, accepted: Mapping[str, Field], required: tuple[str, ...] = ()
) -> dict[str, Any]:
    """Check ``source`` (a JSON object) against ``accepted``; the operation's keyword arguments."""
    if not isinstance(source, Mapping):
        raise ValidationError(f"the request body must be a JSON object, got {_kind(source)}")
    check.known_fields(source, accepted, required)
    return {
        accepted[k].keyword or k: accepted[k](k, v)
        for k, v in source.items()
        if v is not None or accepted[k].nullable
    }


def query_fields(
    params: Mapping[str, list[str]], accepted: Mapping[str, Field], required: tuple[str, ...] = ()
) -> dict[str, Any]:
    """Like :func:`fields` for a query string: only repeatable fields may repeat."""
    single: dict[str, Any] = {}
    for name, values in params.items():
        repeats = name in accepted and accepted[name].repeats
        if not repeats and len(values) > 1:
            raise ValidationError(f"query parameter {name} is given more than once")
        field = accepted.get(name)
        read = [from_query(field, text) for text in values] if field else values
        single[name] = read if repeats else read[0]
    return fields(single, accepted, required)


_BOOLEANS = {"true": True, "1": True, "false": False, "0": False}
_INTEGER = lazy(r"-?[0-9]{1,18}")
_NUMBER = lazy(r"-?[0-9]{1,300}(\.[0-9]{1,300})?([eE][+-]?[0-9]{1,3})?")


def from_query(field: Field, text: str) -> Any:
    """A query-string value as the JSON value it stands for (a query string has no types):
    true/false (or 1/0) for a boolean field, digits for an integer, a decimal for a number;
    anything else stays text, for the field to refuse by its type."""
    kind = field.schema.get("type")
    if field.repeats:
        kind = field.schema.get("items", {}).get("type", "string")
    if kind == "boolean":
        return _BOOLEANS.get(text.lower(), text)
    if kind == "integer" and _INTEGER.fullmatch(text):
        return int(text)
    if kind == "number" and _NUMBER.fullmatch(text) and math.isfinite(float(text)):
        return float(text)
    return text


def query_text(field: Field, name: str, value: Any) -> list[str]:
    """The query-string values of a JSON ``value`` for ``field`` (each item of a repeating
    one). A query string has no types, so the JSON type is checked here, as the server checks
    a body's; null gives no value."""
    if value is None:
        return []
    items = field.convert(name, value) if field.repeats else [value]
    check = typed(field.schema.get("type", "string"))
    return [_text(check(name, item)) for item in items]


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else repr(value)
