"""The REST server's pure parts: API keys, request fields (memvault.rest.fields), loopback
detection."""

from dataclasses import replace
from datetime import timedelta

import pytest

from memvault.cli.serve import is_loopback
from memvault.errors import ConfigError, ValidationError
from memvault.rest.fields import (
    FLAG,
    INTEGER,
    SECONDS,
    TAG_PARAM,
    TEXT,
    TIMESTAMP,
    fields,
    query_fields,
)
from memvault.server.auth import KeyRing

KEY = "k" * 16


def test_keys_map_to_tenants() -> None:
    ring = KeyRing.parse(f" acme:{KEY} , globex:{'g' * 20},")
    assert ring.enabled and not KeyRing.parse("").enabled
    assert ring.tenant_for(f"Bearer {KEY}") == "acme"
    assert ring.tenant_for(f"bearer {'g' * 20}") == "globex"
    for header in (None, "", KEY, f"Basic {KEY}", "Bearer ", f"Bearer {KEY}x"):
        assert ring.tenant_for(header) is None
    assert KEY not in repr(ring)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("acme", "tenant:key"),
        (f":{KEY}", "tenant:key"),
        ("acme:", "tenant:key"),
        ("acme:short", "shorter than 16"),
        (f"acme:{KEY},globex:{KEY}", "same key twice"),
    ],
)
def test_bad_key_settings_are_refused(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        KeyRing.parse(text)


def test_fields_refuse_unknown_and_missing_and_convert() -> None:
    accepted = {
        "when": TIMESTAMP,
        "ttl": SECONDS,
        "on": FLAG,
        "name": TEXT,
        "n": INTEGER,
        "clear": replace(TIMESTAMP, nullable=True),
    }
    got = fields(
        {"when": "2026-01-01T00:00:00Z", "ttl": 5, "on": "true", "name": None, "clear": None},
        accepted,
    )
    assert got["when"].year == 2026 and got["ttl"] == timedelta(seconds=5) and got["on"] is True
    assert "name" not in got and got["clear"] is None  # null: not given, unless nullable
    for bad, message in (
        ({"name": 3}, "JSON type string"),
        ({"n": True}, "integer"),
        ({"n": "x"}, "integer"),
    ):
        with pytest.raises(ValidationError, match=message):
            fields(bad, accepted)
    with pytest.raises(ValidationError, match="unknown field"):
        fields({"nme": 1}, accepted)
    with pytest.raises(ValidationError, match="missing required field"):
        fields({"name": None}, accepted, required=("name",))
    with pytest.raises(ValidationError, match="needs a timezone"):
        fields({"when": "2026-01-01T00:00:00"}, accepted)
    with pytest.raises(ValidationError, match="true or false"):
        fields({"on": "maybe"}, accepted)
    with pytest.raises(ValidationError, match="positive number"):
        fields({"ttl": True}, accepted)


def test_query_fields_allow_repeats_only_for_lists() -> None:
    accepted = {"tag": TAG_PARAM, "scope": TEXT, "limit": INTEGER}
    got = query_fields({"tag": ["a", "b"], "scope": ["user:x"], "limit": ["5"]}, accepted)
    assert got == {"tags": ["a", "b"], "scope": "user:x", "limit": 5}
    with pytest.raises(ValidationError, match="more than once"):
        query_fields({"scope": ["user:x", "user:y"]}, accepted)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("10.0.0.5", False),
        ("example.com", False),
    ],
)
def test_loopback_detection(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
