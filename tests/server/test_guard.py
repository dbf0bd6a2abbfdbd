"""The pure checks of the HTTP edge: Host, Origin, content type, strict and shallow JSON."""

from __future__ import annotations

import contextlib
import json
import time
from typing import Any

import pytest

from memvault.config import Settings
from memvault.errors import ConfigError
from memvault.server.guard import (
    Guard,
    access_rules,
    content_type_refusal,
    host_name,
    is_json,
    origin_of,
)
from memvault.server.request import HttpError, depth_over, parse_json

APP = "https://app.example.com"


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("localhost", "localhost"),
        ("LOCALHOST:8765", "localhost"),
        ("127.0.0.1:8765", "127.0.0.1"),
        ("[::1]:8765", "::1"),
        ("[0:0:0:0:0:0:0:1]", "::1"),
        ("::1", "::1"),
        ("api.example.com", "api.example.com"),
        ("rebind.evil.example:8765", "rebind.evil.example"),
        ("", None),
        ("a b", None),
        ("[nope]:1", None),
        ("host:port", None),
        ("user@host", None),
        ("x:123456", None),
    ],
)
def test_host_name(header: str, name: str | None) -> None:
    assert host_name(header) == name


@pytest.mark.parametrize(
    "host", ["localhost", "localhost:1", "127.0.0.1:8765", "127.9.9.9", "[::1]:80", None]
)
def test_loopback_hosts_and_no_host_pass_by_default(host: str | None) -> None:
    assert Guard.parse().host_refusal(host) is None


@pytest.mark.parametrize(
    "host",
    [
        "rebind.evil.example:8765",
        "localhost.evil.example",
        "0.0.0.0:8765",
        "10.0.0.5",
        "[::ffff:127.0.0.1]",
        "localhost.",
        "",
        "not a host",
    ],
)
def test_other_hosts_are_misdirected(host: str) -> None:
    refusal = Guard.parse().host_refusal(host)
    assert refusal is not None and refusal.status == 421
    assert refusal.kind == "MisdirectedRequest" and "MEMVAULT_ALLOWED_HOSTS" in refusal.message


def test_allowed_and_bound_hosts() -> None:
    guard = Guard.parse("API.example.com, 10.0.0.7", bound_host="myhost.lan")
    for host in ("api.example.com:443", "10.0.0.7:8765", "myhost.lan:8765", "localhost"):
        assert guard.host_refusal(host) is None, host
    assert guard.host_refusal("other.example.com") is not None
    assert guard.host_refusal("10.0.0.8") is not None
    assert Guard.parse("*").host_refusal("anything.example:1") is None


@pytest.mark.parametrize("wildcard", ["0.0.0.0", "::", "[::]"])
def test_a_server_bound_to_every_interface_answers_to_any_address_but_no_other_name(
    wildcard: str,
) -> None:
    guard = Guard.parse(bound_host=wildcard)
    assert guard.host_refusal("192.168.1.20:8765") is None
    assert guard.host_refusal("[fe80::1]:8765") is None
    assert guard.host_refusal("rebind.evil.example:8765") is not None


def test_a_specific_bound_address_is_a_name_of_the_server() -> None:
    guard = Guard.parse(bound_host="192.168.1.20")
    assert guard.host_refusal("192.168.1.20:8765") is None
    assert guard.host_refusal("192.168.1.21:8765") is not None


@pytest.mark.parametrize(
    ("origin", "fetch_site"),
    [(None, None), (None, "none"), (None, "same-origin"), (None, "None")],
)
def test_requests_not_from_another_site_pass(origin: str | None, fetch_site: str | None) -> None:
    assert Guard.parse().origin_refusal(origin, fetch_site) is None


@pytest.mark.parametrize(
    ("origin", "fetch_site"),
    [
        ("https://evil.example", None),
        ("https://evil.example", "cross-site"),
        ("http://localhost:3000", "same-site"),  # another app on localhost is "same-site"
        ("http://127.0.0.1:8765", "same-origin"),  # this server serves no web pages
        ("null", "cross-site"),
        (None, "cross-site"),
        (None, "same-site"),
        (None, "something-new"),
        (APP + ".evil.example", "cross-site"),
    ],
)
def test_requests_from_web_pages_are_forbidden(origin: str | None, fetch_site: str | None) -> None:
    for guard in (Guard.parse(), Guard.parse(allowed_origins=APP)):
        refusal = guard.origin_refusal(origin, fetch_site)
        assert refusal is not None and (refusal.status, refusal.kind) == (403, "ForbiddenOrigin")


