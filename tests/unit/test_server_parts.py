"""The REST server's pure parts: API keys, request fields (memvault.rest.fields), loopback
detection."""

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from memvault.errors import ConfigError, ValidationError
from memvault.rest.fields import (
    FLAG,
    INTEGER,
    INTEGERS,
    NUMBER,
    SECONDS,
    TAG_PARAM,
    TEXT,
    TEXTS,
    TIMESTAMP,
    fields,
    from_query,
    query_fields,
)
from memvault.server.auth import KeyRing, actor_of, agent_of
from memvault.server.guard import is_loopback

KEY = "k" * 16


def test_keys_map_to_tenants() -> None:
    ring = KeyRing.parse(f" acme:{KEY} , globex:{'g' * 20},")
    assert ring.enabled and not KeyRing.parse("").enabled
    assert ring.tenant_for(f"Bearer {KEY}") == "acme"
    assert ring.tenant_for(f"bearer {'g' * 20}") == "globex"
    for header in (None, "", KEY, f"Basic {KEY}", "Bearer ", f"Bearer {KEY}x"):
        assert ring.tenant_for(header) is None
    assert KEY not in repr(ring)


def test_keys_have_names_the_audit_log_shows() -> None:
    ring = KeyRing.parse(f"acme:{KEY} support bot, acme:{'g' * 20}")
    named, unnamed = (ring.key_for(f"Bearer {k}") for k in (KEY, "g" * 20))
    assert named is not None and named.name == "support bot" and named.tenant == "acme"
    assert unnamed is not None and unnamed.name == "key-2"  # its place in the setting
    assert ring.served("default") == ["acme"]
    assert actor_of("support bot", None) == "support bot"
    assert actor_of("support bot", "triage") == "support bot/triage"
    assert agent_of(None) is None and agent_of(" triage ") == "triage"
    for bad in ("", " ", "x" * 65, "caf\u00e9", "a\x00b"):
        with pytest.raises(ValidationError):
            agent_of(bad)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("acme", "tenant:key"),
        (f":{KEY}", "tenant:key"),
        ("acme:", "tenant:key"),
        ("acme:short", "shorter than 16"),
        (f"acme:{KEY},globex:{KEY}", "same key twice"),
        (f"acme:{KEY} bot,globex:{'g' * 16} bot", "the same name"),
        (f"acme:{KEY} {'n' * 64}", "name of an API key"),
        (f"acme:{KEY} planner/admin", "without '/'"),
        (f"acme:{KEY} caf\u00e9", "name of an API key"),
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
        {"when": "2026-01-01T00:00:00Z", "ttl": 5, "on": True, "name": None, "clear": None},
        accepted,
    )
    assert got["when"].year == 2026 and got["ttl"] == timedelta(seconds=5) and got["on"] is True
    assert "name" not in got and got["clear"] is None  # null: not given, unless nullable
    for bad, message in (
        ({"name": 3}, "JSON type string"),
        ({"n": True}, "integer"),
        ({"n": "x"}, "integer"),
        ({"n": "5"}, "integer"),  # a JSON body says what type it means: "5" is no integer
        ({"on": "true"}, "boolean"),
    ):
        with pytest.raises(ValidationError, match=message):
            fields(bad, accepted)
    with pytest.raises(ValidationError, match="unknown field"):
        fields({"nme": 1}, accepted)
    with pytest.raises(ValidationError, match="missing required field"):
        fields({"name": None}, accepted, required=("name",))
    with pytest.raises(ValidationError, match="needs a timezone"):
        fields({"when": "2026-01-01T00:00:00"}, accepted)
    with pytest.raises(ValidationError, match="JSON type boolean"):
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


@pytest.mark.parametrize(
    ("field", "text", "value"),
    [
        (FLAG, "true", True),
        (FLAG, "0", False),
        (INTEGER, "30", 30),
        (INTEGER, "-2", -2),
        (INTEGER, "3_0", "3_0"),  # what int() would read, a query string does not say
        (INTEGER, " 3", " 3"),
        (INTEGER, "\uff13", "\uff13"),  # a full-width digit
        (INTEGER, "\u0663", "\u0663"),  # an Arabic-Indic digit
        (INTEGER, "9" * 19, "9" * 19),
        (NUMBER, "0.5", 0.5),
        (NUMBER, "1e400", "1e400"),  # not finite
        (TEXT, "30", "30"),
    ],
)
def test_a_query_string_value_is_read_by_its_fields_type(field: Any, text: str, value: Any) -> None:
    assert from_query(field, text) == value


def test_query_fields_refuse_what_is_not_of_the_fields_type() -> None:
    accepted = {"limit": INTEGER, "on": FLAG}
    assert query_fields({"limit": ["30"], "on": ["1"]}, accepted) == {"limit": 30, "on": True}
    for bad in ({"limit": ["3_0"]}, {"limit": ["\uff13"]}, {"on": ["yes"]}):
        with pytest.raises(ValidationError, match="JSON type"):
            query_fields(bad, accepted)


def test_array_fields_check_their_items() -> None:
    assert fields({"n": [1, 2], "t": ["a"]}, {"n": INTEGERS, "t": TEXTS}) == {
        "n": [1, 2],
        "t": ["a"],
    }
    for bad, says in (
        ({"n": [True, True]}, r"n\[0\] must be of JSON type integer, got bool"),
        ({"n": [1, 1.0]}, r"n\[1\] must be of JSON type integer, got float"),
        ({"t": ["a", 3]}, r"t\[1\] must be of JSON type string"),
    ):
        with pytest.raises(ValidationError, match=says):
            fields(bad, {"n": INTEGERS, "t": TEXTS})
