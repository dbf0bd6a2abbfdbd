"""The JSON schema of an extraction reply (pure): what structured output asks the server to
follow — ``{"facts": [...]}``, each fact with the keys :mod:`.parse` reads from a JSON answer.

Only what every server's grammar engine compiles: objects, arrays, strings, an integer and an
enum, every key required and no other (OpenAI's strict mode asks for both). No ``pattern``,
``format`` or length bounds: vLLM's xgrammar refuses some (HTTP 400), and llama.cpp's server
generates unconstrained when a schema's grammar fails to build. An absent value is ``""`` or
``[]``, not ``null``. The keys come in the order of the line format (llama.cpp writes them in
the order given).
"""

from __future__ import annotations

from typing import Any

from ..llm.base import ResponseSchema
from .facts import FactCategory

NAME = "memvault_facts"
KEYS = ("category", "turn", "fact", "native", "replaces", "reason")


def facts_schema() -> ResponseSchema:
    """The schema of an extraction reply (a fresh copy: the caller may keep it)."""
    reply = {
        "type": "object",
        "properties": {"facts": {"type": "array", "items": _fact()}},
        "required": ["facts"],
        "additionalProperties": False,
    }
    return ResponseSchema(NAME, reply)


def _fact() -> dict[str, Any]:
    properties: dict[str, Any] = {
        "category": {"type": "string", "enum": [str(c) for c in FactCategory]},
        "turn": {"type": "integer"},
        "fact": {"type": "string"},
        "native": {"type": "string"},
        "replaces": {"type": "array", "items": {"type": "string"}},
        "reason": {"type": "string"},
    }
    return {
        "type": "object",
        "properties": properties,
        "required": list(KEYS),
        "additionalProperties": False,
    }
