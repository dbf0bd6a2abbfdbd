"""Time-sortable entry ids (ULID: 48-bit millisecond time + 80 random bits, Crockford base32).

Ids made in one process are strictly increasing, even within one millisecond, so they also order
entries written by one ``write_many`` call.
"""

from __future__ import annotations

import secrets
import threading
from datetime import datetime

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_RANDOM_BITS = 80


class _Monotonic:
    """The last id issued in this process, so the next one is always greater."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.last = 0

    def next(self, candidate: int) -> int:
        with self.lock:
            self.last = max(candidate, self.last + 1)
            return self.last


_issued = _Monotonic()


def _encode(value: int) -> str:
    chars = []
    for _ in range(26):
        value, digit = divmod(value, 32)
        chars.append(_ALPHABET[digit])
    return "".join(reversed(chars))


def new_id(at: datetime) -> str:
    """Return a new id for an entry created at ``at``; later calls never sort before it."""
    millis = int(at.timestamp() * 1000)
    candidate = (millis << _RANDOM_BITS) | secrets.randbits(_RANDOM_BITS)
    return _encode(_issued.next(candidate))
