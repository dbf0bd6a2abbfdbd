"""The OpenAPI document matches the routes, and no request shape makes the server fail (5xx):
typed and arbitrary JSON, lone surrogates (``"\\ud800"``) in every string, NaN and Infinity
literals, deep nesting, wrong content types, foreign Origin and Host."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote, urlencode

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memvault.server.app import ROUTES
from memvault.server.routes import Route

from .conftest import Client

SURROGATE = st.characters(categories=["Cs"])
"""Lone surrogates: json.dumps sends them as ``\\ud800`` escapes, which JSON parsers accept."""
TEXT = st.text(st.characters() | SURROGATE, max_size=30)
FLOAT = st.floats(allow_nan=False, allow_infinity=False) | st.floats()
"""Mostly finite; json.dumps sends the others as NaN/Infinity literals (not JSON: refused)."""
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | FLOAT | TEXT,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(TEXT.map(lambda t: t[:8]), inner, max_size=4)
    ),
    max_leaves=12,
)
PATH_VALUE = st.sampled_from(["s1", "user:alice", "01ABC", "x" * 200, "ü", "a b", "%2F"])
WORDS = st.sampled_from(
    [
        "user:alice",
        "session:s1",
        "object:doc:1",
        "fact",
        "user",
        "UTC",
        "2026-01-01T00:00:00Z",
        "rrf",
        "oldest",
        "preference",
    ]
)
BY_TYPE = {
    "string": WORDS | TEXT,
    "integer": st.integers(-5, 10**6) | st.integers(),
    "number": FLOAT | st.integers(-5, 10**6),
    "boolean": st.booleans(),
    "array": st.lists(WORDS | TEXT, max_size=3),
    "object": st.dictionaries(TEXT, JSON, max_size=3),
}


def route_id(route: Route) -> str:
    return f"{route.method} {route.path}"


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
    listed = {(method.upper(), path) for path, item in document["paths"].items() for method in item}
    expected = {(r.method, re.sub(r"{(\w+)(?::\w+)?}", r"{\1}", r.path)) for r in ROUTES}
    assert listed == expected
    write = document["paths"]["/v1/memories"]["post"]["requestBody"]["content"]
    schema = write["application/json"]["schema"]
    assert schema["required"] == ["content", "scope"] and not schema["additionalProperties"]
    assert schema["properties"]["ttl"]["anyOf"][0] == {"type": "number", "exclusiveMinimum": 0}


@pytest.mark.slow
@pytest.mark.parametrize("route", ROUTES, ids=route_id)
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
            query = {k: str(v)[:20] for k, v in body.items()}
            url += "?" + urlencode(query, errors="surrogatepass")  # bad UTF-8 for surrogates
        status, answer = api(route.method, url, body if route.body is not None else None)
        assert status < 500, answer

    check()


# Deterministic matrices: every route, every field, every class of hostile input.

BODY_ROUTES = [r for r in ROUTES if r.body is not None]
PLAUSIBLE: dict[str, Any] = {
    "content": "Grace likes green tea",
    "scope": "user:alice",
    "to": "user:bob",
    "query": "green tea",
    "fact": "User prefers Go",
    "role": "user",
    "user_id": "alice",
    "budget": 200,
    "items": [{"content": "Grace likes black tea", "scope": "user:alice"}],
}
NON_FINITE = ["NaN", "Infinity", "-Infinity", "1e999", "-1e999"]
FORBIDDEN = [
    ({"Origin": "https://evil.example"}, 403),
    ({"Sec-Fetch-Site": "cross-site"}, 403),
    ({"Sec-Fetch-Site": "same-site"}, 403),
    ({"Origin": "null"}, 403),
    ({"Host": "rebind.evil.example"}, 421),
]
NOT_JSON = [
    None,
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data",
    "application/json; charset=utf-16",
    "application/xml",
]


@pytest.fixture(scope="module")
def existing(api: Client) -> dict[str, str]:
    """Path parameters that name things that exist, so requests reach the operations."""
    status, session = api("POST", "/v1/sessions", {"user_id": "alice"})
    assert status == 201, session
    api("PATCH", f"/v1/sessions/{session['id']}", {"has_data": True})
    status, entry = api(
        "POST",
        "/v1/memories",
        {"content": "Maya is allergic to peanuts", "scope": f"session:{session['id']}"},
    )
    assert status == 201, entry
    return {
        "session_id": session["id"],
        "entry_id": entry["id"],
        "user_id": "alice",
        "scope": "user:alice",
    }


def url(route: Route, path: dict[str, str]) -> str:
    return re.sub(r"{(\w+)(?::\w+)?}", lambda m: quote(path[m[1]], safe=":%"), route.path)


def required(route: Route) -> dict[str, Any]:
    return {name: PLAUSIBLE.get(name, "x") for name in route.required}


def with_surrogates(kind: str) -> Any:
    """A value of JSON type ``kind`` holding lone surrogates (a string for the other types)."""
    return {"array": ["ok", "\ud800"], "object": {"\ud800": "\udfff", "k": ["a\udc00b"]}}.get(
        kind, "\ud800 x \udfff"
    )


def failures(api: Client, requests: Iterator[tuple[str, str, bytes, dict[str, Any]]]) -> list[str]:
    """Send each (method, url, raw body, headers); the answers that are not JSON errors < 500."""
    failed = []
    for method, target, raw, headers in requests:
        status, answer = api(method, target, raw=raw, headers=headers)
        if status >= 500 or (status >= 400 and not isinstance(answer, dict)):
            failed.append(f"{status} {method} {target} {raw[:80]!r} {headers}: {answer}")
    return failed


@pytest.mark.parametrize("route", ROUTES, ids=route_id)
def test_what_browsers_could_forge_is_refused_on_every_route(
    api: Client, existing: dict[str, str], route: Route
) -> None:
    target, raw = url(route, existing), json.dumps(required(route)).encode()
    body = raw if route.body is not None else None
    for headers, expected in FORBIDDEN:
        status, answer = api(route.method, target, raw=body, headers=headers)
        assert status == expected, (headers, answer)
    for content_type in NOT_JSON:
        sent: dict[str, str | None] = {"Content-Type": content_type}
        status, answer = api(route.method, target, raw=body, headers=sent)
        if route.body is not None:
            assert (status, answer["error"]["type"]) == (415, "UnsupportedMediaType")
        else:  # no body: the content type does not matter
            assert status < 500, answer
        status, answer = api(route.method, target, raw=b"{}", headers=sent)
        assert (status, answer["error"]["type"]) == (415, "UnsupportedMediaType")


@pytest.mark.parametrize("route", BODY_ROUTES, ids=route_id)
def test_bodies_that_are_not_strict_shallow_json_are_400(
    api: Client, existing: dict[str, str], route: Route
) -> None:
    target = url(route, existing)
    deep = ["[" * depth + "]" * depth for depth in (65, 1_000, 100_000)] + [
        '{"a":' * 70 + "1" + "}" * 70
    ]
    for name in [*(route.body or {}), "unexpected"]:
        for value, kind in [
            *((d, "NestingTooDeep") for d in deep),
            *((n, "InvalidJSON") for n in NON_FINITE),
        ]:
            others = {k: v for k, v in required(route).items() if k != name}
            fields = json.dumps(others)[1:-1]  # a key given twice is refused first
            raw = f'{{{fields}{", " if fields else ""}"{name}": {value}}}'.encode()
            status, answer = api(route.method, target, raw=raw)
            assert (status, answer["error"]["type"]) == (400, kind), (name, raw[:60])
    for value in (deep[1], "NaN", "[Infinity]"):
        status, answer = api(route.method, target, raw=value.encode())
        assert status == 400, answer


@pytest.mark.parametrize("route", BODY_ROUTES, ids=route_id)
def test_lone_surrogates_and_deep_values_in_every_field(
    api: Client, existing: dict[str, str], route: Route
) -> None:
    target = url(route, existing)

    def requests() -> Iterator[tuple[str, str, bytes, dict[str, Any]]]:
        for name, accepted in [*(route.body or {}).items(), ("\ud800", None)]:
            kind = accepted.schema.get("type", "string") if accepted else "string"
            values = [with_surrogates(kind)]
            if kind in ("array", "object"):  # under the edge's cap, maybe over the core's
                values += [json.loads("[" * depth + "]" * depth) for depth in (33, 63)]
            for value in values:
                body = {**required(route), name: value}
                yield route.method, target, json.dumps(body).encode(), {}

    assert failures(api, requests()) == []


@pytest.mark.parametrize("route", [r for r in ROUTES if r.body is None], ids=route_id)
def test_bad_utf8_and_surrogates_in_paths_and_queries(
    api: Client, existing: dict[str, str], route: Route
) -> None:
    bad = ["%ED%A0%80", "%F0%9F", "%FF", "a%00b"]

    def requests() -> Iterator[tuple[str, str, bytes, dict[str, Any]]]:
        for text in bad:
            yield route.method, url(route, dict.fromkeys(existing, text)), b"", {}
            for name in route.query or {}:
                target = f"{url(route, existing)}?{name}={text}"
                yield route.method, target, b"", {}

    assert failures(api, requests()) == []
