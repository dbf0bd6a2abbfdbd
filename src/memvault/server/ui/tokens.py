"""Inspector visits and CSRF tokens (pure): signed, expiring, bound to an API key.

A browser cannot send ``Authorization`` when it navigates, so the inspector trades a pasted API
key for a cookie holding a *visit*: a random nonce, an expiry and the key's id — an HMAC of the
key's digest under the server's secret, from which the key cannot be recovered — signed with
that secret. The tenant is not in the cookie: each request maps the key id back to the tenant
of the key ring, so a key removed from ``MEMVAULT_API_KEYS`` ends its visits at once. A visit's
CSRF token is another HMAC of its nonce; each login starts a visit with a fresh nonce.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field

from ...errors import ConfigError
from ..auth import Key

LIFETIME = 8 * 3600
"""Seconds a visit lasts (then the browser must log in again)."""
OPEN = ""
"""The key id of a visit to a server without keys (no login)."""
MIN_SECRET_CHARS = 32
MAX_REVOKED = 10_000
_VERSION = "v1"


@dataclass(frozen=True, slots=True)
class Visit:
    """One browser's stay in the inspector."""

    nonce: str
    expires: int
    """Unix time (s) when it ends."""
    key_id: str | None = None
    """The id of the key it logged in with, :data:`OPEN` without keys, None before login."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass(frozen=True, slots=True)
class Signer:
    """Seals visits into cookie values and derives their CSRF tokens, with one secret."""

    secret: bytes = field(repr=False)

    @classmethod
    def from_text(cls, text: str | None) -> Signer:
        """The secret ``text`` (at least 32 characters, shared by all workers of a server), or
        a random one when None."""
        if text is None:
            return cls(secrets.token_bytes(32))
        if len(text.strip()) < MIN_SECRET_CHARS:
            raise ConfigError(
                f"the inspector's secret must be at least {MIN_SECRET_CHARS} characters"
            )
        return cls(text.strip().encode())

    def _mac(self, purpose: str, data: bytes) -> bytes:
        return hmac.new(self.secret, purpose.encode() + b"\0" + data, hashlib.sha256).digest()

    def visit(self, now: float, key_id: str | None = None) -> Visit:
        """A new visit with a fresh nonce, lasting :data:`LIFETIME` from ``now``."""
        return Visit(secrets.token_hex(16), int(now) + LIFETIME, key_id)

    def seal(self, visit: Visit) -> str:
        """The cookie value of ``visit``: its fields and their signature."""
        payload = _b64(json.dumps([visit.nonce, visit.expires, visit.key_id]).encode())
        signed = f"{_VERSION}.{payload}"
        return f"{signed}.{_b64(self._mac('visit', signed.encode()))}"

    def open(self, value: str | None, now: float) -> Visit | None:
        """The visit sealed in ``value``, or None if it is forged, malformed or over."""
        signed, _, signature = (value or "").rpartition(".")
        if not signed.startswith(f"{_VERSION}.") or not _valid_mac(
            signature, self._mac("visit", signed.encode())
        ):
            return None
        try:
            nonce, expires, key_id = json.loads(_unb64(signed.partition(".")[2]))
        except (ValueError, TypeError, binascii.Error):
            return None
        if not (isinstance(nonce, str) and type(expires) is int and expires > now):
            return None
        return Visit(nonce, expires, key_id if isinstance(key_id, str) else None)

    def csrf(self, visit: Visit) -> str:
        """The token every form of ``visit`` carries."""
        return _b64(self._mac("csrf", visit.nonce.encode()))

    def csrf_ok(self, visit: Visit, token: str | None) -> bool:
        """Whether ``token`` is the CSRF token of ``visit`` (compared in constant time)."""
        return token is not None and hmac.compare_digest(self.csrf(visit), token)

    def key_id(self, digest: bytes) -> str:
        """The id of the key with this digest: not the key, nor its digest."""
        return _b64(self._mac("key", digest)[:16])

    def key(self, visit: Visit, keys: Iterable[Key]) -> Key | None:
        """The key ``visit`` logged in with (one of ``keys``), or None when that key is gone
        or the visit never logged in."""
        if not visit.key_id:
            return None
        found = None
        for key in keys:  # compare with every key: no early exit
            if hmac.compare_digest(self.key_id(key.digest), visit.key_id):
                found = key
        return found


def _valid_mac(text: str, expected: bytes) -> bool:
    try:
        return hmac.compare_digest(_unb64(text), expected)
    except (ValueError, binascii.Error):
        return False


@dataclass(slots=True)
class Revocations:
    """Nonces of visits that logged out before they expired (in this process). Past
    :data:`MAX_REVOKED`, those that would have expired anyway are forgotten, then the oldest."""

    ends: dict[str, int] = field(default_factory=dict)

    def revoke(self, visit: Visit, now: float) -> None:
        self.ends[visit.nonce] = visit.expires
        if len(self.ends) > MAX_REVOKED:
            self.ends = {n: end for n, end in self.ends.items() if end > now}
        while len(self.ends) > MAX_REVOKED:
            del self.ends[next(iter(self.ends))]

    def __contains__(self, visit: object) -> bool:
        return isinstance(visit, Visit) and visit.nonce in self.ends
