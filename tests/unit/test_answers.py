"""An operation's answer travels with one codec both ways: what the server encodes is what the
client decodes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from memvault.agents.model import Execution
from memvault.api import CATALOGUE, agents, store, trust
from memvault.rest.answers import PLAIN, Each, Scored, Value, Whole
from memvault.server.app import ROUTES
from memvault.trust.bundles import BundleReport


@dataclass(frozen=True)
class _Point:
    x: int

    def to_dict(self) -> dict[str, Any]:
        return {"x": self.x}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> _Point:
        return cls(int(data["x"]))


@pytest.mark.parametrize(
    ("codec", "result", "body"),
    [
        (Whole(_Point), _Point(1), {"x": 1}),
        (Each("points", _Point), [_Point(1), _Point(2)], {"points": [{"x": 1}, {"x": 2}]}),
        (Value("deleted"), 3, {"deleted": 3}),
        (Scored("hits", _Point), [(_Point(1), 0.5)], {"hits": [{"score": 0.5, "x": 1}]}),
        (PLAIN, {"any": ["json"]}, {"any": ["json"]}),
    ],
)
def test_each_codec_encodes_what_it_decodes(codec: Any, result: Any, body: Any) -> None:
    assert codec.encode(result) == body
    assert codec.decode(body) == result


def test_a_bundle_travels_as_base64_with_its_report() -> None:
    report = BundleReport("S1", {"records": 2}, events=3, sha256="ab")
    body = trust.BUNDLED.encode((b"\x00\x01", report))
    assert body["bundle"] == "AAE="
    assert trust.BUNDLED.decode(body) == (b"\x00\x01", report)


def test_routes_of_forwarding_operations_are_derived_from_the_catalogue() -> None:
    """A route that only forwards has no handler of its own: it serves the operation's plan
    with the operation's codec, and names it in the OpenAPI document (agent memory has no
    handler module at all)."""
    derived = [operation for operation in CATALOGUE if operation.derived]
    served = {r.endpoint: r.handler for r in ROUTES if r.endpoint in {o.endpoint for o in derived}}
    assert len(served) == len(derived) == 53
    for operation in derived:
        handler = served[operation.sent_to]
        assert handler.__name__ == operation.name
        assert handler.__doc__ == operation.plan.__doc__
    assert agents.SEARCH_EXECUTIONS.answer == Scored("hits", Execution)


def test_a_write_that_found_its_twin_answers_200() -> None:
    written = store.WRITE.answer
    assert written.status(_Twin(duplicate=True), 201) == 200
    assert written.status(_Twin(duplicate=False), 201) == 201
    assert written.encode(_Twin(duplicate=True)) == {"x": 1, "duplicate": True}


@dataclass(frozen=True)
class _Twin:
    duplicate: bool

    def to_dict(self) -> dict[str, Any]:
        return {"x": 1}
