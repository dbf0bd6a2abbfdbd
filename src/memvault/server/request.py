"""Reading requests: the JSON body (size-limited) and the query string."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request


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
    try:
        return json.loads(body or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise HttpError(400, "InvalidJSON", f"the request body is not valid JSON: {exc}") from None


def request_query(request: Request) -> dict[str, list[str]]:
    """The query string, every parameter with all its values."""
    params: dict[str, list[str]] = {}
    for key, value in request.query_params.multi_items():
        params.setdefault(key, []).append(value)
    return params
