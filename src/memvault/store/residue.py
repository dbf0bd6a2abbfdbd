"""Looking for erased ids and contents in a store's bytes (pure). Entry ids — ULIDs, 26
characters of Crockford's base 32 — are all found in one pass: every 26-character window of
every run of such characters goes into a set (a store packs values side by side, so an id may
touch its neighbours). Any other id, and each content, is looked for by itself. A pending
erasure keeps short hashes of its ids, never the ids: a later purge hashes every window."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from ..patterns import lazy
from .ops import PendingErasure

ULID_LENGTH = 26
_ULID = lazy(r"[0-9A-HJKMNP-TV-Z]{26}")
_RUN = re.compile(rb"[0-9A-Z]{26,}")


def found_in(images: Sequence[bytes], ids: Iterable[str], contents: Iterable[str]) -> int:
    """How many of ``ids`` and ``contents`` occur anywhere in ``images``."""
    wanted = list(ids)
    ulids = {i for i in wanted if _ULID.fullmatch(i)}
    windows = _windows(images) if ulids else set()
    others = [i for i in wanted if i not in ulids]
    return sum(i in windows for i in ulids) + sum(
        any(text.encode("utf-8", "surrogatepass") in image for image in images)
        for text in (*others, *contents)
    )


def _windows(images: Sequence[bytes]) -> set[str]:
    seen: set[str] = set()
    for image in images:
        for run in _RUN.findall(image):
            text = run.decode()
            seen.update(text[n : n + ULID_LENGTH] for n in range(len(text) - ULID_LENGTH + 1))
    return seen


ID_HASH_LENGTH = 16
"""Hex digits of an id's short hash (64 bits: no two ids of a store share one)."""


def id_hash(entry_id: str) -> str:
    """The short hash a pending erasure keeps of an erased id (never the id itself)."""
    return hashlib.sha256(entry_id.encode("utf-8", "surrogatepass")).hexdigest()[:ID_HASH_LENGTH]


def hashes_found_in(images: Sequence[bytes], hashes: Iterable[str]) -> int:
    """How many of the ids of short hashes ``hashes`` occur anywhere in ``images``."""
    wanted = set(hashes)
    return len(wanted & {id_hash(window) for window in _windows(images)}) if wanted else 0


def pending_key(tenant: str, ids_sha256: str) -> str:
    """Where a store's key/value table keeps a pending erasure of ``tenant``."""
    return f"erasure pending {json.dumps(tenant)} {ids_sha256}"


def pending_value(pending: PendingErasure) -> str:
    """A pending erasure as the key/value table keeps it: JSON, with when it was recorded."""
    at = datetime.now(UTC).isoformat()
    return json.dumps({"ids_sha256": pending.ids_sha256, "id_hashes": pending.id_hashes, "at": at})


def pending_erasures(values: Iterable[str]) -> list[PendingErasure]:
    """The pending erasures these kept values say, oldest first."""
    kept = sorted((json.loads(value) for value in values), key=lambda found: found["at"])
    return [PendingErasure(found["ids_sha256"], tuple(found["id_hashes"])) for found in kept]
