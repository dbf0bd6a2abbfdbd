import pytest

from memvault import (
    InvalidScopeError,
    InvalidScopePromotionError,
    Scope,
    ScopeKind,
    ValidationError,
)
from memvault.scopes import check_promotion, expand_scopes


@pytest.mark.parametrize(
    ("text", "scope"),
    [
        ("session:s1", Scope.session("s1")),
        ("user:alice", Scope.user("alice")),
        ("workspace:w", Scope.workspace("w")),
        ("org:acme", Scope.org("acme")),
        ("object:ticket:42", Scope.object("ticket", "42")),
        ("object:doc:a:b", Scope.object("doc", "a:b")),
        ("user:a:b", Scope.user("a:b")),
    ],
)
def test_parse_and_format_round_trip(text: str, scope: Scope) -> None:
    assert Scope.parse(text) == scope
    assert str(scope) == text
    assert Scope.coerce(text) == Scope.coerce(scope) == scope


@pytest.mark.parametrize(
    "text",
    [
        "",
        "user",
        "user:",
        ":x",
        "galaxy:x",
        "object:ticket",
        "object::1",
        "object:t:",
        " user:a",
        "user:a ",
        "user:a\nb",
        "user:" + "x" * 257,
    ],
)
def test_malformed_scopes_are_rejected(text: str) -> None:
    with pytest.raises(InvalidScopeError):
        Scope.parse(text)


def test_scope_rules_on_construction() -> None:
    with pytest.raises(InvalidScopeError):
        Scope(ScopeKind.USER, "a", object_type="t")
    with pytest.raises(InvalidScopeError):
        Scope.object("a:b", "1")
    with pytest.raises(InvalidScopeError):
        Scope.parse(42)  # type: ignore[arg-type]
    assert repr(Scope.user("a")) == "Scope('user:a')"


def test_scopes_are_hashable_values() -> None:
    assert {Scope.user("a"), Scope.parse("user:a")} == {Scope.user("a")}
    assert Scope.user("a") != Scope.org("a")


def test_promotion_goes_only_upward() -> None:
    check_promotion(Scope.session("s"), Scope.user("u"))
    check_promotion(Scope.object("t", "1"), Scope.org("o"))
    with pytest.raises(InvalidScopePromotionError, match="org is the broadest"):
        check_promotion(Scope.org("o"), Scope.user("u"))
    with pytest.raises(InvalidScopePromotionError):
        check_promotion(Scope.user("a"), Scope.user("b"))
    with pytest.raises(InvalidScopePromotionError):
        check_promotion(Scope.workspace("w"), Scope.object("t", "1"))


def test_expand_scopes() -> None:
    user = Scope.user("u")
    assert expand_scopes(user) == (user,)
    assert expand_scopes(user, include_narrower=True, session_id="s") == (user, Scope.session("s"))
    org = Scope.org("o")
    assert expand_scopes(org, include_narrower=True) == (org,)
    with pytest.raises(ValidationError):
        expand_scopes(user, include_narrower=True)
    with pytest.raises(ValidationError):
        expand_scopes(org, include_narrower=True, session_id="s")