@pytest.mark.parametrize("fetch_site", [None, "cross-site", "same-site", "same-origin"])
def test_allowed_origins_pass_and_get_cors(fetch_site: str | None) -> None:
    guard = Guard.parse(allowed_origins=f"{APP}, http://LOCALHOST:3000/")
    assert guard.origin_refusal(APP, fetch_site) is None
    assert guard.origin_refusal("http://localhost:3000", fetch_site) is None
    assert guard.allowed_origin(APP) == APP
    assert guard.allowed_origin("https://app.example.com:443") is not None
    assert guard.allowed_origin("http://app.example.com") is None
    assert Guard.parse().allowed_origin(APP) is None


def test_preflight_only_for_allowed_origins() -> None:
    guard = Guard.parse(allowed_origins=APP)
    asked = {"origin": APP, "access-control-request-method": "POST"}
    answer = guard.preflight("OPTIONS", asked)
    assert answer is not None and answer["access-control-allow-origin"] == APP
    assert "Content-Type" in answer["access-control-allow-headers"]
    assert "POST" in answer["access-control-allow-methods"]
    assert "access-control-allow-private-network" not in answer
    asked_private = {**asked, "access-control-request-private-network": "true"}
    private = guard.preflight("OPTIONS", asked_private)
    assert private is not None and private["access-control-allow-private-network"] == "true"
    assert guard.preflight("OPTIONS", {"origin": APP}) is None
    assert guard.preflight("GET", asked) is None
    assert Guard.parse().preflight("OPTIONS", asked) is None


@pytest.mark.parametrize(
    ("text", "origin"),
    [
        ("https://App.Example.com", APP),
        ("https://app.example.com:443/", APP),
        ("http://localhost:3000", "http://localhost:3000"),
        ("http://[::1]:3000", "http://[::1]:3000"),
        ("null", None),
        ("*", None),
        ("app.example.com", None),
        ("ftp://app.example.com", None),
        ("https://app.example.com/path", None),
        ("https://user@app.example.com", None),
        ("https://app.example.com:99999", None),
    ],
)
def test_origin_of(text: str, origin: str | None) -> None:
    assert origin_of(text) == origin


@pytest.mark.parametrize(
    ("hosts", "origins"),
    [
        ("", "*"),
        ("", "null"),
        ("", "app.example.com"),
        ("https://api.example.com", ""),
        ("a b", ""),
    ],
)
def test_bad_settings_are_config_errors(hosts: str, origins: str) -> None:
    with pytest.raises(ConfigError, match="setting allowed_"):
        Guard.parse(hosts, origins)


@pytest.mark.parametrize(
    ("content_type", "accepted"),
    [
        ("application/json", True),
        ("Application/JSON", True),
        ("application/json; charset=utf-8", True),
        ('application/json;charset="UTF-8"', True),
        ("application/merge-patch+json", True),
        ("application/vnd.api+json; charset=utf8", True),
        ("application/json; charset=latin-1", False),
        ("text/plain", False),
        ("text/plain; application/json", False),
        ("application/x-www-form-urlencoded", False),
        ("multipart/form-data; boundary=x", False),
        ("text/json", False),
        ("application/jsonx", False),
        ("", False),
    ],
)
def test_is_json(content_type: str, accepted: bool) -> None:
    assert is_json(content_type) is accepted


def test_content_type_rules() -> None:
    json_type = {"content-type": "application/json"}
    for method in ("POST", "PUT", "PATCH"):  # even without a body: a bodiless form POST
        refusal = content_type_refusal(method, {})
        assert refusal is not None and refusal[:2] == (415, "UnsupportedMediaType")
        assert content_type_refusal(method, {"content-type": "text/plain"}) is not None
        assert content_type_refusal(method, json_type) is None
    for method in ("GET", "DELETE", "HEAD", "OPTIONS"):  # without a body, any or none
        assert content_type_refusal(method, {}) is None
        assert content_type_refusal(method, {"content-length": "0"}) is None
        assert content_type_refusal(method, {"content-type": "text/plain"}) is None
        with_body = {"content-length": "2", "content-type": "text/plain"}
        assert content_type_refusal(method, with_body) is not None
        assert content_type_refusal(method, {"transfer-encoding": "chunked"}) is not None
        assert content_type_refusal(method, {"content-length": "2", **json_type}) is None


def test_refusal_checks_host_then_origin_then_content_type() -> None:
    guard = Guard.parse()
    everything = {"host": "evil.example", "origin": "https://evil.example"}
    assert [
        r.status
        for r in (
            guard.refusal("POST", everything),
            guard.refusal("POST", {**everything, "host": "localhost"}),
            guard.refusal("POST", {"host": "localhost"}),
        )
        if r
    ] == [421, 403, 415]
    assert guard.refusal("POST", {"host": "localhost", "content-type": "application/json"}) is None


