"""Grants (pure): patterns, what each op reaches, and keys that carry them — a key that does
not parse refuses to start."""

from __future__ import annotations

from typing import Any

import pytest

from memvault.errors import ConfigError, ForbiddenError, InvalidScopeError
from memvault.server.auth import KeyRing
from memvault.store import ops
from memvault.store.grants import EVERYTHING, Grant, Pattern, reach
from memvault.types import Scope

KEY = "k" * 16


@pytest.mark.parametrize(
    ("pattern", "scope", "matches"),
    [
        ("*", "user:alice", True),
        ("user:*", "user:alice", True),
        ("user:*", "session:user", False),
        ("user:alice", "user:alice", True),
        ("user:alice", "user:alice2", False),
        ("user:alice", "user:ali", False),
        ("session:*", "session:s1", True),
        ("object:ticket:T-1", "object:ticket:T-1", True),
        ("object:*", "object:ticket:T-1", True),
    ],
)
def test_a_pattern_matches_its_scopes_only(pattern: str, scope: str, matches: bool) -> None:
    assert Pattern.parse(pattern).matches(scope) is matches


@pytest.mark.parametrize(
    "text", ["", "user", "nope:*", "user:", "*:*", "user:a|", "|", "user:*x", "object:ticket:*"]
)
def test_a_pattern_that_does_not_parse_is_refused(text: str) -> None:
    with pytest.raises(InvalidScopeError):
        Grant.of(read=text)


def test_neither_field_grants_everything_and_one_field_exactly_it() -> None:
    assert Grant.of() == EVERYTHING and not EVERYTHING.limited
    read_only = Grant.of(read="user:alice")
    assert read_only.limited and read_only.write == ()
    assert read_only.to_dict() == {"read": ["user:alice"], "write": []}


def _filter(*scopes: str, kinds: tuple[str, ...] = ()) -> ops.Filter:
    return ops.Filter("t", tuple(map(Scope.parse, scopes)) if scopes else None, scope_kinds=kinds)


@pytest.mark.parametrize(
    ("op", "allowed"),
    [
        (ops.ListOp(_filter("user:alice"), 10), True),
        (ops.ListOp(_filter("user:alice", "user:bob"), 10), False),
        (ops.ListOp(_filter(), 10), False),  # the whole tenant
        (ops.ListOp(_filter(kinds=("session",)), 10), True),  # every session: session:*
        (ops.ListOp(_filter(kinds=("session", "user")), 10), False),
        (ops.CountOp(_filter("session:s9")), True),
        (ops.DeleteScopeOp("t", Scope.parse("user:alice")), False),  # a change
        (ops.PurgeExpiredOp("t", None), False),  # type: ignore[arg-type]
        (ops.ReachOp("t", ("user:alice",)), True),
        (ops.ReachOp("t", ("user:alice",), changes=True), False),
        (ops.ReachOp("t", None), False),
    ],
)
def test_what_each_op_reaches_is_checked(op: Any, allowed: bool) -> None:
    grant = Grant.of(read="user:alice|session:*")
    if allowed:
        grant.check([op], changes=False)
    else:
        with pytest.raises(ForbiddenError):
            grant.check([op], changes=False)


def test_an_operation_that_changes_may_read_what_it_may_write() -> None:
    writer = Grant.of(write="user:alice")
    probe = ops.ListOp(_filter("user:alice"), 1)
    writer.check([probe], changes=True)
    with pytest.raises(ForbiddenError, match="does not allow to read user:alice"):
        writer.check([probe], changes=False)
    assert reach(probe).scopes == ("user:alice",)


def test_what_an_op_found_by_id_is_checked_after() -> None:
    grant = Grant.of(read="user:alice")
    entry = _entry("user:bob")
    with pytest.raises(ForbiddenError, match="read an entry named by id") as refused:
        grant.check_results([ops.GetOp("t", entry.id)], [entry], changes=False)
    assert "bob" not in str(refused.value)  # where it lies is not said
    removed = [ops.Removed(entry.id, "user:alice")]
    with pytest.raises(ForbiddenError, match="change an entry"):
        grant.check_results([ops.DeleteOp("t", entry.id)], [removed], changes=True)
    grant.check_results([ops.GetOp("t", "none")], [None], changes=False)  # nothing found


def _entry(scope: str) -> Any:
    from memvault import Memory
    from memvault.testing import HashEmbedder

    with Memory(":memory:", embedder=HashEmbedder()) as memory:
        return memory.write("something", scope=scope)


EVERY = {"read": None, "write": None}


@pytest.mark.parametrize(
    ("setting", "name", "grant"),
    [
        (f"t:{KEY}", "key-1", EVERY),
        (f"t:{KEY} bot", "bot", EVERY),
        (f"t:{KEY} read=user:alice", "key-1", {"read": ["user:alice"], "write": []}),
        (f"t:{KEY} my bot write=session:*|user:a", "my bot", {"read": [], "write": ["session:*",
                                                                                "user:a"]}),
        (f"t:{KEY} bot read=* write=user:a", "bot", {"read": ["*"], "write": ["user:a"]}),
    ],
)  # fmt: skip
def test_a_key_carries_its_name_and_grant(setting: str, name: str, grant: dict[str, Any]) -> None:
    (key,) = KeyRing.parse(setting).keys
    assert (key.name, key.grant.to_dict()) == (name, grant)


@pytest.mark.parametrize(
    "setting",
    [
        f"t:{KEY} read=user:alice read=user:bob",  # a field twice
        f"t:{KEY} admin=yes",  # an unknown field
        f"t:{KEY} read=",  # no pattern
        f"t:{KEY} read=team:*",  # an unknown kind
        f"t:{KEY} write=user:alice||user:bob",
        f"t:{KEY} agent read:user:alice",  # a mistyped grant, not a name
        f"t:{KEY} read=user:alice | session:s1",  # spaces in a field
        f"t:{KEY} read=user:alice,session:{KEY}",  # ',' starts a key of tenant "session"
    ],
)
def test_a_key_whose_grant_does_not_parse_refuses_to_start(setting: str) -> None:
    with pytest.raises(ConfigError):
        KeyRing.parse(setting)
