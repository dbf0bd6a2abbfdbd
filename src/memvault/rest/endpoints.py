"""An endpoint of the REST API as a value (pure): its method, path and fields.

Each operation's endpoint is declared once, with the operation, in the catalogue
(:mod:`memvault.api`): the server reads requests with its fields, the client writes them with
the same fields, and the OpenAPI document is built from them, so they cannot drift apart.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import quote

from ..patterns import lazy
from .fields import (
    Field,
)

IDEMPOTENT_METHODS = frozenset({"GET", "PUT", "DELETE"})
_PARAMETER = lazy(r"{(\w+)(?::\w+)?}")


@dataclass(frozen=True, slots=True, eq=False)
class Endpoint:
    """One route of the API: what it accepts and what it answers (each one a value of its
    own: equal only to itself)."""

    method: str
    path: str
    """With ``{parameters}`` (``{name:path}`` may hold slashes)."""
    body: Mapping[str, Field] | None = None
    """Fields of the JSON body (None: the endpoint takes no body)."""
    query: Mapping[str, Field] | None = None
    """Fields of the query string."""
    required: tuple[str, ...] = ()
    status: int = 200
    answer: str = "the result"
    reads: bool = False
    """A POST that only reads: sending it again changes nothing."""

    @property
    def idempotent(self) -> bool:
        """Whether a client may send it again when the answer was lost."""
        return self.reads or self.method in IDEMPOTENT_METHODS

    @property
    def fields(self) -> Mapping[str, Field]:
        return self.body if self.body is not None else self.query or {}

    @property
    def parameters(self) -> tuple[str, ...]:
        """The path parameters, in order."""
        return tuple(_PARAMETER.findall(self.path))

    @property
    def template(self) -> str:
        """The path as OpenAPI writes it (``{scope}``, not ``{scope:path}``)."""
        return _PARAMETER.sub(r"{\1}", self.path)

    def url(self, values: Mapping[str, str]) -> str:
        """The path with each parameter's value, percent-encoded."""

        def value(match: re.Match[str]) -> str:
            text = values[match[1]]
            parts = text.split("/") if match[0].endswith(":path}") else [text]
            return "/".join(_segment(part) for part in parts)

        return _PARAMETER.sub(value, self.path)


def _segment(text: str) -> str:
    """One segment of a path, percent-encoded; ``.`` and ``..`` too, so that no client or proxy
    takes them for steps up the path (the server reads them back as they were)."""
    return text.replace(".", "%2E") if text in {".", ".."} else quote(text, safe=":")
