"""Scope hierarchy rules (pure): which promotions are allowed, which scopes a query covers.

Promotion only goes narrow → broad (seed 003 §11)::

    session   → user, workspace, org, object
    user      → workspace, org
    workspace → org
    object    → user, workspace, org   (object scope is lateral, not strictly nested)
    org       → (nothing)
"""

from __future__ import annotations

from .errors import InvalidScopePromotionError, ValidationError
from .types import Scope, ScopeKind

_K = ScopeKind
PROMOTION_TARGETS: dict[ScopeKind, frozenset[ScopeKind]] = {
    _K.SESSION: frozenset({_K.USER, _K.WORKSPACE, _K.ORG, _K.OBJECT}),
    _K.USER: frozenset({_K.WORKSPACE, _K.ORG}),
    _K.WORKSPACE: frozenset({_K.ORG}),
    _K.OBJECT: frozenset({_K.USER, _K.WORKSPACE, _K.ORG}),
    _K.ORG: frozenset(),
}


def check_promotion(source: Scope, target: Scope) -> None:
    """Raise InvalidScopePromotionError unless ``source → target`` goes narrow → broad."""
    allowed = PROMOTION_TARGETS[source.kind]
    if target.kind not in allowed:
        into = ", ".join(sorted(allowed)) or "nothing (org is the broadest scope)"
        raise InvalidScopePromotionError(
            f"cannot promote from {source} to {target}: a {source.kind} entry can only be "
            f"promoted to {into}"
        )


def expand_scopes(
    scope: Scope, *, include_narrower: bool = False, session_id: str | None = None
) -> tuple[Scope, ...]:
    """The scopes a retrieval covers.

    Narrower scopes are opt-in. A user scope includes one session only when that session is
    named explicitly (``session_id``): there is no implicit session discovery. Workspace, org and
    object scopes include nothing narrower.
    """
    if session_id is not None and not include_narrower:
        raise ValidationError("session_id only applies together with include_narrower=True")
    if not include_narrower or scope.kind is not ScopeKind.USER:
        if session_id is not None:
            raise ValidationError("session_id only widens a user-scope query")
        return (scope,)
    if session_id is None:
        raise ValidationError(
            "include_narrower on a user scope needs an explicit session_id; "
            "memvault never discovers sessions implicitly"
        )
    return (scope, Scope.session(session_id))
