"""The audit log's hash chain (pure): each event's link to the event before it, of its tenant.

An event's ``hash`` is ``H(prev, canonical(event))``: ``prev`` is the hash of the tenant's
previous event (the tenant's :func:`Hasher.genesis` for its first), ``canonical`` an unambiguous
encoding of every field an event says (:func:`canonical`), and ``H`` HMAC-SHA256 under the
store's audit key (the ``audit_key`` setting), else SHA-256. Each row keeps its ``prev`` and
``hash``; the store keeps each tenant's :class:`Head` (seq and hash of its last event) in the
same transaction, so the newest events cannot go unnoticed.

An erasure deletes events in the middle of a chain. Its own ``erased`` event carries a
:class:`Checkpoint`: how many events it removed, and for each gap it left the hash before the
gap and the ``prev`` of the event after it (chain values, never content) — so verification walks
across the gap, and a gap no checkpoint bridges is a deletion by someone else.
"""

from __future__ import annotations

import bisect
import hashlib
import hmac
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..errors import AuditKeyError
from ..types import AuditEvent
from .timeconv import to_micros

FORMAT = "memvault-audit-1"
"""The version of :func:`canonical`: part of every hashed message."""
HEAD_KEY = "audit_head:"
"""The store's key/value key of a tenant's head: this prefix and the tenant."""
KEY_KEY = "audit_key"
"""The store's key/value key of the fingerprint of the key its chains are made with."""
FROM_KEY = "audit_chain_from"
"""The store's key/value key of the last seq written before the chain began (migration)."""
UNKEYED = "none"
"""The fingerprint of no key (SHA-256)."""


def canonical(event: AuditEvent, checkpoint: str | None = None) -> bytes:
    """The bytes of an event that its hash covers: every field it says, as a JSON array of
    fixed order (ASCII, so one text has one encoding); ``seq`` is not among them (the chain
    orders the events, not the number the store gave them)."""
    fields = [
        FORMAT,
        event.tenant,
        to_micros(event.at),
        event.actor,
        event.operation,
        event.change,
        event.entry_id,
        event.scope,
        event.note,
        checkpoint,
    ]
    return json.dumps(fields, ensure_ascii=True, separators=(",", ":")).encode("ascii")


class Hasher:
    """``H`` of the chain: HMAC-SHA256 under ``key``, else SHA-256."""

    def __init__(self, key: str = "") -> None:
        self._key = key.encode("utf-8") if key else b""

    @property
    def keyed(self) -> bool:
        return bool(self._key)

    @property
    def algorithm(self) -> str:
        return "HMAC-SHA256" if self.keyed else "SHA-256"

    @property
    def fingerprint(self) -> str:
        """Names the key without revealing it (:data:`UNKEYED` without one)."""
        if not self.keyed:
            return UNKEYED
        return self._digest(b"memvault audit key fingerprint")[:16]

    def _digest(self, message: bytes) -> str:
        if self._key:
            return hmac.new(self._key, message, hashlib.sha256).hexdigest()
        return hashlib.sha256(message).hexdigest()

    def genesis(self, tenant: str) -> str:
        """What the first event of ``tenant`` is chained to."""
        return self._digest(canonical_text(["memvault-audit-genesis", tenant]))

    def link(self, prev: str, event: AuditEvent, checkpoint: str | None = None) -> str:
        """The hash of ``event`` chained to ``prev``."""
        return self._digest(prev.encode("ascii") + b"\n" + canonical(event, checkpoint))

    def checked(self, link: Link) -> Link:
        """``link`` as read, with whether its hash is its ``prev`` and event's under this key."""
        if link.prev is None or link.hash is None:
            return link
        expected = self.link(link.prev, link.event, link.checkpoint)
        return replace(link, fits=hmac.compare_digest(expected, link.hash))

    def state(
        self, tenant: str, head: Head | None, key: str | None, chain_from: int = 0
    ) -> ChainState:
        """What a store keeps beside ``tenant``'s chain, as read with this key."""
        return ChainState(head, key, chain_from, self.genesis(tenant), self.fingerprint)


def canonical_text(values: Sequence[Any]) -> bytes:
    return json.dumps(list(values), ensure_ascii=True, separators=(",", ":")).encode("ascii")


@dataclass(frozen=True, slots=True)
class Head:
    """A tenant's last event: its seq and hash (kept by the store beside the log)."""

    seq: int
    hash: str

    def to_text(self) -> str:
        return json.dumps({"seq": self.seq, "hash": self.hash}, separators=(",", ":"))

    @classmethod
    def parse(cls, text: str | None) -> Head | None:
        """A head as stored (None: none, or not a head)."""
        if text is None:
            return None
        try:
            data = json.loads(text)
            return cls(int(data["seq"]), str(data["hash"]))
        except (ValueError, TypeError, KeyError):
            return None


