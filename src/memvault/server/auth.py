"""API keys: which tenant a request acts in (pure).

Keys are configured as ``tenant:key`` pairs (``MEMVAULT_API_KEYS``, comma-separated). A request
names its key as ``Authorization: Bearer <key>``; the key, never the request, decides the
tenant, so one client can never reach another tenant's memories.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

from ..errors import ConfigError
from ..rest.codec import header_safe

MIN_KEY_CHARS = 16


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode()).digest()


@dataclass(frozen=True, slots=True)
class KeyRing:
    """The accepted keys (as digests) and the tenant of each; empty means no authentication."""

    tenants: tuple[tuple[bytes, str], ...] = ()

    @classmethod
    def parse(cls, text: str) -> KeyRing:
        """Read ``tenant:key[,tenant:key…]``; keys must be unique and at least 16 characters."""
        pairs = []
        for item in filter(None, (part.strip() for part in text.split(","))):
            tenant, sep, key = item.partition(":")
            if not sep or not tenant.strip() or not key.strip():
                raise ConfigError("setting api_keys must be comma-separated tenant:key pairs")
            if len(key.strip()) < MIN_KEY_CHARS:
                raise ConfigError(
                    f"the API key of tenant {tenant.strip()!r} is shorter than "
                    f"{MIN_KEY_CHARS} characters"
                )
            if not header_safe(key.strip()):
                raise ConfigError(
                    f"the API key of tenant {tenant.strip()!r} holds a character an HTTP "
                    "header cannot carry (a space, a control character or non-ASCII)"
                )
            pairs.append((_digest(key.strip()), tenant.strip()))
        if len({digest for digest, _ in pairs}) != len(pairs):
            raise ConfigError("setting api_keys names the same key twice")
        return cls(tuple(pairs))

    def served(self, default: str) -> list[str]:
        """The tenants the keys reach (each once), or ``default`` without keys."""
        return list(dict.fromkeys(tenant for _, tenant in self.tenants)) or [default]

    @property
    def enabled(self) -> bool:
        return bool(self.tenants)

    def tenant_for(self, authorization: str | None) -> str | None:
        """The tenant of a ``Bearer`` header's key, or None when it names no known key."""
        scheme, _, key = (authorization or "").partition(" ")
        if scheme.lower() != "bearer":
            return None
        found = self.lookup(key)
        return None if found is None else found[1]

    def lookup(self, key: str) -> tuple[bytes, str] | None:
        """The digest and tenant of ``key``, or None when it is no known key."""
        if not key.strip():
            return None
        digest = _digest(key.strip())
        found = None
        for known, tenant in self.tenants:  # compare with every key: no early exit
            if hmac.compare_digest(known, digest):
                found = (known, tenant)
        return found
