"""Reading requests: the JSON body (size-limited, strict JSON, depth-capped) and the query."""

from __future__ import annotations

import json
import math
from typing import Any, NoReturn

from starlette.requests import Request

MAX_JSON_DEPTH = 64
"""Deepest nesting of arrays and objects accepted in a request body (the core caps arguments
deeper still, at ``validation.MAX_DEPTH``); well below Python's recursion limit."""


_CONTAINERS = (list, dict)


class HttpError(Exception):
    """A refusal that is about HTTP itself (authentication, body size, JSON syntax)."""

    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status, self.kind = status, kind


async def read_json(request: Request) -> Any:
    """The request body as JSON, refused if larger than the configured limit."""
    limit: int = request.app.state.max_request_bytes
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise HttpError(413, "PayloadTooLarge", f"the request body is over {limit:,} bytes")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise HttpError(413, "PayloadTooLarge", f"the request body is over {limit:,} bytes")
    return parse_json(bytes(body))


def _no_constant(literal: str) -> NoReturn:
    raise ValueError(f"{literal} is not a JSON number (JSON has no NaN or Infinity)")


def _finite(literal: str) -> float:
    number = float(literal)
    if not math.isfinite(number):
        raise ValueError(f"the number {literal[:40]} is out of range")
    return number


def parse_json(body: bytes, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``body`` (UTF-8 JSON; empty means ``{}``) as a value, refused (400) unless it is strict
    JSON — no NaN or Infinity, no number that overflows, no key twice in an object — nested at
    most ``max_depth`` deep.

    Depth costs linear time, less than parsing: a body with no more than ``max_depth`` brackets
    needs no check; otherwise the parser's own recursion limit stops absurd depths early (its
    RecursionError unwinds cleanly) and a walk of the parsed value, level by level, enforces
    ``max_depth`` exactly.
    """
    try:
        value = json.loads(
            body.decode("utf-8") or "{}",
            parse_constant=_no_constant,
            parse_float=_finite,
            object_pairs_hook=_object,
        )
    except RecursionError:
        raise _too_deep(max_depth) from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, the int digit limit, ours
        raise HttpError(400, "InvalidJSON", f"the request body is not valid JSON: {exc}") from None
    if body.count(b"[") + body.count(b"{") > max_depth and depth_over(value, max_depth):
        raise _too_deep(max_depth)
    return value


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object; one that names a key twice is refused (which value was meant?)."""
    value = dict(pairs)
    if len(value) == len(pairs):
        return value
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise ValueError(f"an object names the key {key[:100]!r} twice")
        seen.add(key)
    raise AssertionError("unreachable")


def _too_deep(max_depth: int) -> HttpError:
    return HttpError(
        400, "NestingTooDeep", f"the request body nests arrays and objects over {max_depth} deep"
    )


def depth_over(value: Any, max_depth: int) -> bool:
    """Whether a parsed JSON ``value`` nests arrays and objects more than ``max_depth`` deep
    (``[]`` is 1 deep). Level by level, without recursion: each container is visited once."""
    level = [value] if type(value) in _CONTAINERS else []
    for _ in range(max_depth):
        if not level:
            return False
        level = [
            child
            for item in level
            for child in (item.values() if type(item) is dict else item)
            if type(child) in _CONTAINERS
        ]
    return bool(level)


def request_query(request: Request) -> dict[str, list[str]]:
    """The query string, every parameter with all its values."""
    params: dict[str, list[str]] = {}
    for key, value in request.query_params.multi_items():
        params.setdefault(key, []).append(value)
    return params