@dataclass(frozen=True, slots=True)
class ChainState:
    """What a store keeps beside a tenant's chain: its head, the fingerprint of the key its
    chains are made with, and the last seq written before chains began (older events have no
    hash) — with the tenant's genesis and the fingerprint of the key it was read with."""

    head: Head | None
    key: str | None
    chain_from: int = 0
    genesis: str = ""
    reader: str = UNKEYED
    """The fingerprint of the key of the store that read it (:data:`UNKEYED`: none)."""

    @property
    def keyed(self) -> bool:
        return self.reader != UNKEYED


@dataclass(frozen=True, slots=True)
class Link:
    """An event as the chain holds it: the event (with its seq), what it is chained to, its
    hash (both None: written before chains began), and an erasure's checkpoint (JSON)."""

    event: AuditEvent
    prev: str | None
    hash: str | None
    checkpoint: str | None = None
    fits: bool = False
    """Whether ``hash`` is ``H(prev, event)`` under the key of the store that wrote or read
    it (:meth:`Hasher.checked`)."""


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """What an erasure removed from its tenant's chain: how many events, and each gap it
    left as (hash before it, ``prev`` of the event after it)."""

    removed: int
    gaps: tuple[tuple[str, str], ...] = ()

    def to_text(self) -> str:
        return json.dumps({"removed": self.removed, "gaps": [list(g) for g in self.gaps]})

    @classmethod
    def parse(cls, text: str) -> Checkpoint:
        """A checkpoint as stored; ValueError if it is not one."""
        data = json.loads(text)
        removed, gaps = data["removed"], data["gaps"]
        if not isinstance(removed, int) or removed < 0 or not isinstance(gaps, list):
            raise ValueError("not a checkpoint")
        pairs = tuple((str(a), str(b)) for a, b in gaps)
        return cls(removed, pairs)


def check_key(hasher: Hasher, recorded: str | None) -> None:
    """Refuse (AuditKeyError) to chain with another key than the store's chains are made
    with: the events would not verify, with either key."""
    if recorded is not None and recorded != hasher.fingerprint:
        theirs = "no key" if recorded == UNKEYED else f"the key of fingerprint {recorded}"
        mine = "none" if not hasher.keyed else f"one of fingerprint {hasher.fingerprint}"
        raise AuditKeyError(
            f"this store's audit log is chained with {theirs}, and the audit_key setting "
            f"(MEMVAULT_AUDIT_KEY) gives {mine}: set the store's key (docs/operations.md)"
        )


def chained(
    hasher: Hasher,
    tenant: str,
    head: Head | None,
    events: Iterable[AuditEvent],
    checkpoints: Iterable[str | None],
) -> list[Link]:
    """The links of ``events`` (all of ``tenant``) appended after ``head``."""
    prev = head.hash if head is not None else hasher.genesis(tenant)
    links = []
    for event, checkpoint in zip(events, checkpoints, strict=True):
        digest = hasher.link(prev, event, checkpoint)
        links.append(Link(event, prev, digest, checkpoint, fits=True))
        prev = digest
    return links


def gap(before: str | None, after: str | None, genesis: str) -> tuple[str, str] | None:
    """The gap a deletion left between the surviving event before it (its hash; None: no
    chained event before it) and what follows it (the ``prev`` of the next event, or the
    head's hash; None: nothing chained follows): None when nothing chained was removed."""
    if after is None:
        return None
    start = before if before is not None else genesis
    return None if start == after else (start, after)


def by_tenant(
    events: Sequence[AuditEvent], checkpoints: Sequence[str | None]
) -> list[tuple[str, list[AuditEvent], list[str | None]]]:
    """``events`` (with their checkpoints; none given: none of any) by tenant, each tenant's
    in order, the tenants sorted (the order their chains are locked in)."""
    given = list(checkpoints) or [None] * len(events)
    tenants: dict[str, tuple[list[AuditEvent], list[str | None]]] = {}
    for event, checkpoint in zip(events, given, strict=True):
        mine = tenants.setdefault(event.tenant, ([], []))
        mine[0].append(event)
        mine[1].append(checkpoint)
    return [(tenant, *tenants[tenant]) for tenant in sorted(tenants)]


Before = Callable[[int], "str | None"]
"""The hash of the last event before a seq (None: none, or one without a hash)."""
After = Callable[[int], "tuple[int, str | None] | None"]
"""The seq and ``prev`` of the first event after a seq (None: none)."""


def checkpoint(
    gone: Sequence[int], before: Before, after: After, head: Head | None, genesis: str
) -> Checkpoint:
    """The checkpoint of an erasure that deleted the events ``gone`` (their seqs, sorted),
    read from what is left: each run of deleted events with no survivor between them is one
    gap, from the survivor before it to the survivor after it (or to the head: the next event
    appended is chained to it)."""
    gaps, at = [], 0
    while at < len(gone):
        first = gone[at]
        following = after(first)
        to = following[1] if following is not None else (None if head is None else head.hash)
        found = gap(before(first), to, genesis)
        if found is not None:
            gaps.append(found)
        at = len(gone) if following is None else bisect.bisect_left(gone, following[0])
    return Checkpoint(len(gone), tuple(gaps))
