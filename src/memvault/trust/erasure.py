"""Erasure: every trace of a user, a scope or a tenant removed, and a receipt that says what
went — counts and a hash of the ids, never content.

What belongs to a user: their scope (``user:ID``: Global Memory and facts), every session of
theirs with all it holds (the session, records, summaries, Session Memory, findings), every
entry whose metadata names them as its ``user_id`` (agent memory's executions and
decompositions of their requests; the aggregates stay — strategy statistics and learned failure
patterns hold counts and redacted names, no request text), and what
was made from any of it anywhere in the tenant — entries created in those sessions (objects,
workspace and org entries whose provenance names one), copies promoted from an erased entry
and compactions of one, to any depth. A scope's erasure takes the scope and what was made from
it the same way; a tenant's takes everything of the tenant. Supersession chains that run
through erased entries are mended (:mod:`memvault.store.chains`), the erased texts are dropped
from the embedding caches first, and the whole set is deleted in one transaction: all or
nothing. What a concurrent writer added to the subject meanwhile (a record appended to one of
its sessions, a fact learned) is taken by another round, until a round finds nothing (at most
:data:`ROUNDS`). The same transaction tells every process to drop its copies of content
(:class:`~memvault.store.ops.ForgetCopiesOp`). Then the store is purged and scanned for
what should be gone, retried with backoff until nothing is found (at most
:data:`PURGE_ATTEMPTS`); what is still found makes the erasure pending (short hashes of its
ids kept, never the ids) and raises :class:`~memvault.errors.ErasureIncompleteError`;
:meth:`ErasurePlans.finish_erasures` purges and scans again later. The selection
(:func:`erased`) is pure; :class:`ErasurePlans` runs it on the store.
"""

from __future__ import annotations

import functools
import hashlib
import random
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal

from ..core import Invoke, Plan, Planner, call, retried, run
from ..errors import ErasureIncompleteError, ValidationError
from ..facilities.model import SESSION, session_ids
from ..store.ops import (
    Filter,
    ForgetAuditOp,
    ForgetCopiesOp,
    PendErasureOp,
    PendingErasure,
    PendingErasuresOp,
)
from ..store.residue import id_hash
from ..types import MemoryEntry, Scope, ScopeKind

Kind = Literal["user", "scope", "tenant"]


@dataclass(frozen=True, slots=True)
class Subject:
    """What an erasure is of: a user id, a scope, or a whole tenant."""

    kind: Kind
    value: str

    @classmethod
    def of(cls, user: str | None, scope: Scope | str | None, tenant: str | None) -> Subject:
        given = [(k, v) for k, v in (("user", user), ("scope", scope), ("tenant", tenant)) if v]
        if len(given) != 1:
            raise ValidationError("erase what? give exactly one of user=, scope= or tenant=")
        kind, value = given[0]
        if kind == "user":
            Scope.user(str(value))  # a valid user id
        if kind == "scope":
            value = str(Scope.coerce(value))
        if not isinstance(value, str):
            raise ValidationError(f"{kind} must be a string")
        return cls(kind, value)  # type: ignore[arg-type]

    def __str__(self) -> str:
        return f"{self.kind} {self.value}"


ROUNDS = 4
"""Rounds of an erasure at most: each takes what concurrent writers added to its subject
while the last one ran; it ends with a round that finds nothing."""
PURGE_ATTEMPTS = 12
"""Purges and scans of the store after an erasure at most, with backoff between them
(:func:`purge_backoff`: about 5 s in all) while the scan still finds something (a log being
checkpointed by another process cannot be truncated until it is done)."""


def purge_backoff(attempt: int) -> float:
    """Seconds before purge ``attempt`` (1-based): 10 ms doubling to 1 s, jittered."""
    return float(min(0.01 * 2.0 ** (attempt - 1), 1.0) * random.uniform(0.5, 1.5))


def erased(
    entries: Iterable[MemoryEntry], subject: Subject, sessions: Iterable[str] = ()
) -> list[MemoryEntry]:
    """Which of a tenant's ``entries`` (all of them, superseded and expired included) an
    erasure of ``subject`` removes (pure); ``sessions``: ids of the user's sessions an earlier
    round erased (what was added to one since is the user's too)."""
    every = list(entries)
    if subject.kind == "tenant":
        return every
    roots = _roots(every, subject, frozenset(sessions))
    sessions = {e.scope.id for e in roots if e.scope.kind is ScopeKind.SESSION}
    gone = {e.id for e in roots}
    grew = True
    while grew:  # what was made from what goes, to any depth
        made = {e.id for e in every if e.id not in gone and _made_from(e, gone, sessions)}
        gone |= made
        grew = bool(made)
    return [e for e in every if e.id in gone]