def test_a_page_of_a_name_any_host_let_in_is_not_the_inspectors_own() -> None:
    """With ``*``, the Host (and so the page origin it gives) is whatever a rebound page
    says: its form posts are refused; a known name's own pages still post."""
    form = {"content-type": "application/x-www-form-urlencoded"}
    rebound = {**form, "host": "evil.example:8765", "origin": "http://evil.example:8765"}
    guard = Guard.parse("*")
    refused = guard.refusal("POST", rebound, own_origin="http://evil.example:8765")
    assert refused is not None and refused.status == 403
    own = {**form, "host": "127.0.0.1:8765", "origin": "http://127.0.0.1:8765"}
    assert guard.refusal("POST", own, own_origin="http://127.0.0.1:8765") is None
    listed = Guard.parse("*,memory.example")
    named = {**form, "host": "memory.example", "origin": "https://memory.example"}
    assert listed.refusal("POST", named, own_origin="https://memory.example") is None


@pytest.mark.parametrize(
    ("hosts", "keys", "anonymous", "refused"),
    [
        ("*", "", False, "DNS rebinding"),
        ("*", "acme:" + "k" * 16, False, None),
        ("*", "", True, None),
        ("memory.example", "", False, None),
    ],
)
def test_any_host_without_keys_is_refused(
    hosts: str, keys: str, anonymous: bool, refused: str | None
) -> None:
    settings = Settings(allowed_hosts=hosts, api_keys=keys)
    if refused is None:
        access_rules(settings, "127.0.0.1", anonymous)
    else:
        with pytest.raises(ConfigError, match=refused):
            access_rules(settings, "127.0.0.1", anonymous)


@pytest.mark.parametrize(
    ("body", "value"),
    [(b"", {}), (b'{"a": [1, 2.5, "\\ud800"]}', {"a": [1, 2.5, "\ud800"]}), (b"[]", [])],
)
def test_parse_json(body: bytes, value: Any) -> None:
    assert parse_json(body) == value


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b"NaN", "NaN is not a JSON number"),
        (b'{"x": Infinity}', "Infinity is not a JSON number"),
        (b'{"x": [-Infinity]}', "-Infinity is not a JSON number"),
        (b'{"x": 1e400}', "1e400 is out of range"),
        (b'{"x": -1.5e999}', "out of range"),
        (b"1" * 5000, "digits"),
        (b"\xff{}", "utf-8"),
        (b"\xef\xbb\xbf{}", "BOM"),
        (b"{not json", "Expecting"),
        (b"   ", "Expecting value"),
        (b'{"limit": 1, "limit": 1000}', "names the key 'limit' twice"),  # which was meant?
        (b'[{"a": {"b": 1, "b": 2}}]', "names the key 'b' twice"),
    ],
)
def test_parse_json_refuses_what_is_not_strict_json(body: bytes, says: str) -> None:
    with pytest.raises(HttpError, match=says) as caught:
        parse_json(body)
    assert (caught.value.status, caught.value.kind) == (400, "InvalidJSON")


def nested(depth: int, open_: str = "[", close: str = "]") -> bytes:
    return (open_ * depth + close * depth).encode()


@pytest.mark.parametrize(
    "body",
    [
        nested(65),
        nested(100_000),
        b'{"a":' * 65 + b"1" + b"}" * 65,
        nested(1_000),
        b'{"metadata": {"k": ' + nested(64) + b"}}",
        b"[" + b'"[[[[",' * 100 + nested(65) + b"]",
    ],
)
def test_parse_json_caps_nesting(body: bytes) -> None:
    with pytest.raises(HttpError, match="over 64 deep") as caught:
        parse_json(body)
    assert (caught.value.status, caught.value.kind) == (400, "NestingTooDeep")


def test_parse_json_accepts_64_deep_and_brackets_in_strings() -> None:
    assert depth_over(parse_json(nested(64)), 64) is False
    assert parse_json(b'{"a": "' + b"[" * 10_000 + b'"}') == {"a": "[" * 10_000}
    wide = b"[" + b",".join([b"[[1]]"] * 100_000) + b"]"
    assert len(parse_json(wide)) == 100_000


def test_depth_over() -> None:
    assert not depth_over(1, 0) and not depth_over([], 1) and depth_over([], 0)
    assert depth_over({"a": [{"b": []}]}, 3) and not depth_over({"a": [{"b": []}]}, 4)


@pytest.mark.slow
def test_depth_checks_cost_less_than_parsing_a_16_mb_body() -> None:
    deep = nested(8 * 1024 * 1024)  # 16 MiB of brackets
    wide = b"[" + b"[[[]]]," * (16 * 1024 * 1024 // 7) + b"[]]"  # 9.6 million lists, 4 deep
    for body in (deep, wide):
        started = time.perf_counter()
        with contextlib.suppress(RecursionError):
            json.loads(body)
        parsing = time.perf_counter() - started
        started = time.perf_counter()
        with contextlib.suppress(HttpError):
            parse_json(body)
        assert time.perf_counter() - started < 3 * parsing + 1
