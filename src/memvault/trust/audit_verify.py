"""Verifying a tenant's audit log against its hash chain (pure): :class:`Walk` takes the
erasures' checkpoints, then every event oldest first, and says where the log stops fitting.

An event fits when its hash is ``H(prev, its fields)`` (it was not edited) and its ``prev`` is
the hash of the event before it — or an erasure's checkpoint, at or after it, bridges the gap
between them (what an erasure deleted). The last event must be the head the store keeps (the
newest events were not removed). Events written before the chain began have no hash; none may
follow a chained one. See :mod:`memvault.store.audit_chain`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..store.audit_chain import UNKEYED, ChainState, Checkpoint, Link


@dataclass(frozen=True, slots=True)
class AuditVerification:
    """What verifying a tenant's audit log found: ``intact``, or the first event that does
    not fit (``first_bad_seq``) and why (``reason``)."""

    tenant: str
    intact: bool
    events: int
    """Events read (chained and unchained)."""
    unchained: int = 0
    """Events written before the chain began (no hash: nothing shows whether they changed)."""
    erasures: int = 0
    removed: int = 0
    """Events the erasures' checkpoints say they deleted."""
    first_bad_seq: int | None = None
    reason: str = ""
    keyed: bool = False
    """Whether the chain was checked with a key (HMAC-SHA256) or without (SHA-256)."""
    head_seq: int = 0
    head: str = ""
    """The hash of the tenant's last event, as the store keeps it (anchor it elsewhere)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "tenant": self.tenant,
            "intact": self.intact,
            "events": self.events,
            "unchained": self.unchained,
            "erasures": self.erasures,
            "removed": self.removed,
            "first_bad_seq": self.first_bad_seq,
            "reason": self.reason,
            "keyed": self.keyed,
            "head_seq": self.head_seq,
            "head": self.head,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AuditVerification:
        return cls(**{name: data[name] for name in cls.__dataclass_fields__})

    def summary(self) -> str:
        """One line: ``intact, N events (…)`` or where it stops fitting."""
        if not self.intact:
            return f"NOT INTACT at event {self.first_bad_seq}: {self.reason}"
        parts = []
        if self.erasures:
            parts.append(f"{self.erasures} erasures removed {self.removed} events")
        if self.unchained:
            parts.append(f"{self.unchained} events before the chain began, unchained")
        more = f" ({'; '.join(parts)})" if parts else ""
        return f"intact, {self.events} events{more}"


class Walk:
    """One verification of a tenant's chain, fed the erasures' checkpoints first
    (:meth:`learn`), then every event in seq order (:meth:`step`), as the store read them
    with its key (each link says whether its hash fits it, :attr:`Link.fits`)."""

    def __init__(self, tenant: str, state: ChainState) -> None:
        self.tenant, self.state = tenant, state
        self.bridges: dict[tuple[str, str], int] = {}
        """Each gap an erasure bridged, and the seq of its event (it bridges no later one)."""
        self.current: str | None = None
        """The hash the next event must be chained to (None: the chain has not begun)."""
        self.last = 0
        self.events = self.unchained = self.erasures = self.removed = 0
        self.bad: tuple[int, str] | None = None

    def learn(self, links: Iterable[Link]) -> None:
        """Take the bridges of erasures' events (each is checked when :meth:`step` reaches it)."""
        for link in links:
            parsed = _checkpoint(link) if link.fits else None  # a forged one bridges nothing
            if parsed is None:
                continue
            for gap in parsed.gaps:
                self.bridges.setdefault(gap, link.event.seq)

    def step(self, links: Iterable[Link]) -> bool:
        """Check the next events; whether all fit so far."""
        for link in links:
            if self.bad is not None:
                return False
            self.events += 1
            problem = self._problem(link)
            if problem is not None:
                self.bad = (link.event.seq, problem)
                return False
            self.last = link.event.seq
        return self.bad is None

    def _problem(self, link: Link) -> str | None:
        seq = link.event.seq
        if link.hash is None or link.prev is None:
            if self.current is not None or seq > self.state.chain_from:
                return "it has no hash, yet it was written after the chain began"
            self.unchained += 1
            return None
        if not link.fits:
            return self._edited()
        if self.current is None:
            self.current = self.state.genesis
        if link.prev != self.current and self.bridges.get((self.current, link.prev), 0) < seq:
            return (
                f"it is not chained to the event before it ({self.last or 'none'}): an event "
                "between them was removed, or they were reordered, and no erasure says so"
            )
        if link.checkpoint is not None:
            parsed = _checkpoint(link)
            if parsed is None:
                return "its erasure checkpoint is not readable"
            self.erasures += 1
            self.removed += parsed.removed
        self.current = link.hash
        return None

    def _edited(self) -> str:
        why = "its fields or hash were changed since it was written"
        recorded = self.state.key
        if recorded is not None and recorded != self.state.reader:
            return f"{why} — or this verification's key is not the chain's ({_keys(recorded)})"
        return why

    def result(self, after: ChainState) -> AuditVerification:
        """What the walk found, its last event checked against the head read ``after`` it."""
        self.state = after
        head = after.head
        found = AuditVerification(
            self.tenant,
            True,
            self.events,
            self.unchained,
            self.erasures,
            self.removed,
            keyed=after.keyed,
            head_seq=0 if head is None else head.seq,
            head="" if head is None else head.hash,
        )
        bad = self.bad or self._tail()
        if bad is None:
            return found
        return _failed(found, bad)

    def _tail(self) -> tuple[int, str] | None:
        """Whether the log ends where the head says."""
        head = self.state.head
        if head is None:
            if self.current is None:
                return None
            return self.last, "the store keeps no head for a chain that has events"
        if self.current != head.hash or self.last != head.seq:
            return (
                head.seq,
                f"the log ends at event {self.last or 'none'}, but the store's head is event "
                f"{head.seq}: the newest events were removed or replaced",
            )
        return None


def _failed(found: AuditVerification, bad: tuple[int, str]) -> AuditVerification:
    seq, reason = bad
    return AuditVerification(
        found.tenant,
        False,
        found.events,
        found.unchained,
        found.erasures,
        found.removed,
        seq,
        reason,
        found.keyed,
        found.head_seq,
        found.head,
    )


def _checkpoint(link: Link) -> Checkpoint | None:
    if link.checkpoint is None:
        return None
    try:
        return Checkpoint.parse(link.checkpoint)
    except (ValueError, TypeError, KeyError):
        return None


def _keys(recorded: str) -> str:
    return "the chain has no key" if recorded == UNKEYED else f"its key's fingerprint: {recorded}"
