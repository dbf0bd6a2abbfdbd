"""How an operation's result travels as JSON, both ways (pure): the server encodes it with the
same codec the remote client decodes it with, so the two cannot drift apart.

``Whole(MemoryEntry)`` is the result's own ``to_dict``/``from_dict``; ``Each("entries",
MemoryEntry)`` a list under a key; ``Value("deleted")`` a plain JSON value under a key;
``Scored("hits", Execution)`` a list of ``(item, score)`` pairs, the score inside each item;
``Written(MemoryEntry)`` a write's result, which answers 200 instead of 201 when it found the
same already stored.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol


class Dictionary(Protocol):
    """A result type that travels as a JSON object."""

    def to_dict(self) -> dict[str, Any]: ...


class Codec(Protocol):
    """An operation's answer both ways: the result as JSON, and back — and the HTTP status
    it answers with (the endpoint's, unless the result says otherwise)."""

    def encode(self, result: Any) -> Any: ...

    def decode(self, body: Any) -> Any: ...

    def status(self, result: Any, declared: int) -> int: ...


class _Declared:
    """The endpoint's status, whatever the result."""

    __slots__ = ()

    def status(self, result: Any, declared: int) -> int:
        return declared


@dataclass(frozen=True, slots=True)
class Whole(_Declared):
    """A result that is one object of its type."""

    kind: Any
    """A type with ``to_dict`` and a ``from_dict`` class method."""

    def encode(self, result: Dictionary) -> Any:
        return result.to_dict()

    def decode(self, body: Any) -> Any:
        return self.kind.from_dict(body)


@dataclass(frozen=True, slots=True)
class Written(Whole):
    """A write's result (an entry, a finding): the new one — or, 200, the one already there
    that states the same (``duplicate``)."""

    def encode(self, result: Any) -> Any:
        return {**result.to_dict(), "duplicate": result.duplicate}

    def status(self, result: Any, declared: int) -> int:
        return 200 if result.duplicate else declared


@dataclass(frozen=True, slots=True)
class Each(_Declared):
    """A result that is a list of objects of one type, under ``key``."""

    key: str
    kind: Any

    def encode(self, result: Any) -> Any:
        return {self.key: [item.to_dict() for item in result]}

    def decode(self, body: Any) -> list[Any]:
        return [self.kind.from_dict(item) for item in body[self.key]]


@dataclass(frozen=True, slots=True)
class Value(_Declared):
    """A result that is a plain JSON value (a count, a flag, a text), under ``key``."""

    key: str

    def encode(self, result: Any) -> Any:
        return {self.key: result}

    def decode(self, body: Any) -> Any:
        return body[self.key]


@dataclass(frozen=True, slots=True)
class Scored(_Declared):
    """A result that is a list of ``(item, score)``, under ``key``: each item's object with
    its ``score``."""

    key: str
    kind: Any

    def encode(self, result: Any) -> Any:
        return {self.key: [{"score": score, **item.to_dict()} for item, score in result]}

    def decode(self, body: Any) -> list[tuple[Any, float]]:
        return [(self.kind.from_dict(_without_score(h)), h["score"]) for h in body[self.key]]


def _without_score(hit: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in hit.items() if k != "score"}


@dataclass(frozen=True, slots=True)
class Custom(_Declared):
    """A result with a shape of its own (a pair, a file's bytes)."""

    encoder: Callable[[Any], Any]
    decoder: Callable[[Any], Any]

    def encode(self, result: Any) -> Any:
        return self.encoder(result)

    def decode(self, body: Any) -> Any:
        return self.decoder(body)


PLAIN = Custom(lambda result: result, lambda body: body)
"""A result that is JSON as it is."""
