"""API keys: which tenant a request acts in, and what it may reach there (pure).

Keys are configured as ``tenant:key`` pairs (``MEMVAULT_API_KEYS``, comma-separated), each
optionally followed by a space and a name (the audit log's actor), then by the scopes it may
read and write: ``read=P1|P2`` and ``write=P1|P2``, each pattern a scope, ``kind:*`` or ``*``
(:mod:`memvault.store.grants`). A key with neither field reaches its whole tenant; with either,
exactly what its fields say. A request names its key as ``Authorization: Bearer <key>``; the
key, never the request, decides the tenant and the grant, so one client can never reach another
tenant's memories, nor more of its own tenant than its key grants.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from ..errors import ConfigError, InvalidScopeError
from ..rest.codec import AGENT_HEADER, Caller, header_safe
from ..store.grants import EVERYTHING, Grant
from ..types import ScopeKind

__all__ = ["AGENT_HEADER", "Key", "KeyRing", "actor_of", "agent_of"]


class _Viewed(Protocol):
    def with_tenant(self: M, tenant: str, /) -> M: ...
    def with_grant(self: M, grant: Grant, /) -> M: ...
    def as_actor(self: M, actor: str, /) -> M: ...


M = TypeVar("M", bound=_Viewed)

MIN_KEY_CHARS = 16
MAX_NAME_CHARS = 63
"""A key's name: with ``/`` and an agent's name (64) it is an actor (128)."""


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode()).digest()


@dataclass(frozen=True, slots=True)
class Key:
    """An accepted key: its digest, its tenant, its name (who the audit log says acted) and
    what it may read and write there."""

    digest: bytes = field(repr=False)
    tenant: str
    name: str
    grant: Grant = EVERYTHING

    def view(self, memory: M, agent: str | None) -> M:
        """``memory`` as a request of this key sees it: its tenant, its grant, acting as its
        name and ``agent``."""
        return (
            memory.with_tenant(self.tenant)
            .with_grant(self.grant)
            .as_actor(actor_of(self.name, agent))
        )


GRANT_FIELDS = ("read", "write")
GRANT_MARKS = (":", "|", "*")
"""What a key's name may not hold: a grant mistyped would otherwise name the key, which would
keep its whole tenant."""


def _grant_of(words: list[str], tenant: str) -> tuple[str, Grant]:
    """The name and the grant of a key from the words after it: ``read=…`` and ``write=…``
    (each once) are its grant, the other words its name."""
    fields: dict[str, str] = {}
    name = []
    for word in words:
        label, sep, value = word.partition("=")
        if not sep:
            if any(mark in word for mark in GRANT_MARKS):
                raise ConfigError(
                    f"an API key of tenant {tenant!r} has {word[:40]!r} in its name, which "
                    "looks like a grant: a key's fields are read=P1|P2 and write=P1|P2, "
                    "without spaces"
                )
            name.append(word)
            continue
        if label not in GRANT_FIELDS or label in fields:
            which = "a second" if label in fields else "an unknown"
            raise ConfigError(
                f"an API key of tenant {tenant!r} has {which} field {label!r}: a key takes at "
                "most one read=P1|P2 and one write=P1|P2 after its name"
            )
        fields[label] = value
    try:
        return " ".join(name), Grant.of(fields.get("read"), fields.get("write"))
    except InvalidScopeError as exc:
        raise ConfigError(f"the grant of an API key of tenant {tenant!r}: {exc}") from None


def _key_of(item: str, position: int) -> Key:
    """``tenant:key[ name][ read=…][ write=…]`` → a Key (named ``key-<position>`` in the
    setting when no name is given: it tells keys apart, and nothing of the key)."""
    tenant, sep, rest = item.partition(":")
    key, *words = rest.split() or [""]
    tenant = tenant.strip()
    if not sep or not tenant or not key:
        raise ConfigError("setting api_keys must be comma-separated tenant:key pairs")
    if tenant in set(ScopeKind):
        raise ConfigError(
            f"setting api_keys names a tenant {tenant!r}, a kind of scope: patterns are "
            "separated by '|', not ',' (which starts another key)"
        )
    name, grant = _grant_of(words, tenant)
    if len(key) < MIN_KEY_CHARS:
        raise ConfigError(
            f"the API key of tenant {tenant!r} is shorter than {MIN_KEY_CHARS} characters"
        )
    if not header_safe(key):
        raise ConfigError(
            f"the API key of tenant {tenant!r} holds a character an HTTP header cannot carry "
            "(a control character or non-ASCII)"
        )
    if name and (
        len(name) > MAX_NAME_CHARS or "/" in name or not header_safe(name.replace(" ", "_"))
    ):
        raise ConfigError(
            f"the name of an API key of tenant {tenant!r} must be at most {MAX_NAME_CHARS} "
            "printable ASCII characters without '/' (which separates the agent a request names)"
        )
    digest = _digest(key)
    return Key(digest, tenant, name or f"key-{position}", grant)


@dataclass(frozen=True, slots=True)
class KeyRing:
    """The accepted keys (as digests), each with its tenant and name; empty means no
    authentication."""

    keys: tuple[Key, ...] = ()

    @classmethod
    def parse(cls, text: str) -> KeyRing:
        """Read ``tenant:key[ name][,tenant:key[ name]…]``; keys must be unique and at least
        16 printable ASCII characters (no spaces: what follows a space names the key)."""
        items = filter(None, (part.strip() for part in text.split(",")))
        keys = tuple(_key_of(item, n) for n, item in enumerate(items, start=1))
        if len({key.digest for key in keys}) != len(keys):
            raise ConfigError("setting api_keys names the same key twice")
        if len({key.name for key in keys}) != len(keys):
            raise ConfigError("setting api_keys gives two keys the same name")
        return cls(keys)

    def served(self, default: str) -> list[str]:
        """The tenants the keys reach (each once), or ``default`` without keys."""
        return list(dict.fromkeys(key.tenant for key in self.keys)) or [default]

    @property
    def enabled(self) -> bool:
        return bool(self.keys)

    def key_for(self, authorization: str | None) -> Key | None:
        """The key a ``Bearer`` header names, or None when it names no known key."""
        scheme, _, key = (authorization or "").partition(" ")
        if scheme.lower() != "bearer":
            return None
        return self.lookup(key)

    def tenant_for(self, authorization: str | None) -> str | None:
        """The tenant of a ``Bearer`` header's key, or None when it names no known key."""
        found = self.key_for(authorization)
        return None if found is None else found.tenant

    def lookup(self, key: str) -> Key | None:
        """The known key ``key`` is, or None."""
        if not key.strip():
            return None
        digest = _digest(key.strip())
        found = None
        for known in self.keys:  # compare with every key: no early exit
            if hmac.compare_digest(known.digest, digest):
                found = known
        return found


def actor_of(name: str, agent: str | None) -> str:
    """The audit log's actor of a request: the key's name (or the server's actor, without
    keys), and the agent the request says it is after a ``/``."""
    return name if agent is None else f"{name}/{agent}"


def agent_of(header: str | None) -> str | None:
    """The agent a request names in its :data:`AGENT_HEADER` (None: none); ValidationError if
    it is not 1-64 printable ASCII characters."""
    return Caller.checked_agent(header, f"header {AGENT_HEADER}")
