"""The JSON schema structured output asks for: what the parser reads, in a form every server's
grammar engine compiles (OpenAI's strict mode included)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from memvault.extraction import schema
from memvault.extraction.facts import Candidate, FactCategory
from memvault.extraction.parse import parse_reply
from memvault.llm.openai_compat import response_format

UNSUPPORTED_SOMEWHERE = {"pattern", "format", "minLength", "maxLength", "minItems", "maxItems"}
"""Keywords some server refuses (vLLM's xgrammar) or may not compile (llama.cpp's grammar)."""


def _objects(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _objects(value)
    elif isinstance(node, list):
        for value in node:
            yield from _objects(value)


def test_the_reply_is_a_list_of_facts_with_the_keys_the_parser_reads() -> None:
    reply = schema.facts_schema().schema
    fact = reply["properties"]["facts"]["items"]
    assert reply["required"] == ["facts"]
    assert tuple(fact["properties"]) == schema.KEYS == tuple(fact["required"])
    assert fact["properties"]["category"]["enum"] == [str(c) for c in FactCategory]
    assert fact["properties"]["turn"] == {"type": "integer"}
    assert fact["properties"]["replaces"] == {"type": "array", "items": {"type": "string"}}


def test_it_is_strict_and_uses_only_what_every_engine_compiles() -> None:
    reply = schema.facts_schema().schema
    for node in _objects(reply):
        assert not UNSUPPORTED_SOMEWHERE & set(node)
        assert isinstance(node.get("type", ""), str) and node.get("type") != "null"
        if node.get("type") == "object":
            assert node["additionalProperties"] is False
            assert set(node["required"]) == set(node["properties"])


def test_each_call_is_a_fresh_copy() -> None:
    first = schema.facts_schema()
    first.schema["properties"]["facts"]["items"]["properties"].clear()
    assert schema.facts_schema().schema["properties"]["facts"]["items"]["properties"]


def test_it_is_sent_in_the_openai_form() -> None:
    sent = response_format(schema.facts_schema())
    assert sent == {
        "type": "json_schema",
        "json_schema": {
            "name": "memvault_facts",
            "strict": True,
            "schema": sent["json_schema"]["schema"],
        },
    }
    assert sent["json_schema"]["schema"] == schema.facts_schema().schema
    json.dumps(sent)  # serialisable as is


_FACT = st.fixed_dictionaries(
    {
        "category": st.sampled_from([str(c) for c in FactCategory]),
        "turn": st.integers(1, 4),
        "fact": st.sampled_from(["The user prefers tea.", "The user lives in Graz."]),
        "native": st.sampled_from(["", "Ich wohne in Graz."]),
        "replaces": st.lists(st.sampled_from(["M1", "M2"]), max_size=2, unique=True),
        "reason": st.sampled_from(["", "the user moved"]),
    }
)


@given(st.lists(_FACT, max_size=3, unique_by=lambda f: f["fact"]))
def test_every_reply_that_follows_it_parses_whole(facts: list[dict[str, Any]]) -> None:
    parsed = parse_reply(json.dumps({"facts": facts}), window=4, structured=True)
    assert parsed.rejected == () and parsed.failure is None
    assert list(parsed.candidates) == [
        Candidate(
            f["category"],
            f["fact"],
            native=f["native"] or None,
            turn=f["turn"],
            replaces=tuple(f["replaces"]),
            reason=f["reason"] or None,
        )
        for f in facts
    ]
