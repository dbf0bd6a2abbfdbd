"""The OpenAPI document matches the routes, and no request shape makes the server fail (5xx)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, urlencode

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memvault.server.app import ROUTES

from .conftest import Client

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.floats(allow_nan=False)
    | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=12,
)  # fmt: skip
PATH_VALUE = st.sampled_from(["s1", "user:alice", "01ABC", "x" * 200, "ü", "a b", "%2F"])
WORDS = st.sampled_from(["user:alice", "session:s1", "object:doc:1", "fact", "user", "UTC",
                         "2026-01-01T00:00:00Z", "rrf", "oldest", "preference"])  # fmt: skip
BY_TYPE = {
    "string": WORDS | st.text(max_size=20),
    "integer": st.integers(-5, 10**6) | st.integers(),
    "number": st.floats(allow_nan=False) | st.integers(-5, 10**6),
    "boolean": st.booleans(),
    "array": st.lists(WORDS | st.text(max_size=10), max_size=3),
    "object": st.dictionaries(st.text(max_size=8), JSON, max_size=3),
}


def typed_bodies(accepted: dict[str, Any], required: tuple[str, ...]) -> Any:
    """Bodies whose fields have the declared JSON types (values still arbitrary)."""
    value = {name: BY_TYPE[f.schema.get("type", "string")] for name, f in accepted.items()}
    optional = {k: v for k, v in value.items() if k not in required}
    return st.fixed_dictionaries({k: value[k] for k in required}, optional=optional)


@pytest.fixture(scope="module")
def api(start_module_server: Callable[..., Client]) -> Client:
    return start_module_server()


def test_the_openapi_document_lists_every_route(api: Client) -> None:
    status, document = api("GET", "/openapi.json")
    assert status == 200 and document["openapi"].startswith("3.1")
    listed = {(method.upper(), path) for path, item in document["paths"].items()
              for method in item}  # fmt: skip
    expected = {(r.method, re.sub(r"{(\w+)(?::\w+)?}", r"{\1}", r.path)) for r in ROUTES}
    assert listed == expected
    write = document["paths"]["/v1/memories"]["post"]["requestBody"]["content"]
    schema = write["application/json"]["schema"]
    assert schema["required"] == ["content", "scope"] and not schema["additionalProperties"]
    assert schema["properties"]["ttl"]["anyOf"][0] == {"type": "number", "exclusiveMinimum": 0}


@pytest.mark.parametrize("route", ROUTES, ids=lambda r: f"{r.method} {r.path}")
def test_no_request_makes_the_server_fail(api: Client, route: Any) -> None:
    names = [*(route.body or route.query or {}), "unexpected"]

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        path=st.fixed_dictionaries(dict.fromkeys(re.findall(r"{(\w+)", route.path), PATH_VALUE)),
        body=typed_bodies(route.body or route.query or {}, route.required)
        | st.dictionaries(st.sampled_from(names), JSON, max_size=5)
        | JSON,
    )
    def check(path: dict[str, str], body: Any) -> None:
        url = re.sub(r"{(\w+)(?::\w+)?}", lambda m: quote(path[m[1]], safe=":"), route.path)
        if route.query is not None and isinstance(body, dict):
            url += "?" + urlencode({k: str(v)[:20] for k, v in body.items()})
        status, answer = api(route.method, url, body if route.body is not None else None)
        assert status < 500, answer

    check()
