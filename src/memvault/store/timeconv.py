"""Instants as integer microseconds since the Unix epoch (UTC), exactly."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import overload

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)


def to_micros(value: datetime) -> int:
    return (value - _EPOCH) // _MICRO


@overload
def from_micros(value: int) -> datetime: ...
@overload
def from_micros(value: None) -> None: ...
def from_micros(value: int | None) -> datetime | None:
    return None if value is None else _EPOCH + value * _MICRO