def _roots(
    entries: Sequence[MemoryEntry], subject: Subject, sessions: frozenset[str]
) -> list[MemoryEntry]:
    if subject.kind == "scope":
        return [e for e in entries if str(e.scope) == subject.value]
    theirs = sessions | {
        e.scope.id
        for e in entries
        if e.category == SESSION
        and e.scope.kind is ScopeKind.SESSION
        and e.metadata.get("user_id") == subject.value
    }
    user = Scope.user(subject.value)
    return [
        e
        for e in entries
        if e.scope == user
        or (e.scope.kind is ScopeKind.SESSION and e.scope.id in theirs)
        or e.metadata.get("user_id") == subject.value
    ]


def _made_from(entry: MemoryEntry, gone: set[str], sessions: set[str]) -> bool:
    return (
        entry.promoted_from_id in gone
        or not gone.isdisjoint(entry.compacted_from_ids)
        or entry.provenance.created_in_session_id in sessions
    )


def needles(entries: Iterable[MemoryEntry]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What must not be found in the store after ``entries`` are erased: every id, and the
    longest contents (up to :data:`CONTENT_NEEDLES`; the store leaves out those another live
    entry also holds)."""
    gone = list(entries)
    long_enough = {e.content for e in gone if len(e.content) >= MIN_NEEDLE}
    contents = sorted(long_enough, key=lambda text: (-len(text), text))[:CONTENT_NEEDLES]
    return tuple(e.id for e in gone), tuple(contents)


MIN_NEEDLE = 12
"""Contents shorter than this are not looked for in the store's files (any file holds "ok")."""
CONTENT_NEEDLES = 32
"""How many erased contents (the longest) a scan looks for: each costs a pass over the files,
while every id is looked for in one pass."""


def ids_digest(ids: Iterable[str]) -> str:
    """The SHA-256 of the sorted erased ids, one a line: it proves which ids a receipt covers
    to whoever holds them, and tells nobody else anything."""
    return hashlib.sha256("\n".join(sorted(ids)).encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class ErasureReceipt:
    """What an erasure removed: counts per kind (category), a hash of the ids, when — never
    the content. ``residue`` is how many erased ids and contents a scan of the store still
    found afterwards (0; None where the store cannot be scanned)."""

    subject: str
    tenant: str
    erased_at: datetime
    counts: Mapping[str, int] = field(default_factory=dict)
    ids_sha256: str = ""
    residue: int | None = None

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "subject": self.subject,
            "tenant": self.tenant,
            "erased_at": self.erased_at.isoformat(),
            "counts": dict(self.counts),
            "total": self.total,
            "ids_sha256": self.ids_sha256,
            "residue": self.residue,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ErasureReceipt:
        return cls(
            data["subject"],
            data["tenant"],
            datetime.fromisoformat(data["erased_at"]),
            dict(data["counts"]),
            data["ids_sha256"],
            data["residue"],
        )


@dataclass(frozen=True, slots=True)
class _Round:
    """A round of an erasure done: what it removed."""

    gone: tuple[MemoryEntry, ...]


Residue = Callable[[Sequence[str], Sequence[str], Sequence[str]], "int | None"]
"""The purge and scan for what should be gone (ids, contents, short hashes of ids): the
store's (:meth:`memvault.store.Backend.residue`) and the process's copies."""


@dataclass(frozen=True, slots=True)
class FinishReport:
    """What finishing the pending erasures did: the id hashes (``ids_sha256`` of their
    receipts) of those now complete, and of those still pending, with what the scan found."""

    finished: tuple[str, ...] = ()
    pending: tuple[str, ...] = ()
    residue: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "finished": list(self.finished),
            "pending": list(self.pending),
            "residue": self.residue,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FinishReport:
        return cls(tuple(data["finished"]), tuple(data["pending"]), data["residue"])


def counts_by_kind(entries: Iterable[MemoryEntry]) -> dict[str, int]:
    """How many ``entries`` of each kind (category; ``uncategorised``), sorted by kind: what
    a receipt or a bundle says instead of what the entries hold."""
    return dict(sorted(Counter(e.category or "uncategorised" for e in entries).items()))


class ErasurePlans:
    """Erasure as plans on the store planner."""

    def __init__(self, store: Planner, residue: Residue | None = None) -> None:
        self.store = store
        self.residue: Residue = residue or (lambda ids, contents, hashed: None)

    def erase(
        self,
        *,
        user: str | None = None,
        scope: Scope | str | None = None,
        tenant: str | None = None,
    ) -> Plan[ErasureReceipt]:
        """Remove every trace of a user (their scope, their sessions and all they hold, and
        what was made from any of it), of a scope (and what was made from it), or of a whole
        tenant; one transaction a round (another round takes what concurrent writers added
        meanwhile), and every process drops its copies of content (caches). The receipt
        counts what went per kind and hashes the ids; ``residue`` says how many erased ids
        and contents the purge and scan of the store (and this process's caches) then still
        found: 0, else ErasureIncompleteError (the erasure is pending: finish it with
        :meth:`finish_erasures`); None if the store cannot be scanned."""
        subject = Subject.of(user, scope, tenant)
        store = self.store.for_tenant(subject.value) if subject.kind == "tenant" else self.store
        gone: list[MemoryEntry] = []
        for n in range(ROUNDS):
            sessions = {e.scope.id for e in gone if e.scope.kind is ScopeKind.SESSION}
            attempt = functools.partial(_erase, store, subject, sessions, first=n == 0)
            done = yield from retried(attempt, f"the erasure of {subject}")
            gone += done.gone
            if n and not done.gone:
                break
        ids = {e.id for e in gone}
        receipt = ErasureReceipt(
            str(subject), store.tenant, store.now(), counts_by_kind(gone), ids_digest(ids)
        )
        residue = yield from self._purged(*needles(gone))
        receipt = replace(receipt, residue=residue)
        if residue:
            pending = PendingErasure(receipt.ids_sha256, tuple(sorted(map(id_hash, ids))))
            yield from run(PendErasureOp(store.tenant, pending))
        yield from store.forget_session_files(session_ids(gone))  # after the purge: it must run
        if residue:
            raise ErasureIncompleteError(
                f"the erasure of {subject} removed {receipt.total} entries, but {residue} "
                "erased ids or contents are still in the store's files (another process "
                "held them); it is pending: finish it later (memvault erase --finish)",
                residue,
                receipt.to_dict(),
            )
        return receipt

    def finish_erasures(self) -> Plan[FinishReport]:
        """Purge and scan the store again for each of the tenant's pending erasures (those
        whose receipts found residue), by the short hashes of their ids; those now clean are
        no longer pending. ErasureIncompleteError if any still is. Idempotent."""
        pending = yield from run(PendingErasuresOp(self.store.tenant))
        finished, left, residue = [], [], 0
        for erasure in pending:
            found = yield from self._purged((), (), erasure.id_hashes)
            if found:
                left.append(erasure.ids_sha256)
                residue += found
            else:
                yield from run(PendErasureOp(self.store.tenant, erasure, done=True))
                finished.append(erasure.ids_sha256)
        if left:
            raise ErasureIncompleteError(
                f"{len(left)} pending erasures still leave {residue} erased ids in the "
                "store's files (another process holds them); finish them again later",
                residue,
            )
        return FinishReport(tuple(finished), tuple(left), residue)

    def _purged(
        self, ids: Sequence[str], contents: Sequence[str], hashed: Sequence[str] = ()
    ) -> Plan[int | None]:
        """Purge and scan until the scan finds nothing, at most :data:`PURGE_ATTEMPTS` times,
        with backoff; what the last scan found (None: the store cannot be scanned)."""
        found: int | None = None
        for attempt in range(PURGE_ATTEMPTS):
            if attempt:
                yield Invoke(time.sleep, (purge_backoff(attempt),), blocking=True)
            found = yield from call(self.residue, ids, contents, hashed, blocking=True)
            if not found:
                break
        return found


def _erase(store: Planner, subject: Subject, sessions: set[str], *, first: bool) -> Plan[_Round]:
    """One round: select what is the subject's now and delete it in one transaction, with
    its audit events and a word to every process to drop its copies (the first round
    always commits: it leaves the audit log's event of the erasure)."""
    every = yield from store.every(Filter(store.tenant, None))
    gone = erased(every, subject, sessions)
    if not gone and not first:
        return _Round(())
    yield from store.forget_texts(gone)
    ids = {e.id for e in gone}
    kinds = counts_by_kind(gone)
    note = ErasureReceipt(str(subject), store.tenant, store.now(), kinds, ids_digest(ids))
    # The forgetting mark first: every transaction that appends events writes it before it
    # holds the tenant's chain (a session's deletion), so this one must too, or they deadlock.
    yield from store.remove(gone, also=[ForgetCopiesOp(), forget_audit(subject, gone, note)])
    return _Round(tuple(gone))


def forget_audit(subject: Subject, gone: Sequence[MemoryEntry], receipt: ErasureReceipt) -> Any:
    """The op that drops the audit log's events of what an erasure removes — those of its
    entries, and of the erased scopes (the user's and their sessions') — leaving one event:
    that an erasure of a user, a scope or a tenant happened, with its counts and id hash
    (never the user id or the scope)."""
    scopes = {str(e.scope) for e in gone if e.scope.kind in (ScopeKind.USER, ScopeKind.SESSION)}
    if subject.kind == "user":
        scopes.add(str(Scope.user(subject.value)))
    elif subject.kind == "scope":
        scopes.add(subject.value)
    note = f"{subject.kind} erased: {receipt.total} entries, ids sha256 {receipt.ids_sha256}"
    return ForgetAuditOp(
        receipt.tenant,
        frozenset(e.id for e in gone),
        frozenset(scopes),
        everything=subject.kind == "tenant",
        note=note,
    )
